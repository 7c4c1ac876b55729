users:
  root: {uid: 0}
  alice: {admin: true}
admins: [root]

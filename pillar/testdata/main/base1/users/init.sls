include:
  - .admins
  - only_base2
users:
  alice: {uid: 1000}

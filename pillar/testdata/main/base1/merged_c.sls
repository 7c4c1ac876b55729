merge:
  k3: c
  deep: {c: 3}

merge:
  k1: a
  deep: {a: 1, l: [a]}
  replaced: [1]

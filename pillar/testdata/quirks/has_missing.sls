include:
  - nope
hm: 1

include:
  - circ_b
a: 1

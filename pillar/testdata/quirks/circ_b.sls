include:
  - circ_a
b: 1

include:
  - has_missing
  - circ_a
p: 1

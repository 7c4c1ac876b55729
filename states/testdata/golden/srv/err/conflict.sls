include:
  - err.conflict2
dup:
  test.nop

z_last:
  test.nop:
    - order: last
a_first:
  test.nop:
    - order: first
neg:
  test.nop:
    - order: -1
n5:
  test.nop:
    - order: 5
plain:
  test.nop
strord:
  test.nop:
    - order: foo

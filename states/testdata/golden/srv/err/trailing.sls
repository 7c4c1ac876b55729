foo:
  test.nop:

other_state:
  test.nop

leaf_state:
  test.nop

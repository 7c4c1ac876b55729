include:
  - doesnotexist
foo:
  test.nop

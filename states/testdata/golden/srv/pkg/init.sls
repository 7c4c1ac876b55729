include:
  - .sub
  - .sub.leaf
pkg_state:
  test.succeed_with_changes

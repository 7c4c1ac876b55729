include:
  - ..sibling
sub_state:
  test.succeed_without_changes:
    - comment: from sub

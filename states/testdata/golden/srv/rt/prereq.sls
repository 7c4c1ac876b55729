pre_changes:
  test.succeed_with_changes:
    - prereq:
      - test: target_changes
target_changes:
  test.succeed_with_changes
pre_nochanges:
  test.succeed_with_changes:
    - prereq:
      - test: target_nochanges
target_nochanges:
  test.succeed_without_changes
pre_in:
  test.succeed_with_changes:
    - prereq_in:
      - test: target3
target3:
  test.configurable_test_state:
    - changes: True
    - result: True
pre_fail:
  test.succeed_with_changes:
    - prereq:
      - test: target_fail
target_fail:
  test.fail_with_changes

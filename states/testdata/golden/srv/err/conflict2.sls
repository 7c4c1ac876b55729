dup:
  test.fail_without_changes

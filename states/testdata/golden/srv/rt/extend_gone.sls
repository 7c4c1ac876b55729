gone_state:
  test.fail_without_changes

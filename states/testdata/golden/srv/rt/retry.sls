retry_state:
  test.fail_without_changes:
    - retry:
        attempts: 2
        interval: 0
        until: True

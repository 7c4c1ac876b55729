a:
  test.succeed_without_changes
b:
  test.fail_without_changes:
    - failhard: True
c:
  test.succeed_without_changes

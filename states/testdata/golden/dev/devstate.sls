include:
  - base: other
dev_state:
  test.succeed_without_changes:
    - comment: {{ saltenv }}

slot_space:
  test.succeed_without_changes:
    - comment: __slot__:salt:test.echo(a) ~ tail

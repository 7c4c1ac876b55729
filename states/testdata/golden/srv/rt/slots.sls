slot_plain:
  test.succeed_without_changes:
    - comment: __slot__:salt:test.echo(hello)
slot_append:
  test.succeed_without_changes:
    - comment: __slot__:salt:test.echo('a b')~ tail
slot_traverse:
  test.succeed_without_changes:
    - comment: __slot__:salt:test.arg(x, key=val).kwargs.key
slot_dict:
  test.succeed_without_changes:
    - comment: __slot__:salt:test.arg(one, k=v).kwargs.k
slot_nested:
  test.configurable_test_state:
    - changes: False
    - warnings:
      - __slot__:salt:test.echo(y)
      - plain
slot_malformed:
  test.succeed_without_changes:
    - comment: __slot__:pillar:foo
slot_unknown:
  test.succeed_without_changes:
    - comment: __slot__:salt:nosuch.fun()
slot_onlyif:
  test.succeed_without_changes:
    - onlyif:
      - fun: test.echo
        text: __slot__:salt:test.echo('')

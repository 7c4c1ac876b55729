fh_first:
  test.succeed_without_changes:
    - require:
      - test: fh_dep
fh_dep:
  test.fail_without_changes:
    - failhard: True
fh_after:
  test.nop

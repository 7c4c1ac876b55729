include:
  - rt.extend_gone
ext_dep:
  test.nop
ext_target:
  test.fail_without_changes:
    - require:
      - test: ext_dep2
ext_dep2:
  test.nop
named_by_name:
  test.succeed_without_changes:
    - name: ext_by_name
excluded_one:
  test.fail_without_changes

include:
  - pkg
  - rt.names
main_first:
  test.succeed_without_changes:
    - require:
      - sls: pkg
main_second:
  test.nop:
    - name: second_name
    - require:
      - main_first

foo:
  test.nop:
    - require:
      - test: nothere
      - sls: nosls
      - nothing
    - watch:
      - test: nowatch

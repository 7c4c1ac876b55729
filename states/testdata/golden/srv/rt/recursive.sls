loop_a:
  test.nop:
    - require:
      - test: loop_b
loop_b:
  test.nop:
    - require:
      - test: loop_a

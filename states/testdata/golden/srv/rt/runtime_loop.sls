loop_a:
  test.nop:
    - require:
      - test: loop_b
loop_b:
  test.nop:
    - require_any:
      - test: loop_a
after_loop:
  test.nop

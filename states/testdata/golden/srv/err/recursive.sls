rec_a:
  test.nop:
    - require:
      - test: rec_b
rec_b:
  test.nop:
    - require:
      - test: rec_a

src:
  test.nop:
    - require_in:
      - test.nop: target
target:
  test.nop

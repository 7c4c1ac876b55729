dotted_req:
  test.nop:
    - require:
      - test.nop: nochanges
nochanges:
  test.nop

twofun:
  test.nop:
    - succeed_without_changes
spaces:
  test:
    - succeed with changes
notlist:
  test.nop:
    name: x
badnames:
  test.nop:
    - names: abc
badreq:
  test.nop:
    - require: abc
multi:
  test.nop:
    - require:
      - test: a
      other: b
dotreq:
  test.nop:
    - require:
      - test.nop: a
illegal:
  test.nop:
    - require:
      - test: [a, b]
reqlist:
  test.nop:
    - require:
      - [a]

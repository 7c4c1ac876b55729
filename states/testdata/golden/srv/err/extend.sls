extend:
  nothere:
    test.nop:
      - name: y

changes:
  test.succeed_with_changes
listener:
  test.succeed_without_changes:
    - listen:
      - test: changes
lin:
  test.succeed_without_changes:
    - listen_in:
      - test: changes
lin2_src:
  test.succeed_with_changes:
    - listen_in:
      - test: lin2_target
lin2_target:
  test.nop
bad:
  test.nop:
    - listen:
      - test: nothere

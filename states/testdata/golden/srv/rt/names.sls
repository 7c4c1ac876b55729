names_state:
  test.succeed_without_changes:
    - names:
      - n_one
      - n_two:
        - comment: two
      - n_three

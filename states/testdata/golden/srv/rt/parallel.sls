# parallel: True states run at the same time; requisites wait for them.
par_a:
  test.succeed_with_changes:
    - parallel: True
par_b:
  test.succeed_without_changes:
    - parallel: True
after_both:
  test.succeed_with_changes:
    - require:
      - test: par_a
      - test: par_b
independent:
  test.succeed_without_changes
fails_in_parallel:
  test.fail_without_changes:
    - parallel: True
needs_the_failed:
  test.succeed_without_changes:
    - require:
      - test: fails_in_parallel
watches_parallel:
  test.succeed_without_changes:
    - onchanges:
      - test: par_a
last_parallel:
  test.succeed_with_changes:
    - parallel: True

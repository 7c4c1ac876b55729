base_state:
  test.configurable_test_state:
    - changes: False
    - result: True
    - comment: from base
user:
  test.configurable_test_state:
    - use:
      - test: base_state
    - result: False
use_in_src:
  test.configurable_test_state:
    - comment: shared
    - changes: False
    - use_in:
      - test: use_in_target
use_in_target:
  test.configurable_test_state:
    - name: target_name

retry_state:
  test.fail_without_changes:
    - retry:
        attempts: 2
        interval: 0
        until: True

# the onlyif check's list comment is str()'d into the test=True retry
# comment before Salt's State.call unifies its return (airflow-formula)
retry_onlyif:
  test.succeed_with_changes:
    - onlyif: 'false'
    - retry:
        attempts: 2
        interval: 0

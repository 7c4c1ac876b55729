warned:
  test.configurable_test_state:
    - changes: False
    - warnings: careful
mock_notify:
  test.show_notification:
    - text: hello
raises:
  test.show_notification: []
state_kw:
  test.succeed_without_changes:
    - state: ignored
jinja_{{ grains['id'] }}:
  test.succeed_without_changes:
    - comment: {{ saltenv }} {{ sls }}

changes:
  test.succeed_with_changes
nochanges:
  test.succeed_without_changes
fails:
  test.fail_without_changes
onch_yes:
  test.succeed_without_changes:
    - onchanges:
      - test: changes
onch_no:
  test.succeed_without_changes:
    - onchanges:
      - test: nochanges
onch_any:
  test.succeed_without_changes:
    - onchanges_any:
      - test: nochanges
      - test: changes
onfail_yes:
  test.succeed_without_changes:
    - onfail:
      - test: fails
onfail_no:
  test.succeed_without_changes:
    - onfail:
      - test: nochanges
onfail_any:
  test.succeed_without_changes:
    - onfail_any:
      - test: nochanges
      - test: fails
watch_yes:
  test.succeed_without_changes:
    - watch:
      - test: changes
watch_no:
  test.succeed_without_changes:
    - watch:
      - test: nochanges
watch_fail:
  test.succeed_without_changes:
    - watch:
      - test: fails
req_any:
  test.succeed_without_changes:
    - require_any:
      - test: fails
      - test: nochanges
req_any_fail:
  test.succeed_without_changes:
    - require_any:
      - test: fails
req_glob:
  test.succeed_without_changes:
    - require:
      - test: no*
req_name:
  test.succeed_without_changes:
    - require:
      - id: named_thing
named:
  test.nop:
    - name: named_thing
req_in_target:
  test.succeed_without_changes
req_in_src:
  test.succeed_with_changes:
    - require_in:
      - test: req_in_target
    - watch_in:
      - test: req_in_target
onchanges_in_src:
  test.succeed_with_changes:
    - onchanges_in:
      - test: onch_in_target
onch_in_target:
  test.nop
onfail_in_src:
  test.fail_without_changes:
    - onfail_in:
      - onfail_in_target
onfail_in_target:
  test.nop
onfail_all:
  test.succeed_without_changes:
    - onfail_all:
      - test: fails
      - test: nochanges

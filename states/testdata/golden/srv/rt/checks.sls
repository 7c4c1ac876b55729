only_true:
  test.succeed_with_changes:
    - onlyif: 'true'
only_false:
  test.succeed_with_changes:
    - onlyif:
      - 'true'
      - 'false'
unless_true:
  test.succeed_with_changes:
    - unless: 'true'
unless_false:
  test.succeed_with_changes:
    - unless: 'false'
unless_list:
  test.succeed_with_changes:
    - unless:
      - 'true'
      - 'false'
both:
  test.succeed_with_changes:
    - onlyif: 'true'
    - unless: 'true'
creates_yes:
  test.succeed_with_changes:
    - creates: /
creates_no:
  test.succeed_with_changes:
    - creates:
      - /
      - /nonexistent-gsalt-states-golden
fun_only:
  test.succeed_with_changes:
    - onlyif:
      - fun: test.false
fun_only_true:
  test.succeed_with_changes:
    - onlyif:
      - fun: test.true
fun_unless:
  test.succeed_with_changes:
    - unless:
      - fun: test.true
get_return:
  test.succeed_with_changes:
    - onlyif:
      - fun: test.echo
        text: ''
nofun:
  test.succeed_with_changes:
    - onlyif:
      - args: [1]
bad_type:
  test.succeed_with_changes:
    - onlyif: 5
cwd_check:
  test.succeed_with_changes:
    - onlyif: test "$(pwd)" = /
    - cwd: /
watcher:
  test.succeed_without_changes:
    - onlyif: 'false'
    - watch:
      - test: only_true

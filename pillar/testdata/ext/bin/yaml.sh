#!/bin/sh
# prints YAML pillar data for the minion id given as $1
case "$1" in
bad) printf 'key: [unclosed\n'; exit 0 ;;
esac
cat <<YAML
source: cmd_yaml
id: $1
when: 2024-01-02
octal: 0o17
legacy_octal: 017
yes_value: yes
tilde: ~
items:
  - one
  - {two: 2}
YAML
echo "stderr is dropped" >&2

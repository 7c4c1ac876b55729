#!/bin/sh
# prints JSON pillar data for the minion id given as $1
case "$1" in
bad) echo '{"broken": '; exit 0 ;;
list) echo '[1, 2]'; exit 0 ;;
noisy) echo '{"a": 1}'; echo "to stderr" >&2; exit 0 ;;
esac
cat <<JSON
{"source": "cmd_json", "id": "$1", "nested": {"a": 1, "b": [1, 2], "big": 123456789012345678901, "f": 1.5, "t": true, "n": null}, "list": ["x"], "zorder": {"z": 1, "a": 2}}
JSON
exit 3

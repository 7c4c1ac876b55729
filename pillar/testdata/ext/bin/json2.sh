#!/bin/sh
# second JSON source overlapping json.sh, for merge strategies
cat <<JSON
{"nested": {"a": 2, "b": [2, 3], "c": "new"}, "list": ["y", "x"], "second": "$1"}
JSON

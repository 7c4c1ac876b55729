#!/bin/sh
# prints YAML for cmd_yamlex
printf 'source: cmd_yamlex\nid: %s\nnested:\n  k: v\n' "$1"

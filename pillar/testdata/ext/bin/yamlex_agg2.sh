#!/bin/sh
# prints yamlex whose !aggregate values join yamlex_agg.sh's under the
# aggregate merge strategy
cat <<DOC
pkgs: !aggregate [curl, vim]
users: !aggregate {carol: {uid: 3}}
plain: {c: 3}
DOC

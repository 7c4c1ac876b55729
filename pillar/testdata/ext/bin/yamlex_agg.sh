#!/bin/sh
# prints yamlex with !aggregate, !reset and repeated keys for cmd_yamlex
cat <<DOC
id: $1
pkgs: !aggregate [vim]
pkgs: !aggregate [git, vim]
users: !aggregate {alice: {uid: 1}}
users: !aggregate {bob: {uid: 2}}
plain: {a: 1}
plain: {b: 2}
!reset pkgs2: !aggregate [x]
num: 010
DOC

#!/bin/sh
# Creates the bare repositories of the git ext_pillar golden cases in $1
# (TestGitExtPillarGolden runs it; the same repositories serve Salt under
# -update and gsalt).
set -e
out=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=gsalt GIT_AUTHOR_EMAIL=gsalt@example.com GIT_COMMITTER_NAME=gsalt GIT_COMMITTER_EMAIL=gsalt@example.com
export GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
g() { git -c init.defaultBranch=master -c advice.detachedHead=false "$@" >/dev/null 2>&1; }

# newrepo NAME: an empty work tree in $work/NAME
newrepo() { mkdir -p "$work/$1"; cd "$work/$1"; g init -q; }
commit() { g add -A; g commit -q -m "$1"; }
publish() { g clone -q --bare "$work/$1" "$out/$1.git"; }

# base: master (base env) with a sub/ root, dev, a tag v1
newrepo base
cat > top.sls <<'T'
base:
  '*':
    - common
  'web*':
    - web
T
printf 'common:\n  from: base.git master\n  list: [1, 2]\nrole_seen: {{ grains.get("role") }}\n' > common.sls
printf 'web:\n  port: 80\ncommon:\n  web: true\n' > web.sls
mkdir sub
printf 'base:\n  "*":\n    - subdata\n' > sub/top.sls
printf 'subdata:\n  root: sub\n' > sub/subdata.sls
commit master
g tag v1
printf 'common:\n  from: base.git master after v1\n  list: [1, 2]\nrole_seen: {{ grains.get("role") }}\n' > common.sls
commit "master 2"
g checkout -q -b dev
cat > top.sls <<'T'
dev:
  '*':
    - devdata
T
printf 'devdata:\n  from: base.git dev\n' > devdata.sls
commit dev
g checkout -q master
publish base

# second: master overlapping keys of base
newrepo second
printf 'base:\n  "*":\n    - second\n' > top.sls
printf 'common:\n  from: second.git\n  list: [2, 3]\n  second: true\nonly_second: 1\n' > second.sls
commit master
publish second

# envs: one branch per environment, a top for whatever env it serves
newrepo envs
printf '{{ saltenv }}:\n  "*":\n    - data\n' > top.sls
printf 'envdata:\n  branch: master\n  saltenv: {{ saltenv }}\n' > data.sls
commit master
for b in dev prod; do
  g checkout -q -b $b master
  printf 'envdata:\n  branch: %s\n  saltenv: {{ saltenv }}\n' $b > data.sls
  commit $b
done
g checkout -q master
publish envs

# mounted: files meant to sit under a mountpoint, no top
newrepo mounted
printf 'mounted:\n  via: a/b\n' > mnt.sls
commit master
publish mounted

# usesmount: a top naming the mounted repo's file
newrepo usesmount
printf 'base:\n  "*":\n    - local\n    - a.b.mnt\n' > top.sls
printf 'local: true\n' > local.sls
commit master
publish usesmount

# yamlex: two #!yamlex files with !aggregate values under one top
newrepo yamlex
printf 'base:\n  "*":\n    - a\n    - b\n' > top.sls
printf '#!yamlex\npkgs: !aggregate [vim]\nusers: !aggregate {alice: {groups: !aggregate [adm]}}\nplain: [1]\nmixed: !aggregate [x]\n' > a.sls
printf '#!yamlex\npkgs: !aggregate [git, vim]\nusers: !aggregate {alice: {groups: !aggregate [sudo]}, bob: {}}\nplain: [2]\nmixed: [y]\n' > b.sls
commit master
publish yamlex

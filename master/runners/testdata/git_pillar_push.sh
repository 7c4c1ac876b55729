#!/bin/sh
# git_pillar_push.sh GITDIR NAME: pushes one new commit to the master
# branch of the bare repository GITDIR/NAME.git (the git_pillar.update
# golden scenarios' "push" step, run the same way for Salt and gsalt).
set -e
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=gsalt GIT_AUTHOR_EMAIL=gsalt@example.com GIT_COMMITTER_NAME=gsalt GIT_COMMITTER_EMAIL=gsalt@example.com
git clone -q "$1/$2.git" "$work/c" 2>/dev/null
cd "$work/c"
date +%s%N > pushed.txt
git add pushed.txt
git commit -q -m pushed
git push -q origin HEAD:master 2>/dev/null

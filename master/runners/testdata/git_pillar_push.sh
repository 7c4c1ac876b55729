#!/bin/sh
# git_pillar_push.sh GITDIR NAME [BRANCH]: pushes one new commit to BRANCH
# (master when not given) of the bare repository GITDIR/NAME.git (the
# git_pillar.update golden scenarios' "push" step, run the same way for
# Salt and gsalt). A data.sls on the branch is rewritten to count the
# branch's commits, so that a pillar read from it shows which commit it
# came from.
set -e
branch=${3:-master}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=gsalt GIT_AUTHOR_EMAIL=gsalt@example.com GIT_COMMITTER_NAME=gsalt GIT_COMMITTER_EMAIL=gsalt@example.com
git clone -q -b "$branch" "$1/$2.git" "$work/c" 2>/dev/null
cd "$work/c"
date +%s%N > pushed.txt
if [ -f data.sls ]; then
  printf 'envdata:\n  branch: %s\n  saltenv: {{ saltenv }}\n  commits: %s\n' "$branch" "$(git rev-list --count HEAD)" > data.sls
fi
git add -A
git commit -q -m pushed
git push -q origin "HEAD:$branch" 2>/dev/null

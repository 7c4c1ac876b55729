#!/usr/bin/env bash
# napalm-fixtures.sh DIR: export the test/ folder of napalm-automation/napalm
# at a pinned commit into DIR (DIR/ios/mocked_data/..., DIR/eos/..., ...), for
# the gated fixture test of proxy/driver:
#   GSALT_NAPALM_TESTS=DIR go test -count=1 -run TestNAPALMFixtures ./proxy/driver/
# The repository is read from NAPALM_REPO (a git directory or work tree;
# default: a clone in ${XDG_CACHE_HOME:-~/.cache}/gsalt/napalm, made on first
# use). Nothing fetched is ever committed to gsalt.
set -euo pipefail
dir=${1:-${GSALT_NAPALM_TESTS:-}}
if [ -z "$dir" ]; then
  echo "usage: $0 DIR (or set GSALT_NAPALM_TESTS)" >&2
  exit 2
fi
# napalm-automation/napalm, fix(nxapi): bracket literal IPv6 hosts (#2333).
pin=ee70e634
repo=${NAPALM_REPO:-}
if [ -z "$repo" ]; then
  repo=${XDG_CACHE_HOME:-$HOME/.cache}/gsalt/napalm
  if [ ! -d "$repo" ]; then
    mkdir -p "$(dirname "$repo")"
    git clone --bare --filter=blob:none https://github.com/napalm-automation/napalm "$repo"
  fi
fi
gitdir=$(git -C "$repo" rev-parse --absolute-git-dir 2>/dev/null || true)
[ -n "$gitdir" ] || gitdir=$(cd "$repo" && pwd)
commit=$(git --git-dir="$gitdir" rev-parse --verify "$pin^{commit}") || {
  echo "$0: commit $pin not in $repo (git fetch it first)" >&2
  exit 1
}
mkdir -p "$dir"
git --git-dir="$gitdir" archive --format=tar "$commit" test | tar -x -C "$dir" --strip-components=1
echo "$commit" >"$dir/NAPALM_COMMIT"
echo "napalm test fixtures of $commit in $dir"

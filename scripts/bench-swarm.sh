#!/usr/bin/env bash
# bench-swarm.sh [N]: one gsalt-master and one gsalt-minion process running N
# swarm identities (<id>-0000 ...) on 127.0.0.1. Reports the time until all
# N keys are pending, the time of `gsalt '*' test.ping` until all N
# returned, and the RSS of both processes. Part of `make bench`; numbers go
# in the notes, never into tests.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
bin=$PWD/bin
tmp=$(mktemp -d /tmp/gsalt-swarm.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
. "$(dirname "$0")/swarm-lib.sh"
swarm_setup "$tmp"
rss() { awk '/VmRSS/ {printf "%.1f MiB", $2/1024}' "/proc/$1/status"; }
"$bin/gsalt-master" -c "$tmp/etc/master" -l error & mp=$!; pids+=($mp)
sleep 1
start=$(date +%s.%N)
"$bin/gsalt-minion" -c "$tmp/etc/swarm" --swarm "$n" -l quiet 2>/dev/null & sp=$!; pids+=($sp)
until [ "$(ls "$tmp/master/pki/minions_pre" 2>/dev/null | wc -l)" -ge "$n" ]; do sleep 0.5; done
echo "swarm N=$n: all keys pending after $(echo "$(date +%s.%N) - $start" | bc) s (includes generating $n RSA-2048 key pairs)"
"$bin/gsalt-key" -c "$tmp/etc/master" -A -y >/dev/null
# Wait until every identity re-authenticated and answers.
for _ in $(seq 120); do
  got=$("$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json --static -t 10 2>/dev/null | grep -c ': true' || true)
  [ "$got" -ge "$n" ] && break
  sleep 1
done
t0=$(date +%s.%N)
got=$("$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json --static -t 30 | grep -c ': true' || true)
t1=$(date +%s.%N)
echo "gsalt '*' test.ping: $got/$n returned in $(echo "$t1 - $t0" | bc) s (whole CLI run)"
echo "RSS: gsalt-master $(rss $mp), gsalt-minion --swarm $n $(rss $sp)"

#!/usr/bin/env bash
# bench-swarm-salt.sh [N]: the same load as bench-swarm.sh against a real
# Salt 3006 master (GSALT_SALT_SRC names its source tree; Debian python3):
# one `gsalt-minion --swarm N` process, `salt '*' test.ping` until all N
# returned, and the RSS of the salt-master processes. Run from `make bench`
# when GSALT_SALT_SRC is set.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${GSALT_SALT_SRC:?set GSALT_SALT_SRC to a Salt 3006 source tree}
shim=${GSALT_PYSHIM:-$(cd .. && pwd)/shared/peer/pyshim}
n=${1:-1000}
bin=$PWD/bin
tmp=$(mktemp -d /tmp/salt-swarm.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
export PYTHONPATH=$src:$shim
. "$(dirname "$0")/swarm-lib.sh"
swarm_setup "$tmp" "log_level: error
user: $(id -un)
auto_accept: True"
setsid /usr/bin/python3 "$src/scripts/salt-master" -c "$tmp/etc/master" -l error </dev/null >/dev/null 2>&1 & mp=$!; pids+=($mp)
sleep 5
start=$(date +%s.%N)
"$bin/gsalt-minion" -c "$tmp/etc/swarm" --swarm "$n" -l quiet 2>/dev/null & sp=$!; pids+=($sp)
until [ "$(ls "$tmp/master/pki/minions" 2>/dev/null | wc -l)" -ge "$n" ]; do sleep 1; done
echo "salt-master, swarm N=$n: all keys accepted (auto_accept) after $(echo "$(date +%s.%N) - $start" | bc) s"
for _ in $(seq 60); do
  got=$(/usr/bin/python3 "$src/scripts/salt" -c "$tmp/etc/master" '*' test.ping --out json --static -t 30 2>/dev/null | grep -c ': true' || true)
  [ "$got" -ge "$n" ] && break
  sleep 2
done
t0=$(date +%s.%N)
got=$(/usr/bin/python3 "$src/scripts/salt" -c "$tmp/etc/master" '*' test.ping --out json --static -t 60 2>/dev/null | grep -c ': true' || true)
t1=$(date +%s.%N)
echo "salt '*' test.ping (real salt CLI and master): $got/$n returned in $(echo "$t1 - $t0" | bc) s"
rss=0; for p in $(pgrep -g "$mp" 2>/dev/null || pgrep -P "$mp"); do r=$(awk '/VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0); rss=$((rss + r)); done
echo "RSS: salt-master process group $((rss/1024)) MiB (sum over its processes), gsalt-minion --swarm $n $(awk '/VmRSS/ {printf "%.1f MiB", $2/1024}' /proc/$sp/status)"

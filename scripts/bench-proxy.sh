#!/usr/bin/env bash
# bench-proxy.sh [N]: one gsalt-master and one gsalt-proxy process serving N
# dummy devices (ids dev-0000 ...) on 127.0.0.1, every device its own minion
# with its own key pair. Reports the time until all N keys are pending, the
# time of `gsalt '*' test.ping` until all N returned, and the RSS of both
# processes (and per device). Numbers go in the notes, never into tests.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
bin=$PWD/bin
tmp=$(mktemp -d /tmp/gsalt-proxy.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
. "$(dirname "$0")/swarm-lib.sh"
swarm_setup "$tmp"
mkdir -p "$tmp/etc/proxy"
cat >"$tmp/etc/proxy/proxy" <<CONF
root_dir: $tmp/proxy
pki_dir: $tmp/proxy/pki
cachedir: $tmp/proxy/cache
sock_dir: $tmp/proxy/sock
log_file: $tmp/proxy/log
master: 127.0.0.1
master_port: $ret
acceptance_wait_time: 2
proxy:
  proxytype: dummy
CONF
for i in $(seq 0 $((n - 1))); do printf 'dev-%04d\n' "$i"; done >"$tmp/ids"
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
"$bin/gsalt-master" -c "$tmp/etc/master" -l error & mp=$!; pids+=($mp)
sleep 1
start=$(date +%s.%N)
"$bin/gsalt-proxy" -c "$tmp/etc/proxy" --proxyids-file "$tmp/ids" -l quiet 2>/dev/null & pp=$!; pids+=($pp)
until [ "$(ls "$tmp/master/pki/minions_pre" 2>/dev/null | wc -l)" -ge "$n" ]; do sleep 0.5; done
echo "gsalt-proxy N=$n: all keys pending after $(echo "$(date +%s.%N) - $start" | bc) s (includes generating $n RSA-2048 key pairs)"
"$bin/gsalt-key" -c "$tmp/etc/master" -A -y >/dev/null
# Wait until every device re-authenticated, initialised its dummy module and answers.
for _ in $(seq 120); do
  got=$("$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json --static -t 10 2>/dev/null | grep -c ': true' || true)
  [ "$got" -ge "$n" ] && break
  sleep 1
done
t0=$(date +%s.%N)
got=$("$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json --static -t 30 | grep -c ': true' || true)
t1=$(date +%s.%N)
echo "gsalt '*' test.ping: $got/$n returned in $(echo "$t1 - $t0" | bc) s (whole CLI run)"
t0=$(date +%s.%N)
got=$("$bin/gsalt" -c "$tmp/etc/master" '*' pkg.list_pkgs --out json --static -t 30 | grep -c '"redbull"' || true)
t1=$(date +%s.%N)
echo "gsalt '*' pkg.list_pkgs: $got/$n returned in $(echo "$t1 - $t0" | bc) s"
mr=$(rss $mp); pr=$(rss $pp)
echo "RSS: gsalt-master $((mr / 1024)) MiB, gsalt-proxy ($n devices) $((pr / 1024)) MiB = $(echo "scale=1; $pr / $n" | bc) KiB per device (a Salt salt-proxy is one ~110 MB process per device)"

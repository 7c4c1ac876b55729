#!/usr/bin/env bash
# bench-proxy.sh [N]: one gsalt-master and one gsalt-proxy process serving N
# dummy devices (ids sw1 ... swN, no device connection) on 127.0.0.1, every
# device its own minion with its own key pair. Reports the time until all N
# keys are pending, the time of `gsalt '*' test.ping` until all N returned,
# and the RSS of both processes (and per device). Numbers go in the notes,
# never into tests. The devices' key pairs are kept between runs in the
# proxy benches' key cache (see proxy_keycache in bench-lib.sh), shared
# with bench-proxy-napalm.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
bin=${BIN:-$PWD/bin}
. "$(dirname "$0")/bench-lib.sh"
# gsalt-proxy holds few files per dummy device (the master connections are
# the fleet's); gsalt-master one per connection.
raise_nofile $((n + 4096))
tmp=$(mktemp -d /tmp/gsalt-proxy.XXXXXX)
pids=()
cleanup() { stop_groups "${pids[@]}"; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
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
acceptance_wait_time_max: 30
proxy:
  proxytype: dummy
CONF
for i in $(seq 1 "$n"); do echo "sw$i"; done >"$tmp/ids"
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
# Replies wait longer for large fleets (the CLI's -t).
wait_s=$((30 + n / 200))
"$bin/gsalt-master" -c "$tmp/etc/master" -l error & mp=$!; pids+=($mp)
sleep 1
cached=$(proxy_keys_in "$tmp/proxy/pki" "$n")
echo "$cached of $n device key pairs from the key cache $(proxy_keycache)"
start=$(date +%s.%N)
"$bin/gsalt-proxy" -c "$tmp/etc/proxy" --proxyids-file "$tmp/ids" -l quiet 2>/dev/null & pp=$!; pids+=($pp)
until [ "$(ls "$tmp/master/pki/minions_pre" 2>/dev/null | wc -l)" -ge "$n" ]; do
  kill -0 $pp 2>/dev/null || { echo "gsalt-proxy exited"; exit 1; }
  sleep 0.5
done
echo "gsalt-proxy N=$n: all keys pending after $(echo "$(date +%s.%N) - $start" | bc) s (includes generating $((n - cached)) RSA-2048 key pairs)"
proxy_keys_out "$tmp/proxy/pki"
"$bin/gsalt-key" -c "$tmp/etc/master" -A -y >/dev/null
# Wait until every device re-authenticated, initialised its dummy module and answers.
for _ in $(seq 120); do
  got=$("$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json --static -t 10 2>/dev/null | grep -c ': true' || true)
  [ "$got" -ge "$n" ] && break
  sleep 1
done
t0=$(date +%s.%N)
got=$("$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json --static -t "$wait_s" | grep -c ': true' || true)
t1=$(date +%s.%N)
ping_s=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)")
echo "gsalt '*' test.ping: $got/$n returned in $ping_s s (whole CLI run)"
t0=$(date +%s.%N)
got=$("$bin/gsalt" -c "$tmp/etc/master" '*' pkg.list_pkgs --out json --static -t "$wait_s" | grep -c '"redbull"' || true)
t1=$(date +%s.%N)
echo "gsalt '*' pkg.list_pkgs: $got/$n returned in $(echo "$t1 - $t0" | bc) s"
mr=$(rss $mp); pr=$(rss $pp)
echo "RSS: gsalt-master $((mr / 1024)) MiB, gsalt-proxy ($n devices) $((pr / 1024)) MiB = $(echo "scale=1; $pr / $n" | bc) KiB per device (a Salt salt-proxy is one ~110 MB process per device)"
echo "gsalt-proxy CPU $(proc_cpu $pp) s, gsalt-master CPU $(proc_cpu $mp) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# The Salt column: Salt runs one salt-proxy process per device. One real
# salt-proxy (dummy proxytype, Salt 3006 from GSALT_SALT_SRC) joins the
# same gsalt-master; its RSS (process group) once it answers test.ping is
# the per-device cost of a Salt fleet.
salt_dev=-
if [ -n "${GSALT_SALT_SRC:-}" ] && [ -z "${NO_SALT:-}" ]; then
  shim=${GSALT_PYSHIM:-$(cd .. && pwd)/shared/peer/pyshim}
  [ -d "$shim" ] || shim=/work/shared/peer/pyshim
  sp=$tmp/saltproxy; mkdir -p "$sp/etc"
  cat >"$sp/etc/proxy" <<CONF
root_dir: $sp
pki_dir: $sp/pki
cachedir: $sp/cache
sock_dir: $sp/sock
log_file: $sp/log
user: $(id -un)
master: 127.0.0.1
master_port: $ret
publish_port: $pub
acceptance_wait_time: 1
proxy:
  proxytype: dummy
CONF
  PYTHONPATH=$GSALT_SALT_SRC:$shim setsid /usr/bin/python3 "$GSALT_SALT_SRC/scripts/salt-proxy" -c "$sp/etc" --proxyid=saltpx1 -l error \
    </dev/null >"$sp/out" 2>&1 & spp=$!; pids+=($spp)
  for _ in $(seq 240); do [ -e "$tmp/master/pki/minions_pre/saltpx1" ] && break; sleep 0.5; done
  "$bin/gsalt-key" -c "$tmp/etc/master" -a saltpx1 -y >/dev/null 2>&1 || true
  for _ in $(seq 120); do
    "$bin/gsalt" -c "$tmp/etc/master" saltpx1 test.ping --out json -t 5 2>/dev/null | grep -q ': true' && { salt_dev=ok; break; }
    sleep 1
  done
  if [ "$salt_dev" = ok ]; then
    # (a process of the group may have exited or be a zombie: no VmRSS)
    k=0; for p in $(pgrep -g "$spp"); do r=$(rss "$p" 2>/dev/null || true); k=$((k + ${r:-0})); done
    salt_dev="$(echo "scale=1; $k / 1024" | bc) MB (a salt-proxy process a device, one measured)"
    echo "Salt 3006 salt-proxy (dummy) on the same master: RSS $((k / 1024)) MiB over its $(pgrep -g "$spp" | wc -l) process(es)"
  else
    echo "bench-proxy: the real salt-proxy did not answer test.ping: $(tail -3 "$sp/out" "$sp/log" 2>/dev/null | cut -c1-200)"
    salt_dev=-
  fi
  # Stopped here, and waited for: salt-proxy's children take a few seconds
  # to exit after SIGTERM, longer than the exit trap's wait (its direct
  # child only), so they outlived the bench.
  kill -- "-$spp" 2>/dev/null || true
  for _ in $(seq 40); do pgrep -g "$spp" >/dev/null || break; sleep 0.25; done
  kill -KILL -- "-$spp" 2>/dev/null || true
else
  salt_dev="n/a (Salt: a salt-proxy process a device; no GSALT_SALT_SRC)"
fi
bench_note "Dummy devices row: one gsalt-proxy serving $n dummy-proxytype devices (each its own minion and key pair) against one gsalt-master: its RSS divided by $n after the pings, and the whole CLI time of gsalt '*' test.ping --static; Salt column: one real salt-proxy (dummy) on the same master, RSS summed over its processes (Salt runs one salt-proxy per device)."
bench_row "$n dummy devices (no device session) in one gsalt-proxy: RSS per device, test.ping" \
  "$(echo "scale=2; $pr / $n / 1024" | bc) MB, $ping_s s" "$salt_dev" -

#!/usr/bin/env bash
# bench-cp.sh [MIB]: cp.cache_file of a MIB-MiB file (default 1024) from
# the master's file_roots to one minion on 127.0.0.1, whole CLI. The
# master's hash of the file is computed by a cp.hash_file first (both
# masters cache it), the minion's cached copy is removed before each
# timed run, and the best of CP_RUNS (default 2) runs is kept. Runs
# gsalt-master + gsalt-minion and, when GSALT_SALT_SRC is set, a real Salt
# 3006 salt-master + salt-minion (Salt's file server sends
# file_buffer_size chunks, 1 MiB by default, one request each). Also
# prints the CPU seconds master and minion spent per run.
# PROFILE_DIR=DIR records both gsalt daemons with perf during the last run.
# PPROF_DIR=DIR saves Go CPU profiles of both gsalt daemons over the first
# PPROF_SECONDS (default 15) of the last run: DIR/cp-master.pprof and
# DIR/cp-minion.pprof.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
mib=${1:-1024}
runs=${CP_RUNS:-2}
bin=${BENCH_BIN:-$PWD/bin}
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/gsalt-bench-cp.XXXXXX)
pids=()
cleanup() {
  stop_groups "${pids[@]}"
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/srv"
# Random-looking data (no sparse file, nothing compressible).
$py -c "
import os, sys
b = os.urandom(1 << 20)
with open('$tmp/srv/big.bin', 'wb') as f:
    for i in range($mib):
        f.write(b[i % 4096:] + b[:i % 4096])
"

# setup NAME: ports, master and minion configs sharing $tmp/srv.
setup() {
  local d=$tmp/$1
  read -r pub ret < <($py -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  mkdir -p "$d/etc/master" "$d/etc/minion"
  cat >"$d/etc/master/master" <<CONF
root_dir: $d/m
pki_dir: $d/m/pki
cachedir: $d/m/cache
sock_dir: $d/m/sock
log_file: $d/m/log
user: $(id -un)
interface: 127.0.0.1
publish_port: $pub
ret_port: $ret
auto_accept: True
file_roots: {base: [$tmp/srv]}
CONF
  cat >"$d/etc/minion/minion" <<CONF
id: cp1
root_dir: $d/n
pki_dir: $d/n/pki
cachedir: $d/n/cache
sock_dir: $d/n/sock
log_file: $d/n/log
user: $(id -un)
master: 127.0.0.1
master_port: $ret
publish_port: $pub
acceptance_wait_time: 1
enable_fqdns_grains: False
ipv6: False
CONF
}

wait_ping() {
  for _ in $(seq 200); do
    if "$@" cp1 test.ping --out json -t 3 2>/dev/null | grep -q true; then return 0; fi
    sleep 0.3
  done
  echo "bench-cp: minion did not answer" >&2
  tail -20 "$d/daemons.log" >&2 || true
  return 1
}

# measure NAME MASTER_PID MINION_PID CLI...: sets $best (MB/s, MB = 10^6 bytes).
measure() {
  local name=$1 mp=$2 np=$3; shift 3
  local d=$tmp/$name
  "$@" cp1 cp.hash_file salt://big.bin --out json -t 300 >/dev/null 2>&1 || true
  best=0
  for r in $(seq "$runs"); do
    rm -rf "$d/n/cache/files"
    sync
    local m0 n0 t0 t1 out
    m0=$(cpu_of "$mp"); n0=$(cpu_of "$np")
    if [ -n "${PROFILE_DIR:-}" ] && [ "$r" = "$runs" ] && [ "$name" = gsalt ]; then
      mkdir -p "$PROFILE_DIR"
      perf record -F 499 -g -o "$PROFILE_DIR/cp-master.perf" -p "$mp" 2>/dev/null & pm=$!
      perf record -F 499 -g -o "$PROFILE_DIR/cp-minion.perf" -p "$np" 2>/dev/null & pn=$!
    fi
    if [ -n "${PPROF_DIR:-}" ] && [ "$r" = "$runs" ] && [ "$name" = gsalt ]; then
      mkdir -p "$PPROF_DIR"
      curl -s -o "$PPROF_DIR/cp-master.pprof" "http://$pp_master/debug/pprof/profile?seconds=${PPROF_SECONDS:-15}" & cm=$!
      curl -s -o "$PPROF_DIR/cp-minion.pprof" "http://$pp_minion/debug/pprof/profile?seconds=${PPROF_SECONDS:-15}" & cn=$!
      if [ -n "${PPROF_TRACE:-}" ]; then
        (sleep 2; curl -s -o "$PPROF_DIR/cp-minion.trace" "http://$pp_minion/debug/pprof/trace?seconds=2") &
        (sleep 2; curl -s -o "$PPROF_DIR/cp-master.trace" "http://$pp_master/debug/pprof/trace?seconds=2") &
      fi
    fi
    t0=$(date +%s.%N)
    out=$("$@" cp1 cp.cache_file salt://big.bin --out json -t 600 2>&1 || true)
    t1=$(date +%s.%N)
    if [ -n "${pm:-}" ]; then kill -INT "$pm" "$pn"; wait "$pm" "$pn" 2>/dev/null || true; pm=; fi
    if [ -n "${cm:-}" ]; then wait "$cm" "$cn" 2>/dev/null || true; cm=; fi
    local got; got=$(stat -c %s "$d/n/cache/files/base/big.bin" 2>/dev/null || echo 0)
    if [ "$got" != "$((mib << 20))" ]; then
      echo "bench-cp: $name: cached copy has $got bytes, not $((mib << 20)): $out" >&2
      continue
    fi
    cmp -s "$tmp/srv/big.bin" "$d/n/cache/files/base/big.bin" || { echo "bench-cp: $name: cached copy differs" >&2; continue; }
    local s mbs
    s=$(echo "$t1 - $t0" | bc)
    mbs=$(echo "scale=1; $mib * 1048576 / 1000000 / $s" | bc | sed 's/^\./0./')
    echo "$name: cp.cache_file of $mib MiB: $s s, $mbs MB/s; master CPU $(echo "$(cpu_of "$mp") - $m0" | bc) s, minion CPU $(echo "$(cpu_of "$np") - $n0" | bc) s"
    if [ "$(echo "$mbs > $best" | bc)" = 1 ]; then best=$mbs; fi
  done
}
# cpu_of PID: CPU seconds of the process group led by PID, with the
# children its processes reaped (Salt forks workers and job processes).
cpu_of() {
  local t=0 p
  for p in $(pgrep -g "$1" 2>/dev/null || echo "$1"); do t=$(echo "$t + $(proc_cpu_reaped "$p" 2>/dev/null || echo 0)" | bc); done
  echo "$t"
}

setup gsalt; d=$tmp/gsalt
pp_master= pp_minion=
if [ -n "${PPROF_DIR:-}" ]; then pp_master=127.0.0.1:$(freeport); pp_minion=127.0.0.1:$(freeport); fi
GSALT_PPROF=$pp_master setsid "$bin/gsalt-master" -c "$d/etc/master" -l error >>"$d/daemons.log" 2>&1 & mp=$!; pids+=($mp)
sleep 0.5
GSALT_PPROF=$pp_minion setsid "$bin/gsalt-minion" -c "$d/etc/minion" -l error >>"$d/daemons.log" 2>&1 & np=$!; pids+=($np)
wait_ping "$bin/gsalt" -c "$d/etc/master"
measure gsalt "$mp" "$np" "$bin/gsalt" -c "$d/etc/master"
g=$best
stop_groups "$np" "$mp"
pids=()
rm -rf "$d"

s=-
if [ -n "${GSALT_SALT_SRC:-}" ] && [ -z "${NO_SALT:-}" ]; then
  shim=${GSALT_PYSHIM:-}
  for c in ../shared/peer/pyshim ../../shared/peer/pyshim; do [ -z "$shim" ] && [ -d "$c" ] && shim=$(cd "$c" && pwd); done
  if [ -z "$shim" ]; then shim=$tmp/pyshim; mkdir -p "$shim/looseversion"; echo 'from setuptools._distutils.version import LooseVersion  # noqa: F401' >"$shim/looseversion/__init__.py"; fi
  export PYTHONPATH=$GSALT_SALT_SRC:$shim
  salt() { $py "$GSALT_SALT_SRC/scripts/$1" "${@:2}"; }
  setup salt; d=$tmp/salt
  setsid $py "$GSALT_SALT_SRC/scripts/salt-master" -c "$d/etc/master" -l error </dev/null >>"$d/daemons.log" 2>&1 & mp=$!; pids+=($mp)
  sleep 3
  setsid $py "$GSALT_SALT_SRC/scripts/salt-minion" -c "$d/etc/minion" -l error </dev/null >>"$d/daemons.log" 2>&1 & np=$!; pids+=($np)
  wait_ping salt salt -c "$d/etc/master"
  measure salt "$mp" "$np" salt salt -c "$d/etc/master"
  s=$best
else
  echo "bench-cp: GSALT_SALT_SRC not set, skipping the same copy through real Salt"
fi
bench_note "cp.cache_file row: a $mib MiB random file from the master's file_roots to one minion on 127.0.0.1, whole CLI, the best of $runs runs (the minion's cached copy removed before each, the copy compared with the original); MB = 10^6 bytes; Salt: salt-master and salt-minion with Salt's default file_buffer_size (1 MiB chunks, one request each)."
bench_row "cp.cache_file ${mib} MiB master to minion, MB/s" "$g" "$s" ">= 300, >= 3x Salt"

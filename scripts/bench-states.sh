#!/usr/bin/env bash
# bench-states.sh [N]: state.apply of an SLS with N (default 500)
# file.managed states on one minion, whole CLI, first run (creates the
# files) and second run (nothing to change). Runs gsalt-master +
# gsalt-minion, and when GSALT_SALT_SRC is set the same SLS through a real
# Salt 3006 master + minion on the same machine in the same run.
# Also prints the minion's CPU seconds for the second run; PROFILE_DIR=DIR
# records the gsalt-minion with perf during it; PPROF_DIR=DIR saves Go CPU
# profiles of gsalt-minion and gsalt-master over the second runs'
# first PPROF_SECONDS (default 10; raise STATES_RUNS to fill them) as
# DIR/states-minion.pprof and DIR/states-master.pprof; NO_SALT=1 skips Salt.
# The gsalt binaries come from BIN (default bin/); the ones the bench runs
# are built there first (go build; NO_BUILD=1 uses them as they are), and
# the bench stops with an error when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
n=${1:-500}
bin=${BIN:-$PWD/bin}
need=(gsalt gsalt-master gsalt-minion gsalt-key)
if [ -z "${NO_BUILD:-}" ]; then
  mkdir -p "$bin"
  go build -tags "${TAGS:-libvirt_dlopen}" -o "$bin/" "${need[@]/#/./cmd/}" || { echo "bench-states: go build of ${need[*]} failed" >&2; exit 1; }
fi
for b in "${need[@]}"; do
  [ -x "$bin/$b" ] || { echo "bench-states: $bin/$b is missing (run make build, or unset NO_BUILD)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/gsalt-bench-states.XXXXXX)
pids=()
cleanup() {
  stop_groups "${pids[@]}"
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
py=/usr/bin/python3

# setup NAME: ports, master and minion configs, an SLS tree with N states.
setup() {
  local d=$tmp/$1
  read -r pub ret < <($py -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  mkdir -p "$d/etc/master" "$d/etc/minion" "$d/srv/salt" "$d/srv/pillar" "$d/target"
  cat >"$d/etc/master/master" <<CONF
root_dir: $d/m
pki_dir: $d/m/pki
cachedir: $d/m/cache
sock_dir: $d/m/sock
log_file: $d/m/log
user: root
interface: 127.0.0.1
publish_port: $pub
ret_port: $ret
file_roots: {base: [$d/srv/salt]}
pillar_roots: {base: [$d/srv/pillar]}
CONF
  cat >"$d/etc/minion/minion" <<CONF
id: bench1
root_dir: $d/n
pki_dir: $d/n/pki
cachedir: $d/n/cache
sock_dir: $d/n/sock
log_file: $d/n/log
user: root
master: 127.0.0.1
master_port: $ret
publish_port: $pub
acceptance_wait_time: 1
enable_fqdns_grains: False
ipv6: False
CONF
  printf "base:\n  '*':\n    - many\n" >"$d/srv/salt/top.sls"
  cat >"$d/srv/salt/many.sls" <<SLS
{% for i in range($n) %}
file-{{ i }}:
  file.managed:
    - name: $d/target/f{{ i }}.conf
    - contents: "line {{ i }} for {{ grains['id'] }}"
    - mode: '0644'
{% endfor %}
SLS
}

now() { date +%s.%N; }
elapsed() { $py -c "print(f'{$2-$1:.2f}')"; }

# cpu_of PID: CPU seconds of the process group led by PID, with the
# children its processes reaped (Salt forks a process per job).
cpu_of() {
  local t=0 p
  for p in $(pgrep -g "$1" 2>/dev/null || echo "$1"); do t=$(echo "$t + $(proc_cpu_reaped "$p" 2>/dev/null || echo 0)" | bc); done
  echo "$t"
}

# measure LABEL MASTER_PID MINION_PID CLI...: two state.apply runs, prints the
# timings; sets $second (seconds of the second run, best of STATES_RUNS,
# default 3, second runs).
measure() {
  local label=$1 mp=$2 np=$3; shift 3
  local t0 t1 t2 out c1 c2 m1 m2
  t0=$(now); out=$("$@" bench1 state.apply --out json -t 300 2>/dev/null || true); t1=$(now)
  local ok1; ok1=$(printf '%s' "$out" | grep -c '"result": true' || true)
  local first; first=$(elapsed "$t0" "$t1")
  first_run=$first; [ "$ok1" = "$n" ] || first_run=-
  second=
  local cm= cn=
  if [ -n "${PPROF_DIR:-}" ] && [ "$label" = gsalt ]; then
    mkdir -p "$PPROF_DIR"
    curl -s -o "$PPROF_DIR/states-minion.pprof" "http://$pp_minion/debug/pprof/profile?seconds=${PPROF_SECONDS:-10}" & cn=$!
    curl -s -o "$PPROF_DIR/states-master.pprof" "http://$pp_master/debug/pprof/profile?seconds=${PPROF_SECONDS:-10}" & cm=$!
  fi
  for r in $(seq "${STATES_RUNS:-3}"); do
    if [ -n "${PROFILE_DIR:-}" ] && [ "$r" = 1 ] && [ "$label" = gsalt ]; then
      mkdir -p "$PROFILE_DIR"; perf record -F 999 -g -o "$PROFILE_DIR/states-minion.perf" -p "$np" 2>/dev/null & pp=$!
      perf record -F 999 -g -o "$PROFILE_DIR/states-master.perf" -p "$mp" 2>/dev/null & pm=$!
    fi
    c1=$(cpu_of "$np"); m1=$(cpu_of "$mp"); t1=$(now)
    out=$("$@" bench1 state.apply --out json -t 300 2>/dev/null || true); t2=$(now); c2=$(cpu_of "$np"); m2=$(cpu_of "$mp")
    if [ -n "${pp:-}" ]; then kill -INT "$pp" "$pm"; wait "$pp" "$pm" 2>/dev/null || true; pp=; fi
    local ok2; ok2=$(printf '%s' "$out" | grep -c '"result": true' || true)
    local el; el=$(elapsed "$t1" "$t2")
    echo "$label: $n file.managed: first run $first s ($ok1 true), second run $el s ($ok2 true, no changes), minion CPU $(echo "$c2 - $c1" | bc) s, master CPU $(echo "$m2 - $m1" | bc) s"
    if [ "$ok2" = "$n" ] && { [ -z "$second" ] || [ "$(echo "$el < $second" | bc)" = 1 ]; }; then second=$el; fi
  done
  if [ -n "$cn" ]; then wait "$cn" "$cm" 2>/dev/null || true; fi
}

wait_ping() {
  for _ in $(seq 200); do
    if "$@" bench1 test.ping --out json -t 3 2>/dev/null | grep -q true; then return 0; fi
    sleep 0.3
  done
  echo "bench: minion did not answer" >&2; return 1
}

bench_note "state.apply rows: one minion and an SLS of $n file.managed states on 127.0.0.1; wall time of the whole CLI (gsalt bench1 state.apply --out json; Salt: the Python salt CLI, salt-master and salt-minion on the same machine in the same run); the first run creates the files, the second (best of ${STATES_RUNS:-3}) has nothing to change."
# gsalt-master + gsalt-minion.
setup gsalt; d=$tmp/gsalt
pp_master= pp_minion=
if [ -n "${PPROF_DIR:-}" ]; then pp_master=127.0.0.1:$(freeport); pp_minion=127.0.0.1:$(freeport); fi
GSALT_PPROF=$pp_master setsid "$bin/gsalt-master" -c "$d/etc/master" -l error >>"$d/daemons.log" 2>&1 & pids+=($!)
sleep 0.5
GSALT_PPROF=$pp_minion setsid "$bin/gsalt-minion" -c "$d/etc/minion" -l error >>"$d/daemons.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do "$bin/gsalt-key" -c "$d/etc/master" -A -y >/dev/null 2>&1; "$bin/gsalt-key" -c "$d/etc/master" -l acc | grep -q bench1 && break; sleep 0.2; done
wait_ping "$bin/gsalt" -c "$d/etc/master"
measure gsalt "${pids[0]}" "${pids[1]}" "$bin/gsalt" -c "$d/etc/master"
g=${second:--}; g1=$first_run
rss=$(ps -o rss= -p "${pids[1]}" | tr -d ' ')
echo "gsalt-minion RSS after the runs: $((rss / 1024)) MiB"

if [ -z "${GSALT_SALT_SRC:-}" ] || [ -n "${NO_SALT:-}" ]; then
  echo "bench-states: GSALT_SALT_SRC not set, skipping the same SLS through real Salt"
  bench_row "state.apply $n file.managed, first run (s, whole CLI)" "$g1" - "-"
  bench_row "state.apply $n file.managed, second run (s, whole CLI)" "$g" - "<= 0.15"
  exit 0
fi
shim=$PWD/../shared/peer/pyshim
[ -d "$shim" ] || { shim=$tmp/pyshim; mkdir -p "$shim/looseversion"; echo 'from setuptools._distutils.version import LooseVersion  # noqa: F401' >"$shim/looseversion/__init__.py"; }
export PYTHONPATH=$GSALT_SALT_SRC:$shim
salt() { $py "$GSALT_SALT_SRC/scripts/$1" "${@:2}"; }
setup salt; d=$tmp/salt
setsid $py "$GSALT_SALT_SRC/scripts/salt-master" -c "$d/etc/master" -l error >>"$d/daemons.log" 2>&1 & pids+=($!)
sleep 3
setsid $py "$GSALT_SALT_SRC/scripts/salt-minion" -c "$d/etc/minion" -l error >>"$d/daemons.log" 2>&1 & pids+=($!)
for _ in $(seq 100); do salt salt-key -c "$d/etc/master" -A -y >/dev/null 2>&1; salt salt-key -c "$d/etc/master" -l acc 2>/dev/null | grep -q bench1 && break; sleep 0.5; done
wait_ping salt salt -c "$d/etc/master"
measure "Salt 3006" "${pids[2]}" "${pids[3]}" salt salt -c "$d/etc/master"
bench_row "state.apply $n file.managed, first run (s, whole CLI)" "$g1" "$first_run" "-"
bench_row "state.apply $n file.managed, second run (s, whole CLI)" "$g" "${second:--}" "<= 0.15"

#!/usr/bin/env bash
# bench-reactor.sh [EVENTS]: reactor throughput through the master. Events
# bench/<i> with data {id: <a swarm identity>} are fired on the master's
# event pull socket; a reactor maps bench/* to a reactor SLS with one
# local.test.ping reaction targeting data['id']; one gsalt-minion --swarm
# process (RX_SWARM identities, default 4) answers the jobs. Counts jobs
# whose return reached the master's event bus per second, and the master's
# CPU per job (scripts/bench-events.py drives and counts). Runs against
# gsalt-master and, when GSALT_SALT_SRC is set, a real Salt 3006 master
# (SALT_EVENTS events, default 1000: Salt's reactor is slow), both
# with sign_pub_messages True and False.
# PROFILE_DIR=DIR records the gsalt-master with perf during the run
# (perf report -i DIR/reactor-master.perf). PPROF_DIR=DIR saves a Go CPU
# profile of the gsalt-master (PPROF_SECONDS, default 15, from the first
# event) as DIR/reactor-master.pprof (DIR/reactor-master-unsigned.pprof for
# the sign_pub_messages: False run), and one of the swarm as
# DIR/reactor-swarm[-unsigned].pprof. Each gsalt run prints the job
# cache's writes and commits and the request connections closed during
# it. NO_SALT=1 skips Salt. A second gsalt
# run sets sign_pub_messages: False (Salt's master signs every publish by
# default); NO_UNSIGNED=1 skips it, NO_SIGNED=1 the signed run. Each gsalt
# run also prints the swarm's CPU per job and the ceiling the machine's
# cores put on jobs/s (cores / master+swarm+driver CPU per job). KEEP_TMP=1
# keeps the configs and logs. RX_LOG_LEVEL sets the daemons' log file level.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
. scripts/swarm-lib.sh
events=${1:-20000}
salt_events=${SALT_EVENTS:-1000}
n=${RX_SWARM:-4}
# At most RX_WINDOW events ahead of the returns (default 100 per identity,
# at most 800), and at most RX_WINDOW/RX_SWARM ahead for one identity: below
# the master's pub_hwm (1000 publishes queued per subscriber, as Salt's)
# and a swarm identity's receive queue (128 publishes), so an identity
# falling behind on a loaded machine is not sent more jobs than the
# publisher may queue for it or it may hold (the rest would be dropped,
# as libzmq does). Master and swarm run with zmq_filtering: True, so each
# identity receives only its own jobs (without it every identity decrypts
# every publish, and the ones of the identities that returned already keep
# coming: a lagging identity's queue overflowed, 600 of 20,000 jobs lost).
window=${RX_WINDOW:-$((n * 100 < 800 ? n * 100 : 800))}
bin=${BIN:-${BENCH_BIN:-$PWD/bin}}
py=/usr/bin/python3
tmp=$(mktemp -d /tmp/gsalt-bench-reactor.XXXXXX)
pids=()
cleanup() {
  stop_groups "${pids[@]}"
  wait 2>/dev/null || true
  if [ -n "${KEEP_TMP:-}" ]; then echo "bench-reactor: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
ids=$(for i in $(seq 0 $((n - 1))); do printf 'sw-%04d,' "$i"; done); ids=${ids%,}

# setup DIR: master + swarm configs with the reactor.
setup() {
  local d=$1
  mkdir -p "$d/reactor"
  cat >"$d/reactor/job.sls" <<'SLS'
bench-job:
  local.test.ping:
    - tgt: {{ data['id'] }}
SLS
  swarm_setup "$d" "log_level: error
log_level_logfile: ${RX_LOG_LEVEL:-error}
zmq_filtering: True
user: $(id -un)
auto_accept: True
reactor:
  - 'bench/*':
    - $d/reactor/job.sls"
  printf 'zmq_filtering: True\nlog_level_logfile: %s\n' "${RX_LOG_LEVEL:-error}" >>"$d/etc/swarm/minion"
}

# wait_all CLI...: until every swarm identity answers test.ping.
wait_all() {
  for _ in $(seq 120); do
    got=$("$@" '*' test.ping --out json --static -t 10 2>/dev/null | grep -c ': true' || true)
    [ "$got" -ge "$n" ] && return 0
    sleep 1
  done
  echo "bench-reactor: only $got/$n identities answer" >&2
  return 1
}

# run LABEL DIR EVENTS PIDS...: drives the events, prints and returns the result line.
run() {
  local label=$1 d=$2 k=$3; shift 3
  local out
  out=$($py scripts/bench-events.py "$d/master/sock" "$k" "$ids" "$window" "$@")
  echo "$label: $out" >&2
  echo "$out"
}
# metric NAME: a counter from the running master's /metrics (gsalt_NAME).
# (awk reads to the end: an early exit would fail curl with EPIPE, and
# the pipeline with it under pipefail.)
metric() { curl -s "http://127.0.0.1:$metrics/metrics" | awk -v k="gsalt_$1" '$1==k {v=$2} END {printf "%d", v}'; }
field() { printf '%s\n' "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1==k {print $2}'; }

# gsalt_run NAME MASTER_EXTRA: one gsalt-master + swarm run; sets $g (the
# result line).
gsalt_run() {
  local name=$1 extra=$2
  d=$tmp/$name; setup "$d"
  printf '%s\n' "$extra" >>"$d/etc/master/master"
  metrics=$(freeport)
  printf 'metrics_port: %s\nmetrics_host: 127.0.0.1\n' "$metrics" >>"$d/etc/master/master"
  pp_addr=
  [ -n "${PPROF_DIR:-}" ] && pp_addr=127.0.0.1:$(freeport)
  GSALT_PPROF=$pp_addr setsid "$bin/gsalt-master" -c "$d/etc/master" -l error >>"$tmp/gsalt.log" 2>&1 & mp=$!; pids+=($mp)
  sleep 1
  sp_addr=
  [ -n "${PPROF_DIR:-}" ] && sp_addr=127.0.0.1:$(freeport)
  GSALT_PPROF=$sp_addr setsid "$bin/gsalt-minion" -c "$d/etc/swarm" --swarm "$n" -l quiet >>"$tmp/gsalt.log" 2>&1 & sp=$!; pids+=($sp)
  wait_all "$bin/gsalt" -c "$d/etc/master"
  s0=$(proc_cpu "$sp")
  pp= cp_pid= cs_pid=
  if [ -n "${PROFILE_DIR:-}" ] && [ "$name" = gsalt ]; then
    mkdir -p "$PROFILE_DIR"
    perf record -F 499 -g -o "$PROFILE_DIR/reactor-master.perf" -p "$mp" 2>/dev/null & pp=$!
  fi
  if [ -n "$pp_addr" ]; then
    mkdir -p "$PPROF_DIR"
    local pf=reactor-master.pprof
    [ "$name" != gsalt ] && pf=reactor-master-${name#gsalt-}.pprof
    curl -s -o "$PPROF_DIR/$pf" "http://$pp_addr/debug/pprof/profile?seconds=${PPROF_SECONDS:-15}" & cp_pid=$!
    curl -s -o "$PPROF_DIR/${pf/master/swarm}" "http://$sp_addr/debug/pprof/profile?seconds=${PPROF_SECONDS:-15}" & cs_pid=$!
  fi
  local w0 c0
  w0=$(metric jobcache_writes_total); c0=$(metric jobcache_commits_total)
  g=$(run "gsalt-master reactor ($name), $n swarm identities" "$d" "$events" "$mp")
  echo "$name: job cache $(( $(metric jobcache_writes_total) - w0 )) writes in $(( $(metric jobcache_commits_total) - c0 )) commits"
  # Request connections closed during the run (each one connected and
  # handshook for few requests) linger in TIME_WAIT for a minute.
  echo "$name: request connections closed (TIME_WAIT on the ret port): $(ss -tan state time-wait "( sport = :$ret or dport = :$ret )" | tail -n +2 | wc -l)"
  s1=$(proc_cpu "$sp")
  [ -n "${pp:-}" ] && kill -INT "$pp" && wait "$pp" 2>/dev/null || true
  [ -n "${cp_pid:-}" ] && wait "$cp_pid" 2>/dev/null || true
  [ -n "${cs_pid:-}" ] && wait "$cs_pid" 2>/dev/null || true
  local gr gc gd sc
  gr=$(field "$g" returned); gc=$(field "$g" master_cpu); gd=$(field "$g" driver_cpu)
  sc=$(echo "$s1 - $s0" | bc)
  echo "$name: master CPU per reactor job $(echo "scale=3; 1000 * $gc / ($gr + 0.0001)" | bc) ms, swarm CPU $sc s ($(echo "scale=3; 1000 * $sc / ($gr + 0.0001)" | bc) ms per job), master RSS $(proc_rss_mib "$mp") MiB"
  # Master, swarm and driver share this machine's cores: with all of them
  # busy the run could do at most cores / (their CPU per job) jobs/s.
  echo "$name: all three processes $(echo "scale=3; 1000 * ($gc + $sc + $gd) / ($gr + 0.0001)" | bc) ms CPU per job; $(nproc) cores allow at most $(echo "$(nproc) * $gr / ($gc + $sc + $gd + 0.0001)" | bc) jobs/s"
  # For the signed row's footnote: master and all-process CPU per job.
  mjob[$name]=$(echo "scale=3; 1000 * $gc / ($gr + 0.0001)" | bc | sed 's/^\./0./')
  alljob[$name]=$(echo "scale=3; 1000 * ($gc + $sc + $gd) / ($gr + 0.0001)" | bc | sed 's/^\./0./')
  stop_groups "$sp" "$mp"
}

# Salt 3006's master signs every publish (sign_pub_messages: True, its
# default): one RSA-2048 signature per job. The second run turns it off,
# as a Salt user can, to show what the signature costs.
declare -A mjob alljob
gj=-
if [ -z "${NO_SIGNED:-}" ]; then
  gsalt_run gsalt ""
  gj=$(field "$g" jobs_per_s)
fi
gu=-
if [ -z "${NO_UNSIGNED:-}" ]; then
  gsalt_run gsalt-unsigned "sign_pub_messages: False"
  gu=$(field "$g" jobs_per_s)
fi

# salt_run NAME MASTER_EXTRA: the same load through a real salt-master;
# sets $s (the result line).
salt_run() {
  local name=$1 extra=$2
  d=$tmp/$name; setup "$d"
  printf '%s\n' "$extra" >>"$d/etc/master/master"
  setsid $py "$GSALT_SALT_SRC/scripts/salt-master" -c "$d/etc/master" -l error </dev/null >>"$tmp/salt.log" 2>&1 & mp=$!; pids+=($mp)
  sleep 5
  setsid "$bin/gsalt-minion" -c "$d/etc/swarm" --swarm "$n" -l quiet >>"$tmp/salt.log" 2>&1 & sp=$!; pids+=($sp)
  wait_all $py "$GSALT_SALT_SRC/scripts/salt" -c "$d/etc/master"
  # shellcheck disable=SC2046
  s=$(run "salt-master reactor ($name), $n swarm identities" "$d" "$salt_events" $(pgrep -g "$mp"))
  local sr sc
  sr=$(field "$s" returned); sc=$(field "$s" master_cpu)
  echo "$name: master CPU per reactor job $(echo "scale=3; 1000 * $sc / ($sr + 0.0001)" | bc) ms"
  stop_groups "$sp" "$mp"
}

sj=- su=-
if [ -n "${GSALT_SALT_SRC:-}" ] && [ -z "${NO_SALT:-}" ]; then
  shim=${GSALT_PYSHIM:-}
  for c in ../shared/peer/pyshim ../../shared/peer/pyshim; do [ -z "$shim" ] && [ -d "$c" ] && shim=$(cd "$c" && pwd); done
  if [ -z "$shim" ]; then shim=$tmp/pyshim; mkdir -p "$shim/looseversion"; echo 'from setuptools._distutils.version import LooseVersion  # noqa: F401' >"$shim/looseversion/__init__.py"; fi
  export PYTHONPATH=$GSALT_SALT_SRC:$shim
  salt_run salt ""
  sj=$(field "$s" jobs_per_s)
  if [ -z "${NO_UNSIGNED:-}" ]; then
    salt_run salt-unsigned "sign_pub_messages: False"
    su=$(field "$s" jobs_per_s)
  fi
else
  echo "bench-reactor: GSALT_SALT_SRC not set, skipping the same reactor load against a real Salt master"
fi
bench_note "Reactor rows: $events events (Salt: $salt_events) fired on the master's event bus, each mapped by the reactor to local.test.ping on one of $n swarm identities; jobs/s = jobs whose return reached the bus / seconds from the first event to the last return (scripts/bench-events.py, at most $window jobs in flight)."
# The signed row's floor: each publish carries one RSA-2048 signature
# (sign_pub_messages: True, Salt 3006's default), made with the libcrypto
# gsalt's wire/crypt calls. `openssl speed` measures that library's CPU
# (user) time per signature here; the cores can sign at most
# cores / that many publishes a second, whatever else the master does.
sig_ms=
if command -v openssl >/dev/null; then
  sig_ms=$(openssl speed -seconds 2 rsa2048 2>/dev/null | awk '$1 == "rsa" && $2 == "2048" {printf "%.3f", $4 * 1000}')
fi
signed_m="reactor: local jobs/s through the master ($n swarm ids)"
if [ -n "$sig_ms" ] && [ "$(echo "$sig_ms > 0" | bc)" = 1 ]; then
  cores=$(nproc)
  floor=$(echo "$cores * 1000 / $sig_ms" | bc)
  signed_m="$signed_m, each publish RSA-signed: <= $floor/s on $cores cores"
  reach=.
  [ "$floor" -lt 5000 ] && reach=": the goal of 5000/s is out of reach signed on this machine (the sign_pub_messages: False row measures it)."
  inrun=
  if [ -n "${mjob[gsalt]:-}" ] && [ "$(echo "${alljob[gsalt]:-0} > 0" | bc)" = 1 ] && [ -n "${mjob[gsalt-unsigned]:-}" ]; then
    inrun=" In this run gsalt's master spent ${mjob[gsalt]} ms of CPU per signed job and ${mjob[gsalt-unsigned]} ms per unsigned one (the difference, $(echo "${mjob[gsalt]} - ${mjob[gsalt-unsigned]}" | bc | sed 's/^\./0./; s/^-\./-0./') ms, is the signature with its call overhead); master, swarm and event driver together ${alljob[gsalt]} ms per signed job, so $cores cores allow at most $(echo "$cores * 1000 / ${alljob[gsalt]}" | bc)/s."
  fi
  bench_note "Reactor, signed row: with sign_pub_messages: True (Salt 3006's default) the master signs every publish with its RSA-2048 key. One signature costs $sig_ms ms of CPU here (openssl speed rsa2048, user CPU time, the libcrypto gsalt calls; load $(cut -d' ' -f1 /proc/loadavg)), so $cores cores sign at most $floor publishes/s with nothing else to do$reach$inrun"
fi
bench_row "$signed_m" "$gj" "$sj" ">= 5000"
bench_row "reactor: same, sign_pub_messages: False" "$gu" "$su" ">= 5000"

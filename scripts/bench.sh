#!/usr/bin/env bash
# bench.sh: `make bench`. Every bench script, then the Go benchmarks, then
# one table of issue 17's rows (scripts/bench-table.sh: gsalt, Salt 3006,
# ratio, goal). A step that fails is reported as a FAILED row and the
# other steps still run; the exit status is 1 when any failed.
# Sizes: SWARM (default 1000) for bench-swarm.sh; SWARM >= 10000 also
# runs bench-swarm.sh at 1000 (step swarm1k) and gives the proxy benches
# 10,000 devices (PROXIES, NAPALM) unless they are
# set, so `SWARM=10000 make bench` measures the 10k rows. STATES,
# REACTOR_EVENTS, CP_MIB, FLEET, API_SWARM, NAPALM_EOS size the others. BENCH_ONLY
# ("reactor cp", names as in the list below) runs only those steps
# (BENCH_KEEP_ROWS=1 keeps the table's earlier rows);
# BENCH_SKIP ("fleet virt") leaves those steps out. NO_GO_BENCH=1 skips
# the Go benchmarks (the step "go"; GO_BENCH, GO_BENCHTIME and
# GO_BENCH_PKGS narrow them: -bench, -benchtime and the packages). With GSALT_SALT_SRC set, the
# scripts that can also run real Salt 3006 fill the Salt column.
# BENCH_LOCK=FILE runs each step under `flock FILE` (a machine shared with
# other heavy runs: one step at a time holds it, not the whole bench).
# Each step's wall and CPU seconds (its whole process tree) are printed
# after it, and once more, all of them, before the table.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
mkdir -p "$(dirname "$BENCH_ROWS")"
# BENCH_KEEP_ROWS=1 keeps the rows of an earlier run (a step run again
# alone with BENCH_ONLY replaces that step's rows) instead of starting a
# new table.
[ -n "${BENCH_KEEP_ROWS:-}" ] || : >"$BENCH_ROWS"
[ -n "${BENCH_KEEP_ROWS:-}" ] || rm -f "$BENCH_ROWS.notes"

swarm=${SWARM:-1000}
big=1000
[ "$swarm" -ge 10000 ] && big=$swarm

# What the scripts need beyond Go: one line naming the missing Debian
# packages (the same are in .ci/run's apt list). /usr/bin/time gives the
# CLI's own CPU per ping (swarm), ss the connection counts (swarm, reactor),
# openssl the signature cost under the signed reactor row; with
# GSALT_SALT_SRC, Salt 3006 from source runs on Debian's python3 with the
# modules below (cherrypy: salt-api in the api step).
missing=()
for c in bc:bc curl:curl pgrep:procps setsid:util-linux flock:util-linux awk:gawk ss:iproute2 /usr/bin/time:time openssl:openssl; do
  command -v "${c%%:*}" >/dev/null || missing+=("${c#*:}")
done
pymods=(msgpack:python3-msgpack)
[ -n "${GSALT_SALT_SRC:-}" ] && pymods+=(zmq:python3-zmq yaml:python3-yaml jinja2:python3-jinja2 markupsafe:python3-markupsafe
  Cryptodome:python3-pycryptodome psutil:python3-psutil distro:python3-distro requests:python3-requests
  packaging:python3-packaging setuptools:python3-setuptools cherrypy:python3-cherrypy3)
for m in "${pymods[@]}"; do /usr/bin/python3 -c "import ${m%%:*}" 2>/dev/null || missing+=("${m#*:}"); done
if [ ${#missing[@]} -gt 0 ]; then
  read -r -a missing < <(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
  echo "bench: missing: apt-get install ${missing[*]} (the steps needing them will fail or leave cells empty)" >&2
fi

failed=0
steps_done=()
waited=0
# children_cpu: sets $cpu to the user+system CPU seconds of the processes
# this shell waited for (every step's process tree, once it has exited;
# `times` runs in this shell: in a pipe or $(...) it would see a subshell).
timesf=$(mktemp /tmp/gsalt-bench-times.XXXXXX)
trap 'rm -f "$timesf" "$timesf.lock"' EXIT
children_cpu() { times >"$timesf"; cpu=$(awk 'NR==2 {split($1,u,/[ms]/); split($2,s,/[ms]/); printf "%.2f", u[1]*60+u[2]+s[1]*60+s[2]}' "$timesf"); }
# Every process a step starts inherits GSALT_BENCH_RUN; what still runs
# with it after the step ended was left behind (a daemon the script's
# cleanup missed): leftovers names those processes and stops them, and the
# step's summary line counts them.
export GSALT_BENCH_RUN=$$.$RANDOM
leftovers() {
  local f p pids=()
  for f in $(grep -lsxz "GSALT_BENCH_RUN=$GSALT_BENCH_RUN" /proc/[0-9]*/environ); do
    p=${f#/proc/}; p=${p%/environ}
    [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || ! kill -0 "$p" 2>/dev/null || pids+=("$p")
  done
  left=${#pids[@]}
  [ "$left" = 0 ] && return 0
  echo "=== bench: $1 left $left process(es) running; stopping them:"
  ps -o pid=,args= -p "$(IFS=,; echo "${pids[*]}")" | cut -c1-200
  kill "${pids[@]}" 2>/dev/null; sleep 2; kill -KILL "${pids[@]}" 2>/dev/null
  return 0
}
# finish: the closing lines and the table.
finish() {
  echo "=== bench: done in $SECONDS s, $((SECONDS - waited)) s of it not waiting for BENCH_LOCK (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  [ ${#steps_done[@]} -gt 0 ] && printf '=== bench: %s\n' "${steps_done[@]}"
  ./scripts/bench-table.sh
}
# An interrupted run (Ctrl-C, or SIGTERM to its process group) stops what
# the step left running and still prints the steps done and their table.
trap 'trap - INT TERM; echo "=== bench: interrupted during step ${BENCH_STEP:-(none)}"; leftovers "${BENCH_STEP:-the interrupted step}"; finish; exit 130' INT TERM
# step NAME CMD...: runs one bench step; a failure becomes a table row.
step() {
  local name=$1; shift
  if [ -n "${BENCH_ONLY:-}" ] && [[ " $BENCH_ONLY " != *" $name "* ]]; then return 0; fi
  if [[ " ${BENCH_SKIP:-} " == *" $name "* ]]; then return 0; fi
  echo "=== bench: $name: $* (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  # With BENCH_KEEP_ROWS this step's rows of the earlier run are replaced.
  bench_forget "$name"
  export BENCH_STEP=$name
  local t0 tl te rc=0 c0 c1
  children_cpu; c0=$cpu
  t0=$(date +%s); echo "$t0" >"$timesf.lock"
  # The step's wall time starts once it holds the lock (the wait is shown apart).
  if [ -n "${BENCH_LOCK:-}" ]; then
    flock "$BENCH_LOCK" bash -c 'date +%s >"$0"; exec "$@"' "$timesf.lock" "$@" || rc=$?
  else "$@" || rc=$?; fi
  children_cpu; c1=$cpu
  tl=$(cat "$timesf.lock"); te=$(date +%s); waited=$((waited + tl - t0))
  leftovers "$name"
  steps_done+=("$(printf '%-8s %6d s wall %8.1f CPU-s (exit %d, %d process(es) left behind, %d s waiting for the lock)' "$name" $((te - tl)) "$(echo "$c1 - $c0" | bc)" "$rc" "$left" $((tl - t0)))")
  echo "=== bench: $name: ${steps_done[-1]#"$name"}"
  if [ "$rc" != 0 ]; then
    failed=1
    bench_row "$name: step FAILED (exit $rc after $((te - tl)) s; its output is above)" "FAILED" "n/a (step failed)" "-"
  fi
}

# Issue 17 has 1,000-identity rows (ping, RSS) as well as 10,000 ones:
# SWARM >= 10000 runs the swarm step at 1000 too (step swarm1k), so one
# run prints every row.
[ "$swarm" -ge 10000 ] && step swarm1k ./scripts/bench-swarm.sh 1000
step swarm ./scripts/bench-swarm.sh "$swarm"
step states ./scripts/bench-states.sh "${STATES:-500}"
step proxy ./scripts/bench-proxy.sh "${PROXIES:-$big}"
step napalm ./scripts/bench-proxy-napalm.sh "${NAPALM:-$big}"
# Issue 17 has a per-device row for each platform: Arista EOS as well.
step napalm-eos env PLATFORM=eos ./scripts/bench-proxy-napalm.sh "${NAPALM_EOS:-1000}"
step reactor ./scripts/bench-reactor.sh "${REACTOR_EVENTS:-20000}"
step cp ./scripts/bench-cp.sh "${CP_MIB:-1024}"
# precompile STEP PKG...: with BENCH_LOCK, compiles the test binaries a
# `go test` step runs before the step takes the lock (-exec true runs
# none of them), so the locked time is the measurement, not the compiler.
precompile() {
  local name=$1; shift
  [ -n "${BENCH_LOCK:-}" ] || return 0
  if [ -n "${BENCH_ONLY:-}" ] && [[ " $BENCH_ONLY " != *" $name "* ]]; then return 0; fi
  [[ " ${BENCH_SKIP:-} " == *" $name "* ]] && return 0
  ${GO:-go} test -tags "${TAGS:-libvirt_dlopen}" -exec true -run '^$' "$@" >/dev/null 2>&1 || true
}
precompile fleet ./cmd/gsalt-proxy
step fleet ./scripts/bench-fleet.sh "${FLEET:-3000}"
precompile virt ./virt/
step virt ./scripts/bench-virt.sh
step api ./scripts/bench-api.sh "${API_SWARM:-1000}"
# The Go benchmarks last: they print their own lines, no table rows.
if [ -z "${NO_GO_BENCH:-}" ]; then
  # The test binaries are compiled first, outside the lock (-exec true runs
  # none of them): the step then holds the lock while benchmarking only.
  # shellcheck disable=SC2086
  precompile go -bench "${GO_BENCH:-.}" ${GO_BENCH_PKGS:-./...}
  # shellcheck disable=SC2086
  step go ${GO:-go} test -tags "${TAGS:-libvirt_dlopen}" -run '^$' -bench "${GO_BENCH:-.}" -benchtime "${GO_BENCHTIME:-1s}" -benchmem -timeout 60m ${GO_BENCH_PKGS:-./...}
fi
finish
exit $failed

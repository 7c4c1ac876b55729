#!/usr/bin/env bash
# bench.sh: `make bench`. The Go benchmarks, then every bench script, then
# one table of issue 17's rows (scripts/bench-table.sh: gsalt, Salt 3006,
# ratio, goal). A step that fails is reported as a FAILED row and the
# other steps still run; the exit status is 1 when any failed.
# Sizes: SWARM (default 1000) for bench-swarm.sh; SWARM >= 10000 also
# gives the proxy benches 10,000 devices (PROXIES, NAPALM) unless they are
# set, so `SWARM=10000 make bench` measures the 10k rows. STATES,
# REACTOR_EVENTS, CP_MIB, FLEET, API_SWARM size the others. BENCH_ONLY
# ("reactor cp", names as in the list below) runs only those steps;
# NO_GO_BENCH=1 skips the Go benchmarks. With GSALT_SALT_SRC set, the
# scripts that can also run real Salt 3006 fill the Salt column.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
mkdir -p "$(dirname "$BENCH_ROWS")"; : >"$BENCH_ROWS"

swarm=${SWARM:-1000}
big=1000
[ "$swarm" -ge 10000 ] && big=$swarm

# What the scripts need beyond Go: one line saying what is missing.
missing=()
for c in bc curl pgrep setsid awk; do command -v "$c" >/dev/null || missing+=("$c"); done
/usr/bin/python3 -c 'import msgpack' 2>/dev/null || missing+=(python3-msgpack)
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench: missing ${missing[*]} (Debian: apt-get install bc curl procps util-linux python3-msgpack); the steps needing them will fail" >&2
fi

failed=0
# step NAME CMD...: runs one bench step; a failure becomes a table row.
step() {
  local name=$1; shift
  if [ -n "${BENCH_ONLY:-}" ] && [[ " $BENCH_ONLY " != *" $name "* ]]; then return 0; fi
  echo "=== bench: $name: $* (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  local t0=$SECONDS rc=0
  "$@" || rc=$?
  if [ "$rc" != 0 ]; then
    failed=1
    bench_row "$name: FAILED (exit $rc, $((SECONDS - t0)) s; see its output above)" "-" "-" "-"
  fi
}

if [ -z "${NO_GO_BENCH:-}" ]; then
  step go ${GO:-go} test -tags "${TAGS:-libvirt_dlopen}" -run '^$' -bench . -benchmem -timeout 60m ./...
fi
step swarm ./scripts/bench-swarm.sh "$swarm"
step states ./scripts/bench-states.sh "${STATES:-500}"
step proxy ./scripts/bench-proxy.sh "${PROXIES:-$big}"
step napalm ./scripts/bench-proxy-napalm.sh "${NAPALM:-$big}"
step reactor ./scripts/bench-reactor.sh "${REACTOR_EVENTS:-20000}"
step cp ./scripts/bench-cp.sh "${CP_MIB:-1024}"
step fleet ./scripts/bench-fleet.sh "${FLEET:-3000}"
step virt ./scripts/bench-virt.sh
step api ./scripts/bench-api.sh "${API_SWARM:-1000}"
echo "=== bench: done (load average $(cut -d' ' -f1-3 /proc/loadavg))"
./scripts/bench-table.sh
exit $failed

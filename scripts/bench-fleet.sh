#!/usr/bin/env bash
# bench-fleet.sh [N]: issue 18's sharded fleet at full size: TestShardedFleet
# (cmd/gsalt-proxy) with N simulated IOS-XE devices (default 3000) served by
# three gsalt-proxy shards against one gsalt-master, a shard restarted,
# then 3 -> 4 shards; every device must answer test.ping exactly once after
# each step (GSALT_FLEET_DEADLINE, a Go duration, overrides the wait of
# 60 s + N/5 s for each step on a loaded machine). `make test` runs the
# same test with 40 devices. Prints the shards' RSS (one shard serves
# about N/3 devices) as bench rows.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
n=${1:-3000}
log=$(mktemp /tmp/gsalt-fleet.XXXXXX)
trap 'rm -f "$log"' EXIT
# The devices' key pairs come from the proxy benches' key cache (ids
# sw1..swN, the same); those it lacks are generated.
GSALT_FLEET_KEYS=$(proxy_keycache) GSALT_FLEET_DEVICES=$n go test -tags "${TAGS:-libvirt_dlopen}" -count=1 -timeout 90m -run '^TestShardedFleet$' -v ./cmd/gsalt-proxy | tee "$log" | grep -E 'shard [0-9]/3:|RSS|moved|^(--- |ok|FAIL)' || true
if ! grep -q '^--- PASS: TestShardedFleet' "$log"; then
  echo "bench-fleet: TestShardedFleet failed; the test's own lines:" >&2
  grep -E '_test.go:[0-9]+:' "$log" | cut -c1-300 | tail -40 >&2
  exit 1
fi
kib=$(sed -nE 's/.*shard 0\/3: ([0-9]+) devices, RSS ([0-9]+) MiB \(([0-9]+) KiB a device\).*/\1 \2 \3/p' "$log" | head -1)
read -r devs mib per <<<"$kib"
bench_row "gsalt-proxy shard RSS, $devs napalm devices (of $n in 3 shards)" "$mib MiB ($per KiB a device)" "n/a (Salt: $devs salt-proxy processes; per process see the dummy devices row)" "-"

#!/usr/bin/env bash
# bench-fleet.sh [N]: issue 18's sharded fleet at full size: TestShardedFleet
# (cmd/gsalt-proxy) with N simulated IOS-XE devices (default 3000) served by
# three gsalt-proxy shards against one gsalt-master, a shard restarted,
# then 3 -> 4 shards; every device must answer test.ping exactly once after
# each step. `make test` runs the same test with 40 devices. Prints the
# shards' RSS (one shard serves about N/3 devices) as bench rows.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
n=${1:-3000}
log=$(mktemp /tmp/gsalt-fleet.XXXXXX)
trap 'rm -f "$log"' EXIT
GSALT_FLEET_DEVICES=$n go test -count=1 -timeout 90m -run '^TestShardedFleet$' -v ./cmd/gsalt-proxy | tee "$log" | grep -E 'shard [0-9]/3:|RSS|moved|^(--- |ok|FAIL)'
grep -q '^--- PASS: TestShardedFleet' "$log" || exit 1
kib=$(sed -nE 's/.*shard 0\/3: ([0-9]+) devices, RSS ([0-9]+) MiB \(([0-9]+) KiB a device\).*/\1 \2 \3/p' "$log" | head -1)
read -r devs mib per <<<"$kib"
bench_row "gsalt-proxy shard RSS, $devs napalm devices (of $n in 3 shards)" "$mib MiB ($per KiB a device)" "$((devs * 110)) MB ($devs salt-proxy processes at ~110 MB)" "-"

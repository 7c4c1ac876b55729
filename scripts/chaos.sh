#!/usr/bin/env bash
# chaos.sh: the production fault loads of issue 13 against real gsalt
# processes, with counts (returns kept, recovery time, peak RSS). Long:
# not part of `make test`. STORM_MINIONS (500) and STORM_RUNS (20) size the
# restart storm (SIGKILL of the master mid-burst, then one SIGSTOP/SIGCONT).
set -euo pipefail
cd "$(dirname "$0")/.."
export GSALT_CHAOS=1
export GSALT_STORM_MINIONS=${STORM_MINIONS:-500}
export GSALT_STORM_RUNS=${STORM_RUNS:-20}
out=$(mktemp /tmp/gsalt-chaos.XXXXXX)
trap 'rm -f "$out"' EXIT
status=0
run() { go test -count=1 -timeout 120m -v "$@" 2>&1 | tee -a "$out" | grep -E '^(=== RUN|--- |ok|FAIL|PASS)|CHAOS' || true; }
run -run 'TestProdRestartStorm|TestChaosMemory|TestProdDamagedJobCache|TestProdSecondMaster|TestProdRunnerReturnEventMissed|TestProdSignedReturnWins|TestProdMalformedKeysUnderAutoAccept' ./masterd
run -run 'TestReplayDroppedAcrossRestart|TestReturnResentAfterRepeatedBadLoad' ./minion
echo "== chaos summary"
grep -E 'CHAOS' "$out" | sed 's/^ *//' || true
kept=$(grep -c 'CHAOS restart-storm kill' "$out" || true)
echo "restart-storm kill runs reported: $kept (of ${GSALT_STORM_RUNS})"
if grep -qE '^(--- FAIL|FAIL)' "$out"; then status=1; echo "chaos: FAILURES above"; fi
exit $status

#!/usr/bin/env bash
# testtimes.sh: where `go test -race` spends its time, one package at a
# time (so the numbers are the package's own, not its share of -p N).
#
#   scripts/testtimes.sh [-n] [-t SECONDS] [PKG...]
#
# PKG defaults to ./... . For each package it prints the package's elapsed
# seconds, then every test (and subtest) that took at least SECONDS
# (default 3), slowest first; at the end the packages sorted by time and
# the load average before and after. -n drops -race. The raw `go test
# -json` output is kept in $OUT (default bin/testtimes/).
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
TAGS=${TAGS:-libvirt_dlopen}
MIN=3
RACE=-race
while getopts "nt:" o; do
  case $o in
    n) RACE= ;;
    t) MIN=$OPTARG ;;
    *) echo "usage: $0 [-n] [-t SECONDS] [PKG...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] && set -- ./...
OUT=${OUT:-bin/testtimes}
mkdir -p "$OUT"
pkgs=$($GO list -tags "$TAGS" "$@") || exit 1
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
summary=$OUT/summary.tsv
: >"$summary"
for p in $pkgs; do
  f=$OUT/$(echo "$p" | tr '/' '_').json
  start=$(date +%s.%N)
  $GO test -tags "$TAGS" $RACE -count=1 -json "$p" >"$f" 2>&1
  rc=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  python3 - "$f" "$MIN" "$p" "$wall" "$rc" "$summary" <<'PY'
import json, sys
f, mn, pkg, wall, rc, summary = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5], sys.argv[6]
tests, pkgtime, status = {}, None, "?"
for line in open(f, errors="replace"):
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    a = ev.get("Action")
    if a in ("pass", "fail", "skip") and "Elapsed" in ev:
        if ev.get("Test"):
            tests[ev["Test"]] = (ev["Elapsed"], a)
        else:
            pkgtime, status = ev["Elapsed"], a
print("%-55s %7s s test, %6.1f s wall (build incl.), %s%s" % (
    pkg, "%.1f" % pkgtime if pkgtime is not None else "-", wall, status,
    "" if rc == "0" else " rc=" + rc))
for name, (el, a) in sorted(tests.items(), key=lambda kv: -kv[1][0]):
    if el >= mn:
        print("    %7.1f s  %s%s" % (el, name, "" if a == "pass" else " (" + a + ")"))
with open(summary, "a") as s:
    s.write("%s\t%s\t%.1f\t%s\n" % (pkg, pkgtime if pkgtime is not None else "-", wall, status))
PY
done
echo "== packages by test time"
sort -t$'\t' -k2 -g -r "$summary" | awk -F'\t' '{printf "%8s s  %7s s wall  %s %s\n", $2, $3, $1, $4}'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

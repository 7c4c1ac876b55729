#!/bin/bash
# Prints the rows the bench scripts appended to $BENCH_ROWS (see
# bench-lib.sh) as one table: measure, gsalt, Salt 3006, ratio, goal.
# The ratio compares the leading numbers of the gsalt and Salt cells
# (none where a side's cell says "k/N answered" or ">LIMIT": it fell short) and
# says which side is better: higher is better where the goal starts with
# ">" (jobs/s, MB/s, req/s), lower everywhere else (seconds, CPU, RSS).
# "goal met" checks each comma-separated part of the goal: "OP NUMBER
# [UNIT]" against the gsalt cell's numbers in order (a cell without a unit
# has the measure's trailing ", UNIT"; MB/GB against MiB/GiB are
# converted), "OP Nx Salt" against the ratio, "OP Salt" against the Salt
# cell. A cell that fell short (k/N answered, >LIMIT, (k/N ...) with k < N)
# does not meet its goal; "-" where the gsalt cell has no number.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${BENCH_ROWS:-$PWD/bin/bench-rows.tsv}
[ -s "$rows" ] || { echo "bench-table: no rows in $rows"; exit 0; }
# Issue 17's rows: each one a run did not measure (a step skipped or
# failed, or measured only at the other SWARM size) still gets a line, so
# the table always shows the whole goal list. Fields: an extended regular
# expression matched against the measures of the rows printed, the
# measure shown when none matches, why it is missing, the goal.
expected() {
  cat <<'ROWS'
^master CPU per return	master CPU per return (test.ping, swarm), ms	swarm step not run or failed	<= 0.1 ms
^swarm CPU per identity per job	swarm CPU per identity per job, ms	swarm step not run or failed	<= 0.1 ms
^gsalt '\*' test\.ping, 1000 swarm, whole CLI	gsalt '*' test.ping, 1000 swarm, whole CLI, s	SWARM=1000, the default, measures it	< 0.4 s, >= 10x Salt
^gsalt '\*' test\.ping, 10000 swarm, whole CLI	gsalt '*' test.ping, 10000 swarm, whole CLI, s	SWARM=10000 make bench measures it	< 3 s
^auth storm	auth storm: swarm re-authenticates after master restart, s	swarm step not run or failed	< 30 s
^master RSS.* 1000 connected	master RSS, 1000 connected, after the auth storm, MiB	SWARM=1000, the default, measures it	<= 120 MB
^master RSS.* 10000 connected	master RSS, 10000 connected, after the auth storm, MiB	SWARM=10000 make bench measures it	<= 600 MB
open SSH session \([0-9]+ eos devices\)	gsalt-proxy RSS per device with an open SSH session (eos devices)	napalm-eos step not run or failed	<= 0.4 MB
open SSH session \([0-9]+ ios devices\)	gsalt-proxy RSS per device with an open SSH session (ios devices)	napalm step not run or failed	<= 0.4 MB
^[0-9]+ (ios|eos) devices in one gsalt-proxy	10000 devices in one gsalt-proxy: RSS, net.load_config test=True fan-out	SWARM=10000 make bench measures it: the napalm step at 10,000 devices	< 4 GB, < 60 s
^reactor: local jobs	reactor: local jobs/s through the master	reactor step not run or failed	>= 5000
second run	state.apply file.managed, second run (s, whole CLI)	states step not run or failed	<= 0.15
^cp\.cache_file	cp.cache_file 1024 MiB master to minion, MB/s	cp step not run or failed	>= 300, >= 3x Salt
ROWS
}
all=$(mktemp /tmp/gsalt-bench-table.XXXXXX)
trap 'rm -f "$all"' EXIT
cp "$rows" "$all"
while IFS=$'\t' read -r re measure why goal; do
  cut -f1 "$rows" | grep -qE -- "$re" || printf '%s\t%s\t%s\t%s\n' "$measure" "not measured ($why)" "not run" "$goal" >>"$all"
done < <(expected)
awk -F'\t' '
function num(x) { return (x ~ /^[0-9]*\.?[0-9]+/) ? x + 0 : 0 }
{ m[NR] = $1; g[NR] = $2; s[NR] = $3; goal[NR] = $4; r = "-"
  a = num($2); b = num($3)
  # A side that fell short ("k/N answered" in its cell) has no ratio: its
  # leading number is a time-out, not the time all N took.
  if ($2 ~ /[0-9]+\/[0-9]+ answered/ || $3 ~ /[0-9]+\/[0-9]+ answered/ || $2 ~ /^>/ || $3 ~ /^>/) r = "none (fell short)"
  else if (a > 0 && b > 0) {
    f = ($4 ~ /^ *>/) ? a / b : b / a
    r = (f >= 1) ? fmt(f) " better" : fmt(1 / f) " worse"
  }
  ratio[NR] = r
  met[NR] = goalmet($1, $2, $3, $4, a, b)
  w[1] = max(w[1], length($1)); w[2] = max(w[2], length($2)); w[3] = max(w[3], length($3))
  w[4] = max(w[4], length(r)); w[5] = max(w[5], length($4)); w[6] = max(w[6], length(met[NR])) }
function unitf(u) { return u == "GB" ? 1e9 : u == "MB" ? 1e6 : u == "GiB" ? 1073741824 : u == "MiB" ? 1048576 : u == "KiB" ? 1024 : u == "ms" ? 0.001 : 1 }
# nums CELL DEFUNIT: the numbers of the cell before its first "(" into
# cv[1..n] with their units (or DEFUNIT) in cu[]; returns n.
function nums(x, du,   n, t) {
  sub(/\(.*/, "", x); n = 0
  while (match(x, /[0-9]*\.?[0-9]+( ?(GiB|MiB|KiB|GB|MB|ms|s)([^A-Za-z\/]|$))?/)) {
    t = substr(x, RSTART, RLENGTH); x = substr(x, RSTART + RLENGTH)
    n++; cv[n] = t + 0; cu[n] = du
    if (match(t, /(GiB|MiB|KiB|GB|MB|ms|s)/)) cu[n] = substr(t, RSTART, RLENGTH)
  }
  return n
}
function cmp(op, x, y) { return op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : x >= y }
function goalmet(mm, gc, sc, gl, a, b,   du, n, np, gp, i, k, p, op, v, u, res, unk, short, f, x, xa) {
  if (gl == "-" || gl == "") return "-"
  if (gc !~ /^[>0-9.]/) return "-"
  short = (gc ~ /[0-9]+\/[0-9]+ answered/ || gc ~ /^>/)
  if (match(gc, /\([0-9]+\/[0-9]+/)) { split(substr(gc, RSTART + 1, RLENGTH - 1), xa, "/"); if (xa[1] + 0 < xa[2] + 0) short = 1 }
  if (short) return "no (fell short)"
  du = ""; if (match(mm, /, (ms|s|MiB|MB)$/)) du = substr(mm, RSTART + 2)
  n = nums(gc, du); np = split(gl, gp, / *, */); k = 0; res = "yes"; unk = 0
  for (i = 1; i <= np; i++) {
    p = gp[i]; sub(/^ +/, "", p)
    if (!match(p, /^[<>]=?/)) continue
    op = substr(p, 1, RLENGTH); p = substr(p, RLENGTH + 1); sub(/^ +/, "", p)
    if (p ~ /^[0-9.]+x Salt$/) {
      if (!(a > 0 && b > 0) || sc ~ /answered|^>/) { unk = 1; continue }
      f = (gl ~ /^ *>/) ? a / b : b / a
      if (!cmp(op, f, p + 0)) res = "no"
    } else if (p == "Salt") {
      if (!(b > 0) || sc ~ /answered|^>/) { unk = 1; continue }
      if (!cmp(op, a, b)) res = "no"
    } else {
      k++; if (k > n) { unk = 1; continue }
      v = p + 0; u = p; sub(/^[0-9.]+ */, "", u)
      x = cv[k]
      if (u != "" && cu[k] != "" && unitf(u) != 1 && unitf(cu[k]) != 1) { x = cv[k] * unitf(cu[k]); v = v * unitf(u) }
      if (!cmp(op, x, v)) res = "no"
    }
  }
  if (res == "yes" && unk) res = "yes (Salt part: no number)"
  return res
}
function fmt(f) { return sprintf(f >= 10 ? "%.0fx" : "%.1fx", f) }
function max(x, y) { return x > y ? x : y }
function line(a, b, c, d, e, f) { printf "| %-*s | %-*s | %-*s | %-*s | %-*s | %-*s |\n", w[1], a, w[2], b, w[3], c, w[4], d, w[5], e, w[6], f }
function dash(n,   t) { t = ""; while (n-- > 0) t = t "-"; return t }
END {
  h[1] = "measure"; h[2] = "gsalt"; h[3] = "Salt 3006"; h[4] = "gsalt vs Salt"; h[5] = "goal"; h[6] = "goal met"
  for (i = 1; i <= 6; i++) w[i] = max(w[i], length(h[i]))
  line(h[1], h[2], h[3], h[4], h[5], h[6])
  printf "|%s|%s|%s|%s|%s|%s|\n", dash(w[1] + 2), dash(w[2] + 2), dash(w[3] + 2), dash(w[4] + 2), dash(w[5] + 2), dash(w[6] + 2)
  for (i = 1; i <= NR; i++) line(m[i], g[i], s[i], ratio[i], goal[i], met[i])
}' "$all"
echo
echo "goal met: every comma-separated part of the goal is checked against the gsalt cell's numbers in order (MB and GB are 10^6 and 10^9 bytes: a MiB cell is converted), 'Nx Salt' against the ratio, 'Salt' against the Salt cell; a cell that fell short does not meet its goal."
# Footnotes (bench_note): how a column was measured.
if [ -s "$rows.notes" ]; then
  i=0
  # STEP<tab>TEXT lines (bench_note); a line without a tab is all text.
  while IFS= read -r l; do i=$((i + 1)); echo "[$i] ${l#*$'\t'}"; done <"$rows.notes"
fi

#!/bin/bash
# Prints the rows the bench scripts appended to $BENCH_ROWS (see
# bench-lib.sh) as one table: measure, gsalt, Salt 3006, ratio, goal.
# The ratio compares the leading numbers of the gsalt and Salt cells and
# says which side is better: higher is better where the goal starts with
# ">" (jobs/s, MB/s, req/s), lower everywhere else (seconds, CPU, RSS).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${BENCH_ROWS:-$PWD/bin/bench-rows.tsv}
[ -s "$rows" ] || { echo "bench-table: no rows in $rows"; exit 0; }
awk -F'\t' '
function num(x) { return (x ~ /^[0-9]*\.?[0-9]+/) ? x + 0 : 0 }
{ m[NR] = $1; g[NR] = $2; s[NR] = $3; goal[NR] = $4; r = "-"
  a = num($2); b = num($3)
  if (a > 0 && b > 0) {
    f = ($4 ~ /^ *>/) ? a / b : b / a
    r = (f >= 1) ? fmt(f) " better" : fmt(1 / f) " worse"
  }
  ratio[NR] = r
  w[1] = max(w[1], length($1)); w[2] = max(w[2], length($2)); w[3] = max(w[3], length($3))
  w[4] = max(w[4], length(r)); w[5] = max(w[5], length($4)) }
function fmt(f) { return sprintf(f >= 10 ? "%.0fx" : "%.1fx", f) }
function max(x, y) { return x > y ? x : y }
function line(a, b, c, d, e) { printf "| %-*s | %-*s | %-*s | %-*s | %-*s |\n", w[1], a, w[2], b, w[3], c, w[4], d, w[5], e }
function dash(n,   t) { t = ""; while (n-- > 0) t = t "-"; return t }
END {
  h[1] = "measure"; h[2] = "gsalt"; h[3] = "Salt 3006"; h[4] = "gsalt vs Salt"; h[5] = "goal"
  for (i = 1; i <= 5; i++) w[i] = max(w[i], length(h[i]))
  line(h[1], h[2], h[3], h[4], h[5])
  printf "|%s|%s|%s|%s|%s|\n", dash(w[1] + 2), dash(w[2] + 2), dash(w[3] + 2), dash(w[4] + 2), dash(w[5] + 2)
  for (i = 1; i <= NR; i++) line(m[i], g[i], s[i], ratio[i], goal[i])
}' "$rows"

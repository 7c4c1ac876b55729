#!/bin/bash
# Prints the rows the bench scripts appended to $BENCH_ROWS (see
# bench-lib.sh) as one table: measure, gsalt, Salt 3006, ratio, goal.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${BENCH_ROWS:-$PWD/bin/bench-rows.tsv}
[ -s "$rows" ] || { echo "bench-table: no rows in $rows"; exit 0; }
awk -F'\t' 'BEGIN { printf "| %-58s | %-14s | %-14s | %-8s | %-20s |\n", "measure", "gsalt", "Salt 3006", "ratio", "goal"
                    printf "|%s|%s|%s|%s|%s|\n", "------------------------------------------------------------", "----------------", "----------------", "----------", "----------------------" }
{ g=$2+0; s=$3+0; r="-"; if ($3 != "-" && g > 0 && s > 0) r=sprintf("%.1fx", (s>g ? s/g : g/s));
  printf "| %-58s | %-14s | %-14s | %-8s | %-20s |\n", $1, $2, $3, r, $4 }' "$rows"

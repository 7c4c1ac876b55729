# shellcheck shell=bash
# Shared by the bench scripts: each measured row of issue 17's table is
# appended as one TSV line (measure, gsalt, salt, goal) to $BENCH_ROWS;
# scripts/bench-table.sh prints them as one table at the end of `make bench`.
# Numbers only ever go to this file and stdout, never into tests.
BENCH_ROWS=${BENCH_ROWS:-$PWD/bin/bench-rows.tsv}
export BENCH_ROWS

# bench_row MEASURE GSALT SALT GOAL: SALT is "-" where Salt cannot run it.
bench_row() {
  mkdir -p "$(dirname "$BENCH_ROWS")"
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "${3:--}" "${4:--}" >>"$BENCH_ROWS"
  printf 'bench row: %s: gsalt %s, salt %s (goal %s)\n' "$1" "$2" "${3:--}" "${4:--}"
}

# proc_cpu PID: user+system CPU seconds the process has used so far.
proc_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f", ($14+$15)/hz}' "/proc/$1/stat"
}

# proc_rss_mib PID: resident set size in MiB.
proc_rss_mib() {
  awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"
}

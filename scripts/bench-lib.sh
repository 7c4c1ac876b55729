# shellcheck shell=bash
# Shared by the bench scripts: each measured row of issue 17's table is
# appended as one TSV line (measure, gsalt, salt, goal) to $BENCH_ROWS;
# scripts/bench-table.sh prints them as one table at the end of `make bench`.
# Numbers only ever go to this file and stdout, never into tests. A fifth
# field names the step that wrote the row (BENCH_STEP, set by bench.sh):
# a step run again with BENCH_KEEP_ROWS=1 replaces its earlier rows and
# notes instead of adding a second copy.
BENCH_ROWS=${BENCH_ROWS:-$PWD/bin/bench-rows.tsv}
export BENCH_ROWS

# bench_row MEASURE GSALT SALT GOAL: SALT is "n/a (why)" where Salt cannot
# run the measure; "-" (or empty) where the script runs Salt but got no
# number: the row then says why (Salt not asked for, or its run failed).
# An empty GSALT value is a failed gsalt run.
bench_row() {
  local g=${2:-} s=${3:-}
  # bc prints 0.5 as .5
  [[ $g == .* ]] && g=0$g
  [[ $s == .* ]] && s=0$s
  [ -n "$g" ] && [ "$g" != - ] || g="FAILED (no number)"
  if [ -z "$s" ] || [ "$s" = - ]; then
    if [ -z "${GSALT_SALT_SRC:-}" ]; then s="not run (no GSALT_SALT_SRC)"
    elif [ -n "${NO_SALT:-}" ]; then s="not run (NO_SALT)"
    else s="FAILED (no number)"; fi
  fi
  mkdir -p "$(dirname "$BENCH_ROWS")"
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$g" "$s" "${4:--}" "${BENCH_STEP:-}" >>"$BENCH_ROWS"
  printf 'bench row: %s: gsalt %s, salt %s (goal %s)\n' "$1" "$g" "$s" "${4:--}"
}

# bench_note TEXT: a footnote printed under the table (how a column was
# measured, e.g. the settings Salt ran with); each distinct text once.
# Stored as STEP<tab>TEXT lines in $BENCH_ROWS.notes.
bench_note() {
  mkdir -p "$(dirname "$BENCH_ROWS")"
  cut -f2- "$BENCH_ROWS.notes" 2>/dev/null | grep -qxF -- "$1" || printf '%s\t%s\n' "${BENCH_STEP:-}" "$1" >>"$BENCH_ROWS.notes"
  printf 'bench note: %s\n' "$1"
}

# bench_forget STEP: removes the rows and notes STEP wrote to $BENCH_ROWS
# (bench.sh, before it runs STEP again on an earlier run's table).
bench_forget() {
  local f
  for f in "$BENCH_ROWS" "$BENCH_ROWS.notes"; do
    [ -s "$f" ] || continue
    if [ "$f" = "$BENCH_ROWS" ]; then awk -F'\t' -v s="$1" '$5 != s' "$f" >"$f.tmp"
    else awk -F'\t' -v s="$1" '$1 != s' "$f" >"$f.tmp"; fi
    mv "$f.tmp" "$f"
  done
}

# proc_cpu PID: user+system CPU seconds the process has used so far.
proc_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f", ($14+$15)/hz}' "/proc/$1/stat"
}

# proc_cpu_reaped PID: proc_cpu plus the CPU of the children the process
# has reaped (Salt's minion runs each job in a child process that exits).
proc_cpu_reaped() {
  awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f", ($14+$15+$16+$17)/hz}' "/proc/$1/stat"
}

# group_pss_mib PGID: proportional set size (smaps_rollup) summed over
# the processes of a process group, in MiB: the memory of a forking
# daemon (Salt's master and its workers share copy-on-write pages, which
# summing their RSS would count once per process).
group_pss_mib() {
  local t=0 p k
  for p in $(pgrep -g "$1"); do
    k=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null); t=$((t + ${k:-0}))
  done
  echo "scale=1; $t / 1024" | bc
}

# proc_rss_mib PID: resident set size in MiB.
proc_rss_mib() {
  awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"
}

# proxy_keycache: the scratch folder (outside the repo) where the proxy
# benches keep their devices' RSA key pairs (ids sw1, sw2, ...) between runs.
proxy_keycache() {
  echo "${GSALT_BENCH_PROXY_KEYS:-${XDG_CACHE_HOME:-$HOME/.cache}/gsalt-bench/proxy-keys}"
}

# proxy_keys_in PKI N: copies the cached key pairs of devices sw1..swN into
# PKI/<id>/; prints how many it found. proxy_keys_out PKI: saves the pairs
# gsalt-proxy generated for devices the cache did not have.
proxy_keys_in() {
  /usr/bin/python3 - "$(proxy_keycache)" "$1" "$2" <<'PY'
import os, shutil, sys
cache, pki, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
got = 0
for i in range(1, n + 1):
    src = os.path.join(cache, "sw%d" % i)
    if not os.path.isfile(os.path.join(src, "minion.pem")):
        continue
    dst = os.path.join(pki, "sw%d" % i)
    os.makedirs(dst, exist_ok=True)
    for f in ("minion.pem", "minion.pub"):
        shutil.copy2(os.path.join(src, f), dst)
    got += 1
print(got)
PY
}
proxy_keys_out() {
  /usr/bin/python3 - "$(proxy_keycache)" "$1" <<'PY'
import os, shutil, sys
cache, pki = sys.argv[1], sys.argv[2]
for ident in os.listdir(pki):
    src, dst = os.path.join(pki, ident), os.path.join(cache, ident)
    if os.path.isfile(os.path.join(dst, "minion.pem")) or not os.path.isfile(os.path.join(src, "minion.pem")):
        continue
    os.makedirs(dst, exist_ok=True)
    for f in ("minion.pem", "minion.pub"):
        shutil.copy2(os.path.join(src, f), dst)
PY
}

# raise_nofile N: raises this shell's open files limits (inherited by the
# daemons it starts) towards N; the hard limit only as far as allowed
# (a container may cap it, e.g. at 20000: then one process can hold
# about that many sockets).
raise_nofile() {
  local need=$1
  if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$need" ]; then
    ulimit -Hn "$need" 2>/dev/null || echo "open files: hard limit $(ulimit -Hn) < $need wanted (not root, or a container cap); large N may fail"
  fi
  if [ "$(ulimit -Sn)" != unlimited ] && [ "$(ulimit -Sn)" -lt "$need" ]; then
    ulimit -Sn "$(ulimit -Hn)"
  fi
}

# group_live PGID: the live (not zombie) processes of process group PGID.
group_live() {
  local q
  for q in $(pgrep -g "$1" 2>/dev/null); do
    [ "$(sed 's/.*) //' "/proc/$q/stat" 2>/dev/null | cut -d' ' -f1)" = Z ] || echo "$q"
  done
}

# stop_groups PID...: stops daemons this shell started, each the leader of
# its own process group (setsid) or a lone process: SIGTERM to each group
# (or process), then waits up to STOP_WAIT seconds (default 15) until no
# process of them is alive, SIGKILLs whatever is left and reaps them. A
# salt-master's workers get the SIGTERM with their parent; its process
# managers restart a worker that dies before they stop themselves, and
# that new worker (started after the signal) outlived the script when
# only the leader was waited for.
stop_groups() {
  local p i alive
  [ $# -gt 0 ] || return 0
  for p in "$@"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
  for i in $(seq $((${STOP_WAIT:-15} * 10))); do
    alive=
    for p in "$@"; do
      if [ -n "$(group_live "$p")" ]; then alive=1; fi
      if kill -0 "$p" 2>/dev/null && [ "$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]; then alive=1; fi
    done
    [ -z "$alive" ] && break
    sleep 0.1
  done
  if [ -n "$alive" ]; then
    echo "stop_groups: still running after ${STOP_WAIT:-15} s, killing: $(for p in "$@"; do group_live "$p"; done | tr '\n' ' ')" >&2
    for p in "$@"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done
  fi
  for p in "$@"; do wait "$p" 2>/dev/null || true; done
}

# freeport: a free loopback port for a daemon the bench starts (a random
# one in the ephemeral range was taken by another connection now and
# then, and the daemon exited).
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

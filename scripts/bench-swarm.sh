#!/usr/bin/env bash
# bench-swarm.sh [N]: one gsalt-master and gsalt-minion --swarm processes
# running N identities (sw-0000 ...; above 5000 two processes, the second
# sx-0000 ...) on 127.0.0.1. Measures, with the CPU seconds of each process
# read from /proc around the pings: the master's CPU per return, the
# swarm's CPU per identity per job, the whole `gsalt '*' test.ping` CLI
# (median of $PINGS runs), the master's RSS, and the auth storm (master
# restarted, time until all N have re-authenticated and answer a ping). When GSALT_SALT_SRC is set
# bench-swarm-salt.sh runs the same swarm against a real Salt 3006 master
# for the Salt column (at any N; BENCH_SALT_BIG=0 skips it above 5000
# identities, where Salt's run takes up to ~20 minutes and its cells say
# how many identities it answered in the time it was given). Rows go to
# bench-lib.sh's bench_row; numbers never go into tests.
#
# Key pairs are kept between runs in $(swarm_keycache) (outside the repo);
# the run says how long generating the missing ones took.
# The ping is `gsalt '*' test.ping --out json` as a user types it: one
# glob job, the CLI waits for every expected minion. BENCH_STATIC=1 adds
# `--static`, which Salt runs as a 100% batch (a presence ping, then the
# job sent to a *list* of every minion that answered: two jobs, 2N
# returns, and a target as long as the swarm).
# BENCH_MASTER_EXTRA is appended to the master's config (e.g.
# "gomemlimit: 100MiB"); BENCH_MASTER_ENV and BENCH_SWARM_ENV are
# environment assignments for the master and the swarm processes (e.g.
# "GOGC=200"). BENCH_PROFILE=DIR also fetches 15 s pprof CPU profiles and heap profiles
# of the master and the swarm under a ping loop into DIR, and during the
# auth storm 20 s CPU profiles (storm-*-cpu.pprof) and goroutine dumps
# taken 10 s in (storm-*-goroutine.txt). The storm line gives the CPU
# seconds the master and the swarm spent on it (compare those on a loaded
# machine: the wall time depends on the CPU the other processes leave).
# BENCH_NOFILE (default 65536) is the open files limit the bench sets for
# its own processes (soft and hard, where the shell may raise them: as
# root, or up to the hard limit): 10,000 identities hold 10,000 publish and
# up to 10,000 request connections, more than a 20,000-descriptor master
# fits, and the master then evicts idle request connections that the
# swarm reconnects (the run prints how many). BENCH_NOFILE=keep leaves the
# inherited limit (to measure what the evictions cost).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
pings=${PINGS:-5}
bin=$PWD/bin
tmp=$(mktemp -d /tmp/gsalt-swarm.XXXXXX)
pids=()
cleanup() { stop_groups "${pids[@]}"; wait 2>/dev/null || true; for f in "$tmp"/*.err; do [ -s "$f" ] && { echo "bench: last lines of the swarm's errors ($(basename "$f")):"; tail -3 "$f" | cut -c1-200; }; done; rm -rf "$tmp"; }
trap cleanup EXIT
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/swarm-lib.sh"
nofile=${BENCH_NOFILE:-65536}
if [ "$nofile" != keep ]; then
  [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt "$nofile" ] && { ulimit -Hn "$nofile" 2>/dev/null || nofile=$(ulimit -Hn); }
  ulimit -n "$nofile" 2>/dev/null || true
fi
echo "open files limit of the bench's processes: $(ulimit -n) (hard $(ulimit -Hn))"
metrics=$(freeport)
swarm_setup "$tmp" "metrics_port: $metrics
metrics_host: 127.0.0.1
${BENCH_MASTER_EXTRA:-}"
# metric NAME: a counter from the master's /metrics (gsalt_NAME).
metric() { curl -s "http://127.0.0.1:$metrics/metrics" | awk -v k="gsalt_$1" '$1==k {printf "%d", $2; exit}'; }
# gometric NAME: a Go runtime metric of the master (go_NAME).
gometric() { curl -s "http://127.0.0.1:$metrics/metrics" | awk -v k="go_$1" '$1==k {printf "%d", $2; exit}'; }
# What the master's RSS holds (Go runtime metrics): heap in use, goroutine
# stacks, goroutines, the heap size that starts the next GC.
gomem() { curl -s "http://127.0.0.1:$metrics/metrics" | awk '$1=="go_memstats_heap_inuse_bytes" {h=$2} $1=="go_memstats_stack_inuse_bytes" {s=$2} $1=="go_goroutines" {g=$2} $1=="go_memstats_next_gc_bytes" {n=$2} END {printf "heap in use %d MiB, stacks %d MiB for %d goroutines, next GC at %d MiB", h/1048576, s/1048576, g, n/1048576}'; }
# stats: jobs published, returns received, job cache writes and commits,
# request connections evicted (the connection budget was spent), the
# master's completed GC cycles.
stats() { echo "$(metric master_jobs_published_total) $(metric master_returns_received_total) $(metric jobcache_writes_total) $(metric jobcache_commits_total) $(metric master_connections_evicted_total) $(gometric gc_duration_seconds_count)"; }
static=()
[ "${BENCH_STATIC:-0}" = 1 ] && static=(--static)
prof=${BENCH_PROFILE:-}
[ -n "$prof" ] && mkdir -p "$prof"
now() { date +%s.%N; }
# ping_count T [WHEN]: how many identities answered a ping; when none
# did, the CLI's last line (stdout or stderr) goes to stderr, after WHEN.
ping_count() {
  local c
  "$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json "${static[@]}" -t "$1" >"$tmp/cli.out" 2>&1 || true
  c=$(grep -c ': true' "$tmp/cli.out" || true)
  [ "$c" -gt 0 ] || echo "bench: gsalt CLI${2:+ ($2)}: $(tail -1 "$tmp/cli.out" | cut -c1-300)" >&2
  echo "$c"
}
# ping_timed LIMIT: ping_count, with the CLI process's own CPU seconds
# (user+system) added to $tmp/cli.cpu.
ping_timed() {
  /usr/bin/time -f '%U %S' -o "$tmp/cli.time" "$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json "${static[@]}" -t "$1" 2>/dev/null | grep -c ': true' || true
  awk '{printf "%.2f\n", $1 + $2}' "$tmp/cli.time" >>"$tmp/cli.cpu"
}
# wait_all LIMIT_S [T0]: polls until all N answer; prints the seconds
# taken since T0 (default: now), or ">LIMIT (got/N)". The first ping waits
# for the master's request socket (sock_dir/gsalt_req.ipc, which the CLI
# uses when it is there): the event socket the bench waits for appears
# before the master has loaded its keys and minion data, and a CLI started
# then used the TCP port, not yet listening, and ran into its -t ("Salt
# request timed out"); $tmp/req_ready gets the seconds until the socket
# appeared.
wait_all() {
  local t0=${2:-$(now)} got k=0
  until [ -S "$tmp/master/sock/gsalt_req.ipc" ]; do
    if [ "$(echo "$(now) - $t0 > $1" | bc)" = 1 ]; then echo ">$1 (no request socket)"; return; fi
    sleep 0.1
  done
  printf '%.1f\n' "$(echo "$(now) - $t0" | bc)" >"$tmp/req_ready"
  while :; do
    k=$((k + 1))
    got=$(ping_count 5 "ping $k, $(printf '%.1f' "$(echo "$(now) - $t0" | bc)") s in")
    [ "$got" -ge "$n" ] && break
    if [ "$(echo "$(now) - $t0 > $1" | bc)" = 1 ]; then echo ">$1 ($got/$n)"; return; fi
    sleep 0.5
  done
  printf '%.1f\n' "$(echo "$(now) - $t0" | bc)"
}
# auths: the master's accepted authentications since it started
# (gsalt_master_auth_total{outcome="accepted"}; empty while /metrics does
# not answer).
auths() { curl -s "http://127.0.0.1:$metrics/metrics" | awk '$1=="gsalt_master_auth_total{outcome=\"accepted\"}" {printf "%d", $2}'; }
# storm_wait LIMIT_S T0: the end of the auth storm, in seconds since T0:
# the time when the last of the N identities has re-authenticated and all
# N answer. It reads the master's accepted authentications every 0.2 s
# (into $tmp/auths.log) and pings only once N have been counted; a ping
# all N answer ends the storm (its end is the time printed), one that
# falls short (an identity counted twice, or one that re-authenticates
# only when a publish fails its HMAC) is sent again at once. So the
# granularity is 0.2 s plus the ping itself, and no ping loads the
# storm before it can succeed (the earlier loop pinged every ~5.5 s from
# the restart: its result moved in 5.5 s steps, and each ping sent to
# identities not yet signed in made them re-authenticate for it).
# Prints ">LIMIT (got/N)" when the limit passes; each ping goes to
# $tmp/polls.log (start, end, answered).
storm_wait() {
  local lim=$1 t0=$2 got=0 a c el rs=
  : >"$tmp/auths.log"; : >"$tmp/polls.log"; rm -f "$tmp/req_ready"
  while :; do
    el=$(echo "$(now) - $t0" | bc)
    [ -z "$rs" ] && [ -S "$tmp/master/sock/gsalt_req.ipc" ] && { rs=$el; printf '%.1f\n' "$el" >"$tmp/req_ready"; }
    [ "$(echo "$el > $lim" | bc)" = 1 ] && { echo ">$lim ($got/$n)"; return; }
    c=$(auths)
    echo "$el ${c:-0}" >>"$tmp/auths.log"
    if [ "${c:-0}" -ge "$n" ]; then
      a=$(now)
      got=$(ping_count 5 "storm ping, $(printf '%.1f' "$el") s in")
      echo "$(echo "$a - $t0" | bc) $(echo "$(now) - $t0" | bc) $got" >>"$tmp/polls.log"
      [ "$got" -ge "$n" ] && break
      continue
    fi
    sleep 0.2
  done
  printf '%.1f\n' "$(echo "$(now) - $t0" | bc)"
}
start_master() {
  local env=()
  read -r -a env <<<"${BENCH_MASTER_ENV:-}"
  [ -n "$prof" ] && { mport=$(freeport); env+=(GSALT_PPROF=127.0.0.1:$mport); }
  env "${env[@]}" "$bin/gsalt-master" -c "$tmp/etc/master" -l error & mp=$!; pids+=($mp)
  until [ -e "$tmp/master/sock/master_event_pub.ipc" ]; do sleep 0.2; done
}
start_master
sleep 1
read -r -a sizes < <(swarm_sizes "$n")
names=(swarm swarm2)
sps=(); sports=(); gen=0
t0=$(now)
for k in "${!sizes[@]}"; do
  miss=$(swarm_keys_in "$tmp" "${names[$k]}" "${sizes[$k]}"); gen=$((gen + miss))
  # Cached identities start pre-accepted (an image seeded with its key); only
  # new ones go through pending + gsalt-key -A. With 10,000 pending
  # identities retrying every acceptance_wait_time the first auths starve.
  swarm_preaccept "$tmp" "${names[$k]}" "$tmp/master/pki" >/dev/null
  read -r -a env <<<"${BENCH_SWARM_ENV:-}"
  [ -n "$prof" ] && { sports[$k]=$(freeport); env+=(GSALT_PPROF=127.0.0.1:${sports[$k]}); }
  mapfile -t srcnet < <(swarm_source "$k")
  env "${env[@]}" "$bin/gsalt-minion" -c "$tmp/etc/${names[$k]}" --swarm "${sizes[$k]}" "${srcnet[@]}" -l error 2>>"$tmp/${names[$k]}.err" & sps[$k]=$!; pids+=(${sps[$k]})
done
until [ "$(($(ls "$tmp/master/pki/minions_pre" 2>/dev/null | wc -l) + $(ls "$tmp/master/pki/minions" 2>/dev/null | wc -l)))" -ge "$n" ]; do sleep 0.5; done
echo "swarm N=$n (${#sizes[@]} process(es)): all keys pre-accepted or pending after $(echo "$(now) - $t0" | bc) s ($gen of $n RSA-2048 key pairs generated, the rest from $(swarm_keycache))"
for k in "${!sizes[@]}"; do swarm_keys_out "$tmp" "${names[$k]}"; done
"$bin/gsalt-key" -c "$tmp/etc/master" -A -y >/dev/null
echo "first answers from all $n (pre-accepted from the start, new keys after acceptance): $(wait_all 300) s"

swarm_cpu() { local s=0 p; for p in "${sps[@]}"; do s=$(echo "$s + $(proc_cpu "$p")" | bc); done; echo "$s"; }
mc0=$(proc_cpu "$mp"); sc0=$(swarm_cpu); read -r j0 r0 w0 k0 e0 g0 < <(stats)
walls=(); short=0
for ((r = 0; r < pings; r++)); do
  a=$(now); got=$(ping_timed 30); b=$(now)
  walls+=("$(echo "$b - $a" | bc)")
  [ "$got" -ge "$n" ] || short=$((short + 1))
done
mc1=$(proc_cpu "$mp"); sc1=$(swarm_cpu); read -r j1 r1 w1 k1 e1 g1 < <(stats)
wall=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}')
# Each ping is N returns (2N with --static: see above). The per-return
# rows divide by the returns the master counted
# (gsalt_master_returns_received_total), or by PINGS*N(*2) without metrics.
rets=$((pings * n * (${#static[@]} + 1)))
[ -n "${r1:-}" ] && [ -n "${r0:-}" ] && [ "$((r1 - r0))" -gt 0 ] && rets=$((r1 - r0))
mret=$(echo "scale=4; ($mc1 - $mc0) * 1000 / $rets" | bc)
sret=$(echo "scale=4; ($sc1 - $sc0) * 1000 / $rets" | bc)
rss=$(proc_rss_mib "$mp")
echo "gsalt '*' test.ping x$pings: walls ${walls[*]} s (median $wall s, $short run(s) short of $n); master CPU $(echo "$mc1 - $mc0" | bc) s, swarm CPU $(echo "$sc1 - $sc0" | bc) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gsalt CLI process CPU per ping (user+system): $(sort -n "$tmp/cli.cpu" | tr '\n' ' ')s"
[ -n "$k1" ] && echo "during the pings: $((j1 - j0)) jobs published, $((r1 - r0)) returns received, job cache $((w1 - w0)) writes in $((k1 - k0)) commits${e1:+, $((e1 - ${e0:-0})) request connections evicted (budget $(metric master_connections_budget))}${g1:+, $((g1 - ${g0:-0})) master GC cycles}"
echo "master after the pings: $(gomem)"
echo "RSS: gsalt-master $rss MiB, swarm $(for p in "${sps[@]}"; do printf '%s MiB ' "$(proc_rss_mib "$p")"; done)"

if [ -n "$prof" ]; then
  curl -s -o "$prof/master-cpu.pprof" "http://127.0.0.1:$mport/debug/pprof/profile?seconds=15" & c1=$!
  curl -s -o "$prof/swarm-cpu.pprof" "http://127.0.0.1:${sports[0]}/debug/pprof/profile?seconds=15" & c2=$!
  while kill -0 "$c1" 2>/dev/null || kill -0 "$c2" 2>/dev/null; do ping_count 30 >/dev/null; done
  wait "$c1" "$c2" || true
  curl -s -o "$prof/master-heap.pprof" "http://127.0.0.1:$mport/debug/pprof/heap?gc=1"
  curl -s -o "$prof/swarm-heap.pprof" "http://127.0.0.1:${sports[0]}/debug/pprof/heap?gc=1"
  echo "profiles in $prof (go tool pprof -top bin/gsalt-master $prof/master-cpu.pprof)"
fi

# Auth storm: restart the master; every identity re-authenticates.
kill "$mp"; wait "$mp" 2>/dev/null || true
mcs0=$(proc_cpu "$mp" 2>/dev/null || echo 0); scs0=$(swarm_cpu)
start_master
st0=$(now)
if [ -n "$prof" ]; then
  # The storm's first 20 s: CPU profiles of the master and the first swarm,
  # then goroutine dumps (where the identities still waiting are waiting).
  curl -s -o "$prof/storm-master-cpu.pprof" "http://127.0.0.1:$mport/debug/pprof/profile?seconds=20" & c1=$!
  curl -s -o "$prof/storm-swarm-cpu.pprof" "http://127.0.0.1:${sports[0]}/debug/pprof/profile?seconds=20" & c2=$!
  ( sleep 10
    curl -s -o "$prof/storm-master-goroutine.txt" "http://127.0.0.1:$mport/debug/pprof/goroutine?debug=1"
    curl -s -o "$prof/storm-swarm-goroutine.txt" "http://127.0.0.1:${sports[0]}/debug/pprof/goroutine?debug=1" ) & c3=$!
fi
storm=$(storm_wait "${STORM_LIMIT:-300}" "$st0")
[ -n "$prof" ] && { wait "$c1" "$c2" "$c3" || true; }
srss=$(proc_rss_mib "$mp")
echo "auth storm: all $n answer after $storm s from the master restart (its request socket after $(cat "$tmp/req_ready" 2>/dev/null) s); master RSS $srss MiB; during it master CPU $(proc_cpu "$mp") s, swarm CPU $(echo "$(swarm_cpu) - $scs0" | bc) s"
echo "storm pings (start end answered, s): $(awk '{printf "[%.1f %.1f %d] ", $1, $2, $3}' "$tmp/polls.log")"
echo "storm accepted authentications: $(awk -v n="$n" 'BEGIN {split("0.25 0.5 0.9 0.99 1", q, " ")} {for (i = 1; i <= 5; i++) if (!(i in t) && $2 >= q[i] * n) t[i] = $1} END {for (i = 1; i <= 5; i++) printf "%d%% at %s s, ", q[i] * 100, (i in t) ? sprintf("%.1f", t[i]) : "never"}' "$tmp/auths.log")$(auths) in all"
echo "master after the storm: $(gomem); $(metric master_slow_load_commits_total) publishes answered before their load's commit (over 1 s)"

salt_wall=-; salt_ret=-; salt_rss=-; salt_storm=-
if [ -n "${GSALT_SALT_SRC:-}" ] && [ "$n" -gt 5000 ] && [ "${BENCH_SALT_BIG:-1}" = 0 ]; then
  why="not run (BENCH_SALT_BIG=0)"
  salt_wall=$why; salt_ret=$why; salt_rss=$why; salt_storm=$why
elif [ -n "${GSALT_SALT_SRC:-}" ]; then
  # gsalt's master and swarm stop first: at 10,000 identities they hold
  # ~2 GB and 20,000 descriptors that Salt's run would otherwise share.
  stop_groups "${pids[@]}"; pids=()
  out=$tmp/salt.env
  if BENCH_SWARM_SALT_OUT=$out ./scripts/bench-swarm-salt.sh "$n" && [ -s "$out" ]; then . "$out"; fi
fi
goal_wall="< 0.4 s, >= 10x Salt"; goal_rss="<= 120 MB"
[ "$n" -gt 1000 ] && { goal_wall="< 3 s"; goal_rss="<= 600 MB"; }
bench_note "Swarm rows (N = 1000 and 10000): one gsalt-master and gsalt-minion --swarm N (two processes above 5000) on 127.0.0.1, keys pre-accepted; ping: median wall of $pings runs of the whole gsalt '*' test.ping --out json CLI; CPU per return: the master's (and the swarms') CPU over those pings / the returns the master counted; storm: the master restarted, until all N re-authenticated and answer a ping; RSS after the storm. Salt column: the same swarm against Salt 3006's salt-master and Python salt CLI, master CPU and PSS summed over its processes."
bench_row "master CPU per return (test.ping, $n swarm), ms" "$mret" "$salt_ret" "<= 0.1 ms"
bench_row "swarm CPU per identity per job ($n), ms" "$sret" "n/a (Salt has no multi-identity minion)" "<= 0.1 ms"
bench_row "gsalt '*' test.ping, $n swarm, whole CLI, s" "$wall" "$salt_wall" "$goal_wall"
bench_row "auth storm: $n re-authenticate after master restart, s" "$storm" "$salt_storm" "< 30 s"
bench_row "master RSS (Salt: PSS of its processes), $n connected, after the auth storm, MiB" "$srss" "$salt_rss" "$goal_rss"

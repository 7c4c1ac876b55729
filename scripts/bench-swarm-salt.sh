#!/usr/bin/env bash
# bench-swarm-salt.sh [N]: the same load as bench-swarm.sh against a real
# Salt 3006 master (GSALT_SALT_SRC names its source tree; Debian python3):
# one `gsalt-minion --swarm N` process (key pairs from the bench's key
# cache, see swarm-lib.sh), `salt '*' test.ping` until all N returned, then
# $PINGS timed runs with the master's CPU (sum over its process group) and
# RSS. bench-swarm.sh runs it for the Salt column of its rows; with
# BENCH_SWARM_SALT_OUT set it writes salt_wall, salt_ret (master CPU ms per
# return), salt_rss (MiB, after the auth storm when it ran) and salt_storm
# (seconds until all N answer after a master restart) there as shell
# assignments. Every wait is bounded, so a Salt master that stalls at a
# large N ends the script with what it did: a ping short of N gives
# "T (k/N answered, -t S)", the storm ">LIMIT (k/N)". SALT_PINGS (default
# PINGS, 3 above 5000 identities) timed pings of SALT_PING_T seconds
# (default 60; above 5000 identities N/100); SALT_WARM_LIMIT (default 600)
# bounds the warm-up pings, STORM_LIMIT (default 300) the storm; each salt
# CLI call is killed SALT_CLI_GRACE (default 120) s after its -t. When
# no minion answered the warm-up, one timed ping is made and the storm is
# left out (SALT_GIVE_UP=0 makes them all). SALT_BUDGET (seconds; default
# 900 above 5000 identities, 0 = none below) bounds the whole Salt run from
# the moment the swarm's keys are accepted: no salt CLI call outlives it, a
# warm-up ping leaves room for one timed ping, timed pings stop and the
# storm's limit shrinks when it is spent; the cells then say how many
# answered in the time given, and a footnote states the budget (without
# it Salt at 10,000 identities could hold the bench ~35 minutes: warm-up,
# three pings and the storm each at its limit).
set -euo pipefail
cd "$(dirname "$0")/.."
src=${GSALT_SALT_SRC:?set GSALT_SALT_SRC to a Salt 3006 source tree}
shim=${GSALT_PYSHIM:-$(cd .. && pwd)/shared/peer/pyshim}
[ -d "$shim" ] || shim=/work/shared/peer/pyshim # a worktree under /work/wt
n=${1:-1000}
pings=${SALT_PINGS:-${PINGS:-5}}
[ -z "${SALT_PINGS:-}" ] && [ "$n" -gt 5000 ] && pings=3
pt=${SALT_PING_T:-60}
[ -z "${SALT_PING_T:-}" ] && [ "$((n / 100))" -gt "$pt" ] && pt=$((n / 100))
# The warm-up pings' -t (SALT_WARM_T): 20 s up to 5000 identities, where a
# -t 60 warm-up ping waited its whole -t for the minions still signing in
# (1,000 identities: 104 s to the first answered ping); -t as the timed
# pings above 5000, where Salt needs that long to gather all the returns.
wt=${SALT_WARM_T:-20}
[ -z "${SALT_WARM_T:-}" ] && [ "$n" -gt 5000 ] && wt=$pt
bin=$PWD/bin
tmp=$(mktemp -d /tmp/salt-swarm.XXXXXX)
pids=()
# salt_log_summary: the Salt master's warnings and errors (its log file,
# level warning), the most frequent first, ids and numbers folded: what
# the master said while it fell short.
salt_log_summary() {
  [ -s "$tmp/master/log" ] || return 0
  echo "salt-master log: $(grep -c '\[WARNING \]\|\[ERROR   \]\|\[CRITICAL\]' "$tmp/master/log" || true) warning/error lines; the most frequent:"
  grep '\[WARNING \]\|\[ERROR   \]\|\[CRITICAL\]' "$tmp/master/log" | sed -E 's/^[0-9-]+ [0-9:,]+ //; s/\]\[[0-9]+\]/]/; s/s[wx]-[0-9]{4}/ID/g; s/[0-9]+/N/g' | cut -c1-220 | sort | uniq -c | sort -rn | head -8
}
cleanup() { salt_log_summary; stop_groups "${pids[@]}"; wait 2>/dev/null || true; for f in "$tmp"/*.err; do [ -s "$f" ] && { echo "bench: last lines of the swarm's errors ($(basename "$f")):"; tail -3 "$f" | cut -c1-200; }; done; rm -rf "$tmp"; }
trap cleanup EXIT
export PYTHONPATH=$src:$shim
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/swarm-lib.sh"
# SALT_SCALE=1 (the default above 5000 identities; 0 turns it off) sets
# what Salt's "Using Salt at scale" tutorial and its config reference give
# an admin of many minions, each a documented option, stated in the
# table's footnote: on the master zmq_backlog 4096 (this kernel's
# somaxconn; Salt's default 1000; not key_cache: sched: the cache is made by the
# maintenance process every 60 s, and a 50-identity trial run with it
# answered 31/50 on its first ping; not investigated further); on the minions auth_timeout 120 (Salt's
# 5 s abandons an _auth queued behind thousands and sends it again: the
# master answers requests no one waits for any more), return_retry_timer
# 60..120 (5..10 s: a return still queued is sent again) and
# acceptance_wait_time_max 30. worker_threads stays 5 (2 cores; Salt's
# default), max_open_files 100000 (Salt's default; the processes get the
# hard limit of the shell, printed below).
scale=${SALT_SCALE:-0}
[ -z "${SALT_SCALE:-}" ] && [ "$n" -gt 5000 ] && scale=1
mextra=""
[ "$scale" = 1 ] && mextra="zmq_backlog: 4096
max_open_files: 100000
worker_threads: 5"
swarm_setup "$tmp" "log_level: error
log_level_logfile: warning
user: $(id -un)
auto_accept: True
$mextra"
if [ "$scale" = 1 ]; then
  for d in swarm swarm2; do
    printf 'auth_timeout: 120\nreturn_retry_timer: 60\nreturn_retry_timer_max: 120\nacceptance_wait_time_max: 30\n' >>"$tmp/etc/$d/minion"
  done
  bench_note "Salt column at $n identities: Salt 3006's master with zmq_backlog: 4096, worker_threads: 5, max_open_files: 100000 (open files limit $(ulimit -n)), its swarm minions with auth_timeout: 120, return_retry_timer: 60, return_retry_timer_max: 120, acceptance_wait_time_max: 30 (Salt's 'Using Salt at scale' tuning; SALT_SCALE=0 runs Salt's defaults); gsalt's run uses the defaults."
fi
now() { date +%s.%N; }
setsid /usr/bin/python3 "$src/scripts/salt-master" -c "$tmp/etc/master" -l error </dev/null >/dev/null 2>&1 & mp=$!; pids+=($mp)
sleep 5
group() { pgrep -g "$mp" 2>/dev/null || pgrep -P "$mp"; }
read -r -a sizes < <(swarm_sizes "$n")
names=(swarm swarm2)
start=$(now); tstart=$start; gen=0; sps=()
budget=${SALT_BUDGET:-0}
[ -z "${SALT_BUDGET:-}" ] && [ "$n" -gt 5000 ] && budget=900
# left: whole seconds of SALT_BUDGET left (a large number without one).
# The budget's clock starts once the swarm's keys are accepted (tb, below).
tb=$start
left() { if [ "$budget" = 0 ]; then echo 999999; else printf '%.0f\n' "$(echo "$tb + $budget - $(now)" | bc)"; fi; }
for k in "${!sizes[@]}"; do
  miss=$(swarm_keys_in "$tmp" "${names[$k]}" "${sizes[$k]}"); gen=$((gen + miss))
  pre=$(swarm_preaccept "$tmp" "${names[$k]}" "$tmp/master/pki")
  echo "salt-master: ${names[$k]}: $pre cached public keys pre-accepted, $miss left to auto_accept"
  mapfile -t srcnet < <(swarm_source "$k")
  "$bin/gsalt-minion" -c "$tmp/etc/${names[$k]}" --swarm "${sizes[$k]}" "${srcnet[@]}" -l error 2>>"$tmp/${names[$k]}.err" & sp=$!; pids+=($sp); sps+=($sp)
done
for _ in $(seq 300); do [ "$(ls "$tmp/master/pki/minions" 2>/dev/null | wc -l)" -ge "$n" ] && break; sleep 1; done
echo "salt-master, swarm N=$n: $(ls "$tmp/master/pki/minions" | wc -l) keys accepted (pre-accepted or auto_accept) after $(echo "$(now) - $start" | bc) s ($gen key pairs generated)"
for k in "${!sizes[@]}"; do swarm_keys_out "$tmp" "${names[$k]}"; done
tb=$(now)
static=()
[ "${BENCH_STATIC:-0}" = 1 ] && static=(--static)
# salt_ping T: how many minions answered `salt '*' test.ping -t T`; the
# CLI is killed SALT_CLI_GRACE s after T (it can wait on find_job rounds).
salt_ping() {
  local k=$(($1 + ${SALT_CLI_GRACE:-120})) l
  l=$(left); [ "$l" -lt "$k" ] && k=$l
  [ "$k" -ge 1 ] || { echo 0; return; }
  timeout -k 5 "$k" /usr/bin/python3 "$src/scripts/salt" -c "$tmp/etc/master" '*' test.ping --out json "${static[@]}" -t "$1" 2>/dev/null | grep -c ': true' || true
}
# Warm-up: ping until all N answer once, at most SALT_WARM_LIMIT s.
# conns PORT: established TCP connections the master holds on PORT.
conns() { ss -Htn state established "( sport = :$1 )" 2>/dev/null | wc -l; }
# progress: what the master has so far (minions on the publish port,
# connections on the request port, CPU and PSS of its processes).
# pillars: minions whose _pillar the master has served (it writes their
# data cache then; a salt-minion, like gsalt's, asks for its pillar when
# it starts). clitimeouts: the salt CLI's requests (its publish) that timed
# out in the master's request queue (the CLI logs them to the master's
# log file).
pillars() { find "$tmp/master/cache/minions" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
clitimeouts() { grep -c 'salt.channel.client.*SaltReqTimeoutError' "$tmp/master/log" 2>/dev/null || true; }
progress() { echo "publish conns $(conns "$pub"), request conns $(conns "$ret"), pillars served $(pillars), CLI requests timed out $(clitimeouts), master CPU $(group_cpu) s, PSS $(group_pss_mib "$mp") MiB, load $(cut -d' ' -f1 /proc/loadavg)"; }
group_cpu() { local s=0 p; for p in $(group); do s=$(echo "$s + $(proc_cpu "$p" 2>/dev/null || echo 0)" | bc); done; echo "$s"; }
t0=$(now); warm=0
# With a budget, a warm-up ping starts only while one timed ping (-t plus
# the CLI's grace) still fits after it.
while [ "$(echo "$(now) - $t0 < ${SALT_WARM_LIMIT:-600}" | bc)" = 1 ] && [ "$(left)" -gt $((pt + ${SALT_CLI_GRACE:-120})) ]; do
  warm=$(salt_ping "$wt")
  echo "salt-master warm-up ping (-t $wt): $warm/$n answered, $(printf '%.0f' "$(echo "$(now) - $t0" | bc)") s in; $(progress)"
  [ "$warm" -ge "$n" ] && break
  sleep 2
done
echo "salt-master warm-up: $warm/$n answered the last ping, $(printf '%.1f' "$(echo "$(now) - $t0" | bc)") s after the swarm started; load $(cut -d' ' -f1-3 /proc/loadavg)"
# A master that answered no warm-up ping in SALT_WARM_LIMIT s gets one
# timed ping, not $pings, and no storm (SALT_GIVE_UP=0 runs them all):
# each would wait its whole -t plus find_job rounds for nothing.
if [ "$warm" = 0 ] && [ "${SALT_GIVE_UP:-1}" = 1 ] && [ "$pings" -gt 1 ]; then
  echo "salt-master: no minion answered the warm-up: one timed ping instead of $pings, and no auth storm"
  pings=1
fi
c0=$(group_cpu); walls=(); total=0; least=$n
spent=
for ((r = 0; r < pings; r++)); do
  if [ "$r" -gt 0 ] && [ "$(left)" -lt "$pt" ]; then spent=" (SALT_BUDGET spent after $r of $pings)"; pings=$r; break; fi
  t0=$(now); got=$(salt_ping "$pt"); t1=$(now)
  walls+=("$(echo "$t1 - $t0" | bc)")
  total=$((total + got)); [ "$got" -lt "$least" ] && least=$got
  echo "salt '*' test.ping (real salt CLI and master): $got/$n returned in ${walls[-1]} s; $(progress)"
done
c1=$(group_cpu)
wall=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}')
# A ping short of N says so: the median wall then is the CLI's -t plus
# its find_job rounds, not the time all N took.
[ "$least" -lt "$n" ] && wall="$wall ($least/$n answered, -t $pt)"
[ -n "$spent" ] && wall="$wall, $pings ping(s)$spent"
if [ "$budget" != 0 ]; then
  bench_note "Salt at $n identities was given SALT_BUDGET=$budget s in all, from the moment its swarm's keys were accepted: warm-up pings (at most ${SALT_WARM_LIMIT:-600} s), $pings timed ping(s) of -t $pt and the auth storm (at most ${STORM_LIMIT:-300} s) each got what was left; a salt CLI call is killed ${SALT_CLI_GRACE:-120} s after its -t or when the budget ends. A cell short of N says how many answered in that time."
fi
# Why a ping fell short, in a footnote: the CLI's publish is a request on
# the master's request port, queued behind the minions' own requests.
[ "$least" -lt "$n" ] && bench_note "Salt at $n identities: its pings fell short ($least/$n at worst): the salt CLI's publish request timed out $(clitimeouts) time(s) (SaltReqTimeoutError in the master's log: it waits in the master's request queue with the minions' start-up _auth and _pillar requests; $(pillars)/$n pillars served $(printf '%.0f' "$(echo "$(now) - $tstart" | bc)") s after the swarm started; a _pillar waits 60 s, 3 tries, as a salt-minion's)."
# N returns per ping (the returns the CLI saw when fewer answered); with
# BENCH_STATIC=1 salt.py runs --static as a 100% batch (a test.ping round,
# then the job), as gsalt does: 2N.
ret="none answered ($pings pings of -t $pt; master CPU $(echo "$c1 - $c0" | bc) s)"
[ "$total" -gt 0 ] && ret=$(echo "scale=4; ($c1 - $c0) * 1000 / ($total * (${#static[@]} + 1))" | bc)
# group_rss: RSS summed over the master's processes, and their PSS (shared
# copy-on-write pages counted once): "RSS (PSS)"; salt_rss is the PSS.
group_rss() { local t=0 p r; for p in $(group); do r=$(awk '/VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0); t=$((t + r)); done; echo "$(echo "scale=1; $t / 1024" | bc) ($(group_pss_mib "$mp"))"; }
rss=$(group_rss)
echo "salt-master: median wall $wall s, CPU $(echo "$c1 - $c0" | bc) s over $pings pings ($ret ms per return), RSS (PSS) $rss MiB summed over its processes; load $(cut -d' ' -f1-3 /proc/loadavg)"
# Auth storm, as bench-swarm.sh's: the master restarted (its process group
# stopped, a new one started; a new AES session key), the time from its
# event socket appearing until every identity answers a ping again, and
# the master's RSS then (bench-swarm.sh's RSS row is also after the storm).
# SALT_STORM=0 skips it; STORM_LIMIT (default 300) bounds the wait.
storm=-
if [ "$total" = 0 ] && [ "${SALT_GIVE_UP:-1}" = 1 ]; then
  storm="not measured (no ping answered before it)"
elif [ "${SALT_STORM:-1}" = 1 ] && [ "$(left)" -lt 30 ]; then
  storm="not measured (SALT_BUDGET=$budget s spent before it)"; nostorm=1
elif [ "${SALT_STORM:-1}" = 1 ]; then
  kill -- "-$mp" 2>/dev/null || true
  for _ in $(seq 120); do pgrep -g "$mp" >/dev/null || break; sleep 0.5; done
  pgrep -g "$mp" >/dev/null && kill -KILL -- "-$mp" 2>/dev/null
  wait "$mp" 2>/dev/null || true
  rm -f "$tmp/master/sock/master_event_pub.ipc"
  swarm_cpu() { for p in "${sps[@]}"; do proc_cpu "$p"; echo; done | paste -sd+ | bc; }
  scs0=$(swarm_cpu)
  setsid /usr/bin/python3 "$src/scripts/salt-master" -c "$tmp/etc/master" -l error </dev/null >/dev/null 2>&1 & mp=$!; pids+=($mp)
  for _ in $(seq 600); do [ -e "$tmp/master/sock/master_event_pub.ipc" ] && break; sleep 0.2; done
  # A ping at 10,000 takes Salt longer than 10 s: -t grows with N.
  st=$((n / 250)); [ "$st" -lt 10 ] && st=10
  t0=$(now); got=0
  slim=${STORM_LIMIT:-300}; [ "$(left)" -lt "$slim" ] && slim=$(left)
  while [ "$(echo "$(now) - $t0 < $slim" | bc)" = 1 ]; do
    got=$(salt_ping "$st")
    [ "$got" -ge "$n" ] && break
    sleep 0.5
  done
  if [ "$got" -ge "$n" ]; then storm=$(printf '%.1f' "$(echo "$(now) - $t0" | bc)"); else storm=">$slim ($got/$n)"; fi
  rss=$(group_rss)
  echo "salt-master auth storm: all $n answer after $storm s from the restart; master RSS (PSS) $rss MiB summed over its processes; during it master CPU $(group_cpu) s, swarm CPU $(echo "$(swarm_cpu) - $scs0" | bc) s"
fi
pss=${rss#* (}; pss=${pss%)}
{ [ "$total" = 0 ] && [ "${SALT_GIVE_UP:-1}" = 1 ]; } || [ -n "${nostorm:-}" ] && pss="$pss (after the pings: no storm)"
if [ -n "${BENCH_SWARM_SALT_OUT:-}" ]; then
  printf 'salt_wall=%q\nsalt_ret=%q\nsalt_rss=%q\nsalt_storm=%q\n' "$wall" "$ret" "$pss" "$storm" >"$BENCH_SWARM_SALT_OUT"
fi

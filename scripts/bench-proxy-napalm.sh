#!/usr/bin/env bash
# bench-proxy-napalm.sh [N]: one gsalt-master, one gsalt-devsim simulating N
# IOS-XE (PLATFORM=ios, the default) or Arista EOS (PLATFORM=eos) switches
# (SSH on 127.0.0.1, ports P..P+N-1) and one gsalt-proxy
# serving them all as proxy minions sw1..swN through the napalm proxytype
# (selected by pillar). Reports the time until all N are connected (the
# proxy's gauge) and answer test.ping after the proxy started, with the
# processes' CPU seconds, the idle fleet's CPU, the fan-out time of
# test.ping and of net.load_config
# (test=True and commit=True) over all N, and the RSS of the three
# processes. Numbers go in the notes, never into tests.
# BIN overrides the binary directory (default bin/); PROXY_ARGS adds flags to
# gsalt-proxy (e.g. --max-conns 512), DEVSIM_ARGS to gsalt-devsim.
# PROFILE_DIR=DIR saves gsalt-proxy's heap and goroutine profiles there
# (GSALT_PPROF) once every device answered, and again after the fan-outs,
# a CPU profile of its first START_CPU_S seconds (default 90): the
# devices signing in and opening their sessions, goroutine, heap and 30 s
# CPU profiles MID_PROFILE_S seconds (default 240) into the start if the
# fleet is not ready by then, one of the IDLE_S
# seconds (default 30) the idle fleet is measured and one of the first
# FAN_CPU_S seconds (default 30) of the net.load_config test=True fan-out.
# The issue 17 rows (RSS per device, and for N >= 10000 the whole fleet)
# go through bench_row.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
platform=${PLATFORM:-ios}
case $platform in
  ios) vendor=Cisco ;;
  eos) vendor=Arista ;;
  *) echo "PLATFORM must be ios or eos" >&2; exit 2 ;;
esac
bin=${BIN:-$PWD/bin}
. "$(dirname "$0")/bench-lib.sh"
# Each device costs a listener and a connection in gsalt-devsim (one
# gsalt-devsim per DEVSIM_PER devices) and a connection in gsalt-proxy; the
# master connections are the fleet's, shared.
raise_nofile $((2 * ${DEVSIM_PER:-5000} + 4096))
tmp=$(mktemp -d /tmp/gsalt-napalm.XXXXXX)
pids=()
cleanup() {
  stop_groups "${pids[@]}"
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. "$(dirname "$0")/swarm-lib.sh"
swarm_setup "$tmp" "auto_accept: False
timeout: 30
pillar_roots: {base: [$tmp/srv/pillar]}"

# N consecutive free loopback ports for the simulated devices: the first
# free window from port 10000 up (below the ephemeral range when N fits),
# skipping past any port in use. The probe binds with SO_REUSEADDR, as
# gsalt-devsim's Go listeners do: a port held only by a TIME_WAIT
# connection is free for them (without it a SWARM=10000 make bench found
# no window of 10,000 right after the 10k steps); a socket that cannot be
# made (too many open files) is an error, not a port in use.
dev=$(python3 - "$n" <<'PY'
import errno, socket, sys
n = int(sys.argv[1])
base, taken = 10000, 0
while base + n <= 65535:
    socks = []
    try:
        for p in range(base, base + n):
            s = socket.socket(); socks.append(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", p))
    except OSError as e:
        if e.errno != errno.EADDRINUSE:
            sys.exit(f"no free port range: port {p}: {e}")
        base, taken = p + 1, taken + 1
        continue
    finally:
        for s in socks: s.close()
    print(base); break
else:
    sys.exit(f"no free port range: no {n} consecutive free ports from 10000 ({taken} ports in use on the way)")
PY
)

mport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$tmp/srv/pillar" "$tmp/etc/proxy"
printf "base:\n  'sw*':\n    - sw\n" >"$tmp/srv/pillar/top.sls"
cat >"$tmp/srv/pillar/sw.sls" <<SLS
proxy:
  proxytype: napalm
  driver: $platform
  host: 127.0.0.1
  username: admin
  password: admin
  optional_args:
    port: {{ $dev + (grains['id'][2:] | int) - 1 }}
SLS
cat >"$tmp/etc/proxy/proxy" <<CONF
root_dir: $tmp/proxy
pki_dir: $tmp/proxy/pki
cachedir: $tmp/proxy/cache
sock_dir: $tmp/proxy/sock
log_file: $tmp/proxy/log
log_level_logfile: warning
# Timestamps on the console, for the init timing read back below.
log_fmt_console: '%(asctime)s.%(msecs)03d000Z %(levelname)s %(message)s'
log_datefmt: '%Y-%m-%dT%H:%M:%S'
master: 127.0.0.1
master_port: $ret
acceptance_wait_time: 2
# Back off (2 s doubling to 32 s) when the master is too busy to answer an
# _auth: thousands of devices authenticate at once.
acceptance_wait_time_max: 30
# The bench reads gsalt_proxy_devices_connected here.
metrics_host: 127.0.0.1
metrics_port: $mport
CONF
for i in $(seq 1 "$n"); do echo "sw$i"; done >"$tmp/ids"

rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
now() { date +%s.%N; }
since() { echo "scale=2; ($(now) - $1) / 1" | bc; }
salt() { "$bin/gsalt" -c "$tmp/etc/master" "$@"; }
# count_true FILE [result]: how many minions returned true (test.ping) or a
# dict with result true (net.*); prints "true total".
count_true() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print(0, 0); sys.exit()
if len(sys.argv) > 2:
    t = sum(1 for v in d.values() if isinstance(v, dict) and v.get("result") is True)
else:
    t = sum(1 for v in d.values() if v is True)
print(t, len(d))
PY
}

echo "N=$n devices on 127.0.0.1:$dev-$((dev + n - 1)), master ret port $ret, tmp $tmp"
# One gsalt-devsim per 5000 devices: each device takes a listener and a
# connection, and the open files hard limit may be 20000.
per=${DEVSIM_PER:-5000}; dps=()
for ((first = 0; first < n; first += per)); do
  cnt=$((n - first < per ? n - first : per))
  "$bin/gsalt-devsim" --base-port "$((dev + first))" --devices "$cnt" --platform "$platform" --user admin --password admin \
    --hostname-prefix "sw" --log-level error ${DEVSIM_ARGS:-} 2>>"$tmp/devsim.err" & dps+=($!); pids+=($!)
done
dp=${dps[0]}
devsim_rss() { local t=0 p; for p in "${dps[@]}"; do t=$((t + $(rss "$p"))); done; echo "$t"; }
devsim_cpu() { local p; for p in "${dps[@]}"; do proc_cpu "$p"; echo; done | awk '{s += $1} END {printf "%.3f", s}'; }
"$bin/gsalt-master" -c "$tmp/etc/master" -l error 2>"$tmp/master.err" & mp=$!; pids+=($mp)
# Wait until the last device port listens.
for _ in $(seq 300); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $((dev + n - 1))), 1).close()" 2>/dev/null && break
  sleep 0.1
done
sleep 1
pprof=()
if [ -n "${PROFILE_DIR:-}" ]; then
  mkdir -p "$PROFILE_DIR"
  pport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  pprof=(env GSALT_PPROF=127.0.0.1:$pport)
fi
profile() { # profile NAME: heap and goroutine profiles of gsalt-proxy
  [ -n "${PROFILE_DIR:-}" ] || return 0
  # Bounded: at 10,000 devices the heap profile after the fan-outs did
  # not answer within minutes (three times); a profile that does not
  # answer is named and the run goes on (under set -e curl's exit 28
  # ended the run before its totals and bench rows).
  local bad=()
  curl -s -m 120 -o "$PROFILE_DIR/heap-$1.pb.gz" "http://127.0.0.1:$pport/debug/pprof/heap?gc=1" || bad+=(heap)
  curl -s -m 120 -o "$PROFILE_DIR/goroutine-$1.txt" "http://127.0.0.1:$pport/debug/pprof/goroutine?debug=1" || bad+=(goroutine)
  # The runtime's MemStats (heap in use, stacks, what the GC keeps) close
  # the text form of the heap profile.
  { curl -s -m 120 "http://127.0.0.1:$pport/debug/pprof/heap?debug=1" || true; } | sed -n '/^# runtime.MemStats/,$p' >"$PROFILE_DIR/memstats-$1.txt"
  echo "profiles saved: $PROFILE_DIR/heap-$1.pb.gz $PROFILE_DIR/goroutine-$1.txt $PROFILE_DIR/memstats-$1.txt${bad[*]:+ (no answer within 120 s: ${bad[*]})}"
}
# The devices' RSA key pairs are kept between runs in the bench's scratch
# folder (generating 1,000 takes minutes on a loaded machine); the time to
# "all keys pending" includes generation only for the missing ones.
cached=$(proxy_keys_in "$tmp/proxy/pki" "$n")
echo "$cached of $n device key pairs from the key cache $(proxy_keycache)"
start=$(now); startiso=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
# Logs at info tell when each device's napalm init finished (read back at
# the end); from 5,000 devices the two info lines of every job of every
# device (20,000 lines per fan-out at 10,000) make the log's lock a queue
# of its own, so large fleets log warnings only (PROXY_LOG overrides).
plog=${PROXY_LOG:-$([ "$n" -ge 5000 ] && echo warning || echo info)}
"${pprof[@]}" "$bin/gsalt-proxy" -c "$tmp/etc/proxy" --proxyids-file "$tmp/ids" -l "$plog" ${PROXY_ARGS:-} 2>"$tmp/proxy.err" & pp=$!; pids+=($pp)
if [ -n "${PROFILE_DIR:-}" ]; then
  (sleep 1; curl -s -o "$PROFILE_DIR/cpu-start.pb.gz" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=${START_CPU_S:-90}") &
fi
until [ "$(ls "$tmp/master/pki/minions_pre" 2>/dev/null | wc -l)" -ge "$n" ]; do
  kill -0 $pp 2>/dev/null || { echo "gsalt-proxy exited"; tail -20 "$tmp/proxy.err"; exit 1; }
  sleep 0.5
done
echo "all $n keys pending after $(since "$start") s (includes $((n - cached)) new RSA-2048 key pairs)"
proxy_keys_out "$tmp/proxy/pki"
"$bin/gsalt-key" -c "$tmp/etc/master" -A -y >/dev/null
sleep 3 # acceptance_wait_time before the devices re-authenticate
# Wait until every device re-authenticated, rendered its pillar, opened its
# napalm (SSH) session and subscribed: gsalt-proxy's own gauge
# (gsalt_proxy_devices_connected, read every 2 s, so the wait puts no load
# on the master; test.ping polls of thousands of devices would: each poll
# is a job and a find_job round on every device ready so far, their
# returns queued in front of the sign-ins and pillars of the others).
# READY_MAX_S bounds the wait (default 720 s): the fan-outs then run on
# the devices that are ready. Then test.ping fan-outs (up to three, the
# union counted) until every device answered.
metric() { curl -s "http://127.0.0.1:$mport/metrics" | awk -v m="$1" '$1 == m {printf "%d", $2}'; }
conn=0; last=0
while :; do
  conn=$(metric gsalt_proxy_devices_connected); conn=${conn:-0}
  [ "$conn" -ge "$n" ] && break
  el=$(since "$start")
  if [ "${el%.*}" -ge "$((last + 30))" ]; then
    last=${el%.*}
    echo "  $el s: $conn/$n devices connected, gsalt-proxy $(proc_rss_mib $pp) MiB, $(proc_cpu $pp) CPU s, $(curl -s "http://127.0.0.1:$mport/metrics" | awk '$1 == "go_goroutines" {print $2}') goroutines"
  fi
  if [ -n "${PROFILE_DIR:-}" ] && [ -z "${mid:-}" ] && [ "${el%.*}" -ge "${MID_PROFILE_S:-240}" ]; then
    # The middle of the start: goroutines, heap and 30 s of CPU.
    mid=1; profile mid
    curl -s -o "$PROFILE_DIR/cpu-mid.pb.gz" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=30" &
  fi
  [ "${el%.*}" -ge "${READY_MAX_S:-720}" ] && { echo "  giving up waiting after $el s"; break; }
  kill -0 $pp 2>/dev/null || { echo "gsalt-proxy exited"; tail -20 "$tmp/proxy.err"; exit 1; }
  sleep 2
done
ready_s=$(since "$start")
echo "$conn/$n devices connected after $ready_s s from gsalt-proxy start (gsalt-proxy $(proc_cpu $pp) CPU s, gsalt-master $(proc_cpu $mp) CPU s, gsalt-devsim $(devsim_cpu) CPU s)"
profile ready
got=0; : >"$tmp/seen"
for _ in 1 2 3; do
  salt 'sw*' test.ping --out json --static -t $((30 + n / 200)) >"$tmp/ping.json" 2>/dev/null || true
  got=$(/usr/bin/python3 - "$tmp/ping.json" "$tmp/seen" <<'PY'
import json, sys
seen = set(open(sys.argv[2]).read().split())
try:
    seen |= {k for k, v in json.load(open(sys.argv[1])).items() if v is True}
except Exception:
    pass
open(sys.argv[2], "w").write("\n".join(sorted(seen)))
print(len(seen))
PY
)
  echo "  $(since "$start") s: $got/$n have answered test.ping"
  # Another round only while devices the gauge counts connected are
  # missing (the wait may have given up with some still starting).
  [ "$got" -ge "$conn" ] && break
done
echo "all answered test.ping: $got/$n after $(since "$start") s from gsalt-proxy start"

t0=$(now)
salt -t 120 'sw*' test.ping --out json --static >"$tmp/ping.json" 2>"$tmp/ping.err" || true
el=$(since "$t0"); read -r got tot < <(count_true "$tmp/ping.json")
echo "gsalt -t 120 'sw*' test.ping: $got True of $tot returned, $el s (whole CLI run)"
pr=$(rss $pp); dr=$(devsim_rss)
idle_kib=$(echo "scale=1; $pr / $n" | bc)
echo "RSS with every session open: gsalt-proxy $((pr / 1024)) MiB = $idle_kib KiB per device, gsalt-devsim $((dr / 1024)) MiB"
profile idle
# What the idle fleet costs: CPU seconds over IDLE_S seconds (default 30)
# with every session open and no job (keepalive probes, timers, GC).
idle_s=${IDLE_S:-30}; pc0=$(proc_cpu $pp); dc0=$(devsim_cpu); mc0=$(proc_cpu $mp)
if [ -n "${PROFILE_DIR:-}" ]; then
  curl -s -o "$PROFILE_DIR/cpu-idle.pb.gz" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=$idle_s"
else
  sleep "$idle_s"
fi
echo "idle ${idle_s} s: gsalt-proxy $(echo "$(proc_cpu $pp) - $pc0" | bc) CPU s, gsalt-devsim $(echo "$(devsim_cpu) - $dc0" | bc) CPU s, gsalt-master $(echo "$(proc_cpu $mp) - $mc0" | bc) CPU s"

for mode in test=True commit=True; do
  if [ -n "${PROFILE_DIR:-}" ] && [ "$mode" = test=True ]; then
    curl -s -o "$PROFILE_DIR/cpu-fanout.pb.gz" "http://127.0.0.1:$pport/debug/pprof/profile?seconds=${FAN_CPU_S:-30}" & cpid=$!
  fi
  t0=$(now); pc0=$(proc_cpu $pp); dc0=$(devsim_cpu); mc0=$(proc_cpu $mp)
  salt -t 300 -C "G@vendor:$vendor and I@proxy:proxytype:napalm" net.load_config text='ntp server 10.0.0.1' "$mode" --out json --static \
    >"$tmp/load.json" 2>"$tmp/load.err" || true
  el=$(since "$t0"); read -r got tot < <(count_true "$tmp/load.json" result)
  echo "gsalt -t 300 -C 'G@vendor:$vendor and I@proxy:proxytype:napalm' net.load_config text='ntp server 10.0.0.1' $mode: $got result True of $tot returned, $el s (CPU s: gsalt-proxy $(echo "$(proc_cpu $pp) - $pc0" | bc), gsalt-devsim $(echo "$(devsim_cpu) - $dc0" | bc), gsalt-master $(echo "$(proc_cpu $mp) - $mc0" | bc); gsalt-proxy RSS $(proc_rss_mib $pp) MiB)"
  [ "$mode" = test=True ] && { fan_got=$got; fan_s=$el; }
  # The fan-out's CPU profile ends before the next step.
  [ -n "${cpid:-}" ] && { wait "$cpid" || true; cpid=; }
  if [ "$got" -lt "$n" ]; then
    /usr/bin/python3 - "$tmp/load.json" <<'PY' || head -c 600 "$tmp/load.err"
import json, sys, collections
d = json.load(open(sys.argv[1]))
bad = collections.Counter(str(v.get("comment") if isinstance(v, dict) else v)[:160] for v in d.values()
                          if not (isinstance(v, dict) and v.get("result") is True))
for msg, c in bad.most_common(5): print(f"  {c} x {msg}")
PY
  fi
done

mr=$(rss $mp); pr=$(rss $pp); dr=$(devsim_rss)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pp/status")
echo "RSS after the fan-outs: gsalt-proxy $((pr / 1024)) MiB = $(echo "scale=1; $pr / $n" | bc) KiB per device (peak $((hwm / 1024)) MiB), gsalt-devsim $((dr / 1024)) MiB, gsalt-master $((mr / 1024)) MiB"
profile after
echo "gsalt-proxy CPU $(proc_cpu $pp) s, gsalt-devsim CPU $(devsim_cpu) s, gsalt-master CPU $(proc_cpu $mp) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
bench_note "Napalm rows: gsalt-devsim simulates the switches (SSH on 127.0.0.1, one process per ${DEVSIM_PER:-5000}); one gsalt-proxy serves all of them (napalm proxytype from pillar) against one gsalt-master. RSS per device: gsalt-proxy's RSS divided by the devices once every session is open and idle. The 10,000-device row: gsalt-proxy's peak RSS (VmHWM) and the whole CLI time of net.load_config test=True on all of them (-C on grains and pillar, --static)."
bench_row "gsalt-proxy RSS per device with an open SSH session ($n $platform devices)" \
  "$(echo "scale=2; $idle_kib / 1024" | bc) MB" "n/a (no napalm for Salt here; a salt-proxy a device, see the dummy row)" "<= 0.4 MB"
if [ "$n" -ge 10000 ]; then
  bench_row "$n $platform devices in one gsalt-proxy (devsim $((dr / 1024)) MiB): peak RSS, net.load_config test=True fan-out" \
    "$((hwm / 1024)) MiB, $fan_s s ($fan_got/$n; all connected after $ready_s s)" "n/a ($n salt-proxy processes)" "< 4 GB, < 60 s"
fi
# When did the last device finish its napalm init (from the proxy's log)?
/usr/bin/python3 - "$tmp/proxy.err" "$startiso" "$n" <<'PY'
import re, sys, collections
from datetime import datetime
ts = lambda x: datetime.strptime(x, "%Y-%m-%dT%H:%M:%S.%fZ")
start, inits, other = ts(sys.argv[2]), [], collections.Counter()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r'(\d{4}-\d\d-\d\dT\S+Z) (\w+) (.*)$', line)
    if not m: continue
    if m[3].startswith("proxy module initialized"): inits.append(ts(m[1]))
    elif m[2] in ("WARNING", "ERROR", "CRITICAL"):
        # one line per message, whichever device logged it
        other[re.sub(r"\bminion=\S+", "minion=*", f"{m[2]} {m[3]}")[:150]] += 1
if inits:
    print(f"napalm proxy module initialized on {len(inits)}/{sys.argv[3]} devices, the last {(max(inits) - start).total_seconds():.2f} s after gsalt-proxy start")
print("gsalt-proxy WARN/ERROR log lines by message:" + ("" if other else " none"))
for msg, c in other.most_common(8): print(f"  {c} x {msg}")
PY
if grep -qiE 'level=(warn|error)' "$tmp/devsim.err"; then
  echo "gsalt-devsim WARN/ERROR lines: $(grep -ciE 'level=(warn|error)' "$tmp/devsim.err")"; grep -iE 'level=(warn|error)' "$tmp/devsim.err" | head -3 | cut -c1-200
fi

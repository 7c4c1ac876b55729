#!/usr/bin/env bash
# bench-api.sh [N]: salt-api in front of a gsalt-master serving a
# `gsalt-minion --swarm N` (default 1000) on 127.0.0.1: gsalt-api and,
# when GSALT_SALT_SRC is set, Salt 3006's own salt-api (rest_cherrypy on
# Debian's python3-cherrypy3) side by side on the same master in the same
# run. Measures for each API:
#   * POST / local test.ping to '*' (N returns): the whole HTTP round trip
#     (median of $PINGS runs) and the API process's CPU per request;
#   * GET /minions/<id> (a grains.items job on one minion) and GET /keys
#     requests per second over $SECS seconds with $CLIENTS keep-alive
#     clients;
# and `gsalt -b 10% '*' test.ping` on the swarm (with `salt -b 10%`, the
# Python CLI, against the same master for the Salt column). Rows go to
# bench-lib.sh's bench_row; numbers never go into tests.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
pings=${PINGS:-5}
secs=${SECS:-10}
clients=${CLIENTS:-4}
bin=$PWD/bin
tmp=$(mktemp -d /tmp/gsalt-api-bench.XXXXXX)
pids=()
cleanup() { stop_groups "${pids[@]}"; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/swarm-lib.sh"
now() { date +%s.%N; }
gport=$(freeport); sport=$(freeport)
swarm_setup "$tmp" "user: $(id -un)
auto_accept: True
timeout: 30
external_auth:
  auto:
    bench:
      - '.*'
      - '@runner'
      - '@wheel'
      - '@jobs'
netapi_enable_clients: [local, local_async, local_batch, runner, wheel]
rest_cherrypy:
  port: $gport
  host: 127.0.0.1
  disable_ssl: True
  max_request_body_size: 1048576"
# salt-api reads its own copy (another port and log file).
mkdir -p "$tmp/etc/saltapi"
sed -e "s/^  port: $gport\$/  port: $sport/" -e "s|^log_file: .*|log_file: $tmp/saltapi.log|" \
  "$tmp/etc/master/master" >"$tmp/etc/saltapi/master"

setsid "$bin/gsalt-master" -c "$tmp/etc/master" -l error </dev/null >"$tmp/master.out" 2>&1 & pids+=($!)
until [ -e "$tmp/master/sock/master_event_pub.ipc" ]; do sleep 0.2; done
miss=$(swarm_keys_in "$tmp" swarm "$n")
setsid "$bin/gsalt-minion" -c "$tmp/etc/swarm" --swarm "$n" -l error </dev/null 2>>"$tmp/swarm.err" & pids+=($!)
ping_count() { "$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json --static -t 30 2>/dev/null | grep -c ': true' || true; }
t0=$(now)
until [ "$(ping_count)" -ge "$n" ]; do
  if [ "$(echo "$(now) - $t0 > 600" | bc)" = 1 ]; then echo "bench-api: the swarm did not answer"; tail -3 "$tmp/swarm.err"; exit 1; fi
  sleep 1
done
swarm_keys_out "$tmp" swarm
echo "bench-api: swarm of $n answers ($miss key pairs generated) after $(echo "$(now) - $t0" | bc) s"

setsid "$bin/gsalt-api" -c "$tmp/etc/master" -l error </dev/null >"$tmp/gsalt-api.out" 2>&1 & gapi=$!; pids+=($gapi)
apis=("gsalt-api $gport $gapi")
if [ -n "${GSALT_SALT_SRC:-}" ]; then
  shim=${GSALT_PYSHIM:-$(cd .. && pwd)/shared/peer/pyshim}
  [ -d "$shim" ] || shim=/work/shared/peer/pyshim
  PYTHONPATH=$GSALT_SALT_SRC:$shim setsid /usr/bin/python3 "$GSALT_SALT_SRC/scripts/salt-api" -c "$tmp/etc/saltapi" -l error \
    </dev/null >"$tmp/salt-api.out" 2>&1 & sapi=$!; pids+=($sapi)
  apis+=("salt-api $sport $sapi")
fi

# The load generator: Python's http.client with keep-alive connections.
cat >"$tmp/load.py" <<'PY'
import http.client, json, statistics, sys, threading, time
port, mode = int(sys.argv[1]), sys.argv[2]
def conn():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)
def req(c, method, path, body=None, token=None):
    h = {"Accept": "application/json"}
    if body is not None:
        h["Content-Type"] = "application/json"
        body = json.dumps(body)
    if token:
        h["X-Auth-Token"] = token
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    return r.status, data
deadline = time.time() + 120
while True:
    try:
        c = conn()
        st, data = req(c, "POST", "/login", {"username": "bench", "password": "x", "eauth": "auto"})
        if st == 200:
            tok = json.loads(data)["return"][0]["token"]
            break
    except OSError:
        pass
    if time.time() > deadline:
        sys.exit("no token from port %d" % port)
    time.sleep(0.5)
if mode == "ping":
    n, runs = int(sys.argv[3]), int(sys.argv[4])
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        st, data = req(c, "POST", "/", [{"client": "local", "tgt": "*", "fun": "test.ping"}], tok)
        walls.append(time.perf_counter() - t0)
        got = len(json.loads(data)["return"][0]) if st == 200 else 0
        if got < n:
            print("short: %d/%d (status %d)" % (got, n, st), file=sys.stderr)
    print("%.3f %s" % (statistics.median(walls), " ".join("%.2f" % w for w in walls)))
else:
    path, secs, clients = sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
    counts, errors = [0] * clients, [0] * clients
    stop = time.time() + secs
    def work(i):
        c = conn()
        while time.time() < stop:
            st, _ = req(c, "GET", path, None, tok)
            if st == 200:
                counts[i] += 1
            else:
                errors[i] += 1
    ts = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
    t0 = time.time()
    [t.start() for t in ts]
    [t.join() for t in ts]
    print("%.1f %d" % (sum(counts) / (time.time() - t0), sum(errors)))
PY

# api_cpu PID: CPU seconds of the API's process group (salt-api forks).
api_cpu() { local s=0 p; for p in $(pgrep -g "$1" 2>/dev/null || echo "$1"); do s=$(echo "$s + $(proc_cpu "$p" 2>/dev/null || echo 0)" | bc); done; echo "$s"; }
declare -A ping cpu mrps krps kcpu
for a in "${apis[@]}"; do
  read -r name port pid <<<"$a"
  # Warm up (login, first job) before measuring.
  python3 "$tmp/load.py" "$port" ping "$n" 1 >/dev/null
  c0=$(api_cpu "$pid")
  read -r med walls < <(python3 "$tmp/load.py" "$port" ping "$n" "$pings")
  c1=$(api_cpu "$pid")
  ping[$name]=$med
  cpu[$name]=$(echo "scale=1; ($c1 - $c0) * 1000 / $pings" | bc)
  read -r rps errs < <(python3 "$tmp/load.py" "$port" rps /minions/sw-0000 "$secs" "$clients")
  mrps[$name]=$rps
  c0=$(api_cpu "$pid")
  read -r krps_v kerrs < <(python3 "$tmp/load.py" "$port" rps /keys "$secs" "$clients")
  c1=$(api_cpu "$pid")
  krps[$name]=$krps_v
  kcpu[$name]=$(echo "scale=2; ($c1 - $c0) * 1000 / ($krps_v * $secs)" | bc)
  echo "$name: / local test.ping to $n: median $med s (runs $walls), API CPU ${cpu[$name]} ms per request; GET /minions/sw-0000 $rps req/s ($errs errors), GET /keys $krps_v req/s ($kerrs errors, API CPU ${kcpu[$name]} ms per request), $clients clients; load $(cut -d' ' -f1-3 /proc/loadavg)"
done

# Batches: gsalt -b 10% (and Salt's own CLI against the same master).
bwall() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now); printf '%.2f' "$(echo "$t1 - $t0" | bc)"; }
gb=$(bwall "$bin/gsalt" -c "$tmp/etc/master" -b 10% '*' test.ping)
sb=-
if [ -n "${GSALT_SALT_SRC:-}" ]; then
  sb=$(export PYTHONPATH=$GSALT_SALT_SRC:$shim; bwall /usr/bin/python3 "$GSALT_SALT_SRC/scripts/salt" -c "$tmp/etc/master" -b 10% '*' test.ping)
fi
echo "gsalt -b 10% '*' test.ping on $n: $gb s; salt -b 10% (Python CLI, same gsalt-master): $sb s"

bench_row "API: / local test.ping to $n swarm, whole HTTP round trip, s" "${ping[gsalt-api]}" "${ping[salt-api]:--}" "<= Salt"
bench_row "API: process CPU per / test.ping request ($n returns), ms" "${cpu[gsalt-api]}" "${cpu[salt-api]:--}" "<= Salt"
bench_row "API: GET /minions/<id> (grains.items job), $clients clients, req/s" "${mrps[gsalt-api]}" "${mrps[salt-api]:--}" ">= Salt"
bench_row "API: GET /keys, $clients clients, req/s" "${krps[gsalt-api]}" "${krps[salt-api]:--}" ">= Salt"
bench_row "API: process CPU per GET /keys request, ms" "${kcpu[gsalt-api]}" "${kcpu[salt-api]:--}" "<= Salt"
bench_row "gsalt -b 10% '*' test.ping, $n swarm, whole CLI, s" "$gb" "$sb" "<= Salt"

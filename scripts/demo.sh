#!/usr/bin/env bash
# demo.sh: a gsalt master, two gsalt minions and a gsalt-proxy serving two
# simulated switches on 127.0.0.1 in a temporary directory: keys accepted
# with gsalt-key, jobs, states and net.* run with gsalt; as root with
# libvirtd and qemu installed, a hypervisor minion on a private libvirtd
# and the virt runner; then everything is stopped and removed. Run through `make demo` (builds bin/).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/bin
tmp=$(mktemp -d /tmp/gsalt-demo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Free ports on loopback for publish, return, the device simulator (two
# consecutive ports: dev and dev+1) and the API, all held until printed so
# that none of them is another's. They are taken below the kernel's
# ephemeral range (ip_local_port_range), as the tests' proc.FreePorts
# does: the device simulator and the API bind theirs a minute later, and a
# port from the ephemeral range may by then be the local end of any
# outgoing connection on the machine (a loaded run lost dev+1 that way:
# "bind: address already in use").
read -r pub ret dev api < <(python3 - <<'PY'
import random, socket
held = []
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    low = 0
def bind(port=None):
    for _ in range(2000):
        p = port if port is not None else (random.randrange(10000, low) if low > 12000 else 0)
        x = socket.socket()
        try:
            x.bind(("127.0.0.1", p))
        except OSError:
            x.close()
            if port is not None:
                raise
            continue
        held.append(x)
        return x.getsockname()[1]
    raise SystemExit("demo: no free loopback port")
pub, ret = bind(), bind()
while True:
    dev = bind()
    try:
        bind(dev + 1)
        break
    except OSError:
        continue
print(pub, ret, dev, bind())
PY
)
[ -n "${api:-}" ] || { echo "demo: could not pick free ports" >&2; exit 1; }

mkdir -p "$tmp/etc/master"
cat >"$tmp/etc/master/master" <<CONF
root_dir: $tmp/master
pki_dir: $tmp/master/pki
cachedir: $tmp/master/cache
sock_dir: $tmp/master/sock
log_file: $tmp/master/log/master
interface: 127.0.0.1
publish_port: $pub
ret_port: $ret
file_roots: {base: [$tmp/srv/salt]}
pillar_roots: {base: [$tmp/srv/pillar]}
# gsalt-api (salt-api's rest_cherrypy options) with a demo eauth user.
external_auth:
  auto:
    demo:
      - '*':
        - test.*
        - grains.item
      - '@runner'
netapi_enable_clients: [local, local_async, runner]
rest_cherrypy:
  host: 127.0.0.1
  port: $api
  disable_ssl: True
CONF
# A small SLS tree and pillar: a motd rendered with Jinja from grains and
# pillar, applied with state.apply.
mkdir -p "$tmp/srv/salt/motd" "$tmp/srv/pillar"
printf "base:\n  '*':\n    - motd\n" >"$tmp/srv/salt/top.sls"
printf "base:\n  '*':\n    - site\n" >"$tmp/srv/pillar/top.sls"
printf "site: demo-lab\nadmins: [alice, bob]\n" >"$tmp/srv/pillar/site.sls"
cat >"$tmp/srv/salt/motd/init.sls" <<'SLS'
motd:
  file.managed:
    - name: {{ grains['demo_root'] }}/motd
    - source: salt://motd/motd.jinja
    - template: jinja
    - makedirs: True
SLS
cat >"$tmp/srv/salt/motd/motd.jinja" <<'TPL'
Welcome to {{ grains['id'] }} ({{ grains['role'] }}) at {{ pillar['site'] }}
Admins: {{ pillar['admins'] | join(', ') }}
TPL
for id in web1 db1; do
  mkdir -p "$tmp/etc/$id"
  cat >"$tmp/etc/$id/minion" <<CONF
id: $id
root_dir: $tmp/$id
pki_dir: $tmp/$id/pki
cachedir: $tmp/$id/cache
sock_dir: $tmp/$id/sock
log_file: $tmp/$id/log/minion
master: 127.0.0.1
master_port: $ret
acceptance_wait_time: 1
grains:
  role: $id
  demo_root: $tmp/$id/files
CONF
done

say() { printf '\n\033[1m$ %s\033[0m\n' "${*#$bin/}"; "$@"; }

# alive NAME PID [LOG]: stop the demo, showing LOG, when NAME has exited
# (without LOG its error went to the terminal above).
alive() {
  kill -0 "$2" 2>/dev/null && return 0
  if [ -n "${3:-}" ]; then
    echo "demo: $1 exited; its output:" >&2
    cat "$3" >&2
  else
    echo "demo: $1 exited (its error is above)" >&2
  fi
  exit 1
}
# listening PORT: something accepts connections on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

echo "starting gsalt-master (publish $pub, return $ret) and minions web1, db1"
"$bin/gsalt-master" -c "$tmp/etc/master" -l error & masterpid=$!; pids+=($masterpid)
for _ in $(seq 150); do
  listening "$ret" && listening "$pub" && break
  alive gsalt-master "$masterpid"
  sleep 0.2
done
alive gsalt-master "$masterpid"
for id in web1 db1; do "$bin/gsalt-minion" -c "$tmp/etc/$id" -l critical & pids+=($!); done

# Wait until both keys are pending.
for _ in $(seq 50); do
  n=$("$bin/gsalt-key" -c "$tmp/etc/master" -l un --out json | grep -c '"' || true)
  [ "$n" -ge 3 ] && break
  sleep 0.2
done
say "$bin/gsalt-key" -c "$tmp/etc/master" -L
say "$bin/gsalt-key" -c "$tmp/etc/master" -A -y

# Wait until both minions answer.
for _ in $(seq 50); do
  if "$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json -t 2 2>/dev/null | grep -q '"db1": true' &&
     "$bin/gsalt" -c "$tmp/etc/master" '*' test.ping --out json -t 2 2>/dev/null | grep -q '"web1": true'; then break; fi
  sleep 0.3
done
say "$bin/gsalt" -c "$tmp/etc/master" '*' test.ping
say "$bin/gsalt" -c "$tmp/etc/master" '*' grains.item os role
say "$bin/gsalt" -c "$tmp/etc/master" -G 'role:web1' cmd.run 'echo hello from $(id -un)'
say "$bin/gsalt" -c "$tmp/etc/master" '*' test.arg 1 two k=v --out json
say "$bin/gsalt-run" -c "$tmp/etc/master" manage.status
say "$bin/gsalt" -c "$tmp/etc/master" web1 pillar.items
say "$bin/gsalt" -c "$tmp/etc/master" web1 state.apply
say "$bin/gsalt" -c "$tmp/etc/master" '*' state.apply test=True --state-output=terse
say cat "$tmp/web1/files/motd"

# The REST API: gsalt-api in front of the master, as salt-api's curl
# examples use it: log in with eauth, then run a job with the token.
echo
echo "starting gsalt-api on 127.0.0.1:$api"
"$bin/gsalt-api" -c "$tmp/etc/master" -l info 2>"$tmp/api.log" & apipid=$!; pids+=($apipid)
http() { # METHOD PATH [TOKEN] [FORM...]: curl when present, else python3
  local method=$1 path=$2 token=${3:-}; shift 3 || shift $#
  if command -v curl >/dev/null; then
    local args=(-sS --connect-timeout 5 -m 60 -X "$method" -H 'Accept: application/json')
    [ -n "$token" ] && args+=(-H "X-Auth-Token: $token")
    for kv in "$@"; do args+=(--data-urlencode "$kv"); done
    curl "${args[@]}" "http://127.0.0.1:$api$path"; echo
  else
    python3 - "$method" "http://127.0.0.1:$api$path" "$token" "$@" <<'PY'
import sys, urllib.request, urllib.parse
m, url, tok, *kv = sys.argv[1:]
data = urllib.parse.urlencode([x.split("=", 1) for x in kv]).encode() if kv else None
req = urllib.request.Request(url, data=data, method=m, headers={"Accept": "application/json"})
if tok: req.add_header("X-Auth-Token", tok)
print(urllib.request.urlopen(req, timeout=60).read().decode())
PY
  fi
}
# Ready when it answers GET / with salt-api's welcome (a port answering
# something else is not gsalt-api); it stops the demo with its log if it
# exits (e.g. its port was taken) or does not answer within 30 s.
api_up=
for _ in $(seq 150); do
  welcome=$(http GET / "" 2>/dev/null) || true
  [[ $welcome == *'"clients"'* ]] && { api_up=1; break; }
  alive gsalt-api "$apipid" "$tmp/api.log"
  sleep 0.2
done
if [ -z "$api_up" ]; then
  echo "demo: gsalt-api (running) does not answer GET / on 127.0.0.1:$api within 30 s; its log:" >&2
  cat "$tmp/api.log" >&2
  ss -ltnp "( sport = :$api )" >&2 || true
  exit 1
fi
printf '\n\033[1m$ curl -sS -H "Accept: application/json" http://127.0.0.1:%s/login -d username=demo -d password=demo -d eauth=auto\033[0m\n' "$api"
login=$(http POST /login "" username=demo password=demo eauth=auto) || true
echo "$login"
token=$(printf '%s' "$login" | python3 -c 'import json,sys; print(json.load(sys.stdin)["return"][0]["token"])' 2>/dev/null) || {
  echo "demo: gsalt-api's login gave no token (reply above); its log:" >&2
  cat "$tmp/api.log" >&2
  exit 1
}
printf '\n\033[1m$ curl -sS -H "Accept: application/json" -H "X-Auth-Token: %s" http://127.0.0.1:%s/ -d client=local -d tgt="*" -d fun=test.ping\033[0m\n' "$token" "$api"
http POST / "$token" client=local 'tgt=*' fun=test.ping
printf '\n\033[1m$ curl ... -d client=local -d tgt="*" -d fun=cmd.run -d arg=id   (outside the demo user'"'"'s ACL: refused)\033[0m\n'
http POST / "$token" client=local 'tgt=*' fun=cmd.run arg=id || true

# Network devices: two simulated IOS-XE switches (gsalt-devsim, SSH on
# loopback) served by one gsalt-proxy process as proxy minions sw1 and sw2;
# their proxy: pillar selects the napalm proxytype.
printf "base:\n  '*':\n    - site\n  'sw*':\n    - sw\n" >"$tmp/srv/pillar/top.sls"
cat >"$tmp/srv/pillar/sw.sls" <<SLS
proxy:
  proxytype: napalm
  driver: ios
  host: 127.0.0.1
  username: admin
  password: admin
  optional_args:
    port: {{ $dev + (grains['id'][2:] | int) - 1 }}
SLS
cat >"$tmp/etc/master/proxy" <<CONF
master: 127.0.0.1
master_port: $ret
root_dir: $tmp/proxy
acceptance_wait_time: 1
CONF
echo
echo "starting gsalt-devsim (2 IOS-XE devices on ports $dev-$((dev + 1))) and gsalt-proxy for sw1, sw2"
"$bin/gsalt-devsim" --base-port "$dev" --devices 2 --platform ios --user admin --password admin --log-level error >"$tmp/devsim.log" 2>&1 & devsimpid=$!; pids+=($devsimpid)
# It prints the line "gsalt-devsim: 2 ios devices on ..." once both listen.
for _ in $(seq 150); do
  grep -q 'devices on' "$tmp/devsim.log" && break
  alive gsalt-devsim "$devsimpid" "$tmp/devsim.log"
  sleep 0.2
done
grep -q 'devices on' "$tmp/devsim.log" || { echo "demo: gsalt-devsim did not listen within 30 s; its log:" >&2; cat "$tmp/devsim.log" >&2; exit 1; }
"$bin/gsalt-proxy" -c "$tmp/etc/master" --proxyid sw1 --proxyid sw2 -l critical & proxypid=$!; pids+=($proxypid)
for _ in $(seq 100); do
  n=$("$bin/gsalt-key" -c "$tmp/etc/master" -l un --out json | grep -c '"sw' || true)
  [ "$n" -ge 2 ] && break
  alive gsalt-proxy "$proxypid"
  sleep 0.2
done
say "$bin/gsalt-key" -c "$tmp/etc/master" -A -y
for _ in $(seq 100); do
  [ "$("$bin/gsalt" -c "$tmp/etc/master" 'sw*' test.ping --out json -t 3 2>/dev/null | grep -c true || true)" -ge 2 ] && break
  sleep 0.3
done
say "$bin/gsalt" -c "$tmp/etc/master" 'sw*' test.ping
say "$bin/gsalt" -c "$tmp/etc/master" sw1 grains.get model --out=json
say "$bin/gsalt" -c "$tmp/etc/master" -G 'vendor:Cisco' grains.item version serial
say "$bin/gsalt" -c "$tmp/etc/master" sw1 net.load_config text='ntp server 10.0.0.1' test=True
say "$bin/gsalt" -c "$tmp/etc/master" sw2 net.load_config text='ntp server 10.0.0.1' commit=True
say "$bin/gsalt" -c "$tmp/etc/master" sw2 net.cli 'show running-config | include ntp'
# Salt's commit confirmed: committed now, reverted by the proxy's scheduler
# unless net.confirm_commit is called (revert_in takes minutes; <n>s is gsalt's).
say "$bin/gsalt" -c "$tmp/etc/master" sw1 net.load_config text='ntp server 10.0.0.7' revert_in=3s
say "$bin/gsalt" -c "$tmp/etc/master" sw1 schedule.list show_all=True
sleep 4
say "$bin/gsalt" -c "$tmp/etc/master" sw1 net.cli 'show running-config | include ntp'

# Salt Virt: a hypervisor minion hv1 on a private libvirtd (root only; it
# touches nothing of the host's libvirt), driven by the virt runner as in
# Salt's "Salt as a Cloud Controller" guide: a guest defined from an image
# on the file server (start=False: no boot, so it is quick), queried, purged.
. scripts/virt-lib.sh
echo
virt_t0=$SECONDS
why=$(virt_why_not)
if [ -n "$why" ]; then
  echo "virt part skipped: a private libvirtd cannot run here ($why)"
elif ! virt_start_libvirtd "$tmp/libvirt"; then
  echo "virt part skipped: the private libvirtd did not start ($tmp/libvirt/libvirtd.log)"
else
  cleanup_virt() { virt_stop_libvirtd; cleanup; }
  trap cleanup_virt EXIT
  echo "started a private libvirtd ($virt_uri) and the hypervisor minion hv1"
  mkdir -p "$tmp/srv/salt/images" "$tmp/etc/hv1"
  qemu-img create -q -f qcow2 "$tmp/srv/salt/images/demo.qcow2" 64M
  cat >"$tmp/etc/hv1/minion" <<CONF
id: hv1
root_dir: $tmp/hv1
pki_dir: $tmp/hv1/pki
cachedir: $tmp/hv1/cache
sock_dir: $tmp/hv1/sock
log_file: $tmp/hv1/log/minion
master: 127.0.0.1
master_port: $ret
acceptance_wait_time: 1
grains:
  virtual: physical
virt:
  connection:
    uri: $virt_uri
  images: $tmp/hv1/images
CONF
  "$bin/gsalt-minion" -c "$tmp/etc/hv1" -l critical & pids+=($!)
  for _ in $(seq 100); do
    "$bin/gsalt-key" -c "$tmp/etc/master" -l un --out json | grep -q '"hv1"' && break
    sleep 0.2
  done
  "$bin/gsalt-key" -c "$tmp/etc/master" -a hv1 -y >/dev/null
  for _ in $(seq 100); do
    "$bin/gsalt" -c "$tmp/etc/master" hv1 test.ping --out json -t 3 2>/dev/null | grep -q true && break
    sleep 0.3
  done
  say "$bin/gsalt-run" -c "$tmp/etc/master" virt.host_info
  say "$bin/gsalt-run" -c "$tmp/etc/master" virt.init demo-vm 1 128 salt://images/demo.qcow2 seed=False start=False
  say "$bin/gsalt-run" -c "$tmp/etc/master" virt.list
  say "$bin/gsalt-run" -c "$tmp/etc/master" virt.query
  say "$bin/gsalt-run" -c "$tmp/etc/master" virt.purge demo-vm
  say "$bin/gsalt-run" -c "$tmp/etc/master" virt.list
  echo "(virt part: $((SECONDS - virt_t0)) s)"
fi

echo
echo "demo done: stopping the master and minions, removing $tmp"

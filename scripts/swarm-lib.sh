# swarm-lib.sh: shared by bench-swarm.sh and bench-swarm-salt.sh (sourced).
# swarm_setup DIR [EXTRA_MASTER_YAML]: picks two free loopback ports (sets
# $pub and $ret) and writes DIR/etc/master/master and DIR/etc/swarm/minion
# (a swarm minion with base id "sw" pointing at that master) plus
# DIR/etc/swarm2/minion (base id "sx") for a second swarm process.
swarm_setup() {
  local tmp=$1 extra=${2:-}
  read -r pub ret < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  mkdir -p "$tmp/etc/master" "$tmp/etc/swarm" "$tmp/etc/swarm2"
  cat >"$tmp/etc/master/master" <<CONF
root_dir: $tmp/master
pki_dir: $tmp/master/pki
cachedir: $tmp/master/cache
sock_dir: $tmp/master/sock
log_file: $tmp/master/log
interface: 127.0.0.1
publish_port: $pub
ret_port: $ret
$extra
CONF
  local d base
  for d in swarm swarm2; do
    base=sw; [ "$d" = swarm2 ] && base=sx
    cat >"$tmp/etc/$d/minion" <<CONF
id: $base
root_dir: $tmp/$d
pki_dir: $tmp/$d/pki
cachedir: $tmp/$d/cache
sock_dir: $tmp/$d/sock
log_file: $tmp/$d/log
master: 127.0.0.1
master_port: $ret
acceptance_wait_time: 2
CONF
  done
}

# swarm_keycache: the scratch folder (outside the repo) where the bench
# keeps the swarm identities' RSA key pairs between runs.
swarm_keycache() {
  echo "${GSALT_BENCH_KEYS:-${XDG_CACHE_HOME:-$HOME/.cache}/gsalt-bench/swarm-keys}"
}

# swarm_keys_in DIR NAME N: copies the cached key pairs of the N
# identities of swarm NAME (swarm: sw-0000 ..., swarm2: sx-0000 ...) into
# DIR/NAME/pki/<id>/; prints how many were missing (to be generated).
# swarm_keys_out DIR NAME: saves the pairs the swarm generated.
swarm_keys() {
  python3 - "$(swarm_keycache)" "$@" <<'PY'
import os, shutil, sys
cache, op, tmp, name = sys.argv[1:5]
pki = os.path.join(tmp, name, "pki")
if op == "in":
    base = "sx" if name == "swarm2" else "sw"
    missing = 0
    for i in range(int(sys.argv[5])):
        ident = "%s-%04d" % (base, i)
        src = os.path.join(cache, ident)
        if not os.path.isfile(os.path.join(src, "minion.pem")):
            missing += 1
            continue
        dst = os.path.join(pki, ident)
        os.makedirs(dst, exist_ok=True)
        for f in ("minion.pem", "minion.pub"):
            shutil.copy2(os.path.join(src, f), dst)
    print(missing)
else:
    for ident in os.listdir(pki) if os.path.isdir(pki) else []:
        src, dst = os.path.join(pki, ident), os.path.join(cache, ident)
        if os.path.isfile(os.path.join(dst, "minion.pem")) or not os.path.isfile(os.path.join(src, "minion.pem")):
            continue
        os.makedirs(dst, exist_ok=True)
        for f in ("minion.pem", "minion.pub"):
            shutil.copy2(os.path.join(src, f), dst)
PY
}
swarm_keys_in() { swarm_keys in "$@"; }
# swarm_preaccept DIR NAME PKI: copies the public keys of swarm NAME's
# identities (already in DIR/NAME/pki) into the master's PKI/minions, as an
# image seeded with pre-accepted keys would; prints how many. Keeps a real
# Salt master out of its auto_accept write race, where a minion retrying
# its first auth under a 1,000-minion storm can read a half-written key
# file and be rejected.
swarm_preaccept() {
  python3 - "$1/$2/pki" "$3/minions" <<'PY'
import os, shutil, sys
src, dst = sys.argv[1:3]
os.makedirs(dst, exist_ok=True)
n = 0
for ident in sorted(os.listdir(src)) if os.path.isdir(src) else []:
    pub = os.path.join(src, ident, "minion.pub")
    if os.path.isfile(pub):
        tmp = os.path.join(os.path.dirname(dst), ".preaccept.tmp")
        shutil.copyfile(pub, tmp)
        os.replace(tmp, os.path.join(dst, ident))  # never a half-written key
        n += 1
print(n)
PY
}
swarm_keys_out() { swarm_keys out "$@"; }

# swarm_sizes N: the identities per swarm process ("N" up to 5000, two
# halves above, or always with SWARM_PROCS=2: checks the 10,000 path of
# the scripts with a small N).
swarm_sizes() {
  if [ "$1" -gt 5000 ] || [ "${SWARM_PROCS:-1}" = 2 ]; then echo "$(($1 / 2)) $(($1 - $1 / 2))"; else echo "$1"; fi
}

# swarm_source K: the --swarm-source-net arguments of swarm process K
# (0, 1): its identities connect from their own loopback addresses,
# 127.(K+1).0.1 on, as minions on as many hosts would. From one address
# every connection of every identity takes an ephemeral port of the same
# range, and at 10,000 identities the kernel's search for a free port
# (__inet_hash_connect) was ~47% of the machine's CPU in the auth storm
# (perf). BENCH_SOURCE_NET=0 connects them all from 127.0.0.1.
swarm_source() {
  [ "${BENCH_SOURCE_NET:-1}" = 0 ] && return
  printf '%s\n' --swarm-source-net "127.$(($1 + 1)).0.0/16"
}

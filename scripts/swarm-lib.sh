# swarm-lib.sh: shared by bench-swarm.sh and bench-swarm-salt.sh (sourced).
# swarm_setup DIR [EXTRA_MASTER_YAML]: picks two free loopback ports (sets
# $pub and $ret) and writes DIR/etc/master/master and DIR/etc/swarm/minion
# (a swarm minion with base id "sw" pointing at that master).
swarm_setup() {
  local tmp=$1 extra=${2:-}
  read -r pub ret < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
  mkdir -p "$tmp/etc/master" "$tmp/etc/swarm"
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
  cat >"$tmp/etc/swarm/minion" <<CONF
id: sw
root_dir: $tmp/swarm
pki_dir: $tmp/swarm/pki
cachedir: $tmp/swarm/cache
sock_dir: $tmp/swarm/sock
log_file: $tmp/swarm/log
master: 127.0.0.1
master_port: $ret
acceptance_wait_time: 2
CONF
}

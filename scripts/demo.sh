#!/usr/bin/env bash
# demo.sh: shows what gsalt can do today, in a temporary directory, and
# cleans up after itself. Run through `make demo` (which builds bin/ first).
#
# Today that is key management (gsalt-key, salt-key compatible) on a master
# pki_dir. The master and minion daemons are not written yet; when they are,
# this demo starts a master and minions on 127.0.0.1, accepts their keys and
# runs jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$PWD/bin
tmp=$(mktemp -d /tmp/gsalt-demo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/etc"
cat >"$tmp/etc/master" <<CONF
root_dir: $tmp
pki_dir: $tmp/pki
cachedir: $tmp/cache
sock_dir: $tmp/sock
log_file: $tmp/log/master
interface: 127.0.0.1
CONF

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

say "$bin/gsalt-key" -c "$tmp/etc" -L
# Two minions as they appear after their first _auth: keys pending.
for id in web1 db1; do
  "$bin/gsalt-key" --gen-keys "$id" --gen-keys-dir "$tmp/minion-keys" >/dev/null
  cp "$tmp/minion-keys/$id.pub" "$tmp/pki/minions_pre/$id"
done
say "$bin/gsalt-key" -c "$tmp/etc" -L
say "$bin/gsalt-key" -c "$tmp/etc" -a web1 -y
say "$bin/gsalt-key" -c "$tmp/etc" -r db1 -y
say "$bin/gsalt-key" -c "$tmp/etc" -L --out json
say "$bin/gsalt-key" -c "$tmp/etc" -F
echo
echo "demo done: keys accepted/rejected in $tmp (removed now)"

# shellcheck shell=bash
# Shared by demo.sh and bench-virt.sh: a private libvirtd for the virt
# parts, started as virt/virttest starts it in the tests (as root, in its
# own mount namespace, with its own configuration, socket and state, QEMU
# guests run as root without a security driver, TCG when there is no KVM),
# so nothing of the host's libvirt is touched.

# virt_why_not: prints why a private libvirtd cannot run here (nothing
# when it can).
virt_why_not() {
  if [ "$(id -u)" != 0 ]; then echo "not root"; return; fi
  local tool
  for tool in /usr/sbin/libvirtd unshare virsh qemu-system-x86_64 qemu-img; do
    if ! command -v "$tool" >/dev/null 2>&1; then echo "no $tool (apt-get install libvirt-daemon-system qemu-system-x86 qemu-utils)"; return; fi
  done
}

# virt_start_libvirtd DIR: starts a private libvirtd under DIR and waits
# until it answers; sets virt_uri and virt_pid (kill it to stop it).
virt_start_libvirtd() {
  local dir=$1
  mkdir -p "$dir/etc" "$dir/sock"
  cat >"$dir/etc/libvirtd.conf" <<CONF
unix_sock_dir = "$dir/sock"
unix_sock_group = "root"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:$dir/libvirtd.log"
host_uuid = "$(cat /proc/sys/kernel/random/uuid)"
CONF
  cat >"$dir/etc/qemu.conf" <<'CONF'
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
stdio_handler = "file"
CONF
  # unshare execs sh, which execs libvirtd: $! is libvirtd's pid.
  unshare -m --propagation private sh -c '
set -e
for d in /run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt; do
  mkdir -p "$d"; mount -t tmpfs tmpfs "$d"
done
mount --bind "$1/etc" /etc/libvirt
exec /usr/sbin/libvirtd --config "$1/etc/libvirtd.conf" --pid-file "$1/libvirtd.pid"
' sh "$dir" >"$dir/stdout.log" 2>&1 &
  virt_pid=$!
  virt_uri="qemu:///system?socket=$dir/sock/libvirt-sock"
  local _
  for _ in $(seq 300); do
    if [ -S "$dir/sock/libvirt-sock" ] && timeout 20 virsh -c "$virt_uri" version >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$virt_pid" 2>/dev/null; then
      echo "libvirtd exited: $(tail -5 "$dir/stdout.log")" >&2; return 1
    fi
    sleep 0.2
  done
  echo "libvirtd did not answer within 60s" >&2
  return 1
}

# virt_stop_libvirtd: destroys the guests still running and stops the
# daemon started by virt_start_libvirtd.
virt_stop_libvirtd() {
  [ -n "${virt_pid:-}" ] || return 0
  local vm
  for vm in $(virsh -c "$virt_uri" list --name 2>/dev/null); do virsh -c "$virt_uri" destroy "$vm" >/dev/null 2>&1 || true; done
  kill "$virt_pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$virt_pid" 2>/dev/null || break; sleep 0.1; done
  virt_pid=
}

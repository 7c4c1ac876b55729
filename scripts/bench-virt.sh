#!/usr/bin/env bash
# bench-virt.sh: Salt Virt numbers of issue 12 on a private libvirtd (TCG,
# no KVM here): the time from `gsalt-run virt.init vmb 1 256
# salt://images/tiny.qcow2` (the e2e test's bootable image: the host's
# Debian kernel, a busybox initramfs and a static gsalt-minion, seeded
# with a pre-accepted key) to the guest's first answered test.ping, and
# the hypervisor gsalt-minion's RSS idle, after the boot, and its peak;
# with GSALT_SALT_SRC, a real Salt 3006 salt-minion hypervisor on the same
# libvirtd and the RSS of both after one virt.full_info job.
# Run by virt/bench_test.go's TestBenchVirtInitToPing (it reuses the e2e
# lab and image builder). Salt's column is "-": Salt's seed.apply needs
# libguestfs or qemu-nbd (no nbd module here), so a Salt hypervisor cannot
# seed a guest in this sandbox. The 1 GiB image cached with cp.cache_file
# (virt.init's image fetch) is bench-cp.sh's row, gsalt vs Salt.
# Needs root, libvirtd, qemu, busybox-static, extlinux; prints one line and
# exits 0 when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
. scripts/virt-lib.sh
why=$(virt_why_not)
if [ -n "$why" ]; then
  echo "bench-virt: skipped: a private libvirtd cannot run here ($why)"
  bench_row "virt.init to the guest's first test.ping (TCG), s" "skipped ($why)" "n/a (Salt's seed needs libguestfs or qemu-nbd)" "-"
  exit 0
fi
echo "bench-virt: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(GSALT_BENCH_VIRT=1 go test -tags "${TAGS:-libvirt_dlopen}" -count=1 -timeout 20m -run '^TestBenchVirtInitToPing$' -v ./virt/ 2>&1) || {
  echo "$out" | tail -40
  echo "bench-virt: the benchmark failed" >&2
  exit 1
}
if echo "$out" | grep -q -- '--- SKIP'; then
  why=$(echo "$out" | grep -A1 -- '--- SKIP' | tail -1 | sed 's/^ *//')
  echo "bench-virt: skipped: $why"
  bench_row "virt.init to the guest's first test.ping (TCG), s" "skipped ($why)" "n/a (Salt's seed needs libguestfs or qemu-nbd)" "-"
  exit 0
fi
val() { echo "$out" | sed -n "s/^BENCH $1=//p" | tail -1; }
echo "$out" | grep '^BENCH '
echo "bench-virt: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_row "virt.init to the guest's first test.ping (TCG, $(val image_mib) MiB seeded qcow2), s" \
  "$(val first_ping_s) (virt.init returned after $(val init_s))" "n/a (Salt's seed needs libguestfs or qemu-nbd)" "-"
bench_row "hypervisor minion RSS idle / after a guest boot / peak, MiB" \
  "$(val hv_rss_idle_mib) / $(val hv_rss_after_mib) / $(val hv_hwm_mib)" "n/a (no Salt guest boot, as above)" "-"
bench_row "hypervisor minion RSS after virt.full_info (process tree), MiB" \
  "$(val hv_rss_full_info_mib)" "$(val salt_hv_rss_mib)" "-"

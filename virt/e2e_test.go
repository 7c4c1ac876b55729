//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"github.com/gsalt/gsalt/virt/virttest"
)

// guestModules are the Debian kernel modules the guest's initramfs needs
// (virtio disk and network, ext2 through ext4); their dependencies are
// added from modinfo, in load order.
var guestModules = []string{"virtio_pci", "virtio_blk", "virtio_net", "crc32c_generic", "ext4"}

// moduleFiles returns the module files for names and their dependencies,
// dependencies first ("" path: built into the kernel).
func moduleFiles(t *testing.T, kver string, names []string) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		deps, err := exec.Command("modinfo", "-k", kver, "-F", "depends", n).Output()
		if err != nil {
			return // built in
		}
		for _, d := range strings.Split(strings.TrimSpace(string(deps)), ",") {
			if d != "" {
				visit(d)
			}
		}
		path, err := exec.Command("modinfo", "-k", kver, "-n", n).Output()
		if err != nil || !strings.HasSuffix(strings.TrimSpace(string(path)), ".ko") {
			if err == nil && strings.TrimSpace(string(path)) != "(builtin)" {
				t.Skipf("virt: module %s is compressed (%s); busybox insmod cannot load it; skipping the guest boot test", n, strings.TrimSpace(string(path)))
			}
			return
		}
		out = append(out, strings.TrimSpace(string(path)))
	}
	for _, n := range names {
		visit(n)
	}
	return out
}

// guestInit is the initramfs /init: load the modules, mount the disk,
// configure QEMU user networking (the host is 10.0.2.2) and run the
// seeded gsalt-minion from the disk.
const guestInit = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in %s; do insmod /lib/modules/$m; done
i=0
while [ ! -b /dev/vda1 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
mount -t ext2 /dev/vda1 /mnt
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
for d in proc sys dev tmp; do mkdir -p /mnt/$d; done
mount --bind /proc /mnt/proc
mount --bind /sys /mnt/sys
mount --bind /dev /mnt/dev
echo "gsalt-guest: starting gsalt-minion"
exec chroot /mnt /usr/bin/gsalt-minion -c /etc/salt -l info
`

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// hostBins builds the host side's commands (without -race, on cgo for
// libvirt, as `make build` does) and returns their folder: once for all
// tests of every package (proc.BuildWith), so the virt tests that run
// daemons share one build.
func hostBins(t *testing.T) string {
	t.Helper()
	return proc.BuildWith(t, hostBuild, hostCommands...)
}

var (
	hostBuild    = proc.BuildOptions{Flags: []string{"-tags", "libvirt_dlopen"}, Env: []string{"CGO_ENABLED=1"}}
	hostCommands = []string{"./cmd/gsalt-master", "./cmd/gsalt-minion", "./cmd/gsalt", "./cmd/gsalt-run", "./cmd/gsalt-key"}
	guestBuild   = proc.BuildOptions{Flags: []string{"-ldflags=-s -w"}, Env: []string{"CGO_ENABLED=0"}}
)

// guestBins builds the guest's gsalt-minion, static (no cgo: the guest
// has no libc) and stripped, and returns its folder (proc.BuildWith).
func guestBins(t *testing.T) string {
	t.Helper()
	return proc.BuildWith(t, guestBuild, "./cmd/gsalt-minion")
}

func freePort(t *testing.T) int {
	t.Helper()
	return proc.FreePort(t)
}

// buildGuestImage makes the bootable qcow2 guest image: extlinux, the
// host's Debian kernel, an initramfs with busybox and the modules, and a
// static gsalt-minion on the disk.
func buildGuestImage(t *testing.T, dest string) {
	t.Helper()
	kernels, _ := filepath.Glob("/boot/vmlinuz-*")
	if len(kernels) == 0 {
		t.Skip("virt: no /boot/vmlinuz-* kernel on this host (apt-get install linux-image-amd64); skipping the guest boot test")
	}
	sort.Strings(kernels)
	kernel := kernels[len(kernels)-1]
	kver := strings.TrimPrefix(filepath.Base(kernel), "vmlinuz-")
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("virt: busybox is not installed (apt-get install busybox-static); skipping the guest boot test")
	}
	if out, _ := exec.Command("ldd", busybox).CombinedOutput(); !bytes.Contains(out, []byte("not a dynamic")) {
		t.Skip("virt: busybox is not static (apt-get install busybox-static); skipping the guest boot test")
	}
	for _, tool := range []string{"cpio", "gzip", "extlinux"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("virt: %s is not installed; skipping the guest boot test", tool)
		}
	}
	work := t.TempDir()
	ird := filepath.Join(work, "initramfs")
	if _, err := exec.LookPath("modinfo"); err != nil {
		t.Skip("virt: modinfo (kmod) is not installed; skipping the guest boot test")
	}
	var mods []string
	for _, src := range moduleFiles(t, kver, guestModules) {
		virttestCopy(t, src, filepath.Join(ird, "lib", "modules", filepath.Base(src)), 0o644)
		mods = append(mods, filepath.Base(src))
	}
	virttestCopy(t, busybox, filepath.Join(ird, "bin", "busybox"), 0o755)
	for _, d := range []string{"proc", "sys", "dev", "mnt", "tmp"} {
		if err := os.MkdirAll(filepath.Join(ird, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ird, "init"), []byte(fmt.Sprintf(guestInit, strings.Join(mods, " "))), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "root")
	for _, d := range []string{"boot", "usr/bin", "etc/salt", "tmp", "var/cache", "var/log", "var/run", "run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cpio := exec.Command("sh", "-c", "find . | cpio -o -H newc --quiet | gzip -1 > "+filepath.Join(root, "boot", "initrd.gz"))
	cpio.Dir = ird
	if out, err := cpio.CombinedOutput(); err != nil {
		t.Fatalf("initramfs: %v %s", err, out)
	}
	virttestCopy(t, kernel, filepath.Join(root, "boot", "vmlinuz"), 0o644)
	virttestCopy(t, filepath.Join(guestBins(t), "gsalt-minion"), filepath.Join(root, "usr", "bin", "gsalt-minion"), 0o755)
	raw := filepath.Join(work, "disk.raw")
	virttest.BuildRaw(t, raw, virttest.Image{Root: root, SizeMB: 112, Boot: true, Append: "console=ttyS0 panic=5 quiet"})
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		t.Fatal(err)
	}
	virttestRun(t, "qemu-img", "convert", "-O", "qcow2", raw, dest)
}

func virttestCopy(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

// e2eLab is gsalt-master plus a hypervisor gsalt-minion on a private
// libvirtd.
type e2eLab struct {
	base, bin, masterConf, images string
	pub, ret                      int
	d                             *virttest.Daemon
}

func (l *e2eLab) cli(t *testing.T, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(l.bin, name), append([]string{"-c", l.masterConf}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// hvMinionConf is the configuration of a hypervisor minion id (gsalt's
// or Salt's) with its folders under dir, joining the master on ports ret
// and pub, its virt connection on uri; the virt block is left open for
// more keys (two-space indented lines) before any further top-level ones.
func hvMinionConf(id, dir string, ret, pub int, uri string) string {
	return fmt.Sprintf(`id: %[1]s
root_dir: %[2]s
pki_dir: %[2]s/pki
cachedir: %[2]s/cache
sock_dir: %[2]s/sock
log_file: %[2]s/log
user: root
master: 127.0.0.1
master_port: %[3]d
publish_port: %[4]d
acceptance_wait_time: 1
enable_fqdns_grains: False
ipv6: False
virt:
  connection:
    uri: %[5]s
`, id, dir, ret, pub, uri)
}

// startCmd starts a daemon of a test, logging to logPath; it is stopped
// (SIGTERM to its process group, then SIGKILL) when the test ends, and
// its log's tail is shown if the test failed.
func startCmd(t *testing.T, cmd *exec.Cmd, logPath string) {
	t.Helper()
	proc.Start(t, filepath.Base(cmd.Path), cmd, proc.Options{Log: logPath, Grace: 20 * time.Second, Tail: 4000})
}

func tailStr(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func writeFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newE2ELab(t *testing.T) *e2eLab {
	t.Helper()
	d := virttest.Start(t)
	t.Cleanup(d.DestroyAll)
	l := &e2eLab{base: t.TempDir(), d: d, pub: freePort(t), ret: freePort(t)}
	l.bin = hostBins(t)
	l.images = filepath.Join(l.base, "images")
	roots := filepath.Join(l.base, "srv", "salt")
	buildGuestImage(t, filepath.Join(roots, "images", "tiny.qcow2"))
	l.masterConf = filepath.Join(l.base, "etc", "master")
	writeFile(t, filepath.Join(l.masterConf, "master"), fmt.Sprintf(`root_dir: %[1]s/m
pki_dir: %[1]s/m/pki
cachedir: %[1]s/m/cache
sock_dir: %[1]s/m/sock
log_file: %[1]s/m/log
user: root
ipv6: False
interface: 127.0.0.1
publish_port: %[2]d
ret_port: %[3]d
auto_accept: True
file_roots: {base: [%[4]s]}
`, l.base, l.pub, l.ret, roots))
	minionConf := filepath.Join(l.base, "etc", "hv")
	writeFile(t, filepath.Join(minionConf, "minion"), hvMinionConf("hv1", filepath.Join(l.base, "hv"), l.ret, l.pub, d.URI)+fmt.Sprintf(`  images: %s
  nic:
    default:
      - eth0:
          type: user
          source: slirp
`, l.images))
	startCmd(t, exec.Command(filepath.Join(l.bin, "gsalt-master"), "-c", l.masterConf, "-l", "info"), filepath.Join(l.base, "master.out"))
	startCmd(t, exec.Command(filepath.Join(l.bin, "gsalt-minion"), "-c", minionConf, "-l", "info"), filepath.Join(l.base, "minion.out"))
	testutil.Eventually(t, 120*time.Second, func() bool {
		out, _ := l.cli(t, 30*time.Second, "gsalt", "hv1", "test.ping", "--out", "json", "-t", "10")
		return strings.Contains(out, "true")
	}, "the hypervisor minion answers")
	return l
}

// TestE2EVirtInitBootsSeededGuest: gsalt-run virt.init boots a guest from
// salt://images/tiny.qcow2 on a real libvirtd + qemu (TCG: hypervisor=qemu,
// as a host's /dev/kvm may not boot it, e.g. a nested host's kvm-pvm); its seeded
// gsalt-minion connects with the pre-accepted key and answers test.ping;
// virt.query shows it with its disk and NIC; virt.purge removes it, its
// disk and its key. Then virt.init enable_qcow=True start=False defines
// a guest on a qcow2 overlay of the cached image without starting it.
func TestE2EVirtInitBootsSeededGuest(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	if testing.Short() {
		t.Skip("virt: the guest boot test is skipped in -short mode")
	}
	l := newE2ELab(t)
	// The key directory of the master before virt.init: only hv1.
	start := time.Now()
	out, err := l.cli(t, 10*time.Minute, "gsalt-run", "virt.init", "vm1", "1", "256", "salt://images/tiny.qcow2", "hypervisor=qemu",
		fmt.Sprintf("config={master: 10.0.2.2, master_port: %d, publish_port: %d, acceptance_wait_time: 1, enable_fqdns_grains: False, ipv6: False}", l.ret, l.pub))
	if err != nil || !strings.Contains(out, "good") {
		t.Fatalf("gsalt-run virt.init: %v\n%s", err, out)
	}
	initDone := time.Since(start)
	if _, err := os.Stat(filepath.Join(l.base, "m", "pki", "minions", "vm1")); err != nil {
		t.Fatalf("the key of vm1 was not pre-accepted: %v", err)
	}
	testutil.Eventually(t, 8*time.Minute, func() bool {
		out, _ := l.cli(t, 30*time.Second, "gsalt", "vm1", "test.ping", "--out", "json", "-t", "10")
		return strings.Contains(out, `"vm1": true`)
	}, "vm1 to answer test.ping")
	firstPing := time.Since(start)
	t.Logf("virt.init returned after %v; first test.ping answered %v after virt.init started", initDone.Round(time.Millisecond), firstPing.Round(time.Millisecond))
	out, err = l.cli(t, 2*time.Minute, "gsalt-key", "-L", "--out", "json")
	if err != nil || strings.Contains(out, `"minions_pre": ["vm1"]`) {
		t.Errorf("vm1's key is not only accepted: %v %s", err, out)
	}
	out, err = l.cli(t, 2*time.Minute, "gsalt-run", "virt.query", "--out", "json")
	if err != nil {
		t.Fatalf("virt.query: %v %s", err, out)
	}
	// gsalt-run prints the progress events, then the return: the last
	// JSON document is the return.
	var q map[string]map[string]any
	dec := json.NewDecoder(strings.NewReader(jsonPart(out)))
	for {
		var doc any
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if m, ok := doc.(map[string]any); ok {
			if hv, ok := m["hv1"].(map[string]any); ok && m["suffix"] == nil {
				q = map[string]map[string]any{"hv1": hv}
			}
		}
	}
	if q == nil {
		t.Fatalf("virt.query output %q has no JSON return", out)
	}
	vms, _ := q["hv1"]["vm_info"].(map[string]any)
	vm, _ := vms["vm1"].(map[string]any)
	if vm == nil || vm["state"] != "running" {
		t.Fatalf("virt.query does not show vm1 running: %s", out)
	}
	disks, _ := vm["disks"].(map[string]any)
	vda, _ := disks["vda"].(map[string]any)
	disk, _ := vda["file"].(string)
	if !strings.HasPrefix(disk, l.images) {
		t.Fatalf("vm1's disk %q is not in the images dir", disk)
	}
	if nics, _ := vm["nics"].(map[string]any); len(nics) != 1 {
		t.Fatalf("virt.query does not show vm1's NIC: %v", vm["nics"])
	}
	out, err = l.cli(t, 5*time.Minute, "gsalt-run", "virt.purge", "vm1")
	if err != nil || !strings.Contains(out, "good") {
		t.Fatalf("virt.purge: %v %s", err, out)
	}
	if _, err := os.Stat(disk); !os.IsNotExist(err) {
		t.Errorf("vm1's disk is still there after virt.purge: %v", err)
	}
	if _, err := os.Stat(filepath.Join(l.base, "m", "pki", "minions", "vm1")); !os.IsNotExist(err) {
		t.Errorf("vm1's key is still accepted after virt.purge")
	}
	if out, _ := l.d.Virsh("list", "--all", "--name"); strings.Contains(out, "vm1") {
		t.Errorf("vm1 is still defined: %s", out)
	}

	// enable_qcow=True start=False: a qcow2 overlay on the cached image,
	// defined and not started.
	out, err = l.cli(t, 10*time.Minute, "gsalt-run", "virt.init", "vm2", "1", "128", "salt://images/tiny.qcow2", "enable_qcow=True", "start=False", "seed=False")
	if err != nil || !strings.Contains(out, "good") {
		t.Fatalf("gsalt-run virt.init enable_qcow=True start=False: %v\n%s", err, out)
	}
	if st, _ := l.d.Virsh("domstate", "vm2"); strings.TrimSpace(st) != "shut off" {
		t.Errorf("vm2 is %q, want shut off", strings.TrimSpace(st))
	}
	overlay := filepath.Join(l.images, "vm2_system.qcow2")
	info, err := exec.Command("qemu-img", "info", "-U", "--output", "json", overlay).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", overlay, err)
	}
	var qi map[string]any
	if err := json.Unmarshal(info, &qi); err != nil || qi["format"] != "qcow2" || fmt.Sprint(qi["backing-filename"]) == "" || qi["backing-filename"] == nil {
		t.Errorf("vm2's disk is not a qcow2 overlay: %s", info)
	}
	out, err = l.cli(t, 5*time.Minute, "gsalt-run", "virt.purge", "vm2")
	if err != nil || !strings.Contains(out, "good") {
		t.Fatalf("virt.purge vm2: %v %s", err, out)
	}
	if _, err := os.Stat(overlay); !os.IsNotExist(err) {
		t.Errorf("vm2's overlay is still there after virt.purge: %v", err)
	}
}

// jsonPart skips log lines before the JSON document.
func jsonPart(s string) string {
	if i := strings.Index(s, "{"); i >= 0 {
		return s[i:]
	}
	return s
}

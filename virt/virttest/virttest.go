// Package virttest starts a private libvirtd for tests: as root, in its own
// mount namespace, with its own configuration, socket, state and log
// directories, so it touches nothing of the host's libvirt. The QEMU driver
// runs guests as root without a security driver; there is no /dev/kvm
// here, so guests run under TCG (domain type 'qemu').
package virttest

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Daemon is a running private libvirtd.
type Daemon struct {
	// URI connects to it (qemu:///system on its own socket).
	URI string
	// Dir holds its configuration, socket and logs.
	Dir string
	cmd *exec.Cmd
	// exited is closed when libvirtd has exited.
	exited chan struct{}
}

const libvirtdConf = `unix_sock_dir = "%s"
unix_sock_group = "root"
unix_sock_rw_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:%s"
host_uuid = "%s"
`

const qemuConf = `user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
stdio_handler = "file"
`

// script mounts private state directories and execs libvirtd.
const script = `set -e
for d in /run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt; do
  mkdir -p "$d"
  mount -t tmpfs tmpfs "$d"
done
mount --bind "$1/etc" /etc/libvirt
exec /usr/sbin/libvirtd --config "$1/etc/libvirtd.conf" --pid-file "$1/libvirtd.pid"
`

// Start starts a private libvirtd, or skips the test with one line when
// that is not possible here (not root, no libvirtd, unshare or qemu).
// The daemon stops when the test ends.
func Start(t testing.TB) *Daemon {
	t.Helper()
	reason := ""
	switch {
	case os.Geteuid() != 0:
		reason = "not root"
	case !exists("/usr/sbin/libvirtd"):
		reason = "no /usr/sbin/libvirtd"
	}
	if _, err := exec.LookPath("unshare"); err != nil && reason == "" {
		reason = "no unshare"
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil && reason == "" {
		reason = "no qemu-system-x86_64"
	}
	if reason != "" {
		t.Skipf("virt: cannot start a private libvirtd (%s); skipping the libvirtd/qemu test", reason)
	}
	dir, err := os.MkdirTemp("", "gsalt-lvd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, d := range []string{"etc", "sock"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, "etc", name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Each daemon is its own host (migration refuses the same host UUID).
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		t.Fatal(err)
	}
	u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
	hostUUID := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	write("libvirtd.conf", fmt.Sprintf(libvirtdConf, filepath.Join(dir, "sock"), filepath.Join(dir, "libvirtd.log"), hostUUID))
	write("qemu.conf", qemuConf)
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", dir)
	out, err := os.Create(filepath.Join(dir, "stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start libvirtd: %v", err)
	}
	d := &Daemon{URI: "qemu:///system?socket=" + filepath.Join(dir, "sock", "libvirt-sock"), Dir: dir, cmd: cmd, exited: make(chan struct{})}
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() {
		d.Stop()
		_ = out.Close()
	})
	sock := filepath.Join(dir, "sock", "libvirt-sock")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if exists(sock) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err := exec.CommandContext(ctx, "virsh", "-c", d.URI, "version").Run()
			cancel()
			if err == nil {
				return d
			}
		}
		select {
		case <-d.exited:
			log, _ := os.ReadFile(filepath.Join(dir, "stdout.log"))
			t.Fatalf("libvirtd exited: %v\n%s", waitErr, log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "libvirtd.log"))
			t.Fatalf("libvirtd did not answer within 60s\n%s", tail(string(log), 3000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops libvirtd (SIGTERM, then SIGKILL after 20 s) and waits for it
// to exit; the test's cleanup calls it too.
func (d *Daemon) Stop() {
	select {
	case <-d.exited:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

// Virsh runs virsh on the daemon and returns its output.
func (d *Daemon) Virsh(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "virsh", append([]string{"-c", d.URI}, args...)...).CombinedOutput()
	return string(out), err
}

// DestroyAll stops every running guest of the daemon (tests call it
// before the daemon stops, so no qemu outlives the test).
func (d *Daemon) DestroyAll() {
	out, err := d.Virsh("list", "--name")
	if err != nil {
		return
	}
	for _, n := range strings.Fields(out) {
		_, _ = d.Virsh("destroy", n)
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

//go:build libvirt_dlopen

package virt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/virt/virttest"
)

// virtSide is one master + one hypervisor minion on the shared private
// libvirtd; either daemon is gsalt's or real Salt's.
type virtSide struct {
	name            string
	base            string
	masterConf      string
	minionConf      string
	images          string
	hv              string
	pub, ret        int
	saltMaster      bool
	saltMinion      bool
	src, bin, roots string
}

// newVirtSide writes the configurations of one side: the master serves
// salt://images/disk.qcow2 from roots; the hypervisor minion talks to d
// and keeps its guests' disks in its own images directory.
func newVirtSide(t *testing.T, name, src, bin, roots string, d *virttest.Daemon, saltMaster, saltMinion bool) *virtSide {
	t.Helper()
	base, err := os.MkdirTemp("/tmp", "gsalt-vi-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	s := &virtSide{name: name, base: base, pub: freePort(t), ret: freePort(t), saltMaster: saltMaster, saltMinion: saltMinion,
		src: src, bin: bin, roots: roots, hv: "hv-" + name}
	s.masterConf = filepath.Join(base, "etc", "master")
	s.minionConf = filepath.Join(base, "etc", "minion")
	s.images = filepath.Join(base, "images")
	writeFile(t, filepath.Join(s.masterConf, "master"), fmt.Sprintf(`root_dir: %[1]s/m
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
timeout: 60
file_roots: {base: [%[4]s]}
`, base, s.pub, s.ret, roots))
	writeFile(t, filepath.Join(s.minionConf, "minion"), hvMinionConf(s.hv, filepath.Join(base, "n"), s.ret, s.pub, d.URI)+
		"  images: "+s.images+"\ngrains:\n  virtual: physical\n")
	return s
}

// start runs the master and the minion and waits until the minion answers.
func (s *virtSide) start(t *testing.T) {
	t.Helper()
	if s.saltMaster {
		startCmd(t, saltpeer.Command(context.Background(), s.src, "salt-master", "-c", s.masterConf, "-l", "warning"), filepath.Join(s.base, "master.out"))
	} else {
		startCmd(t, exec.Command(filepath.Join(s.bin, "gsalt-master"), "-c", s.masterConf, "-l", "warning"), filepath.Join(s.base, "master.out"))
	}
	testutil.Eventually(t, 240*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.ret))
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, s.name+": master listening")
	if s.saltMinion {
		startCmd(t, saltpeer.Command(context.Background(), s.src, "salt-minion", "-c", s.minionConf, "-l", "warning"), filepath.Join(s.base, "minion.out"))
	} else {
		startCmd(t, exec.Command(filepath.Join(s.bin, "gsalt-minion"), "-c", s.minionConf, "-l", "warning"), filepath.Join(s.base, "minion.out"))
	}
	testutil.Eventually(t, 360*time.Second, func() bool {
		out, _ := s.cli(t, 60*time.Second, "salt", s.hv, "test.ping", "--out", "json", "-t", "10")
		return strings.Contains(out, "true")
	}, s.name+": hypervisor minion answers test.ping")
	// Warm up: the first virt call loads the module (and python3-libvirt on
	// a Salt minion), which on a loaded machine can outlast a runner's wait.
	if out, err := s.cli(t, 5*time.Minute, "salt", s.hv, "virt.full_info", "--out", "json", "-t", "180"); err != nil || !strings.Contains(out, "node_info") {
		t.Fatalf("%s: %s virt.full_info: %v\n%s", s.name, s.hv, err, out)
	}
}

// cli runs salt/salt-run of the side's master kind (gsalt-* for gsalt).
func (s *virtSide) cli(t *testing.T, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var cmd *exec.Cmd
	args = append([]string{"-c", s.masterConf}, args...)
	if s.saltMaster {
		cmd = saltpeer.Command(ctx, s.src, name, args...)
	} else {
		cmd = exec.CommandContext(ctx, filepath.Join(s.bin, "g"+name), args...)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// runner runs a virt runner with --out json and returns the last JSON
// document printed (the runner's return; progress events come first).
func (s *virtSide) runner(t *testing.T, args ...string) any {
	t.Helper()
	out, err := s.cli(t, 10*time.Minute, "salt-run", append(args, "--out", "json")...)
	if err != nil {
		t.Fatalf("%s: %s-run %v: %v\n%s", s.name, map[bool]string{true: "salt", false: "gsalt"}[s.saltMaster], args, err, out)
	}
	ret, ok := lastJSON(out)
	if !ok {
		t.Fatalf("%s: run %v printed no JSON:\n%s", s.name, args, out)
	}
	t.Logf("%s: %v -> %s", s.name, args, short(ret))
	return ret
}

// lastJSON returns the last JSON value in out (log lines and progress
// output before it are skipped).
func lastJSON(out string) (any, bool) {
	var last any
	found := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c != '{' && c != '[' && c != '"' {
			continue
		}
		if i > 0 && out[i-1] != '\n' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(out[i:]))
		var v any
		if err := dec.Decode(&v); err == nil {
			last, found = v, true
			i += int(dec.InputOffset()) - 1
		}
	}
	return last, found
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// virtRun is what one direction saw.
type virtRun struct {
	hostInfo, vmInfo map[string]any
	list             any
}

// exercise runs host_info, init start=False, list, query and purge on s.
func (s *virtSide) exercise(t *testing.T, d *virttest.Daemon) virtRun {
	t.Helper()
	var r virtRun
	hi := asObj(s.runner(t, "virt.host_info"))
	r.hostInfo = asObj(hi[s.hv])
	if r.hostInfo == nil {
		t.Fatalf("%s: virt.host_info has no %s: %v", s.name, s.hv, hi)
	}
	if _, ok := r.hostInfo["vm_info"]; ok {
		t.Errorf("%s: virt.host_info kept vm_info", s.name)
	}
	if got := s.runner(t, "virt.init", "ivm", "1", "128", "salt://images/disk.qcow2", "hypervisor=qemu", "seed=False", "start=False"); got != "good" {
		t.Fatalf("%s: virt.init returned %v", s.name, got)
	}
	if out, _ := d.Virsh("list", "--all", "--name"); !strings.Contains(out, "ivm") {
		t.Fatalf("%s: libvirt does not have ivm after virt.init: %s", s.name, out)
	}
	r.list = s.runner(t, "virt.list")
	if want := map[string]any{s.hv: map[string]any{"shutdown": []any{"ivm"}}}; short(r.list) != short(want) {
		t.Errorf("%s: virt.list = %s, want %s", s.name, short(r.list), short(want))
	}
	q := asObj(asObj(s.runner(t, "virt.query"))[s.hv])
	r.vmInfo = asObj(asObj(q["vm_info"])["ivm"])
	if r.vmInfo == nil || r.vmInfo["state"] != "shutdown" {
		t.Fatalf("%s: virt.query does not show ivm shut down: %v", s.name, q)
	}
	disk := asObj(asObj(r.vmInfo["disks"])["vda"])
	file, _ := disk["file"].(string)
	if !strings.HasPrefix(file, s.images) {
		t.Errorf("%s: ivm's disk %q is not in the hypervisor's images dir %s", s.name, file, s.images)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("%s: ivm's disk: %v", s.name, err)
	}
	if got := s.runner(t, "virt.purge", "ivm"); got != "good" {
		t.Fatalf("%s: virt.purge returned %v", s.name, got)
	}
	if out, _ := d.Virsh("list", "--all", "--name"); strings.Contains(out, "ivm") {
		t.Errorf("%s: ivm is still defined after virt.purge: %s", s.name, out)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("%s: ivm's disk is still there after virt.purge: %v", s.name, err)
	}
	return r
}

// seededInit: Salt's runner generates the guest's key pair, pre-accepts
// the public key on its master and hands both to the hypervisor's
// virt.init (seed=True, the default); gsalt's seed.apply writes them and
// the minion config into the guest's disk. Salt's purge deletes the key.
func (s *virtSide) seededInit(t *testing.T) {
	t.Helper()
	if got := s.runner(t, "virt.init", "svm", "1", "128", "salt://images/seedable.qcow2", "hypervisor=qemu", "start=False"); got != "good" {
		t.Fatalf("%s: seeded virt.init returned %v", s.name, got)
	}
	accepted, err := os.ReadFile(filepath.Join(s.base, "m", "pki", "minions", "svm"))
	if err != nil {
		t.Fatalf("%s: the runner did not pre-accept svm's key: %v", s.name, err)
	}
	disk := filepath.Join(s.images, "svm_system.qcow2")
	if got := readImageFile(t, disk, "etc/salt/pki/minion/minion.pub"); strings.TrimSpace(got) != strings.TrimSpace(string(accepted)) {
		t.Errorf("%s: the seeded minion.pub is not the key the master accepted:\n%s\n%s", s.name, got, accepted)
	}
	if got := readImageFile(t, disk, "etc/salt/pki/minion/minion.pem"); !strings.Contains(got, "PRIVATE KEY") {
		t.Errorf("%s: no private key seeded: %q", s.name, got)
	}
	if got := readImageFile(t, disk, "etc/salt/minion"); !strings.Contains(got, "id: svm") {
		t.Errorf("%s: seeded minion config %q has no id: svm", s.name, got)
	}
	if got := s.runner(t, "virt.purge", "svm"); got != "good" {
		t.Fatalf("%s: virt.purge svm returned %v", s.name, got)
	}
	if _, err := os.Stat(filepath.Join(s.base, "m", "pki", "minions", "svm")); !os.IsNotExist(err) {
		t.Errorf("%s: svm's key is still accepted after virt.purge: %v", s.name, err)
	}
}

func asObj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// normalizeVM drops what differs between two definitions of the same
// guest (uuid, generated MAC, per-side paths, and the disk's allocated
// size, which depends on how the image was copied).
func normalizeVM(v map[string]any, images string) string {
	b, _ := json.Marshal(v)
	s := strings.ReplaceAll(string(b), images, "IMAGES")
	s = regexp.MustCompile(`"([0-9a-f]{2}:){5}[0-9a-f]{2}"`).ReplaceAllString(s, `"MAC"`)
	s = regexp.MustCompile(`"uuid":"[^"]*"`).ReplaceAllString(s, `"uuid":"UUID"`)
	s = regexp.MustCompile(`"disk size":[0-9]+`).ReplaceAllString(s, `"disk size":N`)
	return s
}

// keysOf is a sorted key list (the shape of a dict).
func keysOf(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// TestInteropVirtRunnerBothWays: (a) a real Salt 3006 salt-master's
// salt-run virt.host_info / init start=False / list / query / purge drive
// a gsalt-minion hypervisor, and a seeded virt.init carries the key pair
// Salt's runner made into the guest's disk; (b) gsalt-master's gsalt-run does the same to
// a real salt-minion hypervisor running Salt's virt module
// (python3-libvirt). Both hypervisors use one private libvirtd. The two
// directions must see the same host data and the same guest.
func TestInteropVirtRunnerBothWays(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("virt: interop with real Salt skipped in -short mode")
	}
	if out, err := saltpeer.PythonCommand(context.Background(), src, "import libvirt").CombinedOutput(); err != nil {
		t.Skipf("virt: python3-libvirt is not importable (%v %s); skipping the Salt virt interop test", err, out)
	}
	d := virttest.Start(t)
	t.Cleanup(d.DestroyAll)
	bin := hostBins(t)
	roots := t.TempDir()
	if err := os.MkdirAll(filepath.Join(roots, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", filepath.Join(roots, "images", "disk.qcow2"), "64M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v %s", err, out)
	}
	// A seedable image: one ext2 partition holding a (stand-in) minion.
	imgRoot := t.TempDir()
	writeFile(t, filepath.Join(imgRoot, "usr", "bin", "gsalt-minion"), "#!/bin/sh\n")
	seedRaw := filepath.Join(t.TempDir(), "seed.raw")
	virttest.BuildRaw(t, seedRaw, virttest.Image{Root: imgRoot, SizeMB: 16})
	virttestRun(t, "qemu-img", "convert", "-O", "qcow2", seedRaw, filepath.Join(roots, "images", "seedable.qcow2"))

	a := newVirtSide(t, "salt-master", src, bin, roots, d, true, false)
	a.start(t)
	ra := a.exercise(t, d)
	a.seededInit(t)

	b := newVirtSide(t, "gsalt-master", src, bin, roots, d, false, true)
	b.start(t)
	rb := b.exercise(t, d)

	// The same host, seen by gsalt's virt module (a) and Salt's (b).
	if ka, kb := keysOf(ra.hostInfo), keysOf(rb.hostInfo); strings.Join(ka, ",") != strings.Join(kb, ",") {
		t.Errorf("virt.host_info keys differ\n salt-master+gsalt-minion: %v\n gsalt-master+salt-minion: %v", ka, kb)
	}
	for _, k := range []string{"node_info", "freecpu"} {
		if short(ra.hostInfo[k]) != short(rb.hostInfo[k]) {
			t.Errorf("virt.host_info %s differs\n salt-master+gsalt-minion: %s\n gsalt-master+salt-minion: %s", k, short(ra.hostInfo[k]), short(rb.hostInfo[k]))
		}
	}
	if na, nb := normalizeVM(ra.vmInfo, a.images), normalizeVM(rb.vmInfo, b.images); na != nb {
		t.Errorf("virt.query's ivm differs\n salt-master+gsalt-minion: %s\n gsalt-master+salt-minion: %s", na, nb)
	}
}

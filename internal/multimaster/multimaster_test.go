package multimaster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// TestMain lets the parallel tests (each with its own masters and
// minion) run at once: they mostly wait on failover intervals and job
// timeouts.
func TestMain(m *testing.M) { proc.MainParallel(m, 6) }

// commands builds gsalt's commands once for the package's tests.
func commands(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real-process multi-master test skipped in -short mode")
	}
	return proc.Build(t)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start starts cmd, logging to logPath; it is stopped when the test ends.
func start(t *testing.T, name string, cmd *exec.Cmd, logPath string) *proc.Proc {
	t.Helper()
	return proc.Start(t, name, cmd, proc.Options{Log: logPath, Tail: 6000})
}

// gmaster is one gsalt-master process of a test.
type gmaster struct {
	name, dir, conf, pki string
	host                 string // the address it binds (interface)
	ret, pub             int
	bin                  string
	p                    *proc.Proc
}

// newMaster writes the configuration of master name under base; pki is
// its pki_dir (shared between masters when the same), srv the shared
// file and pillar roots.
func newMaster(t *testing.T, bin, base, name, pki string) *gmaster {
	t.Helper()
	ports := proc.FreePorts(t, 2)
	return newMasterAt(t, bin, base, name, pki, "127.0.0.1", ports[0], ports[1])
}

// newMasterAt is newMaster on the given address and ports.
func newMasterAt(t *testing.T, bin, base, name, pki, host string, pub, ret int) *gmaster {
	t.Helper()
	g := &gmaster{name: name, dir: filepath.Join(base, name), pki: pki, host: host, pub: pub, ret: ret, bin: bin}
	g.conf = filepath.Join(g.dir, "etc")
	write(t, filepath.Join(g.conf, "master"), masterConfText(g.dir, pki, base, name, host, g.pub, g.ret, ""))
	return g
}

// masterConfText is the configuration of a master (gsalt's or Salt's)
// named name in dir: pki its pki_dir, base the shared root_dir (Salt
// prefixes paths outside it) with the shared file and pillar roots, host
// the address it binds, extra further lines.
func masterConfText(dir, pki, base, name, host string, pub, ret int, extra string) string {
	return fmt.Sprintf(`id: %[5]s
root_dir: %[6]s
pki_dir: %[2]s
cachedir: %[1]s/cache
sock_dir: %[1]s/sock
log_file: %[1]s/log
pidfile: %[1]s/master.pid
log_level_logfile: info
user: root
ipv6: False
interface: %[8]s
publish_port: %[3]d
ret_port: %[4]d
file_roots: {base: [%[6]s/srv/salt]}
pillar_roots: {base: [%[6]s/srv/pillar]}
%[7]s`, dir, pki, pub, ret, name, base, extra, host)
}

// start runs the master and waits until its request port answers.
func (g *gmaster) start(t *testing.T) {
	t.Helper()
	g.p = start(t, "gsalt-master "+g.name, exec.Command(filepath.Join(g.bin, "gsalt-master"), "-c", g.conf, "-l", "info"),
		filepath.Join(g.dir, "stdout-"+strconv.FormatInt(time.Now().UnixNano(), 36)))
	g.p.WaitFor(t, 90*time.Second, "listening", func() bool {
		if !proc.Dials(net.JoinHostPort(g.host, strconv.Itoa(g.ret))) {
			return false
		}
		_, err := os.Stat(filepath.Join(g.pki, "master.pem"))
		return err == nil
	})
}

// run runs one of gsalt's CLIs against the master and returns its stdout.
func (g *gmaster) run(t *testing.T, tool string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(120*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(g.bin, tool), append([]string{"-c", g.conf}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Logf("%s %s %v: %v\n%s", g.name, tool, args, err, errb.String())
	}
	return out.Bytes()
}

// answers reports whether id answers test.ping published by this master.
func (g *gmaster) answers(t *testing.T, id string) bool {
	t.Helper()
	var v map[string]any
	out := g.run(t, "gsalt", "-t", "8", id, "test.ping", "--out", "json", "--static")
	return json.Unmarshal(out, &v) == nil && v[id] == true
}

// keys returns gsalt-key -L's lists.
func (g *gmaster) keys(t *testing.T) map[string][]string {
	t.Helper()
	var v map[string][]string
	_ = json.Unmarshal(g.run(t, "gsalt-key", "-L", "--out", "json"), &v)
	return v
}

func has(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

var jidRe = regexp.MustCompile(`job ID: (\d+)`)

// publishAsync publishes fun with --async and returns the jid.
func (g *gmaster) publishAsync(t *testing.T, id, fun string, args ...string) string {
	t.Helper()
	out := g.run(t, "gsalt", append([]string{"--async", id, fun}, args...)...)
	m := jidRe.FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s: no jid in %q", g.name, out)
	}
	return string(m[1])
}

// lookup returns jobs.lookup_jid's returns for jid from this master's job
// cache.
func (g *gmaster) lookup(t *testing.T, jid string) map[string]any {
	t.Helper()
	var v map[string]any
	out := g.run(t, "gsalt-run", "jobs.lookup_jid", jid, "--out", "json")
	if err := json.Unmarshal(out, &v); err != nil {
		return nil
	}
	return v
}

// setupTree writes the shared file and pillar roots: every id gets the
// pillar proxy: {proxytype: dummy} (used by the proxy tests).
func setupTree(t *testing.T, base string) {
	t.Helper()
	write(t, filepath.Join(base, "srv", "pillar", "top.sls"), "base:\n  '*':\n    - data\n")
	write(t, filepath.Join(base, "srv", "pillar", "data.sls"), "proxy:\n  proxytype: dummy\nshared: yes\n")
	write(t, filepath.Join(base, "srv", "salt", "hello.txt"), "hello\n")
}

// newLab builds gsalt's commands (once) and lays out a test's shared
// tree in a short directory (unix socket paths are limited); it returns
// the commands' folder and the tree.
func newLab(t *testing.T) (bin, base string) {
	t.Helper()
	bin = commands(t)
	base = testutil.ShortDir(t, "gmm")
	setupTree(t, base)
	return bin, base
}

// twoMasters writes and starts gsalt-masters m1 and m2 under base: with
// shared, one pki_dir; else each its own, m2 given m1's master key (the
// failover set-up Salt documents).
func twoMasters(t *testing.T, bin, base string, shared bool) (m1, m2 *gmaster) {
	t.Helper()
	pki1, pki2 := filepath.Join(base, "pki1"), filepath.Join(base, "pki2")
	if shared {
		pki1 = filepath.Join(base, "pki")
		pki2 = pki1
	}
	m1 = newMaster(t, bin, base, "m1", pki1)
	m2 = newMaster(t, bin, base, "m2", pki2)
	m1.start(t)
	if !shared {
		copyMasterKey(t, m1.pki, m2.pki)
	}
	m2.start(t)
	return m1, m2
}

// startMinion starts a gsalt-minion on configuration conf (or, with a
// proxy id, a gsalt-proxy for that device), logging under base.
func startMinion(t *testing.T, bin, base, conf, proxyID string) {
	t.Helper()
	if proxyID == "" {
		start(t, "gsalt-minion", exec.Command(filepath.Join(bin, "gsalt-minion"), "-c", conf, "-l", "info"), filepath.Join(base, "minion.out"))
		return
	}
	start(t, "gsalt-proxy", exec.Command(filepath.Join(bin, "gsalt-proxy"), "-c", conf, "--proxyid", proxyID, "-l", "info"), filepath.Join(base, "proxy.out"))
}

// minionConf writes a minion (or proxy, when file is "proxy")
// configuration naming masters and returns its directory.
func minionConf(t *testing.T, base, name, file, id string, masters []*gmaster, extra string) string {
	t.Helper()
	ports := make([]int, len(masters))
	for i, g := range masters {
		ports[i] = g.ret
	}
	return minionConfPorts(t, base, name, file, id, ports, extra)
}

// minionConfPorts is minionConf for masters given by their ret ports
// (real salt-masters among them).
func minionConfPorts(t *testing.T, base, name, file, id string, ports []int, extra string) string {
	t.Helper()
	entries := make([]string, len(ports))
	for i, p := range ports {
		entries[i] = "127.0.0.1:" + strconv.Itoa(p)
	}
	return minionConfMasters(t, base, name, file, id, entries, extra)
}

// minionConfMasters is minionConf for a master list given as written in
// the configuration ("host" or "host:port" entries).
func minionConfMasters(t *testing.T, base, name, file, id string, entries []string, extra string) string {
	t.Helper()
	dir := filepath.Join(base, name)
	var ml strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&ml, "  - %s\n", e)
	}
	idLine := ""
	if id != "" {
		idLine = "id: " + id + "\n"
	}
	write(t, filepath.Join(dir, "etc", file), fmt.Sprintf(`%[2]sroot_dir: %[1]s
pki_dir: %[1]s/pki
cachedir: %[1]s/cache
sock_dir: %[1]s/sock
log_file: %[1]s/log
pidfile: %[1]s/minion.pid
log_level_logfile: info
user: root
ipv6: False
enable_fqdns_grains: False
acceptance_wait_time: 1
master:
%[3]s%[4]s`, dir, idLine, ml.String(), extra))
	return filepath.Join(dir, "etc")
}

// waitPending waits for id's key to be pending on g.
func waitPending(t *testing.T, g *gmaster, id string) {
	t.Helper()
	testutil.Eventually(t, 90*time.Second, func() bool {
		return has(g.keys(t)["minions_pre"], id)
	}, id+" pending on "+g.name)
}

// acceptOn accepts id on g (gsalt-key -a).
func acceptOn(t *testing.T, g *gmaster, id string) {
	t.Helper()
	waitPending(t, g, id)
	g.run(t, "gsalt-key", "-a", id, "-y")
	if !has(g.keys(t)["minions"], id) {
		t.Fatalf("%s not accepted on %s: %v", id, g.name, g.keys(t))
	}
}

// copyMasterKey gives dst the master key pair of src (the Multi-Master
// tutorial's "copy master.pem and master.pub").
func copyMasterKey(t *testing.T, src, dst string) {
	t.Helper()
	for _, f := range []string{"master.pem", "master.pub"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if f == "master.pem" {
			mode = 0o400
		}
		if err := os.MkdirAll(dst, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// preseed copies id's accepted key from one master's pki dir to
// another's (an admin accepting the minion on every master).
func preseed(t *testing.T, from, to *gmaster, id string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(from.pki, "minions", id))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(to.pki, "minions", id), string(b))
}

// checkHot: id answers jobs from both masters and each return lands in
// the job cache of the master that published the job only.
func checkHot(t *testing.T, a, b *gmaster, id string) {
	t.Helper()
	for _, g := range []*gmaster{a, b} {
		testutil.Eventually(t, 90*time.Second, func() bool { return g.answers(t, id) }, id+" answering "+g.name)
	}
	jidA := a.publishAsync(t, id, "test.echo", "from-"+a.name)
	jidB := b.publishAsync(t, id, "test.echo", "from-"+b.name)
	for _, c := range []struct {
		g    *gmaster
		jid  string
		want string
	}{{a, jidA, "from-" + a.name}, {b, jidB, "from-" + b.name}} {
		testutil.Eventually(t, 60*time.Second, func() bool {
			return c.g.lookup(t, c.jid)[id] == c.want
		}, "return of "+c.jid+" in "+c.g.name+"'s job cache")
	}
	// The other master never got those returns (Salt returns each job to
	// the master that published it).
	if v := b.lookup(t, jidA); v[id] != nil {
		t.Errorf("%s's job %s returned to %s too: %v", a.name, jidA, b.name, v)
	}
	if v := a.lookup(t, jidB); v[id] != nil {
		t.Errorf("%s's job %s returned to %s too: %v", b.name, jidB, a.name, v)
	}
}

// TestHotMultiMasterSharedPKI: two gsalt-masters sharing one pki_dir (so
// one master key and one set of accepted minions, as Salt documents); a
// gsalt-minion with master: [m1, m2] is accepted with gsalt-key on m1,
// which m2 sees, and answers jobs from both, each return going to the
// publishing master's job cache.
func TestHotMultiMasterSharedPKI(t *testing.T) {
	t.Parallel()
	bin, base := newLab(t)
	m1, m2 := twoMasters(t, bin, base, true)
	conf := minionConf(t, base, "minion", "minion", "hot1", []*gmaster{m1, m2}, "")
	startMinion(t, bin, base, conf, "")
	acceptOn(t, m1, "hot1")
	if k := m2.keys(t); !has(k["minions"], "hot1") {
		t.Fatalf("m2 does not see the key accepted on m1: %v", k)
	}
	checkHot(t, m1, m2, "hot1")
	// The pillar reaches the minion through either master.
	var v map[string]any
	_ = json.Unmarshal(m2.run(t, "gsalt", "-t", "30", "hot1", "pillar.get", "shared", "--out", "json", "--static"), &v)
	if v["hot1"] != true {
		t.Errorf("pillar.get through m2: %v", v)
	}
	// Losing one master does not stop the other: stop m1, m2 still gets
	// answers.
	m1.p.Kill()
	testutil.Eventually(t, 60*time.Second, func() bool { return m2.answers(t, "hot1") }, "hot1 answering m2 with m1 down")
	// m1 comes back (new session key): the minion re-authenticates and
	// answers it again.
	m1.start(t)
	testutil.Eventually(t, 120*time.Second, func() bool { return m1.answers(t, "hot1") }, "hot1 answering m1 after its restart")
}

// failoverExtra is the failover part of the minion configuration.
const failoverExtra = `master_type: failover
master_alive_interval: 2
master_failback: True
master_failback_interval: 3
retry_dns: 0
auth_timeout: 3
`

// checkFailover: id serves m1 only; killing m1 moves it to m2 within the
// alive interval plus a margin; m1's return brings it back (failback).
func checkFailover(t *testing.T, m1, m2 *gmaster, id string) {
	t.Helper()
	testutil.Eventually(t, 90*time.Second, func() bool { return m1.answers(t, id) }, id+" answering m1")
	if m2.answers(t, id) {
		t.Errorf("%s answers m2 while connected to m1 (failover serves one master)", id)
	}
	m1.p.Kill()
	killed := time.Now()
	testutil.Eventually(t, 60*time.Second, func() bool { return m2.answers(t, id) }, id+" failing over to m2")
	t.Logf("%s moved to m2 %s after m1 died (master_alive_interval 2 s)", id, time.Since(killed).Round(time.Second))
	jid := m2.publishAsync(t, id, "test.echo", "after-failover")
	testutil.Eventually(t, 60*time.Second, func() bool {
		return m2.lookup(t, jid)[id] == "after-failover"
	}, "return in m2's job cache after the failover")
	m1.start(t)
	back := time.Now()
	testutil.Eventually(t, 90*time.Second, func() bool { return m1.answers(t, id) }, id+" failing back to m1")
	t.Logf("%s failed back to m1 %s after it restarted (master_failback_interval 3 s)", id, time.Since(back).Round(time.Second))
	testutil.Eventually(t, 30*time.Second, func() bool { return !m2.answers(t, id) }, id+" leaving m2 after the failback")
}

// TestFailoverMinion: master_type failover with master_alive_interval and
// master_failback, two gsalt-masters with their own pki dirs sharing the
// master key pair (copied, as the tutorial does) and the minion accepted
// on each.
func TestFailoverMinion(t *testing.T) {
	t.Parallel()
	bin, base := newLab(t)
	m1, m2 := twoMasters(t, bin, base, false)
	conf := minionConf(t, base, "minion", "minion", "fo1", []*gmaster{m1, m2}, failoverExtra)
	startMinion(t, bin, base, conf, "")
	acceptOn(t, m1, "fo1")
	preseed(t, m1, m2, "fo1")
	checkFailover(t, m1, m2, "fo1")
}

// TestFailoverProxy: gsalt-proxy's master connection follows the same
// options (a dummy proxy device).
func TestFailoverProxy(t *testing.T) {
	t.Parallel()
	bin, base := newLab(t)
	m1, m2 := twoMasters(t, bin, base, false)
	conf := minionConf(t, base, "proxy", "proxy", "", []*gmaster{m1, m2}, failoverExtra)
	startMinion(t, bin, base, conf, "fodev1")
	acceptOn(t, m1, "fodev1")
	preseed(t, m1, m2, "fodev1")
	checkFailover(t, m1, m2, "fodev1")
}

// TestHotMultiMasterProxy: a gsalt-proxy device with master: [m1, m2]
// answers both masters, returns going to the publishing master.
func TestHotMultiMasterProxy(t *testing.T) {
	t.Parallel()
	bin, base := newLab(t)
	m1, m2 := twoMasters(t, bin, base, true)
	conf := minionConf(t, base, "proxy", "proxy", "", []*gmaster{m1, m2}, "")
	startMinion(t, bin, base, conf, "hotdev1")
	acceptOn(t, m1, "hotdev1")
	checkHot(t, m1, m2, "hotdev1")
}

// Package fleetlab runs a proxy fleet as real processes for tests: the
// gsalt binaries built once, one gsalt-master on 127.0.0.1, gsalt-devsim
// simulating N IOS-XE switches, any number of gsalt-proxy processes, and a
// test.ping that counts the returns of every device on the master's event
// bus (so a device served twice is seen). It is used only by tests
// (cmd/gsalt-proxy, deploy/kubernetes).
package fleetlab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
	"golang.org/x/crypto/ssh"
)

// Binaries are the commands a lab builds.
var Binaries = []string{"gsalt-master", "gsalt-proxy", "gsalt-devsim", "gsalt", "gsalt-key", "gsalt-api"}

// RepoRoot is the module's root directory.
func RepoRoot(testing.TB) string { return proc.RepoRoot() }

// Build builds Binaries (once per test binary, see proc.Build) and
// returns their folder.
func Build(t testing.TB) string {
	t.Helper()
	pkgs := make([]string, len(Binaries))
	for i, b := range Binaries {
		pkgs[i] = "./cmd/" + b
	}
	return proc.Build(t, pkgs...)
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return proc.FreePort(t)
}

// FreeRange returns the first of n consecutive loopback ports that were
// all free a moment ago.
func FreeRange(t testing.TB, n int) int {
	t.Helper()
	for range 50 {
		base := 20000 + rand.IntN(40000-n)
		var ls []net.Listener
		ok := true
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

// Proc is a process started by a lab; it is stopped when the test ends.
type Proc struct {
	*proc.Proc
}

// Start starts bin with args and extra environment, output to
// dir/<name>.log, and stops it (SIGTERM, then SIGKILL after 60 s) when the
// test ends.
func Start(t testing.TB, dir, name, bin string, args, env []string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return &Proc{proc.Start(t, name, cmd, proc.Options{Log: filepath.Join(dir, name+".log"), Grace: 60 * time.Second, Tail: 1500})}
}

// Exited reports whether the process ended, and its error.
func (p *Proc) Exited() (bool, error) { return p.Proc.Exited(), p.Err() }

// RSSKiB returns the process's resident set size in KiB (0 when gone).
func (p *Proc) RSSKiB() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var n int
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n)
			return n
		}
	}
	return 0
}

// Master is a running gsalt-master and the paths of its configuration.
type Master struct {
	Dir, ConfDir, SockDir, PKIDir string
	PubPort, RetPort              int
	Proc                          *Proc
	bin                           string
}

// StartMaster writes dir/etc/master/master (loopback, free ports, state
// under dir/master, plus extra YAML) and starts gsalt-master.
func StartMaster(t testing.TB, bin, dir, extra string) *Master {
	t.Helper()
	m := &Master{Dir: dir, ConfDir: filepath.Join(dir, "etc", "master"), bin: bin,
		SockDir: filepath.Join(dir, "master", "sock"), PKIDir: filepath.Join(dir, "master", "pki"),
		PubPort: FreePort(t), RetPort: FreePort(t)}
	if err := os.MkdirAll(m.ConfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`root_dir: %[1]s/master
pki_dir: %[1]s/master/pki
cachedir: %[1]s/master/cache
sock_dir: %[1]s/master/sock
log_file: %[1]s/master/log
log_level_logfile: warning
interface: 127.0.0.1
publish_port: %d
ret_port: %d
timeout: 30
%s
`, dir, m.PubPort, m.RetPort, extra)
	if err := os.WriteFile(filepath.Join(m.ConfDir, "master"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	m.Proc = Start(t, dir, "master", filepath.Join(bin, "gsalt-master"), []string{"-c", m.ConfDir, "-l", "warning"}, nil)
	Wait(t, "the master's ret port", 60*time.Second, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", m.RetPort))
		if err == nil {
			c.Close()
		}
		_, serr := os.Stat(filepath.Join(m.SockDir, event.MasterPullSocket))
		return err == nil && serr == nil
	})
	return m
}

// AttachMaster describes a gsalt-master started some other way (its
// configuration directory, sock_dir and pki_dir) for Ping and Keys.
func AttachMaster(bin, confDir, sockDir, pkiDir string) *Master {
	return &Master{ConfDir: confDir, SockDir: sockDir, PKIDir: pkiDir, bin: bin}
}

// Wait polls ok every 200 ms until it holds, failing the test after d.
func Wait(t testing.TB, what string, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Keys lists the master's keys in a state directory (minions,
// minions_pre, minions_denied, minions_rejected).
func (m *Master) Keys(state string) []string {
	ents, _ := os.ReadDir(filepath.Join(m.PKIDir, state))
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// PingResult is what one test.ping '*' produced on the event bus.
type PingResult struct {
	JID string
	// Returns counts the returns of each id; True the ids that returned
	// true at least once.
	Returns map[string]int
	True    map[string]bool
	// CLI is the gsalt command's own JSON output (id -> return).
	CLI map[string]any
}

// Twice lists the ids that returned more than once.
func (r PingResult) Twice() []string {
	var out []string
	for id, n := range r.Returns {
		if n > 1 {
			out = append(out, id)
		}
	}
	return out
}

// Ping runs `gsalt '*' test.ping` with the given timeout while reading the
// master's event bus, and counts the returns of the job per id. After the
// command ends it keeps reading for grace, so that a second return of a
// device served by two processes (which answers at the same time as the
// first) is counted.
func (m *Master) Ping(t testing.TB, timeout, grace time.Duration) PingResult {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := event.DialPub(ctx, filepath.Join(m.SockDir, event.MasterPubSocket))
	if err != nil {
		t.Fatalf("event bus: %v", err)
	}
	defer r.Close()
	var (
		mu    sync.Mutex
		res   = PingResult{Returns: map[string]int{}, True: map[string]bool{}}
		probe = fmt.Sprintf("fleetlab/probe/%d", rand.Int64())
		seen  = make(chan struct{})
	)
	go func() {
		once := sync.Once{}
		for {
			ev, err := r.Next(ctx)
			if err != nil {
				return
			}
			if ev.Tag == probe {
				once.Do(func() { close(seen) })
				continue
			}
			parts := strings.Split(ev.Tag, "/")
			mu.Lock()
			switch {
			case len(parts) == 4 && parts[0] == "salt" && parts[1] == "job" && parts[3] == "new" && ev.Data.Str("fun") == "test.ping" && res.JID == "":
				res.JID = parts[2]
			case len(parts) == 5 && parts[0] == "salt" && parts[1] == "job" && parts[3] == "ret" && parts[2] == res.JID:
				res.Returns[parts[4]]++
				if v, _ := ev.Data.Get("return"); v == true {
					res.True[parts[4]] = true
				}
			}
			mu.Unlock()
		}
	}()
	// The bus registers a reader after accepting it: fire probes until one
	// comes back, then every event reaches us.
	Wait(t, "the event bus subscription", 30*time.Second, func() bool {
		_ = event.FirePull(ctx, filepath.Join(m.SockDir, event.MasterPullSocket), event.Event{Tag: probe})
		select {
		case <-seen:
			return true
		case <-time.After(300 * time.Millisecond):
			return false
		}
	})
	cmd := exec.Command(filepath.Join(m.bin, "gsalt"), "-c", m.ConfDir, "*", "test.ping", "--out", "json", "--static",
		"-t", fmt.Sprint(int(timeout.Seconds())))
	out, _ := cmd.Output()
	var cli map[string]any
	_ = json.Unmarshal(out, &cli)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	res.CLI = cli
	return res
}

// WaitAllAnswer pings until every id of ids returned true to one job,
// failing the test after d; it returns the last result.
func (m *Master) WaitAllAnswer(t testing.TB, ids []string, d time.Duration) PingResult {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		res := m.Ping(t, 8*time.Second, 2*time.Second)
		missing := 0
		for _, id := range ids {
			if !res.True[id] {
				missing++
			}
		}
		if missing == 0 {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, %d of %d devices still do not answer test.ping", d, missing, len(ids))
		}
		t.Logf("%d of %d devices answer; waiting", len(ids)-missing, len(ids))
	}
}

// IDs returns sw1 .. swN.
func IDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sw%d", i+1)
	}
	return ids
}

// NapalmPillar writes a pillar (top.sls and sw.sls) under dir that gives
// every swN the napalm proxytype on gsalt-devsim's device N-1 at
// 127.0.0.1:base+N-1, with the devsim's default credentials.
func NapalmPillar(t testing.TB, dir string, base int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	top := "base:\n  'sw*':\n    - sw\n"
	sw := fmt.Sprintf(`proxy:
  proxytype: napalm
  driver: ios
  host: 127.0.0.1
  username: admin
  password: admin
  optional_args:
    port: {{ %d + (grains['id'][2:] | int) - 1 }}
`, base)
	for name, body := range map[string]string{"top.sls": top, "sw.sls": sw} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Run runs bin with args and fails the test when it fails.
func Run(t testing.TB, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, out)
	}
	return string(out)
}

// RunningConfig reads a simulated device's running configuration over
// SSH ("show running-config" on an exec channel), without IOS's
// "Building configuration" preamble.
func RunningConfig(t testing.TB, port int) string {
	t.Helper()
	cc := &ssh.ClientConfig{User: "admin", Auth: []ssh.AuthMethod{ssh.Password("admin")},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second} //nolint:gosec // test device
	c, err := ssh.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), cc)
	if err != nil {
		t.Fatalf("ssh to the device: %v", err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.Output("show running-config")
	if err != nil {
		t.Fatalf("show running-config: %v", err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n"))))
	preamble := true
	for sc.Scan() {
		l := sc.Text()
		if preamble && (l == "" || strings.HasPrefix(l, "Building configuration") || strings.HasPrefix(l, "Current configuration")) {
			continue
		}
		preamble = false
		b.WriteString(l + "\n")
	}
	return b.String()
}

// HasLine reports whether cfg has line as a whole (trimmed) line.
func HasLine(cfg, line string) bool {
	for _, l := range strings.Split(cfg, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

// WriteDaemonConfig writes dir/etc/<kind>/<kind> (kind "minion" or
// "proxy") for a daemon talking to the master at 127.0.0.1:port, its state
// under dir/<sub> and Salt's start-up waits shortened, plus extra YAML
// lines; it returns the configuration directory to pass with -c.
func WriteDaemonConfig(t testing.TB, dir, kind, sub string, port int, extra string) string {
	t.Helper()
	conf := filepath.Join(dir, "etc", kind)
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`master: 127.0.0.1
master_port: %d
root_dir: %[2]s/%[3]s
pki_dir: %[2]s/%[3]s/pki
cachedir: %[2]s/%[3]s/cache
sock_dir: %[2]s/%[3]s/sock
log_file: %[2]s/%[3]s/log
enable_fqdns_grains: False
acceptance_wait_time: 0.5
%s
`, port, dir, sub, extra)
	if err := os.WriteFile(filepath.Join(conf, kind), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// SilentMaster listens on 127.0.0.1 as a master that accepts connections,
// reads whatever comes and never answers; it returns its port and a
// channel that receives once a first connection was accepted. It stops
// with the test.
func SilentMaster(t testing.TB) (port int, accepted <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{}, 1)
	srv := testutil.ServeTCP(t, func(c net.Conn) {
		select {
		case ch <- struct{}{}:
		default:
		}
		_, _ = io.Copy(io.Discard, c)
	})
	return srv.Addr().(*net.TCPAddr).Port, ch
}

// StopDaemon is a daemon (gsalt-minion, gsalt-proxy) whose SIGTERM stop
// the daemons' tests check in the same situations.
type StopDaemon struct {
	// Name is the command, for messages.
	Name string
	// Start writes the daemon's configuration under dir for the master at
	// 127.0.0.1:port and starts it.
	Start func(t *testing.T, dir string, port int) *proc.Proc
	// Ready matches the log line saying the master serves the daemon.
	Ready *regexp.Regexp
	// Deadline bounds the stop: generous, since a stop that hangs is what
	// is tested, not its speed.
	Deadline time.Duration
}

// StopsWithSilentMaster checks that the daemon, connected to a master that
// accepted its connection and never answers, exits on SIGTERM and leaves
// no process behind.
func (s StopDaemon) StopsWithSilentMaster(t *testing.T) {
	port, accepted := SilentMaster(t)
	p := s.Start(t, t.TempDir(), port)
	select {
	case <-accepted:
	case <-time.After(testutil.Scale(60 * time.Second)):
		t.Fatalf("%s never connected:\n%s", s.Name, p.Tail(2000))
	}
	took := p.Terminate(t, s.Deadline)
	t.Logf("%s exited %v after SIGTERM", s.Name, took.Round(time.Millisecond))
}

// StopsWithStoppedMaster checks that the daemon, once served by a real
// gsalt-master (from bin) that is then stopped with SIGSTOP, exits on
// SIGTERM and leaves no process behind.
func (s StopDaemon) StopsWithStoppedMaster(t *testing.T, bin string) {
	dir := t.TempDir()
	m := StartMaster(t, bin, dir, "auto_accept: True")
	p := s.Start(t, dir, m.RetPort)
	p.WaitLog(t, 90*time.Second, s.Ready)
	if err := m.Proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Proc.Signal(syscall.SIGCONT) })
	took := p.Terminate(t, s.Deadline)
	t.Logf("%s exited %v after SIGTERM", s.Name, took.Round(time.Millisecond))
}

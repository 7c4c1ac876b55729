// Package proc is the one home of what gsalt's real-process tests share:
// building the repository's commands once for all test binaries of a
// checkout (build.go), free loopback
// ports, and daemons started in their own process group with their output
// kept in a file, awaited by a log line, a port or any condition, and
// stopped (SIGTERM to the group, then SIGKILL) when the test ends. When
// the test failed, the last lines of a daemon's output are logged; a data
// race a -race built daemon reports fails the test.
//
// It is used only by tests. Deadlines stretch with
// testutil.Slowdown (GSALT_TEST_SLOWDOWN).
package proc

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// RepoRoot is the module's root directory (found from this file).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// FreePort returns a loopback TCP port that was free a moment ago and that
// no earlier FreePort or FreePorts call of this test binary returned.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// handedOut remembers the ports FreePorts gave this test binary: the
// kernel may give the same free port to two listen calls a moment apart,
// and two daemons of one test then fight over it.
var handedOut struct {
	mu    sync.Mutex
	ports map[int]bool
}

// FreePorts returns n distinct loopback TCP ports that were free a moment
// ago, none returned before in this test binary. They are taken below the
// kernel's ephemeral range when it leaves room, so that the local end of
// some other test's outgoing connection does not take one before the
// daemon binds it.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	handedOut.mu.Lock()
	defer handedOut.mu.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	lo, hi := 0, 0
	if low := ephemeralLow(); low > 12000 {
		lo, hi = 10000, low
	}
	var ls []net.Listener
	var out []int
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for tries := 0; len(out) < n; tries++ {
		if tries > 2000 {
			t.Fatalf("proc: no free loopback port after %d tries", tries)
		}
		addr := "127.0.0.1:0"
		if hi > lo {
			addr = fmt.Sprintf("127.0.0.1:%d", lo+rand.IntN(hi-lo))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		if handedOut.ports[port] {
			l.Close()
			continue
		}
		handedOut.ports[port] = true
		ls = append(ls, l)
		out = append(out, port)
	}
	return out
}

// ephemeralLow is the first port of the kernel's ephemeral range (0 when
// unknown).
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	var low, high int
	if _, err := fmt.Sscan(string(data), &low, &high); err != nil {
		return 0
	}
	return low
}

// Options tune Start. The zero value logs stdout and stderr together to
// <t.TempDir()>/<name>.log and gives a process 10 s after SIGTERM.
type Options struct {
	// Log is the file stdout (and stderr unless Stderr is set) is
	// appended to.
	Log string
	// Stderr, when set, is a separate file for stderr.
	Stderr string
	// Grace is how long Stop waits after SIGTERM before SIGKILL
	// (default 10 s, scaled by testutil.Slowdown).
	Grace time.Duration
	// Tail is how many bytes of output a failed test logs (default 4000).
	Tail int
}

// Proc is a process started by Start, in its own process group.
type Proc struct {
	// Name names the process in messages.
	Name string
	// Cmd is the started command.
	Cmd *exec.Cmd
	// Log and ErrLog are the files the process writes to (ErrLog is Log
	// when stderr is not kept apart).
	Log, ErrLog string

	grace time.Duration
	done  chan struct{}
	err   error
	once  sync.Once
}

// Start starts cmd (not yet started) as name in its own process group,
// its output going to the files of o, and stops it when the test ends.
// After the stop, a "WARNING: DATA RACE" in its output fails the test;
// a failed test logs the tail of the output.
func Start(t testing.TB, name string, cmd *exec.Cmd, o Options) *Proc {
	t.Helper()
	if o.Log == "" {
		o.Log = filepath.Join(t.TempDir(), name+".log")
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.Tail <= 0 {
		o.Tail = 4000
	}
	out, err := os.OpenFile(o.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	errf := out
	if o.Stderr != "" {
		if errf, err = os.OpenFile(o.Stderr, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			out.Close()
			t.Fatal(err)
		}
	}
	cmd.Stdout, cmd.Stderr = out, errf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		out.Close()
		errf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &Proc{Name: name, Cmd: cmd, Log: o.Log, ErrLog: o.Log, grace: testutil.Scale(o.Grace), done: make(chan struct{})}
	if o.Stderr != "" {
		p.ErrLog = o.Stderr
	}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		if errf != out {
			errf.Close()
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		all := p.Output()
		if p.ErrLog != p.Log {
			all += p.Stderr()
		}
		if strings.Contains(all, "WARNING: DATA RACE") {
			t.Errorf("%s reported a data race:\n%s", name, tail(all, 8000))
		} else if t.Failed() {
			msg := tail(p.Output(), o.Tail)
			if p.ErrLog != p.Log {
				msg = "stdout:\n" + msg + "\nstderr:\n" + tail(p.Stderr(), o.Tail)
			}
			t.Logf("%s output:\n%s", name, msg)
		}
	})
	return p
}

// Command starts bin with args as name (Start with an exec.Command).
func Command(t testing.TB, name string, o Options, bin string, args ...string) *Proc {
	t.Helper()
	return Start(t, name, exec.Command(bin, args...), o)
}

// Pid is the process id (and process group id).
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process's exit error once it has ended (nil before).
func (p *Proc) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Signal sends sig to the process group.
func (p *Proc) Signal(sig syscall.Signal) error { return syscall.Kill(-p.Pid(), sig) }

// Stop ends the process group: SIGTERM, then SIGKILL after the grace
// time. It waits for the process and may be called more than once.
func (p *Proc) Stop() {
	p.once.Do(func() {
		_ = p.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(p.grace):
			_ = p.Signal(syscall.SIGKILL)
			<-p.done
		}
		// Anything left in the group goes too.
		_ = p.Signal(syscall.SIGKILL)
	})
}

// Kill ends the process group at once (a daemon that dies) and waits.
func (p *Proc) Kill() {
	p.once.Do(func() {
		_ = p.Signal(syscall.SIGKILL)
		<-p.done
	})
}

// Output returns what the process wrote to its log so far.
func (p *Proc) Output() string {
	b, _ := os.ReadFile(p.Log)
	return string(b)
}

// Stderr returns what the process wrote to its stderr file so far (its
// whole output when stderr is not kept apart).
func (p *Proc) Stderr() string {
	b, _ := os.ReadFile(p.ErrLog)
	return string(b)
}

// Tail returns the last n bytes of the output.
func (p *Proc) Tail(n int) string { return tail(p.Output(), n) }

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// WaitFor polls cond until it holds, within timeout (scaled); it fails the
// test at once when the process exits first, with its output, and at the
// deadline naming what.
func (p *Proc) WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	exited := false
	ok := testutil.Poll(timeout, func() bool {
		if cond() {
			return true
		}
		exited = p.Exited()
		return exited
	})
	switch {
	case exited && !cond():
		t.Fatalf("%s exited (%v) while waiting for %s:\n%s", p.Name, p.err, what, p.Tail(4000))
	case !ok:
		t.Fatalf("timed out after %v waiting for %s of %s; its output:\n%s", testutil.Scale(timeout), what, p.Name, p.Tail(4000))
	}
}

// WaitLog waits until the output matches re and returns the first match's
// submatches.
func (p *Proc) WaitLog(t testing.TB, timeout time.Duration, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	p.WaitFor(t, timeout, fmt.Sprintf("a line matching %q", re), func() bool {
		m = re.FindStringSubmatch(p.Output() + p.stderrApart())
		return m != nil
	})
	return m
}

func (p *Proc) stderrApart() string {
	if p.ErrLog == p.Log {
		return ""
	}
	return p.Stderr()
}

// WaitPort waits until a TCP connection to addr (host:port) succeeds.
func (p *Proc) WaitPort(t testing.TB, timeout time.Duration, addr string) {
	t.Helper()
	p.WaitFor(t, timeout, "a listener on "+addr, func() bool { return Dials(addr) })
}

// Dials reports whether a TCP connection to addr succeeds now.
func Dials(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

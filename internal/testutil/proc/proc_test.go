package proc

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

func TestFreePortsDistinct(t *testing.T) {
	ports := FreePorts(t, 20)
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: %d repeated or invalid", ports, p)
		}
		seen[p] = true
	}
	if p := FreePort(t); p <= 0 {
		t.Fatalf("FreePort = %d", p)
	}
}

// TestDaemon builds a small daemon once, starts it twice (the second
// build is the cached one), waits for its log line and port, and stops
// it: politely, after the grace time when it ignores SIGTERM, and at once
// with Kill.
func TestDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command; skipped with -short")
	}
	bin := Build(t, "./internal/testutil/proc/testdata/hello")
	if again := Build(t, "./internal/testutil/proc/testdata/hello"); again != bin {
		t.Fatalf("second Build gave %s, first %s", again, bin)
	}
	hello := filepath.Join(bin, "hello")
	tests := []struct {
		name     string
		args     []string
		apart    bool
		stop     func(p *Proc)
		wantLine string
	}{
		{"sigterm", nil, false, (*Proc).Stop, "stopping on terminated"},
		{"stubborn", []string{"stubborn"}, true, (*Proc).Stop, "ignoring terminated"},
		{"kill", nil, false, (*Proc).Kill, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			port := FreePort(t)
			o := Options{Grace: 300 * time.Millisecond}
			if tc.apart {
				o.Stderr = filepath.Join(t.TempDir(), "err")
			}
			p := Start(t, tc.name, exec.Command(hello, append([]string{strconv.Itoa(port)}, tc.args...)...), o)
			m := p.WaitLog(t, 30*time.Second, regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)`))
			if m[1] != strconv.Itoa(port) {
				t.Fatalf("listening on %s, want %d", m[1], port)
			}
			p.WaitPort(t, 30*time.Second, "127.0.0.1:"+m[1])
			if p.Exited() {
				t.Fatal("exited early")
			}
			if got := strings.Contains(p.Output(), "to stderr"); got == tc.apart {
				t.Errorf("stderr in the log: %v, want %v (apart %v)", got, !tc.apart, tc.apart)
			}
			if tc.apart && !strings.Contains(p.Stderr(), "to stderr") {
				t.Errorf("stderr file %q lacks the stderr line", p.Stderr())
			}
			tc.stop(p)
			if !p.Exited() || Dials("127.0.0.1:"+m[1]) {
				t.Fatal("still running after stop")
			}
			if tc.wantLine != "" {
				p.WaitFor(t, 10*time.Second, tc.wantLine, func() bool { return strings.Contains(p.Output(), tc.wantLine) })
			}
			p.Stop() // a second stop is a no-op
		})
	}
}

// TestWaitForExit: a process that exits while awaited fails the wait at
// once instead of at the deadline.
func TestWaitForExit(t *testing.T) {
	ft := &fatalT{T: t}
	p := Start(t, "false", exec.Command("sh", "-c", "echo bye; exit 3"), Options{})
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.WaitFor(ft, time.Minute, "nothing", func() bool { return false })
	}()
	<-done
	if !ft.failed || !strings.Contains(ft.msg, "exited") || !strings.Contains(ft.msg, "bye") {
		t.Fatalf("WaitFor on an exited process: failed %v, %q", ft.failed, ft.msg)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("WaitFor waited for the deadline")
	}
}

// fatalT records Fatalf instead of ending the test (called from its own
// goroutine, which Fatalf ends with runtime.Goexit).
type fatalT struct {
	*testing.T
	failed bool
	msg    string
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

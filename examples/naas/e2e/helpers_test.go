package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"golang.org/x/crypto/ssh"
)

// vectorsDir holds the repository's test keys.
const vectorsDir = "../../../testdata/vectors"

// repoRoot is the module's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// exampleDir is the example's root, one level up from this package.
func exampleDir(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// raceBuild reports whether this test binary was built with -race: the
// commands are then built with it too and their output is checked for
// race reports.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

// buildTools builds the commands the test runs into dir.
func buildTools(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	args := []string{"build"}
	if raceBuild() {
		args = append(args, "-race")
	}
	args = append(args, "-o", bin+string(filepath.Separator),
		"./cmd/gsalt-master", "./cmd/gsalt-api", "./cmd/gsalt-proxy", "./cmd/gsalt-devsim")
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// freeRange returns the first of n consecutive TCP ports on 127.0.0.1
// that were all free a moment ago (gsalt-devsim's device i listens on
// base+i).
func freeRange(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		base := 20000 + rand.IntN(30000)
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

// proc is a daemon process in its own process group, stopped (SIGTERM,
// then SIGKILL) by stop or when the test ends.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

func startProc(t *testing.T, dir, name string, args ...string) *proc {
	t.Helper()
	log := filepath.Join(dir, name+".out")
	f, err := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: log}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if out := testutil.ReadFile(t, log); strings.Contains(out, "WARNING: DATA RACE") {
			t.Errorf("%s reported a data race:\n%s", name, tail(out, 8000))
		} else if t.Failed() {
			t.Logf("%s output:\n%s", name, tail(testutil.ReadFile(t, log), 4000))
		}
	})
	return p
}

func (p *proc) stop() {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

var devsimLine = regexp.MustCompile(`devices on 127\.0\.0\.1:(\d+) \.\. 127\.0\.0\.1:(\d+)`)

// runningConfig reads a simulated device's running configuration over
// SSH ("show running-config" on an exec channel), without IOS's
// "Building configuration" preamble.
func runningConfig(t *testing.T, port int) string {
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

// hasLine reports whether cfg has line as a whole (trimmed) line.
func hasLine(cfg, line string) bool {
	for _, l := range strings.Split(cfg, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}

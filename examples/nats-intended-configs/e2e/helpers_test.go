package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil/proc"
	"golang.org/x/crypto/ssh"
)

// vectorsDir holds the repository's test keys.
const vectorsDir = "../../../testdata/vectors"

// exampleDir is the example's root, one level up from this package.
func exampleDir(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func TestMain(m *testing.M) { proc.Main(m) }

// buildTools builds the commands the test runs (once per test binary,
// with -race when the test has it).
func buildTools(t *testing.T) string {
	t.Helper()
	return proc.Build(t, "./cmd/gsalt-master", "./cmd/gsalt-proxy", "./cmd/gsalt-devsim", "./examples/nats-intended-configs/publisher")
}

// startProc starts args as name, its output in dir/name.out; it is
// stopped (SIGTERM, then SIGKILL after 15 s) when the test ends.
func startProc(t *testing.T, dir, name string, args ...string) *proc.Proc {
	t.Helper()
	return proc.Start(t, name, exec.Command(args[0], args[1:]...), proc.Options{Log: filepath.Join(dir, name+".out"), Grace: 15 * time.Second})
}

var devsimLine = regexp.MustCompile(`devices on 127\.0\.0\.1:(\d+) \.\. 127\.0\.0\.1:(\d+)`)

// devsimPorts waits for gsalt-devsim's banner and returns the first and
// last device's ports.
func devsimPorts(t *testing.T, p *proc.Proc) (int, int) {
	t.Helper()
	m := p.WaitLog(t, 30*time.Second, devsimLine)
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a, b
}

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

// withLine returns cfg with line inserted after the first line starting
// with after.
func withLine(t *testing.T, cfg, after, line string) string {
	t.Helper()
	lines := strings.Split(cfg, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, after) {
			out := append(append(append([]string{}, lines[:i+1]...), line), lines[i+1:]...)
			return strings.Join(out, "\n")
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", after, cfg)
	return ""
}

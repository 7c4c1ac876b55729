package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil/proc"
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

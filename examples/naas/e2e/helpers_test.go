package e2e

import (
	"path/filepath"
	"regexp"
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

// buildTools builds the commands the test runs (once per test binary).
func buildTools(t *testing.T) string {
	t.Helper()
	return proc.Build(t, "./cmd/gsalt-master", "./cmd/gsalt-api", "./cmd/gsalt-proxy", "./cmd/gsalt-devsim")
}

// startProc starts a daemon whose output goes to dir/name.out; it is
// stopped when the test ends.
func startProc(t *testing.T, dir, name string, args ...string) *proc.Proc {
	t.Helper()
	return proc.Command(t, name, proc.Options{Log: filepath.Join(dir, name+".out"), Grace: 15 * time.Second}, args[0], args[1:]...)
}

func TestMain(m *testing.M) { proc.Main(m) }

var devsimLine = regexp.MustCompile(`devices on 127\.0\.0\.1:(\d+) \.\. 127\.0\.0\.1:(\d+)`)

package config

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
)

// TestDefaultsGenMatchesSalt regenerates defaults_gen.go from the Salt
// tree in GSALT_SALT_SRC (gen_defaults.py, as go generate does) and fails
// when the committed file differs.
func TestDefaultsGenMatchesSalt(t *testing.T) {
	src := saltpeer.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(2*time.Minute))
	defer cancel()
	out := filepath.Join(t.TempDir(), "defaults_gen.go")
	cmd := exec.CommandContext(ctx, saltpeer.Python(), "gen_defaults.py", out)
	cmd.Env = append(os.Environ(), "GSALT_SALT_SRC="+src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen_defaults.py: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("defaults_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("defaults_gen.go differs from what gen_defaults.py writes from Salt: run GSALT_SALT_SRC=... go generate ./config")
	}
}

package beacons_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/beacons/internal/golden"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestGoldensFresh regenerates the goldens with real Salt (when
// GSALT_SALT_SRC is set) and checks the stored ones still match, so a
// changed scenario in gen_goldens.py cannot go unnoticed. The inotify
// scenario (timing-dependent, needs pyinotify) is left out.
func TestGoldensFresh(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("regenerating goldens is slow")
	}
	out := t.TempDir()
	gen, err := filepath.Abs("testdata/gen_goldens.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), saltpeer.Python(), gen, "--no-inotify", "--out", out)
	cmd.Env = append(saltpeer.Env(src), "TZ=UTC")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, b)
	}
	for _, name := range []string{"goldens.json", "module_calls.json"} {
		fresh, err := golden.Load(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		stored, err := golden.Load(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := stored.(*payload.Map); ok && name == "goldens.json" {
			m.Delete("inotify")
		}
		if golden.PyJSON(fresh) != golden.PyJSON(stored) {
			t.Errorf("%s is stale: run gen_goldens.py (see its docstring)", name)
		}
	}
}

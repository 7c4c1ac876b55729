package layers

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNoUpwardImports lists every package of the module with its imports
// (test imports included) and fails for each import of a higher layer.
func TestNoUpwardImports(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, Module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		pkgs++
		from := f[0]
		lf := Of(from)
		if lf == 0 {
			t.Errorf("%s: its top-level folder has no layer in internal/layers", from)
			continue
		}
		for _, imp := range f[1:] {
			if li := Of(imp); li > lf {
				t.Errorf("%s (layer %d) imports %s (layer %d)", from, lf, imp, li)
			}
		}
	}
	if pkgs < 50 {
		t.Fatalf("go list returned %d packages; expected the whole module", pkgs)
	}
}

// TestCLIsDoNotLinkTheJobCache: the client commands reach the master over
// the wire, so the master's bbolt job cache must not be linked into them.
func TestCLIsDoNotLinkTheJobCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, c := range []string{"gsalt", "gsalt-key", "gsalt-run", "gsalt-call"} {
		cmd := exec.CommandContext(ctx, "go", "list", "-deps", "./cmd/"+c)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == "go.etcd.io/bbolt" || dep == Module+"/master/jobcache" {
				t.Errorf("cmd/%s links %s", c, dep)
			}
		}
	}
}

func TestOf(t *testing.T) {
	for path, want := range map[string]int{
		Module + "/wire/payload":    1,
		Module + "/internal/py":     1,
		Module + "/modules/builtin": 2,
		Module + "/states":          3,
		Module + "/minion":          4,
		Module + "/cli/callcli":     5,
		Module + "/cmd/gsalt":       6,
		Module + "/nosuch":          0,
		"fmt":                       0,
	} {
		if got := Of(path); got != want {
			t.Errorf("Of(%s) = %d, want %d", path, got, want)
		}
	}
}

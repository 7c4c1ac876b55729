package pillar

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRootsFiles(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	for dir, files := range map[string][]string{
		d1: {"a.sls", "b/init.sls", "b/c.sls", "init.sls", "notsls.txt", "shared.sls"},
		d2: {"shared.sls", "z/deep/x.sls"},
	} {
		for _, f := range files {
			p := filepath.Join(dir, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(dir), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A symlinked directory is followed; a link back to the root is a
	// cycle and skipped.
	if err := os.Symlink(filepath.Join(d2, "z"), filepath.Join(d1, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(d1, filepath.Join(d1, "b", "loop")); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Roots: map[string][]string{"base": {d1, d2}, "__env__": {"/srv/__env__/p"}, "dev": {d2}}}
	r := newRoots(cfg, "base")
	if got := strings.Join(r.listStates("base"), " "); got != "a b b.c init linked.deep.x shared z.deep.x" {
		t.Fatalf("listStates: %s", got)
	}
	if _, ok := r.dirs["__env__"]; ok || strings.Join(r.order, ",") != "base,dev" {
		t.Fatalf("__env__ kept for a configured env: %v %v", r.dirs, r.order)
	}
	if src, f := r.getState("b", "base"); src != "salt://b/init.sls" || f != filepath.Join(d1, "b", "init.sls") {
		t.Fatalf("getState b: %s %s", src, f)
	}
	if f := r.find("base", "shared.sls"); f != filepath.Join(d1, "shared.sls") {
		t.Fatalf("first root wins: %s", f)
	}
	for _, bad := range []string{"../x", "a/../../x", ""} {
		if f := r.find("base", bad); f != "" {
			t.Fatalf("find(%q) = %s", bad, f)
		}
	}
	fs := fileSource{r}
	if p, err := fs.CacheFile(context.Background(), "salt://shared.sls?saltenv=dev", "base"); err != nil || p != filepath.Join(d2, "shared.sls") {
		t.Fatalf("CacheFile saltenv query: %s %v", p, err)
	}
	if p, err := fs.CacheFile(context.Background(), "salt://missing.sls", ""); err != nil || p != "" {
		t.Fatalf("CacheFile missing: %q %v", p, err)
	}
	if _, err := fs.CacheFile(context.Background(), "/etc/passwd", ""); err == nil {
		t.Fatal("CacheFile accepted a plain path")
	}
	qa := newRoots(cfg, "qa")
	if got := qa.dirs["qa"]; len(got) != 1 || got[0] != "/srv/qa/p" || strings.Join(qa.order, ",") != "base,dev,qa" {
		t.Fatalf("__env__ mapping: %v %v", qa.dirs, qa.order)
	}
}

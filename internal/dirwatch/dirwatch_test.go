//go:build linux

package dirwatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

func TestWatcherCountsChanges(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := filepath.Join(dir, "k")
	steps := []struct {
		name string
		do   func() error
	}{
		{"create", func() error { return os.WriteFile(f, []byte("a"), 0o644) }},
		{"rewrite", func() error { return os.WriteFile(f, []byte("b"), 0o644) }},
		{"chmod", func() error { return os.Chmod(f, 0o600) }},
		{"rename in", func() error {
			tmp := filepath.Join(t.TempDir(), "x")
			if err := os.WriteFile(tmp, nil, 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, f)
		}},
		{"remove", func() error { return os.Remove(f) }},
	}
	for _, s := range steps {
		g := w.Gen()
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		testutil.Eventually(t, 10*time.Second, func() bool { return w.Gen() != g }, s.name)
		if !w.Valid() {
			t.Fatalf("%s: watch ended", s.name)
		}
	}
	// The directory renamed away ends the watch (callers fall back).
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(dir+".moved", dir)
	testutil.Eventually(t, 10*time.Second, func() bool { return !w.Valid() }, "watch ended")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := New(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("watch of a missing directory")
	}
}

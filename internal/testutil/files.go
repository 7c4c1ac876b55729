package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ShortDir returns a new temporary directory with a short path (unix
// socket paths are limited to 108 bytes), removed when the test ends
// unless GSALT_TEST_KEEP is set.
func ShortDir(t testing.TB, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv("GSALT_TEST_KEEP") != "" {
			t.Logf("kept %s", d)
			return
		}
		os.RemoveAll(d)
	})
	return d
}

// WriteFile writes text to path, creating its directory.
func WriteFile(t testing.TB, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of path.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// CopyTree copies the regular files under src to dst (mode 0644).
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		WriteFile(t, filepath.Join(dst, rel), ReadFile(t, p), 0o644)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Redirect replaces from with to in text and fails the test when from is
// not in text, or still is afterwards while to does not contain it (a
// test adapting an example's file must notice when the example changes).
func Redirect(t testing.TB, text, from, to string) string {
	t.Helper()
	if !strings.Contains(text, from) {
		t.Fatalf("%q is not in:\n%s", from, text)
	}
	out := strings.ReplaceAll(text, from, to)
	if !strings.Contains(to, from) && strings.Contains(out, from) {
		t.Fatalf("%q is still in:\n%s", from, out)
	}
	return out
}

package saltpeer

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestChangedPaths: the host-path guard reports a path created and a
// directory whose entries changed, not one left alone or one removed.
func TestChangedPaths(t *testing.T) {
	dir := t.TempDir()
	kept, made, dirp, gone := filepath.Join(dir, "kept"), filepath.Join(dir, "made"), filepath.Join(dir, "d"), filepath.Join(dir, "gone")
	for _, p := range []string{kept, gone} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(dirp, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(dirp, old, old); err != nil {
		t.Fatal(err)
	}
	paths := []string{kept, made, dirp, gone}
	before := stampHostPaths(paths)
	if err := os.WriteFile(made, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirp, "minion.pem"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	got := changedPaths(paths, before, stampHostPaths(paths))
	want := []string{made + " (created)", dirp + " (modified)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changedPaths = %v, want %v", got, want)
	}
	if got := changedPaths(paths, before, before); got != nil {
		t.Errorf("unchanged: %v", got)
	}
}

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	tests := []struct {
		name      string
		data      string
		mode      os.FileMode
		exclusive bool
		wantErr   error
		wantData  string
		wantMode  os.FileMode
	}{
		{"create", "one", 0o600, false, nil, "one", 0o600},
		{"replace with new mode", "two", 0o644, false, nil, "two", 0o644},
		{"exclusive refuses an existing file", "three", 0o600, true, ErrExists, "two", 0o644},
	}
	for _, tc := range tests {
		err := WriteFile(p, []byte(tc.data), tc.mode, tc.exclusive)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Fatalf("%s: err = %v, want %v", tc.name, err, tc.wantErr)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != tc.wantData {
			t.Fatalf("%s: content %q, %v; want %q", tc.name, got, err, tc.wantData)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != tc.wantMode {
			t.Errorf("%s: mode %v, want %v", tc.name, st.Mode().Perm(), tc.wantMode)
		}
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600, false); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// TestExclusiveRace: of several writers creating the same file
// exclusively, exactly one wins.
func TestExclusiveRace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "key")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, lost := 0, 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := WriteFile(p, []byte("k"), 0o400, true)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, ErrExists):
				lost++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || lost != 7 {
		t.Errorf("wins %d, lost %d", wins, lost)
	}
}

func TestWriteCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.p")
	for _, want := range []string{"first", "second, longer than the first"} {
		if err := WriteCache(path, []byte(want), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, %v; want 0600", fi.Mode(), err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("directory holds %v (%v); want only data.p", ents, err)
	}
	if err := WriteCache(filepath.Join(dir, "missing", "x"), []byte("x"), 0o600); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}

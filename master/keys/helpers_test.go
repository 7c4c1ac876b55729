package keys

import (
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
)

const vectorsDir = "../../testdata/vectors"

// testPub returns the exact text of a vector minion key ("minion1" or
// "proxy1").
func testPub(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, "pki", name, "minion.pub"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// copyTree copies a directory tree (files and directories only).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

type firedEvent struct {
	Tag  string
	Data map[string]any
}

type eventLog struct {
	mu  sync.Mutex
	evs []firedEvent
}

func (l *eventLog) fire(tag string, data map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, firedEvent{tag, data})
}

func (l *eventLog) all() []firedEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]firedEvent(nil), l.evs...)
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newTestStore opens a Store on a fresh pki_dir seeded with the vector
// master key (so no key is generated) and a cachedir.
func newTestStore(t testing.TB, mod func(*Options)) (*Store, *eventLog) {
	t.Helper()
	root := t.TempDir()
	pki := filepath.Join(root, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"master.pem", "master.pub"} {
		b, err := os.ReadFile(filepath.Join(vectorsDir, "pki", "master", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pki, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ev := &eventLog{}
	opts := Options{
		PKIDir:   pki,
		CacheDir: filepath.Join(root, "cache"),
		Event:    ev.fire,
		Logger:   quietLogger(),
	}
	if mod != nil {
		mod(&opts)
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, ev
}

// put writes a key file for id in state st.
func put(t testing.TB, s *Store, st State, id string, data []byte) {
	t.Helper()
	if err := os.WriteFile(s.KeyPath(st, id), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// stateOf returns the states holding a file for id.
func stateOf(s *Store, id string) []State {
	var out []State
	for _, st := range ManagedStates() {
		if isFile(s.KeyPath(st, id)) {
			out = append(out, st)
		}
	}
	return out
}

func readOrNil(p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return b
}

func deepEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

func jsonMarshal(v any) ([]byte, error)   { return json.Marshal(v) }
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

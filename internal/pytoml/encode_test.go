package pytoml

import (
	"errors"
	"testing"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// The output itself is compared with Salt 3006's toml serializer in
// modules/builtin (TestSlsutilGolden) and states/builtin
// (TestFileSerializeGolden); these cases are the bounds Python has and Go
// needs: nesting past maxDepth is an error, never a stack overflow.
func TestDumpsDepthBounded(t *testing.T) {
	tables := payload.NewMap("x", int64(1))
	lists := []any{int64(1)}
	for range maxDepth + 10 {
		tables = payload.NewMap("t", tables)
		lists = []any{lists}
	}
	for name, v := range map[string]any{"tables": tables, "lists": payload.NewMap("l", lists)} {
		_, err := Dumps(v)
		var pe *py.Exception
		if !errors.As(err, &pe) {
			t.Errorf("%s: want a Python exception for nesting past %d, got %v", name, maxDepth, err)
		}
	}
}

// TestDumpsShallow checks that a shallow nesting still dumps (python3-toml
// 0.10.2 writes the same text).
func TestDumpsShallow(t *testing.T) {
	v := payload.NewMap("x", int64(1))
	for range 3 {
		v = payload.NewMap("t", v)
	}
	got, err := Dumps(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[t.t.t]\nx = 1\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

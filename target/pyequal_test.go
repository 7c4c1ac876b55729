package target

import (
	"testing"

	"github.com/gsalt/gsalt/internal/py"
)

// A dict holding both 1 and True (possible in Go, not in Python): a key of
// the looked-up value's own type wins, Python equality is the fallback.
func TestTraversePrefersSameTypeKey(t *testing.T) {
	data := map[any]any{int64(1): "one", true: "yes", "k": map[any]any{1.5: "x"}}
	tests := []struct{ key, want string }{
		{"true", "yes"}, {"1", "one"}, {"1.0", "one"}, {"k:1.5", "x"},
	}
	for _, tc := range tests {
		if got, ok := Traverse(data, tc.key, ":"); !ok || got != tc.want {
			t.Errorf("Traverse(%q) = %v, %v; want %q", tc.key, got, ok, tc.want)
		}
	}
}

// Expected values are CPython 3.11's ==.
func TestPyEqualDeep(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{int64(1), 1.0, true},
		{true, int64(1), true},
		{"1", int64(1), false},
		{[]byte("a"), "a", false},
		{nil, nil, true},
		{nil, false, false},
		{int64(9007199254740993), 9007199254740992.0, false},
		{[]any{int64(1), []any{true}}, []any{1.0, []any{int64(1)}}, true},
		{[]any{int64(1)}, []any{int64(1), int64(2)}, false},
		{map[any]any{int64(1): "a"}, map[any]any{1.0: "a"}, true},
		{map[string]any{"a": int64(1)}, om("a", int64(1), "b", int64(2)), false},
		{om("b", 2.0, "a", int64(1)), map[string]any{"a": int64(1), "b": int64(2)}, true},
		{om("a", []any{"x"}), om("a", []any{"y"}), false},
	}
	for _, tc := range tests {
		if got := py.Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("py.Equal(%#v, %#v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

package jinja

import "testing"

// Hashes printed by python3.11 with PYTHONHASHSEED=0 (sys.hash_info:
// siphash13): hash('a'), hash('ab'), hash('é'), hash('☃'),
// hash((1, 'a')), hash(1.5), hash(”), hash(-1), hash(2**64).
func TestPyHash(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int64
	}{
		{"a", 4644417185603328019},
		{"ab", 6148830537548944441},
		{"é", 6047309291227476195},
		{"☃", 5658562226297181912},
		{Tuple{int64(1), "a"}, 3906047847676358913},
		{1.5, 1152921504606846977},
		{"", 0},
		{int64(-1), -2},
	} {
		h, ok := PyHash(c.v)
		if !ok || int64(h) != c.want {
			t.Errorf("PyHash(%s) = %d, %v; want %d", Repr(c.v), int64(h), ok, c.want)
		}
	}
}

// Set orders printed by python3.11 with PYTHONHASHSEED=0.
func TestSetOrder(t *testing.T) {
	for _, c := range []struct {
		items []any
		want  string
	}{
		{[]any{"4", "2"}, "{'4', '2'}"},
		{[]any{"H", "e", "l", "l", "o", " ", "w", "O", "r", "l", "d"}, "{' ', 'd', 'r', 'H', 'o', 'e', 'O', 'w', 'l'}"},
		{[]any{int64(100), int64(3), int64(8), int64(1)}, "{8, 1, 3, 100}"},
		{nil, "set()"},
	} {
		s, err := NewSet(c.items)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.String(); got != c.want {
			t.Errorf("set(%v) = %s, want %s", c.items, got, c.want)
		}
	}
}

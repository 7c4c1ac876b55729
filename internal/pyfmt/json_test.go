package pyfmt

import (
	"errors"
	"math"
	"math/big"
	"sort"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// The wanted texts are what CPython 3.11's json.dumps writes for the same
// str (ensure_ascii False and True); the last two rows are Go strings that
// are not valid UTF-8, which Python never holds.
func TestJSONString(t *testing.T) {
	tests := []struct {
		in, plain, ascii string
	}{
		{"", `""`, `""`},
		{"a\"b\\c", `"a\"b\\c"`, `"a\"b\\c"`},
		{"\n\r\t\b\f\x01\x1f", `"\n\r\t\b\f\u0001\u001f"`, `"\n\r\t\b\f\u0001\u001f"`},
		{"~\x7fé\u2028", "\"~\x7fé\u2028\"", `"~\u007f\u00e9\u2028"`},
		{"\U0001F600", "\"\U0001F600\"", `"\ud83d\ude00"`},
		{"a\xffb", "\"a\xffb\"", `"a\ufffdb"`},
		{"\xed\xa0\x80", "\"\xed\xa0\x80\"", `"\ufffd\ufffd\ufffd"`},
	}
	for _, tc := range tests {
		if got := JSONString(tc.in, false); got != tc.plain {
			t.Errorf("JSONString(%q, false) = %q, want %q", tc.in, got, tc.plain)
		}
		if got := JSONString(tc.in, true); got != tc.ascii {
			t.Errorf("JSONString(%q, true) = %q, want %q", tc.in, got, tc.ascii)
		}
	}
}

// The wanted texts are CPython 3.11's json.dumps of the same data.
func TestJSON(t *testing.T) {
	v := payload.NewMap("b", []any{1.0, int64(2), "é", nil, true, math.NaN(), 1e22},
		"a", payload.NewMap(), "c", []any{}, int64(10), "x", 2.5, "y", nil, int64(1), false, int64(2))
	sortByStr := func(m *payload.Map) ([]payload.Item, error) {
		items := append([]payload.Item(nil), m.Items()...)
		for _, it := range items {
			if _, ok := it.Key.(string); !ok {
				return nil, errors.New("'<' not supported between instances of 'str' and 'int'")
			}
		}
		sort.SliceStable(items, func(i, j int) bool { return items[i].Key.(string) < items[j].Key.(string) })
		return items, nil
	}
	tests := []struct {
		in   any
		o    JSONOptions
		want string
	}{
		{v, JSONOptions{Indent: NoIndent},
			`{"b": [1.0, 2, "é", null, true, NaN, 1e+22], "a": {}, "c": [], "10": "x", "2.5": "y", "null": 1, "false": 2}`},
		{v, JSONOptions{Indent: 2, EnsureASCII: true},
			"{\n  \"b\": [\n    1.0,\n    2,\n    \"\\u00e9\",\n    null,\n    true,\n    NaN,\n    1e+22\n  ],\n  \"a\": {},\n  \"c\": [],\n  \"10\": \"x\",\n  \"2.5\": \"y\",\n  \"null\": 1,\n  \"false\": 2\n}"},
		{payload.NewMap("b", int64(1), "a", []any{payload.NewMap()}, "c", payload.NewMap("z", int64(1), "y", int64(2))), JSONOptions{Indent: 0, SortKeys: sortByStr},
			"{\n\"a\": [\n{}\n],\n\"b\": 1,\n\"c\": {\n\"y\": 2,\n\"z\": 1\n}\n}"},
		{payload.NewMap("a", []byte("x")), JSONOptions{Indent: NoIndent, Default: func(v any) (any, error) { return Repr(v), nil }},
			`{"a": "b'x'"}`},
		{[]any{new(big.Int).Lsh(big.NewInt(1), 70), uint64(math.MaxUint64), int8(3)}, JSONOptions{Indent: NoIndent, Normalize: func(v any) any {
			if i, ok := v.(int8); ok {
				return int64(i)
			}
			return v
		}}, `[1180591620717411303424, 18446744073709551615, 3]`},
		{"a\xffb", JSONOptions{Indent: NoIndent, ReplaceInvalidUTF8: true}, "\"a\ufffdb\""},
		{"a\xffb", JSONOptions{Indent: NoIndent}, "\"a\xffb\""},
	}
	for i, tc := range tests {
		if got, err := JSON(tc.in, tc.o); err != nil || got != tc.want {
			t.Errorf("%d: JSON = %q, %v; want %q", i, got, err, tc.want)
		}
	}
}

func TestJSONErrors(t *testing.T) {
	deep := any("x")
	for i := 0; i < 10; i++ {
		deep = []any{deep}
	}
	sortErr := errors.New("'<' not supported between instances of 'str' and 'int'")
	tests := []struct {
		in   any
		o    JSONOptions
		want string
		is   error
	}{
		{payload.NewMap().SetKey([]any{int64(1)}, int64(1)), JSONOptions{}, "keys must be str, int, float, bool or None, not list", nil},
		{payload.NewMap("a", []byte("x")), JSONOptions{}, "Object of type bytes is not JSON serializable", nil},
		{[]any{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}, JSONOptions{}, "Object of type datetime is not JSON serializable", nil},
		// Default's result is not passed to Default again.
		{[]byte("x"), JSONOptions{Default: func(v any) (any, error) { return v, nil }}, "Object of type bytes is not JSON serializable", nil},
		{payload.NewMap(int64(1), int64(1), "a", []byte("x")), JSONOptions{SortKeys: func(*payload.Map) ([]payload.Item, error) { return nil, sortErr }}, sortErr.Error(), sortErr},
		{deep, JSONOptions{MaxDepth: 5}, ErrJSONDepth.Error(), ErrJSONDepth},
	}
	for i, tc := range tests {
		_, err := JSON(tc.in, tc.o)
		if err == nil || err.Error() != tc.want || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%d: error %v, want %q", i, err, tc.want)
		}
		var te *JSONTypeError
		if tc.is == nil && !errors.As(err, &te) {
			t.Errorf("%d: %v is not a *JSONTypeError", i, err)
		}
	}
	if _, err := JSON(deep, JSONOptions{MaxDepth: 10}); err != nil {
		t.Errorf("10 levels with MaxDepth 10: %v", err)
	}
}

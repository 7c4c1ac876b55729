package pyfmt

import (
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// The wanted texts were printed by CPython 3.11 for the same values.
func TestStrRepr(t *testing.T) {
	var nilMap *payload.Map
	tests := []struct {
		in        any
		str, repr string
	}{
		{"it's", "it's", `"it's"`},
		{"a\"b'c", "a\"b'c", `'a"b\'c'`},
		{"\x01\t\u00a0é\u2028\U0001F600\U000e0001", "\x01\t\u00a0é\u2028\U0001F600\U000e0001", `'\x01\t\xa0é\u2028😀\U000e0001'`},
		{[]byte("\x00a\xff'\""), `b'\x00a\xff\'"'`, `b'\x00a\xff\'"'`},
		{nil, "None", "None"},
		{true, "True", "True"},
		{int8(-3), "-3", "-3"},
		{uint64(math.MaxUint64), "18446744073709551615", "18446744073709551615"},
		{new(big.Int).Lsh(big.NewInt(1), 70), "1180591620717411303424", "1180591620717411303424"},
		{float32(0.5), "0.5", "0.5"},
		{1e22, "1e+22", "1e+22"},
		{-1.5e-7, "-1.5e-07", "-1.5e-07"},
		{math.Copysign(0, -1), "-0.0", "-0.0"},
		{time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC), "2024-01-02 03:04:05.000006", "datetime.datetime(2024, 1, 2, 3, 4, 5, 6)"},
		{time.Date(2024, 1, 2, 3, 4, 0, 0, time.UTC), "2024-01-02 03:04:00", "datetime.datetime(2024, 1, 2, 3, 4)"},
		{time.Date(999, 1, 2, 3, 4, 5, 0, time.UTC), "0999-01-02 03:04:05", "datetime.datetime(999, 1, 2, 3, 4, 5)"},
		{[]any{time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)}, "[datetime.datetime(2024, 1, 2, 3, 4, 5, 6)]", "[datetime.datetime(2024, 1, 2, 3, 4, 5, 6)]"},
		{payload.NewMap("z", int64(1), int64(2), nil, true, "x"), "{'z': 1, 2: None, True: 'x'}", "{'z': 1, 2: None, True: 'x'}"},
		{nilMap, "{}", "{}"},
		{map[string]any{"b": []any{1.0}, "a": int64(1)}, "{'a': 1, 'b': [1.0]}", "{'a': 1, 'b': [1.0]}"},
		{map[any]any{int64(2): "x", "a": 1.5}, "{'a': 1.5, 2: 'x'}", "{'a': 1.5, 2: 'x'}"},
		{[]string{"x", "y"}, "['x', 'y']", "['x', 'y']"},
		{[2]int{1, 2}, "[1, 2]", "[1, 2]"},
	}
	for _, tc := range tests {
		if got := Str(tc.in); got != tc.str {
			t.Errorf("Str(%#v) = %q, want %q", tc.in, got, tc.str)
		}
		if got := Repr(tc.in); got != tc.repr {
			t.Errorf("Repr(%#v) = %q, want %q", tc.in, got, tc.repr)
		}
	}
}

func TestFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.1: "0.1", 1e16: "1e+16", 1234567890123456: "1234567890123456.0", 0.0001: "0.0001",
		0.00001: "1e-05", 1e300: "1e+300", 5e-324: "5e-324", math.Inf(-1): "-inf",
	} {
		if got := FloatRepr(f); got != want {
			t.Errorf("FloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
	if got := FloatRepr(math.NaN()); got != "nan" {
		t.Errorf("FloatRepr(NaN) = %q", got)
	}
}

func TestBounded(t *testing.T) {
	l := []any{strings.Repeat("x", MaxLen/2)}
	l = append(l, l, l, l) // large and self-referencing
	l[1] = l
	if s := Repr(l); len(s) > 3*MaxLen || !strings.Contains(s, "...") {
		t.Errorf("Repr of a cyclic list is %d bytes", len(s))
	}
	var deep any = "x"
	for i := 0; i < MaxDepth+10; i++ {
		deep = []any{deep}
	}
	if s := Str(deep); !strings.Contains(s, "...") || strings.Contains(s, "'x'") {
		t.Errorf("Str of a %d-deep list was not cut", MaxDepth+10)
	}
}

func TestRangeMapOrderAndStop(t *testing.T) {
	m := map[any]any{"b": 1, int64(3): 2, "a": 3, nil: 4}
	var keys []any
	RangeMap(reflect.ValueOf(m), func(k, _ any) bool { keys = append(keys, k); return true })
	// sorted by repr: "'a'" < "'b'" < "3" < "None"
	if want := []any{"a", "b", int64(3), nil}; !reflect.DeepEqual(keys, want) {
		t.Errorf("order %v, want %v", keys, want)
	}
	n := 0
	RangeMap(reflect.ValueOf(m), func(_, _ any) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("RangeMap did not stop: %d calls", n)
	}
}

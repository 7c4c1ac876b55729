package target

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
)

func TestPyStr(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"plain", "plain"},
		{true, "True"},
		{false, "False"},
		{nil, "None"},
		{int64(-3), "-3"},
		{int(42), "42"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{1.0, "1.0"},
		{1.5, "1.5"},
		{0.1, "0.1"},
		{math.Copysign(0, -1) * -1, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1e16, "1e+16"},
		{1.5e16, "1.5e+16"},
		{1e15, "1000000000000000.0"},
		{123456789.123, "123456789.123"},
		{0.0001, "0.0001"},
		{1e-05, "1e-05"},
		{2.5e-10, "2.5e-10"},
		{1e100, "1e+100"},
		{math.NaN(), "nan"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{float32(0.1), "0.10000000149011612"},
		{[]byte("ab"), "b'ab'"},
		{[]byte("a'b"), `b"a'b"`},
		{[]byte{0xff, '\n', '\\'}, `b'\xff\n\\'`},
		{[]any{"a", int64(1), nil, true}, "['a', 1, None, True]"},
		{[]any{"it's"}, `["it's"]`},
		{[]any{"a\"b'c"}, `['a"b\'c']`},
		{[]any{"\x01\t\u00a0é\u2028"}, `['\x01\t\xa0é\u2028']`},
		{map[string]any{"b": []any{1.0}, "a": int64(1)}, "{'a': 1, 'b': [1.0]}"},
		{om("z", int64(1), int64(2), nil, true, "x"), "{'z': 1, 2: None, True: 'x'}"},
		{[]string{"x", "y"}, "['x', 'y']"},
		{time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC), "2024-01-02 03:04:05.000006"},
	}
	for _, tc := range tests {
		if got := pyfmt.Str(tc.in); got != tc.want {
			t.Errorf("pyfmt.Str(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPyLower(t *testing.T) {
	tests := map[string]string{
		"ABC":    "abc",
		"Debian": "debian",
		"ΣΑΣ":    "σας", // final sigma
		"Σ":      "σ",
		"ΑΣ Α":   "ας α",
		"İ":      "i̇",
		"ÉCOLE":  "école",
	}
	for in, want := range tests {
		if got := pyLower(in); got != want {
			t.Errorf("pyLower(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPyInt(t *testing.T) {
	tests := []struct {
		in      string
		v       int64
		ok, big bool
	}{
		{"12", 12, true, false},
		{" 12 ", 12, true, false},
		{"+7", 7, true, false},
		{"-0", 0, true, false},
		{"-5", -5, true, false},
		{"007", 7, true, false},
		{"1_000", 1000, true, false},
		{"_1", 0, false, false},
		{"1_", 0, false, false},
		{"1__0", 0, false, false},
		{"+-1", 0, false, false},
		{"", 0, false, false},
		{"0x10", 0, false, false},
		{"1.0", 0, false, false},
		{"٣", 3, true, false}, // Unicode decimal digit
		{"99999999999999999999", 0, true, true},
	}
	for _, tc := range tests {
		v, ok, big := pyInt(tc.in)
		if v != tc.v || ok != tc.ok || big != tc.big {
			t.Errorf("pyInt(%q) = %d, %v, %v; want %d, %v, %v", tc.in, v, ok, big, tc.v, tc.ok, tc.big)
		}
	}
}

func TestPyEqual(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{int64(1), true, true},
		{int64(1), 1.0, true},
		{uint64(1), int64(1), true},
		{int64(-1), uint64(math.MaxUint64), false},
		{1.5, int64(1), false},
		{"1", int64(1), false},
		{nil, nil, true},
		{nil, false, false},
		{[]byte("a"), "a", false},
		{[]byte("a"), []byte("a"), true},
		{false, int64(0), true},
		{math.Copysign(0, -1), int64(0), true},
	}
	for _, tc := range tests {
		if got := py.Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("py.Equal(%#v, %#v) = %v", tc.a, tc.b, got)
		}
	}
}

func TestSortedIgnoreCase(t *testing.T) {
	got := sortedIgnoreCase([]string{"foo", "Foo", "bar", "Bar"})
	want := []string{"bar", "Bar", "foo", "Foo"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sortedIgnoreCase = %v, want %v", got, want)
	}
}

func TestYamlifyKey(t *testing.T) {
	tests := []struct {
		in      string
		want    any
		changed bool
	}{
		{"80", int64(80), true},
		{"-3", int64(-3), true},
		{"010", int64(10), true}, // Salt's loader: leading zeros are decimal
		{"-010", int64(-8), true},
		{"0x1F", int64(31), true},
		{"0b101", int64(5), true},
		{"1.5", 1.5, true},
		{".5", 0.5, true},
		{"yes", true, true},
		{"Off", false, true},
		{"null", nil, true},
		{"~", nil, true},
		{"None", nil, true},
		{"abc", nil, false},
		{" abc ", "abc", true},
		{`"quoted"`, "quoted", true},
		{"'it''s'", "it's", true},
		{"1_000", nil, false},
		{"a: b", nil, false},
		{"[1]", nil, false},
		{"", nil, false},
		{"---", nil, false},
		{"5 # five", int64(5), true},
		{"#x", nil, false},
		{"a#b", nil, false},
		{"!", nil, false},
		{"&a", nil, true}, // an empty anchored node is None
		{"&a 7", int64(7), true},
		{"1e3", nil, false}, // YAML 1.1 floats need a dot
		{"2001-12-14", nil, false},
	}
	for _, tc := range tests {
		got, changed := yamlifyKey(tc.in)
		if changed != tc.changed || (changed && fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want)) {
			t.Errorf("yamlifyKey(%q) = %#v, %v; want %#v, %v", tc.in, got, changed, tc.want, tc.changed)
		}
	}
}

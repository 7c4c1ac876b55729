package config

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/wire/payload"
)

// Expected values were checked with Salt 3006's SaltYamlSafeLoader.
func TestDecodeYAMLPayload(t *testing.T) {
	big64, _ := new(big.Int).SetString("18446744073709551616", 10)
	tests := []struct {
		src  string
		want any
	}{
		{"b: 1\na: {2: x, true: y, null: z, 1.5: w}\n", payload.NewMap(
			"b", int64(1), "a", payload.NewMap(int64(2), "x", true, "y", nil, "z", 1.5, "w"))},
		// merged keys the mapping does not override come first, as in
		// Salt 3006 (salt.utils.yaml.safe_load gives [('x', 1), ('y', 3)];
		// with own keys c, a merged over b, a: [('b', 2), ('c', 4), ('a', 3)])
		{"base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n", payload.NewMap(
			"base", payload.NewMap("x", int64(1), "y", int64(2)), "d", payload.NewMap("x", int64(1), "y", int64(3)))},
		{"base: &b {b: 2, a: 1}\nd:\n  c: 4\n  <<: *b\n  a: 3\n", payload.NewMap(
			"base", payload.NewMap("b", int64(2), "a", int64(1)), "d", payload.NewMap("b", int64(2), "c", int64(4), "a", int64(3)))},
		{"u: 18446744073709551615\nbig: 18446744073709551616\nn: -9223372036854775808\n", payload.NewMap(
			"u", uint64(math.MaxUint64), "big", big64, "n", int64(math.MinInt64))},
		{"x: !!binary aGk=\nl: [0755, -010, 1:30, 1e3]\n", payload.NewMap(
			"x", []byte("hi"), "l", []any{int64(755), int64(-8), int64(90), "1e3"})},
		{"", nil},
	}
	for _, tc := range tests {
		got, err := DecodeYAMLPayload([]byte(tc.src))
		if err != nil {
			t.Errorf("%q: %v", tc.src, err)
			continue
		}
		if tc.want == nil {
			if got != nil {
				t.Errorf("%q = %#v, want nil", tc.src, got)
			}
			continue
		}
		if d := vectors.Equal(got, tc.want); d != "" {
			t.Errorf("%q: %s", tc.src, d)
		}
	}
	for _, bad := range []string{"1: a\n1.0: b\n", "true: a\n1: b\n", "a: 1\n---\nb: 2\n", "a: !!python/tuple [1]\n"} {
		if _, err := DecodeYAMLPayload([]byte(bad)); !errors.Is(err, ErrYAML) {
			t.Errorf("%q: err = %v, want ErrYAML", bad, err)
		}
	}
}

func TestResolveScalar(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{"0755", int64(755)}, {"-010", int64(-8)}, {"0x1F", int64(31)}, {"yes", true}, {"Off", false},
		{"~", nil}, {"", nil}, {"1:30", int64(90)}, {"1.5e+3", 1500.0}, {"1e3", "1e3"},
		{"1.0e+999", math.Inf(1)}, {"18446744073709551615", uint64(math.MaxUint64)}, {"web01", "web01"},
	}
	for _, tc := range tests {
		got, err := ResolveScalar(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ResolveScalar(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
	if v, err := ResolveScalar("18446744073709551616"); err != nil || v.(*big.Int).String() != "18446744073709551616" {
		t.Errorf("big int: %v, %v", v, err)
	}
	for _, bad := range []string{"<<", "0b_", "="} {
		if v, err := ResolveScalar(bad); !errors.Is(err, ErrYAML) {
			t.Errorf("ResolveScalar(%q) = %#v, %v; want ErrYAML", bad, v, err)
		}
	}
}

package pyfmt

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

func TestTypeName(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, "NoneType"}, {true, "bool"}, {int64(1), "int"}, {uint64(1), "int"}, {7, "int"},
		{big.NewInt(1), "int"}, {1.5, "float"}, {"s", "str"}, {[]byte("b"), "bytes"},
		{[]any{}, "list"}, {[]string{"a"}, "list"}, {payload.NewMap(), "dict"}, {map[string]any{}, "dict"},
		{time.Time{}, "datetime"}, {payload.Ext{Type: 1}, "ExtType"}, {struct{}{}, "struct {}"},
	} {
		if got := TypeName(tc.in); got != tc.want {
			t.Errorf("TypeName(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFloat(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want float64
		ok   bool
	}{
		{true, 1, true}, {false, 0, true}, {int64(-3), -3, true}, {uint64(math.MaxUint64), math.MaxUint64, true},
		{int8(2), 2, true}, {float32(0.5), 0.5, true}, {2.5, 2.5, true},
		{big.NewInt(1), 0, false}, {"1", 0, false}, {nil, 0, false},
	} {
		if got, ok := Float(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("Float(%#v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// The wanted results are CPython's == on the same (distinct) objects.
func TestEqual(t *testing.T) {
	huge, _ := new(big.Int).SetString("100000000000000000000", 10)
	nan := math.NaN()
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		a, b any
		want bool
	}{
		{int64(1), true, true}, {int64(1), 1.0, true}, {false, 0.0, true}, {int64(1), "1", false},
		{int64(1<<53 + 1), float64(1 << 53), false}, {int64(1 << 53), float64(1 << 53), true},
		{uint64(1 << 63), int64(math.MaxInt64), false}, {uint64(1 << 63), float64(1 << 63), true},
		{huge, 1e20, true}, {huge, new(big.Int).Set(huge), true}, {huge, uint64(math.MaxUint64), false},
		{nan, nan, false}, {math.Inf(1), math.Inf(1), true}, {1.5, int64(1), false},
		{nil, nil, true}, {nil, false, false}, {"a", []byte("a"), false}, {[]byte("a"), []byte("a"), true},
		{day, day.In(time.FixedZone("x", 3600)), true}, {day, "2024-01-01 00:00:00", false},
		{[]any{int64(1), "a"}, []any{1.0, "a"}, true}, {[]any{int64(1)}, []any{int64(1), int64(2)}, false},
		{[]any{"a"}, []string{"a"}, true}, {[]any{}, payload.NewMap(), false},
		{payload.NewMap("a", int64(1), "b", []any{}), payload.NewMap("b", []any{}, "a", true), true},
		{payload.NewMap().SetKey(int64(1), "x"), payload.NewMap().SetKey(true, "x"), true},
		{payload.NewMap("a", int64(1)), payload.NewMap("a", int64(2)), false},
		{payload.NewMap("a", int64(1)), map[string]any{"a": 1.0}, true},
		{payload.Ext{Type: 1, Data: []byte("x")}, payload.Ext{Type: 1, Data: []byte("x")}, true},
	}
	for _, tc := range tests {
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", Repr(tc.a), Repr(tc.b), got, tc.want)
		}
		if got := Equal(tc.b, tc.a); got != tc.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", Repr(tc.b), Repr(tc.a), got, tc.want)
		}
	}
	var deep any = "x"
	for i := 0; i < MaxDepth+5; i++ {
		deep = []any{deep}
	}
	if Equal(deep, deep) {
		t.Error("Equal went past MaxDepth")
	}
}

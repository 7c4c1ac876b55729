package event

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

type trimCase struct {
	name string
	max  int
	in   *payload.Map
	want *payload.Map
}

// trimCases are shared with the interop test, which checks them against
// Salt's own trim_dict.
func trimCases() []trimCase {
	rep := strings.Repeat
	list30 := make([]any, 30)
	for i := range list30 {
		list30[i] = rep("q", 100)
	}
	list200 := make([]any, 200)
	for i := range list200 {
		list200[i] = "abcd"
	}
	return []trimCase{
		{
			name: "fits",
			max:  1000,
			in:   payload.NewMap("a", "b"),
			want: payload.NewMap("a", "b"),
		},
		{
			name: "big value trimmed in the first pass",
			max:  1000,
			in:   payload.NewMap("small", "x", "big", rep("y", 2000)),
			want: payload.NewMap("small", "x", "big", TrimmedValue),
		},
		{
			// a (649) goes at 50%; then it fits, so b and c (349) stay.
			name: "stops as soon as it fits",
			max:  1000,
			in:   payload.NewMap("a", rep("a", 600), "b", rep("b", 300), "c", rep("c", 300)),
			want: payload.NewMap("a", TrimmedValue, "b", rep("b", 300), "c", rep("c", 300)),
		},
		{
			// Each value is 429: kept at 50%, trimmed at 40%.
			name: "progressive passes",
			max:  1000,
			in:   payload.NewMap("a", rep("a", 380), "b", rep("b", 380), "c", rep("c", 380)),
			want: payload.NewMap("a", TrimmedValue, "b", TrimmedValue, "c", TrimmedValue),
		},
		{
			name: "nested maps are recursed",
			max:  1000,
			in:   payload.NewMap("n", payload.NewMap("deep", payload.NewMap("v", rep("z", 2000)), "k", int64(1)), "top", "t"),
			want: payload.NewMap("n", payload.NewMap("deep", payload.NewMap("v", TrimmedValue), "k", int64(1)), "top", "t"),
		},
		{
			// Lists are sized shallowly (56+8*30 = 296 < 10% of 3000), so
			// nothing is trimmed and the result stays too large, as in Salt.
			name: "lists are sized shallowly",
			max:  3000,
			in:   payload.NewMap("l", list30),
			want: payload.NewMap("l", list30),
		},
		{
			name: "long list trimmed",
			max:  1000,
			in:   payload.NewMap("l", list200, "k", "v"),
			want: payload.NewMap("l", TrimmedValue, "k", "v"),
		},
		{
			name: "bytes and scalars",
			max:  1000,
			in:   payload.NewMap("b", bytes.Repeat([]byte{0xff}, 600), "i", int64(5), "n", nil, "pad", rep("p", 450)),
			want: payload.NewMap("b", TrimmedValue, "i", int64(5), "n", nil, "pad", rep("p", 450)),
		},
		{
			// "€"×200 is 600 UTF-8 bytes but 474 in CPython (74+2n): it survives
			// the 50% pass and goes at 40%.
			name: "unicode sizes",
			max:  1000,
			in:   payload.NewMap("u", rep("€", 200), "a", rep("a", 340), "k", int64(1<<40), "f", 2.5, "t", true),
			want: payload.NewMap("u", TrimmedValue, "a", rep("a", 340), "k", int64(1<<40), "f", 2.5, "t", true),
		},
		{
			// "é"×440 is 513 in CPython (73+n), over 50%, while "b"×420
			// (469) is not: only the first goes.
			name: "latin-1 text",
			max:  1000,
			in:   payload.NewMap("l", rep("é", 440), "b", rep("b", 420), "a", rep("a", 100)),
			want: payload.NewMap("l", TrimmedValue, "b", rep("b", 420), "a", rep("a", 100)),
		},
	}
}

func TestTrim(t *testing.T) {
	for _, tc := range trimCases() {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := payload.MarshalBin(tc.in)
			got, err := Trim(tc.in, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			gb, _ := payload.MarshalBin(got)
			wb, _ := payload.MarshalBin(tc.want)
			if !bytes.Equal(gb, wb) {
				t.Errorf("Trim = %s\nwant %s", mapJSON(got), mapJSON(tc.want))
			}
			after, _ := payload.MarshalBin(tc.in)
			if !bytes.Equal(before, after) {
				t.Error("Trim modified its input")
			}
		})
	}
}

func TestTrimThreshold(t *testing.T) {
	// Salt trims when len(packed) + 33 (CPython's bytes overhead) > max.
	in := payload.NewMap("s", strings.Repeat("x", 500))
	packed, _ := payload.MarshalBin(in)
	fits := len(packed) + pyBytesOverhead
	if got, _ := Trim(in, fits); got != in {
		t.Error("trimmed at exactly the limit")
	}
	got, _ := Trim(in, fits-1)
	if got.Str("s") != TrimmedValue {
		t.Errorf("not trimmed one byte over the limit: %s", mapJSON(got))
	}
}

func TestPySizeof(t *testing.T) {
	// Values from CPython 3.11's sys.getsizeof (lists as msgpack builds
	// them, without over-allocation).
	tests := []struct {
		v    any
		want int
	}{
		{nil, 16}, {true, 28}, {int64(0), 28}, {int64(1), 28}, {int64(1<<30 - 1), 28},
		{int64(1 << 30), 32}, {int64(1 << 60), 36}, {uint64(1 << 63), 36}, {int64(-1), 28},
		{int64(-1 << 63), 36}, {1.5, 24}, {"", 49}, {"abc", 52}, {"é", 74}, {"éa", 75},
		{"€", 76}, {"😀", 80}, {[]byte{}, 33}, {[]byte("ab"), 35}, {[]any{}, 56},
		{[]any{1, 2, 3}, 80}, {fixedNow, 48},
	}
	for _, tc := range tests {
		if got := pySizeof(tc.v); got != tc.want {
			t.Errorf("pySizeof(%#v) = %d, want %d", tc.v, got, tc.want)
		}
	}
}

func mapJSON(m *payload.Map) string {
	b, err := m.MarshalJSON()
	if err != nil {
		return err.Error()
	}
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

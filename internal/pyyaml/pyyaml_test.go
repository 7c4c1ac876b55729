package pyyaml

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// testdata/dump.json holds what PyYAML 6.0 (pure Python and libyaml)
// writes for a set of values; testdata/gen.py regenerates it.
type golden struct {
	Dump []struct {
		Value  any    `json:"value"`
		Flow   *bool  `json:"flow"` // null: default_flow_style=None
		Flavor string `json:"flavor"`
		Indent int    `json:"indent"`
		Want   string `json:"want"`
	} `json:"dump"`
	Quoted []struct {
		Kind string `json:"kind"`
		In   string `json:"in"`
		Want string `json:"want"`
	} `json:"quoted"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	raw, err := os.ReadFile("testdata/dump.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// untag decodes gen.py's tagged JSON into the data model.
func untag(t *testing.T, v any) any {
	t.Helper()
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = untag(t, e)
		}
		return out
	case map[string]any:
		for tag, val := range x {
			switch tag {
			case "int":
				n, ok := new(big.Int).SetString(val.(string), 10)
				if !ok {
					t.Fatalf("bad int %v", val)
				}
				switch {
				case n.IsInt64():
					return n.Int64()
				case n.IsUint64():
					return n.Uint64()
				}
				return n
			case "float":
				f, err := strconv.ParseFloat(strings.Replace(val.(string), "inf", "Inf", 1), 64)
				if err != nil {
					t.Fatal(err)
				}
				return f
			case "bytes":
				b, err := base64.StdEncoding.DecodeString(val.(string))
				if err != nil {
					t.Fatal(err)
				}
				return b
			case "datetime":
				d, err := time.Parse("2006-01-02T15:04:05.999999", val.(string))
				if err != nil {
					t.Fatal(err)
				}
				return d
			case "map":
				m := payload.NewMap()
				for _, kv := range val.([]any) {
					p := kv.([]any)
					m.SetKey(untag(t, p[0]), untag(t, p[1]))
				}
				return m
			}
		}
		t.Fatalf("bad tagged value %v", x)
	}
	return v
}

// sortNumStr is sorted() for keys that are all numbers or all strings.
func sortNumStr(m *payload.Map) ([]payload.Item, error) {
	items := append([]payload.Item(nil), m.Items()...)
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
		return 0, false
	}
	var err error
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i].Key, items[j].Key
		if fa, ok := num(a); ok {
			if fb, ok := num(b); ok {
				return fa < fb
			}
		}
		sa, ok1 := a.(string)
		sb, ok2 := b.(string)
		if !ok1 || !ok2 {
			err = errors.New("'<' not supported")
			return false
		}
		return sa < sb
	})
	return items, err
}

// stripTags removes the tags PyYAML writes before quoted non-strings,
// which the PyYAML flavour leaves out.
func stripTags(s string) string {
	return strings.NewReplacer("!!timestamp ", "", "!!binary ", "").Replace(s)
}

func TestDumpMatchesPyYAML(t *testing.T) {
	for i, c := range loadGolden(t).Dump {
		o := Options{Flow: c.Flow != nil && *c.Flow, FlowLeaves: c.Flow == nil, Indent: c.Indent, AllowUnicode: true, SortKeys: sortNumStr, Binary: true}
		want := c.Want
		if c.Flavor == "libyaml" {
			o.Flavor = LibYAML
		} else {
			want = stripTags(want)
		}
		want = strings.TrimSuffix(want, "...\n")
		got, err := Dump(untag(t, c.Value), o)
		if err != nil || got != want {
			t.Errorf("case %d (%s, flow %v, leaves %v, indent %d): Dump = %q, %v\nwant %q", i, c.Flavor, o.Flow, o.FlowLeaves, c.Indent, got, err, want)
		}
	}
}

func TestQuotedMatchesPyYAML(t *testing.T) {
	for _, c := range loadGolden(t).Quoted {
		f := DoubleQuoted
		if c.Kind == "single" {
			f = SingleQuoted
		}
		if got := f(c.In); got != c.Want {
			t.Errorf("%s(%q) = %q, want %q", c.Kind, c.In, got, c.Want)
		}
	}
}

func TestDumpOptions(t *testing.T) {
	type unknown struct{ A int }
	tests := []struct {
		name string
		in   any
		o    Options
		want string
	}{
		{"bytes as str", payload.NewMap("b", []byte("yes")), Options{}, "b: 'yes'\n"},
		{"bytes as binary", payload.NewMap("b", []byte("yes")), Options{Flavor: LibYAML, Binary: true}, "b: !!binary |\n  eWVz\n"},
		{"unknown as NULL", []any{unknown{1}}, Options{UnknownAsNull: true}, "- NULL\n"},
		{"normalize", []any{7, map[string]any{"a": 1}}, Options{Normalize: func(v any) any {
			switch x := v.(type) {
			case int:
				return int64(x)
			case map[string]any:
				return payload.FromGo(x)
			}
			return v
		}}, "- 7\n- a: 1\n"},
		{"keys in order without SortKeys", payload.NewMap("b", int64(1), "a", int64(2)), Options{}, "b: 1\na: 2\n"},
		{"unsortable keys keep their order", payload.NewMap("b", int64(1), "a", int64(2)), Options{SortKeys: func(*payload.Map) ([]payload.Item, error) {
			return nil, errors.New("no")
		}}, "b: 1\na: 2\n"},
		{"width", "aaaa bbbb cccc dddd", Options{Width: 12}, "aaaa bbbb cccc\n  dddd\n"},
		{"narrow width is ignored", "aaaa bbbb cccc dddd", Options{Width: 4}, "aaaa bbbb cccc dddd\n"},
		{"no unicode", "é", Options{}, "\"\\xE9\"\n"},
		{"no unicode libyaml", "é", Options{Flavor: LibYAML}, "\"\\xE9\"\n"},
	}
	for _, tc := range tests {
		if got, err := Dump(tc.in, tc.o); err != nil || got != tc.want {
			t.Errorf("%s: Dump = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestDumpErrors(t *testing.T) {
	var deep any = "x"
	for i := 0; i < 6; i++ {
		deep = payload.NewMap("k", deep)
	}
	if _, err := Dump(deep, Options{MaxDepth: 5}); !errors.Is(err, ErrTooDeep) {
		t.Errorf("6 levels with MaxDepth 5: %v", err)
	}
	if _, err := Dump(deep, Options{MaxDepth: 6}); err != nil {
		t.Errorf("6 levels with MaxDepth 6: %v", err)
	}
	_, err := Dump([]any{"a", struct{}{}}, Options{})
	var re *RepresentError
	if !errors.As(err, &re) || err.Error() != "cannot represent an object: {}" {
		t.Errorf("unknown value: %v", err)
	}
}

func TestScalarText(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, "null"}, {true, "true"}, {int64(-1), "-1"}, {uint64(1 << 63), "9223372036854775808"},
		{1e16, "1.0e+16"}, {1e-5, "1.0e-05"}, {0.5, "0.5"}, {math.Inf(-1), "-.inf"}, {math.NaN(), ".nan"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02 03:04:05"}, {[]byte("b"), "b'b'"},
	} {
		if got := ScalarText(tc.in); got != tc.want {
			t.Errorf("ScalarText(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

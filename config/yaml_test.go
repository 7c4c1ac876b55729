package config

import (
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// yamlCases holds "k: <scalar>" documents and the value of k.
var yamlScalarCases = []struct {
	src  string
	want any
}{
	{"yes", true}, {"Yes", true}, {"YES", true}, {"no", false}, {"No", false}, {"NO", false},
	{"on", true}, {"On", true}, {"ON", true}, {"off", false}, {"Off", false}, {"OFF", false},
	{"true", true}, {"True", true}, {"TRUE", true}, {"false", false}, {"False", false}, {"FALSE", false},
	{"y", "y"}, {"n", "n"}, {"Y", "Y"}, {"tRUE", "tRUE"}, {"yES", "yES"},
	{`"yes"`, "yes"}, {"'on'", "on"}, {"!!str yes", "yes"}, {"!!bool yes", true},
	{"", nil}, {"~", nil}, {"null", nil}, {"Null", nil}, {"NULL", nil}, {"nULL", "nULL"}, {"!!null x", nil},
	{"0", 0}, {"-0", 0}, {"+1", 1}, {"42", 42}, {"1_000", 1000}, {"1__2", 12},
	{"0755", 755}, {"00", 0}, {"0_7", 7}, {"-0755", -493}, {"+0755", 493}, {"!!int 0755", 755}, {`!!int "012"`, 12},
	{"09", "09"}, {"0009", "0009"}, {"0o17", "0o17"},
	{"0b101", 5}, {"0B1", "0B1"}, {"0x1F", 31}, {"-0x1f", -31}, {"0x_1", 1},
	{"1:30", 90}, {"12:00", 720}, {"1:70", "1:70"},
	{"1.5", 1.5}, {"1.", 1.0}, {"0.", 0.0}, {".5", 0.5}, {"1_0.5", 10.5}, {"0.1_5", 0.15}, {"08.5", 8.5},
	{"1e3", "1e3"}, {"1.0e+3", 1000.0}, {"1.5e-3", 0.0015}, {"1.5E+3", 1500.0}, {"!!float 1", 1.0},
	{"190:20:30.15", 685230.15},
	{"2001-12-14", "2001-12-14"}, {"2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"},
	{"!!timestamp 2001-01-01", "2001-01-01"},
	{"12345678901234567890", func() any { n, _ := new(big.Int).SetString("12345678901234567890", 10); return n }()},
	{"hello world", "hello world"}, {"_1", "_1"},
	{"[1, yes, '2']", []any{1, true, "2"}},
	{"{a: on, 2: x, true: y2, ~: z, 1.5: f}", map[string]any{"a": true, "2": "x", "True": "y2", "None": "z", "1.5": "f"}},
	{"!!binary aGVsbG8=", []byte("hello")},
}

func TestDecodeYAMLScalars(t *testing.T) {
	for _, tc := range yamlScalarCases {
		t.Run(tc.src, func(t *testing.T) {
			v, err := DecodeYAML([]byte("k: " + tc.src))
			if err != nil {
				t.Fatalf("DecodeYAML(%q): %v", tc.src, err)
			}
			got := v.(map[string]any)["k"]
			if b, ok := tc.want.(*big.Int); ok {
				if g, ok := got.(*big.Int); !ok || g.Cmp(b) != 0 {
					t.Fatalf("got %#v, want %v", got, b)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v (%T), want %#v (%T)", got, got, tc.want, tc.want)
			}
		})
	}
}

func TestDecodeYAMLSpecialFloats(t *testing.T) {
	for src, check := range map[string]func(float64) bool{
		".inf":  func(f float64) bool { return math.IsInf(f, 1) },
		"-.Inf": func(f float64) bool { return math.IsInf(f, -1) },
		"+.INF": func(f float64) bool { return math.IsInf(f, 1) },
		".NaN":  math.IsNaN,
	} {
		v, err := DecodeYAML([]byte("k: " + src))
		if err != nil {
			t.Fatal(err)
		}
		f, ok := v.(map[string]any)["k"].(float64)
		if !ok || !check(f) {
			t.Errorf("%s: got %#v", src, v.(map[string]any)["k"])
		}
	}
	v, _ := DecodeYAML([]byte("k: -.nan"))
	if v.(map[string]any)["k"] != "-.nan" {
		t.Errorf("-.nan: got %#v, want the string", v.(map[string]any)["k"])
	}
}

var yamlDocCases = []struct {
	name    string
	src     string
	want    any
	wantErr string // substring; "" means no error
}{
	{"empty", "", nil, ""},
	{"comments only", "# nothing\n", nil, ""},
	{"merge", "a: &x {b: 1}\nc:\n  <<: *x\n  d: 2", map[string]any{"a": map[string]any{"b": 1}, "c": map[string]any{"b": 1, "d": 2}}, ""},
	{"merge own key wins", "c:\n  <<: [{a: 1}, {b: 2}]\n  a: 3", map[string]any{"c": map[string]any{"a": 3, "b": 2}}, ""},
	{"merge conflict", "c:\n  <<: [{a: 1}, {a: 2}]", nil, "conflicting ID"},
	{"duplicate key", "a: 1\na: 2", nil, "line 2"},
	{"python-equal keys", "1: a\ntrue: b", nil, "conflicting ID"},
	{"unknown tag", "x: !foo 1", nil, "!foo"},
	{"two documents", "---\na: 1\n---\nb: 2", nil, "single document"},
	{"syntax error", "a: [1, 2\nb: 3", nil, "line"},
	{"equals key", "=: e", map[string]any{"=": "e"}, ""},
	{"equals value", "k: =", nil, "constructor"},
	{"alias", "a: &l [1, 2]\nb: *l", map[string]any{"a": []any{1, 2}, "b": []any{1, 2}}, ""},
	{"sequence doc", "- 1\n- on", []any{1, true}, ""},
	{"set", "k: !!set {a, b}", nil, ""},
}

func TestDecodeYAMLDocuments(t *testing.T) {
	for _, tc := range yamlDocCases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := DecodeYAML([]byte(tc.src))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrYAML) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "set" {
				l, ok := v.(map[string]any)["k"].([]any)
				if !ok || len(l) != 2 {
					t.Fatalf("set: got %#v", v)
				}
				return
			}
			if !reflect.DeepEqual(v, tc.want) {
				t.Fatalf("got %#v, want %#v", v, tc.want)
			}
		})
	}
}

func TestDecodeYAMLAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		prev := "*a" + string(rune('0'+i-1))
		if i > 9 {
			prev = "*a" + string(rune('a'+i-10))
		}
		name := string(rune('0' + i))
		if i > 9 {
			name = string(rune('a' + i - 10))
		}
		b.WriteString("a" + name + ": &a" + name + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	_, err := decodeYAML([]byte(b.String()), 5000)
	if err == nil || !strings.Contains(err.Error(), "5000 nodes") {
		t.Fatalf("alias bomb: err = %v", err)
	}
	// The same budget lets a small aliased document through.
	if _, err := decodeYAML([]byte("a: &x [1, 2]\nb: *x\nc: *x\n"), 5000); err != nil {
		t.Fatal(err)
	}
}

func TestPyFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 1.5: "1.5", 0.1: "0.1", 1e16: "1e+16", 1234567890123456: "1234567890123456.0",
		0.0001: "0.0001", 0.00001: "1e-05", 1.5e-7: "1.5e-07", -2: "-2.0", 1e300: "1e+300",
	} {
		if got := pyfmt.FloatRepr(f); got != want {
			t.Errorf("pyfmt.FloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestDecodeYAMLMatchesSalt feeds the same documents to Salt's loader.
func TestDecodeYAMLMatchesSalt(t *testing.T) {
	var reqs []saltReq
	var srcs []string
	for _, tc := range yamlScalarCases {
		srcs = append(srcs, "k: "+tc.src)
	}
	for _, tc := range yamlDocCases {
		if tc.name != "set" { // Python sets are unordered
			srcs = append(srcs, tc.src)
		}
	}
	for _, s := range srcs {
		reqs = append(reqs, saltReq{Kind: "yaml", Text: s})
	}
	res := runSalt(t, reqs)
	for i, s := range srcs {
		v, err := DecodeYAML([]byte(s))
		if (err == nil) != res[i].OK {
			t.Errorf("%q: gsalt err=%v, salt ok=%v (%s)", s, err, res[i].OK, res[i].Err)
			continue
		}
		if err != nil {
			continue
		}
		if b, ok := v.(map[string]any); ok {
			if bs, ok := b["k"].([]byte); ok {
				b["k"] = string(bs) // the script prints bytes as latin-1 text
			}
			if bi, ok := b["k"].(*big.Int); ok {
				f, _ := new(big.Float).SetInt(bi).Float64()
				b["k"] = f
			}
		}
		if got := jsonNorm(t, v); !reflect.DeepEqual(got, res[i].Value) {
			t.Errorf("%q: gsalt %#v, salt %#v", s, got, res[i].Value)
		}
	}
}

// TestDecodeYAMLProblemLine: a syntax error that yaml.v3 reports at the
// start of the enclosing block also names the line where the text stops
// parsing (moosefs-formula's pillar.example has a flow list as a mapping
// value on its line 80, which yaml.v3 reports as "line 68"); an error
// already at the right line gets nothing added.
func TestDecodeYAMLProblemLine(t *testing.T) {
	cases := []struct {
		name, src, want string
		added           bool
	}{
		{"flow values after a key (moosefs)", "a:\n  b: 1\n  c: 2\n  d: \"x\",\"y\"\n  e: 3\n", "line 4:   d: \"x\",\"y\"", true},
		{"unclosed flow sequence: the line that opens it", "top:\n  list: [a, b\n  other: 1\nnext: 2\n", "line 2:   list: [a, b", true},
		{"mapping value in a scalar (java)", "a:\n  b: 1\n    c: 2\n", "", false},
		{"bad indentation deep in a block", "a:\n  b:\n    c: 1\n    d: 2\n   e: 3\n", "line 5:    e: 3", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeYAML([]byte(c.src))
			if !errors.Is(err, ErrYAML) {
				t.Fatalf("err = %v, want ErrYAML", err)
			}
			msg := err.Error()
			got := strings.Contains(msg, "stops parsing at")
			if got != c.added {
				t.Fatalf("problem line added = %v, want %v: %s", got, c.added, msg)
			}
			if c.added && !strings.Contains(msg, "stops parsing at "+c.want) {
				t.Errorf("err = %s, want it to name %q", msg, c.want)
			}
		})
	}
}

package output

import (
	"bytes"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

func TestResolve(t *testing.T) {
	var logs bytes.Buffer
	o := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	tests := map[string]string{"": "nested", "text": "txt", "json": "json", "highstate": "highstate", "bogus": "nested", "grains": "nested", "no_return": "no_return"}
	for in, want := range tests {
		if got := Resolve(in, o); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
	if !strings.Contains(logs.String(), "Invalid outputter bogus specified, fall back to nested") || strings.Contains(logs.String(), "grains specified") {
		t.Errorf("logs: %s", logs.String())
	}
}

// TestFallback: an outputter that raises in Salt falls back to nested.
func TestFallback(t *testing.T) {
	got, ok := Format("newline_values_only", "Authentication error occurred.", Options{})
	if !ok || got != "Authentication error occurred." {
		t.Errorf("newline_values_only on a string: %q %v", got, ok)
	}
	mixed := payload.NewMap("m1", payload.NewMap().SetKey(int64(1), "a").SetKey("b", "c"))
	got, ok = Format("no_return", mixed, Options{})
	if !ok || got != "m1:\n    ----------\n    1:\n        a\n    b:\n        c" {
		t.Errorf("no_return with unsortable keys: %q", got)
	}
	if _, ok := Format("quiet", mixed, Options{}); ok {
		t.Error("quiet printed something")
	}
}

func TestDisplay(t *testing.T) {
	var buf bytes.Buffer
	if err := Display(&buf, "", "nested", payload.NewMap("m1", true), Options{}); err != nil || buf.String() != "m1:\n    True\n" {
		t.Errorf("Display: %q %v", buf.String(), err)
	}
	buf.Reset()
	// Nested prints nothing for an empty dict; json prints {}.
	if err := Display(&buf, "", "nested", payload.NewMap(), Options{}); err != nil || buf.Len() != 0 {
		t.Errorf("empty nested: %q", buf.String())
	}
	if err := Display(&buf, "", "json", payload.NewMap(), Options{}); err != nil || buf.String() != "{}\n" {
		t.Errorf("empty json: %q", buf.String())
	}
	f := filepath.Join(t.TempDir(), "out")
	for i := 0; i < 2; i++ {
		if err := Display(&buf, f, "txt", payload.NewMap("m1", "a\nb"), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(f)
	if string(b) != "m1: a\nm1: b\nm1: a\nm1: b\n" {
		t.Errorf("out-file: %q", b)
	}
	if err := Display(&buf, filepath.Join(f, "sub"), "txt", "x", Options{}); err == nil {
		t.Error("writing under a file succeeded")
	}
}

func TestPyFloatRepr(t *testing.T) {
	tests := map[float64]string{
		0: "0.0", 1: "1.0", -2.5: "-2.5", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0", 1e-5: "1e-05",
		1e-4: "0.0001", 123456789.125: "123456789.125", 1.7976931348623157e308: "1.7976931348623157e+308",
		5e-324: "5e-324", math.Inf(1): "inf", math.Inf(-1): "-inf", 1.5e300: "1.5e+300", 2.5e-10: "2.5e-10",
	}
	for f, want := range tests {
		if got := PyFloatRepr(f); got != want {
			t.Errorf("PyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
	if got := PyFloatRepr(math.NaN()); got != "nan" {
		t.Errorf("nan: %q", got)
	}
}

func TestPyRepr(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`both ' "`, `'both \' "'`},
		{"tab\t\x01\x7f\u00e9\u2028", `'tab\t\x01\x7fé\u2028'`},
		{[]byte{0, 'a', 0xff}, `b'\x00a\xff'`},
		{payload.NewMap("b", int64(1), "a", []any{nil, true, 1.5}), `{'b': 1, 'a': [None, True, 1.5]}`},
		{uint64(math.MaxUint64), "18446744073709551615"},
	}
	for _, tc := range tests {
		if got := PyRepr(tc.v); got != tc.want {
			t.Errorf("PyRepr(%#v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}

// FuzzOutputters: any decodable payload renders with every outputter
// without panicking, and json output ends with a closing bracket or value.
func FuzzOutputters(f *testing.F) {
	for _, c := range outputCases() {
		b, err := payload.MarshalBin(c.data)
		if err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := payload.UnmarshalLimits(data, payload.Limits{MaxDepth: 64, MaxSize: 1 << 16})
		if err != nil {
			return
		}
		for _, name := range Names {
			for _, color := range []bool{false, true} {
				Format(name, v, Options{Color: color, Retcode: 1})
			}
		}
		neg := -1
		Format("yaml", v, Options{Indent: &neg})
		Format("json", v, Options{IndentPretty: true})
	})
}

package keys

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/stringutils"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// loadTriples reads [name, pattern, result] rows produced by Python 3.11
// (testdata/fnmatch.json: fnmatch.fnmatch; testdata/exprmatch.json: Salt's
// expr_match logic).
func loadTriples(t *testing.T, file string) [][3]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][3]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 100 {
		t.Fatalf("only %d rows", len(rows))
	}
	return rows
}

func TestFnmatchMatchesPython(t *testing.T) {
	for _, r := range loadTriples(t, "fnmatch.json") {
		name, pat, want := r[0].(string), r[1].(string), r[2].(bool)
		if got := py.Fnmatch(name, pat); got != want {
			t.Errorf("Fnmatch(%q, %q) = %v, Python says %v", name, pat, got, want)
		}
	}
}

func TestExprMatchMatchesSalt(t *testing.T) {
	for _, r := range loadTriples(t, "exprmatch.json") {
		line, expr, want := r[0].(string), r[1].(string), r[2].(bool)
		if got := stringutils.ExprMatch(line, expr); got != want {
			t.Errorf("stringutils.ExprMatch(%q, %q) = %v, Salt says %v", line, expr, got, want)
		}
	}
}

func TestValidID(t *testing.T) {
	pki := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(pki, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pki, "inner"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inner", filepath.Join(pki, "tosibling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(pki, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/deeper", filepath.Join(pki, "intosub")); err != nil {
		t.Fatal(err)
	}
	// pki_dir itself reached through a link must still work.
	linkRoot := filepath.Join(outside, "pkilink")
	if err := os.Symlink(pki, linkRoot); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		root, id string
		want     bool
	}{
		{pki, "minion1", true},
		{pki, "web-01.example.com", true},
		{pki, "minions", true},
		{pki, "master.pem", true},
		{pki, "ünïcode", true},
		{pki, "", false},
		{pki, ".", false},
		{pki, "..", false},
		{pki, "a/b", false},
		{pki, "../etc", false},
		{pki, `a\b`, false},
		{pki, "a\x00b", false},
		{pki, "bad\xff", false},
		{pki, "escape", false},
		{pki, "tosibling", true},
		{pki, "intosub", false},
		{linkRoot, "minion1", true},
		{linkRoot, "escape", false},
	}
	for _, c := range cases {
		if got := ValidID(c.root, c.id); got != c.want {
			t.Errorf("ValidID(%s, %q) = %v, want %v", c.root, c.id, got, c.want)
		}
	}
}

func TestPyStr(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{"web", "web"},
		{nil, "None"},
		{true, "True"},
		{false, "False"},
		{int64(5), "5"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{1.0, "1.0"},
		{0.1, "0.1"},
		{1e16, "1e+16"},
		{123456789012345.0, "123456789012345.0"},
		{1e-5, "1e-05"},
		{0.0001, "0.0001"},
		{-2.5, "-2.5"},
		{math.Inf(1), "inf"},
		{[]any{"a", int64(1), nil}, "['a', 1, None]"},
		{[]any{"it's"}, `["it's"]`},
		{[]byte{0x00, 'a', 0xff}, `b'\x00a\xff'`},
		{payload.NewMap("k", "v", "n", int64(2)), "{'k': 'v', 'n': 2}"},
		{map[string]any{"b": 1, "a": "x"}, "{'a': 'x', 'b': 1}"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02 03:04:05"},
		{time.Date(2024, 1, 2, 3, 4, 5, 1000, time.UTC), "2024-01-02 03:04:05.000001"},
	}
	for _, c := range cases {
		if got := pyfmt.Str(c.in); got != c.want {
			t.Errorf("pyStr(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPyLinesAndStrip(t *testing.T) {
	got := py.FileLines("a\nb\r\nc\rd")
	want := []string{"a\n", "b\r\n", "c\r", "d"}
	if !deepEqual(got, want) {
		t.Fatalf("pyLines = %q, want %q", got, want)
	}
	if s := pyStrip("\x1c\u00a0 x y\t\n"); s != "x y" {
		t.Fatalf("pyStrip = %q", s)
	}
}

func FuzzFnmatch(f *testing.F) {
	for _, s := range [][2]string{{"web1", "web*"}, {"a", "[!a-]"}, {"x", "[z-a-b]"}, {"]", "[]]"}, {"", "*"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, pat string) {
		got := py.Fnmatch(name, pat)
		// A pattern with no metacharacters matches only itself.
		plain := true
		for _, r := range pat {
			if r == '*' || r == '?' || r == '[' {
				plain = false
				break
			}
		}
		if plain && got != (string([]rune(name)) == string([]rune(pat))) {
			t.Fatalf("Fnmatch(%q, %q) = %v", name, pat, got)
		}
		if !py.Fnmatch(name, "*") {
			t.Fatalf("* does not match %q", name)
		}
		_ = stringutils.ExprMatch(name, pat)
	})
}

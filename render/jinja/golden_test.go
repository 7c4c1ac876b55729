package jinja

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

type goldenCase struct {
	name string
	src  string
	opts map[string]bool
}

type goldenResult struct {
	Out   *string `json:"out,omitempty"`
	Error string  `json:"error,omitempty"`
	Msg   string  `json:"msg,omitempty"`
	Line  int     `json:"line,omitempty"`
	File  *string `json:"file,omitempty"`
}

// parseCases reads testdata/cases.txt (the format gen.py reads).
func parseCases(t *testing.T) ([]goldenCase, map[string]string) {
	t.Helper()
	data, err := os.ReadFile("testdata/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	tmpls := map[string]string{}
	var cur *goldenCase
	var curT string
	var lines []string
	flush := func() {
		text := strings.TrimRight(strings.Join(lines, "\n"), "\n")
		if cur != nil {
			cur.src = text
			if cur.opts["nl"] {
				cur.src += "\n"
			}
			cases = append(cases, *cur)
		} else if curT != "" {
			tmpls[curT] = text
		}
		cur, curT, lines = nil, "", nil
	}
	started := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "### ") || strings.HasPrefix(line, "@@@ ") {
			if started {
				flush()
			}
			started = true
			name, opts, _ := strings.Cut(line[4:], "|")
			if strings.HasPrefix(line, "###") {
				c := goldenCase{name: strings.TrimSpace(name), opts: map[string]bool{}}
				for _, o := range strings.Fields(opts) {
					c.opts[o] = true
				}
				cur = &c
			} else {
				curT = strings.TrimSpace(name)
			}
			continue
		}
		if started {
			lines = append(lines, line)
		}
	}
	flush()
	return cases, tmpls
}

type mapLoader map[string]string

func (m mapLoader) Load(r *Runtime, name, parent string) (string, string, error) {
	src, ok := m[name]
	if !ok {
		return "", "", ErrTemplateNotFound
	}
	return src, name, nil
}

// TestGolden renders every case of testdata/cases.txt and compares with
// what Python's jinja2 3.1 produced (testdata/golden.json).
func TestGolden(t *testing.T) {
	if testutil.Update() {
		cmd := exec.Command("/usr/bin/python3", "testdata/gen.py")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen.py: %v\n%s", err, out)
		}
	}
	cases, tmpls := parseCases(t)
	data, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	golden := map[string]goldenResult{}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	varsData, err := os.ReadFile("testdata/vars.json")
	if err != nil {
		t.Fatal(err)
	}
	vars, err := decodeJSONOrdered(varsData)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, ok := golden[c.name]
			if !ok {
				t.Fatalf("no golden result for %s (run with -update)", c.name)
			}
			env := NewEnvironment(Options{TrimBlocks: c.opts["trim"], LstripBlocks: c.opts["lstrip"],
				KeepTrailingNewline: c.opts["keepnl"], Lenient: c.opts["lenient"]})
			env.Loader = mapLoader(tmpls)
			got, err := renderString(env, c.src, vars)
			if want.Out != nil {
				if err != nil {
					t.Fatalf("error %v, want output %q", err, *want.Out)
				}
				if got != *want.Out {
					t.Fatalf("output\n got %q\nwant %q", got, *want.Out)
				}
				return
			}
			if err == nil {
				t.Fatalf("output %q, want %s: %s", got, want.Error, want.Msg)
			}
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("error %T %v is not a *jinja.Error", err, err)
			}
			if je.Kind != want.Error || je.Msg != want.Msg {
				t.Fatalf("error\n got %s: %s\nwant %s: %s", je.Kind, je.Msg, want.Error, want.Msg)
			}
			if want.Line != 0 && je.Line != want.Line {
				t.Fatalf("error line %d, want %d", je.Line, want.Line)
			}
			if want.File != nil && je.Name != *want.File {
				t.Fatalf("error in template %q, want %q", je.Name, *want.File)
			}
		})
	}
}

func renderString(env *Environment, src string, vars *payload.Map) (string, error) {
	tpl, err := env.Parse("", src)
	if err != nil {
		return "", err
	}
	return tpl.RenderMap(vars)
}

// TestDeepNesting checks that deeply nested expressions fail cleanly.
func TestDeepNesting(t *testing.T) {
	env := NewEnvironment(Options{})
	for _, src := range []string{
		"{{ " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + " }}",
		"{{ " + strings.Repeat("not ", 5000) + "1 }}",
		"{{ " + strings.Repeat("-", 5000) + "1 }}",
		"{{ " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + " }}",
	} {
		_, err := env.Parse("", src)
		var je *Error
		if !errors.As(err, &je) || je.Kind != "TemplateSyntaxError" || !strings.Contains(je.Msg, "nested too deeply") {
			t.Errorf("%.20s...: %v", src, err)
		}
	}
}

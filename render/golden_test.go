package render_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// update regenerates testdata/golden/*.golden.json through real Salt
// (testdata/golden/gen.py); it needs GSALT_SALT_SRC.

const goldenDir = "testdata/golden"

// goldenErrors are the templates Salt rejects, with the sentinel gsalt
// must return and a phrase both error messages contain.
var goldenErrors = map[string]struct {
	err    error
	phrase string
}{
	"g_errors_undefined.sls": {render.ErrTemplate, "Jinja variable 'not_defined_anywhere' is undefined; line 1"},
	"g_errors_attr.sls":      {render.ErrTemplate, "Jinja variable 'dict object' has no attribute 'nope'; line 1"},
	"g_errors_raise.sls":     {render.ErrTemplate, "custom failure message"},
	"g_errors_missing.sls":   {render.ErrNotFound, "lib/does_not_exist.jinja"},
	"g_errors_syntax.sls":    {render.ErrTemplate, "Jinja syntax error"},
	"g_yamldup.sls":          {render.ErrData, "found conflicting ID 'a'"},
	"g_errors_macro.sls":     {render.ErrTemplate, "lib/broken.jinja(3):\n---\n{%- macro boom() -%}\nok\n{{ not_defined_in_macro }}    <======================\n{%- endmacro -%}\n---"},
	"g_errors_type.sls":      {render.ErrTemplate, `Jinja error: can only concatenate str (not "int") to str`},
	"g_yamlboolkey.sls":      {render.ErrData, "found conflicting ID 'True'"},
}

// goldenDiffers are templates where gsalt knowingly differs from Salt;
// each has its own test documenting gsalt's behaviour.
var goldenDiffers = map[string]string{
	"g_errors_py.sls": "#!py runs Python in Salt; gsalt refuses it (TestErrorClasses)",
}

func TestGolden(t *testing.T) {
	if testutil.Update() {
		src := saltpeer.Require(t)
		cmd := exec.Command(saltpeer.Python(), filepath.Join(goldenDir, "gen.py"), goldenDir)
		cmd.Env = saltpeer.Env(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen.py: %v\n%s", err, out)
		}
	}
	grains := readJSONMap(t, filepath.Join(goldenDir, "grains.json"))
	// pillar as Salt's yaml renderer reads pillar/data.sls (JSON would
	// turn int keys into strings)
	pillarSrc, err := os.ReadFile(filepath.Join(goldenDir, "pillar", "data.sls"))
	if err != nil {
		t.Fatal(err)
	}
	pv, err := render.Default().Render(context.Background(), pillarSrc, "yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	pillar := pv.(*payload.Map)
	meta := readJSONMap(t, filepath.Join(goldenDir, "meta.golden.json"))
	srv := filepath.Join(goldenDir, "srv")
	var files []string
	_ = filepath.WalkDir(srv, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasPrefix(d.Name(), "g_") || d.Name() == "init.sls") && strings.HasSuffix(d.Name(), ".sls") {
			rel, _ := filepath.Rel(srv, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(files) < 10 {
		t.Fatalf("only %d golden templates found", len(files))
	}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			if why, ok := goldenDiffers[rel]; ok {
				t.Logf("not compared: %s", why)
				return
			}
			src, err := os.ReadFile(filepath.Join(srv, rel))
			if err != nil {
				t.Fatal(err)
			}
			wantRaw, err := os.ReadFile(filepath.Join(goldenDir, strings.ReplaceAll(rel, "/", "__")+".golden.json"))
			if err != nil {
				t.Fatalf("no golden file (run with -update): %v", err)
			}
			want, err := render.DecodeJSON(nonFinite(wantRaw))
			if err != nil {
				t.Fatal(err)
			}
			sls := strings.ReplaceAll(strings.TrimSuffix(rel, ".sls"), "/", ".")
			sls = strings.TrimSuffix(sls, ".init")
			rc := &render.Context{
				Grains:  grains,
				Pillar:  pillar,
				Opts:    payload.NewMap("id", "golden", "file_client", "local"),
				Saltenv: "base",
				SLS:     sls,
				Source:  "salt://" + rel,
				Path:    meta.Str("tplpath_prefix") + rel,
				Salt:    &fakeCaller{grains: grains, pillar: pillar},
				Files:   dirFiles(srv),
			}
			got, err := render.Default().Render(context.Background(), src, "", rc)
			if wm, ok := want.(*payload.Map); ok && wm.Has("__error__") {
				exp, known := goldenErrors[rel]
				if !known {
					t.Fatalf("Salt failed on this template but the test does not expect it: %s", wm.Str("__error__"))
				}
				if err == nil {
					t.Fatalf("rendered %v, want an error like Salt's: %s", got, wm.Str("__error__"))
				}
				if !errors.Is(err, exp.err) {
					t.Errorf("error %v is not %v", err, exp.err)
				}
				if !strings.Contains(wm.Str("__error__"), exp.phrase) || !strings.Contains(err.Error(), exp.phrase) {
					t.Errorf("phrase %q missing:\n salt: %s\n gsalt: %v", exp.phrase, firstLine(wm.Str("__error__")), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			gotJSON, err := render.PyJSON(got, render.JSONOptions{Indent: -1})
			if err != nil {
				t.Fatal(err)
			}
			gotData, err := render.DecodeJSON(nonFinite([]byte(gotJSON)))
			if err != nil {
				t.Fatal(err)
			}
			if diffs := orderedDiff(want, gotData, "", nil); len(diffs) > 0 {
				if len(diffs) > 15 {
					diffs = append(diffs[:15], fmt.Sprintf("... and %d more", len(diffs)-15))
				}
				t.Errorf("differs from Salt:\n%s", strings.Join(diffs, "\n"))
			}
		})
	}
}

var reNonFinite = regexp.MustCompile(`([\[,:]\s*)(-?Infinity|NaN)`)

// nonFinite quotes Python's JSON extensions (NaN, Infinity) so that the
// standard decoder accepts them.
func nonFinite(b []byte) []byte { return reNonFinite.ReplaceAll(b, []byte(`$1"$2"`)) }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func readJSONMap(t *testing.T, path string) *payload.Map {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := render.DecodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(*payload.Map)
	if !ok {
		t.Fatalf("%s: not an object", path)
	}
	return m
}

// orderedDiff lists the differences between two decoded JSON values,
// including the order of object keys and int/float types.
func orderedDiff(want, got any, path string, out []string) []string {
	switch w := want.(type) {
	case *payload.Map:
		g, ok := got.(*payload.Map)
		if !ok {
			return append(out, fmt.Sprintf("%s: want object, got %s", path, render.MustJSON(got)))
		}
		if strings.Join(w.Keys(), "\x00") != strings.Join(g.Keys(), "\x00") {
			out = append(out, fmt.Sprintf("%s: keys %q, got %q", path, w.Keys(), g.Keys()))
		}
		for _, it := range w.Items() {
			k := payload.KeyString(it.Key)
			gv, ok := g.Get(k)
			if !ok {
				continue
			}
			out = orderedDiff(it.Value, gv, path+"/"+k, out)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return append(out, fmt.Sprintf("%s: want %s, got %s", path, render.MustJSON(want), render.MustJSON(got)))
		}
		for i := range w {
			out = orderedDiff(w[i], g[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
		return out
	}
	if fmt.Sprintf("%T %v", want, want) != fmt.Sprintf("%T %v", got, got) {
		out = append(out, fmt.Sprintf("%s: want %s (%T), got %s (%T)", path, render.MustJSON(want), want, render.MustJSON(got), got))
	}
	return out
}

// dirFiles serves salt:// files from a directory.
type dirFiles string

func (d dirFiles) CacheFile(_ context.Context, src, _ string) (string, error) {
	p, ok := strings.CutPrefix(src, "salt://")
	if !ok {
		return "", fmt.Errorf("not a salt:// URL: %s", src)
	}
	full := filepath.Join(string(d), filepath.FromSlash(p))
	if _, err := os.Stat(full); err != nil {
		return "", nil
	}
	return full, nil
}

// fakeCaller implements the execution functions the golden templates
// call, with Salt's semantics: pillar.get, grains.get (colon-delimited
// traversal, default ""), test.echo.
type fakeCaller struct {
	grains, pillar *payload.Map
	calls          []string
}

// HasFunction answers for the functions CallFunction serves (render is
// below the execution-module registry, so the test cannot ask it).
func (f *fakeCaller) HasFunction(fun string) bool {
	switch fun {
	case "test.echo", "pillar.get", "grains.get":
		return true
	}
	return false
}

func (f *fakeCaller) CallFunction(_ context.Context, fun string, args []any, kwargs *payload.Map) (any, error) {
	f.calls = append(f.calls, fun)
	switch fun {
	case "test.echo":
		return args[0], nil
	case "pillar.get", "grains.get":
		data := f.pillar
		if fun == "grains.get" {
			data = f.grains
		}
		var def any = ""
		if len(args) > 1 {
			def = args[1]
		}
		if v, ok := kwargs.Get("default"); ok {
			def = v
		}
		var cur any = data
		for _, part := range strings.Split(payload.Text(args[0]), ":") {
			m, ok := cur.(*payload.Map)
			if !ok {
				return def, nil
			}
			v, ok := m.Get(part)
			if !ok {
				return def, nil
			}
			cur = v
		}
		return cur, nil
	}
	return nil, fmt.Errorf("'%s' is not available", fun)
}

package render_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// errCmdNotFound stands for the caller's "function not available" error.
var errCmdNotFound = errors.New("'nosuch.fun' is not available")

// recCaller records calls and answers test.arg with its arguments.
type recCaller struct {
	mu    sync.Mutex
	calls []string
}

func (c *recCaller) CallFunction(_ context.Context, fun string, args []any, kwargs *payload.Map) (any, error) {
	c.mu.Lock()
	c.calls = append(c.calls, fmt.Sprintf("%s %s %s", fun, render.MustJSON(args), render.MustJSON(kwargsOrEmpty(kwargs))))
	c.mu.Unlock()
	switch fun {
	case "test.arg":
		return payload.NewMap("args", args, "kwargs", kwargsOrEmpty(kwargs)), nil
	case "test.none":
		return nil, nil
	}
	return nil, fmt.Errorf("%w", errCmdNotFound)
}

func kwargsOrEmpty(m *payload.Map) *payload.Map {
	if m == nil {
		return payload.NewMap()
	}
	return m
}

// memFiles serves salt:// files from a map, writing them to a temp dir.
type memFiles struct {
	dir string
}

func newMemFiles(t *testing.T, files map[string]string) memFiles {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return memFiles{dir: dir}
}

func (m memFiles) CacheFile(_ context.Context, src, _ string) (string, error) {
	return dirFiles(m.dir).CacheFile(context.Background(), src, "")
}

func jinja(t *testing.T, src string, rc *render.Context) (string, error) {
	t.Helper()
	return render.Default().Text(context.Background(), "jinja", []byte(src), rc)
}

func TestErrorClasses(t *testing.T) {
	files := newMemFiles(t, map[string]string{"lib/self.jinja": "{% include 'lib/self.jinja' %}"})
	tests := []struct {
		name, src, pipe string
		noFiles         bool
		want            []error
		phrase          string
	}{
		{"bad jinja syntax", "a: {% if %}", "", false, []error{render.ErrTemplate}, "Jinja syntax error"},
		{"unclosed block", "{% for x in y %}", "", false, []error{render.ErrTemplate}, "Jinja syntax error"},
		{"undefined salt function", "a: {{ salt['nosuch.fun']() }}", "", false, []error{render.ErrTemplate, errCmdNotFound}, "nosuch.fun"},
		{"raise", "{{ raise('it broke') }}", "", false, []error{render.ErrTemplate, render.ErrRaised}, "it broke"},
		{"undefined variable", "a: {{ nope }}", "", false, []error{render.ErrTemplate}, "Jinja variable 'nope' is undefined"},
		{"missing import", "{% import 'lib/none.jinja' as x %}", "", false, []error{render.ErrTemplate, render.ErrNotFound}, "lib/none.jinja"},
		{"missing include", "{% include 'lib/none.sls' %}", "", false, []error{render.ErrNotFound}, "lib/none.sls"},
		{"missing import_yaml", "{% import_yaml 'x.yaml' as x %}", "", false, []error{render.ErrNotFound}, "x.yaml"},
		{"no file source", "{% import 'lib/self.jinja' as x %}", "", true, []error{render.ErrNotFound}, "no file source"},
		{"relative escape", "{% import '../../etc/passwd' as x %}", "", false, []error{render.ErrNotFound}, "outside of salt://"},
		{"py refused", "#!py\ndef run():\n    return {}\n", "", false, []error{render.ErrRenderer}, "py"},
		{"pyobjects refused", "x: 1", "jinja|pyobjects", false, []error{render.ErrRenderer}, "pyobjects"},
		{"bad yaml", "a: [1\n", "", false, []error{render.ErrData}, ""},
		{"duplicate key", "a: 1\na: 2\n", "", false, []error{render.ErrData}, "conflicting"},
		// Salt 3006's load_yaml report of a YAML error fails on its CSafeLoader mark
		{"bad load_yaml", "{% load_yaml as x %}a: [{% endload %}", "", false, []error{render.ErrTemplate}, "'NoneType' object has no attribute 'splitlines'"},
		{"bad load_json", "{% load_json as x %}{nope{% endload %}", "", false, []error{render.ErrTemplate}, "Unable to load json"},
		{"include recursion", "{% include 'lib/self.jinja' %}", "", false, []error{render.ErrTemplate}, "nested deeper"},
		{"macro recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "", false, []error{render.ErrTemplate}, "nested deeper"},
		{"deep brackets", "{{ " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300) + " }}", "", false, []error{render.ErrTemplate}, "nested deeper"},
		{"range too long", "{% for i in range(2000000) %}{% endfor %}", "", false, []error{render.ErrTemplate}, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."},
		{"output too large", "{% for i in range(1000) %}{{ '" + strings.Repeat("x", 100) + "' * 1000 }}{% endfor %}", "", false, []error{render.ErrTemplate}, "output larger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &render.Context{Salt: &recCaller{}, Files: files, Source: "salt://top.sls"}
			if tt.noFiles {
				rc.Files = nil
			}
			reg := render.Default()
			reg.Register("jinja", render.Jinja{MaxOutputSize: 1 << 20})
			_, err := reg.Render(context.Background(), []byte(tt.src), tt.pipe, rc)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("error %q is not %v", err, want)
				}
			}
			if !strings.Contains(err.Error(), tt.phrase) {
				t.Errorf("error %q lacks %q", err, tt.phrase)
			}
		})
	}
}

func TestJinjaContext(t *testing.T) {
	caller := &recCaller{}
	var logs bytes.Buffer
	files := newMemFiles(t, map[string]string{
		"formula/map.jinja":       "{% set v = 'map:' ~ tpldir %}{% from './sub/deep.jinja' import d %}{% set deep = d %}",
		"formula/sub/deep.jinja":  "{% set d = 'deep:' ~ tplfile %}",
		"formula/init.sls":        "",
		"formula/data.yaml":       "k: [1, 2]\n",
		"formula/tpl/file.conf.j": "port={{ port }}\n",
		"formula/base.j":          "A{% block b %}x{% endblock %}C {{ grains.os }}",
		"formula/macros.j":        "{% macro box(t) %}[{{ t }}{{ caller() }}]{% endmacro %}",
	})
	rc := &render.Context{
		Grains:  payload.NewMap("zeta", int64(1), "alpha", int64(2), "os", "Debian"),
		Pillar:  payload.NewMap("p", payload.NewMap("k", "v")),
		Opts:    payload.NewMap("id", "m1"),
		Saltenv: "prod",
		SLS:     "formula",
		Source:  "salt://formula/init.sls",
		Vars:    payload.NewMap("port", int64(8080), "grains", payload.NewMap("os", "override")),
		Salt:    caller,
		Files:   files,
		Log:     slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	tests := []struct{ name, src, want string }{
		{"vars win", "{{ grains.os }} {{ port }}", "override 8080"},
		{"saltenv opts", "{{ saltenv }} {{ opts.id }}", "prod m1"},
		{"sls vars", "{{ sls }} {{ slspath }} {{ tpldir }} {{ tplfile }} {{ tplpath }} [{{ tpldot }}]", "formula formula formula formula/init.sls formula/init.sls [formula]"},
		{"pillar order", "{% for k, v in pillar.p.items() %}{{ k }}={{ v }}{% endfor %}", "k=v"},
		{"salt item call", "{{ salt['test.arg'](1, 'two', x=[3], a=None) }}", "{'args': [1, 'two'], 'kwargs': {'x': [3], 'a': None}}"},
		{"salt attribute call", "{{ salt.test.arg(True).args }}", "[True]"},
		{"salt none result", "{{ salt['test.none']() }}", "None"},
		{"relative import chain", "{% from './map.jinja' import v, deep %}{{ v }} {{ deep }} {{ tpldir }}", "map:formula deep:./sub/deep.jinja formula"},
		{"import_yaml relative", "{% import_yaml './data.yaml' as d %}{{ d.k }}", "[1, 2]"},
		{"log functions", "{% do salt['log.info']('hello from jinja') %}{% do salt.log.debug('dbg') %}ok", "ok"},
		{"show_full_context", "{{ show_full_context().saltenv }}", "prod"},
		{"odict", "{{ odict([('b', 1), ('a', 2)]) }}", "{'b': 1, 'a': 2}"},
		{"trailing newline kept", "x\n", "x\n"},
		{"trailing newline after trim", "{% if true -%}\nx\n{%- endif %}\n", "x\n"},
		{"no trailing newline", "x", "x"},
		{"finalize in nested bodies", "{% if true %}{{ none }}{% endif %}|{% for x in [none] %}{{ x }}{% endfor %}|{% load_text as t %}{{ none }}{% endload %}{{ t }}|{% macro m() %}{{ none }}{% endmacro %}{{ m() }}|{% set s %}{{ none }}{% endset %}{{ s }}|{% with %}{{ none }}{% endwith %}|{% filter upper %}{{ none }}{% endfilter %}", "None|None|None|None|None|None|NONE"},
		{"python operators in tags", "{% if 7 % 2 == 1 %}odd{% endif %}{% set x = '%s!' % 'a' %}{{ x }}{% for i in [2 ** 3] %}{{ i }}{% endfor %}{% load_text as t %}{{ '%d' % 5 }}{% endload %}{{ t }}", "odda!85"},
		{"set unpacking", "{% set a, b = 1, 'x' %}{{ a }}{{ b }}{% set n, v = 'pkg=1.2'.split('=') %}{{ n }}/{{ v }}{% set k, w = ('p', 'q') %}{{ k }}{{ w }}", "1xpkg/1.2pq"},
		{"chained comparisons", "{{ 5 > 3 > 1 }} {{ 1 < 2 < 3 < 4 }} {{ 1 < 3 < 2 }} {{ 1 == 1 != 2 }}", "True True False True"},
		{"tuple literals", "{{ (1, 2) }} {{ ('a',) }} {{ '%s-%s' % ('a', 'b') }} {{ '%s' % [1] }} {{ 1 in (1, 2) }}", "(1, 2) ('a',) a-b [1] True"},
		{"implicit varargs kwargs", "{% macro m(a) %}{{ a }}{{ varargs|length }}{{ kwargs.x }}{% endmacro %}{{ m(1, 2, 3, x=4) }}", "124"},
		{"extends", "{% extends 'formula/base.j' %}{% block b %}y{% endblock %}", "AyC override"},
		{"call imported macro", "{% from 'formula/macros.j' import box %}{% call box('t') %}+body{% endcall %}", "[t+body]"},
		{"include with context", "{% set port = 1 %}{% include 'formula/tpl/file.conf.j' %}", "port=1"},
		{"int keys", "{% set d = {} %}{% do d.update({1: 'a'}) %}{{ d.get(1) }}", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jinja(t, tt.src, rc)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q want %q", got, tt.want)
			}
		})
	}
	if !strings.Contains(logs.String(), "hello from jinja") || !strings.Contains(logs.String(), "dbg") {
		t.Errorf("log calls not logged: %s", logs.String())
	}
	for _, c := range caller.calls {
		if strings.HasPrefix(c, "log.") {
			t.Errorf("log call reached the caller: %s", c)
		}
	}
	if len(caller.calls) == 0 || !strings.Contains(caller.calls[0], `[1, "two"] {"x": [3], "a": null}`) {
		t.Errorf("calls = %q", caller.calls)
	}
}

func TestJinjaOptions(t *testing.T) {
	src := "<\n  {% if true %}\n  x\n  {% endif %}\n>"
	tests := []struct {
		name string
		opts *payload.Map
		sls  string
		want string
	}{
		{"defaults", nil, "", "<\n  \n  x\n  \n>"},
		{"trim_blocks", payload.NewMap("jinja_trim_blocks", true), "", "<\n    x\n  >"},
		{"lstrip_blocks", payload.NewMap("jinja_lstrip_blocks", true), "", "<\n\n  x\n\n>"},
		{"both", payload.NewMap("jinja_trim_blocks", true, "jinja_lstrip_blocks", true), "", "<\n  x\n>"},
		{"jinja_env", payload.NewMap("jinja_env", payload.NewMap("trim_blocks", true, "lstrip_blocks", true)), "", "<\n  x\n>"},
		{"jinja_sls_env ignored outside sls", payload.NewMap("jinja_sls_env", payload.NewMap("trim_blocks", true, "lstrip_blocks", true)), "", "<\n  \n  x\n  \n>"},
		{"jinja_sls_env in sls", payload.NewMap("jinja_sls_env", payload.NewMap("trim_blocks", true, "lstrip_blocks", true)), "a.b", "<\n  x\n>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jinja(t, src, &render.Context{Opts: tt.opts, SLS: tt.sls})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q want %q", got, tt.want)
			}
		})
	}
	// Jinja2 environment options Salt passes through (expected outputs
	// from python3-jinja2 3.1)
	for _, tt := range []struct {
		opts      *payload.Map
		src, want string
	}{
		{payload.NewMap("line_statement_prefix", "%", "line_comment_prefix", "##"), "a\n% for i in [1, 2]\n  item {{ i }} ## note\n% endfor\nb ## tail", "a\n  item 1\n  item 2\nb"},
		{payload.NewMap("variable_start_string", "<<", "variable_end_string", ">>", "block_start_string", "<%", "block_end_string", "%>"), "<% if true %><< 1 + 1 >><% endif %> {{ x }}", "2 {{ x }}"},
	} {
		got, err := jinja(t, tt.src, &render.Context{Opts: payload.NewMap("jinja_env", tt.opts)})
		if err != nil || got != tt.want {
			t.Errorf("jinja_env %s: got %q, %v; want %q", render.MustJSON(tt.opts), got, err, tt.want)
		}
	}
	// allow_undefined: undefined prints as "" instead of failing
	got, err := jinja(t, "[{{ nope }}][{{ grains.nope }}]", &render.Context{Opts: payload.NewMap("allow_undefined", true)})
	if err != nil || got != "[][]" {
		t.Errorf("allow_undefined: %q %v", got, err)
	}
	if _, err := jinja(t, "{{ nope }}", nil); !errors.Is(err, render.ErrTemplate) {
		t.Errorf("strict undefined: %v", err)
	}
}

func TestCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := "{% for i in range(100000) %}{% if i %}{% endif %}{% endfor %}x"
	_, err := render.Default().Text(ctx, "jinja", []byte(src), nil)
	if !errors.Is(err, context.Canceled) && !errors.Is(err, render.ErrTemplate) {
		t.Fatalf("err = %v", err)
	}
	if err == nil {
		t.Fatal("cancelled render succeeded")
	}
}

func TestConcurrentRenders(t *testing.T) {
	rc := &render.Context{Grains: payload.NewMap("n", int64(1)), Salt: &recCaller{}}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			src := fmt.Sprintf("{%% set l = [] %%}{%% for x in range(%d) %%}{%% do l.append(x) %%}{%% endfor %%}{{ l|length + grains.n }} {{ salt.test.arg(%d).args }}", i, i)
			got, err := render.Default().Text(context.Background(), "jinja", []byte(src), rc)
			if err == nil && got != fmt.Sprintf("%d [%d]", i+1, i) {
				err = fmt.Errorf("render %d: %q", i, got)
			}
			if err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// the caller's data was not changed by the templates
	if rc.Grains.Len() != 1 {
		t.Errorf("grains changed: %v", rc.Grains)
	}
}

func TestTemplateMutationDoesNotLeak(t *testing.T) {
	pillar := payload.NewMap("d", payload.NewMap("a", int64(1)), "l", []any{"x"})
	rc := &render.Context{Pillar: pillar}
	got, err := jinja(t, "{% do pillar.d.update({'b': 2}) %}{% do pillar.l.append('y') %}{{ pillar.d }} {{ pillar.l }}", rc)
	if err != nil {
		t.Fatal(err)
	}
	if got != "{'a': 1, 'b': 2} ['x', 'y']" {
		t.Errorf("got %q", got)
	}
	if pillar.Map("d").Len() != 1 || len(pillar.List("l")) != 1 {
		t.Errorf("render changed the caller's pillar: %v", render.MustJSON(pillar))
	}
}

func TestYAMLDumpEdgeCases(t *testing.T) {
	tests := []struct {
		in   any
		flow bool
		want string
	}{
		{payload.NewMap("b", int64(1), "a", []any{"x", nil}), true, "{a: [x, null], b: 1}\n"},
		{payload.NewMap("b", int64(1), "a", []any{"x", nil}), false, "a:\n- x\n- null\nb: 1\n"},
		{[]any{payload.NewMap("k", "v")}, false, "- k: v\n"},
		{"it's", true, "it's\n"},
		{"'q'", true, "'''q'''\n"},
		{"", true, "''\n"},
		{1e16, true, "1.0e+16\n"},
		{payload.NewMap(strings.Repeat("k", 130), int64(1)), false, "? " + strings.Repeat("k", 130) + "\n: 1\n"},
	}
	for _, tt := range tests {
		got, err := render.YAMLDump(tt.in, tt.flow)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("YAMLDump(%s, %v) = %q want %q", render.MustJSON(tt.in), tt.flow, got, tt.want)
		}
	}
}

func TestPyJSON(t *testing.T) {
	v := payload.NewMap("b", []any{1.0, int64(2), "é"}, "a", payload.NewMap())
	tests := []struct {
		opts render.JSONOptions
		want string
	}{
		{render.JSONOptions{Indent: -1}, `{"b": [1.0, 2, "é"], "a": {}}`},
		{render.JSONOptions{Indent: -1, SortKeys: true, ASCII: true}, `{"a": {}, "b": [1.0, 2, "\u00e9"]}`},
		{render.JSONOptions{Indent: 2}, "{\n  \"b\": [\n    1.0,\n    2,\n    \"é\"\n  ],\n  \"a\": {}\n}"},
	}
	for _, tt := range tests {
		got, err := render.PyJSON(v, tt.opts)
		if err != nil || got != tt.want {
			t.Errorf("PyJSON(%+v) = %q, %v; want %q", tt.opts, got, err, tt.want)
		}
	}
}

func TestSLSVars(t *testing.T) {
	tests := []struct {
		path, sls string
		want      string
	}{
		{"/srv/salt/apache/init.sls", "apache", `{"tplpath": "/srv/salt/apache/init.sls", "tplfile": "apache/init.sls", "tpldir": "apache", "tpldot": "apache", "slspath": "apache", "slsdotpath": "apache", "slscolonpath": "apache", "sls_path": "apache"}`},
		{"/srv/salt/a/b/c.sls", "a.b.c", `{"tplpath": "/srv/salt/a/b/c.sls", "tplfile": "a/b/c.sls", "tpldir": "a/b", "tpldot": "a.b", "slspath": "a/b", "slsdotpath": "a.b", "slscolonpath": "a:b", "sls_path": "a_b"}`},
		{"/srv/salt/top.sls", "top", `{"tplpath": "/srv/salt/top.sls", "tplfile": "top.sls", "tpldir": ".", "tpldot": "", "slspath": "", "slsdotpath": "", "slscolonpath": "", "sls_path": ""}`},
		{"/tmp/x/file.conf", "", `{"tplpath": "/tmp/x/file.conf", "tplfile": "file.conf", "tpldir": ".", "tpldot": "", "slspath": "", "slsdotpath": "", "slscolonpath": "", "sls_path": ""}`},
		{"", "a.b", `{"slspath": "a/b", "slsdotpath": "a.b", "slscolonpath": "a:b", "sls_path": "a_b"}`},
	}
	for _, tt := range tests {
		if got := render.MustJSON(render.SLSVars(tt.path, tt.sls)); got != tt.want {
			t.Errorf("SLSVars(%q, %q) = %s\nwant %s", tt.path, tt.sls, got, tt.want)
		}
	}
}

// TestFormerGonjaGaps proves that what gonja (the engine gsalt used
// before render/jinja) could not do now behaves like Jinja2 in Salt 3006.
// Every expected output or error was produced by python3-jinja2 3.1 in a
// SandboxedEnvironment with StrictUndefined, as Salt configures it.
func TestFormerGonjaGaps(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // output, or with errPhrase "" must render
		errPhrase string // a phrase of the error
	}{
		{"trailing commas", "{{ [1, 2,] }} {{ {'a': 1,} }} {{ dict(a=1,) }}", "[1, 2] {'a': 1} {'a': 1}", ""},
		{"line break after and/or", "{% if true and\n  not false or\n  false %}yes{% endif %}", "yes", ""},
		{"star args and kwargs", "{% macro m(a, b, c) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{% set l = [1, 2] %}{% set d = {'c': 3} %}{{ m(*l, **d) }}", "123", ""},
		{"positional after star args", "{% macro m(a, b, c) %}{% endmacro %}{{ m(*[1], 2) }}", "", "invalid syntax for function call expression"},
		{"conditional without else", "[{{ 'x' if false }}]", "[]", ""},
		{"bool dict keys", "{% set s = {True: 'running', False: 'dead'} %}{{ s[true] }} {{ s[false] }}", "running dead", ""},
		{"empty dict is false", "{% if {} %}full{% else %}empty{% endif %}", "empty", ""},
		{"negative index", "{{ ['x'][-1] }}", "x", ""},
		{"int dict key subscript", "{% set d = {80: 'http'} %}{{ d[80] }}", "http", ""},
		{"int beyond int64", "{{ 100000000000000000000 + 1 }}", "100000000000000000001", ""},
		{"keyword argument order", "{{ dict(b=1, a=2) }}", "{'b': 1, 'a': 2}", ""},
		{"implicit varargs is a tuple", "{% macro kw(a) %}{{ varargs }}{% endmacro %}{{ kw(1, 2) }}", "(2,)", ""},
		{"int dict keys iterate as ints", "{% set d = {} %}{% do d.update({80: 'x'}) %}{% for k in d %}{{ k + 1 }}{% endfor %}", "81", ""},
		{"method on int-keyed dict literal", "{{ {1: 'a'}.get(1) }}", "a", ""},
		{"str plus int is a TypeError", "{{ 'a' + 1 }}", "", `Jinja error: can only concatenate str (not "int") to str; line 1`},
		{"division by zero", "a\n{{ 1 / 0 }}", "", "Jinja error: division by zero; line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jinja(t, tt.src, nil)
			if tt.errPhrase != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errPhrase) || !errors.Is(err, render.ErrTemplate) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tt.errPhrase)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestErrorLocation checks that an error inside an imported file names
// that file and line, with Salt's excerpt, and that an error in the top
// template gives "; line N" and the excerpt marked like Salt's.
func TestErrorLocation(t *testing.T) {
	files := newMemFiles(t, map[string]string{"lib/m.jinja": "{% macro boom() %}\n{{ undefined_in_macro }}\n{% endmacro %}"})
	rc := &render.Context{Files: files, Source: "salt://top.sls"}
	_, err := jinja(t, "{% from 'lib/m.jinja' import boom %}\nx\n{{ boom() }}", rc)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"Jinja variable 'undefined_in_macro' is undefined", "m.jinja(2):", "{{ undefined_in_macro }}    <======================"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = jinja(t, "a\nb\n{{ nope }}\nc", nil)
	want := "Jinja variable 'nope' is undefined; line 3\n\n---\na\nb\n{{ nope }}    <======================\nc\n---"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %q, want suffix %q", err, want)
	}
}

func TestRegistryTextAndData(t *testing.T) {
	reg := render.Default()
	if _, err := reg.Text(context.Background(), "yaml", []byte("a: 1"), nil); !errors.Is(err, render.ErrRenderer) {
		t.Errorf("Text with a data renderer: %v", err)
	}
	if _, err := reg.Text(context.Background(), "mako", []byte("x"), nil); !errors.Is(err, render.ErrRenderer) {
		t.Errorf("Text with mako: %v", err)
	}
	start := time.Now()
	out, err := reg.Render(context.Background(), []byte("#!jinja|yaml\n{% load_yaml as x %}a: [1, 2]{% endload %}k: {{ x.a | sum }}\n"), "", nil)
	if err != nil || render.MustJSON(out) != `{"k": 3}` {
		t.Errorf("got %v, %v", render.MustJSON(out), err)
	}
	_ = start
}

// TestPythonRegex checks Salt's regex filters and match test with what
// only Python's re (not RE2) can do: lookarounds and backreferences; the
// expected values are Python's.
func TestPythonRegex(t *testing.T) {
	tests := []struct{ src, want string }{
		{"{{ 'foobar' | regex_match('(foo)(?=bar)') }}", "('foo',)"},
		{"{{ 'abccd' | regex_search('(\\\\w)\\\\1') }}", "('c',)"},
		{"{{ 'ab cb' | regex_replace('(?<=a)b', 'X') }}", "aX cb"},
		{"{{ 'u@h' | regex_replace('(\\\\w+)@(\\\\w+)', '\\\\2 at \\\\1') }}", "h at u"},
		{"{{ 'y' is match('(?!x)\\\\w') }} {{ 'x' is match('(?!x)\\\\w') }}", "True False"},
		{"{{ 'xfoo' | regex_match('foo') }}", "None"},
		{"{{ 'ABC' | regex_search('b(c)', ignorecase=True) }}", "('C',)"},
	}
	for _, tt := range tests {
		got, err := jinja(t, tt.src, nil)
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.src, got, err, tt.want)
		}
	}
}

// TestSaltTags checks Salt's SerializerExtension tags on the engine:
// profile renders its body, import_json/import_text render the file as
// Jinja first, load_text captures its body.
func TestSaltTags(t *testing.T) {
	files := newMemFiles(t, map[string]string{"d.json": `{"a": [1, {{ 1 + 1 }}]}`, "t.txt": "hello {{ 'x' }}"})
	got, err := jinja(t, "{% profile as 'lbl' %}in{{ 1 }}{% endprofile %}|{% import_json 'd.json' as j %}{{ j.a }}|{% import_text 't.txt' as tx %}{{ tx }}|{% load_text as lt %}raw {{ 2 }}{% endload %}{{ lt }}", &render.Context{Files: files})
	if want := "in1|[1, 2]|hello x|raw 2"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	if _, err := jinja(t, "{% load_yaml x %}{% endload %}", nil); err == nil || !strings.Contains(err.Error(), "Jinja syntax error: expected token 'as', got 'x'") {
		t.Errorf("load_yaml without as: %v", err)
	}
}

// mergeCaller merges its second argument into its first in place (as
// Salt's defaults.merge does to the dict it is given) for every function.
type mergeCaller struct{}

func mergeInto(dst, src *payload.Map) {
	for _, it := range src.Items() {
		if sm, ok := it.Value.(*payload.Map); ok {
			if dm := dst.Map(it.Key.(string)); dm != nil {
				mergeInto(dm, sm)
				continue
			}
		}
		dst.SetKey(it.Key, it.Value)
	}
}

func (mergeCaller) CallFunction(_ context.Context, fun string, args []any, _ *payload.Map) (any, error) {
	dst, _ := args[0].(*payload.Map)
	src, _ := args[1].(*payload.Map)
	if dst == nil || src == nil {
		return nil, errors.New("merge needs two dicts")
	}
	mergeInto(dst, src)
	return dst, nil
}

// TestInPlaceFunctions: defaults.merge, defaults.update and slsutil.update
// change the dict a template passes them, nested dicts keeping their
// identity, as Python's references do; other functions leave it alone.
func TestInPlaceFunctions(t *testing.T) {
	for _, tc := range []struct{ fun, want string }{
		{"defaults.merge", "{'a': {'x': 1, 'y': 2}, 'b': 3}|{'x': 1, 'y': 2}"},
		{"defaults.update", "{'a': {'x': 1, 'y': 2}, 'b': 3}|{'x': 1, 'y': 2}"},
		{"slsutil.update", "{'a': {'x': 1, 'y': 2}, 'b': 3}|{'x': 1, 'y': 2}"},
		{"slsutil.merge", "{'a': {'x': 1}}|{'x': 1}"},
	} {
		t.Run(tc.fun, func(t *testing.T) {
			src := "{% set d = {'a': {'x': 1}} %}{% set inner = d.a %}" +
				"{% do salt['" + tc.fun + "'](d, {'a': {'y': 2}, 'b': 3}) %}{{ d }}|{{ inner }}"
			got, err := jinja(t, src, &render.Context{Salt: mergeCaller{}})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

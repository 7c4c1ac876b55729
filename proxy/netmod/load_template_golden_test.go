package netmod_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/wire/payload"
)

// ltCase is one net.load_template call of the golden test: positional
// arguments and keyword arguments (test and debug are added).
type ltCase struct {
	Name   string         `json:"name"`
	Args   []any          `json:"args,omitempty"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
	order  []string       // keyword order for gsalt's call
}

// ltTemplates are the salt:// templates the cases render.
var ltTemplates = map[string]string{
	"vars.j2":   "name={{ name }} source={{ source }} saltenv={{ saltenv }} user={{ user }} group={{ group }} mode={{ mode }} a={{ a }} b={{ b }}\n",
	"kw.j2":     "{% for s in extra %}ntp server {{ s }}\n{% endfor %}role {{ role }}\n",
	"nest.j2":   "{{ c.x }}-{{ c.get('y', 'none') }} {{ d | default('nod') }}\n",
	"first.j2":  "hostname {{ grains.id }}\n",
	"second.j2": "ntp server {{ pillar.ntp }}\n",
}

// ltCases cover how context, defaults and the extra keyword arguments
// reach a template: from template_source (file.apply_template_on_contents)
// and from salt:// files (file.get_managed, which adds name, source,
// saltenv, user, group and mode), shallow merges of nested dicts,
// keyword arguments over context over defaults, context overriding
// get_managed's own variables, several template files, grains/pillar/opts.
// The template_source cases name a template too (netconfig.managed always
// does): Salt 3006's load_template raises AttributeError on
// template_name.startswith when only template_source is given, where gsalt
// renders the source.
func ltCases() []ltCase {
	m := func(kv ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	return []ltCase{
		{Name: "source context over defaults", Args: []any{"inline"}, Kwargs: m("template_source", "{{ a }} {{ b }} {{ c.x }}-{{ c.get('y', 'none') }}",
			"context", m("a", "ctx", "c", m("x", 1)), "defaults", m("a", "def", "b", "def", "c", m("x", 0, "y", 9)))},
		{Name: "source kwargs over context", Args: []any{"inline"}, Kwargs: m("template_source", "{{ a }} {{ role }} {{ port }}",
			"context", m("a", "ctx", "role", "ctx"), "role", "kw", "port", 8080), order: []string{"template_source", "context", "role", "port"}},
		{Name: "source kwargs only", Args: []any{"inline"}, Kwargs: m("template_source", "{% for s in servers %}ntp server {{ s }}\n{% endfor %}", "servers", []any{"10.0.0.1", "10.0.0.2"})},
		{Name: "source defaults only", Args: []any{"inline"}, Kwargs: m("template_source", "x {{ v }}", "defaults", m("v", "d"))},
		{Name: "source grains pillar opts", Args: []any{"inline"}, Kwargs: m("template_source", "{{ grains.id }} {{ pillar.ntp }} {{ opts.id }}")},
		{Name: "file get_managed variables", Args: []any{"salt://vars.j2"}, Kwargs: m("context", m("a", 1), "defaults", m("a", 0, "b", 2))},
		{Name: "file context over name", Args: []any{"salt://vars.j2"}, Kwargs: m("context", m("a", 1, "b", 2, "name", "mine", "source", "src"))},
		{Name: "file kwargs", Args: []any{"salt://kw.j2"}, Kwargs: m("extra", []any{"10.0.0.8", "10.0.0.9"}, "role", "edge")},
		{Name: "file kwargs over context", Args: []any{"salt://kw.j2"}, Kwargs: m("context", m("extra", []any{"1.1.1.1"}, "role", "ctx"), "role", "kw"),
			order: []string{"context", "role"}},
		{Name: "file nested shallow", Args: []any{"salt://nest.j2"}, Kwargs: m("context", m("c", m("x", "cx")), "defaults", m("c", m("x", "dx", "y", "dy"), "d", "dd"))},
		{Name: "file list", Args: []any{[]any{"salt://first.j2", "salt://second.j2"}}},
		{Name: "file saltenv", Args: []any{"salt://vars.j2"}, Kwargs: m("saltenv", "base", "context", m("a", "x", "b", "y"))},
	}
}

// ltKwargs builds gsalt's keyword map for c in a fixed order.
func ltKwargs(c ltCase) *payload.Map {
	order := c.order
	if order == nil {
		for _, k := range []string{"template_source", "context", "defaults", "saltenv", "servers", "extra", "role"} {
			if _, ok := c.Kwargs[k]; ok {
				order = append(order, k)
			}
		}
	}
	kv := []any{}
	for _, k := range order {
		kv = append(kv, k, ltValue(c.Kwargs[k]))
	}
	return kw(append(kv, "test", true, "debug", true)...)
}

// ltValue converts a case value to payload values (maps in sorted key
// order, as the JSON Salt reads has them; ints as int64).
func ltValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		raw, _ := json.Marshal(x)
		v, _ := vectors.Convert(raw)
		return v
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ltValue(e)
		}
		return out
	case int:
		return int64(x)
	}
	return v
}

// TestLoadTemplateGolden runs net.load_template (test=True, debug=True)
// on a simulated IOS device for each case and compares the result, the
// comment and the configuration it loaded with what Salt 3006's own
// napalm_network and file modules render for the same templates and
// arguments (testdata/load_template_golden.json, written by
// testdata/load_template_golden.py with -update and GSALT_SALT_SRC).
func TestLoadTemplateGolden(t *testing.T) {
	t.Parallel()
	cases := ltCases()
	golden := filepath.Join("testdata", "load_template_golden.json")
	if testutil.Update() {
		src := saltpeer.Require(t)
		dir := t.TempDir()
		roots := filepath.Join(dir, "roots")
		for name, text := range ltTemplates {
			testutil.WriteFile(t, filepath.Join(roots, name), text, 0o644)
		}
		raw, err := json.Marshal(cases)
		if err != nil {
			t.Fatal(err)
		}
		casesFile := filepath.Join(dir, "cases.json")
		testutil.WriteFile(t, casesFile, string(raw), 0o644)
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(5*time.Minute))
		defer cancel()
		cmd := exec.CommandContext(ctx, saltpeer.Python(), filepath.Join("testdata", "load_template_golden.py"), casesFile, roots, golden)
		cmd.Env = saltpeer.Env(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("load_template_golden.py: %v\n%s", err, out)
		}
	}
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		Result       bool   `json:"result"`
		Comment      string `json:"comment"`
		LoadedConfig string `json:"loaded_config"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	f := startFleet(t, "ios", 1, nil)
	h := newHarness(t, initModule(t, proxyCfg("ios", f.Port(0))))
	for name, text := range ltTemplates {
		h.file(name, text)
	}
	for _, c := range cases {
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("%s: no golden entry (run with -update and GSALT_SALT_SRC)", c.Name)
			continue
		}
		args := append(ltValue(c.Args).([]any), ltKwargs(c))
		if c.Args == nil {
			args = []any{ltKwargs(c)}
		}
		m := h.ret("net.load_template", args...)
		got, _ := m.Get("loaded_config")
		if m.Bool("result") != w.Result || m.Str("comment") != w.Comment || got != w.LoadedConfig {
			t.Errorf("%s:\ngot  result %v comment %q loaded %q\nwant result %v comment %q loaded %q",
				c.Name, m.Bool("result"), m.Str("comment"), got, w.Result, w.Comment, w.LoadedConfig)
		}
	}
}

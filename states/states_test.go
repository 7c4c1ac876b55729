package states

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// retOf returns the ret dict of the chunk whose tag starts with prefix.
func retOf(t *testing.T, ret any, prefix string) *payload.Map {
	t.Helper()
	m, ok := ret.(*payload.Map)
	if !ok {
		t.Fatalf("return is %s, not a dict", pyRepr(ret))
	}
	for _, it := range m.Items() {
		if strings.HasPrefix(keyText(it.Key), prefix) {
			return it.Value.(*payload.Map)
		}
	}
	t.Fatalf("no %q in %v", prefix, m.Keys())
	return nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// watchMod is a fake state module whose functions carry a Watch (the
// per-function mod_watch path), counting calls.
func watchMod(calls *atomic.Int32) []Function {
	spec := modules.Spec{Params: []modules.Param{{Name: "name", Required: true}}, Kwargs: true}
	return []Function{
		{Name: "svc.running", Spec: spec,
			Fn: func(_ context.Context, c *Call) (Ret, error) {
				return Ret{Name: c.Name, Result: True, Comment: "running"}, nil
			},
			Watch: func(_ context.Context, c *Call) (Ret, error) {
				calls.Add(1)
				if !c.Watch || c.Fun != "running" || len(c.Reqs["watch"]) != 1 {
					return Ret{}, fmt.Errorf("bad watch call: watch=%v fun=%s reqs=%d", c.Watch, c.Fun, len(c.Reqs["watch"]))
				}
				return Ret{Name: c.Name, Result: True, Comment: "restarted", Changes: payload.NewMap("restarted", true)}, nil
			}},
		{Name: "svc.plain", Spec: spec, Fn: func(_ context.Context, c *Call) (Ret, error) {
			return Ret{Name: c.Name, Result: True, Comment: "plain " + c.Saltenv}, nil
		}},
		{Name: "svc.broken", Spec: spec, Fn: func(_ context.Context, c *Call) (Ret, error) {
			return Ret{}, fmt.Errorf("%w: it broke", modules.ErrExecution)
		}},
		{Name: "svc.panics", Spec: spec, Fn: func(_ context.Context, c *Call) (Ret, error) {
			panic("kaboom")
		}},
		{Name: "svc.strict", Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}, {Name: "size", Required: true}}},
			Fn: func(_ context.Context, c *Call) (Ret, error) {
				return Ret{Name: c.Name, Result: True, Comment: "size " + c.Args.Str("size")}, nil
			}},
		{Name: "svc.checker", Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}, {Name: "check_cmd"}}},
			Fn: func(_ context.Context, c *Call) (Ret, error) {
				return Ret{Name: c.Name, Result: True, Comment: "checked"}, nil
			}},
	}
}

// TestRuntime runs small SLS trees through state.sls and checks one
// chunk's result and comment.
func TestRuntime(t *testing.T) {
	var calls atomic.Int32
	tests := []struct {
		name, sls string
		kw        *payload.Map
		tag       string
		result    any
		comment   string
		retcode   int
		changes   string
	}{
		{name: "watch uses Function.Watch", sls: "a:\n  test.succeed_with_changes\nb:\n  svc.running:\n    - watch:\n      - test: a\n",
			tag: "svc_|-b_", result: true, comment: "restarted", changes: `{"restarted":true}`},
		{name: "watch without changes runs the function", sls: "a:\n  test.nop\nb:\n  svc.running:\n    - watch:\n      - test: a\n",
			tag: "svc_|-b_", result: true, comment: "running", changes: `{}`},
		{name: "watch on a state without mod_watch is a require", sls: "a:\n  test.fail_without_changes\nb:\n  svc.plain:\n    - watch:\n      - a\n",
			tag: "svc_|-b_", result: false, comment: "One or more requisite failed: t.a", retcode: 2},
		{name: "saltenv reaches the function", sls: "b:\n  svc.plain:\n    - saltenv: other\n", tag: "svc_|-b_", result: true, comment: "plain other"},
		{name: "function error is an exception comment", sls: "b:\n  svc.broken\n", tag: "svc_|-b_", result: false,
			comment: "An exception occurred in this state: Traceback (most recent call last):\n  File \"<gsalt>\", in svc.broken\nsalt.exceptions.CommandExecutionError: it broke\n", retcode: 2},
		{name: "panic is an exception comment", sls: "b:\n  svc.panics\n", tag: "svc_|-b_", result: false, comment: "An exception occurred in this state: ", retcode: 2},
		{name: "missing parameter", sls: "b:\n  svc.strict\n", tag: "svc_|-b_", result: false, comment: "Missing parameter size for state svc.strict\n", retcode: 2},
		{name: "required parameter given", sls: "b:\n  svc.strict:\n    - size: 3\n", tag: "svc_|-b_", result: true, comment: "size 3"},
		{name: "umask is validated", sls: "b:\n  test.nop:\n    - umask: '9'\n", tag: "test_|-b_", result: false, comment: "Invalid umask: 9\n", retcode: 2},
		{name: "check_cmd failing", sls: "b:\n  test.succeed_with_changes:\n    - check_cmd:\n      - 'false'\n", tag: "test_|-b_", result: false, comment: "check_cmd determined the state failed", retcode: 2},
		{name: "check_cmd passing", sls: "b:\n  test.fail_without_changes:\n    - check_cmd:\n      - 'true'\n", tag: "test_|-b_", result: true, comment: "check_cmd determined the state succeeded"},
		{name: "check_cmd handled by the function", sls: "b:\n  svc.checker:\n    - check_cmd: 'false'\n", tag: "svc_|-b_", result: false, comment: "check_cmd determined the state failed", retcode: 2},
		{name: "onlyif function retcode", sls: "b:\n  test.succeed_with_changes:\n    - onlyif:\n      - fun: test.retcode\n        code: 3\n", tag: "test_|-b_", result: true, comment: "onlyif condition is false"},
		{name: "unless function retcode", sls: "b:\n  test.succeed_without_changes:\n    - unless:\n      - fun: test.retcode\n        code: 3\n", tag: "test_|-b_", result: true, comment: "Success!"},
		{name: "onlyif get_return", sls: "b:\n  test.succeed_without_changes:\n    - onlyif:\n      - fun: test.echo\n        text: {a: {b: ''}}\n        get_return: a:b\n", tag: "test_|-b_", result: true, comment: "onlyif condition is false"},
		{name: "onlyif function raising", sls: "b:\n  test.nop:\n    - onlyif:\n      - fun: test.raise\n", tag: "test_|-b_", result: false, comment: "An exception occurred in this state: ", retcode: 2},
		{name: "onlyif unknown function", sls: "b:\n  test.nop:\n    - onlyif:\n      - fun: nosuch.fun\n", tag: "test_|-b_", result: false, comment: "An exception occurred in this state: ", retcode: 2},
		{name: "test mode", sls: "b:\n  test.succeed_with_changes\n", kw: payload.NewMap("test", true), tag: "test_|-b_", result: nil,
			comment: "If we weren't testing, this would be successful with changes"},
		{name: "test in grains", sls: "b:\n  test.succeed_with_changes\n", kw: payload.NewMap("Test", "True"), tag: "test_|-b_", result: nil,
			comment: "If we weren't testing, this would be successful with changes"},
		{name: "onfail_stop false keeps retcode 0", sls: "f:\n  test.fail_without_changes\nh:\n  test.nop:\n    - onfail:\n      - test: f\n    - onfail_stop: False\n",
			tag: "test_|-f_", result: false, comment: "Failure!"},
		{name: "onfail handler failing", sls: "f:\n  test.fail_without_changes\nh:\n  test.fail_without_changes:\n    - onfail:\n      - test: f\n    - onfail_stop: False\n",
			tag: "test_|-h_", result: false, comment: "Failure!", retcode: 2},
		{name: "terse", sls: "a:\n  test.nop\nb:\n  test.succeed_with_changes\n", kw: payload.NewMap("terse", true), tag: "test_|-b_", result: true, comment: "Success!"},
		{name: "retry until success", sls: "b:\n  test.succeed_without_changes:\n    - retry:\n        attempts: 3\n        interval: 0\n        until: False\n",
			tag: "test_|-b_", result: true, comment: "Attempt 1: Returned a result of \"True\", with the following comment: \"Success!\"\nAttempt 2: Returned a result of \"True\", with the following comment: \"Success!\"\nSuccess!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"t.sls": tt.sls})
			h := newHarness(t, map[string]string{"base": dir}, watchMod(&calls)...)
			kw := payload.NewMap()
			if tt.kw != nil {
				kw = tt.kw
			}
			res := h.run(t, "state.sls", []any{"t"}, kw)
			if res.Retcode != tt.retcode {
				t.Errorf("retcode %d, want %d: %s", res.Retcode, tt.retcode, jsonText(res.Return))
			}
			r := retOf(t, res.Return, tt.tag)
			if got, _ := r.Get("result"); got != tt.result {
				t.Errorf("result %v, want %v (%s)", got, tt.result, jsonText(r))
			}
			got := r.Str("comment")
			if strings.HasSuffix(tt.comment, ": ") {
				if !strings.HasPrefix(got, tt.comment) {
					t.Errorf("comment %q, want prefix %q", got, tt.comment)
				}
			} else if got != tt.comment {
				t.Errorf("comment %q, want %q", got, tt.comment)
			}
			if tt.changes != "" {
				if ch, _ := r.Get("changes"); jsonText(ch) != tt.changes {
					t.Errorf("changes %s, want %s", jsonText(ch), tt.changes)
				}
			}
			if tt.name == "terse" {
				if m := res.Return.(*payload.Map); m.Len() != 1 {
					t.Errorf("terse kept %v", m.Keys())
				}
			}
		})
	}
	if calls.Load() != 1 {
		t.Errorf("Watch called %d times, want 1", calls.Load())
	}
}

// TestInvalidKeyword: a state function without **kwargs given unknown
// keys aborts the run with Salt's SaltInvocationError text.
func TestInvalidKeyword(t *testing.T) {
	var calls atomic.Int32
	dir := writeTree(t, map[string]string{
		"one.sls": "b:\n  svc.strict:\n    - size: 1\n    - colour: red\n",
		"two.sls": "b:\n  svc.strict:\n    - size: 1\n    - colour: red\n    - shape: round\n    - weight: 2\n",
	})
	h := newHarness(t, map[string]string{"base": dir}, watchMod(&calls)...)
	for sls, want := range map[string]string{
		"one": "ERROR executing 'state.sls': 'colour' is an invalid keyword argument for 'svc.strict'",
		"two": "ERROR executing 'state.sls': 'colour', 'shape' and 'weight' are invalid keyword arguments for 'svc.strict'",
	} {
		res := h.run(t, "state.sls", []any{sls}, nil)
		if res.Return != want || res.Retcode != 1 {
			t.Errorf("%s: %d %q, want %q", sls, res.Retcode, res.Return, want)
		}
	}
}

// TestTop covers top file merging strategies, env_order, state_top and
// the match: forms.
func TestTop(t *testing.T) {
	base := writeTree(t, map[string]string{
		"top.sls": `base:
  'golden':
    - b1
  'G@os:Debian and not L@other':
    - b2
  'os:Debian':
    - match: grain
    - b3
  'gold.*':
    - match: pcre
    - b4
  'x,golden':
    - match: list
    - b5
  'role:web':
    - match: pillar
    - b6
  'grp':
    - match: nodegroup
    - b7
  'os:Deb.*n':
    - match: grain_pcre
    - b8
  'os:Nope':
    - match: grain
    - never
  'golden ':
    - match: nosuchmatcher
    - never
  '*':
    - subfilter:
        'G@os:Debian':
          - sub1
        'G@os:Nope':
          - never
    - dev: fromdev
dev:
  '*':
    - b_dev_from_base
`,
		"alt.sls":   "base:\n  '*':\n    - alt\n",
		"other.sls": "base:\n  '*':\n    - other\n",
	})
	dev := writeTree(t, map[string]string{
		"top.sls": "dev:\n  '*':\n    - d1\nbase:\n  '*':\n    - ignored\nqa:\n  '*':\n    - ignored\n",
	})
	qa := writeTree(t, map[string]string{
		"top.sls": "qa:\n  '*':\n    - q1\n",
	})
	tests := []struct {
		name string
		opts *payload.Map
		kw   *payload.Map
		want string
	}{
		{name: "merge", want: `{"base":["b1","b2","b3","b4","b5","b6","b7","b8","sub1"],"dev":["fromdev","b_dev_from_base"],"qa":["q1"]}`},
		{name: "same", opts: payload.NewMap("top_file_merging_strategy", "same"),
			want: `{"base":["b1","b2","b3","b4","b5","b6","b7","b8","sub1"],"dev":["fromdev","d1"],"qa":["q1"]}`},
		{name: "merge_all", opts: payload.NewMap("top_file_merging_strategy", "merge_all"),
			want: `{"base":["b1","b2","b3","b4","b5","b6","b7","b8","ignored"],"dev":["fromdev","b_dev_from_base","d1"],"qa":["ignored","q1"]}`},
		{name: "env_order", opts: payload.NewMap("env_order", []any{"qa", "base"}),
			want: `{"base":["b1","b2","b3","b4","b5","b6","b7","b8","sub1"],"dev":["b_dev_from_base"],"qa":["q1"]}`},
		{name: "saltenv", kw: payload.NewMap("saltenv", "dev"), want: `{"dev":["d1"]}`},
		{name: "state_top", opts: payload.NewMap("state_top", "/alt.sls"), want: `{"base":["alt"]}`},
		{name: "state_top_saltenv", opts: payload.NewMap("state_top_saltenv", "qa"), want: `{"qa":["q1"]}`},
		{name: "same without default_top", opts: payload.NewMap("top_file_merging_strategy", "same", "default_top", ""), want: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, map[string]string{"base": base, "dev": dev, "qa": qa})
			h.env.Pillar = payload.NewMap("role", "web")
			h.opts.Set("nodegroups", payload.NewMap("grp", "golden"))
			if tt.opts != nil {
				for _, it := range tt.opts.Items() {
					h.opts.SetKey(it.Key, it.Value)
				}
			}
			res := h.run(t, "state.show_top", nil, tt.kw)
			if got := jsonText(res.Return); got != tt.want {
				t.Errorf("show_top = %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestTopErrors: verify_tops messages and the highstate placeholders.
func TestTopErrors(t *testing.T) {
	tests := []struct {
		name, top, fun, want string
		retcode              int
	}{
		{name: "no top", top: "", fun: "state.apply", retcode: 2,
			want: `{"no_|-states_|-states_|-None":{"result":false,"comment":"No Top file or master_tops data matches found. Please see master log for details.","name":"No States","changes":{},"__run_num__":0}}`},
		{name: "no states", top: "base:\n  '*': []\n", fun: "state.apply", retcode: 2,
			want: `{"no_|-states_|-states_|-None":{"result":false,"comment":"No states found for this minion","name":"No States","changes":{},"__run_num__":0}}`},
		{name: "targets not a dict", top: "base: [a]\n", fun: "state.highstate", retcode: 2,
			want: `{"no_|-states_|-states_|-None":{"result":false,"comment":"Unable to render top file: Unable to render top file. No targets found.","name":"No States","changes":{},"__run_num__":0}}`},
		{name: "bad sls list", top: "base:\n  '*': a\n", fun: "state.show_top", retcode: 1,
			want: `["Malformed topfile (state declarations not formed as a list)"]`},
		{name: "empty sls", top: "base:\n  '*':\n    - ''\n    - match: ''\n", fun: "state.show_top", retcode: 1,
			want: `["Environment base contains an empty sls index","Improperly formatted top file matcher in saltenv {'match': ''}:  file"]`},
		{name: "missing sls", top: "base:\n  '*':\n    - nope\n", fun: "state.apply", retcode: 1,
			want: `["No matching sls found for 'nope' in env 'base'"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"x.sls": "x:\n  test.nop\n"}
			if tt.top != "" {
				files["top.sls"] = tt.top
			}
			h := newHarness(t, map[string]string{"base": writeTree(t, files)})
			res := h.run(t, tt.fun, nil, nil)
			if got := jsonText(res.Return); got != tt.want || res.Retcode != tt.retcode {
				t.Errorf("%s = %d %s\nwant %d %s", tt.fun, res.Retcode, got, tt.retcode, tt.want)
			}
		})
	}
}

// TestCompiler checks the high data compiler passes directly.
func TestCompiler(t *testing.T) {
	decode := func(s string) *payload.Map {
		v, err := render.YAML{}.Render(context.Background(), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v.(*payload.Map)
	}
	t.Run("order", func(t *testing.T) {
		chunks := []*payload.Map{
			payload.NewMap("state", "s", "name", "c", "fun", "f"),
			payload.NewMap("state", "s", "name", "b", "fun", "f", "order", int64(3)),
			payload.NewMap("state", "s", "name", "a", "fun", "f", "order", "last"),
			payload.NewMap("state", "s", "name", "d", "fun", "f", "order", int64(-2)),
			payload.NewMap("state", "s", "name", "e", "fun", "f", "order", "first"),
			payload.NewMap("state", "s", "name", "f", "fun", "f", "order", 2.5),
			payload.NewMap("state", "s", "name", "a2", "fun", "f"),
		}
		var names []string
		var orders []any
		for _, c := range orderChunks(chunks) {
			names = append(names, c.Str("name"))
			o, _ := c.Get("order")
			orders = append(orders, o)
		}
		if got := strings.Join(names, ","); got != "e,f,b,a2,c,d,a" {
			t.Errorf("order %s", got)
		}
		if got := jsonText(orders); got != "[0,2.5,3,103,103,1000101,1000103]" {
			t.Errorf("orders %s", got)
		}
	})
	t.Run("exclude", func(t *testing.T) {
		high := decode("a: {test: [nop], __sls__: x.one}\nb: {test: [nop], __sls__: x.two}\nc: {test: [nop], __sls__: y}\n__exclude__: [x.t*, {id: c}, {sls: nothing}, {id: a, sls: b}]\n")
		applyExclude(high)
		if got := strings.Join(high.Keys(), ","); got != "a" {
			t.Errorf("left %s", got)
		}
	})
	t.Run("extend merges requisites and replaces arguments", func(t *testing.T) {
		high := decode(`a: {test: [nop, {require: [{test: x}]}, {comment: old}, {names: [p, q]}], __sls__: s, __env__: base}
__extend__:
  - a: {test: [{require: [{test: y}]}, {comment: new}, succeed_without_changes, {name: solo}], __sls__: s, __env__: base}
  - b: {test: [nop], __sls__: s}
`)
		errs := reconcileExtend(high, false)
		if len(errs) != 1 || !strings.HasPrefix(errs[0], "Cannot extend ID 'b' in 'base:s'.") {
			t.Errorf("errors %q", errs)
		}
		got := jsonText(mapGetStr(high.Map("a"), "test"))
		want := `["succeed_without_changes",{"require":[{"test":"x"},{"test":"y"}]},{"comment":"new"},{"name":"solo"},{"name":"solo"}]`
		if got != want {
			t.Errorf("extended %s\nwant     %s", got, want)
		}
	})
	t.Run("requisite_in duplicates like Salt", func(t *testing.T) {
		high := decode(`a: {test: [nop, {require_in: [b, c]}], __sls__: s, __env__: base}
b: {test: [nop], __sls__: s, __env__: base}
c: {test: [nop], __sls__: s, __env__: base}
`)
		if errs := requisiteIn(high, nil, nil); len(errs) != 0 {
			t.Fatal(errs)
		}
		if got := jsonText(high.Map("b")); got != `{"test":["nop",{"require":[{"test":"a"},{"test":"a"}]}],"__sls__":"s","__env__":"base"}` {
			t.Errorf("b = %s", got)
		}
	})
	t.Run("default call", func(t *testing.T) {
		high := decode("a: {test: [{name: x}, {order: 1}]}\nb: {test: []}\n")
		injectDefaultCall(high)
		if got := jsonText(high); got != `{"a":{"test":[{"name":"x"},"__call__",{"order":1}]},"b":{"test":["__call__"]}}` {
			t.Errorf("%s", got)
		}
	})
}

// TestExecFunctions covers the state.* functions not in the goldens.
func TestExecFunctions(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"top.sls": "base:\n  '*':\n    - a\n",
		"a.sls":   "one:\n  test.succeed_without_changes:\n    - comment: {{ pillar.get('greeting', 'none') }}\ntwo:\n  test.nop\n",
	})
	h := newHarness(t, map[string]string{"base": dir})
	h.env.Pillar = payload.NewMap("greeting", "hi", "keep", "yes")

	res := h.run(t, "state.sls", []any{"a"}, payload.NewMap("pillar", payload.NewMap("greeting", "override")))
	if c := retOf(t, res.Return, "test_|-one_").Str("comment"); c != "override" {
		t.Errorf("pillar override: comment %q", c)
	}
	if res := h.run(t, "state.sls", []any{"a"}, nil); retOf(t, res.Return, "test_|-one_").Str("comment") != "hi" {
		t.Errorf("override leaked into the minion's pillar")
	}
	res = h.run(t, "state.sls", []any{"a"}, payload.NewMap("pillar", "notadict"))
	if res.Return != "ERROR executing 'state.sls': Pillar data must be formatted as a dictionary, unless pillar_enc is specified." {
		t.Errorf("bad pillar: %q", res.Return)
	}

	if res := h.run(t, "state.sls_exists", []any{"a"}, nil); res.Return != true {
		t.Errorf("sls_exists a = %v", res.Return)
	}
	if res := h.run(t, "state.sls_exists", []any{"nope"}, nil); res.Return != false || res.Retcode != 0 {
		t.Errorf("sls_exists nope = %v %d", res.Return, res.Retcode)
	}
	if res := h.run(t, "state.id_exists", []any{"one,two", "a"}, nil); res.Return != true {
		t.Errorf("id_exists = %v", res.Return)
	}
	if res := h.run(t, "state.id_exists", []any{"one,three", "a"}, nil); res.Return != false {
		t.Errorf("id_exists three = %v", res.Return)
	}
	res = h.run(t, "state.sls_id", []any{"nothere", "a"}, nil)
	if res.Return != "ERROR executing 'state.sls_id': No matches for ID 'nothere' found in SLS 'a' within saltenv 'base'" {
		t.Errorf("sls_id nothere: %q", res.Return)
	}
	res = h.run(t, "state.test", []any{"a"}, nil)
	if r := retOf(t, res.Return, "test_|-one_"); r.Str("comment") != "hi" || res.Retcode != 0 {
		t.Errorf("state.test: %s", jsonText(res.Return))
	}
	if fn, _ := h.mods.Lookup("state.apply"); fn.Outputter != "highstate" {
		t.Errorf("state.apply outputter %q", fn.Outputter)
	}
	if fn, _ := h.mods.Lookup("state.show_sls"); fn.Outputter != "" {
		t.Errorf("state.show_sls outputter %q", fn.Outputter)
	}

	high := payload.NewMap("h1", payload.NewMap("test", []any{"succeed_with_changes"}))
	res = h.run(t, "state.high", []any{high}, nil)
	if r := retOf(t, res.Return, "test_|-h1_|-h1_|-succeed_with_changes"); r.Str("comment") != "Success!" || res.Retcode != 0 {
		t.Errorf("state.high: %s", jsonText(res.Return))
	}
	low := payload.NewMap("state", "test", "fun", "fail_without_changes", "name", "l1")
	res = h.run(t, "state.low", []any{low}, nil)
	// The minion's retcode rule (a dict return with result False is 1)
	// applies; state.low itself sets none.
	if r, _ := res.Return.(*payload.Map); r.Str("comment") != "Failure!" || res.Retcode != 1 {
		t.Errorf("state.low: %d %s", res.Retcode, jsonText(res.Return))
	}
	res = h.run(t, "state.low", []any{payload.NewMap("state", "test", "fun", "nope", "name", "l1")}, nil)
	if jsonText(res.Return) != `["Specified state 'test.nope' was not found"]` || res.Retcode != 1 {
		t.Errorf("state.low missing: %d %s", res.Retcode, jsonText(res.Return))
	}

	h.opts.Set("lock_saltenv", true)
	res = h.run(t, "state.sls", []any{"a"}, payload.NewMap("saltenv", "dev"))
	if res.Return != "ERROR: lock_saltenv is enabled, saltenv cannot be changed" {
		t.Errorf("lock_saltenv: %q", res.Return)
	}
	h.opts.Delete("lock_saltenv")

	h.env.Grains.Set("state_runs_disabled", []any{"a", "test.fail*"})
	res = h.run(t, "state.sls", []any{"a"}, nil)
	if jsonText(res.Return) != `["The state file \"a\" is currently disabled, to re-enable, run state.enable a."]` || res.Retcode != 1 {
		t.Errorf("disabled sls: %s", jsonText(res.Return))
	}
	res = h.run(t, "state.high", []any{payload.NewMap("f", payload.NewMap("test", []any{"fail_without_changes"}))}, nil)
	if r := retOf(t, res.Return, "test_|-f_"); r.Str("comment") != `The state function "test.fail_without_changes" is currently disabled by "test.fail*", to re-enable, run state.enable test.fail*.` {
		t.Errorf("disabled function: %s", jsonText(res.Return))
	}
	h.env.Grains.Delete("state_runs_disabled")

	h.env.Pillar.Set("_errors", []any{"bad pillar"})
	res = h.run(t, "state.sls", []any{"a"}, nil)
	if jsonText(res.Return) != `["Pillar failed to render with the following messages:","bad pillar"]` || res.Retcode != 5 {
		t.Errorf("pillar errors: %d %s", res.Retcode, jsonText(res.Return))
	}
	if res := h.run(t, "state.show_sls", []any{"a"}, nil); res.Return != "ERROR: Pillar failed to render. Additional info follows:\n\n- bad pillar" {
		t.Errorf("show_sls pillar errors: %q", res.Return)
	}
	if res := h.run(t, "state.sls", []any{"a"}, payload.NewMap("force", true)); res.Retcode != 0 {
		t.Errorf("force: %d %s", res.Retcode, jsonText(res.Return))
	}
	h.env.Pillar.Delete("_errors")

	h.opts.Set("global_state_conditions", payload.NewMap("test.nop", []any{"G@os:Nope"}))
	res = h.run(t, "state.sls", []any{"a"}, nil)
	if r := retOf(t, res.Return, "test_|-two_"); r.Str("comment") != "Failed to meet global state conditions. State not called." {
		t.Errorf("global conditions: %s", jsonText(r))
	}
	if r := retOf(t, res.Return, "test_|-one_"); r.Str("comment") != "hi" {
		t.Errorf("global conditions hit another state: %s", jsonText(r))
	}
	h.opts.Delete("global_state_conditions")
}

// TestConflict: another state job running refuses the run with Salt's
// message; concurrent=True runs anyway.
func TestConflict(t *testing.T) {
	dir := writeTree(t, map[string]string{"a.sls": "one:\n  test.nop\n"})
	h := newHarness(t, map[string]string{"base": dir})
	jobs := []any{
		payload.NewMap("fun", "state.highstate", "pid", int64(4242), "jid", "20240102030405123456"),
		payload.NewMap("fun", "state.sls", "pid", int64(4242), "jid", "20240102030405999999"),
	}
	if err := h.mods.Register(modules.Function{Name: "saltutil.is_running", Spec: modules.Spec{Params: []modules.Param{{Name: "fun", Required: true}}},
		Fn: func(_ context.Context, c *modules.Call) (any, error) {
			if c.Args.Str("fun") != "state.*" {
				return nil, errors.New("unexpected pattern")
			}
			return jobs, nil
		}}); err != nil {
		t.Fatal(err)
	}
	pub := payload.NewMap("jid", "20240102030405999999")
	res := h.mods.Execute(context.Background(), modules.Binder{}, h.env, "state.sls", []any{"a"}, pub)
	want := `["The function \"state.highstate\" is running as PID 4242 and was started at 2024, Jan 02 03:04:05.123456 with jid 20240102030405123456"]`
	if got := jsonText(res.Return); got != want || res.Retcode != 1 {
		t.Errorf("conflict: %d %s\nwant %s", res.Retcode, got, want)
	}
	res = h.run(t, "state.running", nil, nil)
	if n := len(res.Return.([]any)); n != 2 {
		t.Errorf("state.running lists %d jobs", n)
	}
	res = h.mods.Execute(context.Background(), modules.Binder{}, h.env, "state.sls", []any{"a", payload.NewMap("__kwarg__", true, "concurrent", true)}, pub)
	if res.Retcode != 0 {
		t.Errorf("concurrent: %d %s", res.Retcode, jsonText(res.Return))
	}
	res = h.mods.Execute(context.Background(), modules.Binder{}, h.env, "state.sls", []any{"a", payload.NewMap("__kwarg__", true, "queue", int64(1))}, pub)
	if res.Retcode != 1 {
		t.Errorf("queue full: %d %s", res.Retcode, jsonText(res.Return))
	}
}

// TestEvents: state_events sends one job progress event per chunk, and
// fire_event a state_result event, through event.fire_master.
func TestEvents(t *testing.T) {
	dir := writeTree(t, map[string]string{"a.sls": "one:\n  test.nop\ntwo:\n  test.nop:\n    - fire_event: True\nthree:\n  test.nop:\n    - fire_event: custom/tag\n"})
	h := newHarness(t, map[string]string{"base": dir})
	var tags []string
	if err := h.mods.Register(modules.Function{Name: "event.fire_master",
		Spec: modules.Spec{Params: []modules.Param{{Name: "data", Required: true}, {Name: "tag", Required: true}, {Name: "preload"}}},
		Fn: func(_ context.Context, c *modules.Call) (any, error) {
			d := c.Args.Get("data").(*payload.Map)
			pre := c.Args.Get("preload").(*payload.Map)
			tags = append(tags, fmt.Sprintf("%s len=%v jid=%s", c.Args.Str("tag"), mapGetStr(d, "len"), pre.Str("jid")))
			return true, nil
		}}); err != nil {
		t.Fatal(err)
	}
	pub := payload.NewMap("jid", "20240102030405123456")
	h.mods.Execute(context.Background(), modules.Binder{}, h.env, "state.sls", []any{"a"}, pub)
	if len(tags) != 2 {
		t.Fatalf("without state_events: %q", tags)
	}
	want := []string{
		"salt/state_result/20240102030405123456/golden/two len=<nil> jid=20240102030405123456",
		"salt/state_result/20240102030405123456/golden/custom/tag len=<nil> jid=20240102030405123456",
	}
	if strings.Join(tags, "\n") != strings.Join(want, "\n") {
		t.Errorf("fire_event tags:\n%s", strings.Join(tags, "\n"))
	}
	tags = nil
	h.mods.Execute(context.Background(), modules.Binder{}, h.env, "state.sls", []any{"a", payload.NewMap("__kwarg__", true, "state_events", true)}, pub)
	if len(tags) != 3 || tags[0] != "salt/job/20240102030405123456/prog/golden/0 len=3 jid=20240102030405123456" {
		t.Errorf("state_events tags:\n%s", strings.Join(tags, "\n"))
	}
	tags = nil
	h.opts.Set("local", true)
	h.mods.Execute(context.Background(), modules.Binder{}, h.env, "state.sls", []any{"a"}, pub)
	if len(tags) != 0 {
		t.Errorf("local mode sent %q", tags)
	}
}

// TestParseFunction checks the slot call parser against Python's
// parse_function behaviour.
func TestParseFunction(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"test.echo(hello)", `test.echo ["hello"] {}`},
		{"test.arg(a b, 'c d', k=v, l=[1, 2])", `test.arg ["ab","c d"] {"k":"v","l":"[1,2]"}`},
		{"mod.fun()", `mod.fun null {}`},
		{"mod.fun", "malformed"},
		{"mod.fun(a", "malformed"},
		{"mod.fun(a])", "malformed"},
		{"mod.fun('')", "error ''"},
		{`mod.fun("x\"y", z) # comment`, `mod.fun ["x\"y","z"] {}`},
	}
	for _, tt := range tests {
		fun, args, kw, ok, err := parseFunction(tt.in)
		got := fmt.Sprintf("%s %s %s", fun, jsonText(args), jsonText(kw))
		switch {
		case err != nil:
			got = "error " + err.Error()
		case !ok:
			got = "malformed"
		}
		if got != tt.want {
			t.Errorf("parseFunction(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestModInit: a state module's mod_init runs once per run before its first
// chunk, and again on the next chunk when it returned false.
func TestModInit(t *testing.T) {
	tests := []struct {
		name   string
		answer bool
		want   int
	}{
		{"true runs once", true, 1},
		{"false retries each chunk", false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"t.sls": "a:\n  test.nop\nb:\n  test.nop\nc:\n  test.nop\nd:\n  test.fail_without_changes\n"})
			h := newHarness(t, map[string]string{"base": dir})
			n := 0
			h.states.RegisterModInit("test", func(env *modules.Env, low *payload.Map) bool {
				if env == nil || low.Str("state") != "test" {
					t.Errorf("mod_init got %v", low)
				}
				n++
				return tt.answer
			})
			h.run(t, "state.sls", []any{"t"}, nil)
			if n != tt.want {
				t.Fatalf("mod_init ran %d times", n)
			}
		})
	}
}

package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// mineCallStep is one call of TestMineCallGolden: opts set for it
// (mine_functions), then fun(*args, **kwargs) called as Python calls it.
type mineCallStep struct {
	Name   string         `json:"name"`
	Opts   map[string]any `json:"opts,omitempty"`
	Fun    string         `json:"fun"`
	Args   []any          `json:"args,omitempty"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
}

// mineCallSteps: mine_functions definitions whose arguments reach the
// function through salt.utils.functools.call_function, "name=value"
// strings among them, and mine.send with the same kinds of arguments.
var mineCallSteps = []mineCallStep{
	{Name: "update", Fun: "mine.update", Kwargs: map[string]any{"clear": true}, Opts: map[string]any{"mine_functions": map[string]any{
		"echo_kv":         []any{map[string]any{"mine_function": "test.echo"}, "a=b"},
		"arg_kv":          []any{map[string]any{"mine_function": "test.arg"}, "x=1", "plain", map[string]any{"k": "v"}},
		"arg_dict":        map[string]any{"mine_function": "test.arg", "k": "v", "n": 2},
		"echo_kw":         map[string]any{"mine_function": "test.echo", "text": "hi"},
		"echo_list_dict":  []any{map[string]any{"mine_function": "test.echo"}, map[string]any{"text": "x"}},
		"echo_missing":    []any{map[string]any{"mine_function": "test.echo"}},
		"echo_extra":      []any{map[string]any{"mine_function": "test.echo"}, "a", "b"},
		"echo_bogus_kw":   map[string]any{"mine_function": "test.echo", "text": "x", "bogus": 1},
		"retcode_pos":     []any{map[string]any{"mine_function": "test.retcode"}, 7},
		"retcode_kv":      []any{map[string]any{"mine_function": "test.retcode"}, "code=3"},
		"retcode_kw":      map[string]any{"mine_function": "test.retcode", "code": 5},
		"test.retcode":    []any{},
		"kwarg_kv":        []any{map[string]any{"mine_function": "test.kwarg"}, "a=1"},
		"kwarg_kw":        []any{map[string]any{"mine_function": "test.kwarg"}, map[string]any{"a": 1}},
		"echo_eq_text":    []any{map[string]any{"mine_function": "test.echo"}, "text=from string"},
		"acl_kv":          []any{map[string]any{"mine_function": "test.echo", "allow_tgt": "web*"}, "k=v"},
		"missing.fun":     []any{},
		"arg_dict_expect": []any{map[string]any{"mine_function": "test.echo"}, map[string]any{"text": "t", "extra": 1}},
	}}},
	{Name: "send echo kv", Fun: "mine.send", Args: []any{"sent_echo", "a=b"}, Kwargs: map[string]any{"mine_function": "test.echo"}},
	{Name: "send arg kv", Fun: "mine.send", Args: []any{"sent_arg", "x=1", "y"}, Kwargs: map[string]any{"mine_function": "test.arg", "k": "v"}},
	{Name: "send retcode positional", Fun: "mine.send", Args: []any{"sent_rc", 9}, Kwargs: map[string]any{"mine_function": "test.retcode"}},
	{Name: "send retcode kw", Fun: "mine.send", Args: []any{"sent_rc_kw"}, Kwargs: map[string]any{"mine_function": "test.retcode", "code": 4}},
	{Name: "send echo missing", Fun: "mine.send", Args: []any{"test.echo"}},
}

// TestMineCallGolden compares the arguments mine.update and mine.send pass
// to their functions (salt.utils.functools.call_function: "name=value"
// strings stay positional, defaults are passed as keywords) with Salt
// 3006's mine module in local mode (testdata/mine_call.py): each step's
// return and the mine cache after it.
func TestMineCallGolden(t *testing.T) {
	raw := saltpeer.Golden(t, filepath.Join("testdata", "golden", "mine_call.json"), func(src string) []byte {
		return saltpeer.RunScript(t, src, filepath.Join("testdata", "mine_call.py"), map[string]any{"root": t.TempDir(), "steps": mineCallSteps})
	})
	var want []map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(mineCallSteps) {
		t.Fatalf("golden has %d steps, the test %d: run with -update", len(want), len(mineCallSteps))
	}
	r := registry(t)
	cachedir := t.TempDir()
	canon := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back any
		_ = json.Unmarshal(b, &back)
		b, _ = json.Marshal(back)
		return string(b)
	}
	for i, st := range mineCallSteps {
		opts := payload.NewMap("id", "golden", "file_client", "local", "cachedir", cachedir)
		for k, v := range st.Opts {
			opts.Set(k, payload.FromGo(v))
		}
		env := &modules.Env{ID: "golden", Registry: r, Opts: opts}
		args := payload.FromGo(st.Args)
		list, _ := args.([]any)
		if len(st.Kwargs) > 0 {
			kw := payload.NewMap("__kwarg__", true)
			for _, it := range payload.FromGo(st.Kwargs).(*payload.Map).Items() {
				kw.SetKey(it.Key, it.Value)
			}
			list = append(list, kw)
		}
		// Salt's generator calls the function from Python: the arguments
		// are bound directly ("name=value" strings stay positional).
		res := r.Execute(context.Background(), modules.Binder{Direct: true}, env, st.Fun, list, nil)
		cache := r.Execute(context.Background(), modules.Binder{Direct: true}, env, "data.get", []any{"mine_cache"}, nil)
		got := map[string]any{"name": st.Name, "return": res.Return, "cache": cache.Return}
		w := want[i]
		if _, failed := w["error"]; failed {
			t.Errorf("%s: Salt raised %v", st.Name, w["error"])
			continue
		}
		if g, e := canon(got), canon(w); g != e {
			t.Errorf("%s:\n got %s\nwant %s", st.Name, g, e)
		}
	}
}

package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// moduleScenarios are the module state runs compared with Salt.
func moduleScenarios() []ctemScenario {
	return []ctemScenario{
		// legacy syntax
		{ID: "legacy_echo", Fun: "module.run", Args: ctemKV("name", "test.echo", "text", "hi")},
		{ID: "legacy_missing_arg", Fun: "module.run", Args: ctemKV("name", "test.echo")},
		{ID: "legacy_unavailable", Fun: "module.run", Args: ctemKV("name", "test.no_such_function")},
		{ID: "legacy_arg", Fun: "module.run", Args: ctemKV("name", "test.arg", "args", []any{int64(1), "two"}, "kwargs", ctemKV("k", "v"), "ignored", "x")},
		{ID: "legacy_args_not_list", Fun: "module.run", Args: ctemKV("name", "test.arg", "args", "one")},
		{ID: "legacy_kwargs_not_dict", Fun: "module.run", Args: ctemKV("name", "test.arg", "kwargs", "k=v")},
		{ID: "legacy_false", Fun: "module.run", Args: ctemKV("name", "test.false")},
		{ID: "legacy_retcode", Fun: "module.run", Args: ctemKV("name", "test.retcode")},
		{ID: "legacy_run_all_fail", Fun: "module.run", Args: ctemKV("name", "cmd.run_all", "cmd", "echo no; exit 3", "python_shell", true)},
		{ID: "legacy_exception", Fun: "module.run", Args: ctemKV("name", "test.exception", "message", "boom")},
		{ID: "test.ping", Fun: "module.run"},
		// new syntax
		{ID: "new_echo_kw", Fun: "module.run", Args: ctemKV("test.echo", []any{ctemKV("text", "hi")})},
		{ID: "new_echo_pos", Fun: "module.run", Args: ctemKV("test.echo", []any{"hi"})},
		{ID: "new_two", Fun: "module.run", Args: ctemKV("test.echo", []any{"one"}, "test.true", []any{})},
		{ID: "new_false", Fun: "module.run", Args: ctemKV("test.false", nil, "test.echo", []any{"after"})},
		{ID: "new_unavailable", Fun: "module.run", Args: ctemKV("foo.bar", []any{}, "test.echo", []any{"x"})},
		{ID: "new_unavailable_two", Fun: "module.run", Args: ctemKV("foo.bar", []any{}, "foo.baz", []any{})},
		{ID: "new_missing_arg", Fun: "module.run", Args: ctemKV("test.echo", []any{})},
		{ID: "new_optional_positional", Fun: "module.run", Args: ctemKV("test.retcode", []any{int64(5)})},
		{ID: "new_optional_kw", Fun: "module.run", Args: ctemKV("test.retcode", []any{ctemKV("code", int64(5))})},
		{ID: "new_unexpected_kw", Fun: "module.run", Args: ctemKV("test.echo", []any{ctemKV("text", "hi", "bogus", int64(1))})},
		{ID: "new_dict_retcode", Fun: "module.run", Args: ctemKV("cmd.run_all", []any{ctemKV("cmd", "echo out; exit 2", "python_shell", true)})},
		{ID: "new_suffix", Fun: "module.run", Args: ctemKV("test.echo", []any{"a"}, "test.echo:again", []any{"b"})},
		{ID: "new_arg", Fun: "module.run", Args: ctemKV("test.arg", []any{int64(1), ctemKV("k", "v")})},
		{ID: "new_exception_kw", Fun: "module.run", Args: ctemKV("test.exception", []any{ctemKV("message", "boom")})},
		{ID: "new_exception", Fun: "module.run", Args: ctemKV("test.exception", []any{"boom"})},
		{ID: "wait_noop", Fun: "module.wait", Args: ctemKV("name", "test.echo", "text", "never")},
		{ID: "mw_wait_legacy", Fun: "module.wait", Args: ctemKV("name", "test.echo", "text", "fired"), Watch: true},
		{ID: "mw_wait_new", Fun: "module.wait", Args: ctemKV("test.echo", []any{"fired"}), Watch: true},
		// test=True
		{ID: "t_legacy_echo", Fun: "module.run", Args: ctemKV("name", "test.echo", "text", "hi"), Test: true},
		{ID: "t_legacy_unavailable", Fun: "module.run", Args: ctemKV("name", "test.nope"), Test: true},
		{ID: "t_new_echo", Fun: "module.run", Args: ctemKV("test.echo", []any{"hi"}), Test: true},
		{ID: "t_new_two", Fun: "module.run", Args: ctemKV("test.echo", []any{"hi"}, "test.true", []any{}), Test: true},
		{ID: "t_new_unavailable", Fun: "module.run", Args: ctemKV("foo.bar", []any{}, "test.echo", []any{"x"}), Test: true},
		{ID: "t_mw_wait_new", Fun: "module.wait", Args: ctemKV("test.echo", []any{"fired"}), Test: true, Watch: true},
	}
}

func TestModuleGolden(t *testing.T) { ctemRunGolden(t, "module", moduleScenarios()) }

func TestModuleLegacyPrefixes(t *testing.T) {
	env := ctemEnv(t, nil)
	named := modules.Function{Name: "gsalttest.named",
		Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}, {Name: "fun", Default: "deffun"},
			{Name: "saltenv", Default: nil}, {Name: "other", Default: int64(1)}}},
		Fn: func(_ context.Context, c *modules.Call) (any, error) {
			return payload.NewMap("name", c.Args.Get("name"), "fun", c.Args.Get("fun"), "saltenv", c.Args.Get("saltenv"), "other", c.Args.Get("other")), nil
		}}
	if err := env.Registry.Register(named); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		low     *payload.Map
		comment string
		result  states.Result
		changes string
	}{
		{name: "m_ prefixes", low: ctemKV("name", "gsalttest.named", "m_name", "N", "m_fun", "F", "m_saltenv", "dev", "other", int64(7)),
			comment: "Module function gsalttest.named executed", result: states.True,
			changes: `{"ret":{"name":"N","fun":"F","saltenv":"dev","other":7}}`},
		{name: "defaults", low: ctemKV("name", "gsalttest.named", "m_name", "N"),
			comment: "Module function gsalttest.named executed", result: states.True,
			changes: `{"ret":{"name":"N","fun":"deffun","saltenv":null,"other":1}}`},
		{name: "missing m_name", low: ctemKV("name", "gsalttest.named", "fun", "F"),
			comment: "The following arguments are missing: m_name", result: states.False, changes: `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ret, err := ctemDirect(t, env, "module.run", tc.low, false, false)
			if err != nil {
				t.Fatal(err)
			}
			changes := ret.Changes
			if changes == nil {
				changes = payload.NewMap()
			}
			b, _ := json.Marshal(changes)
			if ret.Comment != tc.comment || ret.Result != tc.result || string(b) != tc.changes {
				t.Errorf("got %q %v %s; want %q %v %s", ret.Comment, ret.Result, b, tc.comment, tc.result, tc.changes)
			}
		})
	}
}

func TestModuleGetResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		ret  any
		want bool
	}{
		{"string", "x", true},
		{"nil", nil, true},
		{"false", false, false},
		{"true", true, true},
		{"retcode", ctemKV("retcode", int64(2)), false},
		{"retcode zero", ctemKV("retcode", int64(0)), true},
		{"retcode None", ctemKV("retcode", nil), false},
		{"result false", ctemKV("result", false, "retcode", int64(0)), false},
		{"result true wins", ctemKV("result", true), true},
		{"nested result false", ctemKV("a", ctemKV("b", ctemKV("result", false))), false},
		{"result non-bool", ctemKV("result", "no"), true},
	} {
		if got := moduleGetResult(tc.ret, payload.NewMap("ret", tc.ret)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// The new syntax looks only at the function's own return.
	if !moduleGetResult(ctemKV("result", false), payload.NewMap()) {
		t.Errorf("new syntax: a dict with result False counts as success in Salt 3006")
	}
}

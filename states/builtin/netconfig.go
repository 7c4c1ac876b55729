package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// netconfigStates is Salt's netconfig state module (salt/states/netconfig.py)
// for NAPALM proxies: netconfig.managed renders a template and loads it on
// the device through the net.load_template execution function (test mode
// discards the candidate and reports the diff), netconfig.commit_cancelled
// and netconfig.commit_confirmed call net.cancel_commit and
// net.confirm_commit. The execution functions come from the proxy's
// registry (proxy/netmod); without them the states fail with the missing
// function's message. replace_pattern and saved are not provided.
func netconfigStates() []states.Function {
	managedSpec := modules.Spec{Params: []modules.Param{
		sbReq("name"), sbOpt("template_name", nil), sbOpt("template_source", nil), sbOpt("template_hash", nil),
		sbOpt("template_hash_name", nil), sbOpt("saltenv", "base"), sbOpt("template_engine", "jinja"),
		sbOpt("skip_verify", false), sbOpt("context", nil), sbOpt("defaults", nil), sbOpt("test", false),
		sbOpt("commit", true), sbOpt("debug", false), sbOpt("replace", false), sbOpt("commit_in", nil),
		sbOpt("commit_at", nil), sbOpt("revert_in", nil), sbOpt("revert_at", nil),
	}, Kwargs: true}
	commitSpec := modules.Spec{Params: []modules.Param{sbReq("name")}}
	return []states.Function{
		{Name: "netconfig.managed", Spec: managedSpec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return netconfigManaged(ctx, c, managedSpec)
		}},
		{Name: "netconfig.commit_cancelled", Spec: commitSpec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return netconfigCommitAction(ctx, c, "net.cancel_commit", "It would cancel commit #%s")
		}},
		{Name: "netconfig.commit_confirmed", Spec: commitSpec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return netconfigCommitAction(ctx, c, "net.confirm_commit", "It would confirm commit #%s")
		}},
	}
}

// netconfigMerged is __salt__["config.merge"](key, value): a minion option
// or pillar key of that name overrides the state argument. Without
// config.merge the argument is used as given.
func netconfigMerged(ctx context.Context, c *states.Call, key string, value any) any {
	v, err := c.Exec(ctx, "config.merge", []any{key}, payload.NewMap("default", value))
	if err != nil {
		sbLog(c).Debug("netconfig: config.merge unavailable", "key", key, "err", err)
		return value
	}
	return v
}

// netconfigManaged is netconfig.managed: the flags merged with the minion
// options and pillar, net.load_template called with them and the extra
// keyword arguments as template variables, and the result turned into the
// state return (Salt's napalm loaded_ret).
func netconfigManaged(ctx context.Context, c *states.Call, spec modules.Spec) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False}
	arg := func(k string) any { return c.Args.Get(k) }
	test := payload.Truthy(arg("test")) || c.Test
	debug := payload.Truthy(netconfigMerged(ctx, c, "debug", arg("debug")))
	kw := payload.NewMap(
		"template_source", arg("template_source"),
		"template_hash", arg("template_hash"),
		"template_hash_name", arg("template_hash_name"),
		"saltenv", arg("saltenv"),
		"template_engine", arg("template_engine"),
		"skip_verify", netconfigMerged(ctx, c, "skip_verify", arg("skip_verify")),
		"defaults", arg("defaults"),
		"test", test,
		"commit", netconfigMerged(ctx, c, "commit", arg("commit")),
		"debug", debug,
		"replace", netconfigMerged(ctx, c, "replace", arg("replace")),
		"context", arg("context"),
		"commit_in", netconfigMerged(ctx, c, "commit_in", arg("commit_in")),
		"commit_at", netconfigMerged(ctx, c, "commit_at", arg("commit_at")),
		"revert_in", netconfigMerged(ctx, c, "revert_in", arg("revert_in")),
		"revert_at", netconfigMerged(ctx, c, "revert_at", arg("revert_at")),
	)
	// Salt's _update_config passes the template file's owner, mode and
	// attributes with its own defaults; net.load_template has no such
	// parameters, so they reach the template as variables too.
	for _, d := range netconfigFileDefaults() {
		kw.Set(d[0], d[1])
	}
	// The remaining keyword arguments are template variables (Salt's
	// **template_vars); template_user and the like replace the defaults.
	for _, it := range sbLowKwargs(c, spec).Items() {
		k := payload.KeyString(it.Key)
		if k == "template_name" || (kw.Has(k) && !netconfigFileDefault(k)) {
			continue
		}
		kw.Set(k, it.Value)
	}
	out, err := c.Exec(ctx, "net.load_template", []any{arg("template_name")}, kw)
	loaded, ok := out.(*payload.Map)
	if !ok || !loaded.Has("comment") {
		// A failed call without a load_template return dict.
		msg := "net.load_template returned no result"
		if err != nil {
			msg = netconfigErrText(err)
		}
		ret.Comment = msg
		return ret, nil
	}
	return netconfigLoadedRet(ret, loaded, test, debug), nil
}

// netconfigErrText is the text of an execution failure without the
// package prefix of states.ErrExecFailed.
func netconfigErrText(err error) string {
	if errors.Is(err, states.ErrExecFailed) {
		s := err.Error()
		p := states.ErrExecFailed.Error() + ": "
		if len(s) > len(p) && s[:len(p)] == p {
			return s[len(p):]
		}
	}
	return err.Error()
}

// netconfigLoadedRet is Salt's napalm loaded_ret: the diff (and with debug
// the loaded configuration) reported in the comment; changes only when the
// configuration was committed; result None in test mode when the device
// would change.
func netconfigLoadedRet(ret states.Ret, loaded *payload.Map, test, debug bool) states.Ret {
	comment := loaded.Str("comment")
	ret.Comment = comment
	changes := &payload.Map{}
	if v, ok := loaded.Get("diff"); ok {
		changes.Set("diff", v)
	}
	if v, ok := loaded.Get("commit_id"); ok {
		changes.Set("commit_id", v)
	}
	if v, ok := loaded.Get("loaded_config"); ok && debug {
		changes.Set("loaded_config", v)
	}
	if v, _ := changes.Get("diff"); payload.Truthy(v) {
		ret.Comment = fmt.Sprintf("%s\n\nConfiguration diff:\n\n%s", ret.Comment, payload.Text(v))
	}
	if v, _ := changes.Get("loaded_config"); payload.Truthy(v) {
		ret.Comment = fmt.Sprintf("%s\n\nLoaded config:\n\n%s", ret.Comment, payload.Text(v))
	}
	if !loaded.Bool("result") {
		return ret
	}
	already := true
	if v, ok := loaded.Get("already_configured"); ok {
		already = payload.Truthy(v)
	}
	switch {
	case !already && test:
		ret.Result = states.None
	case !already:
		ret.Result = states.True
		ret.Changes = changes
		ret.Comment = "Configuration changed!\n" + comment
	default:
		ret.Result = states.True
		ret.Changes = nil
	}
	return ret
}

// netconfigCommitAction is commit_cancelled / commit_confirmed: in test
// mode a comment only, otherwise fun's return dict merged into the ret.
func netconfigCommitAction(ctx context.Context, c *states.Call, fun, testComment string) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.None}
	if c.Test {
		ret.Comment = fmt.Sprintf(testComment, name)
		return ret, nil
	}
	out, err := c.Exec(ctx, fun, []any{name}, nil)
	m, ok := out.(*payload.Map)
	if !ok {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("%s returned no result", fun)
		if err != nil {
			ret.Comment = netconfigErrText(err)
		}
		return ret, nil
	}
	if v, ok := m.Get("result"); ok {
		if _, isBool := v.(bool); !isBool && v != nil {
			v = payload.Truthy(v)
		}
		ret.Result = states.ResultOf(v)
	}
	if v, ok := m.Get("comment"); ok {
		ret.Comment = payload.Text(v)
	}
	if v := m.Map("changes"); v != nil {
		ret.Changes = v
	}
	if v, ok := m.Get("name"); ok {
		ret.Name = payload.Text(v)
	}
	return ret, nil
}

// netconfigFileDefaults are _update_config's template_user, template_group,
// template_mode and template_attrs defaults.
func netconfigFileDefaults() [4][2]string {
	return [4][2]string{{"template_user", "root"}, {"template_group", "root"},
		{"template_mode", "755"}, {"template_attrs", "--------------e----"}}
}

// netconfigFileDefault reports whether k is one of netconfigFileDefaults.
func netconfigFileDefault(k string) bool {
	for _, d := range netconfigFileDefaults() {
		if d[0] == k {
			return true
		}
	}
	return false
}

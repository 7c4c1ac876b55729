package builtin

// This file is the config part of Salt's git state module
// (salt/states/git.py): git.config_set and git.config_unset.

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func gitStates() []states.Function {
	common := []modules.Param{sbOpt("repo", nil), sbOpt("user", nil), sbOpt("password", nil), sbOpt("output_encoding", nil)}
	return []states.Function{
		{Name: "git.config_set", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name"), sbOpt("value", nil), sbOpt("multivar", nil)}, common...), Kwargs: true},
			Fn: gitConfigSetState},
		{Name: "git.config_unset", Spec: modules.Spec{Params: append([]modules.Param{sbReq("name"), sbOpt("value_regex", nil)}, common...), Kwargs: true},
			Fn: gitConfigUnsetState},
	}
}

var gitCmdPrefix = regexp.MustCompile(`^Command ['"].+['"] failed: `)

// gitStripExc is _strip_exc: the error without "Command '...' failed: ".
func gitStripExc(err error) string { return gitCmdPrefix.ReplaceAllString(sbErrText(err), "") }

// gitStateKwargs takes global (and all) out of the extra kwargs; any
// other is Salt's invalid_kwargs message.
func gitStateKwargs(c *states.Call, allowed ...string) (map[string]any, string) {
	out := map[string]any{}
	var bad []string
	for _, it := range c.Args.CleanKwargs().Items() {
		k := payload.KeyString(it.Key)
		if containsString(allowed, k) {
			out[k] = it.Value
		} else {
			bad = append(bad, k+"="+pyfmt.Str(it.Value))
		}
	}
	if len(bad) > 0 {
		return nil, "The following keyword arguments are not valid: " + strings.Join(bad, ", ")
	}
	return out, ""
}

func gitFail(ret states.Ret, msg string) (states.Ret, error) {
	ret.Result = states.False
	ret.Comment = msg
	return ret, nil
}

func gitConfigSetState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	value, multivar := c.Args.Get("value"), c.Args.Get("multivar")
	if value != nil && multivar != nil {
		return gitFail(ret, "Only one of 'value' and 'multivar' is permitted")
	}
	kw, bad := gitStateKwargs(c, "global")
	if bad != "" {
		return gitFail(ret, bad)
	}
	global := payload.Truthy(kw["global"])
	repo := c.Args.Get("repo")
	if !global && !payload.Truthy(repo) {
		return gitFail(ret, "Non-global config options require the 'repo' argument to be set")
	}
	var desired []any
	var valueComment string
	if value != nil {
		value = pyfmt.Str(value)
		valueComment = "'" + value.(string) + "'"
		desired = []any{value}
	}
	if multivar != nil {
		var l []any
		if ml, ok := multivar.([]any); ok {
			for _, x := range ml {
				l = append(l, pyfmt.Str(x))
			}
		} else {
			for _, x := range strings.Split(pyfmt.Str(multivar), ",") {
				l = append(l, x)
			}
		}
		multivar = l
		valueComment = pyfmt.Repr(l)
		desired = l
	}
	globalKey, globalLower := "", ""
	if global {
		globalKey, globalLower = "Global key ", "global key "
	}
	base := payload.NewMap("cwd", repo, "key", name, "user", c.Args.Get("user"), "password", c.Args.Get("password"),
		"output_encoding", c.Args.Get("output_encoding"), "global", global)
	getKw := base.Clone().Set("ignore_retcode", true).Set("all", true)
	pre, err := sbExec(ctx, c, "git.config_get", nil, getKw)
	if err != nil {
		return ret, err
	}
	if pyfmt.Equal(pre, desired) {
		ret.Comment = fmt.Sprintf("%s'%s' is already set to %s", globalKey, name, valueComment)
		return ret, nil
	}
	verb := "set to"
	if pre == nil {
		verb = "added as"
	}
	if c.Test {
		ret.Changes = payload.NewMap("old", pre, "new", desired)
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("%s'%s' would be %s %s", globalKey, name, verb, valueComment)
		return ret, nil
	}
	post, err := sbExec(ctx, c, "git.config_set", nil, base.Clone().Set("value", value).Set("multivar", multivar))
	if err != nil {
		return gitFail(ret, fmt.Sprintf("Failed to set %s'%s' to %s: %s", globalLower, name, valueComment, gitStripExc(err)))
	}
	if !pyfmt.Equal(pre, post) {
		ret.Changes.Set(name, payload.NewMap("old", pre, "new", post))
	}
	if !pyfmt.Equal(post, desired) {
		return gitFail(ret, fmt.Sprintf("Failed to set %s'%s' to %s", globalLower, name, valueComment))
	}
	ret.Comment = fmt.Sprintf("%s'%s' was %s %s", globalKey, name, verb, valueComment)
	return ret, nil
}

// gitJoinMatches renders {key: [values]} as "key (v1, v2)" items.
func gitJoinMatches(m *payload.Map, onlyMulti bool) []string {
	var out []string
	for _, it := range m.Items() {
		l, _ := it.Value.([]any)
		if onlyMulti && len(l) <= 1 {
			continue
		}
		vals := make([]string, len(l))
		for i, v := range l {
			vals[i] = pyfmt.Str(v)
		}
		out = append(out, fmt.Sprintf("%s (%s)", payload.KeyString(it.Key), strings.Join(vals, ", ")))
	}
	return out
}

func gitConfigUnsetState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Comment: "No matching keys are set"}
	kw, bad := gitStateKwargs(c, "global", "all")
	if bad != "" {
		return gitFail(ret, bad)
	}
	global, all := payload.Truthy(kw["global"]), payload.Truthy(kw["all"])
	repo := c.Args.Get("repo")
	if !global && !payload.Truthy(repo) {
		return gitFail(ret, "Non-global config options require the 'repo' argument to be set")
	}
	valueRegex := c.Args.Get("value_regex")
	if valueRegex != nil {
		valueRegex = pyfmt.Str(valueRegex)
	}
	key := "^" + strings.TrimRight(strings.TrimLeft(name, "^"), "$") + "$"
	get := func(vr any) (*payload.Map, error) {
		v, err := sbExec(ctx, c, "git.config_get_regexp", nil, payload.NewMap("cwd", repo, "key", key, "value_regex", vr,
			"user", c.Args.Get("user"), "password", c.Args.Get("password"), "ignore_retcode", true,
			"output_encoding", c.Args.Get("output_encoding"), "global", global))
		if err != nil {
			return nil, err
		}
		m, _ := v.(*payload.Map)
		if m == nil {
			m = &payload.Map{}
		}
		return m, nil
	}
	preMatches, err := get(valueRegex)
	if err != nil {
		return ret, err
	}
	if preMatches.Len() == 0 {
		return ret, nil
	}
	if !all {
		if greedy := gitJoinMatches(preMatches, true); len(greedy) > 0 {
			if valueRegex != nil {
				return gitFail(ret, "Multiple values are matched by value_regex for the following keys (set 'all' to True to force removal): "+strings.Join(greedy, "; "))
			}
			return gitFail(ret, "Multivar(s) matched by the key expression (set 'all' to True to force removal): "+strings.Join(greedy, "; "))
		}
	}
	if c.Test {
		ret.Changes = preMatches
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("%d key(s) would have value(s) unset", preMatches.Len())
		return ret, nil
	}
	pre := preMatches
	if valueRegex != nil {
		if pre, err = get(nil); err != nil {
			return ret, err
		}
	}
	var failed []string
	for _, it := range preMatches.Items() {
		_, err := sbExec(ctx, c, "git.config_unset", nil, payload.NewMap("cwd", repo, "key", name, "value_regex", valueRegex, "all", all,
			"user", c.Args.Get("user"), "password", c.Args.Get("password"), "output_encoding", c.Args.Get("output_encoding"), "global", global))
		if err != nil {
			if c.Env != nil && c.Env.Log != nil {
				c.Env.Log.Error("git.config_unset failed", "key", payload.KeyString(it.Key), "error", gitStripExc(err))
			}
			failed = append(failed, payload.KeyString(it.Key))
		}
	}
	if len(failed) > 0 {
		return gitFail(ret, "Error(s) occurred unsetting values for the following keys (see the minion log for details): "+strings.Join(failed, ", "))
	}
	post, err := get(nil)
	if err != nil {
		return ret, err
	}
	for _, it := range pre.Items() {
		k := payload.KeyString(it.Key)
		pl, _ := it.Value.([]any)
		postV, ok := post.Get(k)
		if !ok {
			ret.Changes.Set(k, pl)
			// Salt then indexes post[key] and fails; a key that is gone
			// entirely is reported with all its old values.
			continue
		}
		ql, _ := postV.([]any)
		var unset []any
		for _, x := range pl {
			found := false
			for _, y := range ql {
				found = found || pyfmt.Equal(x, y)
			}
			if !found {
				unset = append(unset, x)
			}
		}
		if len(unset) > 0 {
			ret.Changes.Set(k, unset)
		}
	}
	postMatches := post
	if valueRegex != nil {
		if postMatches, err = get(valueRegex); err != nil {
			return ret, err
		}
	}
	if postMatches.Len() > 0 {
		return gitFail(ret, "Failed to unset value(s): "+strings.Join(gitJoinMatches(postMatches, false), "; "))
	}
	ret.Comment = "Value(s) successfully unset"
	return ret, nil
}

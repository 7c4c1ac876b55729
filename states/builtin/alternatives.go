package builtin

import (
	"context"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's alternatives state module
// (salt/states/alternatives.py). Salt's rets also carry the link, path
// and priority arguments as extra keys; gsalt's rets have the standard
// keys only.

func alternativesStates() []states.Function {
	namePath := modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("path")}}
	return []states.Function{
		{Name: "alternatives.install", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("link"), sbReq("path"), sbReq("priority")}}, Fn: altInstallState},
		{Name: "alternatives.remove", Spec: namePath, Fn: altRemoveState},
		{Name: "alternatives.auto", Spec: modules.Spec{Params: []modules.Param{sbReq("name")}}, Fn: altAutoState},
		{Name: "alternatives.set", Spec: namePath, Fn: altSetState},
	}
}

func altTruth(ctx context.Context, c *states.Call, fun string, args ...any) (bool, error) {
	v, err := sbExec(ctx, c, fun, args, nil)
	return payload.Truthy(v), err
}

func altInstallState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name, link, path, prio := sbName(c), c.Args.Get("link"), c.Args.Str("path"), c.Args.Get("priority")
	// Salt's install ret also carries link, path and priority
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{},
		Extra: payload.NewMap("link", link, "path", c.Args.Get("path"), "priority", prio)}
	exists, err := altTruth(ctx, c, "alternatives.check_exists", name, path)
	if err != nil {
		return ret, err
	}
	if exists {
		ret.Comment = fmt.Sprintf("Alternative %s for %s is already registered", path, name)
		return ret, nil
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("Alternative will be set for %s to %s with priority %s", name, path, pyfmt.Str(prio))
		ret.Result = states.None
		return ret, nil
	}
	out, err := sbExec(ctx, c, "alternatives.install", []any{name, link, path, prio}, nil)
	if err != nil {
		return ret, err
	}
	if exists, err = altTruth(ctx, c, "alternatives.check_exists", name, path); err != nil {
		return ret, err
	}
	if !exists {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Alternative for %s not installed: %s", name, pyfmt.Str(out))
		return ret, nil
	}
	installed, err := altTruth(ctx, c, "alternatives.check_installed", name, path)
	if err != nil {
		return ret, err
	}
	if installed {
		ret.Comment = fmt.Sprintf("Alternative for %s set to path %s with priority %s", name, path, pyfmt.Str(prio))
	} else {
		ret.Comment = fmt.Sprintf("Alternative %s for %s registered with priority %s and not set to default", path, name, pyfmt.Str(prio))
	}
	ret.Changes = payload.NewMap("name", name, "link", link, "path", path, "priority", prio)
	return ret, nil
}

func altRemoveState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name, path := sbName(c), c.Args.Str("path")
	// Salt's ret also carries path
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Extra: payload.NewMap("path", c.Args.Get("path"))}
	exists, err := altTruth(ctx, c, "alternatives.check_exists", name, path)
	if err != nil {
		return ret, err
	}
	if exists {
		if c.Test {
			ret.Comment, ret.Result = fmt.Sprintf("Alternative for %s will be removed", name), states.None
			return ret, nil
		}
		if _, err := sbExec(ctx, c, "alternatives.remove", []any{name, path}, nil); err != nil {
			return ret, err
		}
	}
	cur, err := sbExec(ctx, c, "alternatives.show_current", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	switch {
	case exists && payload.Truthy(cur):
		ret.Comment = fmt.Sprintf("Alternative for %s removed. Falling back to path %s", name, pyfmt.Str(cur))
		ret.Changes = payload.NewMap("path", cur)
	case exists:
		ret.Comment = fmt.Sprintf("Alternative for %s removed", name)
	case payload.Truthy(cur):
		ret.Comment = fmt.Sprintf("Alternative for %s is set to it's default path %s", name, pyfmt.Str(cur))
	default:
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Alternative for %s doesn't exist", name)
	}
	return ret, nil
}

func altAutoState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	disp, err := sbExec(ctx, c, "alternatives.display", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	lines := py.SplitLines(payload.Text(disp), false)
	if len(lines) == 0 {
		return ret, fmt.Errorf("IndexError: list index out of range")
	}
	if strings.HasSuffix(lines[0], " auto mode") {
		ret.Comment = name + " already in auto mode"
		return ret, nil
	}
	if c.Test {
		ret.Comment, ret.Result = name+" will be put in auto mode", states.None
		return ret, nil
	}
	out, err := sbExec(ctx, c, "alternatives.auto", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	ret.Changes.Set("result", out)
	return ret, nil
}

func altSetState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name, path := sbName(c), c.Args.Str("path")
	// Salt's ret also carries path
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}, Extra: payload.NewMap("path", c.Args.Get("path"))}
	cur, err := sbExec(ctx, c, "alternatives.show_current", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if cur == path {
		ret.Comment = fmt.Sprintf("Alternative for %s already set to %s", name, path)
		return ret, nil
	}
	disp, err := sbExec(ctx, c, "alternatives.display", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	installed := false
	for _, line := range py.SplitLines(payload.Text(disp), false) {
		if strings.HasPrefix(line, path) {
			installed = true
			break
		}
	}
	if !installed {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Alternative %s for %s doesn't exist", path, name)
		return ret, nil
	}
	if c.Test {
		ret.Comment, ret.Result = fmt.Sprintf("Alternative for %s will be set to path %s", name, path), states.None
		return ret, nil
	}
	if _, err := sbExec(ctx, c, "alternatives.set", []any{name, path}, nil); err != nil {
		return ret, err
	}
	cur, err = sbExec(ctx, c, "alternatives.show_current", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if cur == path {
		ret.Comment = fmt.Sprintf("Alternative for %s set to path %s", name, path)
		ret.Changes = payload.NewMap("path", cur)
	} else {
		ret.Comment = fmt.Sprintf("Alternative for %s not updated", name)
	}
	return ret, nil
}

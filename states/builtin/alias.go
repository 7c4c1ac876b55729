package builtin

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's alias state module (salt/states/alias.py): entries
// of the mail aliases file through the aliases execution module.

func aliasStates() []states.Function {
	return []states.Function{
		{Name: "alias.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("target")}}, Fn: aliasPresent},
		{Name: "alias.absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name")}}, Fn: aliasAbsent},
	}
}

func aliasPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	target := c.Args.Get("target")
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	has, err := sbExec(ctx, c, "aliases.has_target", []any{name, target}, nil)
	if err != nil {
		return ret, err
	}
	switch {
	case payload.Truthy(has):
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("Alias %s already present", name)
	case c.Test:
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Alias %s -> %s is set to be added", name, pyfmt.Str(target))
	default:
		ok, err := sbExec(ctx, c, "aliases.set_target", []any{name, target}, nil)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) {
			ret.Changes = payload.NewMap("alias", name)
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("Set email alias %s -> %s", name, pyfmt.Str(target))
		} else {
			ret.Comment = fmt.Sprintf("Failed to set alias %s -> %s", name, pyfmt.Str(target))
		}
	}
	return ret, nil
}

func aliasAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	cur, err := sbExec(ctx, c, "aliases.get_target", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	switch {
	case !payload.Truthy(cur):
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("Alias %s already absent", name)
	case c.Test:
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Alias %s is set to be removed", name)
	default:
		ok, err := sbExec(ctx, c, "aliases.rm_alias", []any{name}, nil)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) {
			ret.Changes = payload.NewMap("alias", name)
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("Removed alias %s", name)
		} else {
			ret.Comment = fmt.Sprintf("Failed to remove alias %s", name)
		}
	}
	return ret, nil
}

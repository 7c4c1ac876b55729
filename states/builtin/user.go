package builtin

import (
	"context"
	"fmt"
	"sort"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is user.absent of Salt's user state module
// (salt/states/user.py). user.present is not there yet: it needs the
// shadow module (passwords and password ageing) to match Salt.

func userStates() []states.Function {
	return []states.Function{
		{Name: "user.absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("purge", false), sbOpt("force", false)}}, Fn: userAbsent},
	}
}

func userAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	info, err := sbExec(ctx, c, "user.info", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if m, ok := info.(*payload.Map); !ok || m.Len() == 0 {
		ret.Comment = fmt.Sprintf("User %s is not present", name)
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("User %s set for removal", name)
		return ret, nil
	}
	before, err := sbExec(ctx, c, "user.list_groups", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	ok, err := sbExec(ctx, c, "user.delete", []any{name, c.Args.Get("purge"), c.Args.Get("force")}, nil)
	if err != nil {
		return ret, err
	}
	if !payload.Truthy(ok) {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to remove user %s", name)
		return ret, nil
	}
	var gone []string
	for _, g := range anyList(before) {
		gi, err := sbExec(ctx, c, "group.info", []any{g}, nil)
		if err != nil {
			return ret, err
		}
		if !payload.Truthy(gi) {
			gone = append(gone, payload.Text(g))
		}
	}
	// Salt iterates a set here; sorted is one of its orders.
	sort.Strings(gone)
	for _, g := range gone {
		ret.Changes.Set(g+" group", "removed")
	}
	ret.Changes.Set(name, "removed")
	ret.Comment = fmt.Sprintf("Removed user %s", name)
	return ret, nil
}

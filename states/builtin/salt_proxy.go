package builtin

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's salt_proxy state module (salt/states/salt_proxy.py):
// configure_proxy is the salt_proxy execution module's configure_proxy
// (the proxy configuration file and a gsalt-proxy process for the id)
// with the state's name and a fixed comment.

func saltProxyStates() []states.Function {
	return []states.Function{
		{Name: "salt_proxy.configure_proxy", Fn: saltProxyConfigureState,
			Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("proxyname", "p8000"), sbOpt("start", true)}}},
	}
}

func saltProxyConfigureState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	res, err := sbExec(ctx, c, "salt_proxy.configure_proxy", []any{c.Args.Get("proxyname")}, payload.NewMap("start", c.Args.Get("start")))
	if err != nil {
		return ret, err
	}
	m, _ := res.(*payload.Map)
	if m == nil {
		return ret, fmt.Errorf("%w: salt_proxy.configure_proxy returned %T", states.ErrExecFailed, res)
	}
	if v, _ := m.Get("result"); payload.Truthy(v) {
		ret.Result = states.True
	}
	if ch := m.Map("changes"); ch != nil {
		ret.Changes = ch
	}
	ret.Comment = name + " config messages"
	return ret, nil
}

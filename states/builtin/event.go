package builtin

import (
	"context"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// eventStates is Salt's event state module (salt/states/event.py):
// event.send (alias event.fire_master and event.mod_watch) fires an event
// through the event.send execution function; event.wait does nothing until
// a watch requisite fires its mod_watch.
func eventStates() []states.Function {
	sendSpec := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("data", nil), sbOpt("preload", nil),
		sbOpt("with_env", false), sbOpt("with_grains", false), sbOpt("with_pillar", false), sbOpt("show_changed", true)}, Kwargs: true}
	send := func(ctx context.Context, c *states.Call) (states.Ret, error) {
		return eventSend(ctx, c, sbLowKwargs(c, sendSpec))
	}
	watch := func(ctx context.Context, c *states.Call) (states.Ret, error) {
		return eventSend(ctx, c, sbLowKwargs(c, sbModuleSpec("event")))
	}
	return []states.Function{
		{Name: "event.send", Spec: sendSpec, Fn: send, Watch: watch},
		{Name: "event.fire_master", Spec: sendSpec, Fn: send, Watch: watch},
		{Name: "event.mod_watch", Spec: sendSpec, Fn: send},
		{Name: "event.wait", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("sfun", nil), sbOpt("data", nil)}},
			Watch: watch,
			Fn: func(_ context.Context, c *states.Call) (states.Ret, error) {
				return states.Ret{Name: sbName(c), Result: states.True}, nil
			}},
	}
}

// eventSend is the body of event.send; kw holds the low chunk's arguments
// (name excluded), the undeclared ones becoming event data.
func eventSend(ctx context.Context, c *states.Call, kw *payload.Map) (states.Ret, error) {
	name := sbName(c)
	p := sbPop(kw)
	data, preload := p("data", nil), p("preload", nil)
	withEnv, withGrains, withPillar := p("with_env", false), p("with_grains", false), p("with_pillar", false)
	showChanged := p("show_changed", true)
	ret := states.Ret{Name: name, Result: states.False}
	if payload.Truthy(showChanged) {
		ret.Changes = payload.NewMap("tag", name, "data", data)
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = "Event would have been fired"
		return ret, nil
	}
	kwargs := payload.NewMap("data", data, "preload", preload, "with_env", withEnv,
		"with_grains", withGrains, "with_pillar", withPillar)
	for _, it := range kw.Items() {
		kwargs.SetKey(it.Key, it.Value)
	}
	out, err := sbExec(ctx, c, "event.send", []any{name}, kwargs)
	if err != nil {
		return states.Ret{}, err
	}
	ret.Result = states.ResultOf(payload.Truthy(out))
	ret.Comment = "Event fired"
	return ret, nil
}

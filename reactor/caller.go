package reactor

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// Caller runs execution functions on the master itself: caller reactions
// (Salt's salt.client.Caller) and salt['mod.fun'](...) in reactor templates
// (Salt's master-side minion functions). It has render.Caller's method, so
// one value serves both.
type Caller interface {
	CallFunction(ctx context.Context, fun string, args []any, kwargs *payload.Map) (any, error)
}

// ModuleCaller is a Caller over an execution-module registry with the
// master's environment (its id, options and grains).
type ModuleCaller struct {
	// Registry holds the functions; Env is what they see.
	Registry *modules.Registry
	Env      *modules.Env
}

// CallFunction runs fun like a Python call fun(*args, **kwargs). A
// function error, an unknown function or bad arguments is an error.
func (mc ModuleCaller) CallFunction(ctx context.Context, fun string, args []any, kwargs *payload.Map) (ret any, err error) {
	if mc.Registry == nil {
		return nil, fmt.Errorf("%w: '%s' is not available.", modules.ErrNotAvailable, fun)
	}
	fn, ok := mc.Registry.Lookup(fun)
	if !ok {
		return nil, fmt.Errorf("%w: '%s' is not available.", modules.ErrNotAvailable, fun)
	}
	all := append([]any(nil), args...)
	if kwargs != nil && kwargs.Len() > 0 {
		kw := kwargs.Clone()
		kw.Set("__kwarg__", true)
		all = append(all, kw)
	}
	bound, err := modules.Binder{Direct: true}.Bind(fn, all, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s raised: %v\n%s", fun, p, debug.Stack())
		}
	}()
	return fn.Fn(ctx, &modules.Call{Fun: fun, Env: mc.Env, Args: bound})
}

// runCaller runs a caller reaction synchronously (Salt's Caller.cmd).
func (r *Reactor) runCaller(rx *Reaction) {
	if r.o.Caller == nil {
		r.st.failed.Add(1)
		r.log.Error("caller reaction not run: no caller", "reaction", rx.ID, "fun", rx.Fun)
		return
	}
	r.st.caller.Add(1)
	if _, err := r.o.Caller.CallFunction(r.ctx, rx.Fun, rx.Arg, rx.Kwarg); err != nil {
		r.log.Error("caller reaction failed", "reaction", rx.ID, "fun", rx.Fun, "err", err)
		return
	}
	r.log.Debug("caller reaction completed", "reaction", rx.ID, "fun", rx.Fun)
}

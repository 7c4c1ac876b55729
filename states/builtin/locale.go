package builtin

// This file is Salt's locale state module (salt/states/locale.py).

import (
	"context"
	"errors"
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func localeStates() []states.Function {
	return []states.Function{
		{Name: "locale.system", Spec: modules.Spec{Params: []modules.Param{sbReq("name")}}, Fn: localeSystem},
		{Name: "locale.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name")}}, Fn: localePresent},
	}
}

func localeSystem(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	fail := func(err error) (states.Ret, error) {
		if errors.Is(err, modules.ErrExecution) {
			ret.Result = states.False
			ret.Comment = fmt.Sprintf("Failed to set system locale: %s", sbErrText(err))
			return ret, nil
		}
		return ret, err
	}
	cur, err := sbExec(ctx, c, "locale.get_locale", nil, nil)
	if err != nil {
		return fail(err)
	}
	if cur == name {
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("System locale %s already set", name)
		return ret, nil
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("System locale %s needs to be set", name)
		return ret, nil
	}
	ok, err := sbExec(ctx, c, "locale.set_locale", []any{name}, nil)
	if err != nil {
		return fail(err)
	}
	if payload.Truthy(ok) {
		ret.Changes = payload.NewMap("locale", name)
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("Set system locale %s", name)
	} else {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to set system locale to %s", name)
	}
	return ret, nil
}

func localePresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	ok, err := sbExec(ctx, c, "locale.avail", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(ok) {
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("Locale %s is already present", name)
		return ret, nil
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("Locale %s needs to be generated", name)
		return ret, nil
	}
	gen, err := sbExec(ctx, c, "locale.gen_locale", []any{name}, nil)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(gen) {
		ret.Changes = payload.NewMap("locale", name)
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("Generated locale %s", name)
	} else {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to generate locale %s", name)
	}
	return ret, nil
}

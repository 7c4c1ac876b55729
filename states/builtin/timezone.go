package builtin

// This file is Salt's timezone state module (salt/states/timezone.py).

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func timezoneStates() []states.Function {
	return []states.Function{
		{Name: "timezone.system", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("utc", true)}}, Fn: timezoneSystem},
	}
}

// timezoneSystem is timezone.system: the zone (/etc/localtime) and
// whether the hardware clock keeps UTC.
func timezoneSystem(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	comp, err := sbExec(ctx, c, "timezone.zone_compare", []any{name}, nil)
	if err != nil {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Unable to compare desired timezone '%s' to system timezone: %s", name, sbErrText(err))
		return ret, nil
	}
	hw, err := sbExec(ctx, c, "timezone.get_hwclock", nil, nil)
	if err != nil {
		return ret, err
	}
	myUTC := hw != "localtime"
	utcArg := c.Args.Get("utc")
	utc := payload.Truthy(utcArg)
	// Python compares utc (usually a bool) with myutc: only a bool equals it.
	utcEq := func() bool { b, ok := utcArg.(bool); return ok && b == myUTC }
	var msgs []string
	doZone, doUTC := false, false
	if comp == true {
		ret.Result = states.True
		msgs = append(msgs, fmt.Sprintf("Timezone %s already set", name))
	} else {
		doZone = true
	}
	if utc && !utcEq() {
		ret.Result = states.None
		doUTC = true
	} else if utc {
		msgs = append(msgs, fmt.Sprintf("UTC already set to %s", name))
	}
	if ret.Result == states.True {
		ret.Comment = strings.Join(msgs, ", ")
		return ret, nil
	}
	utcText := pyfmt.Str(utcArg)
	if c.Test {
		msgs = nil
		if comp == false {
			msgs = append(msgs, fmt.Sprintf("Timezone %s needs to be set", name))
		}
		if utc && !utcEq() {
			msgs = append(msgs, fmt.Sprintf("UTC needs to be set to %s", utcText))
		}
		ret.Comment = strings.Join(msgs, ", ")
		return ret, nil
	}
	msgs = nil
	if doZone {
		ok, err := sbExec(ctx, c, "timezone.set_zone", []any{name}, nil)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) {
			ret.Changes.Set("timezone", name)
			msgs = append(msgs, fmt.Sprintf("Set timezone %s", name))
			ret.Result = states.True
		} else {
			msgs = append(msgs, "Failed to set timezone")
			ret.Result = states.False
		}
	}
	if doUTC {
		clock := "localtime"
		if utc {
			clock = "UTC"
		}
		ok, err := sbExec(ctx, c, "timezone.set_hwclock", []any{clock}, nil)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(ok) {
			ret.Changes.Set("utc", utcArg)
			msgs = append(msgs, fmt.Sprintf("Set UTC to %s", utcText))
			ret.Result = states.True
		} else {
			msgs = append(msgs, fmt.Sprintf("Failed to set UTC to %s", utcText))
			ret.Result = states.False
		}
	}
	ret.Comment = strings.Join(msgs, ", ")
	return ret, nil
}

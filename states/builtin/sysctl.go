package builtin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's sysctl state module (salt/states/sysctl.py).

func sysctlStates() []states.Function {
	return []states.Function{
		{Name: "sysctl.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("value"), sbOpt("config", nil)}}, Fn: sysctlPresent},
	}
}

var sysctlBlanks = regexp.MustCompile(` +|\t+`)

func sysctlPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	value := pyfmt.Str(c.Args.Get("value"))
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	config := c.Args.Get("config")
	if config == nil {
		if pkgsHas(c, "sysctl.default_config") {
			v, err := sbExec(ctx, c, "sysctl.default_config", nil, nil)
			if err != nil {
				return ret, err
			}
			config = v
		} else {
			config = "/etc/sysctl.conf"
		}
	}
	if c.Test {
		configured, err := sbExec(ctx, c, "sysctl.show", nil, payload.NewMap("config_file", config))
		if err != nil {
			return ret, err
		}
		if configured == nil {
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("Sysctl option %s might be changed, we failed to check config file at %s. The file is either unreadable, or missing.", name, pyfmt.Str(config))
			return ret, nil
		}
		inConfig := false
		if m, ok := configured.(*payload.Map); ok {
			inConfig = m.Has(name)
		}
		cur, err := sbExec(ctx, c, "sysctl.get", []any{name}, nil)
		if err != nil {
			return ret, err
		}
		current := payload.Text(cur)
		switch {
		case current != "" && inConfig:
			if strings.Join(strings.Fields(value), " ") == strings.Join(strings.Fields(current), " ") {
				ret.Comment = fmt.Sprintf("Sysctl value %s = %s is already set", name, value)
				return ret, nil
			}
		case current != "":
			ret.Result = states.None
			if sysctlBlanks.ReplaceAllString(current, " ") != sysctlBlanks.ReplaceAllString(value, " ") {
				ret.Comment = fmt.Sprintf("Sysctl option %s set to be changed to %s", name, value)
			} else {
				ret.Comment = fmt.Sprintf("Sysctl value is currently set on the running system but not in a config file. Sysctl option %s set to be changed to %s in config file.", name, value)
			}
			return ret, nil
		case inConfig:
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("Sysctl value %[1]s is present in configuration file but is not present in the running config. The value %[1]s is set to be changed to %[2]s", name, value)
			return ret, nil
		}
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Sysctl option %s would be changed to %s", name, value)
		return ret, nil
	}
	update, err := sbExec(ctx, c, "sysctl.persist", []any{name, c.Args.Get("value"), config}, nil)
	if err != nil {
		if errors.Is(err, modules.ErrExecution) {
			ret.Result = states.False
			ret.Comment = fmt.Sprintf("Failed to set %s to %s: %s", name, value, sbErrText(err))
			return ret, nil
		}
		return ret, err
	}
	switch update {
	case "Updated":
		ret.Changes = payload.NewMap(name, c.Args.Get("value"))
		ret.Comment = fmt.Sprintf("Updated sysctl value %s = %s", name, value)
	case "Already set":
		ret.Comment = fmt.Sprintf("Sysctl value %s = %s is already set", name, value)
	}
	return ret, nil
}

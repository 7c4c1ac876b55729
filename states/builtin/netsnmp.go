package builtin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// netsnmpStates is Salt's netsnmp state module (salt/states/netsnmp.py):
// netsnmp.managed compares config (completed by defaults) with snmp.config
// and applies the difference through snmp.update_config /
// snmp.remove_config (commit=False) and net.config_control. Salt's own
// failures are kept: without defaults (or without config) the state fails
// as Salt's raises, and so does a community given as a dictionary.
func netsnmpStates() []states.Function {
	spec := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("config", nil), sbOpt("defaults", nil)}}
	return []states.Function{{Name: "netsnmp.managed", Spec: spec, Fn: netsnmpManaged}}
}

// errNetsnmp are the Python exceptions Salt's netsnmp.managed raises on
// the inputs named above.
var (
	errNoneUpdate      = errors.New("'NoneType' object has no attribute 'update'")
	errNoneIterable    = errors.New("'NoneType' object is not iterable")
	errCommunityAssign = errors.New("'builtin_function_or_method' object does not support item assignment")
)

func netValidStr(v any) bool { s, ok := v.(string); return ok && s != "" }

func netValidDict(v any) bool { m, ok := v.(*payload.Map); return ok && m.Len() > 0 }

// netsnmpClearErr is the exception Salt's _clear_community_details raises
// on a community's details: a dict gets to its broken
// `community_details.get["mode"] = ...`; anything else fails on
// `config.pop(key, "")` first.
func netsnmpClearErr(details any) error {
	switch details.(type) {
	case *payload.Map:
		return errCommunityAssign
	case []any:
		return errors.New("pop expected at most 1 argument, got 2")
	}
	return fmt.Errorf("'%s' object has no attribute 'pop'", pyfmt.TypeName(details))
}

// netsnmpCheck is Salt's _check_config: the community normalised to
// {name: {mode: ro}}, empty location/contact/chassis_id dropped.
func netsnmpCheck(cfg *payload.Map) (bool, string, error) {
	if cfg.Len() == 0 {
		return true, "", nil
	}
	comm, _ := cfg.Get("community")
	tmp := &payload.Map{}
	if !payload.Truthy(comm) {
		return false, "Must specify at least a community.", nil
	}
	switch x := comm.(type) {
	case string:
		tmp.Set(x, payload.NewMap("mode", "ro"))
	case []any:
		for _, e := range x {
			if netValidStr(e) {
				tmp.Set(e.(string), payload.NewMap("mode", "ro"))
			}
			if netValidDict(e) {
				for _, it := range e.(*payload.Map).Items() {
					if netValidStr(it.Key) {
						return false, "", netsnmpClearErr(it.Value)
					}
				}
			}
		}
	case *payload.Map:
		for _, it := range x.Items() {
			if netValidStr(it.Key) {
				return false, "", netsnmpClearErr(it.Value)
			}
		}
	default:
		return false, "Please specify a community or a list of communities.", nil
	}
	if tmp.Len() == 0 {
		return false, "Please specify at least a valid community!", nil
	}
	cfg.Set("community", tmp)
	for _, k := range []string{"location", "contact", "chassis_id"} {
		v, ok := cfg.Get(k)
		if !ok {
			continue
		}
		cfg.Delete(k)
		if netValidStr(v) {
			cfg.Set(k, v)
		}
	}
	return true, "", nil
}

// netsnmpDiff is Salt's _compute_diff.
func netsnmpDiff(existing, expected *payload.Map) *payload.Map {
	diff := &payload.Map{}
	add := func(kind, key string, v any) {
		m, ok := diff.Get(kind)
		if !ok {
			m = &payload.Map{}
			diff.Set(kind, m)
		}
		m.(*payload.Map).Set(key, v)
	}
	for _, k := range []string{"location", "contact", "chassis_id", "community"} {
		valid := netValidStr
		if k == "community" {
			valid = netValidDict
		}
		prev, _ := existing.Get(k)
		curr, _ := expected.Get(k)
		if py.Equal(prev, curr) {
			continue
		}
		switch {
		case !valid(prev):
			add("added", k, curr)
		case !valid(curr):
			add("removed", k, prev)
		}
	}
	return diff
}

func netsnmpManaged(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := states.Ret{Name: sbName(c), Result: states.False, Changes: &payload.Map{}}
	config, _ := netJSONCopy(c.Args.Get("config")).(*payload.Map)
	defaults, _ := netJSONCopy(c.Args.Get("defaults")).(*payload.Map)
	if defaults == nil {
		return ret, errNoneUpdate
	}
	if config == nil {
		return ret, errNoneIterable
	}
	expected := defaults
	for _, it := range config.Items() {
		expected.SetKey(it.Key, it.Value)
	}
	valid, msg, err := netsnmpCheck(expected)
	if err != nil {
		return ret, err
	}
	if !valid {
		ret.Comment = "Please provide a valid configuration: " + msg
		return ret, nil
	}
	dev := netExecDict(ctx, c, "snmp.config", nil, nil)
	if !dev.Bool("result") {
		ret.Comment = "Cannot retrieve SNMP config from the device: " + payload.Text(netGet(dev, "comment"))
		return ret, nil
	}
	devCfg, _ := netGet(dev, "out").(*payload.Map)
	if devCfg == nil {
		devCfg = &payload.Map{}
	}
	if py.Equal(devCfg, expected) {
		ret.Result, ret.Comment = states.True, "SNMP already configured as needed."
		return ret, nil
	}
	diff := netsnmpDiff(devCfg, expected)
	ret.Changes = diff
	if c.Test {
		ret.Result, ret.Comment = states.None, "Testing mode: configuration was not changed!"
		return ret, nil
	}
	result, comment, expectedChange := true, "", false
	if diff.Len() > 0 {
		ok, reasons := true, []string{}
		fun := "update_config"
		for _, k := range []string{"added", "updated", "removed"} {
			ch, _ := diff.Get(k)
			m, _ := ch.(*payload.Map)
			if m == nil || m.Len() == 0 {
				continue
			}
			get := func(key string, def any) any {
				if v, ok := m.Get(key); ok {
					return v
				}
				return def
			}
			if k == "removed" {
				fun = "remove_config"
			}
			r := netExecDict(ctx, c, "snmp."+fun, nil, payload.NewMap("location", get("location", ""),
				"contact", get("contact", ""), "community", get("community", &payload.Map{}),
				"chassis_id", get("chassis_id", ""), "commit", false))
			ok = ok && r.Bool("result")
			if rc := payload.Text(netGet(r, "comment")); !r.Bool("result") && rc != "" {
				reasons = append(reasons, rc)
			}
		}
		if ok {
			expectedChange = true
		} else {
			result = false
			comment = "Cannot push new SNMP config: \n" + strings.Join(reasons, "\n") + comment
		}
	}
	if expectedChange {
		result, comment = netConfigControl(ctx, c)
	}
	ret.Result, ret.Comment = states.ResultOf(result), comment
	return ret, nil
}

// netJSONCopy is Salt's _ordered_dict_to_dict (a JSON round trip): a deep
// copy of maps and lists.
func netJSONCopy(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		m := &payload.Map{}
		for _, it := range x.Items() {
			m.SetKey(it.Key, netJSONCopy(it.Value))
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = netJSONCopy(e)
		}
		return l
	}
	return v
}

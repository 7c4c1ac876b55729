package builtin

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// beaconStates is Salt's beacon state module (salt/states/beacon.py):
// beacon.present, absent, enabled and disabled over the beacons
// execution module, with its comments and test=True texts.
func beaconStates() []states.Function {
	nameSave := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("save", false)}, Kwargs: true}
	nameOnly := modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true}
	return []states.Function{
		{Name: "beacon.present", Spec: nameSave, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return beaconPresent(ctx, c, sbName(c), payload.Truthy(c.Args.Get("save")), beaconKwargs(c), true)
		}},
		{Name: "beacon.absent", Spec: nameSave, Fn: beaconAbsent},
		{Name: "beacon.enabled", Spec: nameOnly, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return beaconSwitch(ctx, c, "beacons.enable_beacon", "Enabled %s from beacons", "%s not a configured beacon")
		}},
		{Name: "beacon.disabled", Spec: nameOnly, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return beaconSwitch(ctx, c, "beacons.disable_beacon", "Disabled beacon %s.", "Job %s is not configured.")
		}},
	}
}

// beaconKwargs is the state's **kwargs (a copy).
func beaconKwargs(c *states.Call) *payload.Map {
	if c.Args == nil || c.Args.Kwargs == nil {
		return &payload.Map{}
	}
	return c.Args.Kwargs.Clone()
}

// beaconCall runs a beacons.* function as __salt__[fun](*args, **kwargs)
// does: its return, even a failure dict.
func beaconCall(ctx context.Context, c *states.Call, fun string, args []any, kwargs *payload.Map) (any, error) {
	return states.ExecCaller{Env: c.Env}.CallFunction(ctx, fun, args, kwargs)
}

// beaconItem is result[key], Python's KeyError (or TypeError for a
// result that is not a dict) where it is missing.
func beaconItem(result any, key string) (any, error) {
	m, ok := result.(*payload.Map)
	if !ok {
		return nil, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("'%s' object is not subscriptable", pyfmt.TypeName(result))}
	}
	v, ok := m.Get(key)
	if !ok {
		return nil, &modules.PyException{Class: "KeyError", Message: pyfmt.Repr(key)}
	}
	return v, nil
}

// beaconListed is beacons.list(return_yaml=False, **kwargs) and whether
// name is in it (Python's in on what the module returned).
func beaconListed(ctx context.Context, c *states.Call, name string, kwargs *payload.Map) (current any, in bool, err error) {
	kw := kwargs.Clone()
	kw.Set("return_yaml", false)
	current, err = beaconCall(ctx, c, "beacons.list", nil, kw)
	if err != nil {
		return nil, false, err
	}
	switch cur := current.(type) {
	case *payload.Map:
		_, in = cur.GetKey(name)
	case nil:
		return nil, false, &modules.PyException{Class: "TypeError", Message: "argument of type 'NoneType' is not iterable"}
	case string:
		in = strings.Contains(cur, name)
	}
	return current, in, nil
}

// beaconRun calls a beacons.* function as the state module does: with
// test=True in test mode, where only its comment is read; otherwise a
// result the function reports as failed is the state's early return
// (failed: the function's result and comment as they are).
func beaconRun(ctx context.Context, c *states.Call, name, fun string, args []any, kwargs *payload.Map) (result *payload.Map, comment string, failed *states.Ret, err error) {
	kw := kwargs
	if c.Test {
		kw = kwargs.Clone()
		kw.Set("test", true)
	}
	r, err := beaconCall(ctx, c, fun, args, kw)
	if err != nil {
		return nil, "", nil, err
	}
	result, _ = r.(*payload.Map)
	if !c.Test {
		ok, err := beaconItem(r, "result")
		if err != nil {
			return nil, "", nil, err
		}
		if !payload.Truthy(ok) {
			cm, err := beaconItem(r, "comment")
			if err != nil {
				return nil, "", nil, err
			}
			return nil, "", &states.Ret{Name: name, Result: states.ResultOf(ok), Comment: pyfmt.Str(cm)}, nil
		}
	}
	cm, err := beaconItem(r, "comment")
	if err != nil {
		return nil, "", nil, err
	}
	return result, pyfmt.Str(cm), nil, nil
}

// beaconDone is beaconRun for the calls whose success the state words
// itself: the comment to add is the function's in test mode, else done.
func beaconDone(ctx context.Context, c *states.Call, name, fun string, args []any, kwargs *payload.Map, done string) (string, *states.Ret, error) {
	_, comment, failed, err := beaconRun(ctx, c, name, fun, args, kwargs)
	if err != nil || failed != nil || c.Test {
		return comment, failed, err
	}
	return done, nil, nil
}

// beaconStop is the state's return after beaconRun gave an error or a
// failed function.
func beaconStop(ret states.Ret, failed *states.Ret, err error) (states.Ret, error) {
	if err != nil {
		return ret, err
	}
	return *failed, nil
}

// beaconPresent is beacon.present, also run by the mod_beacon functions
// of file, service and pkg (__states__["beacon.present"]). fromSLS says
// the beacon data is the SLS's (OrderedDicts in Salt, which
// beacons.modify's diff prints as such), not one mod_beacon built.
func beaconPresent(ctx context.Context, c *states.Call, name string, save bool, kwargs *payload.Map, fromSLS bool) (states.Ret, error) {
	ret := states.Ret{Name: name, Result: states.True}
	var comments []string
	current, in, err := beaconListed(ctx, c, name, kwargs)
	if err != nil {
		return ret, err
	}
	data := make([]any, 0, kwargs.Len())
	for _, it := range kwargs.Items() {
		m := &payload.Map{}
		m.SetKey(it.Key, it.Value)
		data = append(data, m)
	}
	args := []any{name, data}
	switch {
	case in:
		cur, _ := current.(*payload.Map).GetKey(name)
		if py.Equal(data, cur) {
			comments = append(comments, fmt.Sprintf("Job %s in correct state", name))
			break
		}
		kw := kwargs
		if fromSLS {
			kw = kwargs.Clone()
			kw.Set("__ordered__", true)
		}
		result, comment, failed, err := beaconRun(ctx, c, name, "beacons.modify", args, kw)
		if err != nil || failed != nil {
			return beaconStop(ret, failed, err)
		}
		switch {
		case c.Test:
			comments = append(comments, comment)
			changes, err := beaconItem(result, "changes")
			if err != nil {
				return ret, err
			}
			ret.Changes, _ = changes.(*payload.Map)
		default:
			if changes, has := result.Get("changes"); has {
				comments = append(comments, fmt.Sprintf("Modifying %s in beacons", name))
				ret.Changes, _ = changes.(*payload.Map)
			} else {
				comments = append(comments, comment)
			}
		}
	default:
		comment, failed, err := beaconDone(ctx, c, name, "beacons.add", args, kwargs, fmt.Sprintf("Adding %s to beacons", name))
		if err != nil || failed != nil {
			return beaconStop(ret, failed, err)
		}
		comments = append(comments, comment)
	}
	comments, err = beaconSave(ctx, c, name, save, comments)
	if err != nil {
		return ret, err
	}
	ret.Comment = strings.Join(comments, "\n")
	return ret, nil
}

// beaconSave runs beacons.save when save is set (in test mode only says
// it would).
func beaconSave(ctx context.Context, c *states.Call, name string, save bool, comments []string) ([]string, error) {
	if !save {
		return comments, nil
	}
	if c.Test {
		return append(comments, fmt.Sprintf("Beacon %s would be saved", name)), nil
	}
	if _, err := beaconCall(ctx, c, "beacons.save", nil, nil); err != nil {
		return comments, err
	}
	return append(comments, fmt.Sprintf("Beacon %s saved", name)), nil
}

// beaconAbsent is beacon.absent.
func beaconAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	kwargs := beaconKwargs(c)
	ret := states.Ret{Name: name, Result: states.True}
	var comments []string
	_, in, err := beaconListed(ctx, c, name, kwargs)
	if err != nil {
		return ret, err
	}
	if in {
		comment, failed, err := beaconDone(ctx, c, name, "beacons.delete", []any{name}, kwargs, fmt.Sprintf("Removed %s from beacons", name))
		if err != nil || failed != nil {
			return beaconStop(ret, failed, err)
		}
		comments = append(comments, comment)
	} else {
		comments = append(comments, fmt.Sprintf("%s not configured in beacons", name))
	}
	comments, err = beaconSave(ctx, c, name, payload.Truthy(c.Args.Get("save")), comments)
	if err != nil {
		return ret, err
	}
	ret.Comment = strings.Join(comments, "\n")
	return ret, nil
}

// beaconSwitch is beacon.enabled and beacon.disabled: fun switches the
// beacon; done and missing are the comments for success and for a name
// that is not configured.
func beaconSwitch(ctx context.Context, c *states.Call, fun, done, missing string) (states.Ret, error) {
	name := sbName(c)
	kwargs := beaconKwargs(c)
	ret := states.Ret{Name: name, Result: states.True}
	_, in, err := beaconListed(ctx, c, name, kwargs)
	if err != nil {
		return ret, err
	}
	if !in {
		ret.Comment = fmt.Sprintf(missing, name)
		return ret, nil
	}
	comment, failed, err := beaconDone(ctx, c, name, fun, []any{name}, kwargs, fmt.Sprintf(done, name))
	if err != nil || failed != nil {
		return beaconStop(ret, failed, err)
	}
	ret.Comment = comment
	return ret, nil
}

// beaconModBeacon is the mod_beacon of a state module (file, service,
// pkg): for a state function in funcs with beacon: True, beacon.present
// of "beacon_<module>_<name>" with the data kwargs builds from the
// beacon_data argument.
func beaconModBeacon(module, doesNotWork string, funcs []string, build func(name, sfun string, kwargs, data *payload.Map) (*payload.Map, error)) states.Func {
	return func(ctx context.Context, c *states.Call) (states.Ret, error) {
		name := sbName(c)
		kwargs := beaconKwargs(c)
		sfun, _ := kwargs.Delete("sfun")
		supported := false
		for _, f := range funcs {
			if s, ok := sfun.(string); ok && s == f {
				supported = true
			}
		}
		if !supported {
			return states.Ret{Name: name, Result: states.False,
				Comment: fmt.Sprintf("%s.%s does not work with the %s state function", module, pyfmt.Str(sfun), doesNotWork)}, nil
		}
		if b, _ := kwargs.Get("beacon"); !payload.Truthy(b) {
			return states.Ret{Name: name, Result: states.True, Comment: "Not adding beacon."}, nil
		}
		data := &payload.Map{}
		if v, ok := kwargs.Get("beacon_data"); ok {
			m, isMap := v.(*payload.Map)
			if !isMap {
				return states.Ret{}, &modules.PyException{Class: "AttributeError", Message: fmt.Sprintf("'%s' object has no attribute 'get'", pyfmt.TypeName(v))}
			}
			data = m
		}
		bkw, err := build(name, sfun.(string), kwargs, data)
		if err != nil {
			return states.Ret{}, err
		}
		return beaconPresent(ctx, c, fmt.Sprintf("beacon_%s_%s", beaconModuleOf(bkw), name), false, bkw, false)
	}
}

// beaconModuleOf is the beacon_module a mod_beacon put in its kwargs.
func beaconModuleOf(kw *payload.Map) string { return kw.Str("beacon_module") }

// beaconGet is dict.get(key, def).
func beaconGet(m *payload.Map, key string, def any) any {
	if v, ok := m.Get(key); ok {
		return v
	}
	return def
}

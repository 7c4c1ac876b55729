package builtin

// This file is Salt's schedule state module (salt/states/schedule.py):
// schedule.present, absent, enabled and disabled over the schedule
// execution module.

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

func scheduleStates() []states.Function {
	spec := modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true}
	return []states.Function{
		{Name: "schedule.present", Spec: spec, Fn: schedulePresent},
		{Name: "schedule.absent", Spec: spec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return scheduleChange(ctx, c, "schedule.delete", "Removed job %s from schedule", false)
		}},
		{Name: "schedule.enabled", Spec: spec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return scheduleChange(ctx, c, "schedule.enable_job", "Enabled job %s from schedule", true)
		}},
		{Name: "schedule.disabled", Spec: spec, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return scheduleChange(ctx, c, "schedule.disable_job", "Disabled job %s from schedule", false)
		}},
	}
}

// scheduleListed is schedule.list(show_all=True, return_yaml=False) and
// whether name is in it (Python's in on what the module returned).
func scheduleListed(ctx context.Context, c *states.Call, name string) (current any, in bool, err error) {
	current, err = beaconCall(ctx, c, "schedule.list", nil, payload.NewMap("show_all", true, "return_yaml", false))
	if err != nil {
		return nil, false, err
	}
	switch cur := current.(type) {
	case *payload.Map:
		_, in = cur.GetKey(name)
	case string:
		in = strings.Contains(cur, name)
	case []any:
		for _, e := range cur {
			if py.Equal(e, name) {
				in = true
			}
		}
	default:
		return nil, false, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("argument of type '%s' is not iterable", pyfmt.TypeName(current))}
	}
	return current, in, nil
}

// scheduleCall runs fun(name, **kwargs) as the state does: with
// test=True added in test mode. In test mode the function's comment is
// the one to add; otherwise a function that reports failure ends the
// state with its result and comment (and its changes when
// failChanges), and a success adds done.
func scheduleCall(ctx context.Context, c *states.Call, name, fun string, kwargs *payload.Map, done string, failChanges bool) (result any, comment any, failed *states.Ret, err error) {
	kw := kwargs.Clone()
	if c.Test {
		kw.Set("test", true)
	}
	r, err := beaconCall(ctx, c, fun, []any{name}, kw)
	if err != nil {
		return nil, nil, nil, err
	}
	if c.Test {
		cm, err := beaconItem(r, "comment")
		return r, cm, nil, err
	}
	ok, err := beaconItem(r, "result")
	if err != nil {
		return nil, nil, nil, err
	}
	if !payload.Truthy(ok) {
		ret := &states.Ret{Name: name, Result: states.ResultOf(ok)}
		if failChanges {
			ch, err := beaconItem(r, "changes")
			if err != nil {
				return nil, nil, nil, err
			}
			ret.Changes = scheduleChanges(ch)
		}
		cm, err := beaconItem(r, "comment")
		if err != nil {
			return nil, nil, nil, err
		}
		ret.Comment = pyfmt.Str(cm)
		return nil, nil, ret, nil
	}
	return r, done, nil, nil
}

// scheduleChanges is a function's changes as the state's changes dict.
func scheduleChanges(v any) *payload.Map {
	if m, ok := v.(*payload.Map); ok {
		return m
	}
	return &payload.Map{}
}

// scheduleJoin is "\n".join(comments): Python's TypeError for an item
// that is not a string.
func scheduleJoin(comments []any) (string, error) {
	parts := make([]string, len(comments))
	for i, cm := range comments {
		s, ok := cm.(string)
		if !ok {
			return "", &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("sequence item %d: expected str instance, %s found", i, pyfmt.TypeName(cm))}
		}
		parts[i] = s
	}
	return strings.Join(parts, "\n"), nil
}

// schedulePresent is schedule.present: the job built from the state's
// arguments is added, or the scheduled job modified when it differs.
func schedulePresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	kwargs := beaconKwargs(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	current, in, err := scheduleListed(ctx, c, name)
	if err != nil {
		return ret, err
	}
	var comments []any
	if in {
		item, err := beaconCall(ctx, c, "schedule.build_schedule_item", []any{name}, kwargs.Clone())
		if err != nil {
			return ret, err
		}
		if m, ok := item.(*payload.Map); ok {
			if r, has := m.Get("result"); has && !payload.Truthy(r) {
				cm, _ := m.Get("comment")
				ret.Result, ret.Comment = states.ResultOf(r), pyfmt.Str(cm)
				return ret, nil
			}
			if !m.Has("enabled") {
				m.Set("enabled", true)
			}
		}
		cur, err := scheduleIndex(current, name)
		if err != nil {
			return ret, err
		}
		if py.Equal(item, cur) {
			comments = append(comments, fmt.Sprintf("Job %s in correct state", name))
		} else {
			r, cm, failed, err := scheduleCall(ctx, c, name, "schedule.modify", kwargs, fmt.Sprintf("Modifying job %s in schedule", name), false)
			if err != nil {
				return ret, err
			}
			if failed != nil {
				failed.Changes = ret.Changes
				return *failed, nil
			}
			ch, err := beaconItem(r, "changes")
			if err != nil {
				return ret, err
			}
			comments = append(comments, cm)
			ret.Changes = scheduleChanges(ch)
		}
	} else {
		r, cm, failed, err := scheduleCall(ctx, c, name, "schedule.add", kwargs, fmt.Sprintf("Adding new job %s to schedule", name), false)
		if err != nil {
			return ret, err
		}
		if failed != nil {
			failed.Changes = ret.Changes
			return *failed, nil
		}
		comments = append(comments, cm)
		if !c.Test {
			ch, err := beaconItem(r, "changes")
			if err != nil {
				return ret, err
			}
			ret.Changes = scheduleChanges(ch)
		}
	}
	ret.Comment, err = scheduleJoin(comments)
	return ret, err
}

// scheduleIndex is current[name] on what schedule.list returned.
func scheduleIndex(current any, name string) (any, error) {
	if m, ok := current.(*payload.Map); ok {
		v, _ := m.GetKey(name)
		return v, nil
	}
	msg := fmt.Sprintf("'%s' object is not subscriptable", pyfmt.TypeName(current))
	switch current.(type) {
	case string:
		msg = "string indices must be integers, not 'str'"
	case []any:
		msg = "list indices must be integers or slices, not str"
	}
	return nil, &modules.PyException{Class: "TypeError", Message: msg}
}

// scheduleChange is schedule.absent, enabled and disabled: fun(name) on
// a job the schedule has, done the comment of its success. Only
// schedule.absent takes the function's changes on success, only
// schedule.enabled on failure, as Salt's state does.
func scheduleChange(ctx context.Context, c *states.Call, fun, done string, failChanges bool) (states.Ret, error) {
	name := sbName(c)
	kwargs := beaconKwargs(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	_, in, err := scheduleListed(ctx, c, name)
	if err != nil {
		return ret, err
	}
	if !in {
		ret.Comment = fmt.Sprintf("Job %s not present in schedule", name)
		return ret, nil
	}
	r, cm, failed, err := scheduleCall(ctx, c, name, fun, kwargs, fmt.Sprintf(done, name), failChanges)
	if err != nil {
		return ret, err
	}
	if failed != nil {
		if !failChanges {
			failed.Changes = ret.Changes
		}
		return *failed, nil
	}
	if fun == "schedule.delete" && !c.Test {
		ch, err := beaconItem(r, "changes")
		if err != nil {
			return ret, err
		}
		ret.Changes = scheduleChanges(ch)
	}
	ret.Comment, err = scheduleJoin([]any{cm})
	return ret, err
}

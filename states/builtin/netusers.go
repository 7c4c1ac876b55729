package builtin

import (
	"context"
	"fmt"
	"slices"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// netusersStates is Salt's netusers state module (salt/states/netusers.py):
// netusers.managed makes the device's users the given ones (completed by
// defaults) through users.config, users.set_users / users.delete_users
// (commit=False) and net.config_control. As in Salt, the state fails
// without defaults, and a user without a level fails the level check.
func netusersStates() []states.Function {
	spec := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("users", nil), sbOpt("defaults", nil)}}
	return []states.Function{{Name: "netusers.managed", Spec: spec, Fn: netusersManaged}}
}

// errLevelCompare is the TypeError Salt's level check raises for a user
// whose level is not a number.
func errLevelCompare(v any) error {
	t := "NoneType"
	switch v.(type) {
	case string:
		t = "str"
	case []any:
		t = "list"
	case *payload.Map:
		t = "dict"
	}
	return fmt.Errorf("'<=' not supported between instances of 'int' and '%s'", t)
}

// netusersCheck is Salt's _check_users.
func netusersCheck(users *payload.Map) (bool, string, error) {
	msg, valid := "", true
	for _, it := range users.Items() {
		user := payload.KeyString(it.Key)
		if !payload.Truthy(it.Value) {
			valid = false
			msg += fmt.Sprintf("Please provide details for username %s.\n", user)
			continue
		}
		d, ok := it.Value.(*payload.Map)
		if !ok {
			return false, "", fmt.Errorf("'%s' object has no attribute 'get'", pyfmt.TypeName(it.Value))
		}
		lvl, _ := d.Get("level")
		switch x := lvl.(type) {
		case int64, bool:
		case float64:
			if 0 <= x && x <= 15 {
				msg += fmt.Sprintf("Level must be a integer between 0 and 15 for username %s. Will assume 0.\n", user)
			}
		default:
			return false, "", errLevelCompare(lvl)
		}
	}
	return valid, msg, nil
}

// netusersDiff is Salt's _compute_diff: users to add, update (only the
// fields that differ) and remove.
func netusersDiff(configured, expected *payload.Map) (add, update, remove *payload.Map) {
	add, update, remove = &payload.Map{}, &payload.Map{}, &payload.Map{}
	keys := func(m *payload.Map) []string { k := m.Keys(); slices.Sort(k); return k }
	for _, u := range keys(expected) {
		want, _ := expected.Get(u)
		have, ok := configured.Get(u)
		if !ok {
			add.Set(u, want)
			continue
		}
		if py.Equal(have, want) {
			continue
		}
		fields := &payload.Map{}
		hm, _ := have.(*payload.Map)
		if wm, ok := want.(*payload.Map); ok {
			for _, it := range wm.Items() {
				var hv any
				if hm != nil {
					hv, _ = hm.GetKey(it.Key)
				}
				if !py.Equal(hv, it.Value) {
					fields.SetKey(it.Key, it.Value)
				}
			}
		}
		update.Set(u, fields)
	}
	for _, u := range keys(configured) {
		if !expected.Has(u) {
			v, _ := configured.Get(u)
			remove.Set(u, v)
		}
	}
	return add, update, remove
}

func netusersManaged(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := states.Ret{Name: sbName(c), Result: states.False, Changes: &payload.Map{}}
	users, _ := netJSONCopy(c.Args.Get("users")).(*payload.Map)
	defaults, _ := netJSONCopy(c.Args.Get("defaults")).(*payload.Map)
	if defaults == nil {
		return ret, errNoneUpdate
	}
	if users == nil {
		return ret, errNoneIterable
	}
	expected := defaults
	for _, it := range users.Items() {
		expected.SetKey(it.Key, it.Value)
	}
	valid, msg, err := netusersCheck(expected)
	if err != nil {
		return ret, err
	}
	if !valid {
		ret.Comment = "Please provide a valid configuration: " + msg
		return ret, nil
	}
	cur := netExecDict(ctx, c, "users.config", nil, nil)
	if !cur.Bool("result") {
		ret.Comment = "Cannot retrieve users from the device: " + payload.Text(netGet(cur, "comment"))
		return ret, nil
	}
	configured, _ := netGet(cur, "out").(*payload.Map)
	if configured == nil {
		configured = &payload.Map{}
	}
	if py.Equal(configured, expected) {
		ret.Result, ret.Comment = states.True, "Users already configured as needed."
		return ret, nil
	}
	add, update, remove := netusersDiff(configured, expected)
	ret.Changes = payload.NewMap("added", add, "updated", update, "removed", remove)
	if c.Test {
		ret.Result, ret.Comment = states.None, "Testing mode: configuration was not changed!"
		return ret, nil
	}
	result, comment := false, ""
	expectedChange, successfully := false, true
	step := func(fun string, users *payload.Map, failure string) {
		if users.Len() == 0 {
			return
		}
		r := netExecDict(ctx, c, fun, []any{users}, payload.NewMap("commit", false))
		if r.Bool("result") {
			expectedChange = true
		} else {
			successfully = false
			comment += failure + payload.Text(netGet(r, "comment"))
		}
	}
	step("users.set_users", add, "Cannot configure new users: ")
	step("users.set_users", update, "Cannot update the users configuration: ")
	step("users.delete_users", remove, "Cannot remove users: ")
	if expectedChange && successfully {
		cr, cc := netConfigControl(ctx, c)
		result = cr
		comment += cc
	}
	if expectedChange && result && comment == "" {
		comment = "Configuration updated!"
	}
	ret.Result, ret.Comment = states.ResultOf(result), comment
	return ret, nil
}

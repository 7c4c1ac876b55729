package builtin

import (
	"context"
	"slices"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// probesStates is Salt's probes state module (salt/states/probes.py):
// probes.managed makes the device's RPM/SLA probes the given ones
// (completed by defaults at three levels) through probes.config,
// probes.set_probes / probes.delete_probes / probes.schedule_probes
// (commit=False) and net.config_control, with Salt's result and comment
// rules (the new probes are scheduled, and committed again, even when
// nothing was added).
func probesStates() []states.Function {
	spec := modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("probes"), sbOpt("defaults", nil)}}
	return []states.Function{{Name: "probes.managed", Spec: spec, Fn: probesManaged}}
}

func netSortedKeys(m *payload.Map) []string {
	k := m.Keys()
	slices.Sort(k)
	return k
}

// probesExpand is Salt's _expand_probes.
func probesExpand(probes, defaults *payload.Map) *payload.Map {
	res := &payload.Map{}
	for _, pit := range probes.Items() {
		pname := payload.KeyString(pit.Key)
		tests, _ := pit.Value.(*payload.Map)
		if !res.Has(pname) {
			res.Set(pname, &payload.Map{})
		}
		if tests == nil {
			continue
		}
		pdef, _ := tests.Delete("defaults")
		for _, tit := range tests.Items() {
			tname := payload.KeyString(tit.Key)
			det, _ := tit.Value.(*payload.Map)
			var tdef any
			if det != nil {
				tdef, _ = det.Delete("defaults")
			}
			exp := netJSONCopy(defaults).(*payload.Map)
			for _, src := range []any{pdef, tdef, det} {
				if m, ok := src.(*payload.Map); ok {
					for _, it := range m.Items() {
						exp.SetKey(it.Key, it.Value)
					}
				}
			}
			pm, _ := res.Get(pname)
			if !pm.(*payload.Map).Has(tname) {
				pm.(*payload.Map).Set(tname, exp)
			}
		}
	}
	return res
}

// probesCompare is Salt's _compare_probes (it empties what it moves out of
// configured and expected, as Salt's does).
func probesCompare(configured, expected *payload.Map) (add, update, remove any) {
	if configured.Len() == 0 {
		return expected, nil, nil
	}
	if expected.Len() == 0 {
		return nil, nil, configured
	}
	newP, updP, remP := &payload.Map{}, &payload.Map{}, &payload.Map{}
	for _, p := range netSortedKeys(expected) {
		if !configured.Has(p) {
			v, _ := expected.Delete(p)
			newP.Set(p, v)
		}
	}
	for _, p := range netSortedKeys(configured) {
		if !expected.Has(p) {
			v, _ := configured.Delete(p)
			remP.Set(p, v)
		}
	}
	sub := func(m *payload.Map, k string) *payload.Map {
		v, ok := m.Get(k)
		if !ok {
			nm := &payload.Map{}
			m.Set(k, nm)
			return nm
		}
		mm, _ := v.(*payload.Map)
		if mm == nil {
			mm = &payload.Map{}
		}
		return mm
	}
	for _, it := range expected.Items() {
		p := payload.KeyString(it.Key)
		tests, _ := it.Value.(*payload.Map)
		if tests == nil {
			tests = &payload.Map{}
		}
		cv, _ := configured.Get(p)
		ctests, _ := cv.(*payload.Map)
		if ctests == nil {
			ctests = &payload.Map{}
		}
		for _, t := range netSortedKeys(tests) {
			if !ctests.Has(t) {
				v, _ := tests.Delete(t)
				sub(newP, p).Set(t, v)
			}
		}
		for _, t := range netSortedKeys(ctests) {
			if !tests.Has(t) {
				v, _ := ctests.Delete(t)
				sub(remP, p).Set(t, v)
			}
		}
		for _, tit := range tests.Items() {
			cv, _ := ctests.GetKey(tit.Key)
			if cv == nil {
				cv = &payload.Map{}
			}
			if !py.Equal(tit.Value, cv) {
				sub(updP, p).SetKey(tit.Key, tit.Value)
			}
		}
	}
	return newP, updP, remP
}

func probesManaged(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := states.Ret{Name: sbName(c), Result: states.False, Changes: &payload.Map{}}
	cur := netExecDict(ctx, c, "probes.config", nil, nil)
	if !cur.Bool("result") {
		ret.Comment = "Cannot retrieve configurtion of the probes from the device: " + payload.Text(netGet(cur, "comment"))
		return ret, nil
	}
	configured, _ := netJSONCopy(netGet(cur, "out")).(*payload.Map)
	if configured == nil {
		configured = &payload.Map{}
	}
	defaults, ok := netJSONCopy(c.Args.Get("defaults")).(*payload.Map)
	if !ok {
		defaults = &payload.Map{}
	}
	probes, ok := netJSONCopy(c.Args.Get("probes")).(*payload.Map)
	if !ok {
		return ret, errNoneIterable
	}
	expected := probesExpand(probes, defaults)
	add, update, remove := probesCompare(configured, expected)
	ret.Changes = payload.NewMap("added", add, "updated", update, "removed", remove)
	if c.Test {
		ret.Result, ret.Comment = states.None, "Testing mode: configuration was not changed!"
		return ret, nil
	}
	result, comment, changeExpected := true, "", false
	call := func(fun string, v any, failure string) {
		if !payload.Truthy(v) {
			return
		}
		r := netExecDict(ctx, c, fun, []any{v}, payload.NewMap("commit", false))
		if r.Bool("result") {
			changeExpected = true
		} else {
			result = false
			comment += failure + payload.Text(netGet(r, "comment")) + "\n"
		}
	}
	call("probes.set_probes", add, "Cannot define new probes: ")
	call("probes.set_probes", update, "Cannot update probes: ")
	call("probes.delete_probes", remove, "Cannot remove probes! ")
	if changeExpected {
		result, comment = netConfigControl(ctx, c)
	}
	sched := netExecDict(ctx, c, "probes.schedule_probes", []any{add}, payload.NewMap("commit", false))
	if sched.Bool("result") {
		result, comment = netConfigControl(ctx, c)
	}
	if changeExpected && result && comment == "" {
		comment = "Probes updated successfully!"
	}
	ret.Result, ret.Comment = states.ResultOf(result), comment
	return ret, nil
}

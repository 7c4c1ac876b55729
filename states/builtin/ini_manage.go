package builtin

import (
	"context"
	"fmt"
	"sort"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's ini state module (salt/states/ini_manage.py, loaded
// as "ini"): options and sections of an ini file through the ini execution
// module. Where Salt iterates a Python set (the options strict removes),
// gsalt takes them sorted: Salt's order changes from run to run.

func iniManageStates() []states.Function {
	spec := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("sections", nil), sbOpt("separator", "=")}}
	strictSpec := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("sections", nil), sbOpt("separator", "="), sbOpt("strict", false)}}
	return []states.Function{
		{Name: "ini.options_present", Spec: strictSpec, Fn: iniOptionsPresent},
		{Name: "ini.options_absent", Spec: spec, Fn: iniOptionsAbsent},
		{Name: "ini.sections_present", Spec: spec, Fn: iniSectionsPresent},
		{Name: "ini.sections_absent", Spec: spec, Fn: iniSectionsAbsent},
	}
}

// iniRet is the return every ini state starts from.
func iniRet(c *states.Call) states.Ret {
	ret := states.Ret{Name: sbName(c), Result: states.True, Changes: &payload.Map{}, Comment: "No anomaly detected"}
	if c.Test {
		ret.Comment = ""
	}
	return ret
}

// iniMap is v as a map (a missing sections argument is empty).
func iniMap(v any) *payload.Map {
	if m, ok := v.(*payload.Map); ok {
		return m
	}
	return &payload.Map{}
}

// iniSectionDescr is " in section NAME", or "" for the top level.
func iniSectionDescr(name string) string {
	if name == "" {
		return ""
	}
	return " in section " + name
}

func iniOptionsPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := iniRet(c)
	name, sep := ret.Name, c.Args.Get("separator")
	strict := modules.IsTrue(c.Args.Get("strict"))
	sections := c.Args.Get("sections")
	changes := &payload.Map{}
	if !payload.Truthy(sections) {
		if !c.Test {
			res, err := sbExec(ctx, c, "ini.set_option", []any{name, sections, sep}, nil)
			if err != nil {
				return ret, err
			}
			changes = iniMap(res)
		}
		return iniFinish(ret, changes), nil
	}
	sm := iniMap(sections)
	options := &payload.Map{}
	for _, it := range sm.Items() {
		if _, ok := it.Value.(*payload.Map); !ok {
			options.SetKey(it.Key, it.Value)
		}
	}
	cur, err := sbExec(ctx, c, "ini.get_ini", []any{name, sep}, nil)
	if err != nil {
		return ret, err
	}
	curIni := iniMap(cur)
	topOpts, origSections := &payload.Map{}, &payload.Map{}
	for _, it := range curIni.Items() {
		if _, ok := it.Value.(*payload.Map); ok {
			origSections.SetKey(it.Key, it.Value)
		} else {
			topOpts.SetKey(it.Key, it.Value)
		}
	}
	if c.Test {
		for _, it := range options.Items() {
			k := payload.KeyString(it.Key)
			if v, ok := topOpts.Get(k); ok && pyfmt.Str(v) == pyfmt.Str(it.Value) {
				ret.Comment += fmt.Sprintf("Unchanged key %s.\n", k)
			} else {
				ret.Comment += fmt.Sprintf("Changed key %s.\n", k)
				ret.Result = states.None
			}
		}
	} else {
		res, err := sbExec(ctx, c, "ini.set_option", []any{name, options, sep}, nil)
		if err != nil {
			return ret, err
		}
		for _, it := range iniMap(res).Items() {
			changes.SetKey(it.Key, it.Value)
		}
	}
	if strict {
		for _, k := range iniMissing(topOpts, options) {
			if c.Test {
				ret.Comment += fmt.Sprintf("Removed key %s.\n", k)
				ret.Result = states.None
				continue
			}
			if _, err := sbExec(ctx, c, "ini.remove_option", []any{name, nil, k, sep}, nil); err != nil {
				return ret, err
			}
			before, _ := topOpts.Get(k)
			changes.Set(k, payload.NewMap("before", before, "after", nil))
		}
	}
	for _, it := range sm.Items() {
		body, ok := it.Value.(*payload.Map)
		if !ok {
			continue
		}
		sname := payload.KeyString(it.Key)
		descr := iniSectionDescr(sname)
		secChanges := &payload.Map{}
		orig := &payload.Map{}
		if v, ok := origSections.Get(sname); ok {
			orig = iniMap(v)
		}
		if strict {
			for _, k := range iniMissing(orig, body) {
				if c.Test {
					ret.Comment += fmt.Sprintf("Deleted key %s%s.\n", k, descr)
					ret.Result = states.None
					continue
				}
				if _, err := sbExec(ctx, c, "ini.remove_option", []any{name, sname, k, sep}, nil); err != nil {
					return ret, err
				}
				before, _ := orig.Get(k)
				secChanges.Set(k, payload.NewMap("before", before, "after", nil))
			}
		}
		if c.Test {
			for _, opt := range body.Items() {
				k := payload.KeyString(opt.Key)
				curV, has := orig.Get(k)
				if !has {
					curV = "#-#-"
				}
				if pyfmt.Str(opt.Value) == pyfmt.Str(curV) {
					ret.Comment += fmt.Sprintf("Unchanged key %s%s.\n", k, descr)
				} else {
					ret.Comment += fmt.Sprintf("Changed key %s%s.\n", k, descr)
					ret.Result = states.None
				}
			}
		} else {
			res, err := sbExec(ctx, c, "ini.set_option", []any{name, payload.NewMap(sname, body), sep}, nil)
			if err != nil {
				return ret, err
			}
			if up := iniMap(res); up.Len() > 0 {
				if v, ok := up.Get(sname); ok {
					for _, ch := range iniMap(v).Items() {
						secChanges.SetKey(ch.Key, ch.Value)
					}
				}
			}
		}
		if secChanges.Len() > 0 {
			changes.Set(sname, secChanges)
		} else {
			changes.Delete(sname)
		}
	}
	return iniFinish(ret, changes), nil
}

// iniMissing are the keys of have that want lacks, sorted (Salt's set
// difference, in a set's order).
func iniMissing(have, want *payload.Map) []string {
	var out []string
	for _, it := range have.Items() {
		k := payload.KeyString(it.Key)
		if _, ok := want.Get(k); !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// iniFinish is options_present's end: the changes that are not empty,
// with "Changes take effect".
func iniFinish(ret states.Ret, changes *payload.Map) states.Ret {
	for _, it := range changes.Items() {
		if payload.Truthy(it.Value) {
			ret.Comment = "Changes take effect"
			ret.Changes.SetKey(it.Key, it.Value)
		}
	}
	return ret
}

func iniOptionsAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := iniRet(c)
	name, sep := ret.Name, c.Args.Get("separator")
	sections := iniMap(c.Args.Get("sections"))
	if c.Test {
		for _, it := range sections.Items() {
			section := payload.KeyString(it.Key)
			descr := iniSectionDescr(section)
			keys, isList := it.Value.([]any)
			if !isList {
				v, err := sbExec(ctx, c, "ini.get_option", []any{name, nil, section, sep}, nil)
				if err != nil {
					return ret, err
				}
				if !payload.Truthy(v) {
					ret.Comment += fmt.Sprintf("Key %s does not exist.\n", section)
					continue
				}
				ret.Comment += fmt.Sprintf("Deleted key %s.\n", section)
				ret.Result = states.None
				continue
			}
			cur, err := sbExec(ctx, c, "ini.get_section", []any{name, section, sep}, nil)
			if err != nil {
				return ret, err
			}
			curSec := iniMap(cur)
			for _, key := range keys {
				k := pyfmt.Str(key)
				if v, _ := curSec.Get(k); !payload.Truthy(v) {
					ret.Comment += fmt.Sprintf("Key %s%s does not exist.\n", k, descr)
					continue
				}
				ret.Comment += fmt.Sprintf("Deleted key %s%s.\n", k, descr)
				ret.Result = states.None
			}
		}
		if ret.Comment == "" {
			ret.Comment = "No changes detected."
		}
		return ret, nil
	}
	for _, it := range sections.Items() {
		section := payload.KeyString(it.Key)
		keys, isList := it.Value.([]any)
		if !isList {
			// Salt iterates the value itself (a string's characters)
			for _, r := range pyfmt.Str(it.Value) {
				keys = append(keys, string(r))
			}
		}
		for _, key := range keys {
			k := pyfmt.Str(key)
			cur, err := sbExec(ctx, c, "ini.remove_option", []any{name, section, k, sep}, nil)
			if err != nil {
				return ret, err
			}
			if !payload.Truthy(cur) {
				continue
			}
			sec, ok := ret.Changes.Get(section)
			if !ok {
				sec = &payload.Map{}
				ret.Changes.Set(section, sec)
			}
			if m, isMap := sec.(*payload.Map); isMap {
				m.Set(k, cur)
			}
			if !isList {
				ret.Changes.Set(section, cur)
			}
			ret.Comment = "Changes take effect"
		}
	}
	return ret, nil
}

func iniSectionsPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := iniRet(c)
	name, sep := ret.Name, c.Args.Get("separator")
	sections := iniSectionNames(c.Args.Get("sections"))
	if c.Test {
		return iniSectionsTest(ctx, c, ret, sections, true)
	}
	update := &payload.Map{}
	for _, s := range sections {
		update.Set(s, &payload.Map{})
	}
	res, err := sbExec(ctx, c, "ini.set_option", []any{name, update, sep}, nil)
	if err != nil {
		return ret, err
	}
	ret.Changes = iniMap(res)
	ret.Comment = "Changes take effect"
	return ret, nil
}

// iniSectionNames are the sections a sections argument names: a list's
// items or a map's keys.
func iniSectionNames(v any) []string {
	var sections []string
	switch v := v.(type) {
	case []any:
		for _, s := range v {
			sections = append(sections, pyfmt.Str(s))
		}
	case *payload.Map:
		for _, it := range v.Items() {
			sections = append(sections, payload.KeyString(it.Key))
		}
	}
	return sections
}

// iniSectionsTest is sections_present's and sections_absent's test=True
// report: each section that would be created or deleted.
func iniSectionsTest(ctx context.Context, c *states.Call, ret states.Ret, sections []string, present bool) (states.Ret, error) {
	cur, err := sbExec(ctx, c, "ini.get_ini", []any{ret.Name, c.Args.Get("separator")}, nil)
	if err != nil {
		return ret, err
	}
	curIni := iniMap(cur)
	for _, s := range sections {
		_, exists := curIni.Get(s)
		switch {
		case present && exists:
			ret.Comment += fmt.Sprintf("Section unchanged %s.\n", s)
			continue
		case present:
			ret.Comment += fmt.Sprintf("Created new section %s.\n", s)
		case !exists:
			ret.Comment += fmt.Sprintf("Section %s does not exist.\n", s)
			continue
		default:
			ret.Comment += fmt.Sprintf("Deleted section %s.\n", s)
		}
		ret.Result = states.None
	}
	if ret.Comment == "" {
		ret.Comment = "No changes detected."
	}
	return ret, nil
}

func iniSectionsAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	ret := iniRet(c)
	name, sep := ret.Name, c.Args.Get("separator")
	sections := iniSectionNames(c.Args.Get("sections"))
	if c.Test {
		return iniSectionsTest(ctx, c, ret, sections, false)
	}
	for _, s := range sections {
		cur, err := sbExec(ctx, c, "ini.remove_section", []any{name, s, sep}, nil)
		if err != nil {
			return ret, err
		}
		if !payload.Truthy(cur) {
			continue
		}
		ret.Changes.Set(s, cur)
		ret.Comment = "Changes take effect"
	}
	return ret, nil
}

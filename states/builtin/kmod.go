package builtin

// This file is Salt's kmod state module (salt/states/kmod.py):
// kmod.present and kmod.absent over kmod.mod_list, kmod.load and
// kmod.remove.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func kmodStates() []states.Function {
	return []states.Function{
		{Name: "kmod.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("persist", false), sbOpt("mods", nil)}}, Fn: kmodPresent},
		{Name: "kmod.absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("persist", false), sbOpt("comment", true), sbOpt("mods", nil)}}, Fn: kmodAbsent},
	}
}

// kmodAppend is _append_comment.
func kmodAppend(ret *states.Ret, comment string) {
	if ret.Comment != "" {
		ret.Comment = strings.TrimRight(ret.Comment, " \t\r\n") + "\n" + comment
	} else {
		ret.Comment = comment
	}
}

// kmodPlural is "Kernel module X <one>" or "Kernel modules X, Y <many>".
func kmodPlural(mods []string, one, many string) string {
	if len(mods) == 1 {
		return fmt.Sprintf("Kernel module %s %s", mods[0], one)
	}
	return fmt.Sprintf("Kernel modules %s %s", strings.Join(mods, ", "), many)
}

// kmodMods is the mods argument, or [name] when it is not a list.
func kmodMods(c *states.Call, name string) []string {
	if l, ok := c.Args.Get("mods").([]any); ok {
		out := make([]string, len(l))
		for i, m := range l {
			out[i] = pyfmt.Str(m)
		}
		return out
	}
	return []string{name}
}

func kmodList(ctx context.Context, c *states.Call, persist bool) (map[string]bool, error) {
	v, err := sbExec(ctx, c, "kmod.mod_list", []any{persist}, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	l, _ := v.([]any)
	for _, m := range l {
		out[pyfmt.Str(m)] = true
	}
	return out, nil
}

// kmodSorted is the members of set in sorted order (Salt's order comes
// from a Python set, so any fixed order is as good).
func kmodSorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for m, ok := range set {
		if ok {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

func kmodPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	mods := kmodMods(c, name)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	loaded, err := kmodList(ctx, c, false)
	if err != nil {
		return ret, err
	}
	persist := c.Args.Bool("persist")
	if persist {
		p, err := kmodList(ctx, c, true)
		if err != nil {
			return ret, err
		}
		for m := range loaded {
			loaded[m] = p[m]
		}
	}
	already, missing := map[string]bool{}, map[string]bool{}
	for _, m := range mods {
		if loaded[m] {
			already[m] = true
		} else {
			missing[m] = true
		}
	}
	if len(already) > 0 {
		kmodAppend(&ret, kmodPlural(kmodSorted(already), "is already present", "are already present"))
	}
	if len(already) == len(mods) {
		return ret, nil
	}
	notLoaded := kmodSorted(missing)
	if c.Test {
		ret.Result = states.None
		if ret.Comment != "" {
			ret.Comment += "\n"
		}
		kmodAppend(&ret, kmodPlural(notLoaded, "is set to be loaded", "are set to be loaded"))
		return ret, nil
	}
	availV, err := sbExec(ctx, c, "kmod.available", nil, nil)
	if err != nil {
		return ret, err
	}
	avail := map[string]bool{}
	if l, ok := availV.([]any); ok {
		for _, m := range l {
			avail[pyfmt.Str(m)] = true
		}
	}
	unavailable := map[string]bool{}
	var available []string
	for _, m := range notLoaded {
		if avail[m] {
			available = append(available, m)
		} else {
			unavailable[m] = true
		}
	}
	if len(unavailable) > 0 {
		kmodAppend(&ret, kmodPlural(kmodSorted(unavailable), "is unavailable", "are unavailable"))
		ret.Result = states.False
	}
	var yes, no []string
	var failed [][2]string
	byDep := map[string]bool{}
	for _, m := range available {
		if byDep[m] {
			yes = append(yes, m)
			continue
		}
		res, err := sbExec(ctx, c, "kmod.load", []any{m, persist}, nil)
		if err != nil {
			return ret, err
		}
		if l, ok := res.([]any); ok {
			if len(l) == 0 {
				ret.Result = states.False
				no = append(no, m)
				continue
			}
			for _, x := range l {
				ret.Changes.Set(pyfmt.Str(x), "loaded")
				if pyfmt.Str(x) != m {
					byDep[pyfmt.Str(x)] = true
				}
			}
			yes = append(yes, m)
		} else {
			ret.Result = states.False
			failed = append(failed, [2]string{m, pyfmt.Str(res)})
		}
	}
	kmodSummary(&ret, yes, no, failed, "Loaded", "load")
	return ret, nil
}

// kmodSummary appends the comments about the modules (un)loaded.
func kmodSummary(ret *states.Ret, yes, no []string, failed [][2]string, done, verb string) {
	if len(yes) == 1 {
		kmodAppend(ret, fmt.Sprintf("%s kernel module %s", done, yes[0]))
	} else if len(yes) > 1 {
		kmodAppend(ret, fmt.Sprintf("%s kernel modules %s", done, strings.Join(yes, ", ")))
	}
	if len(no) == 1 {
		kmodAppend(ret, fmt.Sprintf("Failed to %s kernel module %s", verb, no[0]))
	} else if len(no) > 1 {
		kmodAppend(ret, fmt.Sprintf("Failed to %s kernel modules %s", verb, strings.Join(no, ", ")))
	}
	for _, f := range failed {
		kmodAppend(ret, fmt.Sprintf("Failed to %s kernel module %s: %s", verb, f[0], f[1]))
	}
}

func kmodAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	mods := kmodMods(c, name)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	loaded, err := kmodList(ctx, c, false)
	if err != nil {
		return ret, err
	}
	persist := c.Args.Bool("persist")
	if persist {
		p, err := kmodList(ctx, c, true)
		if err != nil {
			return ret, err
		}
		for m := range p {
			loaded[m] = true
		}
	}
	unload := map[string]bool{}
	for _, m := range mods {
		if loaded[m] {
			unload[m] = true
		}
	}
	if len(unload) == 0 {
		ret.Comment = kmodPlural(mods, "is already removed", "are already removed")
		return ret, nil
	}
	toUnload := kmodSorted(unload)
	if c.Test {
		ret.Result = states.None
		kmodAppend(&ret, kmodPlural(toUnload, "is set to be removed", "are set to be removed"))
		return ret, nil
	}
	var yes, no []string
	var failed [][2]string
	for _, m := range toUnload {
		res, err := sbExec(ctx, c, "kmod.remove", []any{m, persist, c.Args.Get("comment")}, nil)
		if err != nil {
			return ret, err
		}
		if l, ok := res.([]any); ok {
			if len(l) == 0 {
				ret.Result = states.False
				no = append(no, m)
				continue
			}
			for _, x := range l {
				ret.Changes.Set(pyfmt.Str(x), "removed")
			}
			yes = append(yes, m)
		} else {
			ret.Result = states.False
			failed = append(failed, [2]string{m, pyfmt.Str(res)})
		}
	}
	kmodSummary(&ret, yes, no, failed, "Removed", "remove")
	return ret, nil
}

package builtin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// moduleStates is Salt's module state module (salt/states/module.py):
// module.run (alias module.mod_watch) calls execution functions, in the
// legacy syntax (name: the function, its arguments as keys, m_ prefixes
// for name/fun/names/state/saltenv) or the new one (each key a function,
// its value the argument list); Salt 3006 picks the syntax from the keys,
// whatever use_superseded says. module.wait (alias module.watch) does
// nothing until a watch requisite fires its mod_watch.
func moduleStates() []states.Function {
	runSpec := modules.Spec{Params: []modules.Param{sbOpt("name", nil)}, Kwargs: true}
	waitSpec := modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true}
	run := func(ctx context.Context, c *states.Call) (states.Ret, error) {
		return moduleRun(ctx, c, sbLowKwargs(c, runSpec))
	}
	noop := func(_ context.Context, c *states.Call) (states.Ret, error) {
		return states.Ret{Name: sbName(c), Result: states.True}, nil
	}
	return []states.Function{
		{Name: "module.run", Spec: runSpec, Fn: run, Watch: run},
		{Name: "module.mod_watch", Spec: runSpec, Fn: run},
		{Name: "module.wait", Spec: waitSpec, Fn: noop, Watch: run},
		{Name: "module.watch", Spec: waitSpec, Fn: noop, Watch: run},
	}
}

// moduleRun detects the syntax and runs the call(s). kw holds the low
// chunk's arguments without name.
func moduleRun(ctx context.Context, c *states.Call, kw *payload.Map) (states.Ret, error) {
	if moduleIsLegacy(c, kw) {
		return moduleLegacyRun(ctx, c, sbName(c), kw)
	}
	return moduleNewRun(ctx, c, kw)
}

// moduleIsLegacy is module.run's syntax detection: any key other than
// name, __reqs__ and sfun without a dot means the legacy syntax, and so
// does a call with only a name.
func moduleIsLegacy(c *states.Call, kw *payload.Map) bool {
	keys := 0
	for _, k := range kw.Keys() {
		if k == "__reqs__" || k == "sfun" {
			continue
		}
		keys++
		if !strings.Contains(k, ".") {
			return true
		}
	}
	hasName := c.Args != nil && c.Args.Given("name") || c.Name != ""
	return keys == 0 && hasName
}

// ModuleRunNames returns the name Salt 3006 gives a new-syntax module.run
// result: the list of the low chunk's argument keys (functions, plus sfun
// and __reqs__ under a watch), where Ret.Name holds the state's name.
func ModuleRunNames(c *states.Call) []string {
	runSpec := modules.Spec{Params: []modules.Param{sbOpt("name", nil)}, Kwargs: true}
	kw := sbLowKwargs(c, runSpec)
	if moduleIsLegacy(c, kw) {
		return nil
	}
	return kw.Keys()
}

// moduleNewRun is the new syntax (_run).
func moduleNewRun(ctx context.Context, c *states.Call, kw *payload.Map) (states.Ret, error) {
	ret := states.Ret{Name: sbName(c), Result: states.None, Changes: &payload.Map{}}
	var functions, missing, tests []string
	for _, k := range kw.Keys() {
		if strings.Contains(k, ".") {
			functions = append(functions, k)
		}
	}
	for _, f := range functions {
		fun, _, _ := strings.Cut(f, ":")
		if _, ok := moduleLookup(c, fun); !ok {
			missing = append(missing, fun)
		} else if c.Test {
			tests = append(tests, fun)
		}
	}
	if len(functions) == 0 {
		ret.Comment = "No function provided."
		ret.Result = states.False
		return ret, nil
	}
	if len(tests) > 0 || len(missing) > 0 {
		plural := func(list []string) string {
			if len(list) > 1 {
				return "True" // Salt formats the boolean (len > 1 or "")
			}
			return ""
		}
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, fmt.Sprintf("Unavailable function%s: %s.", plural(missing), strings.Join(missing, ", ")))
		} else {
			parts = append(parts, "")
		}
		if len(tests) > 0 {
			parts = append(parts, fmt.Sprintf("Function%s %s to be executed.", plural(tests), strings.Join(tests, ", ")))
		} else {
			parts = append(parts, "")
		}
		ret.Comment = strings.TrimSpace(strings.Join(parts, " "))
		if len(missing) > 0 {
			ret.Result = states.False
		}
		return ret, nil
	}
	var failures, success []string
	for _, f := range functions {
		fun, _, _ := strings.Cut(f, ":")
		funcArgs, _ := kw.Get(f)
		funcRet, err := moduleCallFunction(ctx, c, fun, funcArgs)
		if err != nil {
			if errors.Is(err, modules.ErrArguments) || errors.Is(err, modules.ErrInvocation) {
				failures = append(failures, fmt.Sprintf("'%s' failed: %s", f, sbErrText(err)))
				continue
			}
			return states.Ret{}, err
		}
		prev, _ := ret.Changes.Get("ret")
		prevMap, _ := prev.(*payload.Map)
		if prevMap == nil {
			prevMap = &payload.Map{}
		}
		if !moduleGetResult(funcRet, prevMap) {
			if m, ok := funcRet.(*payload.Map); ok {
				cm, has := m.Get("comment")
				if !has {
					cm = "(error message N/A)"
				}
				failures = append(failures, fmt.Sprintf("'%s' failed: %s", f, pyfmt.Str(cm)))
			}
			if funcRet == false {
				failures = append(failures, fmt.Sprintf("'%s': False", f))
			}
			continue
		}
		shown := pyfmt.Str(funcRet)
		if m, ok := funcRet.(*payload.Map); ok {
			cm, has := m.Get("comment")
			if !has {
				cm = "Success"
			}
			shown = pyfmt.Str(cm)
		}
		success = append(success, f+": "+shown)
		ret.Changes.Set(f, funcRet)
	}
	ret.Comment = strings.Join(append(failures, success...), ", ")
	ret.Result = states.ResultOf(len(failures) == 0)
	return ret, nil
}

// moduleLookup finds an execution function.
func moduleLookup(c *states.Call, fun string) (*modules.Function, bool) {
	if c.Env == nil || c.Env.Registry == nil {
		return nil, false
	}
	return c.Env.Registry.Lookup(fun)
}

// moduleCallFunction is salt.utils.functools.call_function: funcArgs is a
// list whose dict members are keyword arguments (those naming a required
// parameter are passed positionally) and whose other members are
// positional; every optional parameter is passed by keyword with its
// default unless given.
func moduleCallFunction(ctx context.Context, c *states.Call, fun string, funcArgs any) (any, error) {
	fn, _ := moduleLookup(c, fun)
	var list []any
	switch v := funcArgs.(type) {
	case nil:
	case []any:
		list = v
	case *payload.Map:
		for _, k := range v.Items() {
			list = append(list, k.Key)
		}
	case string:
		for _, r := range v {
			list = append(list, string(r))
		}
	default:
		return nil, fmt.Errorf("%w: call_function() argument after * must be an iterable, not %s", modules.ErrArguments, payload.TypeName(v))
	}
	var expected []string
	isExpected := map[string]bool{}
	fkw := &payload.Map{}
	for _, p := range fn.Spec.Params {
		if p.Required {
			expected = append(expected, p.Name)
			isExpected[p.Name] = true
		} else {
			fkw.Set(p.Name, p.Default)
		}
	}
	var positional []any
	kwToArg := map[string]any{}
	for i := len(list) - 1; i >= 0; i-- {
		m, ok := list[i].(*payload.Map)
		if !ok {
			positional = append(positional, list[i])
			continue
		}
		for _, it := range m.Items() {
			k := payload.KeyString(it.Key)
			if isExpected[k] {
				kwToArg[k] = it.Value
			} else {
				for _, jt := range m.Items() {
					fkw.SetKey(jt.Key, jt.Value)
				}
			}
		}
	}
	for i, j := 0, len(positional)-1; i < j; i, j = i+1, j-1 {
		positional[i], positional[j] = positional[j], positional[i]
	}
	for _, name := range expected {
		if v, ok := kwToArg[name]; ok {
			positional = append(positional, v)
		}
	}
	expCount, passed := len(expected), len(positional)
	var missingArgs []string
	if expCount > passed && passed < len(fn.Spec.Params) {
		for _, p := range fn.Spec.Params[passed:] {
			if fkw.Has(p.Name) {
				passed++
			} else {
				missingArgs = append(missingArgs, p.Name)
			}
		}
	}
	if len(missingArgs) > 0 {
		return nil, fmt.Errorf("%w: Missing arguments: %s", modules.ErrInvocation, strings.Join(missingArgs, ", "))
	}
	if expCount > passed {
		return nil, fmt.Errorf("%w: Function expects %d positional parameters, got only %d", modules.ErrInvocation, expCount, passed)
	}
	return sbExec(ctx, c, fun, positional, fkw)
}

// moduleLegacyRun is the legacy syntax (_legacy_run).
func moduleLegacyRun(ctx context.Context, c *states.Call, name string, kw *payload.Map) (states.Ret, error) {
	ret := states.Ret{Name: name, Result: states.None}
	fn, ok := moduleLookup(c, name)
	if !ok {
		ret.Comment = fmt.Sprintf("Module function %s is not available", name)
		ret.Result = states.False
		return ret, nil
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("Module function %s is set to execute", name)
		return ret, nil
	}
	kw = kw.Clone()
	rename := func(arg string) string {
		switch arg {
		case "name", "fun", "names", "state", "saltenv":
			return "m_" + arg
		}
		return arg
	}
	defaults := &payload.Map{}
	for _, p := range fn.Spec.Params {
		if !p.Required {
			defaults.Set(p.Name, p.Default)
		}
	}
	for _, it := range defaults.Items() {
		arg := payload.KeyString(it.Key)
		switch arg {
		case "name", "fun", "state", "saltenv":
			if v, ok := kw.Delete("m_" + arg); ok {
				defaults.Set(arg, v)
			}
		}
		if v, ok := kw.Delete(arg); ok {
			defaults.Set(arg, v)
		}
	}
	var args []any
	var missing []string
	for _, p := range fn.Spec.Params {
		rarg := rename(p.Name)
		_, inKw := kw.Get(rarg)
		dv, inDefaults := defaults.Get(p.Name)
		switch {
		case !inKw && !inDefaults:
			missing = append(missing, rarg)
		case inDefaults:
			args = append(args, dv)
		default:
			v, _ := kw.Delete(rarg)
			args = append(args, v)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		ret.Comment = "The following arguments are missing: " + strings.Join(missing, " ")
		ret.Result = states.False
		return ret, nil
	}
	if fn.Spec.Varargs {
		if v, ok := kw.Delete("args"); ok {
			list, isList := v.([]any)
			if !isList {
				ret.Comment = "'args' must be a list."
				ret.Result = states.False
				return ret, nil
			}
			args = append(args, list...)
		}
	}
	var nkwargs *payload.Map
	if fn.Spec.Kwargs {
		if v, ok := kw.Delete("kwargs"); ok {
			m, isMap := v.(*payload.Map)
			if !isMap {
				ret.Comment = "'kwargs' must be a dict."
				ret.Result = states.False
				return ret, nil
			}
			nkwargs = m
		}
	}
	if returner, ok := kw.Get("returner"); ok {
		sbLog(c).Warn("module.run: returners are not supported by gsalt; the return is not sent", "returner", returner, "fun", name)
	}
	mret, err := sbExec(ctx, c, name, args, nkwargs)
	if err != nil {
		ret.Comment = fmt.Sprintf("Module function %s threw an exception. Exception: %s", name, sbErrText(err))
		ret.Result = states.False
		return ret, nil
	}
	ret.Changes = payload.NewMap("ret", mret)
	ret.Comment = fmt.Sprintf("Module function %s executed", name)
	ret.Result = states.ResultOf(moduleGetResult(mret, ret.Changes))
	return ret, nil
}

// moduleGetResult is module.run's _get_result.
func moduleGetResult(funcRet any, changes *payload.Map) bool {
	if m, ok := funcRet.(*payload.Map); ok {
		if rc, has := m.Get("retcode"); has && !py.Equal(rc, 0) {
			return false
		}
	}
	if b, ok := funcRet.(bool); ok {
		return b
	}
	cr, has := changes.Get("ret")
	if !has {
		cr = &payload.Map{}
	}
	m, ok := cr.(*payload.Map)
	if !ok {
		return true
	}
	if r, has := m.Get("result"); has {
		if b, isBool := r.(bool); isBool {
			return b
		}
	}
	if rc, has := m.Get("retcode"); has && !py.Equal(rc, 0) {
		return false
	}
	return moduleDictResult(m)
}

// moduleDictResult is _get_dict_result: false when any nested "result" key
// is False.
func moduleDictResult(m *payload.Map) bool {
	for _, it := range m.Items() {
		if payload.KeyString(it.Key) == "result" && it.Value == false {
			return false
		}
		if sub, ok := it.Value.(*payload.Map); ok {
			if !moduleDictResult(sub) {
				return false
			}
		}
	}
	return true
}

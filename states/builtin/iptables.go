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

// This file is Salt's iptables state module (salt/states/iptables.py):
// rules appended, inserted and deleted, chain policies, flushes and
// user-defined chains, through the iptables execution module (build_rule
// makes the rule and the command shown in comments, check runs
// `iptables -C`), with mod_aggregate gathering the append or insert
// rules of a run into the first one.

func iptablesStates() []states.Function {
	rule := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("table", "filter"), sbOpt("family", "ipv4")}, Kwargs: true}
	chain := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("table", "filter"), sbOpt("family", "ipv4")}}
	ruleFn := func(kind string) states.Func {
		return func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return iptablesRuleState(ctx, c, kind, sbName(c), c.Args.Get("table"), c.Args.Get("family"), iptablesStateKwargs(c))
		}
	}
	return []states.Function{
		{Name: "iptables.chain_present", Spec: chain, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return iptablesChainState(ctx, c, true)
		}},
		{Name: "iptables.chain_absent", Spec: chain, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return iptablesChainState(ctx, c, false)
		}},
		{Name: "iptables.append", Spec: rule, Fn: ruleFn("append")},
		{Name: "iptables.insert", Spec: rule, Fn: ruleFn("insert")},
		{Name: "iptables.delete", Spec: rule, Fn: ruleFn("delete")},
		{Name: "iptables.set_policy", Spec: rule, Fn: iptablesSetPolicy},
		{Name: "iptables.flush", Spec: rule, Fn: iptablesFlush},
	}
}

// iptablesStateKwargs is the state's **kwargs: the low chunk's other
// keys, state-system keywords left out.
func iptablesStateKwargs(c *states.Call) *payload.Map {
	kw := &payload.Map{}
	if c.Args != nil && c.Args.Kwargs != nil {
		for _, it := range c.Args.Kwargs.Items() {
			if k := payload.KeyString(it.Key); !sbInternalKeyword(k) {
				kw.SetKey(it.Key, it.Value)
			}
		}
	}
	return kw
}

// iptablesStrip is Python's str(v).strip().
func iptablesStrip(v any) string { return strings.TrimFunc(pyfmt.Str(v), py.IsSpace) }

// iptablesKey is kwargs[key], Python's KeyError where it is missing.
func iptablesKey(kw *payload.Map, key string) (any, error) {
	v, ok := kw.Get(key)
	if !ok {
		return nil, &modules.PyException{Class: "KeyError", Message: pyfmt.Repr(key)}
	}
	return v, nil
}

// iptablesSaveFile is the file a true save argument names: None for
// True, else the value itself.
func iptablesSaveFile(v any) any {
	if b, ok := v.(bool); ok && b {
		return nil
	}
	return v
}

// iptablesAggregated runs the rules mod_aggregate gathered, one state
// call each, and saves once when any of them asked to (delete never
// does, as in Salt).
func iptablesAggregated(ctx context.Context, c *states.Call, kind, name string, family any, rules any) (states.Ret, error) {
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	var locale []any
	var comments []string
	save := false
	var saveFile any
	list, _ := rules.([]any)
	for _, r := range list {
		rule, ok := r.(*payload.Map)
		if !ok {
			return ret, &modules.PyException{Class: "TypeError", Message: fmt.Sprintf("'%s' object is not a mapping", pyfmt.TypeName(r))}
		}
		rule.Delete("rules")
		rule.Delete("__agg__")
		if v, ok := rule.Get("save"); ok && payload.Truthy(v) {
			if kind != "delete" {
				save = true
			}
			saveFile = v
			rule.Set("save", false)
		}
		kw := &payload.Map{}
		for _, it := range payload.DeepClone(rule).(*payload.Map).Items() {
			if !sbInternalKeyword(payload.KeyString(it.Key)) {
				kw.SetKey(it.Key, it.Value)
			}
		}
		rname, _ := kw.Delete("name")
		table, ok := kw.Delete("table")
		if !ok {
			table = "filter"
		}
		fam, ok := kw.Delete("family")
		if !ok {
			fam = "ipv4"
		}
		sub, err := iptablesRuleState(ctx, c, kind, pyfmt.Str(rname), table, fam, kw)
		if err != nil {
			return ret, err
		}
		if v, ok := sub.Changes.Get("locale"); ok {
			locale = append(locale, v)
		}
		comments = append(comments, sub.Comment)
		ret.Result = sub.Result
	}
	if save {
		if b, ok := saveFile.(bool); ok && b {
			saveFile = nil
		}
		if _, err := sbExec(ctx, c, "iptables.save", nil, payload.NewMap("filename", saveFile, "family", family)); err != nil {
			return ret, err
		}
	}
	if len(locale) > 0 {
		ret.Changes.Set("locale", locale)
	}
	ret.Comment = strings.Join(comments, "\n")
	return ret, nil
}

// iptablesRuleState is the append, insert and delete states.
func iptablesRuleState(ctx context.Context, c *states.Call, kind, name string, table, family any, kw *payload.Map) (states.Ret, error) {
	if rules, ok := kw.Get("rules"); ok {
		return iptablesAggregated(ctx, c, kind, name, family, rules)
	}
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	if kind == "append" {
		// only Salt's append drops the mark: an aggregated insert or
		// delete chunk passes "__agg__" on to build_rule (--__agg__ True)
		kw.Delete("__agg__")
	}
	kw.Set("name", name)
	kw.Set("table", table)
	build := func(extra ...any) (string, error) {
		args := payload.NewMap(extra...)
		args.Set("family", family)
		for _, it := range kw.Items() {
			args.SetKey(it.Key, it.Value)
		}
		v, err := sbExec(ctx, c, "iptables.build_rule", nil, args)
		return pyfmt.Str(v), err
	}
	rule, err := build()
	if err != nil {
		return ret, err
	}
	letter := map[string]any{"append": "A", "insert": "I", "delete": "D"}[kind]
	full := any(true)
	if kind == "append" {
		full = "True"
	}
	command, err := build("full", full, "command", letter)
	if err != nil {
		return ret, err
	}
	command = strings.TrimFunc(command, py.IsSpace)
	chain, err := iptablesKey(kw, "chain")
	if err != nil {
		return ret, err
	}
	exists, err := sbExec(ctx, c, "iptables.check", []any{table, chain, rule, family}, nil)
	if err != nil {
		return ret, err
	}
	present := exists == true
	fam := pyfmt.Str(family)
	saveArg, _ := kw.Get("save")
	if kind == "delete" {
		if !present && !kw.Has("position") {
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("iptables rule for %s already absent for %s (%s)", name, fam, command)
			return ret, nil
		}
	} else if present {
		ret.Result = states.True
		if kind == "append" {
			ret.Comment = fmt.Sprintf("iptables rule for %s already set (%s) for %s", name, command, fam)
		} else {
			ret.Comment = fmt.Sprintf("iptables rule for %s already set for %s (%s)", name, fam, command)
		}
		if payload.Truthy(saveArg) {
			filename := iptablesSaveFile(saveArg)
			differ, err := iptablesSavedDiffers(ctx, c, filename, family)
			if err != nil {
				return ret, err
			}
			if differ {
				out, err := sbExec(ctx, c, "iptables.save", nil, payload.NewMap("filename", filename, "family", family))
				if err != nil {
					return ret, err
				}
				ret.Comment += fmt.Sprintf("\nSaved iptables rule %s for %s\n%s\n%s", name, fam, command, pyfmt.Str(out))
			}
		}
		return ret, nil
	}
	if c.Test {
		switch kind {
		case "append":
			ret.Comment = fmt.Sprintf("iptables rule for %s needs to be set (%s) for %s", name, command, fam)
		case "insert":
			ret.Comment = fmt.Sprintf("iptables rule for %s needs to be set for %s (%s)", name, fam, command)
		default:
			ret.Comment = fmt.Sprintf("iptables rule for %s needs to be deleted for %s (%s)", name, fam, command)
		}
		return ret, nil
	}
	var ok bool
	switch kind {
	case "append":
		v, err := sbExec(ctx, c, "iptables.append", []any{table, chain, rule, family}, nil)
		if err != nil {
			return ret, err
		}
		ok = payload.Truthy(v)
	case "insert":
		position, err := iptablesKey(kw, "position")
		if err != nil {
			return ret, err
		}
		v, err := sbExec(ctx, c, "iptables.insert", []any{table, chain, position, rule, family}, nil)
		if err != nil {
			return ret, err
		}
		ok = !payload.Truthy(v)
	default:
		args := payload.NewMap("family", family, "rule", rule)
		if p, has := kw.Get("position"); has {
			args = payload.NewMap("family", family, "position", p)
		}
		v, err := sbExec(ctx, c, "iptables.delete", []any{table, chain}, args)
		if err != nil {
			return ret, err
		}
		ok = !payload.Truthy(v)
	}
	if !ok {
		ret.Result = states.False
		switch kind {
		case "append":
			ret.Comment = fmt.Sprintf("Failed to set iptables rule for %s.\nAttempted rule was %s for %s", name, command, fam)
		case "insert":
			ret.Comment = fmt.Sprintf("Failed to set iptables rule for %s.\nAttempted rule was %s", name, command)
		default:
			ret.Comment = fmt.Sprintf("Failed to delete iptables rule for %s.\nAttempted rule was %s", name, command)
		}
		return ret, nil
	}
	ret.Changes = payload.NewMap("locale", name)
	ret.Result = states.True
	if kind == "delete" {
		ret.Comment = fmt.Sprintf("Delete iptables rule for %s %s", name, command)
	} else {
		ret.Comment = fmt.Sprintf("Set iptables rule for %s to: %s for %s", name, command, fam)
	}
	if payload.Truthy(saveArg) {
		out, err := sbExec(ctx, c, "iptables.save", nil, payload.NewMap("filename", iptablesSaveFile(saveArg), "family", family))
		if err != nil {
			return ret, err
		}
		verb := "Set and saved"
		if kind == "delete" {
			verb = "Deleted and saved"
		}
		ret.Comment = fmt.Sprintf("%s iptables rule %s for %s\n%s\n%s", verb, name, fam, command, pyfmt.Str(out))
	}
	return ret, nil
}

// iptablesSavedDiffers reports whether the rules in memory differ from
// the saved ones (each chain's rule list, table by table).
func iptablesSavedDiffers(ctx context.Context, c *states.Call, filename, family any) (bool, error) {
	saved, err := sbExec(ctx, c, "iptables.get_saved_rules", nil, payload.NewMap("conf_file", filename, "family", family))
	if err != nil {
		return false, err
	}
	cur, err := sbExec(ctx, c, "iptables.get_rules", nil, payload.NewMap("family", family))
	if err != nil {
		return false, err
	}
	lists := func(v any) []any {
		var out []any
		m, _ := v.(*payload.Map)
		if m == nil {
			return out
		}
		for _, t := range m.Items() {
			tm, _ := t.Value.(*payload.Map)
			if tm == nil {
				continue
			}
			for _, ch := range tm.Items() {
				chm, _ := ch.Value.(*payload.Map)
				var r any
				if chm != nil {
					r, _ = chm.Get("rules")
				}
				out = append(out, r)
			}
		}
		return out
	}
	return !pyfmt.Equal(lists(cur), lists(saved)), nil
}

func iptablesSetPolicy(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	table, family := c.Args.Get("table"), c.Args.Get("family")
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	kw := iptablesStateKwargs(c)
	chain, err := iptablesKey(kw, "chain")
	if err != nil {
		return ret, err
	}
	cur, err := sbExec(ctx, c, "iptables.get_policy", []any{table, chain, family}, nil)
	if err != nil {
		return ret, err
	}
	policy, err := iptablesKey(kw, "policy")
	if err != nil {
		return ret, err
	}
	head := fmt.Sprintf("iptables default policy for chain %s on table %s for %s", pyfmt.Str(chain), pyfmt.Str(table), pyfmt.Str(family))
	if pyfmt.Equal(cur, policy) {
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("%s already set to %s", head, pyfmt.Str(policy))
		return ret, nil
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("%s needs to be set to %s", head, pyfmt.Str(policy))
		return ret, nil
	}
	out, err := sbExec(ctx, c, "iptables.set_policy", []any{table, chain, policy, family}, nil)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(out) {
		ret.Result = states.False
		ret.Comment = "Failed to set iptables default policy"
		return ret, nil
	}
	ret.Changes = payload.NewMap("locale", name)
	ret.Result = states.True
	ret.Comment = fmt.Sprintf("Set default policy for %s to %s family %s", pyfmt.Str(chain), pyfmt.Str(policy), pyfmt.Str(family))
	if save, _ := kw.Get("save"); payload.Truthy(save) {
		if _, err := sbExec(ctx, c, "iptables.save", nil, payload.NewMap("filename", iptablesSaveFile(save), "family", family)); err != nil {
			return ret, err
		}
		ret.Comment = fmt.Sprintf("Set and saved default policy for %s to %s family %s", pyfmt.Str(chain), pyfmt.Str(policy), pyfmt.Str(family))
	}
	return ret, nil
}

func iptablesFlush(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	table, family := c.Args.Get("table"), c.Args.Get("family")
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	kw := iptablesStateKwargs(c)
	chain, ok := kw.Get("chain")
	if !ok {
		chain = ""
	}
	if c.Test {
		// Salt's text names the state, the table and the family in this order
		ret.Comment = fmt.Sprintf("iptables rules in %s table %s chain %s family needs to be flushed", name, pyfmt.Str(table), pyfmt.Str(family))
		return ret, nil
	}
	out, err := sbExec(ctx, c, "iptables.flush", []any{table, chain, family}, nil)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(out) {
		ret.Result = states.False
		ret.Comment = "Failed to flush iptables rules"
		return ret, nil
	}
	ret.Changes = payload.NewMap("locale", name)
	ret.Result = states.True
	ret.Comment = fmt.Sprintf("Flush iptables rules in %s table %s chain %s family", pyfmt.Str(table), pyfmt.Str(chain), pyfmt.Str(family))
	return ret, nil
}

// iptablesChainState is chain_present (present) and chain_absent.
func iptablesChainState(ctx context.Context, c *states.Call, present bool) (states.Ret, error) {
	name := sbName(c)
	table, family := c.Args.Get("table"), c.Args.Get("family")
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	exists, err := sbExec(ctx, c, "iptables.check_chain", []any{table, name, family}, nil)
	if err != nil {
		return ret, err
	}
	t, f := pyfmt.Str(table), pyfmt.Str(family)
	switch {
	case present && exists == true:
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("iptables %s chain is already exist in %s table for %s", name, t, f)
		return ret, nil
	case !present && !payload.Truthy(exists):
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("iptables %s chain is already absent in %s table for %s", name, t, f)
		return ret, nil
	case c.Test && present:
		ret.Comment = fmt.Sprintf("iptables %s chain in %s table needs to be set for %s", name, t, f)
		return ret, nil
	case c.Test:
		ret.Comment = fmt.Sprintf("iptables %s chain in %s table needs to be removed %s", name, t, f)
		return ret, nil
	}
	fun, verb := "iptables.new_chain", "create"
	if !present {
		fun, verb = "iptables.delete_chain", "delete"
		flushed, err := sbExec(ctx, c, "iptables.flush", []any{table, name, family}, nil)
		if err != nil {
			return ret, err
		}
		if payload.Truthy(flushed) {
			ret.Result = states.False
			ret.Comment = fmt.Sprintf("Failed to flush %s chain in %s table: %s for %s", name, t, iptablesStrip(flushed), f)
			return ret, nil
		}
	}
	out, err := sbExec(ctx, c, fun, []any{table, name, family}, nil)
	if err != nil {
		return ret, err
	}
	if out == true {
		ret.Changes = payload.NewMap("locale", name)
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("iptables %s chain in %s table %s success for %s", name, t, verb, f)
		return ret, nil
	}
	ret.Result = states.False
	ret.Comment = fmt.Sprintf("Failed to %s %s chain in %s table: %s for %s", verb, name, t, iptablesStrip(out), f)
	return ret, nil
}

// IptablesModAggregate is iptables.mod_aggregate: the first append or
// insert chunk to run takes copies of the not-yet-run chunks of the same
// function as its "rules", and marks them aggregated.
func IptablesModAggregate(low *payload.Map, chunks []*payload.Map, running *payload.Map) {
	fun := low.Str("fun")
	if fun != "append" && fun != "insert" {
		return
	}
	var rules []any
	for _, ch := range chunks {
		if running.Has(states.GenTag(ch)) || ch.Str("state") != "iptables" || ch.Has("__agg__") || ch.Str("fun") != fun {
			continue
		}
		dup := false
		for _, r := range rules {
			if pyfmt.Equal(r, ch) {
				dup = true
				break
			}
		}
		if !dup {
			rules = append(rules, payload.DeepClone(ch))
			ch.Set("__agg__", true)
		}
	}
	if len(rules) == 0 {
		return
	}
	if cur, ok := low.Get("rules"); ok {
		l, _ := cur.([]any)
		low.Set("rules", append(append([]any(nil), l...), rules...))
	} else {
		low.Set("rules", rules)
	}
}

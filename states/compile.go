package states

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// High data is Salt's "high state": an ordered dict of ID declarations,
// each a dict of state declarations (a list of a function name and
// argument dicts) plus "__sls__" and "__env__", and the global
// "__extend__" and "__exclude__" lists. It is kept as *payload.Map so key
// order and value types survive exactly as the renderers produced them.
// Low data is the list of low chunks compiled from it, one *payload.Map
// per state function call.

// HighCompiler selects which of Salt's two high-data compilers
// VerifyHigh and CompileHigh follow. salt.state.State (state runs,
// orchestration) and salt.state.Compiler (which Salt's reactor inherits)
// share one algorithm but differ in a few messages and in how argument
// dicts reach the low chunks.
type HighCompiler int

const (
	// StateCompiler follows salt.state.State.
	StateCompiler HighCompiler = iota
	// ReactorCompiler follows salt.state.Compiler, the reactor's compiler:
	// no "names" list or trailing-colon checks, shorter "not formed as a
	// string" and "Illegal requisite" messages, an empty argument dict is
	// an error (Salt's next(iter({})) raises there), and every argument
	// dict is merged into the chunk whole (no "state"/"name" overrides
	// filtering).
	ReactorCompiler
)

// VerifyHigh returns the structural errors of high data as c's
// verify_high reports them; an empty list means it can be compiled.
func (c HighCompiler) VerifyHigh(high *payload.Map) []string { return c.verify(high) }

// CompileHigh turns verified high data into low chunks, ordered once,
// like c's compile_high_data.
func (c HighCompiler) CompileHigh(high *payload.Map) []*payload.Map { return c.compile(high, nil) }

// OrderChunks resolves the "order" of low chunks and sorts them like
// Salt's order_chunks (the same in State and Compiler): numbers, "first",
// "last", negative orders counted from the end, names expansions by
// position. It sets the chunks' "order" and, on chunks that had one,
// folds "name_order" into it (Salt leaves it on the others).
func OrderChunks(chunks []*payload.Map) []*payload.Map { return orderChunks(chunks) }

// verifyHigh is State.verify_high: structural errors of the high data.
func verifyHigh(high any) []string { return StateCompiler.verify(high) }

// verify is verify_high of c.
func (c HighCompiler) verify(high any) []string {
	reactor := c == ReactorCompiler
	errs := []string{}
	hm, ok := asMap(high)
	if !ok {
		return append(errs, "High data is not a dictionary and is invalid")
	}
	type reqInfo struct{ m map[any]string }
	reqs := map[any]*reqInfo{}
	for _, it := range hm.Items() {
		name, body := it.Key, it.Value
		if isDunder(name) {
			continue
		}
		bm, isMap := asMap(body)
		slsOf := func() string {
			if !isMap {
				return "None"
			}
			return getStr(bm, "__sls__")
		}
		if _, isStr := name.(string); !isStr {
			quote := ". It may need to be quoted."
			if reactor {
				quote = ""
			}
			errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' is not formed as a string, but is a %s%s", pyStr(name), slsOf(), pyType(name), quote))
		}
		if !isMap {
			errs = append(errs, fmt.Sprintf("The type %s in %s is not formatted as a dictionary", pyStr(name), pyStr(body)))
			continue
		}
		sls := slsOf()
		for _, sit := range bm.Items() {
			state := keyText(sit.Key)
			if strings.HasPrefix(state, "__") {
				continue
			}
			if sit.Value == nil && !reactor {
				errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' contains a short declaration (%s) with a trailing colon. When not passing any arguments to a state, the colon must be omitted.", pyStr(name), sls, state))
				continue
			}
			run, isList := sit.Value.([]any)
			if !isList {
				errs = append(errs, fmt.Sprintf("State '%s' in SLS '%s' is not formed as a list", pyStr(name), sls))
				continue
			}
			fun := 0
			if strings.Contains(state, ".") {
				fun++
			}
			for _, arg := range run {
				switch a := arg.(type) {
				case string:
					fun++
					if strings.Contains(strings.TrimSpace(a), " ") {
						errs = append(errs, fmt.Sprintf("The function \"%s\" in state \"%s\" in SLS \"%s\" has whitespace, a function with whitespace is not supported, perhaps this is an argument that is missing a \":\"", a, pyStr(name), sls))
					}
				case *payload.Map:
					if a.Len() == 0 {
						if reactor {
							errs = append(errs, fmt.Sprintf("Empty argument in state '%s' in SLS '%s'", pyStr(name), sls))
						}
						continue
					}
					fk, fv, _ := firstItem(a)
					argfirst := keyText(fk)
					if argfirst == "names" && !reactor {
						if _, ok := fv.([]any); !ok {
							errs = append(errs, fmt.Sprintf("The 'names' argument in state '%s' in SLS '%s' needs to be formed as a list", pyStr(name), sls))
						}
					}
					switch argfirst {
					case "require", "watch", "prereq", "onchanges":
					default:
						continue
					}
					list, ok := fv.([]any)
					if !ok {
						errs = append(errs, fmt.Sprintf("The %s statement in state '%s' in SLS '%s' needs to be formed as a list", argfirst, pyStr(name), sls))
					} else {
						ri := &reqInfo{m: map[any]string{"state": state}}
						reqs[hkey(name)] = ri
						for _, req := range list {
							if s, ok := req.(string); ok {
								req = payload.NewMap("id", s)
							}
							rm, ok := asMap(req)
							if !ok || rm.Len() == 0 {
								errs = append(errs, fmt.Sprintf("Requisite declaration %s in SLS %s is not formed as a single key dictionary", pyStr(req), sls))
								continue
							}
							rk, rv, _ := firstItem(rm)
							reqKey := keyText(rk)
							if i := strings.IndexByte(reqKey, '.'); i >= 0 {
								errs = append(errs, fmt.Sprintf("Invalid requisite type '%s' in state '%s', in SLS '%s'. Requisite types must not contain dots, did you mean '%s'?", reqKey, pyStr(name), sls, reqKey[:i]))
							}
							if !hashable(rv) {
								if reactor {
									errs = append(errs, fmt.Sprintf("Illegal requisite \"%s\", is SLS %s\n", pyStr(rv), sls))
								} else {
									errs = append(errs, fmt.Sprintf("Illegal requisite \"%s\", please check your syntax.\n", pyStr(rv)))
								}
								continue
							}
							ri.m[hkey(rv)] = reqKey
							if other, ok := reqs[hkey(rv)]; ok {
								if st, ok := other.m[hkey(name)]; ok && st == state {
									if other.m["state"] == ri.m[hkey(rv)] {
										errs = append(errs, fmt.Sprintf("A recursive requisite was found, SLS \"%s\" ID \"%s\" ID \"%s\"", sls, pyStr(name), pyStr(rv)))
									}
								}
							}
						}
					}
					if a.Len() != 1 {
						errs = append(errs, fmt.Sprintf("Multiple dictionaries defined in argument of state '%s' in SLS '%s'", pyStr(name), sls))
					}
				}
			}
			if fun == 0 {
				if state == "require" || state == "watch" {
					continue
				}
				errs = append(errs, fmt.Sprintf("No function declared in state '%s' in SLS '%s'", state, sls))
			} else if fun > 1 {
				errs = append(errs, fmt.Sprintf("Too many functions declared in state '%s' in SLS '%s'", state, sls))
			}
		}
	}
	return errs
}

// orderValue reads a chunk's order as a number; ok is false for
// non-numbers ("first", "last", other strings).
func orderValue(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// isPyInt reports isinstance(v, int) (bools included, as in Python).
func isPyInt(v any) bool {
	switch v.(type) {
	case int64, int, uint64, bool:
		return true
	}
	return false
}

// orderChunks is State.order_chunks: resolve "order" (numbers, "first",
// "last", negative numbers counted from the end, names sub-order) and sort
// by (order, state+name+fun), stable.
func orderChunks(chunks []*payload.Map) []*payload.Map {
	capV := int64(1)
	for _, c := range chunks {
		o, ok := c.Get("order")
		if !ok || !isPyInt(o) {
			continue
		}
		n, _ := orderValue(o)
		if n > float64(capV-1) && n > 0 {
			capV = int64(n) + 100
		}
	}
	for _, c := range chunks {
		o, ok := c.Get("order")
		if !ok {
			c.Set("order", capV)
			continue
		}
		if _, num := orderValue(o); !num {
			switch o {
			case "last":
				o = capV + 1000000
			case "first":
				o = int64(0)
			default:
				o = capV
			}
			c.Set("order", o)
		}
		if no, ok := c.Delete("name_order"); ok {
			cur, _ := orderValue(o)
			n, _ := orderValue(no)
			o = cur + n/10000.0
			c.Set("order", o)
		}
		if cur, _ := orderValue(o); cur < 0 {
			if f, isF := o.(float64); isF {
				c.Set("order", float64(capV+1000000)+f)
			} else {
				n, _ := payload.AsInt(o)
				c.Set("order", capV+1000000+n)
			}
		}
	}
	type keyed struct {
		c     *payload.Map
		order float64
		// exact is the order when it is an int, compared exactly (a
		// float64 cannot tell large ints apart, Python can).
		exact    int64
		hasExact bool
		text     string
	}
	ks := make([]keyed, len(chunks))
	for i, c := range chunks {
		o, _ := c.Get("order")
		n, _ := orderValue(o)
		if math.IsNaN(n) {
			n = math.Inf(1)
		}
		k := keyed{c: c, order: n, text: getStr(c, "state") + getStr(c, "name") + getStr(c, "fun")}
		if isPyInt(o) {
			k.exact, k.hasExact = payload.AsInt(o)
		}
		ks[i] = k
	}
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.hasExact && b.hasExact {
			if a.exact != b.exact {
				return a.exact < b.exact
			}
		} else if a.order != b.order {
			return a.order < b.order
		}
		return a.text < b.text
	})
	out := make([]*payload.Map, len(ks))
	for i, k := range ks {
		out[i] = k.c
	}
	return out
}

// compileHighData is State.compile_high_data: one low chunk per ID, state
// declaration, name (names) and function, ordered.
func compileHighData(high *payload.Map, orchestrationJID any) []*payload.Map {
	return StateCompiler.compile(high, orchestrationJID)
}

// compile is compile_high_data of c.
func (c HighCompiler) compile(high *payload.Map, orchestrationJID any) []*payload.Map {
	var chunks []*payload.Map
	for _, it := range high.Items() {
		name := it.Key
		if isDunder(name) {
			continue
		}
		body, ok := asMap(it.Value)
		if !ok {
			continue
		}
		for _, sit := range body.Items() {
			state := sit.Key
			if isDunder(state) {
				continue
			}
			var funcs []string
			var names []any
			chunk := payload.NewMap("state", state, "name", name)
			if orchestrationJID != nil {
				chunk.Set("__orchestration_jid__", orchestrationJID)
			}
			if v, ok := body.Get("__sls__"); ok {
				chunk.Set("__sls__", v)
			}
			if v, ok := body.Get("__env__"); ok {
				chunk.Set("__env__", v)
			}
			chunk.Set("__id__", name)
			run, _ := sit.Value.([]any)
			for _, arg := range run {
				switch a := arg.(type) {
				case string:
					if !containsStr(funcs, a) {
						funcs = append(funcs, a)
					}
				case *payload.Map:
					for _, kv := range a.Items() {
						key := keyText(kv.Key)
						switch {
						case key == "names":
							for _, n := range pyIterList(kv.Value) {
								if !containsAny(names, n) {
									names = append(names, n)
								}
							}
						case c == ReactorCompiler:
							// Compiler's chunk.update(arg): the whole dict.
							for _, u := range a.Items() {
								chunk.SetKey(u.Key, u.Value)
							}
						case key == "state":
						case key == "name":
							if _, isStr := kv.Value.(string); !isStr {
								chunk.Set(key, name)
							} else {
								chunk.Set(key, kv.Value)
							}
						default:
							chunk.SetKey(kv.Key, kv.Value)
						}
					}
				}
			}
			if len(names) > 0 {
				for i, entry := range names {
					live := payload.DeepClone(chunk).(*payload.Map)
					if em, ok := asMap(entry); ok && em.Len() > 0 {
						k, v, _ := firstItem(em)
						live.SetKey("name", k)
						for _, upd := range listOf(v) {
							if um, ok := asMap(upd); ok {
								for _, kv := range um.Items() {
									live.SetKey(kv.Key, kv.Value)
								}
							}
						}
					} else {
						live.Set("name", entry)
					}
					live.Set("name_order", int64(i+1))
					for _, fun := range funcs {
						c := live
						if len(funcs) > 1 {
							c = live.Clone()
						}
						c.Set("fun", fun)
						chunks = append(chunks, c)
					}
				}
			} else {
				live := payload.DeepClone(chunk).(*payload.Map)
				for _, fun := range funcs {
					c := live
					if len(funcs) > 1 {
						c = live.Clone()
					}
					c.Set("fun", fun)
					chunks = append(chunks, c)
				}
			}
		}
	}
	return orderChunks(chunks)
}

func containsStr(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

func containsAny(l []any, v any) bool {
	for _, e := range l {
		if py.Equal(e, v) {
			return true
		}
	}
	return false
}

// idRef is one (ID, state) pair found by findName / findSLSIDs.
type idRef struct {
	id    any
	state string
}

// findName is salt.state.find_name: the IDs a requisite or extension
// target names, by ID, by a whole SLS, or by a name argument.
func findName(name any, state string, high *payload.Map, strict bool) []idRef {
	var out []idRef
	check2 := true
	if strict {
		check2 = false
		if b, ok := asMap(mapGet(high, name)); ok {
			check2 = b.Has(state)
		}
	}
	if hasKey(high, name) && check2 {
		return append(out, idRef{name, state})
	}
	if state == "sls" {
		for _, it := range high.Items() {
			b, ok := asMap(it.Value)
			if !ok {
				continue
			}
			if v, _ := b.Get("__sls__"); py.Equal(v, name) {
				out = append(out, idRef{it.Key, firstKey(b)})
			}
		}
		return out
	}
	for _, it := range high.Items() {
		b, ok := asMap(it.Value)
		if !ok {
			continue
		}
		for _, arg := range listOf(mapGetStr(b, state)) {
			am, ok := asMap(arg)
			if !ok || am.Len() != 1 {
				continue
			}
			_, v, _ := firstItem(am)
			if py.Equal(v, name) {
				out = append(out, idRef{it.Key, state})
			}
		}
	}
	return out
}

// hasKey is "key in d" for any key type.
func hasKey(m *payload.Map, key any) bool {
	_, ok := m.GetKey(key)
	return ok
}

// mapGet is d.get(key) for any key type.
func mapGet(m *payload.Map, key any) any {
	v, _ := m.GetKey(key)
	return v
}

// mapGetStr is d.get(key) for a string key.
func mapGetStr(m *payload.Map, key string) any {
	v, _ := m.Get(key)
	return v
}

// findSLSIDs is salt.state.find_sls_ids: every (ID, state) of an SLS.
func findSLSIDs(sls any, high *payload.Map) []idRef {
	var out []idRef
	for _, it := range high.Items() {
		b, ok := asMap(it.Value)
		if !ok {
			continue
		}
		v, _ := b.Get("__sls__")
		if !py.Equal(v, sls) {
			continue
		}
		for _, st := range b.Items() {
			if isDunder(st.Key) {
				continue
			}
			out = append(out, idRef{it.Key, keyText(st.Key)})
		}
	}
	return out
}

// stateArgs is salt.state.state_args: the argument names given to a state.
func stateArgs(id any, state string, high *payload.Map) map[string]bool {
	args := map[string]bool{}
	b, ok := asMap(mapGet(high, id))
	if !ok {
		return args
	}
	for _, arg := range listOf(mapGetStr(b, state)) {
		am, ok := asMap(arg)
		if !ok || am.Len() != 1 {
			continue
		}
		args[firstKey(am)] = true
	}
	return args
}

// reconcileExtend is State.reconcile_extend: apply "__extend__" to the
// high data.
func reconcileExtend(high *payload.Map, strict bool) []string {
	var errs []string
	extV, ok := high.Delete("__extend__")
	if !ok {
		return errs
	}
	for _, e := range listOf(extV) {
		extChunk, ok := asMap(e)
		if !ok {
			continue
		}
		for _, eit := range extChunk.Items() {
			name := eit.Key
			body, ok := asMap(eit.Value)
			if !ok {
				continue
			}
			stateType := ""
			for _, k := range body.Items() {
				if !isDunder(k.Key) {
					stateType = keyText(k.Key)
					break
				}
			}
			target, _ := asMap(mapGet(high, name))
			if target == nil || !target.Has(stateType) {
				ids := findName(name, stateType, high, strict)
				if len(ids) != 1 {
					env, sls := "base", "base"
					if v, ok := body.Get("__env__"); ok {
						env = pyStr(v)
					}
					if v, ok := body.Get("__sls__"); ok {
						sls = pyStr(v)
					}
					errs = append(errs, fmt.Sprintf("Cannot extend ID '%s' in '%s:%s'. It is not part of the high state.\nThis is likely due to a missing include statement or an incorrectly typed ID.\nEnsure that a state with an ID of '%s' is available\nin environment '%s' and to SLS '%s'", pyStr(name), env, sls, pyStr(name), env, sls))
					continue
				}
				name = ids[0].id
				target, _ = asMap(mapGet(high, name))
				if target == nil {
					continue
				}
			}
			var slsExcludes []any
			for _, ex := range listOf(mapGetStr(high, "__exclude__")) {
				if s, ok := ex.(string); ok {
					slsExcludes = append(slsExcludes, s)
				} else if em, ok := asMap(ex); ok {
					if v, _ := em.Get("sls"); payload.Truthy(v) {
						slsExcludes = append(slsExcludes, v)
					}
				}
			}
			if containsAny(slsExcludes, mapGetStr(body, "__sls__")) {
				continue
			}
			for _, sit := range body.Items() {
				state := keyText(sit.Key)
				if strings.HasPrefix(state, "__") {
					continue
				}
				if !target.Has(state) {
					target.SetKey(sit.Key, sit.Value)
					continue
				}
				cur := listOf(mapGetStr(target, state))
				for _, arg := range listOf(sit.Value) {
					update := false
					for hind := 0; hind < len(cur); hind++ {
						val := cur[hind]
						if _, ok := arg.(string); ok {
							if _, ok := val.(string); ok {
								cur[hind] = arg
								update = true
								continue
							}
						}
						am, aok := asMap(arg)
						vm, vok := asMap(val)
						if aok && vok && am.Len() > 0 {
							argfirst := firstKey(am)
							if argfirst == firstKey(vm) {
								if isRequisiteKeyword(argfirst) {
									old := listOf(mapGetStr(vm, argfirst))
									merged := append(append([]any(nil), old...), listOf(mapGetStr(am, argfirst))...)
									vm.Set(argfirst, merged)
								} else {
									cur[hind] = arg
								}
								update = true
							}
							if argfirst == "name" && firstKey(vm) == "names" {
								cur[hind] = arg
							}
						}
					}
					if !update {
						cur = append(cur, arg)
					}
				}
				target.Set(state, cur)
			}
		}
	}
	return errs
}

// applyExclude is State.apply_exclude: drop the IDs and SLS named by
// "__exclude__" (SLS names are globs).
func applyExclude(high *payload.Map) {
	exV, ok := high.Delete("__exclude__")
	if !ok {
		return
	}
	var exSLS []string
	exID := []any{}
	for _, exc := range listOf(exV) {
		if s, ok := exc.(string); ok {
			exSLS = append(exSLS, s)
		}
		if em, ok := asMap(exc); ok {
			if em.Len() != 1 {
				continue
			}
			k, v, _ := firstItem(em)
			switch keyText(k) {
			case "sls":
				exSLS = append(exSLS, pyStr(v))
			case "id":
				exID = append(exID, v)
			}
		}
	}
	if len(exSLS) > 0 {
		for _, it := range high.Items() {
			if isDunder(it.Key) {
				continue
			}
			b, ok := asMap(it.Value)
			if !ok {
				continue
			}
			sls, _ := b.Get("__sls__")
			if !payload.Truthy(sls) {
				continue
			}
			for _, ex := range exSLS {
				if fnmatch(pyStr(sls), ex) {
					exID = append(exID, it.Key)
				}
			}
		}
	}
	for _, id := range exID {
		if s, ok := id.(string); ok {
			high.Delete(s)
			continue
		}
		deleteKey(high, id)
	}
}

// deleteKey deletes a non-string key from m.
func deleteKey(m *payload.Map, key any) {
	items := m.Items()
	keep := make([]any, 0, 2*len(items))
	found := false
	for _, it := range items {
		if !found && py.Equal(it.Key, key) && fmt.Sprintf("%T", it.Key) == fmt.Sprintf("%T", key) {
			found = true
			continue
		}
		keep = append(keep, it.Key, it.Value)
	}
	if !found {
		return
	}
	*m = *payload.NewMap(keep...)
}

// injectDefaultCall is State.inject_default_call: a state declaration
// without a function name gets "__call__" inserted before its last item.
func injectDefaultCall(high *payload.Map) {
	for _, it := range high.Items() {
		body, ok := asMap(it.Value)
		if !ok {
			continue
		}
		for _, sit := range body.Items() {
			run, ok := sit.Value.([]any)
			if !ok {
				continue
			}
			needs := true
			for _, a := range run {
				if _, isStr := a.(string); isStr {
					needs = false
					break
				}
			}
			if needs {
				pos := len(run) - 1
				if pos < 0 {
					pos = 0
				}
				nr := make([]any, 0, len(run)+1)
				nr = append(nr, run[:pos]...)
				nr = append(nr, "__call__")
				nr = append(nr, run[pos:]...)
				body.SetKey(sit.Key, nr)
			}
		}
	}
}

// pyIterList is what Python's "for x in v" visits (py.Iter), nothing for a
// value Python cannot iterate.
func pyIterList(v any) []any {
	l, _ := py.Iter(v)
	return l
}

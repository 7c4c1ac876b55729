package reactor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is the part of Salt's state compiler (salt.state.Compiler) the
// reactor uses: pad_funcs, verify_high, compile_high_data, order_chunks,
// and the reactor's alias table.

// alias maps a legacy reaction type to the current one ("cmd.cmd.run" is
// a local reaction).
func alias(state string) (string, bool) {
	if state == "cmd" {
		return TypeLocal, true
	}
	return "", false
}

// errTemplateShape reports rendered data the compiler cannot use (Salt
// raises a TypeError there and skips the file).
var errTemplateShape = fmt.Errorf("%w: rendered data has the wrong shape", ErrRender)

// padFuncs turns "state.fun" keys into a "state" key whose list ends with
// "fun", and "id: state.fun" strings into {state: [fun]}, like
// Compiler.pad_funcs. Only the first dotted key of a state type in a body
// is converted; later ones stay as they are. A body that is neither a
// dict nor a string is an error.
func padFuncs(high *payload.Map) error {
	for _, it := range high.Items() {
		switch body := it.Value.(type) {
		case string:
			if state, fun, ok := strings.Cut(body, "."); ok {
				high.SetKey(it.Key, payload.NewMap(state, []any{fun}))
			}
			continue
		case *payload.Map:
			keys := make([]string, 0, body.Len())
			for _, bk := range body.Items() {
				s, ok := bk.Key.(string)
				if !ok {
					return fmt.Errorf("%w: key %s of %s is not a string", errTemplateShape, pyfmt.Repr(bk.Key), pyfmt.Repr(it.Key))
				}
				keys = append(keys, s)
			}
			sort.Strings(keys)
			seen := map[string]bool{}
			for _, key := range keys {
				if strings.HasPrefix(key, "_") {
					continue
				}
				v, _ := body.Get(key)
				list, ok := v.([]any)
				if !ok {
					continue
				}
				state, fun, dotted := strings.Cut(key, ".")
				if !dotted {
					seen[key] = true
					continue
				}
				if seen[state] {
					continue
				}
				body.Delete(key)
				body.Set(state, append(append([]any(nil), list...), fun))
				seen[state] = true
			}
		default:
			return fmt.Errorf("%w: %s is a %s, not a dict", errTemplateShape, pyfmt.Repr(it.Key), payload.TypeName(it.Value))
		}
	}
	return nil
}

// verifyHigh checks high data like Compiler.verify_high and returns Salt's
// error messages.
func verifyHigh(high *payload.Map) []string {
	var errs []string
	type reqInfo struct {
		state string
		reqs  map[string]string
	}
	reqs := map[string]*reqInfo{}
	for _, it := range high.Items() {
		name, isStr := it.Key.(string)
		if isStr && strings.HasPrefix(name, "__") {
			continue
		}
		body, isMap := it.Value.(*payload.Map)
		sls := ""
		if isMap {
			sls = pyfmt.Str(mapGet(body, "__sls__"))
		}
		if !isStr {
			errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' is not formed as a string, but is a %s",
				pyfmt.Str(it.Key), sls, pyTypeName(it.Key)))
		}
		if !isMap {
			errs = append(errs, fmt.Sprintf("The type %s in %s is not formatted as a dictionary", pyfmt.Str(it.Key), pyfmt.Str(it.Value)))
			continue
		}
		for _, st := range body.Items() {
			state := payload.KeyString(st.Key)
			if strings.HasPrefix(state, "__") {
				continue
			}
			run, ok := st.Value.([]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("State '%s' in SLS '%s' is not formed as a list", pyfmt.Str(it.Key), sls))
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
						errs = append(errs, fmt.Sprintf("The function \"%s\" in state \"%s\" in SLS \"%s\" has whitespace, a function with whitespace is not supported, perhaps this is an argument that is missing a \":\"",
							a, pyfmt.Str(it.Key), sls))
					}
				case *payload.Map:
					if a.Len() == 0 {
						// Salt's next(iter({})) raises; nothing compiles.
						errs = append(errs, fmt.Sprintf("Empty argument in state '%s' in SLS '%s'", pyfmt.Str(it.Key), sls))
						continue
					}
					first := payload.KeyString(a.Items()[0].Key)
					if first == "require" || first == "watch" || first == "prereq" || first == "onchanges" {
						rv, _ := a.Get(first)
						list, ok := rv.([]any)
						if !ok {
							errs = append(errs, fmt.Sprintf("The %s statement in state '%s' in SLS '%s' needs to be formed as a list",
								first, pyfmt.Str(it.Key), sls))
						} else {
							info := &reqInfo{state: state, reqs: map[string]string{}}
							reqs[name] = info
							for _, req := range list {
								if s, ok := req.(string); ok {
									req = payload.NewMap("id", s)
								}
								rm, ok := req.(*payload.Map)
								if !ok || rm.Len() == 0 {
									errs = append(errs, fmt.Sprintf("Requisite declaration %s in SLS %s is not formed as a single key dictionary",
										pyfmt.Str(req), sls))
									continue
								}
								rk := payload.KeyString(rm.Items()[0].Key)
								rval := rm.Items()[0].Value
								if i := strings.Index(rk, "."); i >= 0 {
									errs = append(errs, fmt.Sprintf("Invalid requisite type '%s' in state '%s', in SLS '%s'. Requisite types must not contain dots, did you mean '%s'?",
										rk, pyfmt.Str(it.Key), sls, rk[:i]))
								}
								switch rval.(type) {
								case []any, *payload.Map:
									errs = append(errs, fmt.Sprintf("Illegal requisite \"%s\", is SLS %s\n", pyfmt.Str(rval), sls))
									continue
								}
								rvs := pyfmt.Str(rval)
								info.reqs[rvs] = rk
								if other, ok := reqs[rvs]; ok {
									if back, ok := other.reqs[name]; ok && back == state && other.state == info.reqs[rvs] {
										errs = append(errs, fmt.Sprintf("A recursive requisite was found, SLS \"%s\" ID \"%s\" ID \"%s\"", sls, name, rvs))
									}
								}
							}
						}
						if a.Len() != 1 {
							errs = append(errs, fmt.Sprintf("Multiple dictionaries defined in argument of state '%s' in SLS '%s'", pyfmt.Str(it.Key), sls))
						}
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

// compileHighData turns verified high data into low chunks like
// Compiler.compile_high_data (which also orders them once).
func compileHighData(high *payload.Map) []*payload.Map {
	var chunks []*payload.Map
	for _, it := range high.Items() {
		name := it.Key
		if s, ok := name.(string); ok && strings.HasPrefix(s, "__") {
			continue
		}
		body, ok := it.Value.(*payload.Map)
		if !ok {
			continue
		}
		for _, st := range body.Items() {
			state := payload.KeyString(st.Key)
			if strings.HasPrefix(state, "__") {
				continue
			}
			run, _ := st.Value.([]any)
			chunk := payload.NewMap("state", state)
			chunk.SetKey("name", name)
			if v, ok := body.Get("__sls__"); ok {
				chunk.Set("__sls__", v)
			}
			if v, ok := body.Get("__env__"); ok {
				chunk.Set("__env__", v)
			}
			chunk.SetKey("__id__", name)
			var funcs []string
			var names []any
			for _, arg := range run {
				switch a := arg.(type) {
				case string:
					if !containsStr(funcs, a) {
						funcs = append(funcs, a)
					}
				case *payload.Map:
					for _, kv := range a.Items() {
						if payload.KeyString(kv.Key) == "names" {
							for _, n := range pyIter(kv.Value) {
								if !containsValue(names, n) {
									names = append(names, n)
								}
							}
							continue
						}
						for _, u := range a.Items() {
							chunk.SetKey(u.Key, u.Value)
						}
					}
				}
			}
			if len(names) > 0 {
				for i, entry := range names {
					live := payload.DeepClone(chunk).(*payload.Map)
					if em, ok := entry.(*payload.Map); ok && em.Len() > 0 {
						first := em.Items()[0]
						live.SetKey("name", first.Key)
						for _, upd := range pyIter(first.Value) {
							if um, ok := upd.(*payload.Map); ok {
								for _, u := range um.Items() {
									live.SetKey(u.Key, u.Value)
								}
							}
						}
					} else {
						live.SetKey("name", entry)
					}
					live.Set("name_order", int64(i+1))
					// Salt appends the same dict once per function, so
					// the last function wins; verify_high allows one.
					for _, f := range funcs {
						live.Set("fun", f)
						chunks = append(chunks, live)
					}
				}
			} else {
				live := payload.DeepClone(chunk).(*payload.Map)
				for _, f := range funcs {
					live.Set("fun", f)
					chunks = append(chunks, live)
				}
			}
		}
	}
	return orderChunks(chunks)
}

// orderChunks sorts chunks like Compiler.order_chunks: a default order of
// 100 past the largest explicit one, "first" and "last", negative orders
// counted from the end, names expansions ordered by their position.
func orderChunks(chunks []*payload.Map) []*payload.Map {
	limit := int64(1)
	for _, c := range chunks {
		v, ok := c.Get("order")
		if !ok {
			continue
		}
		o, isInt := pyInt(v)
		if !isInt {
			continue
		}
		if o > limit-1 && o > 0 {
			limit = o + 100
		}
	}
	for _, c := range chunks {
		v, ok := c.Get("order")
		if !ok {
			c.Set("order", limit)
			continue
		}
		if !isNumber(v) {
			switch v {
			case "last":
				v = limit + 1000000
			case "first":
				v = int64(0)
			default:
				v = limit
			}
		}
		if no, ok := c.Delete("name_order"); ok {
			v = addNumbers(v, divide(no, 10000.0))
		}
		if numberLess(v, int64(0)) {
			v = addNumbers(limit+1000000, v)
		}
		c.Set("order", v)
	}
	keys := make([]string, len(chunks))
	for i, c := range chunks {
		keys[i] = pyfmt.Str(mapGet(c, "state")) + pyfmt.Str(mapGet(c, "name")) + pyfmt.Str(mapGet(c, "fun"))
	}
	idx := make([]int, len(chunks))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		oa, ob := mapGet(chunks[idx[a]], "order"), mapGet(chunks[idx[b]], "order")
		if numberLess(oa, ob) {
			return true
		}
		if numberLess(ob, oa) {
			return false
		}
		return keys[idx[a]] < keys[idx[b]]
	})
	out := make([]*payload.Map, len(chunks))
	for i, j := range idx {
		out[i] = chunks[j]
	}
	return out
}

// resolveAliases rewrites legacy reaction types.
func resolveAliases(chunks []*payload.Map) {
	for _, c := range chunks {
		if to, ok := alias(c.Str("state")); ok {
			c.Set("state", to)
		}
	}
}

// pyInt reports whether v is a Python int (bool included) and its value.
func pyInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case uint64:
		return int64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func isNumber(v any) bool {
	if _, ok := pyInt(v); ok {
		return true
	}
	_, ok := v.(float64)
	return ok
}

// toFloat converts a Python number to float64.
func toFloat(v any) float64 {
	if i, ok := pyInt(v); ok {
		return float64(i)
	}
	f, _ := v.(float64)
	return f
}

// addNumbers is Python's a + b for ints and floats (bools count as ints).
func addNumbers(a, b any) any {
	ai, aInt := pyInt(a)
	bi, bInt := pyInt(b)
	if aInt && bInt {
		return ai + bi
	}
	return toFloat(a) + toFloat(b)
}

// divide is Python's a / b (always a float).
func divide(a any, b float64) any { return toFloat(a) / b }

// numberLess compares two orders; non-numbers sort as 0.
func numberLess(a, b any) bool {
	ai, aInt := pyInt(a)
	bi, bInt := pyInt(b)
	if aInt && bInt {
		return ai < bi
	}
	return toFloat(a) < toFloat(b)
}

// pyIter lists what Python's "for x in v" visits: list items, a string's
// characters, a dict's keys; nothing for other values.
func pyIter(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out
	case *payload.Map:
		out := make([]any, 0, x.Len())
		for _, it := range x.Items() {
			out = append(out, it.Key)
		}
		return out
	}
	return nil
}

// iterable reports whether Python can iterate v.
func iterable(v any) bool {
	switch v.(type) {
	case []any, string, *payload.Map, []byte:
		return true
	}
	return false
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func containsValue(l []any, v any) bool {
	for _, x := range l {
		if pyfmt.Repr(x) == pyfmt.Repr(v) {
			return true
		}
	}
	return false
}

func mapGet(m *payload.Map, k string) any {
	v, _ := m.Get(k)
	return v
}

// pyTypeName is Python's type(v).__name__ for decoded values.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, uint64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case []any:
		return "list"
	case *payload.Map:
		return "dict"
	}
	return payload.TypeName(v)
}

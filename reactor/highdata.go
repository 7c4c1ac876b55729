package reactor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is the part of Salt's state compiler (salt.state.Compiler) the
// reactor has on its own: pad_funcs and the reactor's alias table.
// verify_high, compile_high_data and order_chunks are the states package's
// (states.ReactorCompiler, states.OrderChunks).

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

// iterable reports whether Python can iterate v.
func iterable(v any) bool {
	switch v.(type) {
	case []any, string, *payload.Map, []byte:
		return true
	}
	return false
}

func mapGet(m *payload.Map, k string) any {
	v, _ := m.Get(k)
	return v
}

// pyTypeName is Python's type(v).__name__ for decoded values.
func pyTypeName(v any) string { return pyfmt.TypeName(v) }

package jinja

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/gsalt/gsalt/wire/payload"
)

func randIntn(n int) int { return rand.IntN(n) }

// SortItems orders a dict's items like Python's sorted(d.items()).
func SortItems(m *payload.Map) ([]payload.Item, error) {
	items := m.Items()
	vals := make([]any, len(items))
	keys := make([]any, len(items))
	for i, it := range items {
		vals[i] = it
		keys[i] = it.Key
	}
	sorted, err := sortByKeys(vals, keys, false)
	if err != nil {
		return nil, err
	}
	out := make([]payload.Item, len(sorted))
	for i, s := range sorted {
		out[i] = s.(payload.Item)
	}
	return out, nil
}

func oneArg(name string, args []any, kw *payload.Map) (any, error) {
	a, err := Bind(name, args, kw, []string{"other"}, Required)
	if err != nil {
		return nil, err
	}
	return a[0], nil
}

func cmpTest(op string) TestFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
		o, err := oneArg(op, args, kw)
		if err != nil {
			return false, err
		}
		return compareOp(op, v, o)
	}
}

// hasCased reports whether s has a cased character (Python's islower and
// isupper need one).
func hasCased(s string) bool {
	for _, c := range s {
		if unicode.IsUpper(c) || unicode.IsLower(c) || unicode.IsTitle(c) {
			return true
		}
	}
	return false
}

func isStrictUndef(v any) bool {
	u, ok := v.(*Undefined)
	return ok && u.Strict
}

func builtinTests() map[string]TestFunc {
	t := map[string]TestFunc{
		"odd": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			m, err := BinOp("%", v, int64(2))
			if err != nil {
				return false, err
			}
			return Equal(m, int64(1)), nil
		},
		"even": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			m, err := BinOp("%", v, int64(2))
			if err != nil {
				return false, err
			}
			return Equal(m, int64(0)), nil
		},
		"divisibleby": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			n, err := oneArg("test_divisibleby", args, kw)
			if err != nil {
				return false, err
			}
			m, err := BinOp("%", v, n)
			if err != nil {
				return false, err
			}
			return Equal(m, int64(0)), nil
		},
		"defined": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			_, u := v.(*Undefined)
			return !u, nil
		},
		"undefined": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			_, u := v.(*Undefined)
			return u, nil
		},
		"filter": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			if err := strictCheck(v); err != nil {
				return false, err
			}
			// "value in env.filters" hashes the value
			if err := hashable(v); err != nil {
				return false, err
			}
			s, _ := v.(string)
			_, ok := r.env.Filters[s]
			return ok, nil
		},
		"test": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			if err := strictCheck(v); err != nil {
				return false, err
			}
			// "value in env.tests" hashes the value
			if err := hashable(v); err != nil {
				return false, err
			}
			s, _ := v.(string)
			_, ok := r.env.Tests[s]
			return ok, nil
		},
		"none": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) { return v == nil, nil },
		"boolean": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			_, ok := v.(bool)
			return ok, nil
		},
		"false": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			b, ok := v.(bool)
			return ok && !b, nil
		},
		"true": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			b, ok := v.(bool)
			return ok && b, nil
		},
		"integer": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			switch v.(type) {
			case int64, *big.Int:
				return true, nil
			}
			return false, nil
		},
		"float": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			_, ok := v.(float64)
			return ok, nil
		},
		"number": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			k, _, _, _ := numOf(v)
			return k != nkNone, nil
		},
		"lower": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			s, err := Str(v)
			if err != nil {
				return false, err
			}
			return hasCased(s) && strings.ToLower(s) == s, nil
		},
		"upper": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			s, err := Str(v)
			if err != nil {
				return false, err
			}
			return hasCased(s) && strings.ToUpper(s) == s, nil
		},
		"string": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			_, ok := v.(string)
			return ok, nil
		},
		"mapping": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			_, ok := v.(*payload.Map)
			return ok, nil
		},
		"sequence": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			switch v.(type) {
			case string, []byte, *List, Tuple, *payload.Map, *rangeVal:
				return true, nil
			case *Undefined:
				// len() of a strict one raises, which the test catches
				return !isStrictUndef(v), nil
			}
			return false, nil
		},
		"iterable": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			if isStrictUndef(v) {
				return false, v.(*Undefined).err()
			}
			return isIterable(v), nil
		},
		"callable": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			switch v.(type) {
			case Callable, *Undefined:
				return true, nil
			}
			return false, nil
		},
		"sameas": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			o, err := oneArg("test_sameas", args, kw)
			if err != nil {
				return false, err
			}
			return sameAs(v, o), nil
		},
		"escaped": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			// hasattr(value, "__html__")
			_, ok := v.(Markup)
			return ok, nil
		},
		"in": func(r *Runtime, v any, args []any, kw *payload.Map) (bool, error) {
			o, err := oneArg("test_in", args, kw)
			if err != nil {
				return false, err
			}
			return Contains(o, v)
		},
	}
	for _, names := range [][]string{{"==", "eq", "equalto"}, {"!=", "ne"}, {">", "gt", "greaterthan"}, {">=", "ge"}, {"<", "lt", "lessthan"}, {"<=", "le"}} {
		fn := cmpTest(names[0])
		for _, n := range names {
			t[n] = fn
		}
	}
	return t
}

// sameAs approximates Python's "is": identity for containers, equality
// of value and type for immutable scalars (small ints, None, bools and
// interned strings are identical in CPython).
func sameAs(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case *List:
		y, ok := b.(*List)
		return ok && x == y
	case *payload.Map:
		y, ok := b.(*payload.Map)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y && x >= -5 && x <= 256
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}

// isIterable is Python's iter(v) succeeding, decided by v's type alone:
// iter() of a generator returns the generator itself, unread, so a lazy
// filter's result is iterable whatever its input (True|reject is a
// generator object that raises only when read).
func isIterable(v any) bool {
	switch x := demote(v).(type) {
	case *List, Tuple, []any, string, []byte, *payload.Map, Iterable:
		return true
	case *Undefined:
		return !x.Strict
	}
	return false
}

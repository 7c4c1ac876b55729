package render

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// Python's dict and list methods on the template value model. gonja
// hands methods a converted copy (self) and the original value
// (selfValue); these work on selfValue so that they see and change the
// shared object, in insertion order, as Python does.

type dictMethod = exec.Method[map[string]any]
type listMethod = exec.Method[[]any]

// setDictItem sets key (keeping the position of an existing key).
func setDictItem(d *exec.Dict, key *exec.Value, value any) {
	if p, _ := dictLookup(d, key); p != nil {
		p.Value = exec.ToValue(value)
		return
	}
	d.Pairs = append(d.Pairs, &exec.Pair{Key: normKey(key), Value: exec.ToValue(value)})
}

// normKey gives a non-string key its string-kinded template type, which
// gonja's dict methods need.
func normKey(k *exec.Value) *exec.Value {
	switch raw(k).(type) {
	case string, intKey, boolKey, noneKey, floatKey:
		return k
	}
	return exec.AsValue(jinjaKey(fromJinjaKey(k)))
}

// normDict normalises the keys of a dict literal (and the dicts in it).
func normDict(v any, depth int) {
	if depth > maxConvertDepth {
		return
	}
	switch t := raw(v).(type) {
	case *exec.Dict:
		for _, p := range t.Pairs {
			p.Key = normKey(p.Key)
			normDict(p.Value, depth+1)
		}
	case *[]any:
		for _, e := range *t {
			normDict(e, depth+1)
		}
	case exec.ValuesList:
		for _, e := range t {
			normDict(e, depth+1)
		}
	}
}

func selfDict(v *exec.Value) (*exec.Dict, error) {
	d := asDict(v)
	if d == nil {
		return nil, fmt.Errorf("%s is not a dict", pyRepr(v))
	}
	return d, nil
}

func argCount(va *exec.VarArgs, name string, min, max int) error {
	if len(va.Args) < min || len(va.Args) > max {
		return exec.ErrInvalidCall(fmt.Errorf("%s() takes %d to %d positional arguments but %d were given", name, min, max, len(va.Args)))
	}
	return nil
}

// dictView is a dict method without arguments returning one list item
// per pair (keys, values, items).
func dictView(item func(p *exec.Pair) any) dictMethod {
	return func(_ map[string]any, sv *exec.Value, _ *exec.VarArgs) (any, error) {
		d, err := selfDict(sv)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, len(d.Pairs))
		for _, p := range d.Pairs {
			out = append(out, item(p))
		}
		return newList(out), nil
	}
}

// dictMethodArgs is a dict method taking min to max positional
// arguments, called with the dict itself.
func dictMethodArgs(name string, min, max int, fn func(d *exec.Dict, va *exec.VarArgs) (any, error)) dictMethod {
	return func(_ map[string]any, sv *exec.Value, va *exec.VarArgs) (any, error) {
		if err := argCount(va, name, min, max); err != nil {
			return nil, err
		}
		d, err := selfDict(sv)
		if err != nil {
			return nil, err
		}
		return fn(d, va)
	}
}

// listMethodArgs is a list method taking min to max positional
// arguments, called with the list itself.
func listMethodArgs(name string, min, max int, fn func(l *[]any, va *exec.VarArgs) (any, error)) listMethod {
	return func(_ []any, sv *exec.Value, va *exec.VarArgs) (any, error) {
		if err := argCount(va, name, min, max); err != nil {
			return nil, err
		}
		l, err := selfList(sv)
		if err != nil {
			return nil, err
		}
		return fn(l, va)
	}
}

func dictMethods() *exec.MethodSet[map[string]any] {
	return exec.NewMethodSet(map[string]dictMethod{
		"keys":   dictView(func(p *exec.Pair) any { return keyValue(p.Key) }),
		"values": dictView(func(p *exec.Pair) any { return raw(p.Value) }),
		"items":  dictView(func(p *exec.Pair) any { return pyTuple{keyValue(p.Key), raw(p.Value)} }),
		"get": dictMethodArgs("get", 1, 2, func(d *exec.Dict, va *exec.VarArgs) (any, error) {
			if p, _ := dictLookup(d, va.Args[0]); p != nil {
				return raw(p.Value), nil
			}
			if len(va.Args) == 2 {
				return raw(va.Args[1]), nil
			}
			return nil, nil
		}),
		"pop": dictMethodArgs("pop", 1, 2, func(d *exec.Dict, va *exec.VarArgs) (any, error) {
			if p, i := dictLookup(d, va.Args[0]); p != nil {
				d.Pairs = append(d.Pairs[:i], d.Pairs[i+1:]...)
				return raw(p.Value), nil
			}
			if len(va.Args) == 2 {
				return raw(va.Args[1]), nil
			}
			return nil, fmt.Errorf("KeyError: %s", pyRepr(va.Args[0]))
		}),
		"setdefault": dictMethodArgs("setdefault", 1, 2, func(d *exec.Dict, va *exec.VarArgs) (any, error) {
			if p, _ := dictLookup(d, va.Args[0]); p != nil {
				return raw(p.Value), nil
			}
			var def any
			if len(va.Args) == 2 {
				def = va.Args[1].Interface()
			}
			setDictItem(d, va.Args[0], def)
			return def, nil
		}),
		"update": dictMethodArgs("update", 0, 1, func(d *exec.Dict, va *exec.VarArgs) (any, error) {
			if len(va.Args) == 1 {
				if src := asDict(va.Args[0]); src != nil {
					pairs := append([]*exec.Pair(nil), src.Pairs...)
					for _, p := range pairs {
						setDictItem(d, p.Key, p.Value)
					}
				} else if items, ok := listItems(va.Args[0]); ok {
					for _, it := range items {
						pair, ok := listItems(exec.ToValue(it))
						if !ok || len(pair) != 2 {
							return nil, errors.New("dictionary update sequence element has the wrong length")
						}
						setDictItem(d, exec.ToValue(pair[0]), pair[1])
					}
				} else {
					return nil, fmt.Errorf("%s is not a dict", pyRepr(va.Args[0]))
				}
			}
			for _, k := range sortedKwargs(va) {
				setDictItem(d, exec.AsValue(k), va.KwArgs[k])
			}
			return nil, nil
		}),
		"copy": func(_ map[string]any, sv *exec.Value, va *exec.VarArgs) (any, error) {
			d, err := selfDict(sv)
			if err != nil {
				return nil, err
			}
			c := &exec.Dict{Pairs: make([]*exec.Pair, len(d.Pairs))}
			for i, p := range d.Pairs {
				c.Pairs[i] = &exec.Pair{Key: p.Key, Value: p.Value}
			}
			return c, nil
		},
		"clear": func(_ map[string]any, sv *exec.Value, va *exec.VarArgs) (any, error) {
			d, err := selfDict(sv)
			if err != nil {
				return nil, err
			}
			d.Pairs = d.Pairs[:0]
			return nil, nil
		},
		"has_key": func(_ map[string]any, sv *exec.Value, va *exec.VarArgs) (any, error) {
			return nil, errors.New("'dict' object has no attribute 'has_key'")
		},
	})
}

// selfList returns the shared list behind v (a *[]any) or a copy for
// other sequence types (then changes are not seen elsewhere).
func selfList(v *exec.Value) (*[]any, error) {
	if p, ok := v.Interface().(*[]any); ok {
		return p, nil
	}
	items, ok := listItems(v)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", pyRepr(v))
	}
	return &items, nil
}

func listMethods() *exec.MethodSet[[]any] {
	return exec.NewMethodSet(map[string]listMethod{
		"append": listMethodArgs("append", 1, 1, func(l *[]any, va *exec.VarArgs) (any, error) {
			if len(*l) >= maxListLen {
				return nil, fmt.Errorf("list longer than %d items", maxListLen)
			}
			*l = append(*l, va.Args[0].Interface())
			return nil, nil
		}),
		"extend": listMethodArgs("extend", 1, 1, func(l *[]any, va *exec.VarArgs) (any, error) {
			items, ok := listItems(va.Args[0])
			if !ok {
				if d := asDict(va.Args[0]); d != nil {
					for _, p := range d.Pairs {
						items = append(items, keyValue(p.Key))
					}
				} else {
					return nil, fmt.Errorf("%s is not iterable", pyRepr(va.Args[0]))
				}
			}
			if len(*l)+len(items) > maxListLen {
				return nil, fmt.Errorf("list longer than %d items", maxListLen)
			}
			*l = append(*l, items...)
			return nil, nil
		}),
		"insert": listMethodArgs("insert", 2, 2, func(l *[]any, va *exec.VarArgs) (any, error) {
			i := va.Args[0].Integer()
			n := len(*l)
			if i < 0 {
				i += n
			}
			i = max(0, min(i, n))
			*l = append(*l, nil)
			copy((*l)[i+1:], (*l)[i:])
			(*l)[i] = va.Args[1].Interface()
			return nil, nil
		}),
		"pop": listMethodArgs("pop", 0, 1, func(l *[]any, va *exec.VarArgs) (any, error) {
			n := len(*l)
			i := n - 1
			if len(va.Args) == 1 {
				i = va.Args[0].Integer()
				if i < 0 {
					i += n
				}
			}
			if i < 0 || i >= n {
				return nil, errors.New("pop index out of range")
			}
			v := (*l)[i]
			*l = append((*l)[:i], (*l)[i+1:]...)
			return raw(v), nil
		}),
		"remove": listMethodArgs("remove", 1, 1, func(l *[]any, va *exec.VarArgs) (any, error) {
			for i, e := range *l {
				if pyEqual(e, va.Args[0]) {
					*l = append((*l)[:i], (*l)[i+1:]...)
					return nil, nil
				}
			}
			return nil, errors.New("list.remove(x): x not in list")
		}),
		"index": listMethodArgs("index", 1, 1, func(l *[]any, va *exec.VarArgs) (any, error) {
			for i, e := range *l {
				if pyEqual(e, va.Args[0]) {
					return i, nil
				}
			}
			return nil, fmt.Errorf("%s is not in list", pyRepr(va.Args[0]))
		}),
		"count": listMethodArgs("count", 1, 1, func(l *[]any, va *exec.VarArgs) (any, error) {
			n := 0
			for _, e := range *l {
				if pyEqual(e, va.Args[0]) {
					n++
				}
			}
			return n, nil
		}),
		"reverse": func(_ []any, sv *exec.Value, va *exec.VarArgs) (any, error) {
			l, err := selfList(sv)
			if err != nil {
				return nil, err
			}
			for i, j := 0, len(*l)-1; i < j; i, j = i+1, j-1 {
				(*l)[i], (*l)[j] = (*l)[j], (*l)[i]
			}
			return nil, nil
		},
		"sort": func(_ []any, sv *exec.Value, va *exec.VarArgs) (any, error) {
			l, err := selfList(sv)
			if err != nil {
				return nil, err
			}
			reverse := va.GetKeywordArgument("reverse", false).IsTrue()
			var cmpErr error
			sort.SliceStable(*l, func(i, j int) bool {
				c, err := pyCompare((*l)[i], (*l)[j])
				if err != nil && cmpErr == nil {
					cmpErr = err
				}
				if reverse {
					return c > 0
				}
				return c < 0
			})
			return nil, cmpErr
		},
		"copy": func(_ []any, sv *exec.Value, va *exec.VarArgs) (any, error) {
			items, _ := listItems(sv)
			return newList(append([]any(nil), items...)), nil
		},
		"clear": func(_ []any, sv *exec.Value, va *exec.VarArgs) (any, error) {
			l, err := selfList(sv)
			if err != nil {
				return nil, err
			}
			*l = (*l)[:0]
			return nil, nil
		},
	})
}

// gonjaStrMethodNames are the str methods gsalt takes from gonja as they are.
func gonjaStrMethodNames() []string {
	return []string{
		"capitalize", "capwords", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find",
		"format", "format_map", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "islower", "isnumeric",
		"isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip", "partition",
		"removeprefix", "removesuffix", "rfind", "rjust", "rpartition", "rsplit", "rstrip", "split",
		"splitlines", "startswith", "strip", "swapcase", "title", "upper", "zfill",
	}
}

// strMethods returns gonja's str methods with Python's replace (count is
// optional) and index/rindex added.
func strMethods() *exec.MethodSet[string] {
	m := map[string]exec.Method[string]{}
	for _, name := range gonjaStrMethodNames() {
		if fn, ok := builtins.Methods.Str.Get(name); ok {
			m[name] = fn
		}
	}
	m["replace"] = func(self string, _ *exec.Value, va *exec.VarArgs) (any, error) {
		if err := argCount(va, "replace", 2, 3); err != nil {
			return nil, err
		}
		n := -1
		if len(va.Args) == 3 {
			n = va.Args[2].Integer()
			if n < 0 {
				n = -1
			}
		}
		return strings.Replace(self, pyStr(va.Args[0]), pyStr(va.Args[1]), n), nil
	}
	split := func(right bool) exec.Method[string] {
		return func(self string, _ *exec.Value, va *exec.VarArgs) (any, error) {
			sep := arg(va, 0, "sep", nil)
			maxsplit := arg(va, 1, "maxsplit", -1).Integer()
			var parts []string
			if sep.IsNil() {
				parts = splitWhitespace(self, maxsplit, right)
			} else {
				s := pyStr(sep)
				if s == "" {
					return nil, errors.New("empty separator")
				}
				switch {
				case maxsplit < 0:
					parts = strings.Split(self, s)
				case !right:
					parts = strings.SplitN(self, s, maxsplit+1)
				default:
					parts = rsplitN(self, s, maxsplit)
				}
			}
			out := make([]any, len(parts))
			for i, p := range parts {
				out[i] = p
			}
			return newList(out), nil
		}
	}
	m["split"] = split(false)
	m["rsplit"] = split(true)
	m["index"] = func(self string, _ *exec.Value, va *exec.VarArgs) (any, error) {
		if err := argCount(va, "index", 1, 1); err != nil {
			return nil, err
		}
		i := strings.Index(self, pyStr(va.Args[0]))
		if i < 0 {
			return nil, errors.New("substring not found")
		}
		return utf8.RuneCountInString(self[:i]), nil
	}
	return exec.NewMethodSet(m)
}

// splitWhitespace is Python's str.split() without a separator.
func splitWhitespace(s string, maxsplit int, right bool) []string {
	fields := strings.Fields(s)
	if maxsplit < 0 || len(fields) <= maxsplit+1 {
		return fields
	}
	if !right {
		// keep the rest of the string after maxsplit fields, left-trimmed
		rest := s
		out := make([]string, 0, maxsplit+1)
		for i := 0; i < maxsplit; i++ {
			rest = strings.TrimLeft(rest, " \t\n\r\v\f")
			end := strings.IndexAny(rest, " \t\n\r\v\f")
			out = append(out, rest[:end])
			rest = rest[end:]
		}
		return append(out, strings.TrimLeft(rest, " \t\n\r\v\f"))
	}
	rest := s
	var out []string
	for i := 0; i < maxsplit; i++ {
		rest = strings.TrimRight(rest, " \t\n\r\v\f")
		start := strings.LastIndexAny(rest, " \t\n\r\v\f")
		out = append([]string{rest[start+1:]}, out...)
		rest = rest[:start+1]
	}
	return append([]string{strings.TrimRight(rest, " \t\n\r\v\f")}, out...)
}

// rsplitN splits from the right at most n times.
func rsplitN(s, sep string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		j := strings.LastIndex(s, sep)
		if j < 0 {
			break
		}
		out = append([]string{s[j+len(sep):]}, out...)
		s = s[:j]
	}
	return append([]string{s}, out...)
}

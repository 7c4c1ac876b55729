package jinja

import (
	"fmt"
	"math/big"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// boundMethod is a Python method bound to its receiver (d.items, s.split).
type boundMethod struct {
	recv any
	name string
	fn   func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error)
}

// Call calls the method.
func (b *boundMethod) Call(r *Runtime, args []any, kw *payload.Map) (any, error) {
	return b.fn(r, b.recv, args, kw)
}

// String is the method's repr.
func (b *boundMethod) String() string {
	return fmt.Sprintf("<built-in method %s of %s object at %p>", b.name, TypeName(b.recv), b)
}

// DictView is what dict.keys(), values() and items() return.
type DictView struct {
	Kind  string // "keys", "values", "items"
	Items []any
}

// Iter returns the view's items.
func (d *DictView) Iter() ([]any, error) { return d.Items, nil }

// String is the view's repr, dict_keys([...]).
func (d *DictView) String() string {
	var b strings.Builder
	b.WriteString("dict_" + d.Kind + "(")
	writeSeq(&b, "[", "]", d.Items, 0, false)
	b.WriteString(")")
	return b.String()
}

type methodFn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error)

// Arg returns argument i (or the keyword name), def when absent.
func Arg(args []any, kw *payload.Map, i int, name string, def any) any {
	if i < len(args) {
		return args[i]
	}
	if kw != nil && name != "" {
		if v, ok := kw.Get(name); ok {
			return v
		}
	}
	return def
}

func nargs(name string, args []any, kw *payload.Map, min, max int) error {
	n := len(args)
	if kw != nil {
		n += kw.Len()
	}
	if n < min || (max >= 0 && n > max) {
		if max == 0 {
			return typeErr("%s() takes no arguments (%d given)", name, n)
		}
		if min == max {
			return typeErr("%s() takes exactly one argument (%d given)", name, n)
		}
		if n < min {
			return typeErr("%s expected at least %d argument, got %d", name, min, n)
		}
		return typeErr("%s expected at most %d arguments, got %d", name, max, n)
	}
	return nil
}

func strArg(v any, method string) (string, error) {
	s, ok := demote(v).(string)
	if !ok {
		if err := strictCheck(v); err != nil {
			return "", err
		}
		return "", typeErr("must be str, not %s", TypeName(v))
	}
	return s, nil
}

func methodFor(obj any, name string) any {
	var fn methodFn
	switch obj := obj.(type) {
	case Markup:
		return markupMethod(obj, name)
	case string:
		if base := strMethods[name]; base != nil {
			// a str method reads Markup arguments as the str they are
			fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
				return base(r, recv, demoteAll(args), demoteKw(kw))
			}
		}
	case []byte:
		fn = bytesMethods[name]
	case *List:
		fn = listMethods[name]
	case Tuple:
		fn = tupleMethods[name]
	case *rangeVal:
		fn = rangeMethods[name]
	case *payload.Map:
		fn = dictMethods[name]
	}
	if fn == nil {
		return nil
	}
	return &boundMethod{recv: obj, name: name, fn: fn}
}

// numAttr is a number's data attribute: real, imag, numerator and
// denominator of an int (or bool), real and imag of a float.
func numAttr(obj any, name string) (any, bool) {
	switch x := obj.(type) {
	case bool:
		n := int64(0)
		if x {
			n = 1
		}
		return numAttr(n, name)
	case int64, *big.Int:
		switch name {
		case "real", "numerator":
			return x, true
		case "imag":
			return int64(0), true
		case "denominator":
			return int64(1), true
		}
	case float64:
		switch name {
		case "real":
			return x, true
		case "imag":
			return 0.0, true
		}
	}
	return nil, false
}

func strList(parts []string) *List {
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return &List{Items: out}
}

func isPySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func splitWS(s string, maxsplit int, right bool) []string {
	fields := strings.FieldsFunc(s, isPySpace)
	if maxsplit < 0 || len(fields) <= maxsplit+1 {
		return fields
	}
	if !right {
		rest := s
		out := make([]string, 0, maxsplit+1)
		for i := 0; i < maxsplit; i++ {
			rest = strings.TrimLeftFunc(rest, isPySpace)
			end := strings.IndexFunc(rest, isPySpace)
			out = append(out, rest[:end])
			rest = rest[end:]
		}
		return append(out, strings.TrimLeftFunc(rest, isPySpace))
	}
	rest := s
	var out []string
	for i := 0; i < maxsplit; i++ {
		rest = strings.TrimRightFunc(rest, isPySpace)
		start := strings.LastIndexFunc(rest, isPySpace)
		_, sz := utf8.DecodeRuneInString(rest[start:])
		out = append([]string{rest[start+sz:]}, out...)
		rest = rest[:start+sz]
	}
	return append([]string{strings.TrimRightFunc(rest, isPySpace)}, out...)
}

func splitMethod(right bool) methodFn {
	return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		s := recv.(string)
		sep := Arg(args, kw, 0, "sep", nil)
		ms, ok := asInt(Arg(args, kw, 1, "maxsplit", int64(-1)))
		if !ok {
			return nil, typeErr("'%s' object cannot be interpreted as an integer", TypeName(Arg(args, kw, 1, "maxsplit", nil)))
		}
		maxsplit := int(ms)
		if sep == nil {
			return strList(splitWS(s, maxsplit, right)), nil
		}
		sp, err := strArg(sep, "split")
		if err != nil {
			return nil, err
		}
		if sp == "" {
			return nil, valueErr("empty separator")
		}
		switch {
		case maxsplit < 0:
			return strList(strings.Split(s, sp)), nil
		case !right:
			return strList(strings.SplitN(s, sp, maxsplit+1)), nil
		}
		var out []string
		for i := 0; i < maxsplit; i++ {
			j := strings.LastIndex(s, sp)
			if j < 0 {
				break
			}
			out = append([]string{s[j+len(sp):]}, out...)
			s = s[:j]
		}
		return strList(append([]string{s}, out...)), nil
	}
}

func stripMethod(left, right bool) methodFn {
	return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		s := recv.(string)
		chars := Arg(args, kw, 0, "chars", nil)
		if chars == nil {
			if left {
				s = strings.TrimLeftFunc(s, isPySpace)
			}
			if right {
				s = strings.TrimRightFunc(s, isPySpace)
			}
			return s, nil
		}
		c, err := strArg(chars, "strip")
		if err != nil {
			return nil, err
		}
		if left {
			s = strings.TrimLeft(s, c)
		}
		if right {
			s = strings.TrimRight(s, c)
		}
		return s, nil
	}
}

// subRange converts optional start/end args to a substring range.
func subRange(s string, args []any, from int) (string, int, error) {
	rs := []rune(s)
	n := len(rs)
	sv := &sliceVal{start: Arg(args, nil, from, "", nil), stop: Arg(args, nil, from+1, "", nil)}
	start, stop, _, err := sliceIndices(sv, n)
	if err != nil {
		return "", 0, err
	}
	if start > stop {
		return "", -1, nil
	}
	return string(rs[start:stop]), start, nil
}

func findMethod(rev, raise bool) methodFn {
	return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		if err := nargs("find", args, kw, 1, 3); err != nil {
			return nil, err
		}
		sub, err := strArg(args[0], "find")
		if err != nil {
			return nil, err
		}
		s, off, err := subRange(recv.(string), args, 1)
		if err != nil {
			return nil, err
		}
		i := -1
		if off >= 0 {
			if rev {
				i = strings.LastIndex(s, sub)
			} else {
				i = strings.Index(s, sub)
			}
		}
		if i < 0 {
			if raise {
				return nil, valueErr("substring not found")
			}
			return int64(-1), nil
		}
		return int64(off + utf8.RuneCountInString(s[:i])), nil
	}
}

func affixMethod(prefix bool) methodFn {
	return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		if err := nargs(map[bool]string{true: "startswith", false: "endswith"}[prefix], args, kw, 1, 3); err != nil {
			return nil, err
		}
		s, off, err := subRange(recv.(string), args, 1)
		if err != nil {
			return nil, err
		}
		var cands []any
		switch a := args[0].(type) {
		case string:
			cands = []any{a}
		case Tuple:
			cands = a
		default:
			name := map[bool]string{true: "startswith", false: "endswith"}[prefix]
			return nil, typeErr("%s first arg must be str or a tuple of str, not %s", name, TypeName(args[0]))
		}
		if off < 0 {
			return false, nil
		}
		for _, c := range cands {
			cs, ok := c.(string)
			if !ok {
				return nil, typeErr("tuple for startswith must only contain str, not %s", TypeName(c))
			}
			if (prefix && strings.HasPrefix(s, cs)) || (!prefix && strings.HasSuffix(s, cs)) {
				return true, nil
			}
		}
		return false, nil
	}
}

func strPred(fn func(string) bool) methodFn {
	return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		return fn(recv.(string)), nil
	}
}

func allRunes(s string, fn func(rune) bool) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !fn(c) {
			return false
		}
	}
	return true
}

// pyUpper and pyLower are Python's str.upper() and str.lower() (full
// Unicode case mapping: "ß".upper() is "SS").
func pyUpper(s string) string {
	if isASCII(s) {
		return strings.ToUpper(s)
	}
	return cases.Upper(language.Und).String(s)
}

func pyLower(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return cases.Lower(language.Und).String(s)
}

func pyCapitalize(s string) string {
	if s == "" {
		return s
	}
	r, sz := utf8.DecodeRuneInString(s)
	return string(unicode.ToTitle(r)) + strings.ToLower(s[sz:])
}

func padMethod(kind byte) methodFn {
	return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		s := recv.(string)
		w, ok := asInt(Arg(args, kw, 0, "width", nil))
		if !ok {
			return nil, typeErr("integer argument expected")
		}
		fill := " "
		if f := Arg(args, kw, 1, "fillchar", nil); f != nil {
			fs, ok := f.(string)
			if !ok || utf8.RuneCountInString(fs) != 1 {
				return nil, typeErr("The fill character must be exactly one character long")
			}
			fill = fs
		}
		return pad(s, int(w), fill, kind), nil
	}
}

func pad(s string, w int, fill string, kind byte) string {
	n := utf8.RuneCountInString(s)
	if w <= n {
		return s
	}
	p := w - n
	switch kind {
	case 'l':
		return s + strings.Repeat(fill, p)
	case 'r':
		return strings.Repeat(fill, p) + s
	}
	// Python's center: extra goes left when p and w are odd
	left := p/2 + (p & w & 1)
	return strings.Repeat(fill, left) + s + strings.Repeat(fill, p-left)
}

var strMethods map[string]methodFn

// noArgMethod is a method of kind ("str", "bytes") taking no arguments,
// whose result is fn of the receiver.
func noArgMethod[T any](kind, name string, fn func(T) any) methodFn {
	return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		if err := nargs(kind+"."+name, args, kw, 0, 0); err != nil {
			return nil, err
		}
		return fn(recv.(T)), nil
	}
}

func init() {
	simple := func(name string, fn func(string) string) methodFn {
		return noArgMethod("str", name, func(s string) any { return fn(s) })
	}
	strMethods = map[string]methodFn{
		"upper":      simple("upper", pyUpper),
		"lower":      simple("lower", pyLower),
		"casefold":   simple("casefold", pyLower),
		"title":      simple("title", py.Title),
		"capitalize": simple("capitalize", pyCapitalize),
		"swapcase": simple("swapcase", func(s string) string {
			return strings.Map(func(c rune) rune {
				if unicode.IsUpper(c) {
					return unicode.ToLower(c)
				}
				return unicode.ToUpper(c)
			}, s)
		}),
		"translate": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("translate", args, kw, []string{"table"}, Required)
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for _, c := range recv.(string) {
				var to any
				found := false
				switch t := a[0].(type) {
				case *payload.Map:
					to, found = mapGet(t, int64(c))
				default:
					// any other table is indexed as table[ord(c)]; a
					// LookupError keeps the character
					v, err := r.GetItem(a[0], int64(c))
					if err != nil {
						return nil, err
					}
					if _, undef := v.(*Undefined); !undef {
						to, found = v, true
					}
				}
				switch x := to.(type) {
				case nil:
					if !found {
						b.WriteRune(c)
					}
				case string:
					b.WriteString(x)
				case int64:
					if x < 0 || x > 0x10ffff {
						return nil, valueErr("character mapping must be in range(0x110000)")
					}
					b.WriteRune(rune(x))
				default:
					return nil, typeErr("character mapping must return integer, None or str")
				}
			}
			return b.String(), nil
		},
		"split":      splitMethod(false),
		"rsplit":     splitMethod(true),
		"strip":      stripMethod(true, true),
		"lstrip":     stripMethod(true, false),
		"rstrip":     stripMethod(false, true),
		"find":       findMethod(false, false),
		"rfind":      findMethod(true, false),
		"index":      findMethod(false, true),
		"rindex":     findMethod(true, true),
		"startswith": affixMethod(true),
		"endswith":   affixMethod(false),
		"ljust":      padMethod('l'),
		"rjust":      padMethod('r'),
		"center":     padMethod('c'),
		"isdigit":    strPred(func(s string) bool { return allRunes(s, unicode.IsDigit) }),
		"isdecimal":  strPred(func(s string) bool { return allRunes(s, unicode.IsDigit) }),
		"isnumeric":  strPred(func(s string) bool { return allRunes(s, unicode.IsNumber) }),
		"isalpha":    strPred(func(s string) bool { return allRunes(s, unicode.IsLetter) }),
		"isalnum": strPred(func(s string) bool {
			return allRunes(s, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsNumber(c) })
		}),
		"isspace": strPred(func(s string) bool { return allRunes(s, isPySpace) }),
		"isascii": strPred(isASCII),
		"islower": strPred(func(s string) bool {
			return strings.ToUpper(s) != s && strings.ToLower(s) == s
		}),
		"isupper": strPred(func(s string) bool {
			return strings.ToLower(s) != s && strings.ToUpper(s) == s
		}),
		"istitle": strPred(func(s string) bool { return s != "" && py.Title(s) == s && strings.ToLower(s) != s }),
		"isidentifier": strPred(func(s string) bool {
			if s == "" {
				return false
			}
			for i, c := range s {
				if !(c == '_' || unicode.IsLetter(c) || (i > 0 && unicode.IsDigit(c))) {
					return false
				}
			}
			return true
		}),
		"isprintable": strPred(func(s string) bool {
			for _, c := range s {
				if !unicode.IsPrint(c) {
					return false
				}
			}
			return true
		}),
		"replace": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("replace", args, kw, 2, 3); err != nil {
				return nil, err
			}
			old, err := strArg(args[0], "replace")
			if err != nil {
				return nil, err
			}
			nw, err := strArg(args[1], "replace")
			if err != nil {
				return nil, err
			}
			n := int64(-1)
			if len(args) > 2 {
				var ok bool
				if n, ok = asInt(args[2]); !ok {
					return nil, typeErr("'%s' object cannot be interpreted as an integer", TypeName(args[2]))
				}
			}
			if n < 0 {
				n = -1
			}
			return strings.Replace(recv.(string), old, nw, int(n)), nil
		},
		"join": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("join", args, kw, 1, 1); err != nil {
				return nil, err
			}
			items, err := Iterate(args[0])
			if err != nil {
				return nil, typeErr("can only join an iterable")
			}
			parts := make([]string, len(items))
			for i, it := range items {
				s, ok := demote(it).(string)
				if !ok {
					return nil, typeErr("sequence item %d: expected str instance, %s found", i, TypeName(it))
				}
				parts[i] = s
			}
			return strings.Join(parts, recv.(string)), nil
		},
		"count": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("count", args, kw, 1, 3); err != nil {
				return nil, err
			}
			sub, err := strArg(args[0], "count")
			if err != nil {
				return nil, err
			}
			s, off, err := subRange(recv.(string), args, 1)
			if err != nil || off < 0 {
				return int64(0), err
			}
			if sub == "" {
				return int64(utf8.RuneCountInString(s) + 1), nil
			}
			return int64(strings.Count(s, sub)), nil
		},
		"splitlines": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			return strList(py.SplitLines(recv.(string), truthy(Arg(args, kw, 0, "keepends", false)))), nil
		},
		"format": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			return StrFormat(recv.(string), args, kw)
		},
		"format_map": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("format_map", args, kw, 1, 1); err != nil {
				return nil, err
			}
			m, ok := args[0].(*payload.Map)
			if !ok {
				return nil, typeErr("'%s' object is not a mapping", TypeName(args[0]))
			}
			return StrFormat(recv.(string), nil, m)
		},
		"zfill": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			w, ok := asInt(Arg(args, kw, 0, "", nil))
			if !ok {
				return nil, typeErr("integer argument expected")
			}
			s := recv.(string)
			n := utf8.RuneCountInString(s)
			if int(w) <= n {
				return s, nil
			}
			sign := ""
			if s != "" && (s[0] == '-' || s[0] == '+') {
				sign, s = s[:1], s[1:]
			}
			return sign + strings.Repeat("0", int(w)-n) + s, nil
		},
		"partition": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			sep, err := strArg(Arg(args, kw, 0, "", nil), "partition")
			if err != nil {
				return nil, err
			}
			if sep == "" {
				return nil, valueErr("empty separator")
			}
			a, b, ok := strings.Cut(recv.(string), sep)
			if !ok {
				return Tuple{recv, "", ""}, nil
			}
			return Tuple{a, sep, b}, nil
		},
		"rpartition": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			sep, err := strArg(Arg(args, kw, 0, "", nil), "rpartition")
			if err != nil {
				return nil, err
			}
			if sep == "" {
				return nil, valueErr("empty separator")
			}
			s := recv.(string)
			i := strings.LastIndex(s, sep)
			if i < 0 {
				return Tuple{"", "", s}, nil
			}
			return Tuple{s[:i], sep, s[i+len(sep):]}, nil
		},
		"removeprefix": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			p, err := strArg(Arg(args, kw, 0, "", nil), "removeprefix")
			return strings.TrimPrefix(recv.(string), p), err
		},
		"removesuffix": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			p, err := strArg(Arg(args, kw, 0, "", nil), "removesuffix")
			return strings.TrimSuffix(recv.(string), p), err
		},
		"expandtabs": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			ts, _ := asInt(Arg(args, kw, 0, "tabsize", int64(8)))
			var b strings.Builder
			col := 0
			for _, c := range recv.(string) {
				switch c {
				case '\t':
					if ts > 0 {
						n := int(ts) - col%int(ts)
						b.WriteString(strings.Repeat(" ", n))
						col += n
					}
				case '\n', '\r':
					b.WriteRune(c)
					col = 0
				default:
					b.WriteRune(c)
					col++
				}
			}
			return b.String(), nil
		},
		"encode": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			return []byte(recv.(string)), nil
		},
	}
}

var tupleMethods = map[string]methodFn{
	"index": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		return seqIndex(recv.(Tuple), args, "tuple.index(x): x not in tuple")
	},
	"count": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		return seqCount(recv.(Tuple), args)
	},
}

// rangeMethods are range's count and index (the sandbox's range holds
// at most 100,000 numbers, so they iterate).
var rangeMethods = map[string]methodFn{
	"index": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		items, err := recv.(*rangeVal).Iter()
		if err != nil {
			return nil, err
		}
		i, err := seqIndex(items, args, "range")
		if je, ok := err.(*Error); ok && je.Kind == "ValueError" {
			return nil, valueErr("%s is not in range", Repr(args[0]))
		}
		return i, err
	},
	"count": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
		items, err := recv.(*rangeVal).Iter()
		if err != nil {
			return nil, err
		}
		return seqCount(items, args)
	},
}

func seqIndex(items []any, args []any, msg string) (any, error) {
	if len(args) < 1 {
		return nil, typeErr("index expected at least 1 argument, got 0")
	}
	for i, it := range items {
		eq, err := eqStrict(it, args[0])
		if err != nil {
			return nil, err
		}
		if eq {
			return int64(i), nil
		}
	}
	if strings.HasPrefix(msg, "list") {
		return nil, valueErr("%s is not in list", Repr(args[0]))
	}
	return nil, valueErr("%s", msg)
}

func seqCount(items []any, args []any) (any, error) {
	if len(args) != 1 {
		return nil, typeErr("count() takes exactly one argument (%d given)", len(args))
	}
	n := int64(0)
	for _, it := range items {
		eq, err := eqStrict(it, args[0])
		if err != nil {
			return nil, err
		}
		if eq {
			n++
		}
	}
	return n, nil
}

var listMethods map[string]methodFn

func init() {
	listMethods = map[string]methodFn{
		"append": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("list.append", args, kw, 1, 1); err != nil {
				return nil, err
			}
			l := recv.(*List)
			l.Items = append(l.Items, args[0])
			return nil, nil
		},
		"extend": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("list.extend", args, kw, 1, 1); err != nil {
				return nil, err
			}
			items, err := Iterate(args[0])
			if err != nil {
				return nil, err
			}
			l := recv.(*List)
			l.Items = append(l.Items, items...)
			return nil, nil
		},
		"insert": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if len(args) != 2 {
				return nil, typeErr("insert expected 2 arguments, got %d", len(args))
			}
			i, ok := asInt(args[0])
			if !ok {
				return nil, typeErr("'%s' object cannot be interpreted as an integer", TypeName(args[0]))
			}
			l := recv.(*List)
			n := int64(len(l.Items))
			if i < 0 {
				i += n
				if i < 0 {
					i = 0
				}
			}
			if i > n {
				i = n
			}
			l.Items = append(l.Items[:i], append([]any{args[1]}, l.Items[i:]...)...)
			return nil, nil
		},
		"pop": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			l := recv.(*List)
			i := int64(-1)
			if len(args) > 0 {
				var ok bool
				if i, ok = asInt(args[0]); !ok {
					return nil, typeErr("'%s' object cannot be interpreted as an integer", TypeName(args[0]))
				}
			}
			if len(l.Items) == 0 {
				return nil, &Error{Kind: "IndexError", Msg: "pop from empty list"}
			}
			j, ok := pyIndex(int(clampInt(i)), len(l.Items))
			if !ok {
				return nil, &Error{Kind: "IndexError", Msg: "pop index out of range"}
			}
			v := l.Items[j]
			l.Items = append(l.Items[:j], l.Items[j+1:]...)
			return v, nil
		},
		"remove": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("list.remove", args, kw, 1, 1); err != nil {
				return nil, err
			}
			l := recv.(*List)
			for i, it := range l.Items {
				eq, err := eqStrict(it, args[0])
				if err != nil {
					return nil, err
				}
				if eq {
					l.Items = append(l.Items[:i], l.Items[i+1:]...)
					return nil, nil
				}
			}
			return nil, valueErr("list.remove(x): x not in list")
		},
		"index": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			return seqIndex(recv.(*List).Items, args, "list")
		},
		"count": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			return seqCount(recv.(*List).Items, args)
		},
		"reverse": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			l := recv.(*List)
			for i, j := 0, len(l.Items)-1; i < j; i, j = i+1, j-1 {
				l.Items[i], l.Items[j] = l.Items[j], l.Items[i]
			}
			return nil, nil
		},
		"sort": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			l := recv.(*List)
			rev := kw != nil && truthy(Arg(nil, kw, 0, "reverse", false))
			var key any
			if kw != nil {
				key, _ = kw.Get("key")
			}
			keys := l.Items
			if key != nil {
				keys = make([]any, len(l.Items))
				for i, it := range l.Items {
					k, err := r.Call(key, []any{it}, nil)
					if err != nil {
						return nil, err
					}
					keys[i] = k
				}
			}
			sorted, err := sortByKeys(l.Items, keys, rev)
			if err != nil {
				return nil, err
			}
			l.Items = sorted
			return nil, nil
		},
		"copy": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			return &List{Items: append([]any(nil), recv.(*List).Items...)}, nil
		},
		"clear": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			recv.(*List).Items = nil
			return nil, nil
		},
	}
}

// sortByKeys sorts items stably by keys with Python's <.
func sortByKeys(items, keys []any, reverse bool) ([]any, error) {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	var err error
	sort.SliceStable(idx, func(a, b int) bool {
		if err != nil {
			return false
		}
		x, y := keys[idx[a]], keys[idx[b]]
		if reverse {
			x, y = y, x
		}
		c, e := Compare(x, y, "<")
		if e != nil {
			err = e
			return false
		}
		return c == -1
	})
	if err != nil {
		return nil, err
	}
	out := make([]any, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out, nil
}

var dictMethods map[string]methodFn

func init() {
	view := func(kind string) methodFn {
		return func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("dict."+kind, args, kw, 0, 0); err != nil {
				return nil, err
			}
			m := recv.(*payload.Map)
			out := make([]any, 0, m.Len())
			for _, it := range m.Items() {
				switch kind {
				case "keys":
					out = append(out, it.Key)
				case "values":
					out = append(out, it.Value)
				default:
					out = append(out, Tuple{it.Key, it.Value})
				}
			}
			return &DictView{Kind: kind, Items: out}, nil
		}
	}
	dictMethods = map[string]methodFn{
		"keys":   view("keys"),
		"values": view("values"),
		"items":  view("items"),
		"get": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if len(args) < 1 || len(args) > 2 || kw != nil {
				return nil, typeErr("get expected at most 2 arguments, got %d", len(args))
			}
			if err := hashable(args[0]); err != nil {
				return nil, err
			}
			if v, ok := mapGet(recv.(*payload.Map), args[0]); ok {
				return v, nil
			}
			return Arg(args, nil, 1, "", nil), nil
		},
		// dict.fromkeys(iterable, value=None): a new dict (a classmethod,
		// callable on any dict)
		"fromkeys": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if kw != nil && kw.Len() > 0 {
				return nil, typeErr("dict.fromkeys() takes no keyword arguments")
			}
			if len(args) < 1 || len(args) > 2 {
				return nil, typeErr("fromkeys expected at least 1 argument, got %d", len(args))
			}
			keys, err := Iterate(args[0])
			if err != nil {
				return nil, err
			}
			v := Arg(args, nil, 1, "", nil)
			out := payload.NewMap()
			for _, k := range keys {
				if err := hashable(k); err != nil {
					return nil, err
				}
				mapSet(out, k, v)
			}
			return out, nil
		},
		"setdefault": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if len(args) < 1 || len(args) > 2 {
				return nil, typeErr("setdefault expected at most 2 arguments, got %d", len(args))
			}
			if err := hashable(args[0]); err != nil {
				return nil, err
			}
			m := recv.(*payload.Map)
			if v, ok := mapGet(m, args[0]); ok {
				return v, nil
			}
			v := Arg(args, nil, 1, "", nil)
			mapSet(m, args[0], v)
			return v, nil
		},
		"pop": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if len(args) < 1 || len(args) > 2 {
				return nil, typeErr("pop expected at most 2 arguments, got %d", len(args))
			}
			m := recv.(*payload.Map)
			if v, ok := mapGet(m, args[0]); ok {
				deleteKey(m, args[0])
				return v, nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return nil, &Error{Kind: "KeyError", Msg: Repr(args[0])}
		},
		"popitem": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			m := recv.(*payload.Map)
			items := m.Items()
			if len(items) == 0 {
				return nil, &Error{Kind: "KeyError", Msg: "'popitem(): dictionary is empty'"}
			}
			last := items[len(items)-1]
			deleteKey(m, last.Key)
			return Tuple{last.Key, last.Value}, nil
		},
		"update": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			m := recv.(*payload.Map)
			if len(args) > 1 {
				return nil, typeErr("update expected at most 1 argument, got %d", len(args))
			}
			if len(args) == 1 {
				if err := updateFrom(m, args[0]); err != nil {
					return nil, err
				}
			}
			if kw != nil {
				for _, it := range kw.Items() {
					mapSet(m, it.Key, it.Value)
				}
			}
			return nil, nil
		},
		"copy": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			return recv.(*payload.Map).Clone(), nil
		},
		"clear": func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			m := recv.(*payload.Map)
			*m = payload.Map{}
			return nil, nil
		},
	}
}

func deleteKey(m *payload.Map, k any) {
	items := m.Items()
	n := &payload.Map{}
	for _, it := range items {
		if Equal(it.Key, k) {
			continue
		}
		n.SetKey(it.Key, it.Value)
	}
	*m = *n
}

// updateFrom is dict.update(other): a dict or an iterable of pairs.
func updateFrom(m *payload.Map, other any) error {
	if o, ok := other.(*payload.Map); ok {
		for _, it := range o.Items() {
			mapSet(m, it.Key, it.Value)
		}
		return nil
	}
	if err := strictCheck(other); err != nil {
		return err
	}
	items, err := Iterate(other)
	if err != nil {
		return err
	}
	for i, it := range items {
		pair, err := Iterate(it)
		if err != nil {
			return typeErr("cannot convert dictionary update sequence element #%d to a sequence", i)
		}
		if len(pair) != 2 {
			return valueErr("dictionary update sequence element #%d has length %d; 2 is required", i, len(pair))
		}
		if err := hashable(pair[0]); err != nil {
			return err
		}
		mapSet(m, pair[0], pair[1])
	}
	return nil
}

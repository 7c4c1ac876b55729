package jinja

import (
	"fmt"
	"html"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// missing marks a required parameter in Bind.
var missing = &struct{ x int }{}

// Bind matches a call's arguments to named parameters with defaults
// (Required for a parameter without one), as Python does for a filter's
// signature.
func Bind(fname string, args []any, kw *payload.Map, params []string, defaults ...any) ([]any, error) {
	out := make([]any, len(params))
	if len(args) > len(params) {
		return nil, typeErr("%s() takes %d positional arguments but %d were given", fname, len(params)+1, len(args)+1)
	}
	set := make([]bool, len(params))
	for i, a := range args {
		out[i], set[i] = a, true
	}
	if kw != nil {
		for _, it := range kw.Items() {
			k := it.Key.(string)
			found := false
			for i, p := range params {
				if p == k {
					if set[i] {
						return nil, typeErr("%s() got multiple values for argument %s", fname, pyStrRepr(k))
					}
					out[i], set[i], found = it.Value, true, true
				}
			}
			if !found {
				return nil, typeErr("%s() got an unexpected keyword argument %s", fname, pyStrRepr(k))
			}
		}
	}
	for i := range params {
		if set[i] {
			continue
		}
		if i < len(defaults) && defaults[i] != Required {
			out[i] = defaults[i]
			continue
		}
		return nil, typeErr("%s() missing 1 required positional argument: %s", fname, pyStrRepr(params[i]))
	}
	return out, nil
}

// Required marks a parameter without default in Bind.
var Required any = missing

func softStr(v any) (string, error) { return Str(v) }

func builtinFilters() map[string]FilterFunc {
	f := map[string]FilterFunc{
		"abs": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			k, i, b, fl := numOf(v)
			switch k {
			case nkInt:
				if _, isBool := v.(bool); isBool {
					return i, nil
				}
				if i < 0 {
					return UnaryOp("-", i)
				}
				return i, nil
			case nkBig:
				return normBig(new(big.Int).Abs(b)), nil
			case nkFloat:
				return math.Abs(fl), nil
			}
			return nil, typeErr("bad operand type for abs(): '%s'", TypeName(v))
		},
		"attr": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_attr", args, kw, []string{"name"}, Required)
			if err != nil {
				return nil, err
			}
			name, _ := a[0].(string)
			if err := undefCheck(v); err != nil {
				return nil, err
			}
			if m := methodFor(v, name); m != nil {
				return m, nil
			}
			if at, ok := v.(Attrs); ok {
				if x, ok := at.GetAttr(name); ok {
					return x, nil
				}
			}
			return &Undefined{Name: name, Obj: v, HasObj: true, Strict: !r.env.opts.Lenient}, nil
		},
		"batch": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_batch", args, kw, []string{"linecount", "fill_with"}, Required, nil)
			if err != nil {
				return nil, err
			}
			n, ok := asInt(a[0])
			if !ok || n <= 0 {
				return nil, typeErr("linecount must be a positive integer")
			}
			items, err := Iterate(v)
			if err != nil {
				return nil, err
			}
			var out []any
			var cur []any
			for _, it := range items {
				if int64(len(cur)) == n {
					out = append(out, &List{Items: cur})
					cur = nil
				}
				cur = append(cur, it)
			}
			if len(cur) > 0 {
				if a[1] != nil {
					for int64(len(cur)) < n {
						cur = append(cur, a[1])
					}
				}
				out = append(out, &List{Items: cur})
			}
			return &List{Items: out}, nil
		},
		"capitalize": markupStrFilter(pyCapitalize),
		"center": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_center", args, kw, []string{"width"}, int64(80))
			if err != nil {
				return nil, err
			}
			s, err := softStr(v)
			if err != nil {
				return nil, err
			}
			w, _ := asInt(a[0])
			return keepMarkup(v, pad(s, int(w), " ", 'c')), nil
		},
		"default":        filterDefault,
		"d":              filterDefault,
		"dictsort":       filterDictsort,
		"escape":         filterEscape,
		"e":              filterEscape,
		"forceescape":    filterForceescape,
		"filesizeformat": filterFilesize,
		"first": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if g, ok := v.(*Generator); ok {
				// next(iter(seq)) takes one item
				item, ok, err := g.Next()
				if err != nil {
					return nil, err
				}
				if !ok {
					return r.undefinedHint("No first item, sequence was empty."), nil
				}
				return item, nil
			}
			items, err := Iterate(v)
			if err != nil {
				return nil, err
			}
			if len(items) == 0 {
				return r.undefinedHint("No first item, sequence was empty."), nil
			}
			return items[0], nil
		},
		"last": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			// next(iter(reversed(seq))): a dict gives its last key;
			// iterators and sets are not reversible
			switch x := v.(type) {
			case *Generator:
				return nil, &Error{Kind: "TypeError", Msg: fmt.Sprintf("'%s' object is not reversible", x.Type)}
			case *Set:
				return nil, &Error{Kind: "TypeError", Msg: fmt.Sprintf("'%s' object is not reversible", TypeName(x))}
			}
			items, err := Iterate(v)
			if err != nil {
				return nil, err
			}
			if len(items) == 0 {
				return r.undefinedHint("No last item, sequence was empty."), nil
			}
			if _, ok := v.(Markup); ok {
				// reversed() indexes the Markup: its items are Markup
				return Markup(items[len(items)-1].(string)), nil
			}
			return items[len(items)-1], nil
		},
		"float": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_float", args, kw, []string{"default"}, 0.0)
			if err != nil {
				return nil, err
			}
			if err := undefCheck(v); err != nil {
				return nil, err
			}
			if f, ok := toPyFloat(v); ok {
				return f, nil
			}
			return a[0], nil
		},
		"int": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_int", args, kw, []string{"default", "base"}, int64(0), int64(10))
			if err != nil {
				return nil, err
			}
			if err := undefCheck(v); err != nil {
				return nil, err
			}
			base, _ := asInt(a[1])
			if x, ok := toPyInt(v, int(base)); ok {
				return x, nil
			}
			return a[0], nil
		},
		"format": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if len(args) > 0 && kw != nil && kw.Len() > 0 {
				return nil, &Error{Kind: "FilterArgumentError", Msg: "can't handle positional and keyword arguments at the same time"}
			}
			var fargs any = Tuple(args)
			if kw != nil && kw.Len() > 0 {
				fargs = kw
			}
			if m, ok := v.(Markup); ok {
				// Markup % args escapes the arguments
				out, err := percentFormat(string(m), fargs, true)
				return Markup(out), err
			}
			s, err := softStr(v)
			if err != nil {
				return nil, err
			}
			return PercentFormat(s, fargs)
		},
		"groupby": filterGroupby,
		"indent":  filterIndent,
		"items": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if u, ok := v.(*Undefined); ok {
				_ = u
				return &List{}, nil
			}
			m, ok := v.(*payload.Map)
			if !ok {
				return nil, typeErr("Can only get item pairs from a mapping.")
			}
			out := make([]any, 0, m.Len())
			for _, it := range m.Items() {
				out = append(out, Tuple{it.Key, it.Value})
			}
			return &List{Items: out}, nil
		},
		"join": filterJoin,
		"length": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			n, err := Len(v)
			return int64(n), err
		},
		"list": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			items, err := Iterate(v)
			return &List{Items: append([]any(nil), items...)}, err
		},
		"lower": markupStrFilter(pyLower),
		"upper": markupStrFilter(pyUpper),
		"map":   filterMap,
		"max":   minMax(1),
		"min":   minMax(-1),
		"pprint": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			return Pformat(v), nil
		},
		"random": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			// random.choice(seq): seq[randbelow(len(seq))]
			switch x := v.(type) {
			case *payload.Map:
				if x.Len() == 0 {
					return r.undefinedHint("No random item, sequence was empty."), nil
				}
				i := int64(randIntn(x.Len()))
				if val, ok := mapGet(x, i); ok {
					return val, nil
				}
				return nil, &Error{Kind: "KeyError", Msg: Repr(i)}
			case *Set, *DictView:
				if _, err := Len(v); err != nil {
					return nil, err
				}
				return nil, typeErr("'%s' object is not subscriptable", TypeName(v))
			}
			items, err := Iterate(v)
			if err != nil {
				return nil, err
			}
			if len(items) == 0 {
				return r.undefinedHint("No random item, sequence was empty."), nil
			}
			if _, ok := v.(Markup); ok {
				// seq[i] of a Markup is Markup
				return Markup(items[randIntn(len(items))].(string)), nil
			}
			return items[randIntn(len(items))], nil
		},
		"reject":     selectFilter(false, false),
		"rejectattr": selectFilter(false, true),
		"select":     selectFilter(true, false),
		"selectattr": selectFilter(true, true),
		"replace": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_replace", args, kw, []string{"old", "new", "count"}, Required, Required, nil)
			if err != nil {
				return nil, err
			}
			n := -1
			if a[2] != nil {
				c, _ := asInt(a[2])
				n = int(c)
			}
			_, oldM := a[0].(Markup)
			_, newM := a[1].(Markup)
			_, sM := v.(Markup)
			if r.autoescape && (oldM || newM || sM) {
				// do_replace under autoescape: a plain value is escaped
				// when old or new is Markup; Markup.replace escapes old
				// and new
				var m Markup
				if oldM || (newM && !sM) {
					if m, err = Escape(v); err != nil {
						return nil, err
					}
				} else {
					m = v.(Markup)
				}
				old, err := Escape(a[0])
				if err != nil {
					return nil, err
				}
				nw, err := Escape(a[1])
				if err != nil {
					return nil, err
				}
				return Markup(strings.Replace(string(m), string(old), string(nw), n)), nil
			}
			s, err := softStr(v)
			if err != nil {
				return nil, err
			}
			old, err := softStr(a[0])
			if err != nil {
				return nil, err
			}
			nw, err := softStr(a[1])
			if err != nil {
				return nil, err
			}
			return strings.Replace(s, old, nw, n), nil
		},
		"reverse": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if m, ok := v.(Markup); ok {
				// value[::-1] of a Markup is Markup
				rs := []rune(string(m))
				for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
					rs[i], rs[j] = rs[j], rs[i]
				}
				return Markup(rs), nil
			}
			if s, ok := v.(string); ok {
				rs := []rune(s)
				for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
					rs[i], rs[j] = rs[j], rs[i]
				}
				return string(rs), nil
			}
			if u, ok := v.(*Undefined); ok && u.Strict {
				return nil, u.err()
			}
			// reversed(value) where Python has it, else a reversed list
			typ := ""
			switch x := v.(type) {
			case *List, []any:
				typ = "list_reverseiterator"
			case Tuple, *Undefined:
				typ = "reversed"
			case *payload.Map:
				typ = "dict_reversekeyiterator"
			case *rangeVal:
				typ = "range_iterator"
			case *DictView:
				typ = "dict_reverse" + strings.TrimSuffix(x.Kind, "s") + "iterator"
			}
			items, err := Iterate(v)
			if err != nil {
				// only Python's TypeError becomes the filter's error; an
				// undefined variable met while iterating (a lazy select
				// over it) raises as itself, as in Jinja2's do_reverse
				if je, ok := err.(*Error); ok && je.Kind != "TypeError" {
					return nil, err
				}
				return nil, &Error{Kind: "FilterArgumentError", Msg: "argument must be iterable"}
			}
			out := make([]any, len(items))
			for i, it := range items {
				out[len(items)-1-i] = it
			}
			if typ != "" {
				return NewIterator("", typ, out, nil), nil
			}
			return &List{Items: out}, nil
		},
		"round": filterRound,
		"safe": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if m, ok := v.(Markup); ok {
				return m, nil
			}
			s, err := Str(v)
			if err != nil {
				return nil, err
			}
			return Markup(s), nil
		},
		"slice": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_slice", args, kw, []string{"slices", "fill_with"}, Required, nil)
			if err != nil {
				return nil, err
			}
			n64, ok := asInt(a[0])
			if !ok || n64 <= 0 {
				return nil, typeErr("slices must be a positive integer")
			}
			items, err := Iterate(v)
			if err != nil {
				return nil, err
			}
			n := int(n64)
			per, extra := len(items)/n, len(items)%n
			var out []any
			for i := 0; i < n; i++ {
				start := i*per + min(i, extra)
				end := start + per
				if i < extra {
					end++
				}
				part := append([]any(nil), items[start:end]...)
				if a[1] != nil && extra > 0 && i >= extra {
					part = append(part, a[1])
				}
				out = append(out, &List{Items: part})
			}
			return &List{Items: out}, nil
		},
		"sort": filterSort,
		"string": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			// soft_str keeps a Markup value
			if m, ok := v.(Markup); ok {
				return m, nil
			}
			return softStr(v)
		},
		"striptags": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			s, err := softStr(v)
			if err != nil {
				return nil, err
			}
			s = reComment.ReplaceAllString(s, "")
			s = reTag.ReplaceAllString(s, "")
			return html.UnescapeString(strings.Join(strings.Fields(s), " ")), nil
		},
		"sum": filterSum,
		"title": strFilter(func(s string) string {
			parts := reWordBegin.Split(s, -1)
			seps := reWordBegin.FindAllString(s, -1)
			var b strings.Builder
			for i, p := range parts {
				if p != "" {
					r, sz := utf8.DecodeRuneInString(p)
					b.WriteString(strings.ToUpper(string(r)) + strings.ToLower(p[sz:]))
				}
				if i < len(seps) {
					b.WriteString(seps[i])
				}
			}
			return b.String()
		}),
		"tojson": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_tojson", args, kw, []string{"indent"}, nil)
			if err != nil {
				return nil, err
			}
			if err := JSONSerializable(v, 0); err != nil {
				return nil, err
			}
			o := pyfmt.JSONOptions{SortKeys: SortItems, EnsureASCII: true, Indent: -1}
			if a[0] != nil {
				n, _ := asInt(a[0])
				o.Indent = int(n)
			}
			s, err := pyfmt.JSON(Export(v), o)
			if err != nil {
				return nil, typeErr("%s", err.Error())
			}
			s = strings.NewReplacer("<", "\\u003c", ">", "\\u003e", "&", "\\u0026", "'", "\\u0027").Replace(s)
			return s, nil
		},
		"trim": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_trim", args, kw, []string{"chars"}, nil)
			if err != nil {
				return nil, err
			}
			s, err := softStr(v)
			if err != nil {
				return nil, err
			}
			out, err := stripMethod(true, true)(r, s, []any{demote(a[0])}, nil)
			if str, ok := out.(string); ok && err == nil {
				return keepMarkup(v, str), nil
			}
			return out, err
		},
		"truncate": filterTruncate,
		"unique":   filterUnique,
		"urlencode": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if m, ok := v.(*payload.Map); ok {
				var parts []string
				for _, it := range m.Items() {
					ks, _ := Str(it.Key)
					vs, _ := Str(it.Value)
					parts = append(parts, urlQuote(ks, true)+"="+urlQuote(vs, true))
				}
				return strings.Join(parts, "&"), nil
			}
			if m, ok := v.(Markup); ok {
				// a str subclass: url_quote(value)
				v = string(m)
			}
			if _, ok := v.(string); !ok {
				if items, err := Iterate(v); err == nil {
					var parts []string
					for _, it := range items {
						pair, err := Iterate(it)
						if err != nil || len(pair) != 2 {
							return nil, valueErr("too many values to unpack")
						}
						ks, _ := Str(pair[0])
						vs, _ := Str(pair[1])
						parts = append(parts, urlQuote(ks, true)+"="+urlQuote(vs, true))
					}
					return strings.Join(parts, "&"), nil
				}
			}
			s, err := softStr(v)
			if err != nil {
				return nil, err
			}
			return urlQuote(s, false), nil
		},
		"wordcount": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			s, err := softStr(v)
			if err != nil {
				return nil, err
			}
			return int64(len(reWord.FindAllString(s, -1))), nil
		},
		"wordwrap": filterWordwrap,
		"urlize":   filterUrlize,
		"xmlattr": func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("do_xmlattr", args, kw, []string{"autospace"}, true)
			if err != nil {
				return nil, err
			}
			m, ok := v.(*payload.Map)
			if !ok {
				if err := undefCheck(v); err != nil {
					return nil, err
				}
				return nil, &Error{Kind: "AttributeError", Msg: fmt.Sprintf("'%s' object has no attribute 'items'", TypeName(v))}
			}
			var parts []string
			for _, it := range m.Items() {
				if it.Value == nil {
					continue
				}
				if _, u := it.Value.(*Undefined); u {
					continue
				}
				// _attr_key_re.search(key): a str key, no ASCII whitespace, '/', '>' or '='
				var k string
				switch x := it.Key.(type) {
				case string:
					k = x
				case Markup:
					k = string(x)
				default:
					return nil, typeErr("expected string or bytes-like object, got '%s'", TypeName(it.Key))
				}
				if strings.ContainsAny(k, " \t\n\r\f\v/>=") {
					return nil, valueErr("Invalid character in attribute name: %s", pyStrRepr(k))
				}
				vs, err := Str(it.Value)
				if err != nil {
					return nil, err
				}
				parts = append(parts, htmlEscape(k)+"=\""+htmlEscape(vs)+"\"")
			}
			s := strings.Join(parts, " ")
			if truthy(a[0]) && s != "" {
				s = " " + s
			}
			return s, nil
		},
	}
	f["count"] = f["length"]
	// Jinja2's generator filters return generator objects.
	for name, gen := range map[string]string{
		"batch": "do_batch", "items": "do_items", "map": "sync_do_map", "slice": "sync_do_slice",
		"select": "select_or_reject", "reject": "select_or_reject", "selectattr": "select_or_reject", "rejectattr": "select_or_reject",
	} {
		perItem := name == "map" || strings.HasPrefix(name, "select") || strings.HasPrefix(name, "reject")
		f[name] = generatorFilter(gen, f[name], perItem)
	}
	f["batch"] = lazyBatch(f["batch"])
	return f
}

// lazyBatch is do_batch over a one-shot iterator read as Python's
// generator reads it: a batch is handed out when the item after it has
// been taken (that item then starts the next batch), so a reader that
// stops early leaves the rest of the source unread. Other inputs and
// invalid arguments go through fn.
func lazyBatch(fn FilterFunc) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		src, ok := v.(*Generator)
		if !ok {
			return fn(r, v, args, kw)
		}
		a, err := Bind("do_batch", args, kw, []string{"linecount", "fill_with"}, Required, nil)
		if err != nil {
			return fn(r, v, args, kw)
		}
		n, ok := asInt(a[0])
		if !ok || n <= 0 {
			return fn(r, v, args, kw)
		}
		var tmp []any
		done := false
		return &Generator{Type: "generator", Func: "do_batch", pull: func() (any, bool, error) {
			for !done {
				item, ok, err := src.Next()
				if err != nil {
					done = true
					return nil, false, err
				}
				if !ok {
					done = true
					break
				}
				if int64(len(tmp)) == n {
					out := &List{Items: tmp}
					tmp = []any{item}
					return out, true, nil
				}
				tmp = append(tmp, item)
			}
			if len(tmp) == 0 {
				return nil, false, nil
			}
			if a[1] != nil {
				for int64(len(tmp)) < n {
					tmp = append(tmp, a[1])
				}
			}
			out := &List{Items: tmp}
			tmp = nil
			return out, true, nil
		}}, nil
	}
}

var (
	reComment   = regexp.MustCompile(`(?s)<!--.*?-->`)
	reTag       = regexp.MustCompile(`(?s)<[^>]*>`)
	reWordBegin = regexp.MustCompile(`[-\s({\[<]+`)
	reWord      = regexp.MustCompile(`[\p{L}\p{N}_]+`)
)

func strFilter(fn func(string) string) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		s, err := softStr(v)
		if err != nil {
			return nil, err
		}
		return fn(s), nil
	}
}

// markupStrFilter is strFilter for the filters that call the str method
// on soft_str(value): a Markup value gives Markup.
func markupStrFilter(fn func(string) string) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		s, err := softStr(v)
		if err != nil {
			return nil, err
		}
		return keepMarkup(v, fn(s)), nil
	}
}

// keepMarkup is s as Markup when the filter's value v was Markup.
func keepMarkup(v any, s string) any {
	if _, ok := v.(Markup); ok {
		return Markup(s)
	}
	return s
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&#34;", "'", "&#39;").Replace(s)
}

// filterEscape is markupsafe.escape (the escape and e filters): a Markup
// value is returned as it is.
func filterEscape(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	return Escape(v)
}

// filterForceescape escapes a Markup value's text too.
func filterForceescape(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	return Escape(demote(v))
}

func filterDefault(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_default", args, kw, []string{"default_value", "boolean"}, "", false)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(*Undefined); ok {
		return a[0], nil
	}
	if truthy(a[1]) && !truthy(v) {
		return a[0], nil
	}
	return v, nil
}

func ignoreCase(v any) any {
	if s, ok := demote(v).(string); ok {
		return strings.ToLower(s)
	}
	return v
}

func filterDictsort(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_dictsort", args, kw, []string{"case_sensitive", "by", "reverse"}, false, "key", false)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*payload.Map)
	if !ok {
		if err := undefCheck(v); err != nil {
			return nil, err
		}
		return nil, &Error{Kind: "AttributeError", Msg: fmt.Sprintf("'%s' object has no attribute 'items'", TypeName(v))}
	}
	pos := 0
	switch a[1] {
	case "key":
	case "value":
		pos = 1
	default:
		return nil, &Error{Kind: "FilterArgumentError", Msg: "You can only sort by either \"key\" or \"value\""}
	}
	items := make([]any, 0, m.Len())
	keys := make([]any, 0, m.Len())
	for _, it := range m.Items() {
		items = append(items, Tuple{it.Key, it.Value})
		k := []any{it.Key, it.Value}[pos]
		if !truthy(a[0]) {
			k = ignoreCase(k)
		}
		keys = append(keys, k)
	}
	out, err := sortByKeys(items, keys, truthy(a[2]))
	return &List{Items: out}, err
}

func filterFilesize(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_filesizeformat", args, kw, []string{"binary"}, false)
	if err != nil {
		return nil, err
	}
	if u, ok := v.(*Undefined); ok {
		return nil, u.err()
	}
	bytes, ok := toPyFloat(v)
	if !ok {
		return nil, valueErr("could not convert string to float: %s", Repr(v))
	}
	base := 1000.0
	prefixes := []string{"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"}
	if truthy(a[0]) {
		base = 1024
		prefixes = []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
	}
	if bytes == 1 {
		return "1 Byte", nil
	}
	if bytes < base {
		return fmt.Sprintf("%d Bytes", int64(bytes)), nil
	}
	unit := 0.0
	for i, p := range prefixes {
		unit = math.Pow(base, float64(i+2))
		if bytes < unit {
			return formatFloat(base*bytes/unit, 'f', 1, false) + " " + p, nil
		}
	}
	return formatFloat(base*bytes/unit, 'f', 1, false) + " " + prefixes[len(prefixes)-1], nil
}

// toPyFloat is Python's float(v) for numbers and numeric strings.
func toPyFloat(v any) (float64, bool) {
	k, i, b, f := numOf(v)
	if k != nkNone {
		return toFloat(k, i, b, f), true
	}
	s, ok := demote(v).(string)
	if !ok {
		return 0, false
	}
	s = strings.TrimSpace(strings.ReplaceAll(s, "_", ""))
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity", "nan":
		x, err := strconv.ParseFloat(s, 64)
		return x, err == nil
	}
	if strings.ContainsAny(s, "xXpP") {
		return 0, false
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, false
	}
	return x, true
}

// toPyInt is Jinja2's int filter conversion: int(s, base), else
// int(float(s)).
func toPyInt(v any, base int) (any, bool) {
	if s, ok := demote(v).(string); ok {
		t := strings.TrimSpace(s)
		neg := false
		body := t
		if strings.HasPrefix(body, "-") || strings.HasPrefix(body, "+") {
			neg = body[0] == '-'
			body = body[1:]
		}
		lb := strings.ToLower(body)
		b := base
		if base == 16 && strings.HasPrefix(lb, "0x") || base == 8 && strings.HasPrefix(lb, "0o") || base == 2 && strings.HasPrefix(lb, "0b") {
			body = body[2:]
		} else if base == 0 {
			switch {
			case strings.HasPrefix(lb, "0x"):
				b, body = 16, body[2:]
			case strings.HasPrefix(lb, "0o"):
				b, body = 8, body[2:]
			case strings.HasPrefix(lb, "0b"):
				b, body = 2, body[2:]
			default:
				b = 10
			}
		}
		if body != "" && !strings.HasPrefix(body, "_") && !strings.HasSuffix(body, "_") && !strings.Contains(body, "__") {
			if x, ok := new(big.Int).SetString(strings.ReplaceAll(body, "_", ""), b); ok {
				if neg {
					x.Neg(x)
				}
				return normBig(x), true
			}
		}
		f, ok := toPyFloat(s)
		if !ok || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		x, _ := new(big.Float).SetFloat64(math.Trunc(f)).Int(nil)
		return normBig(x), true
	}
	k, i, b, f := numOf(v)
	switch k {
	case nkInt:
		return i, true
	case nkBig:
		return b, true
	case nkFloat:
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		x, _ := new(big.Float).SetFloat64(math.Trunc(f)).Int(nil)
		return normBig(x), true
	}
	return nil, false
}

// attrGetter is Jinja2's make_attrgetter: "a.b.0" looked up with getitem.
func (r *Runtime) attrGetter(attr any, def any, post func(any) any) func(any) (any, error) {
	var parts []any
	if s, ok := attr.(string); ok {
		for _, p := range strings.Split(s, ".") {
			if n, err := strconv.Atoi(p); err == nil {
				parts = append(parts, int64(n))
			} else {
				parts = append(parts, p)
			}
		}
	} else if attr != nil {
		parts = []any{attr}
	}
	return func(item any) (any, error) {
		v := item
		for _, p := range parts {
			var err error
			if v, err = r.GetItem(v, p); err != nil {
				return nil, err
			}
			// Jinja2 substitutes the default after each part
			if _, ok := v.(*Undefined); ok && def != nil {
				v = def
			}
		}
		if post != nil {
			v = post(v)
		}
		return v, nil
	}
}

func filterGroupby(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_groupby", args, kw, []string{"attribute", "default", "case_sensitive"}, Required, nil, false)
	if err != nil {
		return nil, err
	}
	var post func(any) any
	if !truthy(a[2]) {
		post = ignoreCase
	}
	get := r.attrGetter(a[0], a[1], post)
	items, err := Iterate(v)
	if err != nil {
		return nil, err
	}
	keys := make([]any, len(items))
	for i, it := range items {
		if keys[i], err = get(it); err != nil {
			return nil, err
		}
	}
	sorted, err := sortByKeys(items, keys, false)
	if err != nil {
		return nil, err
	}
	var out []any
	var cur *GroupTuple
	var curKey any
	for _, it := range sorted {
		k, _ := get(it)
		if cur == nil || !Equal(curKey, k) {
			curKey = k
			cur = &GroupTuple{Grouper: k, List: &List{}}
			if !truthy(a[2]) {
				// the grouper is the first item's original value
				orig, _ := r.attrGetter(a[0], a[1], nil)(it)
				cur.Grouper = orig
			}
			out = append(out, cur)
		}
		cur.List.Items = append(cur.List.Items, it)
	}
	return &List{Items: out}, nil
}

// GroupTuple is an item of the groupby filter's result.
type GroupTuple struct {
	Grouper any
	List    *List
}

// GetAttr returns grouper or list.
func (g *GroupTuple) GetAttr(name string) (any, bool) {
	switch name {
	case "grouper":
		return g.Grouper, true
	case "list":
		return g.List, true
	}
	return nil, false
}

// Iter makes (grouper, list) unpackable.
func (g *GroupTuple) Iter() ([]any, error) { return []any{g.Grouper, g.List}, nil }

// GetItem indexes the pair.
func (g *GroupTuple) GetItem(k any) (any, bool) {
	i, ok := asInt(k)
	if !ok {
		return nil, false
	}
	if j, ok := pyIndex(int(i), 2); ok {
		return []any{g.Grouper, g.List}[j], true
	}
	return nil, false
}

// String is the group's repr: Jinja2 shows it as a plain tuple.
func (g *GroupTuple) String() string { return Repr(Tuple{g.Grouper, g.List}) }

func filterIndent(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_indent", args, kw, []string{"width", "first", "blank"}, int64(4), false, false)
	if err != nil {
		return nil, err
	}
	if err := undefCheck(v); err != nil {
		return nil, err
	}
	// Jinja2 does s += "\n" then s.splitlines() on the value itself
	s, isStr := demote(v).(string)
	if !isStr {
		switch v.(type) {
		case *List, []any:
			return nil, &Error{Kind: "AttributeError", Msg: "'list' object has no attribute 'splitlines'"}
		case Tuple:
			return nil, typeErr("can only concatenate tuple (not \"str\") to tuple")
		}
		return nil, typeErr("unsupported operand type(s) for +=: '%s' and 'str'", TypeName(v))
	}
	var ind string
	if w, ok := a[0].(string); ok {
		ind = w
	} else {
		n, _ := asInt(a[0])
		ind = strings.Repeat(" ", int(max(n, 0)))
	}
	// Jinja2: s += "\n"; then splitlines() and join
	lines := py.SplitLines(s+"\n", false)
	var rv string
	if truthy(a[2]) {
		rv = strings.Join(lines, "\n"+ind)
	} else {
		rv = lines[0]
		if len(lines) > 1 {
			rest := make([]string, len(lines)-1)
			for i, l := range lines[1:] {
				if l != "" {
					l = ind + l
				}
				rest[i] = l
			}
			rv += "\n" + strings.Join(rest, "\n")
		}
	}
	if truthy(a[1]) {
		rv = ind + rv
	}
	return keepMarkup(v, rv), nil
}

func filterJoin(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_join", args, kw, []string{"d", "attribute"}, "", nil)
	if err != nil {
		return nil, err
	}
	items, err := Iterate(v)
	if err != nil {
		return nil, err
	}
	if a[1] != nil {
		get := r.attrGetter(a[1], nil, nil)
		for i, it := range items {
			if items[i], err = get(it); err != nil {
				return nil, err
			}
		}
	}
	if r.autoescape {
		// do_join under autoescape: once the separator or an item is
		// Markup, the others are escaped and the result is Markup
		isM := false
		if _, ok := a[0].(Markup); ok {
			isM = true
		}
		for _, it := range items {
			if _, ok := it.(Markup); ok {
				isM = true
			}
		}
		if isM {
			sep, err := Escape(a[0])
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(items))
			for i, it := range items {
				m, err := Escape(it)
				if err != nil {
					return nil, err
				}
				parts[i] = string(m)
			}
			return Markup(strings.Join(parts, string(sep))), nil
		}
	}
	sep, err := softStr(a[0])
	if err != nil {
		return nil, err
	}
	parts := make([]string, len(items))
	for i, it := range items {
		if parts[i], err = softStr(it); err != nil {
			return nil, err
		}
	}
	return strings.Join(parts, sep), nil
}

func filterMap(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	// sync_do_map: `if value:` before anything else, so a false value
	// (None, 0, '') maps nothing and its arguments are not looked at
	if t, err := Truthy(v); err != nil || !t {
		return &List{}, err
	}
	items, err := Iterate(v)
	if err != nil {
		return nil, err
	}
	var fn func(any) (any, error)
	if len(args) == 0 && kw != nil && kw.Has("attribute") {
		attr, _ := kw.Get("attribute")
		def, _ := kw.Get("default")
		for _, k := range kw.Keys() {
			if k != "attribute" && k != "default" {
				return nil, &Error{Kind: "FilterArgumentError", Msg: fmt.Sprintf("Unexpected keyword argument %s", pyStrRepr(k))}
			}
		}
		fn = r.attrGetter(attr, def, nil)
	} else {
		if len(args) == 0 {
			return nil, &Error{Kind: "FilterArgumentError", Msg: "map requires a filter argument"}
		}
		name, _ := args[0].(string)
		flt := r.env.Filters[name]
		if flt == nil {
			return nil, &Error{Kind: "TemplateRuntimeError", Msg: fmt.Sprintf("No filter named %s.", pyStrRepr(name))}
		}
		rest := args[1:]
		fn = func(x any) (any, error) { return flt(r, x, rest, kw) }
	}
	out := make([]any, len(items))
	for i, it := range items {
		x, err := fn(it)
		if err != nil {
			return nil, err
		}
		out[i] = importShallow(x)
	}
	return &List{Items: out}, nil
}

func minMax(sign int) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		a, err := Bind(map[int]string{1: "do_max", -1: "do_min"}[sign], args, kw, []string{"case_sensitive", "attribute"}, false, nil)
		if err != nil {
			return nil, err
		}
		items, err := Iterate(v)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return r.undefinedHint("No aggregated item, sequence was empty."), nil
		}
		var post func(any) any
		if !truthy(a[0]) {
			post = ignoreCase
		}
		get := r.attrGetter(a[1], nil, post)
		best := items[0]
		bk, err := get(best)
		if err != nil {
			return nil, err
		}
		for _, it := range items[1:] {
			k, err := get(it)
			if err != nil {
				return nil, err
			}
			c, err := Compare(k, bk, map[int]string{1: ">", -1: "<"}[sign])
			if err != nil {
				return nil, err
			}
			if c == sign {
				best, bk = it, k
			}
		}
		return best, nil
	}
}

func selectFilter(keep, byAttr bool) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		// select_or_reject: `if value:` before anything else, so a false
		// value (0, '', None) selects nothing, even when not iterable
		if t, err := Truthy(v); err != nil || !t {
			return &List{}, err
		}
		items, err := Iterate(v)
		if err != nil {
			return nil, err
		}
		get := func(x any) (any, error) { return x, nil }
		if byAttr {
			if len(args) == 0 {
				return nil, &Error{Kind: "FilterArgumentError", Msg: "Missing parameter for attribute name"}
			}
			get = r.attrGetter(args[0], nil, nil)
			args = args[1:]
		}
		var test func(any) (bool, error)
		if len(args) == 0 {
			test = Truthy
		} else {
			name, _ := args[0].(string)
			tf := r.env.Tests[name]
			if tf == nil {
				return nil, &Error{Kind: "TemplateRuntimeError", Msg: fmt.Sprintf("No test named %s.", pyStrRepr(name))}
			}
			rest := args[1:]
			test = func(x any) (bool, error) { return tf(r, x, rest, kw) }
		}
		var out []any
		for _, it := range items {
			x, err := get(it)
			if err != nil {
				return nil, err
			}
			ok, err := test(x)
			if err != nil {
				return nil, err
			}
			if ok == keep {
				out = append(out, it)
			}
		}
		return &List{Items: out}, nil
	}
}

func filterRound(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_round", args, kw, []string{"precision", "method"}, int64(0), "common")
	if err != nil {
		return nil, err
	}
	method, _ := a[1].(string)
	if method != "common" && method != "ceil" && method != "floor" {
		return nil, &Error{Kind: "FilterArgumentError", Msg: "method must be common, ceil or floor"}
	}
	prec, _ := asInt(a[0])
	if u, ok := v.(*Undefined); ok && method != "common" {
		// value * 10**precision fails on any undefined value
		return nil, u.err()
	}
	k, i, b, f := numOf(v)
	if k == nkNone {
		return nil, typeErr("type %s doesn't define __round__ method", TypeName(v))
	}
	if method == "common" {
		if k != nkFloat {
			if prec >= 0 {
				if _, isBool := v.(bool); isBool {
					return i, nil
				}
				if k == nkBig {
					return b, nil
				}
				return i, nil
			}
			// negative precision on ints: round half even to 10**-prec
			p := new(big.Int).Exp(big.NewInt(10), big.NewInt(-prec), nil)
			n := toBig(k, i, b)
			q, m := new(big.Int).DivMod(n, p, new(big.Int))
			twice := new(big.Int).Mul(m, big.NewInt(2))
			c := twice.Cmp(p)
			if c > 0 || (c == 0 && q.Bit(0) == 1) {
				q.Add(q, big.NewInt(1))
			}
			return normBig(q.Mul(q, p)), nil
		}
		return pyRound(f, int(prec)), nil
	}
	x := toFloat(k, i, b, f)
	p := math.Pow(10, float64(prec))
	if method == "ceil" {
		return math.Ceil(x*p) / p, nil
	}
	return math.Floor(x*p) / p, nil
}

// pyRound is Python's round(float, ndigits): correctly rounded half-even
// on the decimal representation.
func pyRound(f float64, nd int) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) || f == 0 {
		return f
	}
	if nd > 300 {
		return f
	}
	if nd < -308 {
		return math.Copysign(0, f)
	}
	bf := new(big.Float).SetPrec(2000).SetFloat64(f)
	scale := new(big.Float).SetPrec(2000).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(nd))), nil))
	if nd >= 0 {
		bf.Mul(bf, scale)
	} else {
		bf.Quo(bf, scale)
	}
	// round half even to integer
	ip, _ := bf.Int(nil)
	frac := new(big.Float).SetPrec(2000).Sub(bf, new(big.Float).SetPrec(2000).SetInt(ip))
	half := big.NewFloat(0.5)
	fa := new(big.Float).Abs(frac)
	c := fa.Cmp(half)
	if c > 0 || (c == 0 && ip.Bit(0) == 1) {
		if frac.Sign() > 0 {
			ip.Add(ip, big.NewInt(1))
		} else {
			ip.Sub(ip, big.NewInt(1))
		}
	}
	res := new(big.Float).SetPrec(2000).SetInt(ip)
	if nd >= 0 {
		res.Quo(res, scale)
	} else {
		res.Mul(res, scale)
	}
	out, _ := res.Float64()
	if out == 0 {
		return math.Copysign(0, f)
	}
	return out
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func filterSort(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_sort", args, kw, []string{"reverse", "case_sensitive", "attribute"}, false, false, nil)
	if err != nil {
		return nil, err
	}
	items, err := Iterate(v)
	if err != nil {
		return nil, err
	}
	var post func(any) any
	if !truthy(a[1]) {
		post = ignoreCase
	}
	var getters []func(any) (any, error)
	if s, ok := a[2].(string); ok && strings.Contains(s, ",") {
		for _, p := range strings.Split(s, ",") {
			getters = append(getters, r.attrGetter(p, nil, post))
		}
	} else {
		getters = append(getters, r.attrGetter(a[2], nil, post))
	}
	// make_multi_attrgetter's key is a list of the looked-up values, so
	// two keys compare as lists: items equal by == (two equal dicts) never
	// reach <
	keys := make([]any, len(items))
	for i, it := range items {
		var t Tuple
		for _, g := range getters {
			k, err := g(it)
			if err != nil {
				return nil, err
			}
			t = append(t, k)
		}
		keys[i] = &List{Items: t}
	}
	out, err := sortByKeys(items, keys, truthy(a[0]))
	return &List{Items: out}, err
}

func filterSum(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_sum", args, kw, []string{"attribute", "start"}, nil, int64(0))
	if err != nil {
		return nil, err
	}
	items, err := Iterate(v)
	if err != nil {
		return nil, err
	}
	get := r.attrGetter(a[0], nil, nil)
	total := a[1]
	for _, it := range items {
		x, err := get(it)
		if err != nil {
			return nil, err
		}
		if total, err = BinOp("+", total, x); err != nil {
			return nil, err
		}
	}
	return total, nil
}

func filterTruncate(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_truncate", args, kw, []string{"length", "killwords", "end", "leeway"}, int64(255), false, "...", nil)
	if err != nil {
		return nil, err
	}
	s, isStr := v.(string)
	length, _ := asInt(a[0])
	end, _ := Str(a[2])
	leeway := int64(5)
	if a[3] != nil {
		leeway, _ = asInt(a[3])
	}
	elen := int64(utf8.RuneCountInString(end))
	if length < elen {
		return nil, &Error{Kind: "AssertionError", Msg: fmt.Sprintf("expected length >= %d, got %d", elen, length)}
	}
	if leeway < 0 {
		return nil, &Error{Kind: "AssertionError", Msg: fmt.Sprintf("expected leeway >= 0, got %d", leeway)}
	}
	if !isStr {
		// Jinja2 works on the value itself: len(), a slice, then + or
		// rsplit on the slice.
		n, err := Len(v)
		if err != nil {
			return nil, err
		}
		if int64(n) <= length+leeway {
			return v, nil
		}
		switch v.(type) {
		case *payload.Map:
			return nil, typeErr("unhashable type: 'slice'")
		case *List, []any, Tuple:
			if truthy(a[1]) {
				return nil, typeErr("can only concatenate %s (not \"str\") to %s", TypeName(v), TypeName(v))
			}
			return nil, &Error{Kind: "AttributeError", Msg: fmt.Sprintf("'%s' object has no attribute 'rsplit'", TypeName(v))}
		}
		if s, err = Str(v); err != nil {
			return nil, err
		}
	}
	rs := []rune(s)
	if int64(len(rs)) <= length+leeway {
		return s, nil
	}
	_, isM := v.(Markup)
	if isM {
		// a Markup slice + end escapes end
		end = htmlEscape(end)
	}
	res := string(rs[:length-elen])
	if !truthy(a[1]) {
		if i := strings.LastIndex(res, " "); i >= 0 {
			res = res[:i]
		}
	}
	return keepMarkup(v, res+end), nil
}

func filterUnique(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_unique", args, kw, []string{"case_sensitive", "attribute"}, false, nil)
	if err != nil {
		return nil, err
	}
	items, err := Iterate(v)
	if err != nil {
		return nil, err
	}
	var post func(any) any
	if !truthy(a[0]) {
		post = ignoreCase
	}
	get := r.attrGetter(a[1], nil, post)
	var seen []any
	var out []any
	for _, it := range items {
		k, err := get(it)
		if err != nil {
			return nil, err
		}
		if err := hashable(k); err != nil {
			return nil, err
		}
		if seqContains(seen, k) {
			continue
		}
		seen = append(seen, k)
		out = append(out, it)
	}
	return &List{Items: out}, nil
}

func urlQuote(s string, forQS bool) string {
	safe := "/"
	if forQS {
		safe = ""
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("_.-~", c) >= 0, strings.IndexByte(safe, c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if forQS {
		return strings.ReplaceAll(b.String(), "%20", "+")
	}
	return b.String()
}

// JSONSerializable fails as json.dumps does on a value it cannot encode
// (json knows dict, list, tuple, str, int, float, bool and None).
func JSONSerializable(v any, depth int) error {
	if depth > 200 {
		return nil
	}
	switch x := v.(type) {
	case nil, string, bool, int64, *big.Int, float64:
		return nil
	case *List:
		return jsonSerializableAll(x.Items, depth)
	case []any:
		return jsonSerializableAll(x, depth)
	case Tuple:
		return jsonSerializableAll(x, depth)
	case *GroupTuple:
		return jsonSerializableAll([]any{x.Grouper, x.List}, depth)
	case *payload.Map:
		for _, it := range x.Items() {
			// json's encoder takes str, int, float, bool and None keys
			// and checks each key before its value
			switch it.Key.(type) {
			case nil, string, Markup, bool, int64, int, *big.Int, float64:
			default:
				return typeErr("keys must be str, int, float, bool or None, not %s", TypeName(it.Key))
			}
			if err := JSONSerializable(it.Value, depth+1); err != nil {
				return err
			}
		}
		return nil
	case *Undefined, *rangeVal, *Set, *DictView, *Generator, *Macro, *Namespace, *Cycler, *LoopContext, *Class, Func, *boundMethod, []byte:
		return typeErr("Object of type %s is not JSON serializable", TypeName(v))
	}
	return nil
}

func jsonSerializableAll(items []any, depth int) error {
	for _, e := range items {
		if err := JSONSerializable(e, depth+1); err != nil {
			return err
		}
	}
	return nil
}

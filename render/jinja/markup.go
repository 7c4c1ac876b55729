package jinja

import (
	"html"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// Markup is markupsafe.Markup, the str subclass Jinja2 uses for text that
// is safe to insert into HTML: what the escape and safe filters, Salt's
// json/yaml/python filters and (under autoescape) macros and set blocks
// return. It behaves as a str everywhere, except that escaping it again
// changes nothing, it prints unescaped under autoescape, and the str
// operations markupsafe overrides (+, %, *, format, join, the case and
// padding methods, indexing) escape their str operands and give Markup.
type Markup string

// PyType names Markup's Python class.
func (Markup) PyType() (module, name string) { return "markupsafe", "Markup" }

// demote is the plain str behind a Markup value (other values unchanged):
// what Python code that only reads a str sees.
func demote(v any) any {
	if m, ok := v.(Markup); ok {
		return string(m)
	}
	return v
}

// demoteAll demotes every value of args (for callees that only read str).
func demoteAll(args []any) []any {
	var out []any
	for i, a := range args {
		if _, ok := a.(Markup); ok {
			if out == nil {
				out = append([]any(nil), args...)
			}
			out[i] = demote(a)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// demoteKw demotes the values of keyword arguments.
func demoteKw(kw *payload.Map) *payload.Map {
	if kw == nil {
		return nil
	}
	has := false
	for _, it := range kw.Items() {
		if _, ok := it.Value.(Markup); ok {
			has = true
			break
		}
	}
	if !has {
		return kw
	}
	out := payload.NewMap()
	for _, it := range kw.Items() {
		out.SetKey(it.Key, demote(it.Value))
	}
	return out
}

// Escape is markupsafe.escape: Markup stays as it is, anything else is
// converted with str() and HTML-escaped.
func Escape(v any) (Markup, error) {
	if m, ok := v.(Markup); ok {
		return m, nil
	}
	s, err := Str(v)
	if err != nil {
		return "", err
	}
	return Markup(htmlEscape(s)), nil
}

// isStrLike reports a str (or Markup) value.
func isStrLike(v any) bool {
	switch v.(type) {
	case string, Markup:
		return true
	}
	return false
}

// escapeArg is markupsafe's _escape_argspec for one value: str and
// Markup arguments are escaped, others passed as they are.
func escapeArg(v any) any {
	if isStrLike(v) {
		m, _ := Escape(v)
		return string(m)
	}
	return v
}

// markupWrapped are the str methods markupsafe wraps: their str arguments
// are escaped and their str result becomes Markup.
var markupWrapped = map[string]bool{
	"capitalize": true, "title": true, "lower": true, "upper": true, "replace": true,
	"ljust": true, "rjust": true, "lstrip": true, "rstrip": true, "center": true,
	"strip": true, "translate": true, "expandtabs": true, "swapcase": true, "zfill": true,
}

var (
	reMarkupComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	reMarkupTag     = regexp.MustCompile(`(?s)<.*?>`)
)

// markupStriptags is Markup.striptags: comments and tags removed,
// whitespace collapsed, entities unescaped.
func markupStriptags(s string) string {
	s = reMarkupComment.ReplaceAllString(s, "")
	s = reMarkupTag.ReplaceAllString(s, "")
	return html.UnescapeString(strings.Join(strings.Fields(s), " "))
}

// markupMethod returns Markup's method name bound to m, or nil.
func markupMethod(m Markup, name string) any {
	wrapList := func(v any) any {
		if l, ok := v.(*List); ok {
			for i, e := range l.Items {
				if s, ok := e.(string); ok {
					l.Items[i] = Markup(s)
				}
			}
		}
		return v
	}
	var fn methodFn
	switch {
	case markupWrapped[name]:
		base := strMethods[name]
		if base == nil {
			return nil
		}
		fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			esc := make([]any, len(args))
			for i, a := range args {
				esc[i] = escapeArg(a)
			}
			var ekw *payload.Map
			if kw != nil {
				ekw = payload.NewMap()
				for _, it := range kw.Items() {
					ekw.SetKey(it.Key, escapeArg(it.Value))
				}
			}
			v, err := base(r, string(recv.(Markup)), esc, ekw)
			if s, ok := v.(string); ok && err == nil {
				return Markup(s), nil
			}
			return v, err
		}
	case name == "split" || name == "rsplit" || name == "splitlines":
		base := strMethods[name]
		fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			v, err := base(r, string(recv.(Markup)), demoteAll(args), demoteKw(kw))
			return wrapList(v), err
		}
	case name == "partition" || name == "rpartition":
		base := strMethods[name]
		fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			esc := make([]any, len(args))
			for i, a := range args {
				esc[i] = escapeArg(a)
			}
			v, err := base(r, string(recv.(Markup)), esc, kw)
			if t, ok := v.(Tuple); ok && err == nil {
				out := make(Tuple, len(t))
				for i, e := range t {
					if s, ok := e.(string); ok {
						out[i] = Markup(s)
					} else {
						out[i] = e
					}
				}
				return out, nil
			}
			return v, err
		}
	case name == "join":
		fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("join", args, kw, 1, 1); err != nil {
				return nil, err
			}
			items, err := Iterate(Arg(args, kw, 0, "", nil))
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(items))
			for i, it := range items {
				e, err := Escape(it)
				if err != nil {
					return nil, err
				}
				parts[i] = string(e)
			}
			return Markup(strings.Join(parts, string(recv.(Markup)))), nil
		}
	case name == "format":
		fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			s, err := strFormat(string(recv.(Markup)), args, kw, true)
			return Markup(s), err
		}
	case name == "unescape":
		fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("unescape", args, kw, 0, 0); err != nil {
				return nil, err
			}
			return html.UnescapeString(string(recv.(Markup))), nil
		}
	case name == "striptags":
		fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			if err := nargs("striptags", args, kw, 0, 0); err != nil {
				return nil, err
			}
			return markupStriptags(string(recv.(Markup))), nil
		}
	default:
		base := strMethods[name]
		if base == nil {
			return nil
		}
		fn = func(r *Runtime, recv any, args []any, kw *payload.Map) (any, error) {
			return base(r, string(recv.(Markup)), demoteAll(args), demoteKw(kw))
		}
	}
	return &boundMethod{recv: m, name: name, fn: fn}
}

// markupAdd is Markup + other (or other + Markup when markupRight): the
// str operand is escaped, the result is Markup; ok is false when other is
// not a str.
func markupAdd(a, b any) (any, bool) {
	ma, aIs := a.(Markup)
	mb, bIs := b.(Markup)
	switch {
	case aIs && isStrLike(b):
		e, _ := Escape(b)
		return ma + e, true
	case bIs && isStrLike(a):
		e, _ := Escape(a)
		return e + mb, true
	}
	return nil, false
}

// markupJoin is Jinja2's markup_join (the ~ operator under autoescape):
// once an operand is Markup, the others are escaped and the result is
// Markup; otherwise plain str.
func markupJoin(vals []any) (any, error) {
	isM := false
	for _, v := range vals {
		if _, ok := v.(Markup); ok {
			isM = true
			break
		}
	}
	var b strings.Builder
	for _, v := range vals {
		if isM {
			e, err := Escape(v)
			if err != nil {
				return nil, err
			}
			b.WriteString(string(e))
			continue
		}
		s, err := Str(v)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	if isM {
		return Markup(b.String()), nil
	}
	return b.String(), nil
}

// DemoteMarkup wraps a filter written for plain values: a Markup value or
// argument reaches it as the str it is.
func DemoteMarkup(fn FilterFunc) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		return fn(r, demote(v), demoteAll(args), demoteKw(kw))
	}
}

// MarkupResult wraps a filter whose str result is Markup (Salt's json,
// yaml, python and xml serializers).
func MarkupResult(fn FilterFunc) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		out, err := fn(r, v, args, kw)
		if s, ok := out.(string); ok && err == nil {
			return Markup(s), nil
		}
		return out, err
	}
}

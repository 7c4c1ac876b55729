package render

import (
	"strings"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// saltFinalize is what Salt's SerializerExtension does with the value of
// every {{ expression }} (its finalizer, then str()): dicts become
// PrintableDicts, whose str() shows string values with repr() and other
// values with str(); lists, tuples and sets are rebuilt with their own
// class, which a tuple subclass such as groupby's _GroupTuple refuses.
func saltFinalize(v any) (string, error) {
	v, err := explore(v, 0)
	if err != nil {
		return "", err
	}
	if m, ok := v.(*payload.Map); ok {
		var b strings.Builder
		if err := printableStr(&b, m, 0); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	return jinja.Str(v)
}

// maxExploreNesting is how deeply nested lists, tuples and dicts an
// {{ expression }} may print: the finalizer's recursion meets Python's
// limit past it (measured with Salt 3006: 493 or 494 levels print, 495
// are a RecursionError; the last level depends on the template around).
const maxExploreNesting = 494

// explore is the finalizer's rebuild: containers are made again from
// their explored items (a set rebuilt from its own iteration order may
// iterate in another order, as in CPython); a tuple subclass such as
// groupby's _GroupTuple refuses it.
func explore(v any, depth int) (any, error) {
	if depth > maxExploreNesting {
		return nil, &jinja.Error{Kind: "RecursionError", Msg: "maximum recursion depth exceeded in __instancecheck__"}
	}
	each := func(items []any) ([]any, error) {
		out := make([]any, len(items))
		for i, e := range items {
			x, err := explore(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	switch x := v.(type) {
	case *jinja.GroupTuple:
		return nil, &jinja.Error{Kind: "TypeError", Msg: "_GroupTuple.__new__() missing 1 required positional argument: 'list'"}
	case *payload.Map:
		out := payload.NewMap()
		for _, it := range x.Items() {
			e, err := explore(it.Value, depth+1)
			if err != nil {
				return nil, err
			}
			out.SetKey(it.Key, e)
		}
		return out, nil
	case *jinja.List:
		items, err := each(x.Items)
		if err != nil {
			return nil, err
		}
		return jinja.NewList(items...), nil
	case []any:
		return each(x)
	case jinja.Tuple:
		items, err := each(x)
		if err != nil {
			return nil, err
		}
		return jinja.Tuple(items), nil
	case *jinja.Set:
		items, err := each(x.Items())
		if err != nil {
			return nil, err
		}
		return jinja.NewSet(items)
	}
	return v, nil
}

// printableStr writes str() of Salt's PrintableDict of m.
func printableStr(b *strings.Builder, m *payload.Map, depth int) error {
	b.WriteByte('{')
	for i, it := range m.Items() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(jinja.Repr(it.Key))
		b.WriteString(": ")
		switch x := it.Value.(type) {
		case string, jinja.Markup:
			b.WriteString(jinja.Repr(x))
		case *payload.Map:
			if depth > 200 {
				b.WriteString(jinja.Repr(x))
				continue
			}
			if err := printableStr(b, x, depth+1); err != nil {
				return err
			}
		default:
			s, err := jinja.Str(x)
			if err != nil {
				return err
			}
			b.WriteString(s)
		}
	}
	b.WriteByte('}')
	return nil
}

package render

import (
	"fmt"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// Salt's filters are written against a small view of a template value:
// value wraps an engine value (or the error a filter returns) and
// varArgs a call's arguments. Filters convert what they work on to payload
// data with fromJinja (lists []any, dicts *payload.Map) and return payload
// data, which the engine imports back.

// value is a template value seen by Salt's filters, or an error.
type value struct {
	v   any
	err error
}

// varArgs are a filter's arguments: positional, and keyword in call order.
type varArgs struct {
	Args   []*value
	KwArgs map[string]*value
}

// filterFunc is a Salt filter on the value view.
type filterFunc func(e *jinja.Runtime, in *value, va *varArgs) *value

// asValue wraps a Go value (an error becomes an error value).
func asValue(v any) *value {
	switch x := v.(type) {
	case *value:
		return x
	case error:
		return &value{err: x}
	}
	return &value{v: v}
}

func (x *value) IsError() bool { return x != nil && x.err != nil }

func (x *value) Error() string {
	if x.err != nil {
		return x.err.Error()
	}
	return ""
}

// Interface is the engine value.
func (x *value) Interface() any {
	if x == nil {
		return nil
	}
	return x.v
}

// IsTrue is Python's bool().
func (x *value) IsTrue() bool {
	if x == nil || x.err != nil {
		return false
	}
	b, _ := jinja.Truthy(x.v)
	return b
}

// IsNil reports None (or a missing value).
func (x *value) IsNil() bool { return x == nil || x.v == nil }

// IsString reports a str.
func (x *value) IsString() bool {
	_, ok := x.Interface().(string)
	return ok
}

// String is Python's str().
func (x *value) String() string { return pyStr(x) }

// Integer is int() of a number (0 for other values).
func (x *value) Integer() int {
	switch n := x.Interface().(type) {
	case int64:
		return int(n)
	case bool:
		if n {
			return 1
		}
		return 0
	case float64:
		return int(n)
	}
	return 0
}

// First is the first positional argument (None when absent).
func (va *varArgs) First() *value {
	if len(va.Args) == 0 {
		return asValue(nil)
	}
	return va.Args[0]
}

func newVarArgs(args []any, kw *payload.Map) *varArgs {
	va := &varArgs{KwArgs: map[string]*value{}}
	for _, a := range args {
		va.Args = append(va.Args, asValue(a))
	}
	if kw != nil {
		for _, it := range kw.Items() {
			va.KwArgs[payload.KeyString(it.Key)] = asValue(it.Value)
		}
	}
	return va
}

// adapt turns a Salt filter into an engine filter. A strict undefined
// input fails as it would when Salt's Python code touches it.
func adapt(fn filterFunc) jinja.FilterFunc {
	return func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
		if u, ok := v.(*jinja.Undefined); ok && u.Strict {
			return nil, &jinja.Error{Kind: "UndefinedError", Msg: u.Message()}
		}
		out := fn(r, asValue(v), newVarArgs(args, kw))
		if out.IsError() {
			return nil, out.err
		}
		return jinja.Import(out.Interface()), nil
	}
}

// fromJinja converts a template value to the payload data Salt's filters
// written in Go work on (filterExport: undefined and tuple items stay).
func fromJinja(v any) any { return exportWith(filterExport, v) }

// plainData converts a template value to plain payload data (undefined
// items None, tuples lists), for the serializers.
func plainData(v any) any { return exportWith(jinja.ExportOptions{TupleKeys: true}, v) }

func exportWith(o jinja.ExportOptions, v any) any {
	if x, ok := v.(*value); ok {
		if x == nil {
			return nil
		}
		if x.err != nil {
			return x.err.Error()
		}
		v = x.v
	}
	return o.Export(v)
}

// filterExport is how Salt's filters written in Go see their input: an
// undefined or tuple item stays the object Salt's Python code would meet
// (and returns untouched).
var filterExport = jinja.ExportOptions{Undefined: true, Tuples: true, Iterators: true, TupleKeys: true}

// toJinja converts payload data to a template value.
func toJinja(v any) any { return jinja.Import(v) }

// pyStr is Python's str() of a template value (or payload data).
func pyStr(v any) string {
	if x, ok := v.(*value); ok {
		if x == nil {
			return "None"
		}
		v = x.v
	}
	switch x := v.(type) {
	case []any:
		v = jinja.Import(x)
	}
	s, err := jinja.Str(v)
	if err != nil {
		return ""
	}
	return s
}

// pyRepr is Python's repr().
func pyRepr(v any) string {
	if x, ok := v.(*value); ok {
		v = x.Interface()
	}
	if x, ok := v.([]any); ok {
		v = jinja.Import(x)
	}
	return jinja.Repr(v)
}

// pyTypeName is Python's type(v).__name__.
func pyTypeName(v any) string { return pyfmt.TypeName(v) }

// pyTuple is a Python tuple.
type pyTuple = jinja.Tuple

// newList returns a template list.
func newList(items []any) *jinja.List {
	if items == nil {
		items = []any{}
	}
	return &jinja.List{Items: items}
}

// listItems returns the members of a list or tuple value.
func listItems(v *value) ([]any, bool) {
	switch x := v.Interface().(type) {
	case *jinja.List:
		return x.Items, true
	case jinja.Tuple:
		return x, true
	case []any:
		return x, true
	}
	return nil, false
}

// asDict returns the dict behind v, or nil.
func asDict(v *value) *payload.Map {
	m, _ := v.Interface().(*payload.Map)
	return m
}

// pyCompare orders two payload values like Python's <.
func pyCompare(a, b any) (int, error) {
	c, err := jinja.Compare(jinja.Import(a), jinja.Import(b), "<")
	if err != nil {
		return 0, err
	}
	if c == 2 {
		c = 0
	}
	return c, nil
}

func filterErr(format string, args ...any) *value {
	return asValue(fmt.Errorf(format, args...))
}

// maxConvertDepth bounds recursive conversions of template data.
const maxConvertDepth = 512

package jmespath

import (
	"fmt"
	"math"
	"math/big"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// Error is a Python exception raised by the search: Kind is its class
// (ParseError, LexerError, JMESPathTypeError, UnknownFunctionError,
// ArityError, TypeError, UndefinedError, ...), Msg its str().
type Error = jinja.Error

// Search is jmespath.search(expr, data): it compiles expr and evaluates it
// on data, a Jinja value.
func Search(expr string, data any) (any, error) {
	e, err := Compile(expr)
	if err != nil {
		return nil, err
	}
	return e.Search(data)
}

// Search evaluates the expression on data. What it returns shares the
// dicts and lists of data that the expression selects, as Python's does.
func (e *Expression) Search(data any) (any, error) {
	in := &interp{}
	return in.visit(e.root, data)
}

// exprRef is an expression reference (&expr): Python's
// jmespath.visitor._Expression.
type exprRef struct{ n *node }

// PyType names its Python class.
func (exprRef) PyType() (string, string) { return "jmespath.visitor", "_Expression" }

type interp struct{ depth int }

func undefErr(u *jinja.Undefined) error {
	kind := u.Kind
	if kind == "" {
		kind = "UndefinedError"
	}
	return &Error{Kind: kind, Msg: u.Message()}
}

func (in *interp) visit(n *node, v any) (any, error) {
	in.depth++
	defer func() { in.depth-- }()
	if in.depth > maxDepth {
		return nil, &Error{Kind: "RecursionError", Msg: "maximum recursion depth exceeded", Err: ErrDepth}
	}
	switch n.typ {
	case "subexpression", "index_expression", "pipe":
		var err error
		for _, c := range n.children {
			if v, err = in.visit(c, v); err != nil {
				return nil, err
			}
		}
		return v, nil
	case "field":
		switch x := v.(type) {
		case *payload.Map:
			r, _ := jinja.DictGet(x, n.value)
			return r, nil
		case *jinja.Undefined:
			return nil, undefErr(x) // Undefined.get raises
		}
		return nil, nil
	case "comparator":
		return in.comparator(n, v)
	case "current", "identity":
		return v, nil
	case "expref":
		return exprRef{n.children[0]}, nil
	case "function_expression":
		args := make([]any, len(n.children))
		for i, c := range n.children {
			a, err := in.visit(c, v)
			if err != nil {
				return nil, err
			}
			args[i] = a
		}
		return in.call(n.value.(string), args)
	case "filter_projection":
		l, err := in.baseList(n, v)
		if l == nil || err != nil {
			return nil, err
		}
		return in.project(n.children[1], n.children[2], append([]any(nil), l.Items...))
	case "flatten":
		l, err := in.baseList(n, v)
		if l == nil || err != nil {
			return nil, err
		}
		out := jinja.NewList()
		for _, e := range l.Items {
			if sub, ok := e.(*jinja.List); ok {
				out.Items = append(out.Items, sub.Items...)
			} else {
				out.Items = append(out.Items, e)
			}
		}
		return out, nil
	case "index":
		l, ok := v.(*jinja.List)
		if !ok {
			return nil, nil
		}
		i, ok := n.value.(int64)
		if !ok {
			return nil, nil // beyond an index-sized integer: IndexError
		}
		if i < 0 {
			i += int64(len(l.Items))
		}
		if i < 0 || i >= int64(len(l.Items)) {
			return nil, nil
		}
		return l.Items[i], nil
	case "slice":
		l, ok := v.(*jinja.List)
		if !ok {
			return nil, nil
		}
		return slice(l.Items, n.value.([]any))
	case "literal":
		return n.value, nil
	case "multi_select_dict":
		if v == nil {
			return nil, nil
		}
		out := payload.NewMap()
		for _, c := range n.children {
			r, err := in.visit(c.children[0], v)
			if err != nil {
				return nil, err
			}
			jinja.DictSet(out, c.value, r)
		}
		return out, nil
	case "multi_select_list":
		if v == nil {
			return nil, nil
		}
		out := jinja.NewList()
		for _, c := range n.children {
			r, err := in.visit(c, v)
			if err != nil {
				return nil, err
			}
			out.Items = append(out.Items, r)
		}
		return out, nil
	case "or_expression", "and_expression":
		left, err := in.visit(n.children[0], v)
		if err != nil {
			return nil, err
		}
		f, err := isFalse(left)
		if err != nil {
			return nil, err
		}
		if f == (n.typ == "and_expression") {
			return left, nil
		}
		return in.visit(n.children[1], v)
	case "not_expression":
		r, err := in.visit(n.children[0], v)
		if err != nil {
			return nil, err
		}
		if isNumber(r) {
			if z, _ := jinja.Compare(r, int64(0), "=="); z == 0 {
				return false, nil // !0 is false in JMESPath
			}
		}
		t, err := jinja.Truthy(r)
		if err != nil {
			return nil, err
		}
		return !t, nil
	case "projection", "value_projection":
		base, err := in.visit(n.children[0], v)
		if err != nil {
			return nil, err
		}
		var items []any
		switch x := base.(type) {
		case *jinja.List:
			if n.typ == "value_projection" {
				return nil, nil
			}
			items = append(items, x.Items...)
		case *payload.Map:
			if n.typ == "projection" {
				return nil, nil
			}
			for _, it := range x.Items() {
				items = append(items, it.Value)
			}
		case *jinja.Undefined:
			if n.typ == "value_projection" {
				return nil, undefErr(x) // Undefined.values raises
			}
			return nil, nil
		default:
			return nil, nil
		}
		return in.project(n.children[1], nil, items)
	}
	return nil, fmt.Errorf("jmespath: unknown node %q", n.typ)
}

// project evaluates rhs on each item for which cond (when set) is true,
// keeping the results that are not None.
func (in *interp) project(rhs, cond *node, items []any) (any, error) {
	out := jinja.NewList()
	for _, e := range items {
		if cond != nil {
			c, err := in.visit(cond, e)
			if err != nil {
				return nil, err
			}
			if f, err := isFalse(c); f || err != nil {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		r, err := in.visit(rhs, e)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out.Items = append(out.Items, r)
		}
	}
	return out, nil
}

// baseList evaluates n's first child on v: the list it is, or nil (the
// Python interpreter's isinstance(base, list) check).
func (in *interp) baseList(n *node, v any) (*jinja.List, error) {
	base, err := in.visit(n.children[0], v)
	if err != nil {
		return nil, err
	}
	l, _ := base.(*jinja.List)
	return l, nil
}

// isFalse is JMESPath's falsiness as the Python interpreter tests it:
// equal to the empty str, list or dict, or None, or False.
func isFalse(v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return true, nil
	case bool:
		return !x, nil
	case string:
		return x == "", nil
	case jinja.Markup:
		return x == "", nil
	case *jinja.List:
		return len(x.Items) == 0, nil
	case *payload.Map:
		return x.Len() == 0, nil
	case *jinja.Undefined:
		if x.Strict {
			return false, undefErr(x) // StrictUndefined.__eq__ raises
		}
	}
	return false, nil
}

// isNumber is the interpreter's _is_actual_number: int or float, not bool.
func isNumber(v any) bool {
	switch v.(type) {
	case int64, *big.Int, float64:
		return true
	}
	return false
}

func isString(v any) bool {
	switch v.(type) {
	case string, jinja.Markup:
		return true
	}
	return false
}

// equals is the interpreter's _equals: Python's ==, except that 0 and 1
// never equal a bool.
func equals(x, y any) (bool, error) {
	if isNumber(x) && isZeroOrOne(x) {
		if _, ok := y.(bool); ok {
			return false, nil
		}
	} else if isNumber(y) && isZeroOrOne(y) {
		if _, ok := x.(bool); ok {
			return false, nil
		}
	}
	return jinja.EqualStrict(x, y)
}

func isZeroOrOne(v any) bool {
	a, _ := jinja.Compare(v, int64(0), "==")
	b, _ := jinja.Compare(v, int64(1), "==")
	return a == 0 || b == 0
}

// pyCompare is Python's a op b for <, <=, > and >=.
func pyCompare(a, b any, op string) (bool, error) { return jinja.CompareOp(op, a, b) }

func (in *interp) comparator(n *node, v any) (any, error) {
	left, err := in.visit(n.children[0], v)
	if err != nil {
		return nil, err
	}
	right, err := in.visit(n.children[1], v)
	if err != nil {
		return nil, err
	}
	switch op := n.value.(string); op {
	case "eq", "ne":
		eq, err := equals(left, right)
		if err != nil {
			return nil, err
		}
		return eq == (op == "eq"), nil
	default:
		if !(isNumber(left) || isString(left)) || !(isNumber(right) || isString(right)) {
			return nil, nil
		}
		return pyCompare(left, right, map[string]string{"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}[op])
	}
}

// slice is Python's list[start:stop:step] with the parsed bounds (int64,
// *big.Int or nil).
func slice(items []any, parts []any) (any, error) {
	bound := func(v any, def int64) int64 {
		switch x := v.(type) {
		case int64:
			return x
		case *big.Int:
			if x.Sign() < 0 {
				return math.MinInt64
			}
			return math.MaxInt64
		}
		return def
	}
	step := bound(parts[2], 1)
	if step == 0 {
		return nil, &Error{Kind: "ValueError", Msg: "slice step cannot be zero"}
	}
	n := int64(len(items))
	adjust := func(v any, def, lo, hi int64) int64 {
		if v == nil {
			return def
		}
		i := bound(v, 0)
		if i < 0 {
			if i < -n {
				return lo
			}
			i += n
		}
		if i > hi {
			return hi
		}
		return i
	}
	out := jinja.NewList()
	if step > 0 {
		start, stop := adjust(parts[0], 0, 0, n), adjust(parts[1], n, 0, n)
		for i := start; i < stop; i += step {
			out.Items = append(out.Items, items[i])
			if step > n {
				break
			}
		}
		return out, nil
	}
	start, stop := adjust(parts[0], n-1, -1, n-1), adjust(parts[1], -1, -1, n-1)
	for i := start; i > stop; i += step {
		out.Items = append(out.Items, items[i])
		if -step > n {
			break
		}
	}
	return out, nil
}

package jinja

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// eval evaluates an expression; its errors get the line of the statement
// running it (exec), as in Jinja2's tracebacks.
func (r *Runtime) eval(x Expr, f *frame) (any, error) {
	return r.evalExpr(x, f)
}

func (r *Runtime) evalExpr(x Expr, f *frame) (any, error) {
	switch e := x.(type) {
	case *constExpr:
		return e.Val, nil
	case *foldExpr:
		return r.evalFold(e, f)
	case *nameExpr:
		if r.constMode {
			return nil, errImpossible
		}
		if v, ok := f.lookup(e.Name); ok {
			return v, nil
		}
		return r.Undefined(e.Name), nil
	case *tupleExpr:
		out := make(Tuple, len(e.Items))
		for i, it := range e.Items {
			v, err := r.eval(it, f)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *listExpr:
		out := make([]any, len(e.Items))
		for i, it := range e.Items {
			v, err := r.eval(it, f)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return &List{Items: out}, nil
	case *dictExpr:
		m := &payload.Map{}
		for i, k := range e.Keys {
			kv, err := r.eval(k, f)
			if err != nil {
				return nil, err
			}
			if err := hashable(kv); err != nil {
				return nil, err
			}
			vv, err := r.eval(e.Vals[i], f)
			if err != nil {
				return nil, err
			}
			mapSet(m, kv, vv)
		}
		return m, nil
	case *getattrExpr:
		obj, err := r.eval(e.Obj, f)
		if err != nil {
			return nil, err
		}
		return r.GetAttr(obj, e.Attr)
	case *getitemExpr:
		obj, err := r.eval(e.Obj, f)
		if err != nil {
			return nil, err
		}
		if s, ok := e.Key.(*sliceExpr); ok {
			if err := strictCheck(obj); err != nil {
				return nil, err
			}
			sv := &sliceVal{}
			for i, p := range []Expr{s.Start, s.Stop, s.Step} {
				if p == nil {
					continue
				}
				v, err := r.eval(p, f)
				if err != nil {
					return nil, err
				}
				switch i {
				case 0:
					sv.start = v
				case 1:
					sv.stop = v
				default:
					sv.step = v
				}
			}
			// Jinja2 compiles a slice to Python's own obj[a:b:c] (not
			// environment.getitem): a TypeError is raised, not undefined;
			// its optimizer folds through environment.getitem
			if u, ok := obj.(*Undefined); ok {
				// Undefined.__getitem__ raises, strict or lenient; the
				// optimizer's Getitem.as_const turns that into Impossible
				if r.constMode {
					return nil, errImpossible
				}
				return nil, u.err()
			}
			v, err := applySlice(obj, sv)
			if err != nil && r.constMode {
				if je, ok := err.(*Error); ok && (je.Kind == "TypeError" || je.Kind == "IndexError" || je.Kind == "KeyError" || je.Kind == "AttributeError") {
					return &Undefined{Name: "slice", Obj: obj, HasObj: true, Strict: !r.env.opts.Lenient}, nil
				}
			}
			return v, err
		}
		key, err := r.eval(e.Key, f)
		if err != nil {
			return nil, err
		}
		return r.GetItem(obj, key)
	case *binExpr:
		l, err := r.eval(e.L, f)
		if err != nil {
			return nil, err
		}
		switch e.Op {
		case "and":
			t, err := Truthy(l)
			if err != nil || !t {
				return l, err
			}
			return r.eval(e.R, f)
		case "or":
			t, err := Truthy(l)
			if err != nil || t {
				return l, err
			}
			return r.eval(e.R, f)
		}
		rv, err := r.eval(e.R, f)
		if err != nil {
			return nil, err
		}
		v, err := BinOp(e.Op, l, rv)
		if err == nil && e.Op == "*" && isConstExpr(e.L) && isConstExpr(e.R) {
			// Jinja2's optimizer folds a constant expression and the
			// generated code rebuilds the value from its repr, so
			// [[1]] * 2 holds two distinct lists
			v = freshCopy(v, 0)
		}
		return v, err
	case *unaryExpr:
		v, err := r.eval(e.X, f)
		if err != nil {
			return nil, err
		}
		if e.Op == "not" {
			t, err := Truthy(v)
			return !t, err
		}
		return UnaryOp(e.Op, v)
	case *compareExpr:
		l, err := r.eval(e.First, f)
		if err != nil {
			return nil, err
		}
		for i, op := range e.Ops {
			rv, err := r.eval(e.Rest[i], f)
			if err != nil {
				return nil, err
			}
			ok, err := compareOp(op, l, rv)
			if err != nil || !ok {
				return false, err
			}
			l = rv
		}
		return true, nil
	case *condExpr:
		t, err := r.test(e.Test, f)
		if err != nil {
			return nil, err
		}
		if t {
			return r.eval(e.Then, f)
		}
		if e.Else == nil {
			if r.constMode {
				// CondExpr.as_const: an undefined result is left to run time
				return nil, errImpossible
			}
			return &Undefined{Hint: "the inline if-expression on line " + fmt.Sprint(e.Line) + " evaluated to false and no else section was defined."}, nil
		}
		return r.eval(e.Else, f)
	case *concatExpr:
		// Concat.as_const joins str() of the parts; the generated code
		// uses markup_join under autoescape
		if r.autoescape && !r.constMode {
			vals := make([]any, len(e.Items))
			for i, it := range e.Items {
				v, err := r.eval(it, f)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			return markupJoin(vals)
		}
		var b strings.Builder
		// the generated code's str_join((a, b, ...)) evaluates every part
		// before str() of the first; as_const takes str() part by part
		var vals []any
		if !r.constMode {
			vals = make([]any, len(e.Items))
			for i, it := range e.Items {
				v, err := r.eval(it, f)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
		}
		for i, it := range e.Items {
			var v any
			if vals != nil {
				v = vals[i]
			} else {
				var err error
				if v, err = r.eval(it, f); err != nil {
					return nil, err
				}
			}
			s, err := Str(v)
			if err != nil {
				return nil, err
			}
			b.WriteString(s)
		}
		return b.String(), nil
	case *callExpr:
		if r.constMode {
			return nil, errImpossible // Call.as_const in a sandbox
		}
		return r.evalCall(e, f, nil)
	case *filterExpr:
		if r.constMode && (e.X == nil || contextFilters[e.Name] || r.env.Filters[e.Name] == nil) {
			return nil, errImpossible
		}
		var in any
		if e.X != nil {
			v, err := r.eval(e.X, f)
			if err != nil {
				return nil, err
			}
			in = v
		}
		return r.applyFilter(e, in, f)
	case *testExpr:
		if r.constMode && r.env.Tests[e.Name] == nil {
			return nil, errImpossible
		}
		v, err := r.eval(e.X, f)
		if err != nil {
			return nil, err
		}
		fn := r.env.Tests[e.Name]
		if fn == nil {
			return nil, &Error{Kind: "TemplateRuntimeError", Msg: fmt.Sprintf("No test named %s found.", pyStrRepr(e.Name))}
		}
		if e.Name != "escaped" && e.Name != "sameas" {
			// tests read a Markup value as the str it is
			v = demote(v)
		}
		args, kw, err := r.evalArgs(&e.callArgs, f)
		if err != nil {
			return nil, err
		}
		return fn(r, v, args, kw)
	case *nsRefExpr:
		if r.constMode {
			return nil, errImpossible
		}
		ns, _ := f.lookup(e.Name)
		return r.GetAttr(ns, e.Attr)
	}
	return nil, fmt.Errorf("cannot evaluate %T", x)
}

// evalArgs evaluates call arguments: positional (with *args) and keyword
// (with **kwargs) in call order.
func (r *Runtime) evalArgs(a *callArgs, f *frame) ([]any, *payload.Map, error) {
	var args []any
	for _, x := range a.Args {
		v, err := r.eval(x, f)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, v)
	}
	var kw *payload.Map
	for i, name := range a.KwNames {
		v, err := r.eval(a.KwVals[i], f)
		if err != nil {
			return nil, nil, err
		}
		if kw == nil {
			kw = &payload.Map{}
		}
		kw.Set(name, v)
	}
	if a.DynArgs != nil {
		v, err := r.eval(a.DynArgs, f)
		if err != nil {
			return nil, nil, err
		}
		items, err := Iterate(v)
		if err != nil {
			return nil, nil, typeErr("Value after * must be an iterable, not %s", TypeName(v))
		}
		args = append(args, items...)
	}
	if a.DynKwarg != nil {
		v, err := r.eval(a.DynKwarg, f)
		if err != nil {
			return nil, nil, err
		}
		m, ok := v.(*payload.Map)
		if !ok {
			if err := strictCheck(v); err != nil {
				return nil, nil, err
			}
			return nil, nil, typeErr("jinja2.runtime.Context.call() argument after ** must be a mapping, not %s", TypeName(v))
		}
		for _, it := range m.Items() {
			k, ok := it.Key.(string)
			if !ok {
				return nil, nil, typeErr("keywords must be strings")
			}
			if kw == nil {
				kw = &payload.Map{}
			}
			if kw.Has(k) {
				return nil, nil, typeErr("got multiple values for keyword argument %s", pyStrRepr(k))
			}
			kw.Set(k, it.Value)
		}
	}
	return args, kw, nil
}

func (r *Runtime) evalCall(e *callExpr, f *frame, caller *Macro) (any, error) {
	fn, err := r.eval(e.Fn, f)
	if err != nil {
		return nil, err
	}
	args, kw, err := r.evalArgs(&e.callArgs, f)
	if err != nil {
		return nil, err
	}
	if caller != nil {
		if kw == nil {
			kw = &payload.Map{}
		}
		kw.Set("caller", caller)
	}
	return r.Call(fn, args, kw)
}

// Call calls a template value with arguments.
func (r *Runtime) Call(fn any, args []any, kw *payload.Map) (any, error) {
	if err := r.step(); err != nil {
		return nil, err
	}
	if r.depth >= r.env.opts.MaxCallDepth {
		return nil, &Error{Kind: "RecursionError", Msg: fmt.Sprintf("calls nested deeper than %d (maximum recursion depth exceeded)", r.env.opts.MaxCallDepth)}
	}
	r.depth++
	defer func() { r.depth-- }()
	switch c := fn.(type) {
	case Callable:
		v, err := c.Call(r, args, kw)
		if err != nil {
			return nil, err
		}
		return importShallow(v), nil
	case *Undefined:
		return nil, c.err()
	}
	return nil, typeErr("'%s' object is not callable", TypeName(fn))
}

func (r *Runtime) applyFilter(e *filterExpr, in any, f *frame) (any, error) {
	fn := r.env.Filters[e.Name]
	if fn == nil {
		return nil, &Error{Kind: "TemplateRuntimeError", Msg: fmt.Sprintf("No filter named %s found.", pyStrRepr(e.Name))}
	}
	args, kw, err := r.evalArgs(&e.callArgs, f)
	if err != nil {
		return nil, err
	}
	v, err := fn(r, in, args, kw)
	if err != nil {
		return nil, err
	}
	return importShallow(v), nil
}

// applyFilterChain applies a filter chain whose innermost input is in.
func (r *Runtime) applyFilterChain(e *filterExpr, in any, f *frame) (any, error) {
	var chain []*filterExpr
	for c := e; c != nil; {
		chain = append([]*filterExpr{c}, chain...)
		nx, _ := c.X.(*filterExpr)
		c = nx
	}
	v := in
	for _, c := range chain {
		var err error
		if v, err = r.applyFilter(c, v, f); err != nil {
			return nil, r.errAt(err, c.Line)
		}
	}
	return v, nil
}

// GetAttr is Jinja2's obj.attr: a Python attribute (method) first, then
// an item.
func (r *Runtime) GetAttr(obj any, name string) (any, error) {
	switch o := obj.(type) {
	case *Undefined:
		return nil, o.err()
	case Attrs:
		if v, ok := o.GetAttr(name); ok {
			return v, nil
		}
	case Markup:
		if strings.HasPrefix(name, "_") && (hasDunder(obj, name) || name == "__html__" || name == "__html_format__") {
			return &Undefined{Name: name, Obj: obj, HasObj: true, Strict: !r.env.opts.Lenient, Kind: "SecurityError",
				Hint: fmt.Sprintf("access to attribute '%s' of '%s' object is unsafe.", name, TypeName(obj))}, nil
		}
		if m := markupMethod(o, name); m != nil {
			return m, nil
		}
	case *rangeVal:
		if m := methodFor(obj, name); m != nil {
			return m, nil
		}
	case *payload.Map, *List, Tuple, string, []byte, int64, *big.Int, float64, bool:
		if strings.HasPrefix(name, "_") && hasDunder(obj, name) {
			// Salt's SandboxedEnvironment: a Python attribute starting
			// with "_" is unsafe
			return &Undefined{Name: name, Obj: obj, HasObj: true, Strict: !r.env.opts.Lenient, Kind: "SecurityError",
				Hint: fmt.Sprintf("access to attribute '%s' of '%s' object is unsafe.", name, TypeName(obj))}, nil
		}
		if m := methodFor(obj, name); m != nil {
			return m, nil
		}
		if x, ok := numAttr(obj, name); ok {
			return x, nil
		}
		if d, ok := obj.(*payload.Map); ok {
			if v, ok := d.Get(name); ok {
				return v, nil
			}
		}
	case Items:
		if v, ok := o.GetItem(name); ok {
			return v, nil
		}
	}
	return &Undefined{Name: name, Obj: obj, HasObj: true, Strict: !r.env.opts.Lenient}, nil
}

// GetItem is Jinja2's obj[key]: an item first, then an attribute.
func (r *Runtime) GetItem(obj any, key any) (any, error) {
	if err := strictCheck(key); err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *Undefined:
		return nil, o.err()
	case Markup:
		if _, ok := asInt(key); ok {
			v, err := r.GetItem(string(o), key)
			if s, ok := v.(string); ok {
				return Markup(s), err
			}
			return v, err
		}
		if s, ok := key.(string); ok {
			if m := markupMethod(o, s); m != nil {
				return m, nil
			}
		}
	case *payload.Map:
		if err := hashable(key); err != nil {
			return nil, err
		}
		if v, ok := mapGet(o, key); ok {
			return v, nil
		}
	case *List, Tuple, string, []byte:
		if i, ok := asInt(key); ok {
			var items []any
			switch s := o.(type) {
			case string:
				if isASCII(s) {
					if j, ok := pyIndex(int(clampInt(i)), len(s)); ok {
						return s[j : j+1], nil
					}
				} else {
					rs := []rune(s)
					if j, ok := pyIndex(int(clampInt(i)), len(rs)); ok {
						return string(rs[j]), nil
					}
				}
			case []byte:
				if j, ok := pyIndex(int(clampInt(i)), len(s)); ok {
					return int64(s[j]), nil
				}
			case *List:
				items = s.Items
			case Tuple:
				items = s
			}
			if j, ok := pyIndex(int(clampInt(i)), len(items)); ok {
				return items[j], nil
			}
		}
	case Items:
		if v, ok := o.GetItem(key); ok {
			return v, nil
		}
	case Attrs:
		if s, ok := key.(string); ok {
			if v, ok := o.GetAttr(s); ok {
				return v, nil
			}
		}
	}
	if s, ok := key.(string); ok {
		switch o := obj.(type) {
		case *payload.Map, *List, Tuple, string, []byte:
			if m := methodFor(obj, s); m != nil {
				return m, nil
			}
		case Attrs:
			if v, ok := o.GetAttr(s); ok {
				return v, nil
			}
		}
		return &Undefined{Name: s, Obj: obj, HasObj: true, Strict: !r.env.opts.Lenient}, nil
	}
	return &Undefined{Key: key, IsKey: true, Obj: obj, HasObj: true, Strict: !r.env.opts.Lenient}, nil
}

// objectDunders are the special attributes every Python object has.
var objectDunders = []string{"__class__", "__doc__", "__eq__", "__ne__", "__hash__", "__init__", "__new__",
	"__repr__", "__str__", "__format__", "__dir__", "__sizeof__", "__reduce__", "__reduce_ex__",
	"__getattribute__", "__setattr__", "__delattr__", "__subclasshook__", "__init_subclass__",
	"__lt__", "__le__", "__gt__", "__ge__", "__getstate__"}

// hasDunder says whether the Python value behind v has the special
// attribute name (so that the sandbox refuses it rather than looking up an
// item of that name).
func hasDunder(v any, name string) bool {
	for _, n := range objectDunders {
		if n == name {
			return true
		}
	}
	var extra []string
	switch v.(type) {
	case *payload.Map:
		extra = []string{"__len__", "__contains__", "__getitem__", "__iter__", "__setitem__", "__delitem__",
			"__or__", "__ror__", "__ior__", "__reversed__", "__class_getitem__"}
	case *List, Tuple, string, []byte, Markup:
		extra = []string{"__len__", "__contains__", "__getitem__", "__iter__", "__add__", "__mul__", "__rmul__"}
		switch v.(type) {
		case *List:
			extra = append(extra, "__setitem__", "__delitem__", "__iadd__", "__imul__", "__reversed__", "__class_getitem__")
		case Tuple:
			extra = append(extra, "__getnewargs__", "__class_getitem__")
		case string, []byte, Markup:
			extra = append(extra, "__mod__", "__rmod__", "__getnewargs__")
		}
	case int64, *big.Int, float64, bool:
		extra = []string{"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
			"__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__divmod__", "__rdivmod__",
			"__pow__", "__rpow__", "__neg__", "__pos__", "__abs__", "__bool__", "__int__", "__float__",
			"__round__", "__trunc__", "__floor__", "__ceil__", "__getnewargs__"}
	}
	for _, n := range extra {
		if n == name {
			return true
		}
	}
	return false
}

// isConstExpr reports whether Jinja2's optimizer folds e to a constant:
// literals and operators over literals.
func isConstExpr(e Expr) bool {
	switch x := e.(type) {
	case *constExpr:
		return true
	case *listExpr:
		return allConst(x.Items)
	case *tupleExpr:
		return allConst(x.Items)
	case *dictExpr:
		return allConst(x.Keys) && allConst(x.Vals)
	case *unaryExpr:
		return isConstExpr(x.X)
	case *binExpr:
		return isConstExpr(x.L) && isConstExpr(x.R)
	}
	return false
}

func allConst(es []Expr) bool {
	for _, e := range es {
		if !isConstExpr(e) {
			return false
		}
	}
	return true
}

// freshCopy copies the mutable containers inside v.
func freshCopy(v any, depth int) any {
	if depth > 100 {
		return v
	}
	switch x := v.(type) {
	case *List:
		out := make([]any, len(x.Items))
		for i, e := range x.Items {
			out[i] = freshCopy(e, depth+1)
		}
		return &List{Items: out}
	case Tuple:
		out := make(Tuple, len(x))
		for i, e := range x {
			out[i] = freshCopy(e, depth+1)
		}
		return out
	case *payload.Map:
		out := payload.NewMap()
		for _, it := range x.Items() {
			out.SetKey(it.Key, freshCopy(it.Value, depth+1))
		}
		return out
	case *Set:
		return &Set{items: append([]any(nil), x.items...)}
	}
	return v
}

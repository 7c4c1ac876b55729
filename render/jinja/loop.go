package jinja

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// LoopContext is the `loop` variable of a for loop.
type LoopContext struct {
	r *Runtime
	// items are the items read so far (all of them unless src is set)
	items []any
	// src is the one-shot iterator the loop still reads, item by item
	// (nil once exhausted); keep filters it as the loop's if clause
	src  *Generator
	keep func(any) (bool, error)
	// srcErr is an error the iterator raised while the loop peeked ahead
	srcErr  error
	index0  int
	depth0  int
	last    any
	hasLast bool
	node    *forNode
	f       *frame
}

// GetAttr returns loop.index, loop.first, ... and the loop methods.
func (l *LoopContext) GetAttr(name string) (any, bool) {
	// Jinja2's LoopContext peeks one item ahead for last and nextitem and
	// reads the rest of an iterator for length and revindex
	switch name {
	case "last", "nextitem":
		if err := l.fill(l.index0 + 1); err != nil {
			l.srcErr = err
		}
	case "length", "revindex", "revindex0":
		if err := l.fill(-1); err != nil {
			l.srcErr = err
		}
	}
	n := len(l.items)
	switch name {
	case "index":
		return int64(l.index0 + 1), true
	case "index0":
		return int64(l.index0), true
	case "revindex":
		return int64(n - l.index0), true
	case "revindex0":
		return int64(n - l.index0 - 1), true
	case "first":
		return l.index0 == 0, true
	case "last":
		return l.index0 == n-1, true
	case "length":
		return int64(n), true
	case "depth":
		return int64(l.depth0 + 1), true
	case "depth0":
		return int64(l.depth0), true
	case "previtem":
		if l.index0 == 0 {
			return l.r.undefinedHint("there is no previous item"), true
		}
		return l.items[l.index0-1], true
	case "nextitem":
		if l.index0+1 >= n {
			return l.r.undefinedHint("there is no next item"), true
		}
		return l.items[l.index0+1], true
	case "cycle":
		return Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			if len(args) == 0 {
				return nil, typeErr("no items for cycling given")
			}
			return args[l.index0%len(args)], nil
		}), true
	case "changed":
		return Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			v := Tuple(args)
			if !l.hasLast || !Equal(v, l.last) {
				l.last, l.hasLast = v, true
				return true, nil
			}
			return false, nil
		}), true
	}
	return nil, false
}

// fill reads the loop's iterator until item k is known (all of it for k
// < 0) or it is exhausted. An error it raises is returned; one raised
// while the loop body peeked ahead (loop.last, ...) is kept for the
// loop's next step.
func (l *LoopContext) fill(k int) error {
	if l.srcErr != nil {
		err := l.srcErr
		l.srcErr = nil
		return err
	}
	for l.src != nil && (k < 0 || len(l.items) <= k) {
		item, ok, err := l.src.Next()
		if err != nil || !ok {
			l.src = nil
			l.srcErr = err
			break
		}
		if l.keep != nil {
			keep, err := l.keep(item)
			if err != nil {
				l.src = nil
				l.srcErr = err
				break
			}
			if !keep {
				continue
			}
		}
		l.items = append(l.items, item)
	}
	if k >= 0 && k < len(l.items) {
		return nil
	}
	err := l.srcErr
	l.srcErr = nil
	return err
}

// Call recurses in a recursive loop: loop(children).
func (l *LoopContext) Call(r *Runtime, args []any, kw *payload.Map) (any, error) {
	if !l.node.Recursive {
		return nil, typeErr("The loop must be marked as 'recursive' to call it.")
	}
	if len(args) != 1 {
		return nil, typeErr("loop() takes exactly 1 argument")
	}
	saved := r.out
	var out limitWriter
	b := new(strings.Builder)
	out.b = b
	out.max = saved.max
	r.out = &out
	err := out.joined(r.execFor(l.node, l.f, args[0], l.depth0+1))
	r.out = saved
	if err != nil {
		return nil, err
	}
	return b.String(), nil
}

func (r *Runtime) execFor(n *forNode, f *frame, iterVal any, depth0 int) error {
	var it any
	if depth0 == 0 && iterVal == nil {
		v, err := r.eval(n.Iter, f)
		if err != nil {
			return err
		}
		it = v
	} else {
		it = iterVal
	}
	loop := &LoopContext{r: r, node: n, f: f, depth0: depth0}
	if n.Test != nil {
		loop.keep = func(item any) (bool, error) {
			tf := &frame{vars: map[string]any{}, parent: f, ctx: f.ctx}
			if err := r.assign(n.Target, item, tf); err != nil {
				return false, err
			}
			return r.test(n.Test, tf)
		}
	}
	if g, ok := it.(*Generator); ok {
		// a one-shot iterator is read as the loop goes: a break leaves
		// the rest of it unread, as Python's for loop does
		loop.src = g
	} else {
		items, err := Iterate(it)
		if err != nil {
			return r.errAt(err, n.Line)
		}
		if loop.keep != nil {
			var kept []any
			for _, item := range items {
				ok, err := loop.keep(item)
				if err != nil {
					return err
				}
				if ok {
					kept = append(kept, item)
				}
			}
			items = kept
		}
		loop.items = items
	}
	lf := &frame{vars: map[string]any{}, parent: f, ctx: f.ctx}
	// Jinja2 runs the else block unless an iteration ran to its end
	// (break and continue skip the marker)
	completed := false
	for i := 0; ; i++ {
		if err := loop.fill(i); err != nil {
			return r.errAt(err, n.Line)
		}
		if i >= len(loop.items) {
			break
		}
		item := loop.items[i]
		loop.index0 = i
		lf.vars = map[string]any{"loop": loop}
		if err := r.assign(n.Target, item, lf); err != nil {
			return r.errAt(err, n.Line)
		}
		err := r.execBody(n.Body, lf)
		if err == errBreak {
			break
		}
		if err != nil && err != errContinue {
			return err
		}
		if err == nil {
			completed = true
		}
	}
	if !completed && n.Else != nil {
		return r.execBody(n.Else, &frame{vars: map[string]any{}, parent: f, ctx: f.ctx})
	}
	return nil
}

// Macro is a template macro (or a call block's caller).
type Macro struct {
	Name string
	// anonymous: a call block's caller, whose Python name is None
	anonymous bool
	args      []string
	defaults  []Expr
	body      []Node
	closure   *frame
	tmpl      *Template
	varargs   bool
	kwargs    bool
	caller    bool
	// markup: defined under autoescape, the macro returns Markup
	markup bool
	// yields: the body holds an include without context outside nested
	// macros and call blocks (Jinja2 then compiles a generator function)
	yields bool
}

// yieldsDirectly reports whether a function body compiles to a Python
// generator: an include without context, not inside a nested macro,
// call block, block or recursive loop (functions of their own).
func yieldsDirectly(body []Node) bool {
	found := false
	walkNodes(body, func(n any) bool {
		switch x := n.(type) {
		case *includeNode:
			if !x.WithContext {
				found = true
			}
		case *macroNode, *callBlockNode, *blockNode:
			return false
		case *forNode:
			if x.Recursive {
				return false
			}
		}
		return !found
	})
	return found
}

// usesName is Jinja2's find_undeclared for a macro body: whether it
// loads name, looking into nested macros and call blocks too (Jinja2's
// UndeclaredNameVisitor does not stop at closures, so a nested macro's
// caller makes the outer one take a caller) but not into blocks; a
// nested macro's parameter of that name, met first, ends the search.
func usesName(body []Node, name string) bool {
	found, done := false, false
	walkNodes(body, func(n any) bool {
		if done {
			return false
		}
		switch x := n.(type) {
		case *nameExpr:
			if x.Name == name {
				found, done = true, true
			}
		case *macroNode:
			done = slices.Contains(x.Args, name)
		case *callBlockNode:
			done = slices.Contains(x.Args, name)
		case *blockNode:
			return false
		}
		return !done
	})
	return found
}

func (r *Runtime) newMacro(name string, args []string, defs []Expr, body []Node, f *frame) *Macro {
	return &Macro{Name: name, args: args, defaults: defs, body: body, closure: f, tmpl: r.cur,
		varargs: usesName(body, "varargs"), kwargs: usesName(body, "kwargs"), caller: usesName(body, "caller"), markup: r.autoescape,
		yields: yieldsDirectly(body)}
}

// nameRepr is repr() of the macro's Python name (None for a caller).
func (m *Macro) nameRepr() string {
	if m.anonymous {
		return "None"
	}
	return pyStrRepr(m.Name)
}

// Call runs the macro and returns its output.
func (m *Macro) Call(r *Runtime, args []any, kw *payload.Map) (any, error) {
	f := &frame{vars: map[string]any{}, parent: m.closure, ctx: m.closure.ctx}
	nd := len(m.args) - len(m.defaults)
	if len(args) > len(m.args) && !m.varargs {
		return nil, typeErr("macro %s takes not more than %d argument(s)", m.nameRepr(), len(m.args))
	}
	var extra *payload.Map
	if kw != nil {
		for _, it := range kw.Items() {
			k := it.Key.(string)
			idx := -1
			for i, a := range m.args {
				if a == k {
					idx = i
				}
			}
			switch {
			case idx >= 0:
				if idx < len(args) {
					// Jinja2 binds positionals first; the keyword is then extra
					if !m.kwargs {
						return nil, typeErr("macro %s takes no keyword argument %s", m.nameRepr(), pyStrRepr(k))
					}
					if extra == nil {
						extra = &payload.Map{}
					}
					extra.Set(k, it.Value)
					continue
				}
				f.vars[k] = it.Value
			case k == "caller" && m.caller:
				f.vars["caller"] = it.Value
			default:
				if !m.kwargs {
					if k == "caller" {
						return nil, typeErr("macro %s was invoked with two values for the special caller argument. This is most likely a bug.", m.nameRepr())
					}
					return nil, typeErr("macro %s takes no keyword argument %s", m.nameRepr(), pyStrRepr(k))
				}
				if extra == nil {
					extra = &payload.Map{}
				}
				extra.Set(k, it.Value)
			}
		}
	}
	prev := r.cur
	if m.tmpl != nil {
		r.cur = m.tmpl
	}
	defer func() { r.cur = prev }()
	for i, a := range m.args {
		if i < len(args) {
			f.vars[a] = args[i]
			continue
		}
		if _, ok := f.vars[a]; ok {
			continue
		}
		if i >= nd {
			v, err := r.eval(m.defaults[i-nd], f)
			if err != nil {
				return nil, err
			}
			f.vars[a] = v
			continue
		}
		f.vars[a] = r.undefinedHint(fmt.Sprintf("parameter %s was not provided", pyStrRepr(a)))
	}
	if m.varargs {
		var va Tuple = Tuple{}
		if len(args) > len(m.args) {
			va = append(Tuple{}, args[len(m.args):]...)
		}
		f.vars["varargs"] = va
	}
	if m.kwargs {
		if extra == nil {
			extra = &payload.Map{}
		}
		f.vars["kwargs"] = extra
	}
	if m.caller {
		if _, ok := f.vars["caller"]; !ok {
			f.vars["caller"] = r.undefinedHint("No caller defined")
		}
	}
	if m.yields {
		// an include without context compiles to "yield from" in the
		// macro's Python function: calling it returns a generator and
		// runs nothing
		return NewGenerator("root.<locals>.macro", nil, nil), nil
	}
	savedExt := r.ext
	r.ext = nil
	out, err := r.capture(m.body, f)
	r.ext = savedExt
	if m.markup && err == nil {
		return Markup(out), nil
	}
	return out, err
}

// GetAttr exposes name, arguments, catch_kwargs, ... as Jinja2 does.
func (m *Macro) GetAttr(name string) (any, bool) {
	switch name {
	case "name":
		if m.anonymous {
			return nil, true
		}
		return m.Name, true
	case "arguments":
		t := Tuple{}
		for _, a := range m.args {
			t = append(t, a)
		}
		return t, true
	case "catch_kwargs":
		return m.kwargs, true
	case "catch_varargs":
		return m.varargs, true
	case "caller":
		return m.caller, true
	}
	return nil, false
}

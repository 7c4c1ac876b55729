package jinja

import (
	"fmt"
	"reflect"

	"github.com/gsalt/gsalt/wire/payload"
)

// Generator is a one-shot Python iterator: a generator (Jinja2's select,
// map, batch, slice and items filters are generator functions) or a
// builtin iterator object such as reversed(). It prints as
// "<generator object NAME at 0x...>", is always true, has no len(), and
// what one iteration took is gone for the next. A lazy generator computes
// its items (consuming the iterators it reads) on its first step only, as
// a Python generator runs its body then: "{% set r = it|select %}" leaves
// it untouched. An error the Python generator would raise on a step is
// kept and returned after the items before it, so only iterating fails.
type Generator struct {
	// Module and Type are Python's type of the object ("", "generator"
	// for generators; "itertools", "product" for itertools objects).
	Module, Type string
	// Func is the generator function's name ("" for other iterators).
	Func  string
	items []any
	err   error
	// pos is how many items were taken
	pos int
	// thunk computes items and err on the first step (nil once run)
	thunk func() ([]any, error)
	// pull, when set, makes each item on demand (a generator reading
	// another one item by item); nil once exhausted or raised
	pull func() (any, bool, error)
}

// NewGenerator returns a generator of function fn yielding items, or
// raising err when iterated.
func NewGenerator(fn string, items []any, err error) *Generator {
	return &Generator{Type: "generator", Func: fn, items: items, err: err}
}

// NewLazyGenerator returns a generator of function fn whose items (and the
// error it raises after them) compute computes on its first step.
func NewLazyGenerator(fn string, compute func() ([]any, error)) *Generator {
	return &Generator{Type: "generator", Func: fn, thunk: compute}
}

// NewIterator returns an iterator object of Python type module.typ.
func NewIterator(module, typ string, items []any, err error) *Generator {
	return &Generator{Module: module, Type: typ, items: items, err: err}
}

// NewLazyIterator returns an iterator object of Python type module.typ
// whose items compute computes on its first step (an itertools object
// reading another iterator).
func NewLazyIterator(module, typ string, compute func() ([]any, error)) *Generator {
	return &Generator{Module: module, Type: typ, thunk: compute}
}

// NewPullIterator returns an iterator object of Python type module.typ
// whose items pull makes one at a time (false when exhausted): an
// itertools object reading a one-shot iterator item by item.
func NewPullIterator(module, typ string, pull func() (any, bool, error)) *Generator {
	return &Generator{Module: module, Type: typ, pull: pull}
}

func (g *Generator) run() {
	if g.thunk != nil {
		f := g.thunk
		g.thunk = nil
		g.items, g.err = f()
	}
}

// Iter consumes the rest of the generator: the items not taken yet, and
// the error it raises after them (once).
func (g *Generator) Iter() ([]any, error) {
	if g.pull != nil {
		var out []any
		for {
			v, ok, err := g.Next()
			if err != nil || !ok {
				return out, err
			}
			out = append(out, v)
		}
	}
	g.run()
	rest := g.items[min(g.pos, len(g.items)):]
	g.pos = len(g.items)
	err := g.err
	g.err = nil
	return rest, err
}

// Next is Python's next(): the next item, false when the generator is
// exhausted, or the error it raises at this step.
func (g *Generator) Next() (any, bool, error) {
	if g.pull != nil {
		v, ok, err := g.pull()
		if err != nil || !ok {
			g.pull = nil
		}
		return v, ok, err
	}
	g.run()
	if g.pos < len(g.items) {
		g.pos++
		return g.items[g.pos-1], true, nil
	}
	err := g.err
	g.err = nil
	return nil, false, err
}

// PyType is the Python type of the iterator.
func (g *Generator) PyType() (string, string) { return g.Module, g.Type }

// String is Python's repr of the iterator.
func (g *Generator) String() string {
	name := g.Type
	if g.Module != "" {
		name = g.Module + "." + g.Type
	}
	// an address shaped like CPython's on 64-bit Linux (0x7f and ten hex
	// digits), so the repr has the same length as Salt's
	addr := fmt.Sprintf("0x7f%010x", uint64(reflect.ValueOf(g).Pointer())&0xffffffffff)
	if g.Func != "" {
		return fmt.Sprintf("<%s object %s at %s>", name, g.Func, addr)
	}
	return fmt.Sprintf("<%s object at %s>", name, addr)
}

// generatorFilter makes fn, whose result is a list, a Jinja2 generator
// filter named fn: it runs, and reads its input, when the generator is
// first iterated; its result and error come out then.
func generatorFilter(name string, fn FilterFunc, perItem bool) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		if src, ok := v.(*Generator); ok && perItem {
			return pullGenerator(name, r, fn, src, args, kw), nil
		}
		return NewLazyGenerator(name, func() ([]any, error) {
			if perItem {
				return perItemGenerator(r, fn, v, args, kw)
			}
			out, err := fn(r, v, args, kw)
			if err != nil {
				return nil, err
			}
			return Iterate(out)
		}), nil
	}
}

// pullGenerator is the generator of fn, a filter handling each item on
// its own, over src read one item at a time: "it|map('string')|first"
// takes one item of it, as Python's chained generators do.
func pullGenerator(name string, r *Runtime, fn FilterFunc, src *Generator, args []any, kw *payload.Map) *Generator {
	var pending []any
	return &Generator{Type: "generator", Func: name, pull: func() (any, bool, error) {
		for len(pending) == 0 {
			item, ok, err := src.Next()
			if err != nil || !ok {
				return nil, false, err
			}
			out, err := fn(r, &List{Items: []any{item}}, args, kw)
			if err != nil {
				return nil, false, err
			}
			if pending, err = Iterate(out); err != nil {
				return nil, false, err
			}
		}
		v := pending[0]
		pending = pending[1:]
		return v, true, nil
	}}
}

// perItemGenerator runs fn, a filter that handles each input item on its
// own (select, reject, map, ...), as Python's generator does: when an item
// fails, the items before it are yielded and then the error raised, so a
// reader that stops early (urlencode failing on the first item) never
// meets it.
func perItemGenerator(r *Runtime, fn FilterFunc, v any, args []any, kw *payload.Map) ([]any, error) {
	var srcErr error
	if g, ok := v.(*Generator); ok {
		var items []any
		items, srcErr = g.Iter()
		v = &List{Items: items}
	}
	out, err := fn(r, v, args, kw)
	if err == nil {
		res, err := Iterate(out)
		if err != nil {
			return res, err
		}
		return res, srcErr
	}
	var items []any
	switch x := v.(type) {
	case *List:
		items = x.Items
	case Tuple:
		items = x
	default:
		return nil, err
	}
	// find the first item that fails
	var res []any
	for _, item := range items {
		o, ierr := fn(r, &List{Items: []any{item}}, args, kw)
		if ierr != nil {
			return res, ierr
		}
		got, ierr := Iterate(o)
		if ierr != nil {
			return res, ierr
		}
		res = append(res, got...)
	}
	return res, err
}

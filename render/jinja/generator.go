package jinja

import (
	"fmt"
	"reflect"

	"github.com/gsalt/gsalt/wire/payload"
)

// Generator is a one-shot Python iterator: a generator (Jinja2's select,
// map, batch, slice and items filters are generator functions) or a
// builtin iterator object such as reversed(). It prints as
// "<generator object NAME at 0x...>", is always true, has no len(), and a
// second iteration yields nothing. Its items are computed when it is made;
// an error the Python generator would raise on its first step is kept and
// returned when it is iterated, so only iterating it fails, as in Python.
type Generator struct {
	// Module and Type are Python's type of the object ("", "generator"
	// for generators; "itertools", "product" for itertools objects).
	Module, Type string
	// Func is the generator function's name ("" for other iterators).
	Func  string
	items []any
	err   error
	used  bool
}

// NewGenerator returns a generator of function fn yielding items, or
// raising err when iterated.
func NewGenerator(fn string, items []any, err error) *Generator {
	return &Generator{Type: "generator", Func: fn, items: items, err: err}
}

// NewIterator returns an iterator object of Python type module.typ.
func NewIterator(module, typ string, items []any, err error) *Generator {
	return &Generator{Module: module, Type: typ, items: items, err: err}
}

// Iter consumes the generator.
func (g *Generator) Iter() ([]any, error) {
	if g.used {
		return nil, nil
	}
	g.used = true
	return g.items, g.err
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
// filter named fn: its result and error come out when it is iterated.
func generatorFilter(name string, fn FilterFunc) FilterFunc {
	return func(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
		out, err := fn(r, v, args, kw)
		if err != nil {
			return NewGenerator(name, nil, err), nil
		}
		items, err := Iterate(out)
		return NewGenerator(name, items, err), nil
	}
}

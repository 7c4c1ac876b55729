package render

import (
	"fmt"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// itertoolsFilters are the Python iterator constructors Salt registers as
// filters (itertools' combinatoric functions, compress, zip_longest and
// the builtin zip). Each returns a one-shot iterator object; arguments are
// read eagerly, so a non-iterable fails at the filter as in Python.
func itertoolsFilters() map[string]jinja.FilterFunc {
	return map[string]jinja.FilterFunc{
		"combinations": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			pool, n, err := poolAndR("combinations", v, args, kw, true)
			if err != nil {
				return nil, err
			}
			return jinja.NewIterator("itertools", "combinations", combos(pool, n, false), nil), nil
		},
		"combinations_with_replacement": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			pool, n, err := poolAndR("combinations_with_replacement", v, args, kw, true)
			if err != nil {
				return nil, err
			}
			return jinja.NewIterator("itertools", "combinations_with_replacement", combos(pool, n, true), nil), nil
		},
		"permutations": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			pool, n, err := poolAndR("permutations", v, args, kw, false)
			if err != nil {
				return nil, err
			}
			return jinja.NewIterator("itertools", "permutations", perms(pool, n), nil), nil
		},
		"product": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			repeat := int64(1)
			if kw != nil {
				for _, it := range kw.Items() {
					if it.Key != "repeat" {
						return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("product() got an unexpected keyword argument %s", jinja.Repr(it.Key))}
					}
					n, ok := it.Value.(int64)
					if !ok {
						return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("'%s' object cannot be interpreted as an integer", jinja.TypeName(it.Value))}
					}
					repeat = n
				}
			}
			if repeat < 0 {
				return nil, &jinja.Error{Kind: "ValueError", Msg: "repeat argument cannot be negative"}
			}
			var pools [][]any
			for _, x := range append([]any{v}, args...) {
				items, err := jinja.Iterate(x)
				if err != nil {
					return nil, err
				}
				pools = append(pools, items)
			}
			var all [][]any
			for i := int64(0); i < repeat; i++ {
				all = append(all, pools...)
			}
			out := []any{jinja.Tuple{}}
			for _, p := range all {
				var next []any
				for _, prefix := range out {
					for _, x := range p {
						t := append(append(jinja.Tuple{}, prefix.(jinja.Tuple)...), x)
						next = append(next, t)
					}
				}
				out = next
				if len(out) > 1<<16 {
					return nil, &jinja.Error{Kind: "MemoryError", Msg: "product too large"}
				}
			}
			return jinja.NewIterator("itertools", "product", out, nil), nil
		},
		"compress": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if len(args) != 1 {
				return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("compress() takes exactly 2 arguments (%d given)", len(args)+1)}
			}
			if srcs, ok, err := pullSources(v, args[0]); err != nil || ok {
				if err != nil {
					return nil, err
				}
				return jinja.NewPullIterator("itertools", "compress", func() (any, bool, error) {
					for {
						// next(data), then next(selectors)
						d, ok, err := srcs[0]()
						if err != nil || !ok {
							return nil, false, err
						}
						sel, ok, err := srcs[1]()
						if err != nil || !ok {
							return nil, false, err
						}
						if t, err := jinja.Truthy(sel); err != nil || t {
							return d, err == nil, err
						}
					}
				}), nil
			}
			return lazyIter("itertools", "compress", []any{v, args[0]}, func() ([]any, error, error) {
				data, dataErr, _ := pyIter(v)
				sel, selErr, _ := pyIter(args[0])
				var out []any
				for i := 0; ; i++ {
					// next(data), then next(selectors): the first that raises
					// or is exhausted ends the iterator
					if i >= len(data) {
						return out, dataErr, nil
					}
					if i >= len(sel) {
						return out, selErr, nil
					}
					if ok, err := jinja.Truthy(sel[i]); err != nil {
						return out, err, nil
					} else if ok {
						out = append(out, data[i])
					}
				}
			})
		},
		"zip": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if err := zipKeywords("zip", kw, false); err != nil {
				return nil, err
			}
			if srcs, ok, err := pullSources(append([]any{v}, args...)...); err != nil || ok {
				if err != nil {
					return nil, err
				}
				return jinja.NewPullIterator("", "zip", pullZip(srcs, kw, false)), nil
			}
			return lazyIter("", "zip", append([]any{v}, args...), func() ([]any, error, error) {
				return zipItems(v, args, kw, false)
			})
		},
		"zip_longest": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			if err := zipKeywords("zip_longest", kw, true); err != nil {
				return nil, err
			}
			if srcs, ok, err := pullSources(append([]any{v}, args...)...); err != nil || ok {
				if err != nil {
					return nil, err
				}
				return jinja.NewPullIterator("itertools", "zip_longest", pullZip(srcs, kw, true)), nil
			}
			return lazyIter("itertools", "zip_longest", append([]any{v}, args...), func() ([]any, error, error) {
				return zipItems(v, args, kw, true)
			})
		},
	}
}

// poolAndR reads (iterable, r) for combinations and permutations.
func poolAndR(name string, v any, args []any, kw *payload.Map, rRequired bool) ([]any, int, error) {
	var rv any
	if len(args) > 0 {
		rv = args[0]
	} else if kw != nil {
		if x, ok := kw.Get("r"); ok {
			rv = x
		}
	}
	if len(args) > 1 {
		return nil, 0, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() takes at most 2 arguments (%d given)", name, len(args)+1)}
	}
	pool, err := jinja.Iterate(v)
	if err != nil {
		return nil, 0, err
	}
	if rv == nil {
		if rRequired {
			return nil, 0, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() missing required argument 'r' (pos 2)", name)}
		}
		return pool, len(pool), nil
	}
	n, ok := rv.(int64)
	if !ok {
		return nil, 0, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("'%s' object cannot be interpreted as an integer", jinja.TypeName(rv))}
	}
	if n < 0 {
		return nil, 0, &jinja.Error{Kind: "ValueError", Msg: "r must be non-negative"}
	}
	if n > 64 {
		n = 64
	}
	return pool, int(n), nil
}

// combos lists the r-combinations of pool in itertools' order.
func combos(pool []any, r int, repl bool) []any {
	var out []any
	idx := make([]int, r)
	var rec func(pos, start int)
	rec = func(pos, start int) {
		if len(out) > 1<<16 {
			return
		}
		if pos == r {
			t := make(jinja.Tuple, r)
			for i, j := range idx {
				t[i] = pool[j]
			}
			out = append(out, t)
			return
		}
		for j := start; j < len(pool); j++ {
			idx[pos] = j
			if repl {
				rec(pos+1, j)
			} else {
				rec(pos+1, j+1)
			}
		}
	}
	if repl && len(pool) == 0 && r > 0 {
		return nil
	}
	rec(0, 0)
	return out
}

// perms lists the r-permutations of pool in itertools' order.
func perms(pool []any, r int) []any {
	var out []any
	if r > len(pool) {
		return nil
	}
	used := make([]bool, len(pool))
	cur := make(jinja.Tuple, 0, r)
	var rec func()
	rec = func() {
		if len(out) > 1<<16 {
			return
		}
		if len(cur) == r {
			out = append(out, append(jinja.Tuple{}, cur...))
			return
		}
		for j := range pool {
			if used[j] {
				continue
			}
			used[j] = true
			cur = append(cur, pool[j])
			rec()
			cur = cur[:len(cur)-1]
			used[j] = false
		}
	}
	rec()
	return out
}

// pyIter is Python's iter(x) for an itertools object's input: a value
// that is not iterable fails at once; an iterator whose next step raises
// (a generator holding an error) gives the items before it and, apart,
// the error, which the lazy itertools object raises only when iterated.
func pyIter(x any) (items []any, lazy, err error) {
	if g, ok := x.(*jinja.Generator); ok {
		items, lazy = g.Iter()
		return items, lazy, nil
	}
	items, err = jinja.Iterate(x)
	return items, nil, err
}

// lazyIter returns the itertools object module.typ reading inputs: each
// must be iterable at once (Python's iter() in the constructor); compute
// reads them on the object's first step, giving the items, the error an
// input raises where they stop, and a hard error.
func lazyIter(module, typ string, inputs []any, compute func() ([]any, error, error)) (any, error) {
	for _, x := range inputs {
		if _, ok := x.(*jinja.Generator); ok {
			continue
		}
		if _, err := jinja.Iterate(x); err != nil {
			return nil, err
		}
	}
	return jinja.NewLazyIterator(module, typ, func() ([]any, error) {
		out, lazy, err := compute()
		if err != nil {
			return nil, err
		}
		return out, lazy
	}), nil
}

// zipKeywords checks zip's (none) or zip_longest's (fillvalue) keywords.
func zipKeywords(name string, kw *payload.Map, longest bool) error {
	if kw == nil {
		return nil
	}
	for _, it := range kw.Items() {
		if !longest || it.Key != "fillvalue" {
			return &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() got an unexpected keyword argument %s", name, jinja.Repr(it.Key))}
		}
	}
	return nil
}

// zipItems is zip (shortest) or zip_longest (padded with fillvalue): the
// rows, and the error an input iterator raises where the rows stop.
func zipItems(v any, args []any, kw *payload.Map, longest bool) ([]any, error, error) {
	var fill any
	if kw != nil {
		if f, ok := kw.Get("fillvalue"); ok {
			fill = f
		}
	}
	var lists [][]any
	var lazy []error
	for _, x := range append([]any{v}, args...) {
		items, lz, err := pyIter(x)
		if err != nil {
			return nil, nil, err
		}
		lists = append(lists, items)
		lazy = append(lazy, lz)
	}
	var out []any
	for i := 0; len(lists) > 0 && len(out) <= 1<<16; i++ {
		// one row: next() of every input in order
		row := make(jinja.Tuple, len(lists))
		active := 0
		for j, l := range lists {
			switch {
			case i < len(l):
				row[j] = l[i]
				active++
			case lazy[j] != nil:
				return out, lazy[j], nil
			case !longest:
				return out, nil, nil
			default:
				row[j] = fill
			}
		}
		if active == 0 {
			break
		}
		out = append(out, row)
	}
	return out, nil, nil
}

// pullSources is next() over each input when one of them is a one-shot
// iterator (ok false otherwise): that iterator is read item by item, as
// the itertools object reads it, the others at once (iter() of a
// non-iterable fails here, in the constructor).
func pullSources(inputs ...any) (srcs []func() (any, bool, error), ok bool, err error) {
	for _, x := range inputs {
		_, isGen := x.(*jinja.Generator)
		ok = ok || isGen
		next, err := pyNext(x)
		if err != nil {
			return nil, false, err
		}
		srcs = append(srcs, next)
	}
	return srcs, ok, nil
}

// pullZip is zip (shortest) or itertools.zip_longest (padded with
// fillvalue) over srcs, one row a step: next() of every input in order; an
// input zip_longest found exhausted is not read again.
func pullZip(srcs []func() (any, bool, error), kw *payload.Map, longest bool) func() (any, bool, error) {
	var fill any
	if kw != nil {
		fill, _ = kw.Get("fillvalue")
	}
	done := make([]bool, len(srcs))
	active := len(srcs)
	return func() (any, bool, error) {
		if active == 0 {
			return nil, false, nil
		}
		row := make(jinja.Tuple, len(srcs))
		for j, next := range srcs {
			if done[j] {
				row[j] = fill
				continue
			}
			v, ok, err := next()
			switch {
			case err != nil:
				active = 0
				return nil, false, err
			case ok:
				row[j] = v
			case !longest:
				active = 0
				return nil, false, nil
			default:
				done[j] = true
				active--
				if active == 0 {
					return nil, false, nil
				}
				row[j] = fill
			}
		}
		return row, true, nil
	}
}

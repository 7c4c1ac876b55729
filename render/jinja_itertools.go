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
			data, err := jinja.Iterate(v)
			if err != nil {
				return nil, err
			}
			sel, err := jinja.Iterate(args[0])
			if err != nil {
				return nil, err
			}
			var out []any
			for i := 0; i < len(data) && i < len(sel); i++ {
				if ok, err := jinja.Truthy(sel[i]); err != nil {
					return jinja.NewIterator("itertools", "compress", out, err), nil
				} else if ok {
					out = append(out, data[i])
				}
			}
			return jinja.NewIterator("itertools", "compress", out, nil), nil
		},
		"zip": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			out, err := zipItems("zip", v, args, kw, false)
			if err != nil {
				return nil, err
			}
			return jinja.NewIterator("", "zip", out, nil), nil
		},
		"zip_longest": func(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
			out, err := zipItems("zip_longest", v, args, kw, true)
			if err != nil {
				return nil, err
			}
			return jinja.NewIterator("itertools", "zip_longest", out, nil), nil
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

// zipItems is zip (shortest) or zip_longest (padded with fillvalue).
func zipItems(name string, v any, args []any, kw *payload.Map, longest bool) ([]any, error) {
	var fill any
	if kw != nil {
		for _, it := range kw.Items() {
			if !longest || it.Key != "fillvalue" {
				return nil, &jinja.Error{Kind: "TypeError", Msg: fmt.Sprintf("%s() got an unexpected keyword argument %s", name, jinja.Repr(it.Key))}
			}
			fill = it.Value
		}
	}
	var lists [][]any
	for _, x := range append([]any{v}, args...) {
		items, err := jinja.Iterate(x)
		if err != nil {
			return nil, err
		}
		lists = append(lists, items)
	}
	n := -1
	for _, l := range lists {
		if n < 0 || (longest && len(l) > n) || (!longest && len(l) < n) {
			n = len(l)
		}
	}
	var out []any
	for i := 0; i < n; i++ {
		row := make(jinja.Tuple, len(lists))
		for j, l := range lists {
			if i < len(l) {
				row[j] = l[i]
			} else {
				row[j] = fill
			}
		}
		out = append(out, row)
	}
	return out, nil
}

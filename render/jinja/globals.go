package jinja

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// maxRange bounds how many items a range() may produce when iterated.
const maxRange = 1 << 22

// rangeVal is Python's range object.
type rangeVal struct{ start, stop, step int64 }

func (r *rangeVal) n() int64 {
	if r.step > 0 && r.start < r.stop {
		return (r.stop - r.start + r.step - 1) / r.step
	}
	if r.step < 0 && r.start > r.stop {
		return (r.start - r.stop - r.step - 1) / -r.step
	}
	return 0
}

// Iter returns the range's numbers.
func (r *rangeVal) Iter() ([]any, error) {
	n := r.n()
	if n > maxRange {
		return nil, &Error{Kind: "OverflowError", Msg: fmt.Sprintf("range too big, maximum size for range is %d", maxRange)}
	}
	out := make([]any, n)
	for i := int64(0); i < n; i++ {
		out[i] = r.start + i*r.step
	}
	return out, nil
}

// GetItem indexes the range.
func (r *rangeVal) GetItem(k any) (any, bool) {
	i, ok := asInt(k)
	if !ok {
		return nil, false
	}
	n := r.n()
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil, false
	}
	return r.start + i*r.step, true
}

// String is the range's repr.
func (r *rangeVal) String() string {
	if r.step == 1 {
		return fmt.Sprintf("range(%d, %d)", r.start, r.stop)
	}
	return fmt.Sprintf("range(%d, %d, %d)", r.start, r.stop, r.step)
}

// Cycler is the cycler() global.
type Cycler struct {
	items []any
	pos   int
}

// GetAttr returns current, next and reset.
func (c *Cycler) GetAttr(name string) (any, bool) {
	switch name {
	case "current":
		return c.items[c.pos], true
	case "next":
		return Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			v := c.items[c.pos]
			c.pos = (c.pos + 1) % len(c.items)
			return v, nil
		}), true
	case "reset":
		return Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			c.pos = 0
			return nil, nil
		}), true
	}
	return nil, false
}

func builtinGlobals() map[string]any {
	return map[string]any{
		"range": Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			if kw != nil && kw.Len() > 0 {
				return nil, typeErr("range() takes no keyword arguments")
			}
			var ns []int64
			for _, a := range args {
				n, ok := asInt(a)
				if !ok {
					if _, isBig := a.(*big.Int); isBig {
						return nil, &Error{Kind: "OverflowError", Msg: "Python int too large to convert to C ssize_t"}
					}
					if err := strictCheck(a); err != nil {
						return nil, err
					}
					return nil, typeErr("'%s' object cannot be interpreted as an integer", TypeName(a))
				}
				ns = append(ns, n)
			}
			var rv *rangeVal
			switch len(ns) {
			case 1:
				rv = &rangeVal{0, ns[0], 1}
			case 2:
				rv = &rangeVal{ns[0], ns[1], 1}
			case 3:
				if ns[2] == 0 {
					return nil, valueErr("range() arg 3 must not be zero")
				}
				rv = &rangeVal{ns[0], ns[1], ns[2]}
			case 0:
				return nil, typeErr("range expected at least 1 argument, got 0")
			default:
				return nil, typeErr("range expected at most 3 arguments, got %d", len(ns))
			}
			if max := int64(r.env.opts.MaxRange); rv.n() > max {
				if r.env.opts.Sandboxed {
					return nil, &Error{Kind: "OverflowError", Msg: fmt.Sprintf("Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", max)}
				}
				return nil, &Error{Kind: "OverflowError", Msg: fmt.Sprintf("range() larger than %d items", max)}
			}
			return rv, nil
		}),
		"dict": &Class{Name: "dict", Fn: func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			m := &payload.Map{}
			if len(args) > 1 {
				return nil, typeErr("dict expected at most 1 argument, got %d", len(args))
			}
			if len(args) == 1 {
				if err := updateFrom(m, args[0]); err != nil {
					return nil, err
				}
			}
			if kw != nil {
				for _, it := range kw.Items() {
					mapSet(m, it.Key, it.Value)
				}
			}
			return m, nil
		}},
		"namespace": &Class{Name: "jinja2.utils.Namespace", Fn: func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			m := &payload.Map{}
			for _, a := range args {
				if err := updateFrom(m, a); err != nil {
					return nil, err
				}
			}
			if kw != nil {
				for _, it := range kw.Items() {
					m.SetKey(it.Key, it.Value)
				}
			}
			return &Namespace{M: m}, nil
		}},
		"cycler": Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			if len(args) == 0 {
				return nil, &Error{Kind: "RuntimeError", Msg: "at least one item has to be provided"}
			}
			return &Cycler{items: args}, nil
		}),
		"joiner": Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("joiner", args, kw, []string{"sep"}, ", ")
			if err != nil {
				return nil, err
			}
			used := false
			return Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
				if !used {
					used = true
					return "", nil
				}
				return a[0], nil
			}), nil
		}),
		"lipsum": Func(func(r *Runtime, args []any, kw *payload.Map) (any, error) {
			a, err := Bind("generate_lorem_ipsum", args, kw, []string{"n", "html", "min", "max"}, int64(5), true, int64(20), int64(100))
			if err != nil {
				return nil, err
			}
			n, _ := asInt(a[0])
			lo, _ := asInt(a[2])
			hi, _ := asInt(a[3])
			if n > 0 && lo >= hi {
				// every paragraph draws its length with randrange(min, max)
				return nil, &Error{Kind: "ValueError", Msg: fmt.Sprintf("empty range for randrange() (%d, %d, %d)", lo, hi, hi-lo)}
			}
			var paras []string
			for i := int64(0); i < n && i < 1000; i++ {
				p := "Lorem ipsum dolor sit amet, consectetur adipiscing elit."
				if truthy(a[1]) {
					p = "<p>" + p + "</p>"
				}
				paras = append(paras, p)
			}
			if truthy(a[1]) {
				return strings.Join(paras, "\n"), nil
			}
			return strings.Join(paras, "\n\n"), nil
		}),
	}
}

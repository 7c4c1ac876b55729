package render

import (
	"math"
	"math/big"
	"reflect"
	"sort"

	jmespath "github.com/jmespath/go-jmespath"

	"github.com/gsalt/gsalt/render/jinja"
	"github.com/gsalt/gsalt/wire/payload"
)

// filterJSONQuery is Salt's json_query (salt.utils.data.json_query):
// jmespath.search(expr, data). The data crosses into go-jmespath as JSON
// shaped Go values (numbers as float64) and comes back with the order of
// the dicts it came from and Python's int for whole numbers that were ints.
func filterJSONQuery(r *jinja.Runtime, v any, args []any, kw *payload.Map) (any, error) {
	if err := missingArgs("json_query", []string{"expr"}, args, kw); err != nil {
		return nil, err
	}
	a, err := jinja.Bind("json_query", args, kw, []string{"expr"})
	if err != nil {
		return nil, err
	}
	expr, ok := a[0].(string)
	if !ok {
		return nil, pyErr("TypeError", "expected string or bytes-like object, got '%s'", jinja.TypeName(a[0]))
	}
	q, err := jmespath.Compile(expr)
	if err != nil {
		return nil, pyErr("ParseError", "%s", err.Error())
	}
	c := &jmesConv{maps: map[uintptr]*payload.Map{}}
	// Python's jmespath looks into dicts and lists only: a tuple, an
	// iterator or a dict view is an object it returns as itself (and
	// never iterates)
	var in any
	if jmesOpaqueValue(v) {
		in = c.keep(v)
	} else {
		in = c.toJMES(filterExport.Export(v), 0)
	}
	out, err := q.Search(in)
	if err != nil {
		return nil, pyErr("JMESPathError", "%s", err.Error())
	}
	return jinja.Import(c.fromJMES(out, 0)), nil
}

// jmesConv converts between payload data and go-jmespath's values,
// remembering each dict and the undefined items (which a query returns as
// the same objects, as Python's jmespath does). Known difference: a
// dict's keys that are not str are invisible to go-jmespath, and `*`,
// keys() and values() read a dict in Go's map order, not the dict's.
type jmesConv struct {
	maps   map[uintptr]*payload.Map
	opaque []any
}

// jmesOpaque stands for an object JMESPath does not look into (an
// undefined item): an index into jmesConv.opaque. It is not a struct, so
// go-jmespath finds no fields in it.
type jmesOpaque int

func (c *jmesConv) toJMES(v any, depth int) any {
	if depth > maxConvertDepth {
		return nil
	}
	switch x := v.(type) {
	case *payload.Map:
		m := make(map[string]any, x.Len())
		for _, it := range x.Items() {
			k, ok := it.Key.(string)
			if !ok {
				continue // JMESPath addresses string keys only
			}
			m[k] = c.toJMES(it.Value, depth+1)
		}
		c.maps[reflect.ValueOf(m).Pointer()] = x
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = c.toJMES(e, depth+1)
		}
		return l
	case int64:
		return float64(x)
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case *jinja.Undefined, jinja.Tuple, *jinja.Generator, *jinja.DictView:
		return c.keep(x)
	}
	return v
}

// jmesOpaqueValue reports whether v is an object JMESPath does not look
// into, at the top of the data (deeper ones Export keeps as themselves).
func jmesOpaqueValue(v any) bool {
	switch v.(type) {
	case jinja.Tuple, *jinja.Generator, *jinja.DictView:
		return true
	}
	return false
}

// keep stands v for go-jmespath as an opaque value.
func (c *jmesConv) keep(v any) any {
	c.opaque = append(c.opaque, v)
	return jmesOpaque(len(c.opaque) - 1)
}

func (c *jmesConv) fromJMES(v any, depth int) any {
	if depth > maxConvertDepth {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		if orig, ok := c.maps[reflect.ValueOf(x).Pointer()]; ok {
			// a dict of the input comes back as the same object in
			// Python, with its keys that are not str (JMESPath cannot
			// address them) and its order
			return orig
		}
		out := payload.NewMap()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out.SetKey(k, c.fromJMES(x[k], depth+1))
		}
		return out
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = c.fromJMES(e, depth+1)
		}
		return l
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case jmesOpaque:
		if int(x) >= 0 && int(x) < len(c.opaque) {
			return c.opaque[x]
		}
	}
	return v
}

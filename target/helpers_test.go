package target

import "github.com/gsalt/gsalt/internal/py"

// orderedMap is a minimal Mapper (like wire/payload.Map) for tests. Keys
// that are equal in Python (1, 1.0, True) collapse into one entry.
type orderedMap struct {
	keys []any
	vals []any
}

func (o *orderedMap) set(k, v any) *orderedMap {
	for i, e := range o.keys {
		if py.Equal(e, k) {
			o.vals[i] = v
			return o
		}
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	return o
}

func (o *orderedMap) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	for i, k := range o.keys {
		if s, ok := k.(string); ok && s == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

func (o *orderedMap) Range(fn func(k, v any) bool) {
	if o == nil {
		return
	}
	for i := range o.keys {
		if !fn(o.keys[i], o.vals[i]) {
			return
		}
	}
}

func om(kv ...any) *orderedMap {
	o := &orderedMap{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i], kv[i+1])
	}
	return o
}

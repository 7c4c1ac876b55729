package payload

import (
	"bytes"
	"math"
	"sync"
	"time"
)

// maxShareDepth bounds the recursion of Share.
const maxShareDepth = 64

// Share returns a value equal to v that shares memory with ref wherever
// the two are equal: every map entry, list or string of v that equals the
// value at the same place in ref is replaced by ref's, and a map or list
// all of whose parts are shared is ref's own. A map with ref's keys in
// ref's order is a copy of ref's entries (sharing ref's lookup index, see
// Map.Clone) with the values that differ replaced. Equality is strict
// (same Go types, maps with the same keys in the same order), so the
// result encodes to exactly the bytes of v. Neither v nor ref is
// modified; both must be treated as read-only afterwards, as the result
// may alias them. It is meant for the many near-identical trees a master
// or proxy keeps (the grains and pillars of thousands of minions, the
// options of thousands of devices).
func Share(v, ref any) any {
	out, _ := share(v, ref, 0)
	return out
}

// Sharer shares a family of near-identical trees with the first one it
// is given (the reference): Share returns that first tree as it is and
// every later one through the package's Share against it. The zero value
// is ready; safe for concurrent use.
type Sharer struct {
	mu  sync.Mutex
	ref any
	set bool
}

// Share returns v, or a value equal to v that shares memory with the
// reference (see the package's Share).
func (s *Sharer) Share(v any) any {
	s.mu.Lock()
	ref, set := s.ref, s.set
	if !set {
		s.ref, s.set = v, true
	}
	s.mu.Unlock()
	if !set {
		return v
	}
	return Share(v, ref)
}

// share returns the shared form of v and whether it is ref itself.
func share(v, ref any, depth int) (any, bool) {
	if depth > maxShareDepth || ref == nil {
		return v, v == nil && ref == nil
	}
	switch x := v.(type) {
	case string:
		if y, ok := ref.(string); ok && x == y {
			return y, true
		}
	case bool, int64, uint64, int:
		if v == ref {
			return ref, true
		}
	case float64:
		// By bits: 0.0 and -0.0 are == but encode differently.
		if y, ok := ref.(float64); ok && math.Float64bits(x) == math.Float64bits(y) {
			return ref, true
		}
	case []byte:
		if y, ok := ref.([]byte); ok && bytes.Equal(x, y) {
			return y, true
		}
	case time.Time:
		if y, ok := ref.(time.Time); ok && x.Equal(y) && x.Location() == y.Location() {
			return ref, true
		}
	case []any:
		y, ok := ref.([]any)
		if !ok {
			return v, false
		}
		if len(x) != len(y) {
			return v, false
		}
		return shareList(x, y, depth)
	case *Map:
		y, ok := ref.(*Map)
		if !ok || x == nil || y == nil {
			return v, false
		}
		if sameKeys(x, y) {
			return shareValues(x, y, depth)
		}
		return shareMap(x, y, depth)
	}
	return v, false
}

// shareList shares the elements of x with those of y (of the same length)
// at the same index; it returns y when every element is y's.
func shareList(x, y []any, depth int) (any, bool) {
	var out []any
	all := true
	for i, e := range x {
		s, same := share(e, y[i], depth+1)
		all = all && same
		if out == nil && !sameRef(s, e) {
			out = make([]any, len(x))
			copy(out, x[:i])
		}
		if out != nil {
			out[i] = s
		}
	}
	switch {
	case all:
		return y, true
	case out == nil:
		return x, false
	}
	return out, false
}

// sameKeys reports whether x has exactly y's keys in y's order.
func sameKeys(x, y *Map) bool {
	if len(x.items) != len(y.items) {
		return false
	}
	for i := range x.items {
		if !strictKey(x.items[i].Key, y.items[i].Key) {
			return false
		}
	}
	return true
}

// shareValues shares x, whose keys are y's in y's order: y itself when
// every value is y's, else a clone of y (its keys and lookup index) with
// the values that differ replaced by x's shared form.
func shareValues(x, y *Map, depth int) (any, bool) {
	var out *Map
	for i, it := range x.items {
		s, same := share(it.Value, y.items[i].Value, depth+1)
		if same {
			continue
		}
		if out == nil {
			out = y.Clone()
		}
		out.items[i].Value = s
	}
	if out == nil {
		return y, true
	}
	return out, false
}

// shareMap shares the values of x (whose keys differ from y's, or are in
// another order) with y's values of the same key.
func shareMap(x, y *Map, depth int) (any, bool) {
	out := &Map{items: make([]Item, len(x.items))}
	for i, it := range x.items {
		out.items[i] = it
		j := y.find(it.Key)
		if j < 0 || !strictKey(it.Key, y.items[j].Key) {
			continue
		}
		out.items[i].Key = y.items[j].Key // share the key text too
		out.items[i].Value, _ = share(it.Value, y.items[j].Value, depth+1)
	}
	if len(out.items) > indexThreshold {
		out.buildIndex()
	}
	return out, false
}

// strictKey reports whether two map keys are the same key of the same Go
// type (a str key and a bytes key of the same text are not: they encode
// differently).
func strictKey(a, b any) bool {
	_, same := share(a, b, maxShareDepth)
	return same
}

// sameRef reports whether a and b are the same value without comparing
// contents (identical scalars, or the same string, list, map or bytes).
func sameRef(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case []byte:
		y, ok := b.([]byte)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case *Map:
		y, ok := b.(*Map)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}

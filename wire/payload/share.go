package payload

import "bytes"

// maxShareDepth bounds the recursion of Share.
const maxShareDepth = 64

// Share returns a value equal to v that shares memory with ref wherever
// the two are equal: every map entry, list or string of v that equals the
// value at the same place in ref is replaced by ref's, and a map or list
// all of whose parts are shared is ref's own. Equality is strict (same Go
// types, maps with the same keys in the same order), so the result reads
// exactly as v. Neither v nor ref is modified; both must be treated as
// read-only afterwards, as the result may alias them. It is meant for the
// many near-identical trees a master or proxy keeps (the grains and
// pillars of thousands of minions, the options of thousands of devices).
func Share(v, ref any) any {
	out, _ := share(v, ref, 0)
	return out
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
	case bool, int64, uint64, float64, int:
		if v == ref {
			return ref, true
		}
	case []byte:
		if y, ok := ref.([]byte); ok && bytes.Equal(x, y) {
			return y, true
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

// shareMap shares the values of x with y's values of the same key; it
// returns y when x has y's keys in y's order and every value is shared.
func shareMap(x, y *Map, depth int) (any, bool) {
	out := &Map{items: make([]Item, len(x.items))}
	all := len(x.items) == len(y.items)
	for i, it := range x.items {
		out.items[i].Key = it.Key
		out.items[i].Value = it.Value
		r, ok := y.GetKey(it.Key)
		if !ok {
			all = false
			continue
		}
		s, same := share(it.Value, r, depth+1)
		out.items[i].Value = s
		inPlace := i < len(y.items) && sameKey(y.items[i].Key, it.Key)
		if inPlace {
			out.items[i].Key = y.items[i].Key // share the key text too
		}
		all = all && same && inPlace
	}
	if all {
		return y, true
	}
	if len(out.items) > indexThreshold {
		out.buildIndex()
	}
	return out, false
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

// sameKey reports whether two map keys are the same key (str keys by text,
// others by their payload identity).
func sameKey(a, b any) bool {
	if x, ok := a.(string); ok {
		y, ok := b.(string)
		return ok && x == y
	}
	return keyID(a) == keyID(b)
}

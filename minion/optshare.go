package minion

import (
	"bytes"
	"sync"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// OptionShare lets the identities of one process whose configurations are
// alike (a proxy's devices, each loading the same files with its own id)
// share the memory of their options map (__opts__): the first identity's
// options become the reference; a later identity whose keys are the same,
// in the same order, gets a copy of the reference's entries (sharing its
// lookup index) with the values that differ replaced by its own, and
// shares every value equal to the reference's. Equality is strict (same
// Go types, same order), so every identity still reads exactly its own
// configuration. Options maps are never modified after they are built,
// which makes the sharing safe. The zero value is ready; safe for
// concurrent use.
type OptionShare struct {
	mu  sync.Mutex
	ref *payload.Map
}

// share returns own, or an equal map that shares memory with the reference.
func (s *OptionShare) share(own *payload.Map) *payload.Map {
	s.mu.Lock()
	ref := s.ref
	if ref == nil {
		s.ref = own
	}
	s.mu.Unlock()
	if ref == nil || ref.Len() != own.Len() {
		return own
	}
	ri, oi := ref.Items(), own.Items()
	for i := range oi {
		if !sameValue(ri[i].Key, oi[i].Key) {
			return own
		}
	}
	out := ref.Clone()
	for _, it := range oi {
		k, ok := it.Key.(string)
		if !ok {
			return own
		}
		if v, _ := ref.Get(k); !sameValue(v, it.Value) {
			out.Set(k, it.Value)
		}
	}
	return out
}

// sameValue reports whether a and b are the same payload value: same Go
// types all the way down, maps with the same keys in the same order. Types
// it does not know are never the same.
func sameValue(a, b any) bool {
	return sameDepth(a, b, 0)
}

func sameDepth(a, b any, depth int) bool {
	if depth > 64 {
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case uint64:
		y, ok := b.(uint64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y) && x.Location() == y.Location()
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameDepth(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	case *payload.Map:
		y, ok := b.(*payload.Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		xi, yi := x.Items(), y.Items()
		for i := range xi {
			if !sameDepth(xi[i].Key, yi[i].Key, depth+1) || !sameDepth(xi[i].Value, yi[i].Value, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

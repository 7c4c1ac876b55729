package config

import (
	"math/big"
	"reflect"
	"sync"
)

// OptsShare lets the option sets of one process that are mostly alike (a
// proxy's devices: each loads the same files with its own id) keep their
// common entries once: Share moves every entry equal to the reference's
// (the first shared set's entries, copied once and never written) out of
// the set's own map. Each set still reads, changes and deletes exactly its
// own options (Set and Delete touch only the set's own entries). Values
// are shared only when equal, and values handed out by Opts are read-only
// anyway. The zero value is ready; safe for concurrent use.
type OptsShare struct {
	mu   sync.Mutex
	base map[string]any
}

// Share rebases o on the reference entries.
func (s *OptsShare) Share(o *Opts) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.base != nil {
		return // already shared
	}
	s.mu.Lock()
	if s.base == nil {
		s.base = make(map[string]any, len(o.m))
		for k, v := range o.m {
			s.base[k] = v
		}
	}
	base := s.base
	s.mu.Unlock()
	own := map[string]any{}
	for k, v := range o.m {
		if bv, ok := base[k]; ok && sameOpt(bv, v) {
			continue
		}
		own[k] = v
	}
	var gone map[string]struct{}
	for k := range base {
		if _, ok := o.m[k]; !ok {
			if gone == nil {
				gone = map[string]struct{}{}
			}
			gone[k] = struct{}{}
		}
	}
	o.m, o.base, o.gone = own, base, gone
}

// sameOpt reports whether two decoded option values are equal, types
// included (1 and 1.0 and True stay apart).
func sameOpt(a, b any) bool {
	if x, ok := a.(*big.Int); ok {
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	}
	return reflect.DeepEqual(a, b)
}

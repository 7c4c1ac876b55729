package target

import "sync"

// listSetMin is the length from which a list target is matched through a
// set shared by the callers of one Matcher instead of a linear scan: the
// identities of a swarm or proxy fleet share a Matcher and receive the
// same decoded publish, and a list naming all N of them made the scan
// N² comparisons (a --static ping of 10,000 identities lists them all).
const listSetMin = 64

// maxListSets bounds the list targets a Matcher remembers.
const maxListSets = 4

// listSet is the set of the string entries of one list target. It keeps
// the list itself, so its backing array (the key) cannot be reused for
// another list while the entry exists.
type listSet struct {
	ref  []any
	once sync.Once
	set  map[string]struct{}
}

// listSets is a Matcher's small cache of list target sets, keyed by the
// identity of the list's backing array.
type listSets struct {
	mu   sync.Mutex
	sets []*listSet // most recent last
}

// lookup returns the set for l, building it once for all callers.
func (c *listSets) lookup(l []any) *listSet {
	c.mu.Lock()
	var e *listSet
	for _, s := range c.sets {
		if len(s.ref) == len(l) && &s.ref[0] == &l[0] {
			e = s
			break
		}
	}
	if e == nil {
		e = &listSet{ref: l}
		if len(c.sets) >= maxListSets {
			copy(c.sets, c.sets[1:])
			c.sets = c.sets[:len(c.sets)-1]
		}
		c.sets = append(c.sets, e)
	}
	c.mu.Unlock()
	e.once.Do(func() {
		e.set = make(map[string]struct{}, len(l))
		for _, v := range l {
			// Only a str entry can equal an id (a str): Python's
			// bytes, numbers, lists and dicts never compare equal to it.
			if s, ok := v.(string); ok {
				e.set[s] = struct{}{}
			}
		}
	})
	return e
}

// has reports whether id is one of the set's entries.
func (e *listSet) has(id string) bool {
	_, ok := e.set[id]
	return ok
}

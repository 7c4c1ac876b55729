package jinja

import (
	"math"
	"math/big"
	"math/bits"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// Set is a Python set. Its items are kept in the order CPython 3.11
// iterates a set built from them by adding one after another: hashes as
// CPython computes them with PYTHONHASHSEED=0 (SipHash-1-3 with a zero
// key for str; integers, floats and tuples hash the same under any seed),
// placed in an open-addressing table as setobject.c places them. Salt
// runs with a random seed, so the order of a set of strings is arbitrary
// there; for numbers it is the order Salt prints. Items whose hash is not
// reproducible (None, whose hash is its address in 3.11) keep the order
// they were added in.
type Set struct{ items []any }

// PyType names the class.
func (s *Set) PyType() (string, string) { return "builtins", "set" }

// Items returns the set's items in iteration order.
func (s *Set) Items() []any { return s.items }

// Iter iterates the set.
func (s *Set) Iter() ([]any, error) { return append([]any(nil), s.items...), nil }

// String is the set's repr.
func (s *Set) String() string {
	if len(s.items) == 0 {
		return "set()"
	}
	var b strings.Builder
	writeSeq(&b, "{", "}", s.items, 0, false)
	return b.String()
}

// NewSet is Python's set(items): a TypeError for an unhashable item.
func NewSet(items []any) (*Set, error) {
	var uniq []any
	var hashes []uint64
	exact := true
	for _, it := range items {
		if err := hashable(it); err != nil {
			return nil, err
		}
		if _, isSet := it.(*Set); isSet {
			return nil, typeErr("unhashable type: 'set'")
		}
		if seqContains(uniq, it) {
			continue
		}
		h, ok := PyHash(it)
		exact = exact && ok
		uniq = append(uniq, it)
		hashes = append(hashes, h)
	}
	if !exact {
		return &Set{items: uniq}, nil
	}
	return &Set{items: cpythonSetOrder(uniq, hashes)}, nil
}

// cpythonSetOrder places distinct items with their hashes as setobject.c
// does (set_add_entry, set_table_resize, set_insert_clean) and returns
// them in table order.
func cpythonSetOrder(items []any, hashes []uint64) []any {
	const linearProbes = 9
	const perturbShift = 5
	type slot struct {
		used bool
		item any
		hash uint64
	}
	table := make([]slot, 8)
	fill := 0
	insert := func(table []slot, item any, h uint64) {
		mask := uint64(len(table) - 1)
		i := h & mask
		perturb := h
		for {
			probes := 0
			if i+linearProbes <= mask {
				probes = linearProbes
			}
			for j := 0; j <= probes; j++ {
				if !table[i+uint64(j)].used {
					table[i+uint64(j)] = slot{true, item, h}
					return
				}
			}
			perturb >>= perturbShift
			i = (i*5 + 1 + perturb) & mask
		}
	}
	for n, it := range items {
		insert(table, it, hashes[n])
		fill++
		mask := len(table) - 1
		if fill*5 < mask*3 {
			continue
		}
		minused := fill * 4
		if fill > 50000 {
			minused = fill * 2
		}
		size := 8
		for size <= minused {
			size <<= 1
		}
		nt := make([]slot, size)
		for _, s := range table {
			if s.used {
				insert(nt, s.item, s.hash)
			}
		}
		table = nt
	}
	out := make([]any, 0, len(items))
	for _, s := range table {
		if s.used {
			out = append(out, s.item)
		}
	}
	return out
}

// PyHash is CPython 3.11's hash(v) (64-bit, PYTHONHASHSEED=0) as an
// unsigned word; ok is false where CPython's hash is not reproducible.
func PyHash(v any) (uint64, bool) {
	switch x := demote(v).(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int64:
		return uint64(py.HashInt(big.NewInt(x))), true
	case *big.Int:
		return uint64(py.HashInt(x)), true
	case float64:
		h, ok := py.HashFloat(x)
		return uint64(h), ok
	case string:
		return uint64(py.HashStr(x, 1)), true
	case Tuple:
		return hashTuple(x)
	}
	return 0, false
}

func hashTuple(t Tuple) (uint64, bool) {
	const (
		prime1 uint64 = 11400714785074694791
		prime2 uint64 = 14029467366897019727
		prime5 uint64 = 2870177450012600261
	)
	acc := prime5
	for _, it := range t {
		lane, ok := PyHash(it)
		if !ok {
			return 0, false
		}
		acc += lane * prime2
		acc = bits.RotateLeft64(acc, 31)
		acc *= prime1
	}
	acc += uint64(len(t)) ^ (prime5 ^ 3527539)
	if acc == math.MaxUint64 {
		return 1546275796, true
	}
	return acc, true
}

// setTable is a CPython 3.11 set's hash table (no deletions, so no
// dummies): where set_add_entry, set_merge and set_table_resize put items.
type setTable struct {
	slots      []setSlot
	fill, used int
}

type setSlot struct {
	used bool
	item any
	hash uint64
}

func newSetTable() *setTable { return &setTable{slots: make([]setSlot, 8)} }

func (t *setTable) mask() int { return len(t.slots) - 1 }

// insertClean is set_insert_clean: the first free slot of h's probe
// sequence.
func (t *setTable) insertClean(item any, h uint64) {
	const linearProbes = 9
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	perturb := h
	for {
		probes := 0
		if i+linearProbes <= mask {
			probes = linearProbes
		}
		for j := 0; j <= probes; j++ {
			if !t.slots[i+uint64(j)].used {
				t.slots[i+uint64(j)] = setSlot{true, item, h}
				return
			}
		}
		perturb >>= 5
		i = (i*5 + 1 + perturb) & mask
	}
}

// resize is set_table_resize: the smallest power of two above minused
// (at least 8), items reinserted in table order.
func (t *setTable) resize(minused int) {
	size := 8
	for size <= minused {
		size <<= 1
	}
	old := t.slots
	t.slots = make([]setSlot, size)
	for _, s := range old {
		if s.used {
			t.insertClean(s.item, s.hash)
		}
	}
	t.fill = t.used
}

func (t *setTable) has(item any, h uint64) bool {
	for _, s := range t.slots {
		if s.used && s.hash == h && seqContains([]any{s.item}, item) {
			return true
		}
	}
	return false
}

// add is set_add_entry, growing the table as CPython does.
func (t *setTable) add(item any, h uint64) {
	if t.has(item, h) {
		return
	}
	t.insertClean(item, h)
	t.fill++
	t.used++
	if t.fill*5 < t.mask()*3 {
		return
	}
	if t.used > 50000 {
		t.resize(t.used * 2)
	} else {
		t.resize(t.used * 4)
	}
}

// update is set_update_internal with a dict (presized for its keys
// first) or any other iterable (added one by one).
func (t *setTable) update(v any) (bool, error) {
	items, err := Iterate(v)
	if err != nil {
		return false, err
	}
	if m, ok := v.(*payload.Map); ok {
		if n := m.Len(); (t.fill+n)*5 >= t.mask()*3 {
			t.resize((t.used + n) * 2)
		}
	}
	for _, it := range items {
		if err := hashable(it); err != nil {
			return false, err
		}
		h, ok := PyHash(it)
		if !ok {
			return false, nil
		}
		t.add(it, h)
	}
	return true, nil
}

// copySet is set_copy's set_merge into an empty set: the same table size
// (presized when the items need it) and the same slots.
func (t *setTable) copySet() *setTable {
	c := newSetTable()
	if (c.fill+t.used)*5 >= c.mask()*3 {
		c.resize((c.used + t.used) * 2)
	}
	if c.mask() == t.mask() {
		c.slots = append([]setSlot(nil), t.slots...)
	} else {
		for _, s := range t.slots {
			if s.used {
				c.insertClean(s.item, s.hash)
			}
		}
	}
	c.fill, c.used = t.used, t.used
	return c
}

func (t *setTable) items() []any {
	out := make([]any, 0, t.used)
	for _, s := range t.slots {
		if s.used {
			out = append(out, s.item)
		}
	}
	return out
}

// SetUnionOrder is the iteration order of Python's set(a).union(b) (a and
// b dicts or other iterables of hashable items), as CPython 3.11 builds
// it with PYTHONHASHSEED=0. ok is false when an item's hash is not
// reproducible (then the order is arbitrary in CPython too).
func SetUnionOrder(a, b any) (items []any, ok bool, err error) {
	t := newSetTable()
	if ok, err := t.update(a); err != nil || !ok {
		return nil, false, err
	}
	u := t.copySet()
	if ok, err := u.update(b); err != nil || !ok {
		return nil, false, err
	}
	return u.items(), true, nil
}

package payload

import (
	"fmt"
	"testing"
)

// TestCloneSharesIndex checks that a large map and its clones look keys up
// correctly while they share one index, whichever of them later adds or
// deletes keys.
func TestCloneSharesIndex(t *testing.T) {
	src := map[string]any{}
	for i := range 40 {
		src[fmt.Sprintf("k%02d", i)] = i
	}
	base, ok := FromGo(src).(*Map)
	if !ok {
		t.Fatal("FromGo did not return a *Map")
	}
	a, b := base.Clone(), base.Clone()
	a.Set("id", "a")      // a new key in a: a copies the index first
	b.Set("k05", "b")     // an existing key in b: the index stays shared
	base.Set("only", 1)   // a new key in the source after it was cloned
	c := b.Clone()        // a clone of a clone
	c.Delete("k00")       // positions move in c only
	c.SetKey(int64(7), 7) // a non-text key
	b.Set("late", true)
	cases := []struct {
		name string
		m    *Map
		key  any
		want any
		ok   bool
	}{
		{"base k05", base, "k05", int64(5), true},
		{"base only", base, "only", 1, true},
		{"base id", base, "id", nil, false},
		{"base late", base, "late", nil, false},
		{"a id", a, "id", "a", true},
		{"a only", a, "only", nil, false},
		{"a k39", a, "k39", int64(39), true},
		{"b k05", b, "k05", "b", true},
		{"b id", b, "id", nil, false},
		{"b only", b, "only", nil, false},
		{"b late", b, "late", true, true},
		{"c k00", c, "k00", nil, false},
		{"c k01", c, "k01", int64(1), true},
		{"c k05", c, "k05", "b", true},
		{"c k39", c, "k39", int64(39), true},
		{"c late", c, "late", nil, false},
		{"c 7", c, int64(7), 7, true},
		{"b 7", b, int64(7), nil, false},
	}
	for _, tc := range cases {
		got, ok := tc.m.GetKey(tc.key)
		if ok != tc.ok || (ok && fmt.Sprint(got) != fmt.Sprint(tc.want)) {
			t.Errorf("%s: got %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if base.Len() != 41 || a.Len() != 41 || b.Len() != 41 || c.Len() != 40 {
		t.Errorf("lengths base %d a %d b %d c %d, want 41 41 41 40", base.Len(), a.Len(), b.Len(), c.Len())
	}
}

// TestCloneConcurrentReaders clones one large map from many goroutines
// while others read it, and has every clone add and delete keys of its
// own: run with -race, the shared index must never be written.
func TestCloneConcurrentReaders(t *testing.T) {
	src := map[string]any{}
	for i := range 64 {
		src[fmt.Sprintf("k%02d", i)] = i
	}
	base, ok := FromGo(src).(*Map)
	if !ok {
		t.Fatal("FromGo did not return a *Map")
	}
	const workers = 8
	errs := make(chan string, 4*workers)
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for n := range 50 {
				if v, ok := base.Get("k10"); !ok || v != int64(10) {
					errs <- fmt.Sprintf("reader %d: base k10 = %v, %v", w, v, ok)
					return
				}
				c := base.Clone()
				own := fmt.Sprintf("w%d-%d", w, n)
				c.Set(own, n)      // a new key: c copies the index
				c.Set("k20", own)  // an existing key: c's items only
				c.Delete("k00")    // a rebuilt index in c only
				cc := c.Clone()    // clones of a clone share c's index
				cc.Set("extra", w) // and copy it on their first new key
				if v, _ := c.Get(own); v != n {
					errs <- fmt.Sprintf("worker %d: clone %s = %v", w, own, v)
					return
				}
				if _, ok := c.Get("extra"); ok {
					errs <- fmt.Sprintf("worker %d: a clone's key leaked into its source", w)
					return
				}
				if v, _ := cc.Get("k20"); v != own {
					errs <- fmt.Sprintf("worker %d: clone of clone k20 = %v", w, v)
					return
				}
			}
		}()
	}
	for range workers {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if v, _ := base.Get("k20"); v != int64(20) {
		t.Errorf("base k20 = %v after its clones wrote theirs", v)
	}
	if _, ok := base.Get("k00"); !ok || base.Len() != 64 {
		t.Errorf("base lost keys to its clones: len %d", base.Len())
	}
}

// TestMapLookupsAllocateNothing: Get, Has and Set of an existing str key
// box nothing (they run for every field of every message).
func TestMapLookupsAllocateNothing(t *testing.T) {
	small := NewMap("cmd", "_return", "id", "m1")
	large := NewMap()
	for i := range 40 {
		large.Set(fmt.Sprintf("k%02d", i), int64(i))
	}
	key := "k07"
	for _, m := range []*Map{small, large} {
		allocs := testing.AllocsPerRun(100, func() {
			m.Get("id")
			m.Get(key)
			m.Has("cmd")
			m.Set("id", "m2")
		})
		if allocs != 0 {
			t.Errorf("map of %d: %v allocations per lookup round, want 0", m.Len(), allocs)
		}
	}
}

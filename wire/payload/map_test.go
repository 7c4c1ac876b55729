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

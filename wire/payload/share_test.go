package payload

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"unsafe"
)

// genTree makes a random payload tree; mutate derives a near-copy of it
// (some values changed, keys added, removed or reordered).
func genTree(r *rand.Rand, depth int) any {
	switch k := r.IntN(9); {
	case depth > 3 || k < 3:
		switch r.IntN(6) {
		case 0:
			return fmt.Sprintf("s%d", r.IntN(5))
		case 1:
			return int64(r.IntN(5))
		case 2:
			return r.IntN(2) == 0
		case 3:
			return []byte{byte(r.IntN(3))}
		case 4:
			if r.IntN(4) == 0 {
				return math.Copysign(0, -1) // == 0.0, encodes differently
			}
			return float64(r.IntN(3))
		}
		return nil
	case k < 6:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = genTree(r, depth+1)
		}
		return l
	default:
		m := NewMap()
		for i := range r.IntN(20) {
			var k any = fmt.Sprintf("k%d", i)
			if r.IntN(10) == 0 { // a bytes key: the same text, not the same key type
				k = []byte(k.(string))
			}
			m.SetKey(k, genTree(r, depth+1))
		}
		return m
	}
}

func mutate(r *rand.Rand, v any, depth int) any {
	if r.IntN(8) == 0 {
		return genTree(r, depth)
	}
	switch x := v.(type) {
	case []any:
		c := make([]any, len(x))
		for i := range x {
			c[i] = mutate(r, x[i], depth+1)
		}
		return c
	case *Map:
		c := NewMap()
		items := x.Items()
		if r.IntN(6) == 0 && len(items) > 1 { // another key order
			items = append(items[1:len(items):len(items)], items[0])
		}
		for _, it := range items {
			switch r.IntN(20) {
			case 0, 1:
				continue
			case 2: // the same text as the other key type
				if k, ok := it.Key.(string); ok {
					c.SetKey([]byte(k), mutate(r, it.Value, depth+1))
				} else {
					c.SetKey(string(it.Key.([]byte)), mutate(r, it.Value, depth+1))
				}
				continue
			}
			c.SetKey(it.Key, mutate(r, it.Value, depth+1))
		}
		if r.IntN(5) == 0 {
			c.Set("extra", genTree(r, depth+1))
		}
		return c
	case string:
		return string(append([]byte(nil), x...)) // equal text, its own memory
	}
	return v
}

// TestShareReadsAsOriginal: on generated near-identical trees, the shared
// form encodes to exactly the bytes of the original (same types, keys and
// order) and leaves both inputs untouched.
func TestShareReadsAsOriginal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		ref := genTree(r, 0)
		v := mutate(r, ref, 0)
		want, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		refBytes, _ := Marshal(ref)
		got, err := Marshal(Share(v, ref))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: shared form encodes differently:\n v  %v\nref %v", i, v, ref)
		}
		if w, _ := Marshal(v); !bytes.Equal(w, want) {
			t.Fatalf("case %d: v was modified", i)
		}
		if b, _ := Marshal(ref); !bytes.Equal(b, refBytes) {
			t.Fatalf("case %d: ref was modified", i)
		}
	}
}

// TestShareAliases: equal parts come from ref (the same map, list, string
// memory); differing parts stay v's; a key lookup on the result works.
func TestShareAliases(t *testing.T) {
	ipv4 := []any{"10.0.0.1", "127.0.0.1"}
	osMap := NewMap("os", "Debian", "osrelease", "12")
	ref := NewMap("id", "m1", "os", osMap, "ipv4", ipv4, "num_cpus", int64(2))
	for i := range 20 {
		ref.Set(fmt.Sprintf("g%02d", i), fmt.Sprintf("v%d", i))
	}
	v := DeepClone(ref).(*Map) // equal maps and lists in their own memory
	v.Set("id", "m2")
	out := Share(v, ref).(*Map)
	if id, _ := out.Get("id"); id != "m2" {
		t.Fatalf("id %v, want m2", id)
	}
	if o, _ := out.Get("os"); o != any(osMap) {
		t.Errorf("equal nested map not shared")
	}
	if l, _ := out.Get("ipv4"); &l.([]any)[0] != &ipv4[0] {
		t.Errorf("equal list not shared")
	}
	if g, _ := out.Get("g07"); g != "v7" {
		t.Errorf("g07 = %v (indexed lookup on the shared map)", g)
	}
	if Share(ref, ref) != any(ref) {
		t.Errorf("a tree shared with itself is not returned as is")
	}
	if Share("x", nil) != "x" || Share(nil, ref) != nil {
		t.Errorf("nil handling")
	}
}

// TestShareSameKeysClonesRef: a map with the reference's keys in its order
// becomes a copy of the reference's entries that shares its lookup index,
// with only the differing values replaced.
func TestShareSameKeysClonesRef(t *testing.T) {
	ref := NewMap()
	for i := range 40 {
		ref.Set(fmt.Sprintf("opt%02d", i), fmt.Sprintf("v%d", i))
	}
	ref.Set("id", "dev1")
	v := DeepClone(ref).(*Map)
	v.Set("id", "dev2")
	v.Set("opt07", int64(7)) // another type
	out := Share(v, ref).(*Map)
	if reflect.ValueOf(out.index).Pointer() != reflect.ValueOf(ref.index).Pointer() {
		t.Errorf("the shared map does not share the reference's lookup index")
	}
	for i, it := range out.Items() {
		want := v.Items()[i]
		if it.Key != want.Key || it.Value != want.Value {
			t.Errorf("entry %d = %v, want %v", i, it, want)
		}
	}
	got8, _ := out.Get("opt08")
	ref8, _ := ref.Get("opt08")
	if got8 != "v8" || unsafe.StringData(got8.(string)) != unsafe.StringData(ref8.(string)) {
		t.Errorf("opt08 = %v, not the reference's string", got8)
	}
	if got, _ := out.Get("opt07"); got != int64(7) {
		t.Errorf("opt07 = %v (a lookup through the shared index)", got)
	}
	if got, _ := ref.Get("id"); got != "dev1" {
		t.Errorf("the reference changed: id %v", got)
	}
	// Writing to the copy leaves the reference's index alone.
	out.Set("zzz", true)
	if ref.Has("zzz") || !out.Has("zzz") {
		t.Errorf("a key added to the copy shows in the reference")
	}
}

// TestSharer: the first tree is the reference and is returned as is;
// later trees read as themselves and share its equal parts, also when
// shared from several goroutines at once (run with -race).
func TestSharer(t *testing.T) {
	var s Sharer
	ref := NewMap("id", "dev0", "master", "127.0.0.1", "file_roots", NewMap("base", []any{"/srv/salt"}))
	if s.Share(ref) != any(ref) {
		t.Fatal("the first tree must be kept as it is")
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 50 {
				id := fmt.Sprintf("dev%d-%d", w, n)
				v := DeepClone(ref).(*Map)
				v.Set("id", id)
				want, _ := Marshal(v)
				out := s.Share(v).(*Map)
				if got, _ := Marshal(out); !bytes.Equal(got, want) {
					t.Errorf("%s: the shared form encodes differently", id)
				}
				if fr, _ := out.Get("file_roots"); fr != ref.Map("file_roots") {
					t.Errorf("%s: an equal nested map is not the reference's", id)
				}
			}
		}()
	}
	wg.Wait()
	if got := ref.Str("id"); got != "dev0" {
		t.Errorf("the reference changed: id %q", got)
	}
}

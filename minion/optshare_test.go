package minion

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// optsOf builds an options map the way optionsMap does: many shared
// entries, nested maps and lists, and the per-identity ones.
func optsOf(id string, extra map[string]any) *payload.Map {
	src := map[string]any{
		"id":         id,
		"pki_dir":    "/etc/salt/pki/proxy/" + id,
		"master":     "127.0.0.1",
		"file_roots": map[string]any{"base": []any{"/srv/salt"}},
		"proxy":      map[string]any{"proxytype": "napalm", "host": "10.0.0.1"},
	}
	for i := range 40 {
		src[fmt.Sprintf("opt%02d", i)] = i
	}
	for k, v := range extra {
		src[k] = v
	}
	m := payload.FromGo(src).(*payload.Map)
	freeze(m)
	return m
}

func TestOptionShare(t *testing.T) {
	var s OptionShare
	ref := optsOf("dev1", nil)
	if got := s.share(ref); got != ref {
		t.Fatal("the first identity's options must be kept as they are")
	}
	cases := []struct {
		name  string
		own   *payload.Map
		share bool // the result is a new map sharing the reference's values
	}{
		{"same keys, own id", optsOf("dev2", nil), true},
		{"a nested value differs", optsOf("dev3", map[string]any{"proxy": map[string]any{"proxytype": "napalm", "host": "10.0.0.3"}}), true},
		{"a type differs", optsOf("dev4", map[string]any{"opt05": "5"}), true},
		{"one more key", optsOf("dev5", map[string]any{"zzz": true}), false},
		{"a key replaced", func() *payload.Map {
			m := optsOf("dev6", nil)
			m.Delete("opt39")
			m.Set("opt99", 39)
			return m
		}(), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := s.share(tc.own)
			if !sameValue(got, tc.own) {
				t.Fatalf("shared options differ from the identity's own: %v", got)
			}
			if (got != tc.own) != tc.share {
				t.Fatalf("shared = %v, want %v", got != tc.own, tc.share)
			}
			if !tc.share {
				return
			}
			// Equal values are the reference's, values that differ the identity's.
			for _, it := range tc.own.Items() {
				k := it.Key.(string)
				gv, _ := got.Get(k)
				rv, _ := ref.Get(k)
				if nm, ok := gv.(*payload.Map); ok && sameValue(rv, it.Value) {
					if rm, _ := rv.(*payload.Map); rm != nm {
						t.Errorf("%s: an equal nested map is not the reference's", k)
					}
				}
			}
			if v, _ := got.Get("id"); v != tc.own.Str("id") {
				t.Errorf("id = %v, want %s", v, tc.own.Str("id"))
			}
			if v, _ := ref.Get("id"); v != "dev1" {
				t.Errorf("the reference's id became %v", v)
			}
		})
	}
}

// TestOptionShareConcurrent shares the options of many identities at once
// while the reference's owner reads its map (run with -race).
func TestOptionShareConcurrent(t *testing.T) {
	var s OptionShare
	ref := s.share(optsOf("dev0", nil))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 20 {
				id := fmt.Sprintf("dev%d-%d", w, n)
				got := s.share(optsOf(id, nil))
				if v := got.Str("id"); v != id {
					t.Errorf("id %q, want %q", v, id)
				}
				if v, _ := ref.Get("opt10"); v != int64(10) {
					t.Errorf("reference opt10 = %v", v)
				}
			}
		}()
	}
	wg.Wait()
}

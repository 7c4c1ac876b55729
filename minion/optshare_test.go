package minion

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"unsafe"

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
		name string
		own  *payload.Map
	}{
		{"same keys, own id", optsOf("dev2", nil)},
		{"a nested value differs", optsOf("dev3", map[string]any{"proxy": map[string]any{"proxytype": "napalm", "host": "10.0.0.3"}})},
		{"a type differs", optsOf("dev4", map[string]any{"opt05": "5"})},
		{"one more key", optsOf("dev5", map[string]any{"zzz": true})},
		{"a key replaced", func() *payload.Map {
			m := optsOf("dev6", nil)
			m.Delete("opt39")
			m.Set("opt99", 39)
			return m
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := payload.Marshal(tc.own)
			if err != nil {
				t.Fatal(err)
			}
			got := s.share(tc.own)
			if b, _ := payload.Marshal(got); !bytes.Equal(b, want) {
				t.Fatalf("shared options differ from the identity's own: %v", got)
			}
			if got == tc.own {
				t.Fatal("the options share nothing with the reference")
			}
			// Equal values are the reference's, values that differ the identity's.
			for _, it := range tc.own.Items() {
				k := it.Key.(string)
				gv, _ := got.Get(k)
				rv, ok := ref.Get(k)
				if !ok {
					continue
				}
				ob, _ := payload.Marshal(it.Value)
				rb, _ := payload.Marshal(rv)
				switch rm := rv.(type) {
				case *payload.Map:
					if bytes.Equal(ob, rb) && gv != any(rm) {
						t.Errorf("%s: an equal nested map is not the reference's", k)
					}
				case string:
					if gs, _ := gv.(string); bytes.Equal(ob, rb) && unsafe.StringData(gs) != unsafe.StringData(rm) {
						t.Errorf("%s: an equal string is not the reference's", k)
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

package config

import (
	"math/big"
	"reflect"
	"sync"
	"testing"
)

func sampleOpts(id string, extra map[string]any, drop ...string) map[string]any {
	m := map[string]any{
		"id":         id,
		"cachedir":   "/var/cache/salt/proxy/" + id,
		"master":     "salt",
		"file_roots": map[string]any{"base": []any{"/srv/salt"}},
		"big":        new(big.Int).Lsh(big.NewInt(1), 70),
		"one":        1,
		"flag":       true,
	}
	for k, v := range extra {
		m[k] = v
	}
	for _, k := range drop {
		delete(m, k)
	}
	return m
}

// TestOptsShare: options rebased on shared entries read, list, change and
// delete exactly as their unshared twins do.
func TestOptsShare(t *testing.T) {
	var s OptsShare
	cases := []struct {
		name string
		src  map[string]any
	}{
		{"reference", sampleOpts("dev1", nil)},
		{"own id", sampleOpts("dev2", nil)},
		{"a nested value differs", sampleOpts("dev3", map[string]any{"file_roots": map[string]any{"base": []any{"/srv/dev3"}}})},
		{"types differ", sampleOpts("dev4", map[string]any{"one": 1.0, "flag": "true", "big": big.NewInt(5)})},
		{"more and fewer keys", sampleOpts("dev5", map[string]any{"extra": "x"}, "master")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			twin := NewOpts(RoleProxy, clone(tc.src))
			o := NewOpts(RoleProxy, clone(tc.src))
			s.Share(o)
			s.Share(o) // a second Share changes nothing
			check := func(step string) {
				t.Helper()
				if !reflect.DeepEqual(o.Keys(), twin.Keys()) {
					t.Fatalf("%s: keys %v, want %v", step, o.Keys(), twin.Keys())
				}
				if !reflect.DeepEqual(o.Snapshot(), twin.Snapshot()) {
					t.Fatalf("%s: snapshot %v, want %v", step, o.Snapshot(), twin.Snapshot())
				}
				for _, k := range append(twin.Keys(), "master", "extra", "missing") {
					gv, gok := o.Get(k)
					wv, wok := twin.Get(k)
					if gok != wok || !reflect.DeepEqual(gv, wv) {
						t.Fatalf("%s: Get(%q) = %v, %v; want %v, %v", step, k, gv, gok, wv, wok)
					}
				}
			}
			check("shared")
			for _, op := range []func(*Opts){
				func(x *Opts) { x.Set("master", "other") },
				func(x *Opts) { x.Delete("one") },
				func(x *Opts) { x.Delete("id") },
				func(x *Opts) { x.Set("one", 2) },
				func(x *Opts) { x.Delete("missing") },
			} {
				op(o)
				op(twin)
				check("after a change")
			}
		})
	}
	// The reference entries never change: a fresh set still reads its own.
	o := NewOpts(RoleProxy, sampleOpts("dev9", nil))
	s.Share(o)
	if v, _ := o.Get("master"); v != "salt" {
		t.Errorf("master = %v after other sets changed theirs", v)
	}
	if n, _ := o.Int("one"); n != 1 {
		t.Errorf("one = %d", n)
	}
}

// TestOptsShareConcurrent shares and reads option sets from several
// goroutines (run with -race).
func TestOptsShareConcurrent(t *testing.T) {
	var s OptsShare
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				id := "dev" + string(rune('a'+w))
				o := NewOpts(RoleProxy, sampleOpts(id, nil))
				s.Share(o)
				if o.Str("id") != id || o.Str("master") != "salt" {
					t.Errorf("id %q master %q", o.Str("id"), o.Str("master"))
				}
				o.Set("master", id)
			}
		}()
	}
	wg.Wait()
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

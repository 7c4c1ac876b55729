package target

import (
	"fmt"
	"testing"
)

func BenchmarkMatchCompound(b *testing.B) {
	m := New(Options{})
	mn := testMinion("web1")
	tgt := "web* and G@os:Debian or ( I@role:web and not L@db1,db2 ) and S@10.0.0.0/8 and not E@db\\d"
	if ok, err := m.Match(tgt, "compound", "", mn); !ok || err != nil {
		b.Fatalf("benchmark target does not match: %v", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = m.Match(tgt, "compound", "", mn)
	}
}

func BenchmarkCheckMinionsCompound(b *testing.B) {
	m := New(Options{})
	accepted := make([]string, 1000)
	for i := range accepted {
		accepted[i] = fmt.Sprintf("web%04d", i)
	}
	grains := map[string]any{"os": "Debian", "roles": []any{"web"}}
	cache := func(string) (any, any, bool) { return grains, nil, true }
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = m.CheckMinions("web0* and G@roles:web and not L@web0001", "compound", "", accepted, cache, nil, true)
	}
}

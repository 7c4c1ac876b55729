package render

import (
	"context"
	"testing"
)

// BenchmarkNetworkHosts: network_hosts listing a network from a variable
// (as from pillar) and reading its length, for the sizes of the
// network_bounds corpus family; B/op is the memory the list takes.
func BenchmarkNetworkHosts(b *testing.B) {
	for _, net := range []string{"10.0.0.0/16", "10.16.0.0/12", "10.64.0.0/10", "fe80::/108"} {
		b.Run(net, func(b *testing.B) {
			b.ReportAllocs()
			src := "{% set n = '" + net + "' %}{{ (n|network_hosts)|length }}"
			for i := 0; i < b.N; i++ {
				if _, err := (Jinja{}).Render(context.Background(), src, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

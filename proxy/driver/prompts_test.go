package driver

import (
	"context"
	"testing"
	"time"

	"github.com/gsalt/gsalt/proxy/devsim"
)

// TestPromptCacheShared opens several connections to simulated devices
// with one PromptCache: they share one compiled prompt pattern per
// platform and still drive the device (facts, a configuration change).
func TestPromptCacheShared(t *testing.T) {
	for _, tc := range []struct {
		plat    string
		newDrv  func(Options) (Driver, error)
		session func(Driver) *session
	}{
		{devsim.PlatformIOS, NewIOS, func(d Driver) *session { return d.(*iosDriver).s }},
		{devsim.PlatformEOS, NewEOS, func(d Driver) *session { return d.(*eosDriver).s }},
	} {
		t.Run(tc.plat, func(t *testing.T) {
			ctx := context.Background()
			f, err := devsim.Start(ctx, devsim.Options{Platform: tc.plat, Devices: 3})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cache := NewPromptCache()
			var first *session
			for i := range 3 {
				d, err := tc.newDrv(Options{Host: "127.0.0.1", Port: f.Port(i), Username: "admin", Password: "admin",
					Timeout: 20 * time.Second, Prompts: cache})
				if err != nil {
					t.Fatal(err)
				}
				if err := d.Open(ctx); err != nil {
					t.Fatal(err)
				}
				defer d.Close(ctx)
				facts, err := d.GetFacts(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if want := f.Device(i).Name(); facts.Hostname != want {
					t.Errorf("device %d hostname %q, want %q", i, facts.Hostname, want)
				}
				if err := d.LoadMergeCandidate(ctx, "ntp server 10.0.0.1"); err != nil {
					t.Fatal(err)
				}
				if diff, err := d.CompareConfig(ctx); err != nil || diff == "" {
					t.Fatalf("compare: %q, %v", diff, err)
				}
				if err := d.DiscardConfig(ctx); err != nil {
					t.Fatal(err)
				}
				s := tc.session(d)
				if first == nil {
					first = s
				} else {
					if s.d.Channel.PromptPattern != first.d.Channel.PromptPattern {
						t.Errorf("device %d has its own prompt pattern", i)
					}
					for name, lvl := range s.d.PrivilegeLevels {
						if first.d.PrivilegeLevels[name] != lvl {
							t.Errorf("device %d has its own privilege level %q", i, name)
						}
					}
				}
			}
			if n := cache.Len(); n != 1 {
				t.Errorf("cache holds %d patterns, want 1", n)
			}
		})
	}
}

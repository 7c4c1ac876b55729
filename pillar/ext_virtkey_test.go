package pillar_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestVirtkeyExtPillar: a hypervisor's pillar.ext {virtkey: [vm, key]}
// accepts the VM's key only within ten minutes of an authorization for
// that hypervisor, once.
func TestVirtkeyExtPillar(t *testing.T) {
	pki := t.TempDir()
	if err := os.MkdirAll(filepath.Join(pki, "minions"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := pillar.ConfigFromOpts(pillar.GetterFunc(func(k string) (any, bool) {
		if k == "pillar_roots" {
			return map[string]any{"base": []any{t.TempDir()}}, true
		}
		return nil, false
	}))
	cfg.Opts = payload.NewMap("pki_dir", pki)
	comp := pillar.New(cfg, pillar.Options{Logger: quiet})
	ask := func(vm string) any {
		t.Helper()
		p, err := comp.Compile(context.Background(), pillar.Request{ID: "hyper1",
			Ext: payload.NewMap("virtkey", []any{vm, "PUBKEY " + vm})})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := p.Get("virtkey")
		m, _ := v.(*payload.Map)
		if m == nil {
			t.Fatalf("no virtkey in %v", p)
		}
		r, _ := m.Get(vm)
		return r
	}
	now := time.Now()
	if err := pillar.VirtKeyAuthorize(pki, "hyper1", "vm1", now); err != nil {
		t.Fatal(err)
	}
	if err := pillar.VirtKeyAuthorize(pki, "hyper1", "old", now.Add(-11*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := pillar.VirtKeyAuthorize(pki, "other-hyper", "vm2", now); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		vm   string
		want bool
	}{{"vm1", true}, {"vm1", false}, {"old", false}, {"vm2", false}, {"never", false}} {
		if got := ask(tc.vm); got != tc.want {
			t.Errorf("virtkey %s = %v, want %v", tc.vm, got, tc.want)
		}
	}
	b, err := os.ReadFile(filepath.Join(pki, "minions", "vm1"))
	if err != nil || string(b) != "PUBKEY vm1" {
		t.Errorf("accepted key = %q, %v", b, err)
	}
	for _, vm := range []string{"old", "vm2", "never"} {
		if _, err := os.Stat(filepath.Join(pki, "minions", vm)); err == nil {
			t.Errorf("%s was accepted", vm)
		}
	}
}

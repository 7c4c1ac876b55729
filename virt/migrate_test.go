//go:build libvirt_dlopen

package virt_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/virt/virttest"
	"github.com/gsalt/gsalt/wire/payload"
)

func hvEnv(t *testing.T, uri string) *modules.Env {
	t.Helper()
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(virt.Functions()...); err != nil {
		t.Fatal(err)
	}
	return &modules.Env{ID: "hv", Registry: reg, Grains: payload.NewMap("fqdn", "hv.example"), Pillar: payload.NewMap(),
		Opts: payload.NewMap("virt", payload.NewMap("connection", payload.NewMap("uri", uri)))}
}

// TestMigrateBetweenDaemons live-migrates a running TCG guest from one
// private libvirtd to another on this machine with virt.migrate (the
// daemons have their own host UUIDs). It is a managed migration (Salt's
// default flags): the client talks to both daemons over their unix
// sockets and QEMU streams the guest to the target QEMU over TCP to this
// host's name (it resolves to 127.0.0.1 here). Peer-to-peer (virt:tunnel)
// is not possible between two daemons of one machine: libvirt refuses a
// peer-to-peer target URI without a remote host name, and a unix-socket URI
// cannot carry one; that refusal is checked too. Then the guest runs on the
// target, persistent, and is gone from the source. A guest with its disk
// on a local filesystem both daemons see is refused as unsafe (libvirt
// only treats network filesystems as shared storage), and one with its
// disk in a pool each daemon has privately is refused without
// copy_storage and moved with copy_storage=all (an NBD copy to a volume
// libvirt creates in the target's pool).
func TestMigrateBetweenDaemons(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	if testing.Short() {
		t.Skip("virt: the migration test is skipped in -short mode")
	}
	src, dst := virttest.Start(t), virttest.Start(t)
	t.Cleanup(src.DestroyAll)
	t.Cleanup(dst.DestroyAll)
	env := hvEnv(t, src.URI)
	ctx := context.Background()
	call := func(fun string, args ...any) any {
		t.Helper()
		return env.Registry.Execute(ctx, modules.Binder{}, env, fun, args, nil).Return
	}
	// A diskless guest: nothing to share or copy.
	kw := payload.NewMap("__kwarg__", true, "disk", nil, "nic", nil, "seed", false, "start", true)
	if r := call("virt.init", "mig1", int64(1), int64(64), kw); r != true {
		t.Fatalf("virt.init: %v", r)
	}
	if r := call("virt.vm_state", "mig1"); payload.Text(asMapT(r).Str("mig1")) != "running" {
		t.Fatalf("vm_state before: %v", r)
	}
	// Bad input first: an unknown guest, a bad copy_storage, an unreachable target.
	if r := call("virt.migrate", "nosuch", dst.URI); r != "ERROR: The VM \"nosuch\" is not present" {
		t.Errorf("unknown VM: %v", r)
	}
	if r := call("virt.migrate", "mig1", dst.URI, payload.NewMap("__kwarg__", true, "copy_storage", "bogus")); r != "ERROR executing 'virt.migrate': invalid copy_storage value" {
		t.Errorf("bad copy_storage: %v", r)
	}
	if r := payload.Text(call("virt.migrate", "mig1", "qemu:///system?socket=/nonexistent/sock")); !strings.HasPrefix(r, "ERROR: ") {
		t.Errorf("unreachable target: %v", r)
	}
	env.Opts.(*payload.Map).Map("virt").Set("tunnel", true)
	if r := payload.Text(call("virt.migrate", "mig1", dst.URI)); !strings.Contains(r, "same host") {
		t.Errorf("peer-to-peer migration on one machine: %v", r)
	}
	env.Opts.(*payload.Map).Map("virt").Delete("tunnel")
	start := time.Now()
	if r := call("virt.migrate", "mig1", dst.URI); r != true {
		t.Fatalf("virt.migrate: %v", r)
	}
	t.Logf("live migration took %v", time.Since(start).Round(time.Millisecond))
	if r := call("virt.list_domains"); len(asList(r)) != 0 {
		t.Errorf("source still has %v", r)
	}
	denv := hvEnv(t, dst.URI)
	r := denv.Registry.Execute(ctx, modules.Binder{}, denv, "virt.vm_state", []any{"mig1"}, nil).Return
	if payload.Text(asMapT(r).Str("mig1")) != "running" {
		t.Errorf("target vm_state: %v", r)
	}
	if out, _ := dst.Virsh("list", "--persistent", "--name"); !strings.Contains(out, "mig1") {
		t.Errorf("mig1 is not persistent on the target: %q", out)
	}

	// A disk in a directory both daemons see (the host's /tmp) is still
	// local storage to libvirt, which only trusts network filesystems as
	// shared: it refuses the migration as unsafe (Salt 3006 has no flag
	// to override that either) and the guest keeps running where it was.
	shared := payload.NewMap("__kwarg__", true, "nic", nil, "seed", false, "start", true, "disk", nil,
		"disks", []any{payload.NewMap("name", "system", "size", int64(16))})
	if r := call("virt.init", "mig2", int64(1), int64(64), shared); r != true {
		t.Fatalf("virt.init mig2: %v", r)
	}
	if r := payload.Text(call("virt.migrate", "mig2", dst.URI)); r != "ERROR: Unsafe migration: Migration without shared storage is unsafe" {
		t.Errorf("virt.migrate mig2 (local storage): %v", r)
	}
	if r := call("virt.vm_state", "mig2"); payload.Text(asMapT(r).Str("mig2")) != "running" {
		t.Errorf("mig2 after the refused migration: %v", r)
	}

	// No shared storage: a dir pool at /var/lib/libvirt/images, which each
	// private libvirtd has on its own tmpfs. Without copy_storage the
	// target cannot open the disk; with copy_storage=all libvirt creates
	// the volume in the target's pool and copies it while the guest runs.
	for _, d := range []*virttest.Daemon{src, dst} {
		for _, args := range [][]string{{"pool-define-as", "mpool", "dir", "--target", "/var/lib/libvirt/images"}, {"pool-build", "mpool"}, {"pool-start", "mpool"}} {
			if out, err := d.Virsh(args...); err != nil {
				t.Fatalf("virsh %v: %v %s", args, err, out)
			}
		}
	}
	private := payload.NewMap("__kwarg__", true, "nic", nil, "seed", false, "start", true, "disk", nil,
		"disks", []any{payload.NewMap("name", "system", "size", int64(16), "pool", "mpool")})
	if r := call("virt.init", "mig3", int64(1), int64(64), private); r != true {
		t.Fatalf("virt.init mig3: %v", r)
	}
	if r := payload.Text(call("virt.migrate", "mig3", dst.URI)); !strings.HasPrefix(r, "ERROR: ") {
		t.Errorf("migration without copy_storage of a guest on unshared storage: %v", r)
	}
	if r := call("virt.vm_state", "mig3"); payload.Text(asMapT(r).Str("mig3")) != "running" {
		t.Errorf("mig3 after the refused migration: %v", r)
	}
	start = time.Now()
	if r := call("virt.migrate", "mig3", dst.URI, payload.NewMap("__kwarg__", true, "copy_storage", "all")); r != true {
		t.Fatalf("virt.migrate mig3 copy_storage=all: %v", r)
	}
	t.Logf("live migration with copy_storage=all took %v", time.Since(start).Round(time.Millisecond))
	r = denv.Registry.Execute(ctx, modules.Binder{}, denv, "virt.vm_state", []any{"mig3"}, nil).Return
	if payload.Text(asMapT(r).Str("mig3")) != "running" {
		t.Errorf("target vm_state of mig3: %v", r)
	}
	if out, err := dst.Virsh("vol-list", "mpool"); err != nil || !strings.Contains(out, "mig3_system") {
		t.Errorf("the target's pool has no copy of mig3's disk: %v %s", err, out)
	}
}

func asMapT(v any) *payload.Map {
	m, _ := v.(*payload.Map)
	if m == nil {
		return payload.NewMap()
	}
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

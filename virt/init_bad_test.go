//go:build libvirt_dlopen

package virt_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestInitBadInput: duplicate names, missing images, out-of-range cpu and
// memory and an unreachable libvirtd give clear Salt-style errors, and a
// failed virt.init leaves no disk file and no definition behind.
func TestInitBadInput(t *testing.T) {
	f := newInitFixture(t)
	env := f.env(t)
	ctx := context.Background()
	call := func(fun string, args ...any) any {
		t.Helper()
		return env.Registry.Execute(ctx, modules.Binder{}, env, fun, args, nil).Return
	}
	kw := func(kv ...any) *payload.Map {
		return payload.NewMap(append([]any{"__kwarg__", true, "seed", false, "nic", nil}, kv...)...)
	}
	if r := call("virt.init", "dup", int64(1), int64(64), kw("start", false, "disks", []any{payload.NewMap("name", "system", "size", int64(16))})); r != true {
		t.Fatalf("first init: %v", r)
	}
	disk := filepath.Join(f.images, "dup_system.qcow2")
	before, err := os.Stat(disk)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []any
		want string // prefix of the error
	}{
		{"duplicate name", []any{"dup", int64(1), int64(64), kw("start", false)}, `ERROR: The VM "dup" is already defined`},
		{"missing image", []any{"m1", int64(1), int64(64), kw("image", "salt://images/nope.qcow2")}, "ERROR: Problem while copying image. salt://images/nope.qcow2 - "},
		{"missing local image", []any{"m2", int64(1), int64(64), kw("image", "/nonexistent/disk.qcow2")}, "ERROR: Problem while copying image. /nonexistent/disk.qcow2 - "},
		{"zero cpu", []any{"c0", int64(0), int64(64)}, "ERROR executing 'virt.init': cpu must be a positive number, got 0"},
		{"negative memory", []any{"m0", int64(1), int64(-5)}, "ERROR executing 'virt.init': mem must be a positive number, got -5"},
		{"bad memory unit", []any{"m3", int64(1), "12 parsecs"}, "ERROR executing 'virt.init': invalid mem value: 12 parsecs"},
		{"too many cpus", []any{"c1", int64(100000), int64(64), kw("start", false)}, "ERROR: "},
		{"memory beyond the host", []any{"m4", int64(1), int64(64 << 30), kw("start", true)}, "ERROR: "},
		{"libvirtd down", []any{"d1", int64(1), int64(64), kw("connection", "qemu:///system?socket=/nonexistent/libvirt-sock")},
			"ERROR: Sorry, golden.example failed to open a connection to the hypervisor software at qemu:///system?socket=/nonexistent/libvirt-sock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := payload.Text(call("virt.init", tc.args...))
			if !strings.HasPrefix(r, tc.want) {
				t.Fatalf("got %q, want prefix %q", r, tc.want)
			}
			left, _ := os.ReadDir(f.images)
			if len(left) != 1 || left[0].Name() != "dup_system.qcow2" {
				t.Errorf("files left in the images dir: %v", left)
			}
			doms := call("virt.list_domains")
			if l, _ := doms.([]any); len(l) != 1 || l[0] != "dup" {
				t.Errorf("domains after a failed init: %v", doms)
			}
		})
	}
	after, err := os.Stat(disk)
	if err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the existing guest's disk was touched: %v", err)
	}
	for _, fun := range []string{"virt.vm_info", "virt.start", "virt.purge", "virt.get_disks"} {
		if r := call(fun, "nosuch"); r != `ERROR: The VM "nosuch" is not present` {
			t.Errorf("%s nosuch: %v", fun, r)
		}
	}
	if r := call("virt.purge", "dup"); r != true {
		t.Errorf("purge: %v", r)
	}
	if _, err := os.Stat(disk); !os.IsNotExist(err) {
		t.Errorf("purge left the disk: %v", err)
	}
}

//go:build libvirt_dlopen

package virt_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/virt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestInitBadInput: duplicate names, missing images, an image outside the
// file server, VM and disk names that would put the disk outside the
// images directory, out-of-range cpu and memory and an unreachable
// libvirtd give clear Salt-style errors, and a failed virt.init leaves no
// disk file (in or next to the images directory) and no definition
// behind.
func TestInitBadInput(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
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
		{"image outside the file server", []any{"m5", int64(1), int64(64), kw("image", "salt://../../../../etc/passwd")}, "ERROR: Problem while copying image. salt://../../../../etc/passwd - "},
		{"name escaping the images dir", []any{"../esc", int64(1), int64(64), kw("start", false, "disks", []any{payload.NewMap("name", "system", "size", int64(16))})}, `ERROR executing 'virt.init': the VM name "../esc" would put the disk image outside the images directory`},
		{"disk name escaping the images dir", []any{"m6", int64(1), int64(64), kw("start", false, "disks", []any{payload.NewMap("name", "../../esc", "size", int64(16))})}, `ERROR executing 'virt.init': the disk name "../../esc" would put the disk image outside the images directory`},
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
			if next, _ := filepath.Glob(filepath.Join(filepath.Dir(f.images), "*esc*")); len(next) > 0 {
				t.Errorf("files made outside the images dir: %v", next)
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

// downOnDefine opens real libvirt connections whose DefineDomain first
// stops the daemon: libvirtd goes away in the middle of a virt.init, after
// its disk image was made.
type downOnDefine struct{ stop func() }

func (d downOnDefine) Open(uri string, auth *virt.Auth) (virt.Conn, error) {
	c, err := virt.Libvirt().Open(uri, auth)
	if err != nil {
		return nil, err
	}
	return &stopConn{Conn: c, stop: d.stop}, nil
}

type stopConn struct {
	virt.Conn
	stop func()
}

func (c *stopConn) DefineDomain(xml string) (virt.Domain, error) {
	c.stop()
	return c.Conn.DefineDomain(xml)
}

// TestInitLibvirtdDownMidCall: libvirtd stops while virt.init runs (after
// the disk image is created, before the domain is defined); the call
// fails with libvirt's error ("Cannot write data: Broken pipe") and the
// disk image it made is gone.
func TestInitLibvirtdDownMidCall(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	f := newInitFixture(t)
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register((&virt.Module{Dialer: downOnDefine{stop: f.d.Stop}}).Functions()...); err != nil {
		t.Fatal(err)
	}
	env := f.env(t)
	env.Registry = reg
	kw := payload.NewMap("__kwarg__", true, "seed", false, "nic", nil, "start", false,
		"disks", []any{payload.NewMap("name", "system", "size", int64(16))})
	res := reg.Execute(context.Background(), modules.Binder{}, env, "virt.init", []any{"mid", int64(1), int64(64), kw}, nil)
	msg := payload.Text(res.Return)
	if res.Success || !strings.HasPrefix(msg, "ERROR: ") || len(msg) < len("ERROR: x") {
		t.Fatalf("virt.init with libvirtd gone: success=%v %q", res.Success, msg)
	}
	t.Logf("virt.init: %s", msg)
	if left, _ := os.ReadDir(f.images); len(left) != 0 {
		t.Errorf("files left in the images dir: %v", left)
	}
}

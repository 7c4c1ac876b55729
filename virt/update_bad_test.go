//go:build libvirt_dlopen

package virt_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestUpdateBadInput: virt.update refuses an unknown VM, out-of-range or
// malformed cpu/memory values, an unknown host device and a missing image with clear Salt-style
// errors, and a failed update leaves the definition as it was and no new
// disk file behind.
func TestUpdateBadInput(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	f := newInitFixture(t)
	env := f.env(t)
	ctx := context.Background()
	call := func(fun string, args ...any) any {
		t.Helper()
		return env.Registry.Execute(ctx, modules.Binder{}, env, fun, args, nil).Return
	}
	kw := func(kv ...any) *payload.Map { return payload.NewMap(append([]any{"__kwarg__", true}, kv...)...) }
	system := payload.NewMap("name", "system", "size", int64(16))
	if r := call("virt.init", "b1", int64(1), int64(64), kw("start", false, "seed", false, "nic", nil, "disk", nil, "disks", []any{system})); r != true {
		t.Fatalf("init: %v", r)
	}
	before := payload.Text(call("virt.get_xml", "b1"))
	cases := []struct {
		name string
		args []any
		want string // prefix of the error
	}{
		{"unknown VM", []any{"nosuch", kw("cpu", int64(2))}, `ERROR: The VM "nosuch" is not present`},
		{"negative memory", []any{"b1", kw("mem", int64(-5))}, "ERROR executing 'virt.update': invalid number or unit"},
		{"bad memory unit", []any{"b1", kw("mem", "12 parsecs")}, "ERROR executing 'virt.update': invalid number or unit"},
		{"zero boot memory", []any{"b1", kw("mem", payload.NewMap("boot", int64(0)))}, "ERROR executing 'virt.update': invalid number or unit"},
		{"negative cpu", []any{"b1", kw("cpu", int64(-1))}, "ERROR executing 'virt.update': cpu must be a positive number, got -1"},
		{"zero cpu maximum", []any{"b1", kw("cpu", payload.NewMap("maximum", int64(0)))}, "ERROR executing 'virt.update': cpu.maximum must be a positive number, got 0"},
		{"incomplete cpu topology", []any{"b1", kw("cpu", payload.NewMap("topology", payload.NewMap("sockets", int64(1))))}, "EXCEPTION libvirtError: XML error: Missing required attribute 'cores'"},
		{"bad hugepage size", []any{"b1", kw("mem", payload.NewMap("hugepages", []any{payload.NewMap("size", "2 parsecs")}))}, "ERROR executing 'virt.update': invalid number or unit"},
		{"bad cpuset", []any{"b1", kw("cpu", payload.NewMap("cpuset", "a,b"))}, "ERROR executing 'virt.update': invalid cpuset"},
		{"unknown host device", []any{"b1", kw("host_devices", []any{"pci_nosuch"})}, "ERROR: Failed to get host devices: Node device not found"},
		{"bad boot", []any{"b1", kw("boot", payload.NewMap("kernel", "/k"))}, "ERROR executing 'virt.update': Invalid boot parameters"},
		{"bad efi", []any{"b1", kw("boot", payload.NewMap("efi", "yes"))}, "ERROR executing 'virt.update': Invalid efi value"},
		{"missing image", []any{"b1", kw("disks", []any{system, payload.NewMap("name", "data", "image", "/nonexistent/disk.qcow2")})},
			"ERROR: Problem while copying image. /nonexistent/disk.qcow2 - "},
		{"definition refused", []any{"b1", kw("disks", []any{system, payload.NewMap("name", "data", "size", int64(8))}, "boot_dev", "bogus")},
			"EXCEPTION libvirtError: "},
		{"too many cpus", []any{"b1", kw("cpu", int64(100000))}, "EXCEPTION libvirtError: "},
		{"libvirtd down", []any{"b1", kw("cpu", int64(2), "connection", "qemu:///system?socket=/nonexistent/libvirt-sock")},
			"ERROR: Sorry, golden.example failed to open a connection to the hypervisor software at qemu:///system?socket=/nonexistent/libvirt-sock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := payload.Text(call("virt.update", tc.args...))
			r = strings.Replace(r, "The minion function caused an exception: ", "EXCEPTION ", 1)
			if !strings.HasPrefix(r, tc.want) {
				t.Fatalf("got %q, want prefix %q", r, tc.want)
			}
			if after := payload.Text(call("virt.get_xml", "b1")); after != before {
				t.Errorf("the definition changed:\n%s", after)
			}
			left, _ := os.ReadDir(f.images)
			if len(left) != 1 || left[0].Name() != "b1_system.qcow2" {
				t.Errorf("files in the images dir: %v", left)
			}
		})
	}
	// A good update after all that still works.
	if r, ok := call("virt.update", "b1", kw("cpu", int64(2))).(*payload.Map); !ok || !r.Bool("definition") {
		t.Errorf("update: %v", r)
	}
	if r := call("virt.purge", "b1"); r != true {
		t.Errorf("purge: %v", r)
	}
	if _, err := os.Stat(filepath.Join(f.images, "b1_system.qcow2")); !os.IsNotExist(err) {
		t.Errorf("purge left the disk: %v", err)
	}
}

// TestNetworkDefineBadInput: network_define refuses a CIDR with host bits
// and bad dictionaries with clear errors, and a refused definition leaves
// no network behind; the capabilities calls report an unreachable
// libvirtd clearly.
func TestNetworkDefineBadInput(t *testing.T) {
	keep := requireLibvirt(t)
	defer func() { _ = keep.Close() }()
	env := testEnv(t, "test:///default", &virt.Module{})
	ctx := context.Background()
	call := func(fun string, args ...any) any {
		t.Helper()
		return env.Registry.Execute(ctx, modules.Binder{}, env, fun, args, nil).Return
	}
	kw := func(kv ...any) *payload.Map { return payload.NewMap(append([]any{"__kwarg__", true}, kv...)...) }
	before := payload.Text(call("virt.list_networks"))
	cases := []struct {
		name string
		args []any
		want string
	}{
		{"host bits", []any{"bn1", "virbr41", "nat", kw("ipv4_config", payload.NewMap("cidr", "192.168.41.1/24"))},
			"ERROR executing 'virt.network_define': 192.168.41.1/24 has host bits set"},
		{"not a network", []any{"bn2", "virbr42", "nat", kw("ipv4_config", payload.NewMap("cidr", "nonsense"))},
			"ERROR executing 'virt.network_define': nonsense does not appear to be an IPv4 or IPv6 network"},
		{"nat without an address", []any{"bn3", "virbr43", "nat"}, "EXCEPTION libvirtError: XML error: nat forwarding requested, but no IP address provided for network 'bn3'"},
		{"bad forward mode", []any{"bn4", "virbr44", "bogus"}, "EXCEPTION libvirtError: "},
		{"update of a missing network", []any{"nosuch", "virbr45", "nat"}, "EXCEPTION libvirtError: Network not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fun := "virt.network_define"
			if strings.HasPrefix(tc.name, "update") {
				fun = "virt.network_update"
			}
			r := strings.Replace(payload.Text(call(fun, tc.args...)), "The minion function caused an exception: ", "EXCEPTION ", 1)
			if !strings.HasPrefix(r, tc.want) {
				t.Fatalf("got %q, want prefix %q", r, tc.want)
			}
			if after := payload.Text(call("virt.list_networks")); after != before {
				t.Errorf("networks now %s, were %s", after, before)
			}
		})
	}
	for _, fun := range []string{"virt.capabilities", "virt.domain_capabilities", "virt.all_capabilities", "virt.network_define"} {
		args := []any{kw("connection", "qemu:///system?socket=/nonexistent/libvirt-sock")}
		if fun == "virt.network_define" {
			args = append([]any{"x", "virbr46", "nat"}, args...)
		}
		r := payload.Text(call(fun, args...))
		if !strings.HasPrefix(r, "ERROR: Sorry, golden.example failed to open a connection to the hypervisor software at qemu:///system?socket=/nonexistent/libvirt-sock") {
			t.Errorf("%s with libvirtd down: %q", fun, r)
		}
	}
}

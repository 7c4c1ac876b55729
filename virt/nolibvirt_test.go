package virt_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/wire/payload"
)

// noLibvirtEnv is set in the child process TestNoLibvirt starts with
// libvirt.so.0 hidden.
const noLibvirtEnv = "GSALT_VIRT_TEST_NO_LIBVIRT"

// TestNoLibvirtClearError: with libvirt.so.0 missing (hidden by a bind
// mount in a private mount namespace) every virt.* function returns the
// clear error, nothing crashes, and the other modules keep working. A
// binary built without the libvirt_dlopen tag gives its own clear error.
func TestNoLibvirtClearError(t *testing.T) {
	if os.Getenv(noLibvirtEnv) == "" && virt.Built {
		lib := libvirtPath()
		unshare, err := exec.LookPath("unshare")
		if lib == "" || err != nil || os.Geteuid() != 0 {
			t.Skip("virt: hiding libvirt.so.0 needs root, unshare and an installed libvirt; skipping the missing-library test")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, unshare, "-m", "--propagation", "private", "sh", "-c",
			`mount --bind /dev/null "$0" && exec "$@"`, lib, os.Args[0], "-test.run", "^TestNoLibvirtClearError$", "-test.v")
		cmd.Env = append(os.Environ(), noLibvirtEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("child with libvirt.so.0 hidden: %v\n%s", err, out)
		}
		return
	}
	want := virt.ErrNoLibvirt.Error()
	if !virt.Built {
		want = virt.ErrNotBuilt.Error()
	}
	_, err := virt.Libvirt().Open("test:///default", nil)
	if err == nil || err.Error() != want {
		t.Fatalf("Open: %v, want %q", err, want)
	}
	if virt.Built && !errors.Is(err, virt.ErrNoLibvirt) {
		t.Fatalf("Open: %v is not ErrNoLibvirt", err)
	}
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(virt.Functions()...); err != nil {
		t.Fatal(err)
	}
	env := &modules.Env{ID: "m", Registry: reg, Opts: payload.NewMap(), Grains: payload.NewMap()}
	calls := map[string][]any{"virt.list_domains": nil, "virt.node_info": nil, "virt.vm_info": nil, "virt.list_pools": nil, "virt.freemem": nil,
		"virt.capabilities": nil, "virt.domain_capabilities": nil, "virt.all_capabilities": nil, "virt.update": {"vm1"},
		"virt.network_define": {"n1", "virbr1", "nat"}, "virt.network_update": {"n1", "virbr1", "nat"}, "virt.pool_update": {"p1"}}
	for fun, args := range calls {
		res := reg.Execute(context.Background(), modules.Binder{}, env, fun, args, nil)
		if res.Return != "ERROR: "+want || res.Retcode == 0 {
			t.Errorf("%s: %#v retcode %d, want %q", fun, res.Return, res.Retcode, "ERROR: "+want)
		}
	}
	if res := reg.Execute(context.Background(), modules.Binder{}, env, "test.ping", nil, nil); res.Return != true {
		t.Errorf("test.ping: %#v", res.Return)
	}
}

// libvirtPath is the file libvirt.so.0 resolves to, or "".
func libvirtPath() string {
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		p, err := filepath.EvalSymlinks(filepath.Join(dir, "libvirt.so.0"))
		if err == nil {
			return p
		}
	}
	return ""
}

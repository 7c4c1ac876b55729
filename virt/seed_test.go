package virt_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/virt/virttest"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

func seedEnv(t *testing.T) *modules.Env {
	t.Helper()
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(virt.SeedFunctions()...); err != nil {
		t.Fatal(err)
	}
	return &modules.Env{ID: "hv", Registry: reg, Opts: payload.NewMap("master", "192.0.2.10"), Grains: payload.NewMap()}
}

// readImageFile reads a file of an image's first partition by converting
// it to raw and loop-mounting it read-only.
func readImageFile(t *testing.T, image, name string) string {
	t.Helper()
	raw := filepath.Join(t.TempDir(), "check.raw")
	if out, err := exec.Command("qemu-img", "convert", "-O", "raw", image, raw).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v %s", err, out)
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-o", "ro,loop,offset=1048576", raw, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	defer func() { _ = exec.Command("umount", mnt).Run() }()
	data, err := os.ReadFile(filepath.Join(mnt, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

// TestSeedApply seeds raw, qcow2 and qcow2-overlay images with a minion
// config and a pre-accepted key pair, and reads them back independently.
func TestSeedApply(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("virt: seeding images needs root (loop mounts); skipping")
	}
	for _, tool := range []string{"qemu-img", "qemu-storage-daemon"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("virt: %s is not installed; skipping the seeding test", tool)
		}
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr", "bin", "gsalt-minion"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "base.raw")
	virttest.BuildRaw(t, base, virttest.Image{Root: root, SizeMB: 16})
	key, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	priv, pub := string(crypt.MarshalPrivateKeyPEM(key)), string(crypt.MarshalPublicKeyPEM(&key.PublicKey))
	qcow := filepath.Join(dir, "base.qcow2")
	virttestRun(t, "qemu-img", "convert", "-O", "qcow2", base, qcow)
	cases := []struct {
		name  string
		image func() string
	}{
		{"raw", func() string { p := filepath.Join(dir, "r.raw"); virttestRun(t, "cp", base, p); return p }},
		{"qcow2", func() string { p := filepath.Join(dir, "q.qcow2"); virttestRun(t, "cp", qcow, p); return p }},
		{"qcow2 overlay", func() string {
			p := filepath.Join(dir, "o.qcow2")
			virttestRun(t, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", qcow, p)
			return p
		}},
	}
	env := seedEnv(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := tc.image()
			kw := payload.NewMap("__kwarg__", true, "id_", "vm1", "config", payload.NewMap("master", "10.0.2.2"), "pub_key", pub, "priv_key", priv)
			res := env.Registry.Execute(context.Background(), modules.Binder{}, env, "seed.apply", []any{img, kw}, nil)
			if res.Return != true {
				t.Fatalf("seed.apply: %#v", res.Return)
			}
			if got := readImageFile(t, img, "etc/salt/minion"); got != "id: vm1\nmaster: 10.0.2.2\n" {
				t.Errorf("minion config %q", got)
			}
			if got := readImageFile(t, img, "etc/salt/pki/minion/minion.pem"); got != priv {
				t.Errorf("minion.pem %q", got)
			}
			if got := readImageFile(t, img, "etc/salt/pki/minion/minion.pub"); got != pub {
				t.Errorf("minion.pub %q", got)
			}
		})
	}
	if got := readImageFile(t, qcow, "etc/salt/minion"); !strings.HasPrefix(got, "<") {
		t.Errorf("the overlay's backing file was written: %q", got)
	}
	// Errors: a missing path (Salt's text), an image without a minion.
	res := env.Registry.Execute(context.Background(), modules.Binder{}, env, "seed.apply", []any{"/nonexistent/disk.qcow2"}, nil)
	if res.Return != "/nonexistent/disk.qcow2 does not exist" {
		t.Errorf("missing image: %#v", res.Return)
	}
	empty := filepath.Join(dir, "empty.raw")
	virttest.BuildRaw(t, empty, virttest.Image{Root: t.TempDir(), SizeMB: 16})
	res = env.Registry.Execute(context.Background(), modules.Binder{}, env, "seed.apply", []any{empty, payload.NewMap("__kwarg__", true, "id_", "x")}, nil)
	if res.Return != false {
		t.Errorf("image without a minion: %#v", res.Return)
	}
	notImage := filepath.Join(dir, "garbage.img")
	if err := os.WriteFile(notImage, []byte("not a disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = env.Registry.Execute(context.Background(), modules.Binder{}, env, "seed.apply", []any{notImage}, nil)
	if s, _ := res.Return.(string); !strings.HasPrefix(s, "ERROR: "+notImage+" could not be mounted") {
		t.Errorf("garbage image: %#v", res.Return)
	}
}

func virttestRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v %s", name, err, out)
	}
}

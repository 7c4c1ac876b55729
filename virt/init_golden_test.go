//go:build libvirt_dlopen

package virt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/virt"
	"github.com/gsalt/gsalt/virt/virttest"
	"github.com/gsalt/gsalt/wire/payload"
)

const (
	initCasesFile  = "testdata/init_cases.json"
	initGoldenFile = "testdata/init_golden.json"
)

// initFixture is a private libvirtd with an images dir and a file_roots
// holding salt://images/tiny.qcow2.
type initFixture struct {
	d                    *virttest.Daemon
	images, roots, cache string
	kvm                  bool // the daemon's capabilities offer kvm
}

func newInitFixture(t *testing.T) *initFixture {
	t.Helper()
	d := virttest.Start(t)
	t.Cleanup(d.DestroyAll)
	f := &initFixture{d: d, images: t.TempDir(), roots: t.TempDir(), cache: t.TempDir()}
	caps, err := d.Virsh("capabilities")
	if err != nil {
		t.Fatalf("virsh capabilities: %v", err)
	}
	f.kvm = strings.Contains(caps, "<domain type='kvm'")
	if err := os.MkdirAll(filepath.Join(f.roots, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", filepath.Join(f.roots, "images", "tiny.qcow2"), "64M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v %s", err, out)
	}
	return f
}

func (f *initFixture) env(t *testing.T) *modules.Env {
	t.Helper()
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(virt.Functions()...); err != nil {
		t.Fatal(err)
	}
	return &modules.Env{
		ID:       "hv",
		Registry: reg,
		Opts: payload.NewMap("virt", payload.NewMap("connection", payload.NewMap("uri", f.d.URI), "images", f.images),
			"file_client", "local", "cachedir", f.cache),
		Grains:   payload.NewMap("fqdn", "golden.example"),
		Pillar:   payload.NewMap(),
		Services: map[string]any{"files": builtin.NewLocalFileClient(map[string][]string{"base": {f.roots}}, f.cache, "sha256")},
	}
}

// hostGolden adapts golden text written on a host without /dev/kvm to this
// host: where the capabilities offer kvm, Salt's virt.init (and gsalt's)
// picks kvm over qemu when no hypervisor is given, so the domain's type
// in Salt's XML would be kvm here. Nothing else changes.
func (f *initFixture) hostGolden(t *testing.T, data []byte) []byte {
	t.Helper()
	if !f.kvm {
		return data
	}
	t.Log("this host offers kvm: the golden domains' type qemu is read as kvm, Salt's choice here")
	for _, q := range [][2]string{
		{"<domain type='qemu'>", "<domain type='kvm'>"},
		{`\u003cdomain type='qemu'\u003e`, `\u003cdomain type='kvm'\u003e`},
	} {
		data = bytes.ReplaceAll(data, []byte(q[0]), []byte(q[1]))
	}
	return data
}

// normalizeXML drops what libvirt generates per definition (uuid, MAC
// addresses it made up) and the per-run directories.
func (f *initFixture) normalize(s string, keepMACs []string) string {
	s = strings.ReplaceAll(s, f.images, "IMAGES")
	s = strings.ReplaceAll(s, f.cache, "CACHE")
	s = regexp.MustCompile(`<uuid>[^<]*</uuid>`).ReplaceAllString(s, "<uuid/>")
	s = regexp.MustCompile(`<mac address='([^']*)'/>`).ReplaceAllStringFunc(s, func(m string) string {
		for _, k := range keepMACs {
			if strings.Contains(m, k) {
				return m
			}
		}
		return "<mac address='GENERATED'/>"
	})
	// Tap devices are numbered per daemon and host.
	s = regexp.MustCompile(`dev=(\\?["'])vnet[0-9]+`).ReplaceAllString(s, "dev=${1}vnetN")
	return s
}

// removeAll destroys and undefines every domain of the daemon and empties
// the images directory.
func (f *initFixture) removeAll(t *testing.T) {
	t.Helper()
	out, err := f.d.Virsh("list", "--all", "--name")
	if err != nil {
		t.Fatalf("virsh list: %v", err)
	}
	for _, n := range strings.Fields(out) {
		_, _ = f.d.Virsh("destroy", n)
		if _, err := f.d.Virsh("undefine", "--nvram", n); err != nil {
			t.Errorf("undefine %s: %v", n, err)
		}
	}
	for _, kind := range [][2]string{{"net-list", "net-undefine"}, {"pool-list", "pool-undefine"}} {
		out, _ := f.d.Virsh(kind[0], "--all", "--name")
		for _, n := range strings.Fields(out) {
			_, _ = f.d.Virsh(strings.Replace(kind[1], "undefine", "destroy", 1), n)
			_, _ = f.d.Virsh(kind[1], n)
		}
	}
	_ = os.RemoveAll("/tmp/gsalt-golden-qp1")
	entries, _ := os.ReadDir(f.images)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(f.images, e.Name()))
	}
}

var fixedMACs = []string{"52:54:00:aa:bb:cc", "52:54:00:aa:bb:dd"}

// TestInitXMLGolden: virt.init defines the same domain as Salt 3006's
// virt.init for the same arguments (compared on what libvirt keeps:
// virt.get_xml), and virt.get_disks agrees, on a private libvirtd.
func TestInitXMLGolden(t *testing.T) {
	t.Parallel() // its own private libvirtd, folders and ports
	f := newInitFixture(t)
	if testutil.Update() {
		out := runGoldenScript(t, 5*time.Minute, "init_golden.py", initCasesFile, f.d.URI, f.images, f.roots, f.cache)
		var res []map[string]any
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if x, ok := r["xml"].(string); ok {
				r["xml"] = f.normalize(x, fixedMACs)
			}
			if d, ok := r["disks"]; ok {
				b, _ := json.Marshal(d)
				r["disks"] = json.RawMessage(f.normalize(string(b), nil))
			}
		}
		b, _ := json.MarshalIndent(res, "", " ")
		if err := os.WriteFile(initGoldenFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases, _ := loadJSON(t, initCasesFile).([]any)
	gdata, err := os.ReadFile(initGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var golden []struct {
		Ret   any             `json:"ret"`
		XML   string          `json:"xml"`
		Disks json.RawMessage `json:"disks"`
		Error string          `json:"error"`
	}
	if err := json.Unmarshal(f.hostGolden(t, gdata), &golden); err != nil || len(golden) != len(cases) {
		t.Fatalf("%s: %v, %d results for %d cases: regenerate with -update", initGoldenFile, err, len(golden), len(cases))
	}
	env := f.env(t)
	ctx := context.Background()
	for i, c := range cases {
		cs, _ := c.(*payload.Map)
		name := cs.Str("name")
		kw := payload.NewMap("__kwarg__", true, "start", false, "seed", false)
		for _, it := range cs.Items() {
			kw.SetKey(it.Key, toPayload(it.Value))
		}
		res := env.Registry.Execute(ctx, modules.Binder{}, env, "virt.init", []any{kw}, nil)
		if golden[i].Error != "" {
			if strings.HasPrefix(golden[i].Error, "EXCEPTION ") {
				// Salt crashes here; gsalt must give a clear error instead.
				if s, _ := res.Return.(string); !strings.HasPrefix(s, "ERROR: ") {
					t.Errorf("case %d %s: got %#v, want a clear error (Salt: %s)", i, name, res.Return, golden[i].Error)
				} else {
					t.Logf("case %d %s: Salt crashes (%s); gsalt: %s", i, name, golden[i].Error, s)
				}
			} else if want := "ERROR: " + golden[i].Error; res.Return != want {
				t.Errorf("case %d %s: got %#v, want Salt's %q", i, name, res.Return, want)
			}
			if left, _ := os.ReadDir(f.images); len(left) > 0 {
				t.Errorf("case %d %s: a failed virt.init left %v in the images dir", i, name, left)
			}
			continue
		}
		if res.Return != true {
			t.Errorf("case %d %s: virt.init returned %#v", i, name, res.Return)
			continue
		}
		x := env.Registry.Execute(ctx, modules.Binder{}, env, "virt.get_xml", []any{name}, nil)
		got := f.normalize(payload.Text(x.Return), fixedMACs)
		if got != golden[i].XML {
			t.Errorf("case %d %s: domain XML differs from Salt's\n got:\n%s\nwant:\n%s", i, name, got, golden[i].XML)
		}
		dk := env.Registry.Execute(ctx, modules.Binder{}, env, "virt.get_disks", []any{name}, nil)
		gj, _ := json.Marshal(dk.Return)
		var want, gotv any
		_ = json.Unmarshal([]byte(f.normalize(string(gj), nil)), &gotv)
		_ = json.Unmarshal(golden[i].Disks, &want)
		gb, _ := json.Marshal(gotv)
		wb, _ := json.Marshal(want)
		if !bytes.Equal(gb, wb) {
			t.Errorf("case %d %s: get_disks\n got  %s\n want %s", i, name, gb, wb)
		}
		if p := env.Registry.Execute(ctx, modules.Binder{}, env, "virt.purge", []any{name}, nil); p.Return != true {
			t.Errorf("case %d: purge: %v", i, p.Return)
		}
	}
}

package builtin_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// diskImages creates one empty 8 MiB sparse file per name below dir: the
// "devices" disk.format works on (never a real disk).
func diskImages(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		f, err := os.Create(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(8 << 20); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// diskMagic reports what filesystem an image holds by its superblock
// magic: ext2/3/4 (0xEF53 at 1080) or minix (0x138F/0x2468/0x4D5A at
// 1040), "" for neither.
func diskMagic(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1082 && b[1080] == 0x53 && b[1081] == 0xEF {
		return "ext"
	}
	if len(b) > 1042 {
		switch uint16(b[1040]) | uint16(b[1041])<<8 {
		case 0x137F, 0x138F, 0x2468, 0x2478, 0x4D5A:
			return "minix"
		}
	}
	return ""
}

// TestDiskFormat formats temporary image files with gsalt's disk.format
// and checks the filesystem written, and the failures (an unknown type,
// a missing device, a type refusing an option).
func TestDiskFormat(t *testing.T) {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("disk.format test needs mkfs.ext4 (e2fsprogs)")
	}
	dir := t.TempDir()
	r := goldenRegistry(t)
	env := &modules.Env{ID: "m1", Registry: r, Grains: linuxGrains(), Opts: payload.NewMap("id", "m1")}
	kw := func(kv ...any) *payload.Map { return payload.NewMap(append([]any{"__kwarg__", true}, kv...)...) }
	cases := []struct {
		name  string
		args  []any
		want  bool
		magic string
	}{
		{"ext4 default", []any{"a.img"}, true, "ext"},
		{"ext2 options", []any{"b.img", kw("fs_type", "ext2", "inode_size", int64(8192), "lazy_itable_init", int64(1), "force", true)}, true, "ext"},
		{"minix", []any{"c.img", "minix"}, true, "minix"},
		{"unknown type", []any{"d.img", "nosuchfs"}, false, ""},
		{"missing device", []any{"nodir/e.img"}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := filepath.Join(dir, tc.args[0].(string))
			if filepath.Dir(img) == dir {
				diskImages(t, dir, tc.args[0].(string))
			}
			args := append([]any{img}, tc.args[1:]...)
			res := r.Execute(context.Background(), modules.Binder{}, env, "disk.format", args, nil)
			if res.Retcode != 0 && res.Return != false || res.Return != tc.want {
				t.Fatalf("disk.format %v: retcode %d %v, want %v", args, res.Retcode, res.Return, tc.want)
			}
			if tc.magic != "" {
				if got := diskMagic(t, img); got != tc.magic {
					t.Fatalf("image holds %q, want %q", got, tc.magic)
				}
			}
		})
	}
}

// TestDiskFormatLive runs disk.format beside Salt 3006 (gated on
// GSALT_SALT_SRC) on image files outside the calls' folders, fresh for
// each side; the returns (and error texts) must be equal.
func TestDiskFormatLive(t *testing.T) {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("disk.format test needs mkfs.ext4 (e2fsprogs)")
	}
	dir := t.TempDir()
	imgs := []string{"a.img", "b.img", "c.img", "d.img", "e.img", "f.img", "g.img", "h.img"}
	diskImages(t, dir, imgs...)
	p := func(n string) string { return filepath.Join(dir, n) }
	calls := []salttest.Call{
		{Name: "ext4", Fun: "disk.format", Args: []any{p("a.img")}},
		{Name: "ext3 inode lazy force", Fun: "disk.format", Args: []any{p("b.img"), "ext3"}, Kwargs: []any{"inode_size", int64(8192), "lazy_itable_init", int64(0), "force", true}},
		{Name: "minix ignores ext options", Fun: "disk.format", Args: []any{p("c.img"), "minix"}, Kwargs: []any{"inode_size", int64(256), "force", true}},
		{Name: "xfs options without mkfs.xfs", Fun: "disk.format", Args: []any{p("d.img"), "xfs"}, Kwargs: []any{"inode_size", int64(512), "force", true}},
		{Name: "vfat fat 32", Fun: "disk.format", Args: []any{p("e.img"), "vfat"}, Kwargs: []any{"fat", int64(32)}},
		{Name: "vfat fat 33", Fun: "disk.format", Args: []any{p("f.img"), "vfat"}, Kwargs: []any{"fat", int64(33)}},
		{Name: "unknown type", Fun: "disk.format", Args: []any{p("g.img"), "nosuchfs"}},
		{Name: "missing device", Fun: "disk.format", Args: []any{p("nodir/h.img")}},
		{Name: "int type with inode", Fun: "disk.format", Args: []any{p("h.img"), int64(4)}, Kwargs: []any{"inode_size", int64(256)}},
		{Name: "missing device argument", Fun: "disk.format"},
	}
	runSuite(t, salttest.Suite{Name: "disk_format", Live: true, Grains: linuxGrains(), Calls: calls,
		AfterSalt: func() {
			for _, n := range imgs {
				if err := os.Remove(p(n)); err != nil {
					t.Fatal(err)
				}
			}
			diskImages(t, dir, imgs...)
		}})
	for n, want := range map[string]string{"a.img": "ext", "b.img": "ext", "c.img": "minix", "g.img": ""} {
		if got := diskMagic(t, p(n)); got != want {
			t.Errorf("%s holds %q after gsalt, want %q", n, got, want)
		}
	}
}

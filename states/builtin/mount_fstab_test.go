package builtin

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// mountFstabFixture is the temporary fstab the fstab and swap cases
// manage (config={dir}/fstab).
var mountFstabFixture = map[string]string{"fstab": "# /etc/fstab\nUUID=abc\t/\text4\terrors=remount-ro\t0\t1\n/dev/sdb1 /data xfs defaults,noatime 0 2\n" +
	"{dir}/inswap none swap defaults 0 0\n"}

// TestMountFstabStatesGolden compares mount.fstab_present,
// mount.fstab_absent and mount.swap (a swap file that is not active, so
// nothing is activated: the swapon fails as in Salt) with Salt 3006
// (testdata/golden/mount_fstab.json), with test=True, on a temporary
// fstab; the fstab left behind is compared too.
func TestMountFstabStatesGolden(t *testing.T) {
	fs := func(name, fun string, test bool, kw ...any) salttest.Call {
		c := single(name, fun, test, append(kw, "config", "{dir}/fstab")...)
		c.Files = mountFstabFixture
		return c
	}
	calls := []salttest.Call{
		fs("present new test", "mount.fstab_present", true, "name", "/dev/sdc1", "fs_file", "/srv", "fs_vfstype", "ext4", "mount", false),
		fs("present new test mount", "mount.fstab_present", true, "name", "/dev/sdc1", "fs_file", "/srv", "fs_vfstype", "ext4"),
		fs("present new", "mount.fstab_present", false, "name", "/dev/sdc1", "fs_file", "/srv/", "fs_vfstype", "ext4", "fs_mntops", "noatime", "fs_passno", 2, "mount", false),
		fs("present exists", "mount.fstab_present", false, "name", "/dev/sdb1", "fs_file", "/data", "fs_vfstype", "xfs", "fs_mntops", "noatime,defaults", "fs_passno", 2),
		fs("present exists test", "mount.fstab_present", true, "name", "/dev/sdb1", "fs_file", "/data", "fs_vfstype", "xfs", "fs_mntops", "noatime,defaults", "fs_passno", 2),
		fs("present change", "mount.fstab_present", false, "name", "/dev/sdb1", "fs_file", "/data", "fs_vfstype", "xfs"),
		fs("present change test", "mount.fstab_present", true, "name", "/dev/sdb1", "fs_file", "/data", "fs_vfstype", "xfs"),
		fs("present not_change", "mount.fstab_present", false, "name", "/dev/sdb1", "fs_file", "/data", "fs_vfstype", "xfs", "not_change", true),
		fs("present root uuid", "mount.fstab_present", false, "name", "UUID=abc", "fs_file", "/", "fs_vfstype", "ext4", "fs_mntops", "errors=remount-ro", "fs_passno", 1, "mount_by", "uuid"),
		fs("present mount_by device", "mount.fstab_present", false, "name", "/dev/sdd1", "fs_file", "/opt", "fs_vfstype", "ext4", "mount_by", "device", "mount", false),
		fs("present mount_by label unknown", "mount.fstab_present", false, "name", "/dev/gsalt-no-such-dev", "fs_file", "/opt", "fs_vfstype", "ext4", "mount_by", "label"),
		fs("present match_on list", "mount.fstab_present", false, "name", "/dev/sdx", "fs_file", "/data", "fs_vfstype", "xfs", "match_on", []any{"name", "fstype"}),
		fs("absent", "mount.fstab_absent", false, "name", "/dev/sdb1", "fs_file", "/data/"),
		fs("absent test", "mount.fstab_absent", true, "name", "/dev/sdb1", "fs_file", "/data"),
		fs("absent missing", "mount.fstab_absent", false, "name", "/dev/sdz1", "fs_file", "/nope"),
		fs("absent missing test", "mount.fstab_absent", true, "name", "/dev/sdz1", "fs_file", "/nope"),
		fs("absent wrong device", "mount.fstab_absent", false, "name", "/dev/sdz1", "fs_file", "/data"),
		fs("swap test", "mount.swap", true, "name", "{dir}/swapfile"),
		fs("swap not activated", "mount.swap", false, "name", "{dir}/swapfile"),
		fs("swap not activated no persist", "mount.swap", false, "name", "{dir}/swapfile", "persist", false),
		fs("swap in fstab test", "mount.swap", true, "name", "{dir}/inswap"),
		fs("swap in fstab", "mount.swap", false, "name", "{dir}/inswap"),
	}
	absentConfig := single("absent no config", "mount.fstab_absent", false, "name", "/dev/sdb1", "fs_file", "/data", "config", "{dir}/nope")
	absentConfig.Files = map[string]string{}
	calls = append(calls, absentConfig)
	runStateSuite(t, salttest.Suite{Name: "mount_fstab", Calls: calls, Grains: payloadLinuxGrains()})
}

// TestMountSwapLive activates a real 1 MiB swap file with mount.swap and
// mount.swapon, lists it with mount.swaps and deactivates it with
// mount.swapoff, through Salt 3006 and gsalt in turn, comparing the
// returns. It changes the machine's swap for a moment, so it runs only
// as root with GSALT_SWAP_TEST=1 (and GSALT_SALT_SRC for Salt).
func TestMountSwapLive(t *testing.T) {
	if os.Getenv("GSALT_SWAP_TEST") != "1" || os.Geteuid() != 0 {
		t.Skip("activates a real swap file: set GSALT_SWAP_TEST=1 and run as root")
	}
	saltpeer.Require(t)
	// /tmp may be tmpfs, which cannot hold swap: use a directory on disk.
	dir, err := os.MkdirTemp(".", ".swaptest-")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.Abs(dir)
	sw := filepath.Join(dir, "swapfile")
	t.Cleanup(func() {
		_ = exec.Command("swapoff", sw).Run()
		os.RemoveAll(dir)
	})
	if err := os.WriteFile(sw, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkswap", "-U", "5a17c0de-0000-4000-8000-000000000001", sw).CombinedOutput(); err != nil {
		t.Fatalf("mkswap: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile("/proc/swaps"); strings.Count(string(b), "\n") > 1 {
		t.Skip("another swap area is active: priorities would differ")
	}
	// gsalt activates it for real (so the comparison below is not of two
	// failures).
	reg := suiteRegistry(t)
	env := &modules.Env{ID: "t", Registry: reg, Opts: payload.NewMap("test", false), Log: slog.New(slog.DiscardHandler), Grains: payloadLinuxGrains(), Pillar: &payload.Map{}}
	res := reg.Execute(t.Context(), modules.Binder{}, env, "mount.swapon", []any{sw}, nil)
	var isNew any
	if m, ok := res.Return.(*payload.Map); ok {
		isNew, _ = m.Get("new")
	}
	if isNew != true {
		t.Fatalf("mount.swapon did not activate %s: %v", sw, res.Return)
	}
	if res := reg.Execute(t.Context(), modules.Binder{}, env, "mount.swapoff", []any{sw}, nil); res.Return != true {
		t.Fatalf("mount.swapoff returned %v", res.Return)
	}
	cfg := func(c salttest.Call) salttest.Call {
		c.Files = map[string]string{"fstab": "# empty\n"}
		return c
	}
	ex := func(name, fun string, args ...any) salttest.Call {
		return cfg(salttest.Call{Name: name, Fun: fun, Args: args})
	}
	calls := []salttest.Call{
		ex("swapon", "mount.swapon", sw),
		ex("swapon again", "mount.swapon", sw),
		ex("swaps", "mount.swaps"),
		ex("swapoff", "mount.swapoff", sw),
		ex("swapoff again", "mount.swapoff", sw),
		cfg(single("swap state test", "mount.swap", true, "name", sw, "config", "{dir}/fstab")),
		cfg(single("swap state", "mount.swap", false, "name", sw, "config", "{dir}/fstab")),
		cfg(single("swap state again", "mount.swap", false, "name", sw, "config", "{dir}/fstab")),
		ex("swapoff after state", "mount.swapoff", sw),
		ex("swapon priority", "mount.swapon", sw, 5),
		ex("swapoff after priority", "mount.swapoff", sw),
	}
	runStateSuite(t, salttest.Suite{Name: "mount_swap_live", Live: true, Calls: calls, Grains: payloadLinuxGrains()})
}

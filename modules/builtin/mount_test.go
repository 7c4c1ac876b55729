package builtin_test

import (
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
)

// TestMountFstabGolden compares mount.fstab, set_fstab and rm_fstab on
// temporary fstab files with Salt 3006 (testdata/golden/mount.json).
func TestMountFstabGolden(t *testing.T) {
	fstab := map[string]string{"fstab": "# /etc/fstab\nUUID=abc\t/\text4\terrors=remount-ro\t0\t1\n/dev/sdb1 /data xfs defaults,noatime 0 2\ntmpfs /tmp tmpfs size=1G\n/dev/sdc1 /data xfs defaults 0 0\n\nbad line\n"}
	calls := []salttest.Call{
		{Name: "fstab", Fun: "mount.fstab", Args: []any{"{dir}/fstab"}},
		{Name: "fstab missing", Fun: "mount.fstab", Args: []any{"{dir}/nope"}},
		{Name: "set new", Fun: "mount.set_fstab", Args: []any{"/mnt/x", "/dev/sdd1", "ext4"}, Kwargs: []any{"config", "{dir}/fstab"}},
		{Name: "set present", Fun: "mount.set_fstab", Args: []any{"/data", "/dev/sdb1", "xfs"}, Kwargs: []any{"opts", "noatime,defaults", "pass_num", int64(2), "config", "{dir}/fstab"}},
		{Name: "set change", Fun: "mount.set_fstab", Args: []any{"/data", "/dev/sdb1", "xfs"}, Kwargs: []any{"opts", []any{"defaults"}, "config", "{dir}/fstab"}},
		{Name: "set change test", Fun: "mount.set_fstab", Args: []any{"/data", "/dev/sdb1", "xfs"}, Kwargs: []any{"test", true, "config", "{dir}/fstab"}},
		{Name: "set not_change", Fun: "mount.set_fstab", Args: []any{"/data", "/dev/sdb1", "xfs"}, Kwargs: []any{"not_change", true, "config", "{dir}/fstab"}},
		{Name: "set special by name", Fun: "mount.set_fstab", Args: []any{"/tmp", "tmpfs", "tmpfs"}, Kwargs: []any{"opts", "size=2G", "config", "{dir}/fstab"}},
		{Name: "set match_on list", Fun: "mount.set_fstab", Args: []any{"/data", "/dev/sdx", "xfs"}, Kwargs: []any{"match_on", []any{"name", "fstype"}, "config", "{dir}/fstab"}},
		{Name: "set escaped", Fun: "mount.set_fstab", Args: []any{"/mnt/a b", `/dev/my\ disk`, "ext4"}, Kwargs: []any{"config", "{dir}/fstab"}},
		{Name: "set bad config", Fun: "mount.set_fstab", Args: []any{"/x", "/dev/x", "ext4"}, Kwargs: []any{"config", "{dir}/nope"}},
		{Name: "set bad match_on", Fun: "mount.set_fstab", Args: []any{"/x", "/dev/x", "ext4"}, Kwargs: []any{"match_on", int64(3), "config", "{dir}/fstab"}},
		{Name: "rm", Fun: "mount.rm_fstab", Args: []any{"/data", "/dev/sdb1"}, Kwargs: []any{"config", "{dir}/fstab"}},
		{Name: "rm absent", Fun: "mount.rm_fstab", Args: []any{"/nope", "/dev/nope"}, Kwargs: []any{"config", "{dir}/fstab"}},
		{Name: "rm missing file", Fun: "mount.rm_fstab", Args: []any{"/nope", "/dev/nope"}, Kwargs: []any{"config", "{dir}/nope"}},
	}
	for i := range calls {
		if calls[i].Name != "fstab missing" {
			calls[i].Files = fstab
		}
	}
	runSuite(t, salttest.Suite{Name: "mount", Calls: calls, Grains: linuxGrains()})
}

// TestMountPathGolden compares Salt 3006's path helpers of the mount
// module on paths every Linux host resolves alike (testdata/golden/
// mount_path.json): get_mount_from_path below /proc, through a symlink
// (/proc/self), on a missing path and with "..", get_device_from_path
// (procfs's device "proc") and is_fuse_exec of commands without libfuse
// or missing. The host-dependent ones are in TestDiskLive.
func TestMountPathGolden(t *testing.T) {
	calls := []salttest.Call{
		{Name: "root", Fun: "mount.get_mount_from_path", Args: []any{"/"}},
		{Name: "under proc", Fun: "mount.get_mount_from_path", Args: []any{"/proc/self/status"}},
		{Name: "proc itself", Fun: "mount.get_mount_from_path", Args: []any{"/proc"}},
		{Name: "dotdot", Fun: "mount.get_mount_from_path", Args: []any{"/proc/../proc/sys/../self"}},
		{Name: "missing", Fun: "mount.get_mount_from_path", Args: []any{"/no/such/path/x"}},
		{Name: "device proc", Fun: "mount.get_device_from_path", Args: []any{"/proc/self/status"}},
		{Name: "device sysfs", Fun: "mount.get_device_from_path", Args: []any{"/sys/kernel"}},
		{Name: "fuse sh", Fun: "mount.is_fuse_exec", Args: []any{"sh"}},
		{Name: "fuse missing", Fun: "mount.is_fuse_exec", Args: []any{"no-such-command-x"}},
	}
	runSuite(t, salttest.Suite{Name: "mount_path", Calls: calls, Grains: linuxGrains()})
}

// TestMountSwapGolden compares mount.swapon and mount.swapoff on a path
// that is not an active swap area (nothing is activated: swapon fails as
// in Salt) with Salt 3006 (testdata/golden/mount_swap.json). Real
// activation is TestMountSwapLive in states/builtin (GSALT_SWAP_TEST=1).
func TestMountSwapGolden(t *testing.T) {
	calls := []salttest.Call{
		{Name: "swapon missing file", Fun: "mount.swapon", Args: []any{"{dir}/nofile"}},
		{Name: "swapon priority missing file", Fun: "mount.swapon", Args: []any{"{dir}/nofile", int64(3)}},
		{Name: "swapon not swap", Fun: "mount.swapon", Args: []any{"{dir}/plain"}, Files: map[string]string{"plain": "not a swap area\n"}},
		{Name: "swapoff inactive", Fun: "mount.swapoff", Args: []any{"{dir}/nofile"}},
	}
	runSuite(t, salttest.Suite{Name: "mount_swap", Calls: calls, Grains: linuxGrains()})
}

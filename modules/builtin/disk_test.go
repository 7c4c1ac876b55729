package builtin_test

import (
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestDiskLive compares the disk readers with Salt 3006's on this machine
// (gated on GSALT_SALT_SRC); used/free counts move, so they are compared
// by shape.
func TestDiskLive(t *testing.T) {
	shapeCounts := func(name string, v any) any {
		if s, ok := v.(string); ok && (name == "fstype root" || name == "get_fstype_from_path root") {
			// Salt returns df -T's whole line here; its counts move.
			if f := strings.Fields(s); len(f) > 1 {
				return f[0] + " " + f[1]
			}
			return s
		}
		m, ok := v.(*payload.Map)
		if !ok || name == "blkid" || name == "percent" {
			return v
		}
		out := &payload.Map{}
		for _, it := range m.Items() {
			e, ok := it.Value.(*payload.Map)
			if !ok {
				out.SetKey(it.Key, it.Value)
				continue
			}
			e = e.Clone()
			for _, k := range []string{"used", "available", "capacity", "free", "use"} {
				if e.Has(k) {
					e.Set(k, "n")
				}
			}
			out.SetKey(it.Key, e)
		}
		return out
	}
	calls := []salttest.Call{
		{Name: "usage", Fun: "disk.usage", Sorted: true},
		{Name: "usage flags", Fun: "disk.usage", Args: []any{"l"}, Sorted: true},
		{Name: "usage bad flag", Fun: "disk.usage", Args: []any{"z"}},
		{Name: "inodeusage", Fun: "disk.inodeusage", Sorted: true},
		{Name: "percent missing", Fun: "disk.percent", Args: []any{"/no/such/mount"}},
		{Name: "blkid", Fun: "disk.blkid", Sorted: true},
		{Name: "blkid missing device", Fun: "disk.blkid", Args: []any{"/dev/no-such-dev"}},
		{Name: "fstype root", Fun: "disk.fstype", Args: []any{"/"}},
		{Name: "get_fstype_from_path root", Fun: "disk.get_fstype_from_path", Args: []any{"/"}},
		{Name: "get_fstype_from_path proc", Fun: "disk.get_fstype_from_path", Args: []any{"/proc/self"}},
		{Name: "get_device_from_path root", Fun: "mount.get_device_from_path", Args: []any{"/etc/hostname"}},
		{Name: "get_mount_from_path dir", Fun: "mount.get_mount_from_path", Args: []any{"{dir}/a/b"}},
	}
	runSuite(t, salttest.Suite{Name: "disk_live", Live: true, RealGrains: true, Calls: calls, Normalize: shapeCounts})
}

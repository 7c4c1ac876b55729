// Package builtin holds gsalt's beacon modules, one file per Salt beacon
// module (salt/beacons/<name>.py): inotify, service, diskusage, load,
// status, network_info and pkg. All returns them for beacons.Options.Modules.
//
// The system facts the beacons read come from Linux's /proc (under
// Options.ProcRoot) and statfs, so tests can feed fake files: load reads
// loadavg, network_info net/dev, diskusage self/mounts, status stat,
// meminfo, vmstat and loadavg.
package builtin

import (
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/wire/payload"
)

// Options are the system interfaces of the beacons, replaceable in tests.
type Options struct {
	// ProcRoot is the proc filesystem (default "/proc").
	ProcRoot string
	// Statfs reports the usage of the filesystem mounted at path (default
	// statfs(2)).
	Statfs func(path string) (DiskStat, error)
}

// DiskStat is the part of statvfs(3) psutil's disk_usage uses.
type DiskStat struct {
	Frsize, Blocks, Bfree, Bavail uint64
}

func (o Options) proc(rel string) string {
	root := o.ProcRoot
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(root, rel)
}

func (o Options) statfs(path string) (DiskStat, error) {
	if o.Statfs != nil {
		return o.Statfs(path)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return DiskStat{}, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return DiskStat{Frsize: uint64(st.Frsize), Blocks: st.Blocks, Bfree: st.Bfree, Bavail: st.Bavail}, nil
}

// All returns every beacon module of this package.
func All(o Options) []beacons.Module {
	return []beacons.Module{
		Inotify(),
		Service(),
		DiskUsage(o),
		Load(o),
		Status(o),
		NetworkInfo(o),
		Pkg(),
	}
}

// isList reports whether a beacon configuration is in list form.
func isList(config any) bool {
	_, ok := config.([]any)
	return ok
}

// isMap reports whether v is a dict.
func isMap(v any) bool {
	_, ok := v.(*payload.Map)
	return ok
}

// isBool reports whether v is a Python bool.
func isBool(v any) bool {
	_, ok := v.(bool)
	return ok
}

// logOf returns the beacon's logger.
func logOf(env *beacons.Env) *slog.Logger {
	if env != nil && env.Log != nil {
		return env.Log
	}
	return slog.Default()
}

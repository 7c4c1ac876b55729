package daemon

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// cgroupLimitFiles are where cgroup v2 and v1 publish the memory limit.
var cgroupLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// noLimit is the smallest value treated as "no limit" (cgroup v1 reports
// a huge page-rounded number instead of "max").
const noLimit = 1 << 60

// parseCgroupLimit reads a memory.max or memory.limit_in_bytes value; ok
// is false for "max", unlimited or unreadable values.
func parseCgroupLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= noLimit {
		return 0, false
	}
	return n, true
}

// memLimitFromCgroup sets the Go runtime's soft memory limit to 90% of the
// cgroup's memory limit, so the collector works harder before the kernel's
// OOM killer does, unless GOMEMLIMIT is set (the runtime applies that
// itself) or there is no limit. It returns the limit set, or 0.
func memLimitFromCgroup(files []string) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, ok := parseCgroupLimit(string(b)); ok {
			lim := n / 10 * 9
			debug.SetMemoryLimit(lim)
			return lim
		}
		return 0
	}
	return 0
}

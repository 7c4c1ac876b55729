package daemon

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// ErrBadMemLimit is returned for a gomemlimit option Go's GOMEMLIMIT
// syntax does not accept.
var ErrBadMemLimit = errors.New("daemon: gomemlimit must be a byte count such as 120MiB")

// memUnits are the suffixes GOMEMLIMIT accepts, longest first.
var memUnits = []struct {
	suffix string
	mult   int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// ParseMemLimit parses the gomemlimit option: an integer of bytes, or a
// string in GOMEMLIMIT's syntax (digits with an optional B, KiB, MiB, GiB
// or TiB suffix); "off" or 0 means no limit (returned as 0).
func ParseMemLimit(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int64:
		if x < 0 {
			return 0, fmt.Errorf("%w: %d", ErrBadMemLimit, x)
		}
		return x, nil
	case int:
		return ParseMemLimit(int64(x))
	case string:
		s := strings.TrimSpace(x)
		if s == "" || s == "off" || s == "0" {
			return 0, nil
		}
		mult := int64(1)
		for _, u := range memUnits {
			if strings.HasSuffix(s, u.suffix) {
				s, mult = strings.TrimSuffix(s, u.suffix), u.mult
				break
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/mult {
			return 0, fmt.Errorf("%w: %q", ErrBadMemLimit, x)
		}
		return n * mult, nil
	}
	return 0, fmt.Errorf("%w: %v", ErrBadMemLimit, v)
}

// applyMemLimit sets the Go runtime's soft memory limit: GOMEMLIMIT in the
// environment wins (the runtime applied it), then the gomemlimit option
// (opt, as read from the config), then 90% of a cgroup limit. It returns
// the limit set (0 for none) and where it came from.
func applyMemLimit(opt any, files []string) (int64, string, error) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, "", nil
	}
	lim, err := ParseMemLimit(opt)
	if err != nil {
		return 0, "", err
	}
	if lim > 0 {
		debug.SetMemoryLimit(lim)
		return lim, "gomemlimit", nil
	}
	if lim := memLimitFromCgroup(files); lim > 0 {
		return lim, "cgroup", nil
	}
	return 0, "", nil
}

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

package daemon

import (
	"os"
	"runtime/debug"
)

// GCPercent sets the collector's target (GOGC) to percent unless the GOGC
// environment variable is set (the runtime applies that itself). A
// process whose heap is mostly long-lived state, such as gsalt-proxy's
// thousands of devices, keeps its resident size near its live heap with a
// lower target than Go's 100 (which lets the heap grow to twice the live
// heap between collections). It returns the previous setting, or -1 when
// nothing changed.
func GCPercent(percent int) int {
	if os.Getenv("GOGC") != "" || percent <= 0 {
		return -1
	}
	return debug.SetGCPercent(percent)
}

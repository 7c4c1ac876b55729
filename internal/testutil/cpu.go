package testutil

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU returns the CPU time (user+system) this process has used:
// benchmarks report it per op (cpu-ns/op), which stays comparable on a
// loaded machine where ns/op does not.
func ProcessCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

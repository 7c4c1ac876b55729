// Package testutil holds what gsalt's tests share: the one -update flag
// that regenerates golden files, and Eventually, which polls a condition
// under a deadline instead of sleeping a fixed time.
//
// Deadlines stretch with GSALT_TEST_SLOWDOWN (a factor, default 1) so the
// same tests pass on a loaded CI machine: set it to 3 when the load average
// is several times the core count.
package testutil

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "regenerate golden files in testdata from the real thing (Python, Salt when GSALT_SALT_SRC is set)")

// Update reports whether the test binary runs with -update: golden tests
// then regenerate their files instead of comparing against them.
func Update() bool { return *update }

// Slowdown is the factor deadlines are stretched by: GSALT_TEST_SLOWDOWN
// when it is a number of at least 1, else 1.
func Slowdown() float64 {
	if f, err := strconv.ParseFloat(os.Getenv("GSALT_TEST_SLOWDOWN"), 64); err == nil && f >= 1 {
		return f
	}
	return 1
}

// Scale returns d stretched by Slowdown.
func Scale(d time.Duration) time.Duration { return time.Duration(float64(d) * Slowdown()) }

// Poll calls cond until it returns true or timeout (scaled) passes, waiting
// a little longer between calls each time (1 ms up to 50 ms); it reports
// whether cond became true. Use it where a test has something to do on a
// timeout other than failing.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(Scale(timeout))
	wait := time.Millisecond
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(wait)
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}

// Eventually fails the test (t.Fatalf, so call it from the test's own
// goroutine) unless cond returns true within timeout (scaled by Slowdown).
// what, printed with fmt.Sprint, says what was awaited.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, what ...any) {
	t.Helper()
	if !Poll(timeout, cond) {
		msg := "the condition"
		if len(what) > 0 {
			msg = fmt.Sprint(what...)
		}
		t.Fatalf("timed out after %v waiting for %s", Scale(timeout), msg)
	}
}

package daemon

import (
	"runtime/debug"
	"testing"
)

// TestGCPercent: the target is set without GOGC and left alone with it.
func TestGCPercent(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	for _, tc := range []struct {
		env  string
		want int
	}{{"", 50}, {"80", 100}} {
		t.Setenv("GOGC", tc.env)
		debug.SetGCPercent(100)
		GCPercent(50)
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q: target %d, want %d", tc.env, got, tc.want)
		}
	}
}

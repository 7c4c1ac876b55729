package minion

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// TestProcDelay: a job's proc file is written after Options.ProcDelay (the
// default 20 ms when unset), never before, and not at all for a job that
// ended sooner.
func TestProcDelay(t *testing.T) {
	cases := []struct {
		name  string
		delay time.Duration
		end   bool // the job ends before the delay
	}{
		{"default", 0, false},
		{"a proxy's longer delay", 400 * time.Millisecond, false},
		{"ended first", time.Hour, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &Minion{procDelay: tc.delay, log: slog.New(slog.DiscardHandler)}
			path := filepath.Join(t.TempDir(), "proc")
			start := time.Now()
			pf := m.writeProcLater(path, func() []byte { return []byte("data") })
			if tc.end {
				pf.done()
				if _, err := os.Stat(path); err == nil {
					t.Fatal("a proc file for a job that ended first")
				}
				return
			}
			testutil.Eventually(t, wait, func() bool { _, err := os.Stat(path); return err == nil }, "the proc file")
			want := tc.delay
			if want == 0 {
				want = procDelay
			}
			if el := time.Since(start); el < want {
				t.Fatalf("proc file written after %v, before the delay %v", el, want)
			}
			pf.done()
		})
	}
}

package minion

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// TestEvery: a timer job runs again and again, one run at a time, and no
// run starts after its context ended.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var runs, inside, overlap atomic.Int64
	every(ctx, time.Millisecond, func(context.Context) {
		if inside.Add(1) > 1 {
			overlap.Add(1)
		}
		runs.Add(1)
		time.Sleep(2 * time.Millisecond) // longer than the period: runs must not overlap
		inside.Add(-1)
	})
	testutil.Eventually(t, wait, func() bool { return runs.Load() >= 5 }, "five runs")
	cancel()
	testutil.Eventually(t, wait, func() bool { return inside.Load() == 0 }, "the last run to end")
	after := runs.Load()
	time.Sleep(20 * time.Millisecond) // ten periods: a timer still armed would run
	if n := runs.Load(); n != after {
		t.Errorf("%d runs after the context ended", n-after)
	}
	if n := overlap.Load(); n != 0 {
		t.Errorf("%d runs overlapped", n)
	}
}

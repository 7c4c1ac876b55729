package masterd

import "testing"

// TestConnBudget pins the connection budget the ports share for an open
// files limit and the descriptors the request handlers may hold: all but
// those and fdMargin, and at least 64 connections.
func TestConnBudget(t *testing.T) {
	// The default master on 2 cores: 256 request workers, 4 slow workers
	// (2 each), 16 local workers (2 each).
	const def = 256 + 2*4 + 2*16
	for _, c := range []struct {
		files        uint64
		handlerFiles int
		want         int
	}{
		{200, def, 64},
		{def + fdMargin + 64, def, 64}, // nothing beyond the floor
		{def + fdMargin + 65, def, 65}, // the first descriptor above it
		{1024, def, 1024 - 360},
		{1024, 0, 1024 - fdMargin},  // no handlers: fdMargin alone
		{1024, -5, 1024 - fdMargin}, // a negative count reserves nothing for handlers
		// 10,000 minions under a 20,000-descriptor limit: 19,640
		// connections, 360 descriptors reserved (a fortieth, 500, before).
		{20000, def, 19640},
		{20000, 1600 + 2*4 + 2*16, 18296}, // worker_threads: 100
		{65536, def, 65176},
		{1 << 20, def, 1<<20 - 360},
	} {
		if got := connBudget(c.files, c.handlerFiles); got != c.want {
			t.Errorf("connBudget(%d, %d) = %d, want %d", c.files, c.handlerFiles, got, c.want)
		}
	}
}

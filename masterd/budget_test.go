package masterd

import "testing"

// TestConnBudget pins the connection budget the ports share for an open
// files limit: a reserve of a fortieth, never below 256 nor above 2048,
// and at least 64 connections.
func TestConnBudget(t *testing.T) {
	for _, c := range []struct {
		files uint64
		want  int
	}{
		{200, 64},
		{320, 64},
		{1024, 768},
		{4096, 3840},
		{20000, 19500},
		{65536, 63898},
		{100000, 97952},
		{1 << 20, 1<<20 - 2048},
	} {
		if got := connBudget(c.files); got != c.want {
			t.Errorf("connBudget(%d) = %d, want %d", c.files, got, c.want)
		}
	}
}

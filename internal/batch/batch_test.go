package batch

import (
	"errors"
	"testing"
)

// TestSize pins get_bnum's arithmetic (int(float(p)/100*n), ceil below 1).
func TestSize(t *testing.T) {
	for _, c := range []struct {
		spec string
		n    int
		want int
		err  bool
	}{
		{"3", 10, 3, false}, {" 3 ", 10, 3, false}, {"10%", 10, 1, false}, {"10%", 5, 1, false}, {"50%", 5, 2, false},
		{"100%", 7, 7, false}, {"1%", 1000, 10, false}, {"0%", 10, 0, false}, {"25.5%", 100, 25, false},
		{"x", 10, 0, true}, {"%", 10, 0, true}, {"", 10, 0, true}, {"3.5", 10, 0, true},
	} {
		got, err := Size(c.spec, c.n)
		if (err != nil) != c.err || got != c.want || (err != nil && !errors.Is(err, ErrBadSize)) {
			t.Errorf("Size(%q, %d) = %d, %v; want %d (error %v)", c.spec, c.n, got, err, c.want, c.err)
		}
	}
}

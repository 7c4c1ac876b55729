package event

import (
	"testing"
	"time"
)

// FuzzStamp: Stamp writes what time's own formatting writes for the
// layout of Python's isoformat(), for any instant.
func FuzzStamp(f *testing.F) {
	for _, s := range []int64{0, 1, 999, 1000, 1764374400123456789, -62135596800000000000 / 1000, 253402300799999999999 / 1000} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ns int64) {
		tm := time.Unix(0, ns)
		want := tm.UTC().Format("2006-01-02T15:04:05.000000")
		if tm.Nanosecond() < 1000 {
			want = want[:len(want)-len(".000000")]
		}
		if got := Stamp(tm); got != want {
			t.Fatalf("Stamp(%d) = %q, want %q", ns, got, want)
		}
	})
}

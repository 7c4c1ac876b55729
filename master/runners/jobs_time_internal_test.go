package runners

import (
	"errors"
	"testing"
	"time"
)

func TestParseDateutil(t *testing.T) {
	now := time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC)
	d := func(y, mo, da, h, mi, s, us int) time.Time {
		return time.Date(y, time.Month(mo), da, h, mi, s, us*1000, time.UTC)
	}
	tests := []struct {
		in    string
		want  time.Time
		aware bool
	}{
		{"2026, Nov 22 03:02:47.987634", d(2026, 11, 22, 3, 2, 47, 987634), false},
		{"2015, Mar 16 19:00", d(2015, 3, 16, 19, 0, 0, 0), false},
		{"2015-03-16", d(2015, 3, 16, 0, 0, 0, 0), false},
		{"2015-03-16T19:00:05", d(2015, 3, 16, 19, 0, 5, 0), false},
		{"2015-03-16 19:00:05.5", d(2015, 3, 16, 19, 0, 5, 500000), false},
		{"2015/3/6", d(2015, 3, 6, 0, 0, 0, 0), false},
		{"03/16/2015", d(2015, 3, 16, 0, 0, 0, 0), false},
		{"16/03/2015", d(2015, 3, 16, 0, 0, 0, 0), false},
		{"3/16/15", d(2015, 3, 16, 0, 0, 0, 0), false},
		{"20150316", d(2015, 3, 16, 0, 0, 0, 0), false},
		{"March 16 2015", d(2015, 3, 16, 0, 0, 0, 0), false},
		{"16 March 2015 7pm", d(2015, 3, 16, 19, 0, 0, 0), false},
		{"Monday, Mar 16th 2015 12:30 am", d(2015, 3, 16, 0, 30, 0, 0), false},
		{"Sept 1", d(2026, 9, 1, 0, 0, 0, 0), false},
		{"12/31/2024 11:59pm", d(2024, 12, 31, 23, 59, 0, 0), false},
		{"19:00", d(2026, 11, 22, 19, 0, 0, 0), false},
		{"2015", d(2015, 11, 22, 0, 0, 0, 0), false},
		{"2015-03-16T19:00:00Z", d(2015, 3, 16, 19, 0, 0, 0), true},
		{"2015-03-16 19:00:00+02:00", d(2015, 3, 16, 17, 0, 0, 0), true},
		{"2015-03-16 19:00 UTC", d(2015, 3, 16, 19, 0, 0, 0), true},
	}
	for _, tc := range tests {
		got, err := parseDateutil(tc.in, now)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !got.Time.Equal(tc.want) || got.Aware != tc.aware {
			t.Errorf("%q: got %v aware=%v, want %v aware=%v", tc.in, got.Time, got.Aware, tc.want, tc.aware)
		}
	}
	for _, bad := range []string{"", "not a date", "2015-13-01", "Feb 30 2015", "25:00", "12345"} {
		if _, err := parseDateutil(bad, now); !errors.Is(err, ErrDate) {
			t.Errorf("%q: want ErrDate, got %v", bad, err)
		}
	}
}

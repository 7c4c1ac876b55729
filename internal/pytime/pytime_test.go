package pytime

import (
	"errors"
	"testing"
	"time"
)

// TestParse checks the strings Salt's schedule options take against what
// dateutil.parser.parse(s, default=datetime(2026, 11, 22)) returns
// (python3-dateutil 2.8, printed by hand).
func TestParse(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 15, 0, 0, time.UTC) // a Sunday
	cases := []struct {
		in, want string // want in "2006-01-02 15:04:05.999999999"; "" = error
	}{
		{"Monday 5:00pm", "2026-11-23 17:00:00"},
		{"5pm", "2026-11-22 17:00:00"},
		{"18:30", "2026-11-22 18:30:00"},
		{"2026-11-23T18:30:00", "2026-11-23 18:30:00"},
		{"11/23/2026 6:30pm", "2026-11-23 18:30:00"},
		{"Nov 23 2026 18:30", "2026-11-23 18:30:00"},
		{"23 November 2026", "2026-11-23 00:00:00"},
		{"tuesday", "2026-11-24 00:00:00"},
		{"2026-11-23 18:30:05.5", "2026-11-23 18:30:05.5"},
		{"5:00 pm", "2026-11-22 17:00:00"},
		{"Sunday", "2026-11-22 00:00:00"},
		{"2026-11-23T18:30:00Z", "2026-11-23 18:30:00"},
		{"not a date", ""},
		{"25:00", ""},
		{"13pm", ""},
		{"2026-02-30", ""},
		{"", ""},
	}
	for _, c := range cases {
		got, err := Parse(c.in, now)
		if c.want == "" {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("Parse(%q) = %v, %v; want ErrFormat", c.in, got, err)
			}
			continue
		}
		if err != nil || got.Format("2006-01-02 15:04:05.999999999") != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestStrptimeStrftime(t *testing.T) {
	cases := []struct {
		value, format, want string
		ok                  bool
	}{
		{"2026-11-22T18:30:00", "%Y-%m-%dT%H:%M:%S", "2026-11-22T18:30:00", true},
		{"22/11/26 6:05PM", "%d/%m/%y %I:%M%p", "2026-11-22T18:05:00", true},
		{"1830", "%H%M", "1900-01-01T18:30:00", true},
		{"Nov 22  2026", "%b %d %Y", "2026-11-22T00:00:00", true},
		{"2026-11-22 18:30:00.25", "%Y-%m-%d %H:%M:%S.%f", "2026-11-22T18:30:00", true},
		{"2026-11-22T18:30", "%Y-%m-%dT%H:%M:%S", "", false},
		{"2026-11-22T18:30:00x", "%Y-%m-%dT%H:%M:%S", "", false},
		{"2026-13-01", "%Y-%m-%d", "", false},
		{"2026-02-30", "%Y-%m-%d", "", false},
	}
	for _, c := range cases {
		got, err := Strptime(c.value, c.format, time.UTC)
		if !c.ok {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("Strptime(%q, %q) = %v, %v; want ErrFormat", c.value, c.format, got, err)
			}
			continue
		}
		if err != nil || Strftime(got, "%Y-%m-%dT%H:%M:%S") != c.want {
			t.Errorf("Strptime(%q, %q) = %v, %v; want %s", c.value, c.format, got, err, c.want)
		}
	}
}

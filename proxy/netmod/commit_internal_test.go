package netmod

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules"
)

func TestTimeInAndAt(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ins := []struct {
		in   any
		want time.Duration
	}{
		{int64(5), 5 * time.Minute},
		{"5", 5 * time.Minute},
		{"30m", 30 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"1h", time.Hour},
		{"2:15", 135 * time.Minute},
		{"45s", 45 * time.Second},
		{"soon", -1},
		{int64(0), -1},
		{"0", -1},
		{"1h-5m", -1},
	}
	for _, c := range ins {
		got, err := timeIn(c.in)
		if c.want < 0 {
			if !errors.Is(err, ErrTime) {
				t.Errorf("timeIn(%v) = %v, %v; want ErrTime", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("timeIn(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	ats := []struct {
		in   any
		want string
	}{
		{"18:30", "2026-11-22T18:30"},
		{"1830", "2026-11-22T18:30"},
		{"18h30", "2026-11-22T18:30"},
		{"6pm", "2026-11-22T18:00"},
		{"6:30pm", "2026-11-22T18:30"},
		{"6:30 pm", "2026-11-22T18:30"},
		{"11:00", "2026-11-23T11:00"}, // passed today: tomorrow
		{"2026-11-24T08:00:00", "2026-11-24T08:00"},
		{int64(1795435200), "2026-11-23T12:00"},
		{"lunchtime", ""},
	}
	for _, c := range ats {
		got, err := timeAt(c.in, now)
		if c.want == "" {
			if !errors.Is(err, ErrTime) {
				t.Errorf("timeAt(%v) = %v, %v; want ErrTime", c.in, got, err)
			}
			continue
		}
		if err != nil || got.Format("2006-01-02T15:04") != c.want {
			t.Errorf("timeAt(%v) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}

// TestRevertTime: a revert whose time passed (or nearly) while the commit
// ran is scheduled minRevertLead from the end of the commit, where the
// scheduler sees it; a time far enough ahead is kept.
func TestRevertTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 500_000_000, time.UTC)
	c := &modules.Call{Fun: "net.load_config", Env: &modules.Env{Log: slog.New(slog.DiscardHandler)}}
	for _, tc := range []struct {
		name string
		at   time.Time
		want time.Time
	}{
		{"ahead", now.Add(3 * time.Second), now.Add(3 * time.Second)},
		{"just far enough", now.Add(minRevertLead), now.Add(minRevertLead)},
		{"too close", now.Add(time.Second), now.Add(minRevertLead)},
		{"passed during the commit", now.Add(-4 * time.Second), now.Add(minRevertLead)},
	} {
		if got := revertTime(c, tc.at, now); !got.Equal(tc.want) {
			t.Errorf("%s: revertTime(%v) = %v, want %v", tc.name, tc.at, got, tc.want)
		}
	}
}

package daemon

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/internal/pidfile"
)

func TestLockPidfile(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		flags Flags
		def   string
		want  string // the pidfile written, "" for none
	}{
		{"not asked", Flags{}, filepath.Join(dir, "a.pid"), ""},
		{"--pid-file", Flags{PidFile: filepath.Join(dir, "b.pid")}, "", filepath.Join(dir, "b.pid")},
		{"-d uses the pidfile option", Flags{Daemon: true}, filepath.Join(dir, "c.pid"), filepath.Join(dir, "c.pid")},
	} {
		release, err := tc.flags.LockPidfile(tc.def, "gsalt-test", log)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want == "" {
			if _, err := os.Stat(tc.def); err == nil {
				t.Errorf("%s: pidfile written", tc.name)
			}
		} else {
			if _, err := os.Stat(tc.want); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			if _, err := (&Flags{PidFile: tc.want}).LockPidfile("", "gsalt-test", log); !errors.Is(err, pidfile.ErrRunning) {
				t.Errorf("%s: a second lock gave %v, want ErrRunning", tc.name, err)
			}
		}
		release()
		if tc.want != "" {
			if _, err := os.Stat(tc.want); !os.IsNotExist(err) {
				t.Errorf("%s: pidfile left after release: %v", tc.name, err)
			}
		}
	}
}

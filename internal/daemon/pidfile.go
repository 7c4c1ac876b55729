package daemon

import (
	"errors"
	"log/slog"

	"github.com/gsalt/gsalt/internal/pidfile"
)

// LockPidfile writes the pidfile when asked for (--pid-file) or when
// detached (-d: the configuration's pidfile option, defaultPath), as a
// service needs it. Another running instance is an error
// (pidfile.ErrRunning); a pidfile that cannot be written is only logged.
// release removes it; it is never nil.
func (f *Flags) LockPidfile(defaultPath, name string, log *slog.Logger) (release func(), err error) {
	path := f.PidFile
	if path == "" && f.Daemon {
		path = defaultPath
	}
	if path == "" {
		return func() {}, nil
	}
	pf, err := pidfile.Lock(path, name)
	switch {
	case errors.Is(err, pidfile.ErrRunning):
		return nil, err
	case err != nil:
		log.Warn("cannot write the pidfile", "pidfile", path, "err", err)
		return func() {}, nil
	}
	return func() { pf.Release() }, nil
}

// Package daemon holds what gsalt's long-running commands (gsalt-master,
// gsalt-minion, gsalt-proxy) do the same way before they hand over to
// their library: logging set up from the configuration and the
// --log-level flag, and a context that ends on SIGTERM or SIGINT.
package daemon

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gsalt/gsalt/internal/saltlog"
)

// Logging is a configuration's logging options (log_level, log_file,
// log_level_logfile).
type Logging struct {
	Level, File, FileLevel string
}

// Start sets up logging (flagLevel, when not empty, overrides the
// configuration's console level) and returns a context cancelled by
// SIGTERM or SIGINT. stop releases both; call it when the daemon ends.
// GSALT_CPUPROFILE and GSALT_MEMPROFILE, when set, name files that get a
// pprof CPU profile of the run and a heap profile, written by stop;
// GSALT_PPROF_ADDR (a loopback host:port) serves /debug/pprof/ meanwhile.
// Without GOMEMLIMIT, a cgroup memory limit sets the runtime's soft limit
// to 90% of it.
func Start(l Logging, flagLevel string) (ctx context.Context, logger *slog.Logger, stop func(), err error) {
	level := l.Level
	if flagLevel != "" {
		level = flagLevel
	}
	logger, closeLog, err := saltlog.Setup(os.Stderr, level, l.File, l.FileLevel)
	if err != nil {
		return nil, nil, nil, err
	}
	if lim := memLimitFromCgroup(cgroupLimitFiles); lim > 0 {
		logger.Debug("Go memory limit set from the cgroup", "bytes", lim)
	}
	stopProfiles, err := startProfiles()
	if err != nil {
		closeLog()
		return nil, nil, nil, err
	}
	stopPprof := func() {}
	if addr := os.Getenv(EnvPprofAddr); addr != "" {
		if stopPprof, err = servePprof(addr, logger); err != nil {
			stopProfiles()
			closeLog()
			return nil, nil, nil, err
		}
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	return ctx, logger, func() { stopSignals(); stopPprof(); stopProfiles(); closeLog() }, nil
}

// Package daemon holds what gsalt's long-running commands (gsalt-master,
// gsalt-minion, gsalt-proxy) do the same way before they hand over to
// their library: logging set up from the configuration and the
// --log-level flag, the configuration's warnings logged once logging is
// up, and a context that ends on SIGTERM or SIGINT.
package daemon

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/pprofenv"
	"github.com/gsalt/gsalt/internal/saltlog"
)

// Logging is a configuration's logging options (log_level, log_file,
// log_level_logfile); Opts, when set, supplies the others (log_fmt_*,
// log_datefmt*, log_granular_levels) and the warnings to log.
type Logging struct {
	Level, File, FileLevel string
	Opts                   *config.Opts
}

// Config returns the saltlog configuration of l with flagLevel (when not
// empty) overriding the console level.
func (l Logging) Config(flagLevel string) saltlog.Config {
	c := saltlog.Config{Level: l.Level, File: l.File, FileLevel: l.FileLevel}
	if flagLevel != "" {
		c.Level = flagLevel
	}
	if o := l.Opts; o != nil {
		c.FmtConsole, c.FmtLogfile = o.Str("log_fmt_console"), o.Str("log_fmt_logfile")
		c.DateFmt, c.DateFmtLogfile = o.Str("log_datefmt"), o.Str("log_datefmt_logfile")
		if g := o.Map("log_granular_levels"); len(g) > 0 {
			c.Granular = map[string]string{}
			for k, v := range g {
				if s, ok := v.(string); ok {
					c.Granular[k] = s
				}
			}
		}
	}
	return c
}

// Start sets up logging (flagLevel, when not empty, overrides the
// configuration's console level), logs the configuration's warnings and
// returns a context cancelled by SIGTERM or SIGINT. stop releases both;
// call it when the daemon ends. GSALT_CPUPROFILE and GSALT_MEMPROFILE,
// when set, name files that get a pprof CPU profile of the run and a heap
// profile, written by stop; GSALT_PPROF_ADDR (a loopback host:port) serves
// /debug/pprof/ meanwhile. Without GOMEMLIMIT, the gomemlimit option
// (bytes, or GOMEMLIMIT's syntax such as "120MiB") sets the runtime's soft
// memory limit, or else a cgroup memory limit sets it to 90% of that.
func Start(l Logging, flagLevel string) (ctx context.Context, logger *slog.Logger, stop func(), err error) {
	logger, closeLog, err := saltlog.SetupConfig(os.Stderr, l.Config(flagLevel))
	if err != nil {
		return nil, nil, nil, err
	}
	if l.Opts != nil {
		l.Opts.LogSources(logger)
		for _, w := range l.Opts.Warnings() {
			logger.Warn("config: " + w)
		}
	}
	var memOpt any
	if l.Opts != nil {
		memOpt, _ = l.Opts.Get("gomemlimit")
	}
	if lim, from, err := applyMemLimit(memOpt, cgroupLimitFiles); err != nil {
		logger.Warn("config: ignoring gomemlimit", "err", err)
	} else if lim > 0 {
		logger.Debug("Go memory limit set", "from", from, "bytes", lim)
	}
	stopProfiles, err := startProfiles()
	if err != nil {
		closeLog()
		return nil, nil, nil, err
	}
	stopPprof := func() {}
	if addr := os.Getenv(EnvPprofAddr); addr != "" {
		if _, stopPprof, err = pprofenv.Serve(addr, EnvPprofAddr, logger); err != nil {
			stopProfiles()
			closeLog()
			return nil, nil, nil, err
		}
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	return ctx, logger, func() { stopSignals(); stopPprof(); stopProfiles(); closeLog() }, nil
}

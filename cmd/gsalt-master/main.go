// Command gsalt-master is a Salt 3006 compatible master: it reads Salt's
// master configuration (-c DIR: DIR/master and DIR/master.d/*.conf) and
// serves Salt minions, proxies and the salt CLI on the publish and request
// ports. It runs in the foreground and stops cleanly on SIGTERM or SIGINT.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/masterd"
)

func main() {
	var confDir, logLevel string
	cmd := &cobra.Command{
		Use:           "gsalt-master",
		Short:         "Salt 3006 compatible master",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.LoadMaster(confDir)
			if err != nil {
				return err
			}
			level := cfg.LogLevel
			if logLevel != "" {
				level = logLevel
			}
			logger, closeLog, err := setupLogging(cfg, level)
			if err != nil {
				return err
			}
			defer closeLog()
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return masterd.Run(ctx, cfg, masterd.Options{Logger: logger})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&confDir, "config-dir", "c", config.DefaultConfigDir, "directory holding the master configuration file")
	f.StringVarP(&logLevel, "log-level", "l", "", "console log level: all, garbage, trace, debug, profile, info, warning, error, critical, quiet (default: log_level from the configuration)")
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gsalt-master:", err)
		os.Exit(1)
	}
}

// saltLevel maps Salt's log level names onto slog levels; quiet disables
// the output.
func saltLevel(name string) (slog.Level, bool) {
	switch strings.ToLower(name) {
	case "all", "garbage", "trace", "debug":
		return slog.LevelDebug, true
	case "profile", "info":
		return slog.LevelInfo, true
	case "", "warning", "warn":
		return slog.LevelWarn, true
	case "error", "critical":
		return slog.LevelError, true
	case "quiet":
		return slog.LevelError + 100, true
	}
	return slog.LevelWarn, false
}

// setupLogging logs to stderr at level and to log_file (unless it is a
// syslog URL) at log_level_logfile, or level when that is unset.
func setupLogging(cfg *config.Master, level string) (*slog.Logger, func(), error) {
	lv, ok := saltLevel(level)
	if !ok {
		return nil, nil, fmt.Errorf("invalid log level %q", level)
	}
	handlers := []slog.Handler{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv})}
	closer := func() {}
	if path := cfg.LogFile; path != "" && !strings.Contains(path, "://") {
		flv := lv
		if cfg.LogLevelLogfile != "" {
			if l, ok := saltLevel(cfg.LogLevelLogfile); ok {
				flv = l
			}
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gsalt-master: cannot open log_file %s: %v\n", path, err)
		} else {
			handlers = append(handlers, slog.NewTextHandler(f, &slog.HandlerOptions{Level: flv}))
			closer = func() { f.Close() }
		}
	}
	return slog.New(fanout(handlers)), closer, nil
}

// fanout sends every record to several handlers.
type fanout []slog.Handler

func (f fanout) Enabled(ctx context.Context, l slog.Level) bool {
	for _, h := range f {
		if h.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (f fanout) Handle(ctx context.Context, r slog.Record) error {
	var first error
	for _, h := range f {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (f fanout) WithAttrs(as []slog.Attr) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithAttrs(as)
	}
	return out
}

func (f fanout) WithGroup(name string) slog.Handler {
	out := make(fanout, len(f))
	for i, h := range f {
		out[i] = h.WithGroup(name)
	}
	return out
}

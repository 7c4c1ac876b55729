// Package saltlog sets up log/slog the way Salt daemons log: Salt's level
// names and numbers (garbage 1 … critical 50, quiet), a console handler
// and an optional log_file at its own level, both formatted with Salt's
// Python logging format strings (log_fmt_console, log_fmt_logfile,
// log_datefmt, log_datefmt_logfile), per-logger levels
// (log_granular_levels), and syslog URLs in log_file (udp://, tcp://,
// file:///dev/log).
//
// A record's logger name (%(name)s, and what log_granular_levels match) is
// "gsalt" followed by the record's "component" attribute when it has one
// ("gsalt.reactor", "gsalt.schedule"); granular levels match a name or any
// name below it, and a key spelled with Salt's "salt." prefix matches the
// same component under gsalt's prefix.
package saltlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Salt's level numbers on slog's scale: slog.Level = (salt - 20) * 2 / 5,
// so debug (10) is slog.LevelDebug, info (20) LevelInfo, warning (30)
// LevelWarn and error (40) LevelError.
const (
	LevelGarbage  = slog.Level(-8)
	LevelTrace    = slog.Level(-6)
	LevelProfile  = slog.Level(-2)
	LevelCritical = slog.Level(12)
	// LevelQuiet is above every record: nothing is written.
	LevelQuiet = slog.Level(400)
)

// SaltLevel maps Salt's log level names onto slog levels; quiet disables
// the output. ok is false for an unknown name.
func SaltLevel(name string) (slog.Level, bool) {
	switch strings.ToLower(name) {
	case "all", "garbage":
		return LevelGarbage, true
	case "trace":
		return LevelTrace, true
	case "debug":
		return slog.LevelDebug, true
	case "profile":
		return LevelProfile, true
	case "info":
		return slog.LevelInfo, true
	case "", "warning", "warn":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	case "critical":
		return LevelCritical, true
	case "quiet":
		return LevelQuiet, true
	}
	return slog.LevelWarn, false
}

// levelName is Python logging's levelname for a record level.
func levelName(l slog.Level) string {
	switch {
	case l >= LevelCritical:
		return "CRITICAL"
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	case l >= LevelProfile:
		return "PROFILE"
	case l >= slog.LevelDebug:
		return "DEBUG"
	case l >= LevelTrace:
		return "TRACE"
	}
	return "GARBAGE"
}

// Config is the logging part of a Salt configuration.
type Config struct {
	// Level is log_level (or -l), FileLevel log_level_logfile ("" means
	// Level).
	Level, FileLevel string
	// File is log_file: a path, or a syslog URL.
	File string
	// FmtConsole, FmtLogfile are log_fmt_console and log_fmt_logfile
	// (Python %-style); "" uses Salt's defaults.
	FmtConsole, FmtLogfile string
	// DateFmt, DateFmtLogfile are log_datefmt and log_datefmt_logfile
	// (strftime); "" uses Salt's defaults.
	DateFmt, DateFmtLogfile string
	// Granular is log_granular_levels: logger name -> level name.
	Granular map[string]string
}

// Salt 3006's defaults for the format options.
const (
	DefaultFmtConsole     = "[%(levelname)-8s] %(message)s"
	DefaultFmtLogfile     = "%(asctime)s,%(msecs)03d [%(name)-17s:%(lineno)-4d][%(levelname)-8s][%(process)d] %(message)s"
	DefaultDateFmt        = "%H:%M:%S"
	DefaultDateFmtLogfile = "%Y-%m-%d %H:%M:%S"
)

// Setup logs to console at level and to logFile (a path or a syslog URL)
// at fileLevel, or level when fileLevel is empty, with Salt's default
// formats. The returned function closes the log file.
func Setup(console io.Writer, level, logFile, fileLevel string) (*slog.Logger, func(), error) {
	return SetupConfig(console, Config{Level: level, File: logFile, FileLevel: fileLevel})
}

// SetupConfig is Setup with every logging option of c.
func SetupConfig(console io.Writer, c Config) (*slog.Logger, func(), error) {
	lv, ok := SaltLevel(c.Level)
	if !ok {
		return nil, nil, fmt.Errorf("invalid log level %q", c.Level)
	}
	granular := map[string]slog.Level{}
	for name, l := range c.Granular {
		gl, ok := SaltLevel(l)
		if !ok {
			return nil, nil, fmt.Errorf("log_granular_levels: %s: invalid log level %q", name, l)
		}
		granular[normName(name)] = gl
	}
	pid := os.Getpid()
	consoleFmt, err := parseFormat(or(c.FmtConsole, DefaultFmtConsole))
	if err != nil {
		return nil, nil, fmt.Errorf("log_fmt_console: %w", err)
	}
	handlers := fanout{(&handler{out: &lockedWriter{w: console}, level: lv, format: consoleFmt, datefmt: or(c.DateFmt, DefaultDateFmt), granular: granular, pid: pid}).withMin()}
	closer := func() {}
	if c.File != "" {
		flv := lv
		if c.FileLevel != "" {
			l, ok := SaltLevel(c.FileLevel)
			if !ok {
				return nil, nil, fmt.Errorf("invalid log_level_logfile %q", c.FileLevel)
			}
			flv = l
		}
		fileFmt, err := parseFormat(or(c.FmtLogfile, DefaultFmtLogfile))
		if err != nil {
			return nil, nil, fmt.Errorf("log_fmt_logfile: %w", err)
		}
		h := (&handler{level: flv, format: fileFmt, datefmt: or(c.DateFmtLogfile, DefaultDateFmtLogfile), granular: granular, pid: pid}).withMin()
		if strings.Contains(c.File, "://") {
			sw, err := dialSyslog(c.File)
			if err != nil {
				fmt.Fprintf(console, "cannot log to %s: %v\n", c.File, err)
			} else {
				h.out, h.syslog = sw, true
				closer = func() { sw.Close() }
				handlers = append(handlers, h)
			}
		} else {
			_ = os.MkdirAll(filepath.Dir(c.File), 0o700)
			f, err := os.OpenFile(c.File, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				fmt.Fprintf(console, "cannot open log_file %s: %v\n", c.File, err)
			} else {
				h.out = &lockedWriter{w: f}
				closer = func() { f.Close() }
				handlers = append(handlers, h)
			}
		}
	}
	return slog.New(handlers), closer, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// normName maps Salt's "salt.x" logger names onto gsalt's "gsalt.x".
func normName(n string) string {
	if n == "salt" {
		return "gsalt"
	}
	if strings.HasPrefix(n, "salt.") {
		return "g" + n
	}
	return n
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

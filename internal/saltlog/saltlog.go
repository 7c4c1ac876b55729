// Package saltlog sets up log/slog the way Salt daemons log: Salt's level
// names, a console handler and an optional log_file at its own level.
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

// SaltLevel maps Salt's log level names onto slog levels; quiet disables
// the output. ok is false for an unknown name.
func SaltLevel(name string) (slog.Level, bool) {
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

// Setup logs to console at level and to logFile (unless it is empty
// or a syslog URL) at fileLevel, or level when fileLevel is empty. The
// returned function closes the log file.
func Setup(console io.Writer, level, logFile, fileLevel string) (*slog.Logger, func(), error) {
	lv, ok := SaltLevel(level)
	if !ok {
		return nil, nil, fmt.Errorf("invalid log level %q", level)
	}
	handlers := fanout{slog.NewTextHandler(console, &slog.HandlerOptions{Level: lv})}
	closer := func() {}
	if logFile != "" && !strings.Contains(logFile, "://") {
		flv := lv
		if fileLevel != "" {
			if l, ok := SaltLevel(fileLevel); ok {
				flv = l
			}
		}
		_ = os.MkdirAll(filepath.Dir(logFile), 0o700)
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintf(console, "cannot open log_file %s: %v\n", logFile, err)
		} else {
			handlers = append(handlers, slog.NewTextHandler(f, &slog.HandlerOptions{Level: flv}))
			closer = func() { f.Close() }
		}
	}
	return slog.New(handlers), closer, nil
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

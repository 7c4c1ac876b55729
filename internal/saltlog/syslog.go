package saltlog

import (
	"fmt"
	"log/slog"
	"log/syslog"
	"net/url"
	"strings"
)

// syslogFacilities are Salt's facility names for the path of a log_file
// URL ("udp://host:514/LOG_LOCAL0").
var syslogFacilities = map[string]syslog.Priority{
	"LOG_KERN": syslog.LOG_KERN, "LOG_USER": syslog.LOG_USER, "LOG_MAIL": syslog.LOG_MAIL,
	"LOG_DAEMON": syslog.LOG_DAEMON, "LOG_AUTH": syslog.LOG_AUTH, "LOG_SYSLOG": syslog.LOG_SYSLOG,
	"LOG_LPR": syslog.LOG_LPR, "LOG_NEWS": syslog.LOG_NEWS, "LOG_UUCP": syslog.LOG_UUCP,
	"LOG_CRON": syslog.LOG_CRON, "LOG_AUTHPRIV": syslog.LOG_AUTHPRIV, "LOG_FTP": syslog.LOG_FTP,
	"LOG_LOCAL0": syslog.LOG_LOCAL0, "LOG_LOCAL1": syslog.LOG_LOCAL1, "LOG_LOCAL2": syslog.LOG_LOCAL2,
	"LOG_LOCAL3": syslog.LOG_LOCAL3, "LOG_LOCAL4": syslog.LOG_LOCAL4, "LOG_LOCAL5": syslog.LOG_LOCAL5,
	"LOG_LOCAL6": syslog.LOG_LOCAL6, "LOG_LOCAL7": syslog.LOG_LOCAL7,
}

// syslogWriter sends each record to syslog at its level's priority.
type syslogWriter struct{ w *syslog.Writer }

// dialSyslog opens a log_file syslog URL as Salt reads them:
// udp://host[:port][/FACILITY], tcp://host[:port][/FACILITY] and
// file:///dev/log[/FACILITY] (a local socket). The default port is 514 and
// the default facility LOG_USER.
func dialSyslog(raw string) (*syslogWriter, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("log_file %q: %w", raw, err)
	}
	facility := syslog.LOG_USER
	pickFacility := func(path string) (string, error) {
		i := strings.LastIndexByte(path, '/')
		if i >= 0 && strings.HasPrefix(path[i+1:], "LOG_") {
			f, ok := syslogFacilities[path[i+1:]]
			if !ok {
				return "", fmt.Errorf("log_file %q: unknown syslog facility %s", raw, path[i+1:])
			}
			facility = f
			return path[:i], nil
		}
		return path, nil
	}
	var network, addr string
	switch u.Scheme {
	case "udp", "tcp":
		if _, err := pickFacility(u.Path); err != nil {
			return nil, err
		}
		network, addr = u.Scheme, u.Host
		if u.Port() == "" {
			addr = u.Hostname() + ":514"
		}
	case "file":
		p, err := pickFacility(u.Path)
		if err != nil {
			return nil, err
		}
		network, addr = "unixgram", p
	default:
		return nil, fmt.Errorf("log_file %q: unsupported scheme %q (udp, tcp or file)", raw, u.Scheme)
	}
	w, err := syslog.Dial(network, addr, facility|syslog.LOG_WARNING, "gsalt")
	if err != nil && network == "unixgram" {
		w, err = syslog.Dial("unix", addr, facility|syslog.LOG_WARNING, "gsalt")
	}
	if err != nil {
		return nil, fmt.Errorf("log_file %q: %w", raw, err)
	}
	return &syslogWriter{w: w}, nil
}

func (s *syslogWriter) Write(p []byte) (int, error) {
	return len(p), s.w.Info(strings.TrimRight(string(p), "\n"))
}

// WriteLevel writes line at the syslog priority of l.
func (s *syslogWriter) WriteLevel(l slog.Level, line string) error {
	switch {
	case l >= LevelCritical:
		return s.w.Crit(line)
	case l >= slog.LevelError:
		return s.w.Err(line)
	case l >= slog.LevelWarn:
		return s.w.Warning(line)
	case l >= slog.LevelInfo:
		return s.w.Info(line)
	}
	return s.w.Debug(line)
}

// Close closes the syslog connection.
func (s *syslogWriter) Close() error { return s.w.Close() }

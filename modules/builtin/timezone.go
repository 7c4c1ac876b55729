package builtin

import (
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/modules"
)

// timezoneFunctions is the reading part of Salt's timezone module
// (salt/modules/timezone.py) on Linux.
func timezoneFunctions() []modules.Function {
	return []modules.Function{
		{Name: "timezone.get_zone", Doc: "Get current timezone (i.e. America/Denver)\n\nCLI Example:\n\n    salt '*' timezone.get_zone", Fn: timezoneGetZone},
		{Name: "timezone.get_zonecode", Doc: "Get current timezone (i.e. PST, MDT, etc)\n\nCLI Example:\n\n    salt '*' timezone.get_zonecode",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return timezoneDate(ctx, "+%Z") }},
		{Name: "timezone.get_offset", Doc: "Get current numeric timezone offset from UCT (i.e. -0700)\n\nCLI Example:\n\n    salt '*' timezone.get_offset",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return timezoneDate(ctx, "+%z") }},
	}
}

func timezoneDate(ctx context.Context, format string) (any, error) {
	res, err := pkgRun(ctx, []string{"date", format}, pkgRunOpts{combined: true})
	if err != nil {
		return nil, err
	}
	return res.stdout, nil
}

var timezoneLineRe = regexp.MustCompile(`^Time ?zone:\s+(\S+)`)

func timezoneGetZone(ctx context.Context, c *modules.Call) (any, error) {
	if _, err := which("timedatectl"); err == nil {
		res, err := pkgRun(ctx, []string{"timedatectl"}, pkgRunOpts{})
		if err != nil {
			return nil, err
		}
		if res.retcode != 0 {
			return nil, fmt.Errorf("%w: timedatectl failed: %s", modules.ErrExecution, res.stderr)
		}
		for _, line := range strings.Split(res.stdout, "\n") {
			if m := timezoneLineRe.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				return m[1], nil
			}
		}
		return nil, fmt.Errorf("%w: Failed to parse timedatectl output: %s\nPlease file an issue with SaltStack", modules.ErrExecution, res.stdout)
	}
	g := grainsData(c)
	family := g.Str("os_family")
	switch {
	case strings.EqualFold(g.Str("os"), "centos"):
		return timezoneLocaltime()
	case strings.Contains(family, "RedHat") || strings.Contains(family, "Suse"):
		b, err := os.ReadFile("/etc/sysconfig/clock")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		for _, line := range py.FileLines(string(b)) {
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") || !strings.Contains(line, "ZONE") || !strings.Contains(line, "=") {
				continue
			}
			parts := strings.Split(strings.TrimRight(line, "\n"), "=")
			if z := strings.Trim(parts[len(parts)-1], `'"`); z != "" {
				return z, nil
			}
			return "UTC", nil
		}
		return nil, fmt.Errorf("%w: Unable to get timezone from /etc/sysconfig/clock", modules.ErrExecution)
	case strings.Contains(family, "Debian") || strings.Contains(family, "Gentoo"):
		b, err := os.ReadFile("/etc/timezone")
		if err != nil {
			return nil, fmt.Errorf("%w: Problem reading timezone file /etc/timezone: %s", modules.ErrExecution, timezoneStrerror(err))
		}
		return strings.TrimSpace(string(b)), nil
	case family == "FreeBSD" || family == "OpenBSD" || family == "NetBSD" || family == "NILinuxRT" || family == "Slackware":
		return timezoneLocaltime()
	}
	return nil, fmt.Errorf("%w: Unable to get timezone", modules.ErrExecution)
}

// timezoneLocaltime reads the zone from the /etc/localtime link.
func timezoneLocaltime() (any, error) {
	const tzdir = "/usr/share/zoneinfo/"
	link, err := os.Readlink("/etc/localtime")
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%w: /etc/localtime does not exist", modules.ErrExecution)
		}
		return nil, fmt.Errorf("%w: Unable to determine timezone", modules.ErrExecution)
	}
	if !strings.HasPrefix(link, "/") {
		link = "/etc/" + link
	}
	if p := filepath.Clean(link); strings.HasPrefix(p, tzdir) {
		return p[len(tzdir):], nil
	}
	return nil, fmt.Errorf("%w: Unable to determine timezone", modules.ErrExecution)
}

// timezoneStrerror is an OSError's strerror.
func timezoneStrerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return cmdStrerror(errno)
	}
	return err.Error()
}

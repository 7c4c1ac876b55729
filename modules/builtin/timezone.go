package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/pyfmt"
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
		{Name: "timezone.zone_compare", Spec: modules.Spec{Params: []modules.Param{req("timezone")}},
			Doc: "Compares the given timezone name with the system timezone name by the contents of /etc/localtime and the zone file.\n\nCLI Example:\n\n    salt '*' timezone.zone_compare 'America/Denver'",
			Fn:  timezoneZoneCompare},
		{Name: "timezone.set_zone", Spec: modules.Spec{Params: []modules.Param{req("timezone")}},
			Doc: "Unlinks, then symlinks /etc/localtime to the set timezone.\n\nCLI Example:\n\n    salt '*' timezone.set_zone 'America/Denver'",
			Fn:  timezoneSetZone},
		{Name: "timezone.get_hwclock", Doc: "Get current hardware clock setting (UTC or localtime)\n\nCLI Example:\n\n    salt '*' timezone.get_hwclock",
			Fn: timezoneGetHwclock},
		{Name: "timezone.set_hwclock", Spec: modules.Spec{Params: []modules.Param{req("clock")}},
			Doc: "Sets the hardware clock to be either UTC or localtime\n\nCLI Example:\n\n    salt '*' timezone.set_hwclock UTC",
			Fn:  timezoneSetHwclock},
	}
}

const timezoneZoneinfo = "/usr/share/zoneinfo/"

// timezoneZoneCompare is zone_compare: /etc/localtime has the same bytes
// as the zone's file.
func timezoneZoneCompare(ctx context.Context, c *modules.Call) (any, error) {
	name := pyfmt.Str(c.Args.Get("timezone"))
	zonepath := timezoneZoneinfo + name
	zone, err := os.ReadFile(zonepath)
	if err != nil {
		return nil, fmt.Errorf("%w: Can't find a local timezone \"%s\"", modules.ErrInvocation, name)
	}
	local, err := os.ReadFile("/etc/localtime")
	if err != nil {
		return nil, fmt.Errorf("%w: Failed to read /etc/localtime to determine current timezone: %s", modules.ErrExecution, timezoneStrerror(err))
	}
	return bytes.Equal(zone, local), nil
}

// timezoneSetZone is set_zone on Linux: timedatectl when present (its
// failure ignored), then the /etc/localtime link and the distribution's
// zone file.
func timezoneSetZone(ctx context.Context, c *modules.Call) (any, error) {
	name := pyfmt.Str(c.Args.Get("timezone"))
	if _, err := which("timedatectl"); err == nil {
		_, _ = pkgRun(ctx, []string{"timedatectl", "set-timezone", name}, pkgRunOpts{})
	}
	zonepath := timezoneZoneinfo + name
	if _, err := os.Stat(zonepath); err != nil {
		return "Zone does not exist: " + zonepath, nil
	}
	if err := timezoneRelink(zonepath); err != nil {
		return nil, err
	}
	family := grainsData(c).Str("os_family")
	switch {
	case strings.Contains(family, "RedHat"):
		return true, timezoneSed("/etc/sysconfig/clock", "ZONE=", `ZONE="`+name+`"`)
	case strings.Contains(family, "Suse"):
		return true, timezoneSed("/etc/sysconfig/clock", "TIMEZONE=", `TIMEZONE="`+name+`"`)
	case strings.Contains(family, "Debian") || strings.Contains(family, "Gentoo"):
		if err := os.WriteFile("/etc/timezone", []byte(strings.TrimSpace(name)+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
	}
	return true, nil
}

// timezoneRelink points /etc/localtime at zonepath.
func timezoneRelink(zonepath string) error {
	if err := os.Remove("/etc/localtime"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	if err := os.Symlink(zonepath, "/etc/localtime"); err != nil {
		return fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return nil
}

// timezoneSed replaces the lines starting with prefix by line, like
// file.sed with "^PREFIX.*" (a missing file is left alone).
func timezoneSed(path, prefix, line string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			nl := ""
			if strings.HasSuffix(l, "\n") {
				nl = "\n"
			}
			lines[i] = line + nl
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		return fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return nil
}

// timezoneGetHwclock is get_hwclock: timedatectl's "RTC in local TZ",
// else the distribution's files.
func timezoneGetHwclock(ctx context.Context, c *modules.Call) (any, error) {
	if _, err := which("timedatectl"); err == nil {
		res, err := pkgRun(ctx, []string{"timedatectl"}, pkgRunOpts{})
		if err != nil {
			return nil, err
		}
		if res.retcode != 0 {
			return nil, fmt.Errorf("%w: timedatectl failed: %s", modules.ErrExecution, res.stderr)
		}
		for _, line := range py.SplitLines(res.stdout, false) {
			line = strings.TrimSpace(line)
			if strings.Contains(strings.ToLower(line), "rtc in local tz") {
				parts := strings.Split(line, ":")
				if strings.ToLower(strings.TrimSpace(parts[len(parts)-1])) == "yes" {
					return "localtime", nil
				}
				return "UTC", nil
			}
		}
		return nil, fmt.Errorf("%w: Failed to parse timedatectl output: %s\nPlease file an issue with SaltStack", modules.ErrExecution, res.stdout)
	}
	family := grainsData(c).Str("os_family")
	for _, f := range []string{"RedHat", "Suse", "NILinuxRT"} {
		if strings.Contains(family, f) {
			return timezoneAdjtime(ctx)
		}
	}
	if strings.Contains(family, "Debian") {
		if b, err := os.ReadFile("/etc/default/rcS"); err == nil {
			for _, line := range py.FileLines(string(b)) {
				if strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") || !strings.Contains(line, "UTC=") {
					continue
				}
				parts := strings.Split(strings.TrimRight(line, "\n"), "=")
				if strings.ToLower(parts[len(parts)-1]) == "yes" {
					return "UTC", nil
				}
				return "localtime", nil
			}
		}
		return timezoneAdjtime(ctx)
	}
	if strings.Contains(family, "Gentoo") || strings.Contains(family, "Slackware") {
		return timezoneAdjtime(ctx)
	}
	return nil, nil
}

// timezoneAdjtime is _get_adjtime_timezone: the last line of /etc/adjtime.
func timezoneAdjtime(ctx context.Context) (any, error) {
	if _, err := os.Stat("/etc/adjtime"); err == nil {
		res, err := pkgRun(ctx, []string{"tail", "-n", "1", "/etc/adjtime"}, pkgRunOpts{combined: true})
		if err != nil {
			return nil, err
		}
		return res.stdout, nil
	}
	if _, err := os.Stat("/dev/rtc"); err == nil {
		return nil, fmt.Errorf("%w: Unable to get hwclock timezone from /etc/adjtime", modules.ErrExecution)
	}
	return nil, nil
}

// timezoneSetHwclock is set_hwclock on Linux.
func timezoneSetHwclock(ctx context.Context, c *modules.Call) (any, error) {
	clock := pyfmt.Str(c.Args.Get("clock"))
	if _, err := which("timedatectl"); err == nil {
		v := "false"
		if clock == "localtime" {
			v = "true"
		}
		res, err := pkgRun(ctx, []string{"timedatectl", "set-local-rtc", v}, pkgRunOpts{})
		if err != nil {
			return nil, err
		}
		return res.retcode == 0, nil
	}
	family := grainsData(c).Str("os_family")
	if family == "NILinuxRT" {
		if strings.ToLower(clock) != "utc" {
			return nil, fmt.Errorf("%w: UTC is the only permitted value", modules.ErrInvocation)
		}
		return true, nil
	}
	zone, err := timezoneGetZone(ctx, c)
	if err != nil {
		return nil, err
	}
	zonepath := timezoneZoneinfo + pyfmt.Str(zone)
	if _, err := os.Stat(zonepath); err != nil {
		return nil, fmt.Errorf("%w: Zone '%s' does not exist", modules.ErrExecution, zonepath)
	}
	if err := timezoneRelink(zonepath); err != nil {
		return nil, err
	}
	switch {
	case strings.Contains(family, "RedHat"):
		return true, timezoneSed("/etc/sysconfig/clock", "ZONE=", `ZONE="`+pyfmt.Str(zone)+`"`)
	case strings.Contains(family, "Suse"):
		return true, timezoneSed("/etc/sysconfig/clock", "TIMEZONE=", `TIMEZONE="`+pyfmt.Str(zone)+`"`)
	case strings.Contains(family, "Debian"):
		switch clock {
		case "UTC":
			return true, timezoneSed("/etc/default/rcS", "UTC=", "UTC=yes")
		case "localtime":
			return true, timezoneSed("/etc/default/rcS", "UTC=", "UTC=no")
		}
	case strings.Contains(family, "Gentoo"):
		if clock != "UTC" && clock != "localtime" {
			return nil, fmt.Errorf("%w: Only 'UTC' and 'localtime' are allowed", modules.ErrInvocation)
		}
		if clock == "localtime" {
			clock = "local"
		}
		return true, timezoneSed("/etc/conf.d/hwclock", "clock=", `clock="`+clock+`"`)
	}
	return true, nil
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

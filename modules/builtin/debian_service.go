package builtin

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's debian_service execution module (virtual name
// "service", sysvinit scripts through update-rc.d and service(8)). Salt
// loads it on Debian-like systems that were not booted with systemd, and
// its loader puts the functions of the module loaded first under a
// virtual name: debian_service sorts before systemd_service, so its
// functions win, and systemd_service (loaded in offline mode when
// systemctl is installed) only adds the ones debian_service lacks
// (service.offline, service.masked, service.show, ...). The service
// functions of service.go dispatch here when DebianServiceActive.

// debianServiceOS are the os grains debian_service's __virtual__ accepts.
var debianServiceOS = []string{"Debian", "Raspbian", "Devuan", "NILinuxRT"}

// DebianServiceActive reports whether Salt would load debian_service as
// "service" on this minion: an os grain of the Debian family list and
// systemd not PID 1.
func DebianServiceActive(env *modules.Env) bool {
	if env == nil || env.Grains == nil {
		return false
	}
	v, _ := env.Grains.Get("os")
	name, _ := v.(string)
	return pkgContains(debianServiceOS, name) && !systemdBooted(env)
}

// debianServiceFuncs are debian_service's functions by name.
func debianServiceFuncs() map[string]modules.Func {
	action := func(verb string) modules.Func {
		return func(ctx context.Context, c *modules.Call) (any, error) {
			return debRetcodeOK(ctx, c, debServiceCmd(c, verb), nil)
		}
	}
	return map[string]modules.Func{
		"service.get_enabled": func(ctx context.Context, c *modules.Call) (any, error) {
			set, err := debEnabled(ctx, c)
			if err != nil {
				return nil, err
			}
			return svcSortedSet(set), nil
		},
		"service.get_disabled": func(ctx context.Context, c *modules.Call) (any, error) {
			dis, err := debDisabled(ctx, c)
			if err != nil {
				return nil, err
			}
			return svcSortedSet(dis), nil
		},
		"service.get_all": func(ctx context.Context, c *modules.Call) (any, error) {
			all, err := debAll(ctx, c)
			if err != nil {
				return nil, err
			}
			return svcSortedSet(all), nil
		},
		"service.available": func(ctx context.Context, c *modules.Call) (any, error) {
			all, err := debAll(ctx, c)
			return all[pyfmt.Str(c.Args.Get("name"))], err
		},
		"service.missing": func(ctx context.Context, c *modules.Call) (any, error) {
			all, err := debAll(ctx, c)
			return !all[pyfmt.Str(c.Args.Get("name"))], err
		},
		"service.start":        action("start"),
		"service.stop":         action("stop"),
		"service.restart":      action("restart"),
		"service.reload":       action("reload"),
		"service.force_reload": action("force-reload"),
		"service.status":       debStatus,
		"service.enable": func(ctx context.Context, c *modules.Call) (any, error) {
			q := py.ShlexQuote(pyfmt.Str(c.Args.Get("name")))
			return debRetcodeOK(ctx, c, "insserv "+q+" && update-rc.d "+q+" enable", payload.NewMap("python_shell", true))
		},
		"service.disable": func(ctx context.Context, c *modules.Call) (any, error) {
			return debRetcodeOK(ctx, c, "update-rc.d "+pyfmt.Str(c.Args.Get("name"))+" disable", nil)
		},
		"service.enabled": func(ctx context.Context, c *modules.Call) (any, error) {
			set, err := debEnabled(ctx, c)
			return set[pyfmt.Str(c.Args.Get("name"))], err
		},
		"service.disabled": func(ctx context.Context, c *modules.Call) (any, error) {
			dis, err := debDisabled(ctx, c)
			return dis[pyfmt.Str(c.Args.Get("name"))], err
		},
	}
}

// debPick runs debian_service's fn where DebianServiceActive, else the
// systemd function.
func debPick(deb, systemd modules.Func) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		if DebianServiceActive(c.Env) {
			return deb(ctx, c)
		}
		return systemd(ctx, c)
	}
}

// debServiceCmd is _service_cmd: "service <name> <verb>".
func debServiceCmd(c *modules.Call, verb string) string {
	return "service " + pyfmt.Str(c.Args.Get("name")) + " " + verb
}

// debRetcodeOK is `not cmd.retcode(cmd, **kw)`.
func debRetcodeOK(ctx context.Context, c *modules.Call, cmd string, kw *payload.Map) (bool, error) {
	v, err := callFunction(ctx, c, "cmd.retcode", []any{cmd}, kw)
	if err != nil {
		return false, err
	}
	n, _ := payload.AsInt(v)
	return n == 0, nil
}

// debRunlevel is _get_runlevel: the second field of "runlevel", "2" when
// it says "unknown" (a container).
func debRunlevel(ctx context.Context, c *modules.Call) (string, error) {
	v, err := callFunction(ctx, c, "cmd.run", []any{"runlevel"}, nil)
	if err != nil {
		return "", err
	}
	out := payload.Text(v)
	if strings.Contains(out, "unknown") {
		return "2", nil
	}
	f := strings.Fields(out)
	if len(f) < 2 {
		return "", fmt.Errorf("%w: IndexError: list index out of range", modules.ErrExecution)
	}
	return f[1], nil
}

// debGlob is Python's glob.glob: names starting with a dot are not
// matched by a wildcard.
func debGlob(pattern string) []string {
	matches, _ := filepath.Glob(pattern)
	out := matches[:0]
	for _, m := range matches {
		if !strings.HasPrefix(filepath.Base(m), ".") {
			out = append(out, m)
		}
	}
	return out
}

var debDigitsRe = regexp.MustCompile(`\d+`)

// debEnabled is get_enabled as a set: the S links of the current runlevel
// and rcS, without the S and the sequence number.
func debEnabled(ctx context.Context, c *modules.Call) (map[string]bool, error) {
	rl, err := debRunlevel(ctx, c)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, p := range debGlob("/etc/rc[S" + rl + "].d/S*") {
		parts := debDigitsRe.Split(filepath.Base(p), -1)
		set[parts[len(parts)-1]] = true
	}
	return set, nil
}

// debAll is get_all as a set: the init scripts (not README) and the
// enabled services.
func debAll(ctx context.Context, c *modules.Call) (map[string]bool, error) {
	set, err := debEnabled(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, p := range debGlob("/etc/init.d/*") {
		if n := strings.TrimPrefix(p, "/etc/init.d/"); n != "README" {
			set[n] = true
		}
	}
	return set, nil
}

// debDisabled is get_disabled as a set: all minus enabled.
func debDisabled(ctx context.Context, c *modules.Call) (map[string]bool, error) {
	all, err := debAll(ctx, c)
	if err != nil {
		return nil, err
	}
	en, err := debEnabled(ctx, c)
	if err != nil {
		return nil, err
	}
	for n := range en {
		delete(all, n)
	}
	return all, nil
}

var debGlobRe = regexp.MustCompile(`\*|\?|\[.+\]`)

// debStatus is status(name, sig=None): status.pid with sig, else
// "service <name> status" for the name or every service it matches.
func debStatus(ctx context.Context, c *modules.Call) (any, error) {
	if sig := c.Args.Get("sig"); payload.Truthy(sig) {
		v, err := callFunction(ctx, c, "status.pid", []any{sig}, nil)
		return payload.Truthy(v), err
	}
	name := pyfmt.Str(c.Args.Get("name"))
	glob := debGlobRe.MatchString(name)
	services := []string{name}
	if glob {
		all, err := debAll(ctx, c)
		if err != nil {
			return nil, err
		}
		services = nil
		for n := range all {
			if py.Fnmatch(n, name) {
				services = append(services, n)
			}
		}
		sort.Strings(services)
	}
	results := &payload.Map{}
	for _, s := range services {
		ok, err := debRetcodeOK(ctx, c, "service "+s+" status", payload.NewMap("ignore_retcode", true))
		if err != nil {
			return nil, err
		}
		results.Set(s, ok)
	}
	if glob {
		return results, nil
	}
	v, _ := results.Get(name)
	return v, nil
}

// debianServiceFunctions wraps the systemd functions debian_service also
// defines so that they dispatch per minion.
func debianServiceFunctions(fns []modules.Function) []modules.Function {
	deb := debianServiceFuncs()
	for i, f := range fns {
		if d, ok := deb[f.Name]; ok {
			fns[i].Fn = debPick(d, f.Fn)
		}
	}
	return fns
}

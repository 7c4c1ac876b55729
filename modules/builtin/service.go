package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's systemd_service execution module (virtual name
// "service"). Like Salt 3006 it works in two modes:
//
//   - booted: /run/systemd/system exists (systemd is PID 1); everything is
//     done with systemctl;
//   - offline: systemd is not running but systemctl is installed (a
//     container, a chroot). service.offline returns the systemctl path,
//     service.available raises "Cannot run in offline mode...", commands
//     that need PID 1 fail with systemctl's own error, and the
//     service.running/dead states answer "Running in OFFLINE mode. Nothing
//     to do".
//
// Without systemctl at all (or off Linux) Salt would not load the module;
// every function then fails with the module's load error instead.

// SystemdProbe tells the service and pkg modules whether the minion was
// booted with systemd. A minion (or a test) may register one under the
// service name "systemd"; without it /run/systemd/system is checked, as
// sd_booted(3) does.
type SystemdProbe interface {
	Booted() bool
}

// svcLoadError is the systemd module's __virtual__ message.
const svcLoadError = "The systemd execution module failed to load: only available on Linux systems which have been booted with systemd."

// svcUnitTypes are the unit suffixes Salt treats as units (anything else
// is a service name).
func svcUnitTypes() []string {
	return []string{"service", "socket", "device", "mount", "automount", "swap", "target", "path", "timer"}
}

// systemdBooted reports whether systemd is PID 1.
func systemdBooted(env *modules.Env) bool {
	if p, ok := modules.Service[SystemdProbe](env, "systemd"); ok {
		return p.Booted()
	}
	st, err := os.Stat("/run/systemd/system")
	return err == nil && st.IsDir()
}

var svcVersionRe = regexp.MustCompile(`\w+ ([0-9]+)`)

// systemdVersion is the number "systemctl --version" reports, 0 when it
// cannot be determined.
func systemdVersion(ctx context.Context) int {
	res, err := pkgRun(ctx, []string{"systemctl", "--version"}, pkgRunOpts{combined: true})
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(res.stdout, "\n")
	m := svcVersionRe.FindStringSubmatch(first)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}

// svc is one service.* call: the environment plus the per-call caches
// Salt keeps in __context__ (systemctl status output, systemd version).
type svc struct {
	c       *modules.Call
	booted  bool
	version int
	verOK   bool
	status  map[string]pkgCmdResult
}

// svcNew checks that the module is usable (Salt's __virtual__) and returns
// the call state.
func svcNew(c *modules.Call) (*svc, error) {
	kernel := pkgGrain(c, "kernel", "Linux")
	s := &svc{c: c, booted: systemdBooted(c.Env), status: map[string]pkgCmdResult{}}
	if kernel != "Linux" || (!s.booted && s.systemctl() == "") {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, svcLoadError)
	}
	return s, nil
}

// systemctl is the path of systemctl on PATH, or "".
func (s *svc) systemctl() string {
	p, err := exec.LookPath("systemctl")
	if err != nil {
		return ""
	}
	return p
}

// offline is salt.utils.systemd.offline: not booted but systemctl exists.
func (s *svc) offline() bool { return !s.booted && s.systemctl() != "" }

func (s *svc) sdVersion(ctx context.Context) int {
	if !s.verOK {
		s.version, s.verOK = systemdVersion(ctx), true
	}
	return s.version
}

// hasScope is salt.utils.systemd.has_scope: booted with systemd >= 205.
func (s *svc) hasScope(ctx context.Context) bool {
	return s.booted && s.sdVersion(ctx) >= 205
}

// svcCanonical is _canonical_unit_name: names not ending in a unit type
// get ".service" (Salt tests the suffix without the dot).
func svcCanonical(name string) string {
	for _, t := range svcUnitTypes() {
		if strings.HasSuffix(name, t) {
			return name
		}
	}
	return name + ".service"
}

// svcRoot is _root: path relocated below root.
func svcRoot(path, root string) string {
	if root == "" {
		return path
	}
	return filepath.Join(root, strings.TrimPrefix(path, "/"))
}

// cmd builds a systemctl command line like _systemctl_cmd.
func (s *svc) cmd(ctx context.Context, action []string, name *string, scope, noBlock bool, root string) []string {
	var ret []string
	if scope && s.hasScope(ctx) && payload.Truthy(configGet(s.c.Env, "systemd.scope", true)) {
		run, err := exec.LookPath("systemd-run")
		if err != nil {
			run = "systemd-run"
		}
		ret = append(ret, run, "--scope")
	}
	ctl := s.systemctl()
	if ctl == "" {
		ctl = "systemctl"
	}
	ret = append(ret, ctl)
	if noBlock {
		ret = append(ret, "--no-block")
	}
	if root != "" {
		ret = append(ret, "--root", root)
	}
	ret = append(ret, action...)
	if name != nil {
		ret = append(ret, svcCanonical(*name))
	}
	if pkgContains(ret, "status") {
		ret = append(ret, "-n", "0")
	}
	return ret
}

func (s *svc) run(ctx context.Context, argv []string, combined bool) (pkgCmdResult, error) {
	return pkgRun(ctx, argv, pkgRunOpts{combined: combined})
}

// ctlStatus is _systemctl_status: "systemctl status <unit> -n 0" with
// stderr folded into stdout, cached for this call.
func (s *svc) ctlStatus(ctx context.Context, name string) (pkgCmdResult, error) {
	if r, ok := s.status[name]; ok {
		return r, nil
	}
	r, err := s.run(ctx, s.cmd(ctx, []string{"status"}, &name, false, false, ""), true)
	if err != nil {
		return r, err
	}
	s.status[name] = r
	return r, nil
}

var svcLoadedRe = regexp.MustCompile(`^\s+loaded:\s+(\S+)`)

// checkAvailable is _check_available.
func (s *svc) checkAvailable(ctx context.Context, name string) (bool, error) {
	if s.offline() {
		return false, fmt.Errorf("%w: Cannot run in offline mode. Failed to get information on unit '%s'", modules.ErrExecution, name)
	}
	st, err := s.ctlStatus(ctx, name)
	if err != nil {
		return false, err
	}
	if v := s.sdVersion(ctx); v >= 231 {
		return st.retcode >= 0 && st.retcode < 4, nil
	}
	out := strings.ToLower(st.stdout)
	if strings.Contains(out, "could not be found") {
		return false, nil
	}
	for _, line := range strings.Split(out, "\n") {
		if m := svcLoadedRe.FindStringSubmatch(line); m != nil {
			return m[1] != "not-found", nil
		}
	}
	return false, fmt.Errorf("%w: Failed to get information on unit '%s'", modules.ErrExecution, name)
}

// checkUnitChanges is _check_for_unit_changes: daemon-reload when the unit
// file changed on disk or a custom unit is not yet known to systemd.
func (s *svc) checkUnitChanges(ctx context.Context, name string) error {
	untracked := false
	unit := filepath.Join("/etc/systemd/system", svcCanonical(name))
	if f, err := os.Open(unit); err == nil {
		f.Close()
		avail, err := s.checkAvailable(ctx, name)
		if err != nil {
			return err
		}
		untracked = !avail
	}
	if !untracked {
		st, err := s.ctlStatus(ctx, name)
		if err != nil {
			return err
		}
		if !strings.Contains(strings.ToLower(st.stdout), "'systemctl daemon-reload'") {
			return nil
		}
	}
	return s.daemonReload(ctx)
}

// daemonReload is systemctl_reload.
func (s *svc) daemonReload(ctx context.Context) error {
	out, err := s.run(ctx, s.cmd(ctx, []string{"--system", "daemon-reload"}, nil, false, false, ""), true)
	if err != nil {
		return err
	}
	if out.retcode != 0 {
		return fmt.Errorf("%w: Problem performing systemctl daemon-reload: %s", modules.ErrExecution, out.stdout)
	}
	s.status = map[string]pkgCmdResult{}
	return nil
}

// stripScope is _strip_scope: stderr without systemd-run's ".scope" lines.
func svcStripScope(msg string) string {
	var keep []string
	for _, line := range py.SplitLines(msg, false) {
		if !strings.HasSuffix(line, ".scope") {
			keep = append(keep, line)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// masked reports whether the unit's /etc (or /run for runtime) link points
// to /dev/null.
func (s *svc) masked(ctx context.Context, name string, runtime bool, root string) (bool, error) {
	if err := s.checkUnitChanges(ctx, name); err != nil {
		return false, err
	}
	base := "/etc"
	if runtime {
		base = "/run"
	}
	link := filepath.Join(svcRoot(base, root), "systemd", "system", svcCanonical(name))
	dest, err := os.Readlink(link)
	if err != nil {
		return false, nil
	}
	return dest == "/dev/null", nil
}

func (s *svc) unmask(ctx context.Context, name string, runtime bool, root string) error {
	if err := s.checkUnitChanges(ctx, name); err != nil {
		return err
	}
	m, err := s.masked(ctx, name, runtime, root)
	if err != nil || !m {
		return err
	}
	action := []string{"unmask"}
	if runtime {
		action = append(action, "--runtime")
	}
	out, err := s.run(ctx, s.cmd(ctx, action, &name, true, false, root), true)
	if err != nil {
		return err
	}
	if out.retcode != 0 {
		return fmt.Errorf("%w: Failed to unmask service '%s'", modules.ErrExecution, name)
	}
	return nil
}

func (s *svc) checkUnmask(ctx context.Context, name string, unmask, unmaskRuntime bool, root string) error {
	if unmask {
		if err := s.unmask(ctx, name, false, root); err != nil {
			return err
		}
	}
	if unmaskRuntime {
		return s.unmask(ctx, name, true, root)
	}
	return nil
}

// svcUnitName is how systemd_service names a unit file: "name" for
// name.service, the whole file name for the other unit types; ok is false
// for a name without one of the unit types.
func svcUnitName(file string) (unit string, ok bool) {
	i := strings.LastIndexByte(file, '.')
	if i < 0 {
		return "", false
	}
	switch typ := file[i+1:]; {
	case typ == "service":
		return file[:i], true
	case pkgContains(svcUnitTypes(), typ):
		return file, true
	}
	return "", false
}

// systemdServices is _get_systemd_services: unit files in the system and
// local unit directories ("name" for services, "name.type" otherwise).
func svcSystemdServices(root string) map[string]bool {
	ret := map[string]bool{}
	for _, dir := range []string{"/lib/systemd/system", "/usr/lib/systemd/system", "/etc/systemd/system"} {
		p := svcRoot(dir, root)
		if st, err := os.Lstat(p); err != nil || st.Mode()&fs.ModeSymlink != 0 {
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if unit, ok := svcUnitName(e.Name()); ok {
				ret[unit] = true
			}
		}
	}
	return ret
}

// svcSysvServices is _get_sysv_services: executable init scripts without a
// systemd unit of the same name.
func svcSysvServices(root string, systemd map[string]bool) []string {
	dir := svcRoot("/etc/init.d", root)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	if systemd == nil {
		systemd = svcSystemdServices(root)
	}
	var ret []string
	for _, e := range entries {
		st, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil || st.Mode()&0o111 == 0 || systemd[e.Name()] {
			continue
		}
		ret = append(ret, e.Name())
	}
	return ret
}

// svcRunlevel is the current runlevel ("runlevel" output, else "2").
func (s *svc) runlevel(ctx context.Context) string {
	if out, err := pkgRun(ctx, []string{"runlevel"}, pkgRunOpts{}); err == nil {
		if f := strings.Fields(out.stdout); len(f) > 1 {
			return f[1]
		}
	}
	return "2"
}

// sysvEnabled is _sysv_enabled: an S<nn><name> link in the runlevel's rc
// directory.
func (s *svc) sysvEnabled(ctx context.Context, name, root string) bool {
	pattern := svcRoot(fmt.Sprintf("/etc/rc%s.d/S*%s", s.runlevel(ctx), name), root)
	matches, _ := filepath.Glob(pattern)
	re, err := regexp.Compile(`^S\d{0,2}` + regexp.QuoteMeta(name))
	if err != nil {
		return false
	}
	for _, m := range matches {
		if re.MatchString(filepath.Base(m)) {
			return true
		}
	}
	return false
}

// serviceExec is _get_service_exec: update-rc.d or chkconfig.
func svcServiceExec() (string, error) {
	for _, name := range []string{"update-rc.d", "chkconfig"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: Unable to find sysv service manager (tried update-rc.d, chkconfig)", modules.ErrExecution)
}

// svcSortedSet returns the set's members sorted.
func svcSortedSet(m map[string]bool) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// unitFiles lists units in the given unit-file state (enabled, disabled,
// static) from "systemctl list-unit-files".
func (s *svc) unitFiles(ctx context.Context, state, root string) (map[string]bool, error) {
	out, err := s.run(ctx, s.cmd(ctx, []string{"--full", "--no-legend", "--no-pager", "list-unit-files"}, nil, false, false, root), false)
	if err != nil {
		return nil, err
	}
	ret := map[string]bool{}
	for _, line := range strings.Split(out.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] != state {
			continue
		}
		if unit, ok := svcUnitName(f[0]); ok {
			ret[unit] = true
		}
	}
	return ret, nil
}

func (s *svc) enabled(ctx context.Context, name, root string) (bool, error) {
	out, err := s.run(ctx, s.cmd(ctx, []string{"is-enabled"}, &name, false, false, root), false)
	if err != nil {
		return false, err
	}
	switch {
	case out.retcode == 0:
		return true, nil
	case strings.Contains(name, "@"):
		find, err := pkgRun(ctx, []string{"find", "/etc/systemd/system", "-name", name, "-type", "l", "-print", "-quit"}, pkgRunOpts{})
		return err == nil && find.stdout != "", nil
	case pkgContains(svcSysvServices(root, nil), name):
		return s.sysvEnabled(ctx, name, root), nil
	}
	return false, nil
}

// svcFn adapts a function over *svc to a modules.Func.
func svcFn(f func(ctx context.Context, s *svc, a *modules.Args) (any, error)) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		s, err := svcNew(c)
		if err != nil {
			return nil, err
		}
		return f(ctx, s, c.Args)
	}
}

// svcAction is start/restart/reload/force-reload: error with systemctl's
// stderr on failure.
func svcAction(action string) modules.Func {
	return svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
		name := pyfmt.Str(a.Get("name"))
		if err := s.checkUnitChanges(ctx, name); err != nil {
			return nil, err
		}
		if err := s.checkUnmask(ctx, name, a.Bool("unmask"), a.Bool("unmask_runtime"), ""); err != nil {
			return nil, err
		}
		out, err := s.run(ctx, s.cmd(ctx, []string{action}, &name, true, payload.Truthy(a.Get("no_block")), ""), false)
		if err != nil {
			return nil, err
		}
		if out.retcode != 0 {
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, svcStripScope(out.stderr))
		}
		return true, nil
	})
}

func svcStrPtr(a *modules.Args) *string {
	s := pyfmt.Str(a.Get("name"))
	return &s
}

// ServiceFunctions returns the service (systemd) functions that Register
// adds, for callers and tests that build a registry with only this module.
func ServiceFunctions() []modules.Function { return debianServiceFunctions(serviceFunctions()) }

// SystemdBooted reports whether the minion runs systemd as PID 1 (the
// "systemd" SystemdProbe service when registered, else
// /run/systemd/system), as salt.utils.systemd.booted.
func SystemdBooted(env *modules.Env) bool { return systemdBooted(env) }

// serviceFunctions is Salt's systemd_service module, loaded as "service".
func serviceFunctions() []modules.Function {
	p := func(params ...modules.Param) modules.Spec { return modules.Spec{Params: params} }
	name := req("name")
	rootP := opt("root", nil)
	actionSpec := p(name, opt("no_block", false), opt("unmask", false), opt("unmask_runtime", false))
	root := func(a *modules.Args) string { return payload.Text(a.Get("root")) }
	return []modules.Function{
		{Name: "service.available", Doc: "Check that the given service is available taking into account template\nunits.\n\nCLI Example:\n\n    salt '*' service.available sshd",
			Spec: p(name), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				n := pyfmt.Str(a.Get("name"))
				if err := s.checkUnitChanges(ctx, n); err != nil {
					return nil, err
				}
				return s.checkAvailable(ctx, n)
			})},
		{Name: "service.missing", Doc: "The inverse of service.available. Returns ``True`` if the specified\nservice is not available, otherwise returns ``False``.\n\nCLI Example:\n\n    salt '*' service.missing sshd",
			Spec: p(name), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				n := pyfmt.Str(a.Get("name"))
				if err := s.checkUnitChanges(ctx, n); err != nil {
					return nil, err
				}
				ok, err := s.checkAvailable(ctx, n)
				return !ok, err
			})},
		{Name: "service.status", Doc: "Return the status for a service via systemd.\nIf the name contains globbing, a dict mapping service name to True/False\nvalues is returned.\n\nCLI Example:\n\n    salt '*' service.status <service name> [service signature]",
			Spec: p(name, opt("sig", nil)), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				n := pyfmt.Str(a.Get("name"))
				glob := regexp.MustCompile(`\*|\?|\[.+\]`).MatchString(n)
				services := []string{n}
				if glob {
					services = nil
					all := svcSystemdServices("")
					for _, x := range svcSysvServices("", all) {
						all[x] = true
					}
					for _, x := range svcSortedSet(all) {
						if py.Fnmatch(x.(string), n) {
							services = append(services, x.(string))
						}
					}
				}
				results := &payload.Map{}
				for _, svcName := range services {
					if err := s.checkUnitChanges(ctx, svcName); err != nil {
						return nil, err
					}
					sn := svcName
					out, err := s.run(ctx, s.cmd(ctx, []string{"is-active"}, &sn, false, false, ""), false)
					if err != nil {
						return nil, err
					}
					results.Set(svcName, out.retcode == 0)
				}
				if glob {
					return results, nil
				}
				v, _ := results.Get(n)
				return v, nil
			})},
		{Name: "service.start", Doc: "Start the specified service with systemd\n\nCLI Example:\n\n    salt '*' service.start <service name>",
			Spec: actionSpec, Fn: svcAction("start")},
		{Name: "service.restart", Doc: "Restart the specified service with systemd\n\nCLI Example:\n\n    salt '*' service.restart <service name>",
			Spec: actionSpec, Fn: svcAction("restart")},
		{Name: "service.reload", Doc: "Reload the specified service with systemd\n\nCLI Example:\n\n    salt '*' service.reload <service name>",
			Spec: actionSpec, Fn: svcAction("reload")},
		{Name: "service.force_reload", Doc: "Force-reload the specified service with systemd\n\nCLI Example:\n\n    salt '*' service.force_reload <service name>",
			Spec: p(name, opt("no_block", true), opt("unmask", false), opt("unmask_runtime", false)), Fn: svcAction("force-reload")},
		{Name: "service.stop", Doc: "Stop the specified service with systemd\n\nCLI Example:\n\n    salt '*' service.stop <service name>",
			Spec: p(name, opt("no_block", false)), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				n := svcStrPtr(a)
				if err := s.checkUnitChanges(ctx, *n); err != nil {
					return nil, err
				}
				out, err := s.run(ctx, s.cmd(ctx, []string{"stop"}, n, true, payload.Truthy(a.Get("no_block")), ""), false)
				if err != nil {
					return nil, err
				}
				return out.retcode == 0, nil
			})},
		{Name: "service.enable", Doc: "Enable the named service to start when the system boots\n\nCLI Example:\n\n    salt '*' service.enable <service name>",
			Spec: modules.Spec{Params: []modules.Param{name, opt("no_block", false), opt("unmask", false), opt("unmask_runtime", false), rootP}, Kwargs: true},
			Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				n := svcStrPtr(a)
				if err := s.checkUnitChanges(ctx, *n); err != nil {
					return nil, err
				}
				if err := s.checkUnmask(ctx, *n, a.Bool("unmask"), a.Bool("unmask_runtime"), root(a)); err != nil {
					return nil, err
				}
				if pkgContains(svcSysvServices(root(a), nil), *n) {
					return s.sysvToggle(ctx, *n, true)
				}
				out, err := s.run(ctx, s.cmd(ctx, []string{"enable"}, n, true, payload.Truthy(a.Get("no_block")), root(a)), false)
				if err != nil {
					return nil, err
				}
				if out.retcode != 0 {
					return nil, fmt.Errorf("%w: %s", modules.ErrExecution, svcStripScope(out.stderr))
				}
				return true, nil
			})},
		{Name: "service.disable", Doc: "Disable the named service to not start when the system boots\n\nCLI Example:\n\n    salt '*' service.disable <service name>",
			Spec: modules.Spec{Params: []modules.Param{name, opt("no_block", false), rootP}, Kwargs: true},
			Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				n := svcStrPtr(a)
				if err := s.checkUnitChanges(ctx, *n); err != nil {
					return nil, err
				}
				if pkgContains(svcSysvServices(root(a), nil), *n) {
					return s.sysvToggle(ctx, *n, false)
				}
				out, err := s.run(ctx, s.cmd(ctx, []string{"disable"}, n, true, payload.Truthy(a.Get("no_block")), root(a)), false)
				if err != nil {
					return nil, err
				}
				return out.retcode == 0, nil
			})},
		{Name: "service.enabled", Doc: "Return if the named service is enabled to start on boot\n\nCLI Example:\n\n    salt '*' service.enabled <service name>",
			Spec: modules.Spec{Params: []modules.Param{name, rootP}, Kwargs: true},
			Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				return s.enabled(ctx, pyfmt.Str(a.Get("name")), root(a))
			})},
		{Name: "service.disabled", Doc: "Return if the named service is disabled from starting on boot\n\nCLI Example:\n\n    salt '*' service.disabled <service name>",
			Spec: p(name, rootP),
			Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				ok, err := s.enabled(ctx, pyfmt.Str(a.Get("name")), root(a))
				return !ok, err
			})},
		{Name: "service.get_all", Doc: "Return a list of all available services\n\nCLI Example:\n\n    salt '*' service.get_all",
			Spec: p(rootP), Fn: svcFn(func(_ context.Context, _ *svc, a *modules.Args) (any, error) {
				all := svcSystemdServices(root(a))
				for _, x := range svcSysvServices(root(a), all) {
					all[x] = true
				}
				return svcSortedSet(all), nil
			})},
		{Name: "service.get_enabled", Doc: "Return a list of all enabled services\n\nCLI Example:\n\n    salt '*' service.get_enabled",
			Spec: p(rootP), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				set, err := s.unitFiles(ctx, "enabled", root(a))
				if err != nil {
					return nil, err
				}
				for _, x := range svcSysvServices(root(a), nil) {
					if s.sysvEnabled(ctx, x, root(a)) {
						set[x] = true
					}
				}
				return svcSortedSet(set), nil
			})},
		{Name: "service.get_disabled", Doc: "Return a list of all disabled services\n\nCLI Example:\n\n    salt '*' service.get_disabled",
			Spec: p(rootP), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				set, err := s.unitFiles(ctx, "disabled", root(a))
				if err != nil {
					return nil, err
				}
				for _, x := range svcSysvServices(root(a), nil) {
					if !s.sysvEnabled(ctx, x, root(a)) {
						set[x] = true
					}
				}
				return svcSortedSet(set), nil
			})},
		{Name: "service.get_static", Doc: "Return a list of all static services\n\nCLI Example:\n\n    salt '*' service.get_static",
			Spec: p(rootP), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				set, err := s.unitFiles(ctx, "static", root(a))
				if err != nil {
					return nil, err
				}
				return svcSortedSet(set), nil
			})},
		{Name: "service.get_running", Doc: "Return a list of all running services, so far as systemd is concerned\n\nCLI Example:\n\n    salt '*' service.get_running",
			Fn: svcFn(func(ctx context.Context, s *svc, _ *modules.Args) (any, error) {
				out, err := s.run(ctx, s.cmd(ctx, []string{"--full", "--no-legend", "--no-pager"}, nil, false, false, ""), false)
				if err != nil {
					return nil, err
				}
				set := map[string]bool{}
				for _, line := range strings.Split(out.stdout, "\n") {
					f := strings.Fields(line)
					if len(f) < 4 || f[3] != "running" {
						continue
					}
					if unit, ok := svcUnitName(f[0]); ok {
						set[unit] = true
					}
				}
				return svcSortedSet(set), nil
			})},
		{Name: "service.show", Doc: "Show properties of one or more units/jobs or the manager\n\nCLI Example:\n\n    salt '*' service.show <service name>",
			Spec: p(name, rootP), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				return s.show(ctx, pyfmt.Str(a.Get("name")), root(a))
			})},
		{Name: "service.execs", Doc: "Return a list of all files specified as ``ExecStart`` for all services.\n\nCLI Example:\n\n    salt '*' service.execs",
			Spec: p(rootP), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				all := svcSystemdServices(root(a))
				for _, x := range svcSysvServices(root(a), all) {
					all[x] = true
				}
				ret := &payload.Map{}
				for _, n := range svcSortedSet(all) {
					data, err := s.show(ctx, n.(string), root(a))
					if err != nil {
						return nil, err
					}
					if es, ok := data.Get("ExecStart"); ok {
						if m, ok := es.(*payload.Map); ok {
							path, _ := m.Get("path")
							ret.Set(n.(string), path)
						}
					}
				}
				return ret, nil
			})},
		{Name: "service.masked", Doc: "Check whether or not a service is masked\n\nCLI Example:\n\n    salt '*' service.masked foo",
			Spec: p(name, opt("runtime", false), rootP), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				return s.masked(ctx, pyfmt.Str(a.Get("name")), a.Bool("runtime"), root(a))
			})},
		{Name: "service.mask", Doc: "Mask the specified service with systemd\n\nCLI Example:\n\n    salt '*' service.mask foo",
			Spec: p(name, opt("runtime", false), rootP), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				n := svcStrPtr(a)
				if err := s.checkUnitChanges(ctx, *n); err != nil {
					return nil, err
				}
				action := []string{"mask"}
				if a.Bool("runtime") {
					action = append(action, "--runtime")
				}
				out, err := s.run(ctx, s.cmd(ctx, action, n, true, false, root(a)), true)
				if err != nil {
					return nil, err
				}
				if out.retcode != 0 {
					e := &ExecInfoError{Message: fmt.Sprintf("Failed to mask service '%s'", *n)}
					if out.stdout != "" {
						e.Message += ". Additional info follows:\n\n" + out.stdout
					}
					return nil, e
				}
				return true, nil
			})},
		{Name: "service.unmask", Doc: "Unmask the specified service with systemd\n\nCLI Example:\n\n    salt '*' service.unmask foo",
			Spec: p(name, opt("runtime", false), rootP), Fn: svcFn(func(ctx context.Context, s *svc, a *modules.Args) (any, error) {
				if err := s.unmask(ctx, pyfmt.Str(a.Get("name")), a.Bool("runtime"), root(a)); err != nil {
					return nil, err
				}
				return true, nil
			})},
		{Name: "service.systemctl_reload", Doc: "Reloads systemctl, an action needed whenever unit files are updated.\n\nCLI Example:\n\n    salt '*' service.systemctl_reload",
			Fn: svcFn(func(ctx context.Context, s *svc, _ *modules.Args) (any, error) {
				if err := s.daemonReload(ctx); err != nil {
					return nil, err
				}
				return true, nil
			})},
		{Name: "service.offline", Doc: "Check if systemd is working in offline mode, where is not possible\nto talk with PID 1.\n\nCLI Example:\n\n    salt '*' service.offline",
			Fn: svcFn(func(_ context.Context, s *svc, _ *modules.Args) (any, error) {
				if s.booted {
					return false, nil
				}
				if p := s.systemctl(); p != "" {
					return p, nil
				}
				return nil, nil
			})},
	}
}

// sysvToggle enables or disables an init script with update-rc.d or
// chkconfig.
func (s *svc) sysvToggle(ctx context.Context, name string, on bool) (any, error) {
	var argv []string
	if s.hasScope(ctx) && payload.Truthy(configGet(s.c.Env, "systemd.scope", true)) {
		argv = append(argv, "systemd-run", "--scope")
	}
	execPath, err := svcServiceExec()
	if err != nil {
		return nil, err
	}
	switch {
	case strings.HasSuffix(execPath, "/update-rc.d") && on:
		argv = append(argv, execPath, "-f", name, "defaults", "99")
	case strings.HasSuffix(execPath, "/update-rc.d"):
		argv = append(argv, execPath, "-f", name, "remove")
	case on:
		argv = append(argv, execPath, name, "on")
	default:
		argv = append(argv, execPath, name, "off")
	}
	out, err := pkgRun(ctx, argv, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	return out.retcode == 0, nil
}

// show parses "systemctl show <unit>" (KEY=value lines; "{ a=b ; c=d }"
// values become maps, Before/After/Wants lists).
func (s *svc) show(ctx context.Context, name, root string) (*payload.Map, error) {
	out, err := s.run(ctx, s.cmd(ctx, []string{"show"}, &name, false, false, root), false)
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	for _, line := range strings.Split(out.stdout, "\n") {
		key, value, _ := strings.Cut(line, "=")
		switch {
		case strings.HasPrefix(value, "{"):
			value = strings.NewReplacer("{", "", "}", "").Replace(value)
			m := &payload.Map{}
			for _, item := range strings.Split(value, " ; ") {
				k, v, ok := strings.Cut(item, "=")
				if !ok {
					return nil, errors.New("IndexError: list index out of range")
				}
				v, _, _ = strings.Cut(v, "=")
				m.Set(strings.TrimSpace(k), strings.TrimSpace(v))
			}
			ret.Set(key, m)
		case key == "Before" || key == "After" || key == "Wants":
			var list []any
			for _, f := range strings.Fields(value) {
				list = append(list, f)
			}
			if list == nil {
				list = []any{}
			}
			ret.Set(key, list)
		default:
			ret.Set(key, value)
		}
	}
	return ret, nil
}

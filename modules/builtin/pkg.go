package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's aptpkg execution module (virtual name "pkg") for
// Debian and Ubuntu: apt-get, apt-cache, dpkg and dpkg-query are run from
// PATH with the environment Salt exports for them.

// pkgAptListsPath is where apt keeps its package lists (refresh_db's
// cache_valid_time looks at its mtime).
const pkgAptListsPath = "/var/lib/apt/lists"

// pkgMaxOutput bounds how much of each output stream of an apt/dpkg
// command is kept; the rest is read and discarded.
const pkgMaxOutput = 16 << 20

// pkgLockRetries is how often a call is retried while dpkg's lock is held
// (Salt waits 2, 4, 8, ... seconds between tries).
const pkgLockRetries = 10

// ExecInfoError is Salt's CommandExecutionError raised with an info dict,
// as pkg.install, pkg.remove and pkg.purge raise it when apt reports
// errors. Error() is the text the minion returns (after "ERROR: "); states
// read Info (its "changes" key) and TextWithoutChanges.
type ExecInfoError struct {
	// Message is the error message without the info.
	Message string
	// Info is the info dict, e.g. {"errors": [...], "changes": {...}}.
	Info *payload.Map
}

// Error returns the wrapped text "command execution error: <str(exc)>".
func (e *ExecInfoError) Error() string { return modules.ErrExecution.Error() + ": " + e.Text() }

// Unwrap makes errors.Is(err, modules.ErrExecution) true.
func (e *ExecInfoError) Unwrap() error { return modules.ErrExecution }

// Text is str(exc): the message, "Additional info follows:" and the info
// dict in the nested outputter's layout.
func (e *ExecInfoError) Text() string {
	if e.Info == nil || e.Info.Len() == 0 {
		return e.Message
	}
	return e.prefix() + NestedText(e.Info)
}

// TextWithoutChanges is exc.strerror_without_changes: like Text without
// the "changes" key (states show the changes separately), or the bare
// message when changes was the only key.
func (e *ExecInfoError) TextWithoutChanges() string {
	if e.Info == nil || e.Info.Len() == 0 {
		return e.Message
	}
	rest := e.Info.Clone()
	rest.Delete("changes")
	if rest.Len() == 0 {
		return e.Message
	}
	return e.prefix() + NestedText(rest)
}

// Changes returns Info["changes"] as a map (empty when absent).
func (e *ExecInfoError) Changes() *payload.Map {
	if e.Info != nil {
		if m, ok := e.Info.Get("changes"); ok {
			if mm, ok := m.(*payload.Map); ok {
				return mm
			}
		}
	}
	return &payload.Map{}
}

func (e *ExecInfoError) prefix() string {
	p := e.Message
	if p != "" {
		if !strings.ContainsAny(p[len(p)-1:], ".?!") {
			p += "."
		}
		p += " "
	}
	return p + "Additional info follows:\n\n"
}

// NestedText renders v like Salt's nested outputter without colors (as
// CommandExecutionError does for its info), trailing whitespace removed.
func NestedText(v any) string {
	var lines []string
	nestedLines(v, 0, "", &lines, 0)
	return strings.TrimRight(strings.Join(lines, "\n"), " \t\r\n")
}

func nestedLines(v any, indent int, prefix string, out *[]string, depth int) {
	pad := strings.Repeat(" ", indent)
	if depth > 64 {
		*out = append(*out, pad+prefix+"...")
		return
	}
	switch x := v.(type) {
	case nil, bool:
		*out = append(*out, pad+prefix+pyfmt.Str(x))
	case int64, float64, int:
		*out = append(*out, pad+prefix+pyfmt.Repr(x))
	case string:
		first := true
		for _, line := range py.SplitLines(x, false) {
			p := prefix
			if !first {
				p = strings.Repeat(" ", len(prefix))
			}
			*out = append(*out, pad+p+line)
			first = false
		}
	case []any:
		for _, item := range x {
			switch item.(type) {
			case []any, *payload.Map:
				*out = append(*out, pad+"|_")
				p := "- "
				if _, ok := item.(*payload.Map); ok {
					p = ""
				}
				nestedLines(item, indent+2, p, out, depth+1)
			default:
				nestedLines(item, indent, "- ", out, depth+1)
			}
		}
	case *payload.Map:
		if indent > 0 {
			*out = append(*out, pad+"----------")
		}
		keys := make([]string, 0, x.Len())
		vals := map[string]any{}
		for _, it := range x.Items() {
			k := payload.KeyString(it.Key)
			keys = append(keys, k)
			vals[k] = it.Value
		}
		sort.Strings(keys)
		for _, k := range keys {
			*out = append(*out, pad+prefix+k+":")
			nestedLines(vals[k], indent+4, "", out, depth+1)
		}
	default:
		*out = append(*out, pad+prefix+pyfmt.Str(x))
	}
}

// pkgDpkgEnv is what Salt's aptpkg exports so apt and dpkg never prompt.
func pkgDpkgEnv() []string {
	return []string{
		"APT_LISTBUGS_FRONTEND=none",
		"APT_LISTCHANGES_FRONTEND=none",
		"DEBIAN_FRONTEND=noninteractive",
		"UCF_FORCE_CONFFOLD=1",
	}
}

const pkgVirtualError = "The pkg module could not be loaded: unsupported OS family"

// PkgFunctions returns the pkg (aptpkg) functions that Register adds, for
// callers and tests that build a registry with only this module.
func PkgFunctions() []modules.Function { return pkgFunctions() }

// pkgFunctions is Salt's aptpkg module, loaded as "pkg".
func pkgFunctions() []modules.Function {
	vk := modules.Spec{Varargs: true, Kwargs: true}
	targets := modules.Spec{Params: []modules.Param{opt("name", nil), opt("pkgs", nil)}, Kwargs: true}
	holdSpec := modules.Spec{Params: []modules.Param{opt("name", nil), opt("pkgs", nil), opt("sources", nil)}, Kwargs: true}
	return []modules.Function{
		{Name: "pkg.list_pkgs", Doc: "List the packages currently installed in a dict::\n\n    {'<package_name>': '<version>'}\n\nCLI Example:\n\n    salt '*' pkg.list_pkgs\n    salt '*' pkg.list_pkgs versions_as_list=True",
			Spec: modules.Spec{Params: []modules.Param{opt("versions_as_list", false), opt("removed", false), opt("purge_desired", false)}, Kwargs: true},
			Fn:   pkgListPkgsFn},
		{Name: "pkg.version", Doc: "Returns a string representing the package version or an empty string if not\ninstalled. If more than one package name is specified, a dict of\nname/version pairs is returned.\n\nCLI Example:\n\n    salt '*' pkg.version <package name>",
			Spec: vk, Fn: pkgVersionFn},
		{Name: "pkg.latest_version", Doc: "Return the latest version of the named package available for upgrade or\ninstallation. If more than one package name is specified, a dict of\nname/version pairs is returned.\n\nCLI Example:\n\n    salt '*' pkg.latest_version <package name>",
			Spec: vk, Fn: pkgLatestVersionFn},
		{Name: "pkg.available_version", Doc: "This function is an alias of latest_version.",
			Spec: vk, Fn: pkgLatestVersionFn},
		{Name: "pkg.refresh_db", Doc: "Updates the APT database to latest packages based upon repositories\n\nCLI Example:\n\n    salt '*' pkg.refresh_db",
			Spec: modules.Spec{Params: []modules.Param{opt("cache_valid_time", int64(0)), opt("failhard", false)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if err := pkgVirtual(c); err != nil {
					return nil, err
				}
				return pkgRefreshDB(ctx, c, c.Args.Get("cache_valid_time"), c.Args.Bool("failhard"))
			}},
		{Name: "pkg.install", Doc: "Install the passed package, add refresh=True to update the dpkg database.\n\nCLI Example:\n\n    salt '*' pkg.install <package name>\n    salt '*' pkg.install pkgs='[\"foo\", {\"bar\": \"1.2.3-0ubuntu0\"}]'",
			Spec: modules.Spec{Params: []modules.Param{opt("name", nil), opt("refresh", false), opt("fromrepo", nil),
				opt("skip_verify", false), opt("debconf", nil), opt("pkgs", nil), opt("sources", nil), opt("reinstall", false),
				opt("downloadonly", false), opt("ignore_epoch", false)}, Kwargs: true},
			Fn: pkgInstallFn},
		{Name: "pkg.remove", Doc: "Remove packages using ``apt-get remove``.\n\nCLI Example:\n\n    salt '*' pkg.remove <package name>",
			Spec: targets, Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pkgUninstall(ctx, c, "remove") }},
		{Name: "pkg.purge", Doc: "Remove packages via ``apt-get purge`` along with all configuration files.\n\nCLI Example:\n\n    salt '*' pkg.purge <package name>",
			Spec: targets, Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pkgUninstall(ctx, c, "purge") }},
		{Name: "pkg.upgrade_available", Doc: "Check whether or not an upgrade is available for a given package\n\nCLI Example:\n\n    salt '*' pkg.upgrade_available <package name>",
			Spec: modules.Spec{Params: []modules.Param{req("name")}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if err := pkgVirtual(c); err != nil {
					return nil, err
				}
				v, err := pkgLatestVersion(ctx, c, []string{pyfmt.Str(c.Args.Get("name"))}, &payload.Map{})
				if err != nil {
					return nil, err
				}
				return v != "", nil
			}},
		{Name: "pkg.list_upgrades", Doc: "List all available package upgrades.\n\nCLI Example:\n\n    salt '*' pkg.list_upgrades",
			Spec: modules.Spec{Params: []modules.Param{opt("refresh", true), opt("dist_upgrade", true)}, Kwargs: true},
			Fn:   pkgListUpgradesFn},
		{Name: "pkg.version_cmp", Doc: "Do a cmp-style comparison on two packages. Return -1 if pkg1 < pkg2, 0 if\npkg1 == pkg2, and 1 if pkg1 > pkg2.\n\nCLI Example:\n\n    salt '*' pkg.version_cmp '0.2.4-0ubuntu1' '0.2.4.1-0ubuntu1'",
			Spec: modules.Spec{Params: []modules.Param{req("pkg1"), req("pkg2"), opt("ignore_epoch", false)}, Kwargs: true},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return int64(DebVersionCompare(pyfmt.Str(c.Args.Get("pkg1")), pyfmt.Str(c.Args.Get("pkg2")), c.Args.Bool("ignore_epoch"))), nil
			}},
		{Name: "pkg.normalize_name", Doc: "Strips the architecture from the specified package name, if necessary.\n\nCLI Example:\n\n    salt '*' pkg.normalize_name zsh:amd64",
			Spec: modules.Spec{Params: []modules.Param{req("name")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return pkgNormalizeName(c, pyfmt.Str(c.Args.Get("name"))), nil
			}},
		{Name: "pkg.parse_arch", Doc: "Parse name and architecture from the specified package name.\n\nCLI Example:\n\n    salt '*' pkg.parse_arch zsh:amd64",
			Spec: modules.Spec{Params: []modules.Param{req("name")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				name := pyfmt.Str(c.Args.Get("name"))
				if i := strings.LastIndexByte(name, ':'); i >= 0 {
					return payload.NewMap("name", name[:i], "arch", name[i+1:]), nil
				}
				return payload.NewMap("name", name, "arch", nil), nil
			}},
		{Name: "pkg.list_repo_pkgs", Doc: "Returns all available packages. Optionally, package names (and name\nglobs) can be passed and the results will be filtered to packages\nmatching those names.\n\nCLI Example:\n\n    salt '*' pkg.list_repo_pkgs foo bar",
			Spec: vk,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if err := pkgVirtual(c); err != nil {
					return nil, err
				}
				var names []string
				for _, a := range c.Args.Varargs {
					names = append(names, pyfmt.Str(a))
				}
				return pkgListRepoPkgs(ctx, c, names)
			}},
		{Name: "pkg.get_selections", Doc: "View package state from the dpkg database.\n\nCLI Example:\n\n    salt '*' pkg.get_selections\n    salt '*' pkg.get_selections state=hold",
			Spec: modules.Spec{Params: []modules.Param{opt("pattern", nil), opt("state", nil)}},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if err := pkgVirtual(c); err != nil {
					return nil, err
				}
				return pkgGetSelections(ctx, c, payload.Text(c.Args.Get("pattern")), payload.Text(c.Args.Get("state")))
			}},
		{Name: "pkg.hold", Doc: "Set package in 'hold' state, meaning it will not be upgraded.\n\nCLI Example:\n\n    salt '*' pkg.hold <package name>",
			Spec: holdSpec, Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pkgHold(ctx, c, true) }},
		{Name: "pkg.unhold", Doc: "Set package current in 'hold' state to install state,\nmeaning it will be upgraded.\n\nCLI Example:\n\n    salt '*' pkg.unhold <package name>",
			Spec: holdSpec, Fn: func(ctx context.Context, c *modules.Call) (any, error) { return pkgHold(ctx, c, false) }},
	}
}

// pkgVirtual is aptpkg's __virtual__: only a minion whose os_family grain
// is Debian (or that has no grains at all) gets this module.
func pkgVirtual(c *modules.Call) error {
	if c.Env == nil || c.Env.Grains == nil {
		return nil
	}
	if fam, ok := c.Env.Grains.Get("os_family"); ok && fam != "Debian" {
		return fmt.Errorf("%w: %s", modules.ErrExecution, pkgVirtualError)
	}
	return nil
}

// pkgGrain returns a grain as text, or def when grains are unknown.
func pkgGrain(c *modules.Call, key, def string) string {
	if c.Env != nil && c.Env.Grains != nil {
		if v, ok := c.Env.Grains.Get(key); ok && v != nil {
			return payload.Text(v)
		}
	}
	return def
}

// pkgOSArch is the osarch grain (dpkg's architecture).
func pkgOSArch(c *modules.Call) string {
	def := runtime.GOARCH
	switch def {
	case "386":
		def = "i386"
	case "arm":
		def = "armhf"
	case "ppc64le":
		def = "ppc64el"
	}
	return pkgGrain(c, "osarch", def)
}

// pkgCPUArch is the cpuarch grain (the kernel's machine name).
func pkgCPUArch(c *modules.Call) string {
	def := runtime.GOARCH
	switch def {
	case "amd64":
		def = "x86_64"
	case "arm64":
		def = "aarch64"
	case "386":
		def = "i686"
	}
	return pkgGrain(c, "cpuarch", def)
}

// pkgNormalizeName strips ":<arch>" when arch is the OS's own (or all/any).
func pkgNormalizeName(c *modules.Call, name string) string {
	i := strings.LastIndexByte(name, ':')
	if i < 0 {
		return name
	}
	arch := name[i+1:]
	if arch == pkgOSArch(c) || arch == "all" || arch == "any" {
		return name[:i]
	}
	return name
}

// pkgCmdResult is what cmd.run_all reports for one command.
type pkgCmdResult struct {
	stdout, stderr string
	retcode        int
}

// pkgLimitedBuffer keeps the first max bytes written and drops the rest.
type pkgLimitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *pkgLimitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

// pkgRunOpts are the cmd.run_all options aptpkg uses.
type pkgRunOpts struct {
	stdin string
	env   []string
	// combined sends stderr into stdout (redirect_stderr).
	combined bool
}

// pkgRun runs argv (no shell) with the dpkg environment and C locale,
// output stripped of its trailing newline like cmd.run_all's rstrip.
func pkgRun(ctx context.Context, argv []string, o pkgRunOpts) (pkgCmdResult, error) {
	if len(argv) == 0 {
		return pkgCmdResult{}, fmt.Errorf("%w: empty command", modules.ErrExecution)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return pkgCmdResult{}, fmt.Errorf("%w: Unable to run command '%s': %v", modules.ErrExecution, strings.Join(argv, " "), err)
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANGUAGE=")
	cmd.Env = append(cmd.Env, pkgDpkgEnv()...)
	cmd.Env = append(cmd.Env, o.env...)
	if o.stdin != "" {
		cmd.Stdin = strings.NewReader(o.stdin)
	}
	stdout := &pkgLimitedBuffer{max: pkgMaxOutput}
	stderr := &pkgLimitedBuffer{max: pkgMaxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if o.combined {
		cmd.Stderr = stdout
	}
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	res := pkgCmdResult{
		stdout: strings.TrimRight(stdout.buf.String(), " \t\r\n"),
		stderr: strings.TrimRight(stderr.buf.String(), " \t\r\n"),
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.retcode = exitErr.ExitCode()
	case ctx.Err() != nil:
		return res, fmt.Errorf("%w: %s: %v", modules.ErrExecution, strings.Join(argv, " "), ctx.Err())
	default:
		return res, fmt.Errorf("%w: Unable to run command '%s': %v", modules.ErrExecution, strings.Join(argv, " "), err)
	}
	return res, nil
}

// pkgUseScope is whether apt runs under "systemd-run --scope": systemd is
// booted, is at least version 205, and config systemd.scope is not False.
func pkgUseScope(ctx context.Context, c *modules.Call) bool {
	if !systemdBooted(c.Env) {
		return false
	}
	if v := systemdVersion(ctx); v < 205 {
		return false
	}
	return payload.Truthy(configGet(c.Env, "systemd.scope", true))
}

// pkgCallApt is aptpkg's _call_apt: run an apt/dpkg command (in a systemd
// scope when scope is set and available), retrying while dpkg's lock is
// held.
func pkgCallApt(ctx context.Context, c *modules.Call, args []string, scope bool, o pkgRunOpts) (pkgCmdResult, error) {
	var argv []string
	if scope && pkgUseScope(ctx, c) {
		argv = append(argv, "systemd-run", "--scope", "--description", `"salt.loaded.int.module.aptpkg"`)
	}
	argv = append(argv, args...)
	res, err := pkgRun(ctx, argv, o)
	for count := 1; err == nil && strings.Contains(res.stderr, "Could not get lock") && count <= pkgLockRetries; count++ {
		c.Log().Warn("Waiting for dpkg lock release", "try", count)
		select {
		case <-ctx.Done():
			return res, fmt.Errorf("%w: %v", modules.ErrExecution, ctx.Err())
		case <-time.After(time.Duration(1<<count) * time.Second):
		}
		res, err = pkgRun(ctx, argv, o)
	}
	return res, err
}

// pkgLists is the dpkg database split the way list_pkgs reports it; each
// map holds name -> []any of version strings, in dpkg-query order.
type pkgLists struct {
	installed, removed, purgeDesired *payload.Map
}

// pkgQuery runs dpkg-query and sorts its lines into installed, removed
// (config files left) and purge-desired packages.
func pkgQuery(ctx context.Context, c *modules.Call) (*pkgLists, error) {
	res, err := pkgRun(ctx, []string{"dpkg-query", "--showformat", "${Status} ${Package} ${Version} ${Architecture}\n", "-W"}, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	l := &pkgLists{installed: &payload.Map{}, removed: &payload.Map{}, purgeDesired: &payload.Map{}}
	cpu, osarch := pkgCPUArch(c), pkgOSArch(c)
	add := func(m *payload.Map, name, ver string) {
		cur, _ := m.Get(name)
		list, _ := cur.([]any)
		m.Set(name, append(list, ver))
	}
	for _, line := range strings.Split(res.stdout, "\n") {
		cols := strings.Fields(line)
		if len(cols) < 6 {
			continue
		}
		linetype, status, name, ver, arch := cols[0], cols[2], cols[3], cols[4], cols[5]
		if cpu == "x86_64" && arch != "all" && osarch == "amd64" && osarch != arch {
			name += ":" + arch
		}
		switch {
		case (strings.Contains(linetype, "install") || strings.Contains(linetype, "hold")) && strings.Contains(status, "installed"):
			add(l.installed, name, ver)
		case strings.Contains(linetype, "deinstall"):
			add(l.removed, name, ver)
		case strings.Contains(linetype, "purge") && status == "installed":
			add(l.purgeDesired, name, ver)
		}
	}
	for _, m := range []*payload.Map{l.installed, l.removed, l.purgeDesired} {
		for _, it := range m.Items() {
			m.SetKey(it.Key, pkgSortUnique(it.Value.([]any)))
		}
	}
	return l, nil
}

// pkgSortUnique is sorted(set(versions)).
func pkgSortUnique(vs []any) []any {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
		s := v.(string)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	res := make([]any, len(out))
	for i, s := range out {
		res[i] = s
	}
	return res
}

// pkgListPkgs is list_pkgs: removed packages, or purge-desired ones
// followed by the installed ones (unless only purge_desired is asked for);
// versions joined by "," unless versionsAsList.
func pkgListPkgs(ctx context.Context, c *modules.Call, versionsAsList, removed, purgeDesired bool) (*payload.Map, error) {
	l, err := pkgQuery(ctx, c)
	if err != nil {
		return nil, err
	}
	var ret *payload.Map
	if removed {
		ret = l.removed.Clone()
	} else {
		ret = l.purgeDesired.Clone()
		if !purgeDesired {
			for _, it := range l.installed.Items() {
				ret.SetKey(it.Key, it.Value)
			}
		}
	}
	if !versionsAsList {
		pkgStringify(ret)
	}
	return ret, nil
}

// pkgStringify joins each version list with "," (pkg_resource.stringify).
func pkgStringify(m *payload.Map) {
	for _, it := range m.Items() {
		if list, ok := it.Value.([]any); ok {
			parts := make([]string, len(list))
			for i, v := range list {
				parts[i] = payload.Text(v)
			}
			m.SetKey(it.Key, strings.Join(parts, ","))
		}
	}
}

func pkgListPkgsFn(ctx context.Context, c *modules.Call) (any, error) {
	if err := pkgVirtual(c); err != nil {
		return nil, err
	}
	return pkgListPkgs(ctx, c, c.Args.Bool("versions_as_list"), c.Args.Bool("removed"), c.Args.Bool("purge_desired"))
}

// pkgVersionFn is pkg_resource.version over list_pkgs.
func pkgVersionFn(ctx context.Context, c *modules.Call) (any, error) {
	if err := pkgVirtual(c); err != nil {
		return nil, err
	}
	kw := c.Args.CleanKwargs()
	asList := false
	if v, ok := kw.Delete("versions_as_list"); ok {
		asList = modules.IsTrue(v)
	}
	ret := &payload.Map{}
	glob := false
	if len(c.Args.Varargs) > 0 {
		pkgs, err := pkgListPkgs(ctx, c, true, modules.IsTrue(kwGet(kw, "removed")), modules.IsTrue(kwGet(kw, "purge_desired")))
		if err != nil {
			return nil, err
		}
		for _, n := range c.Args.Varargs {
			name := pyfmt.Str(n)
			if strings.Contains(name, "*") {
				glob = true
				for _, it := range pkgs.Items() {
					if k := payload.KeyString(it.Key); py.Fnmatch(k, name) {
						ret.Set(k, it.Value)
					}
				}
				continue
			}
			if v, ok := pkgs.Get(name); ok {
				ret.Set(name, v)
			} else {
				ret.Set(name, []any{})
			}
		}
	}
	if !asList {
		pkgStringify(ret)
	}
	if ret.Len() == 1 && !glob {
		return ret.Items()[0].Value, nil
	}
	return ret, nil
}

func kwGet(m *payload.Map, k string) any {
	v, _ := m.Get(k)
	return v
}

// pkgCompare is salt.utils.versions.compare with Debian version_cmp.
func pkgCompare(v1, oper, v2 string, ignoreEpoch bool) bool {
	return VersionCmpOp(DebVersionCompare(v1, v2, ignoreEpoch), oper)
}

// VersionCmpOp is the operator step of salt.utils.versions.compare: r is
// a version_cmp result (negative, 0, positive) and oper one of <, <=, ==,
// >=, >, !=; any other operator is false.
func VersionCmpOp(r int, oper string) bool {
	switch oper {
	case "<":
		return r < 0
	case "<=":
		return r <= 0
	case "==":
		return r == 0
	case ">=":
		return r >= 0
	case ">":
		return r > 0
	case "!=":
		return r != 0
	}
	return false
}

// pkgLatestVersion is latest_version: the candidate of each name from
// "apt-cache policy", or "" when the installed version is already at least
// the candidate. kw holds the remaining keyword arguments (refresh,
// show_installed, fromrepo, cache_valid_time); one name gives a string.
func pkgLatestVersion(ctx context.Context, c *modules.Call, names []string, kw *payload.Map) (any, error) {
	refresh, showInstalled := true, false
	if v, ok := kw.Get("refresh"); ok {
		refresh = modules.IsTrue(v)
	}
	if v, ok := kw.Get("show_installed"); ok {
		showInstalled = modules.IsTrue(v)
	}
	if kw.Has("repo") {
		return nil, fmt.Errorf("%w: The 'repo' argument is invalid, use 'fromrepo' instead", modules.ErrInvocation)
	}
	fromrepo := kwGet(kw, "fromrepo")
	var cacheValid any = int64(0)
	if v, ok := kw.Get("cache_valid_time"); ok {
		cacheValid = v
	}
	if len(names) == 0 {
		return "", nil
	}
	ret := &payload.Map{}
	for _, n := range names {
		ret.Set(n, "")
	}
	pkgs, err := pkgListPkgs(ctx, c, true, false, false)
	if err != nil {
		return nil, err
	}
	if refresh {
		if _, err := pkgRefreshDB(ctx, c, cacheValid, false); err != nil {
			return nil, err
		}
	}
	for _, name := range names {
		args := []string{"apt-cache", "-q", "policy", name}
		if payload.Truthy(fromrepo) {
			args = append(args, "-o", "APT::Default-Release="+pyfmt.Str(fromrepo))
		}
		out, err := pkgCallApt(ctx, c, args, false, pkgRunOpts{})
		if err != nil {
			return nil, err
		}
		candidate := ""
		for _, line := range strings.Split(out.stdout, "\n") {
			if strings.Contains(line, "Candidate") {
				if comps := strings.Fields(line); len(comps) >= 2 {
					candidate = comps[len(comps)-1]
					if strings.ToLower(candidate) == "(none)" {
						candidate = ""
					}
				}
				break
			}
		}
		inst, _ := pkgs.Get(name)
		installed, _ := inst.([]any)
		switch {
		case len(installed) == 0, showInstalled:
			ret.Set(name, candidate)
		case candidate != "":
			newer := true
			for _, x := range installed {
				if pkgCompare(payload.Text(x), ">=", candidate, false) {
					newer = false
					break
				}
			}
			if newer {
				ret.Set(name, candidate)
			}
		}
	}
	if len(names) == 1 {
		v, _ := ret.Get(names[0])
		return v, nil
	}
	return ret, nil
}

func pkgLatestVersionFn(ctx context.Context, c *modules.Call) (any, error) {
	if err := pkgVirtual(c); err != nil {
		return nil, err
	}
	var names []string
	for _, a := range c.Args.Varargs {
		names = append(names, pyfmt.Str(a))
	}
	return pkgLatestVersion(ctx, c, names, c.Args.CleanKwargs())
}

// pkgRtag is the file Salt's pkg states use to refresh the package
// database once per state run (<cachedir>/pkg_refresh), or "".
func pkgRtag(env *modules.Env) string {
	if env == nil || env.Opts == nil {
		return ""
	}
	dir, ok := env.Opts.Get("cachedir")
	if !ok || payload.Text(dir) == "" {
		return ""
	}
	return filepath.Join(payload.Text(dir), "pkg_refresh")
}

var pkgRefreshLine = regexp.MustCompile(` \[.+B\]$`)

// pkgRefreshDB is refresh_db: "apt-get -q update", reporting each source
// as true (fetched), nil (unchanged) or false (ignored or failed).
func pkgRefreshDB(ctx context.Context, c *modules.Call, cacheValidTime any, failhard bool) (*payload.Map, error) {
	if rt := pkgRtag(c.Env); rt != "" {
		if err := os.Remove(rt); err != nil && !errors.Is(err, os.ErrNotExist) {
			c.Log().Warn("Encountered error removing rtag", "err", err)
		}
	}
	ret := &payload.Map{}
	if payload.Truthy(cacheValidTime) {
		if n, ok := payload.AsInt(cacheValidTime); ok {
			if st, err := os.Stat(pkgAptListsPath); err == nil {
				if st.ModTime().Add(time.Duration(n) * time.Second).After(time.Now()) {
					return ret, nil
				}
			} else {
				c.Log().Warn("could not stat cache directory", "err", err)
			}
		} else {
			c.Log().Warn("expected integer for cache_valid_time parameter", "value", cacheValidTime)
		}
	}
	call, err := pkgCallApt(ctx, c, []string{"apt-get", "-q", "update"}, false, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	if call.retcode != 0 {
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, call.stderr)
	}
	var errorRepos []string
	for _, line := range strings.Split(call.stdout, "\n") {
		cols := strings.Fields(line)
		if len(cols) == 0 {
			continue
		}
		ident := strings.Join(cols[1:], " ")
		switch {
		case strings.Contains(cols[0], "Get"):
			ret.Set(pkgRefreshLine.ReplaceAllString(ident, ""), true)
		case strings.Contains(cols[0], "Ign"):
			ret.Set(ident, false)
		case strings.Contains(cols[0], "Hit"):
			ret.Set(ident, nil)
		case strings.Contains(cols[0], "Err"):
			ret.Set(ident, false)
			errorRepos = append(errorRepos, ident)
		}
	}
	if failhard && len(errorRepos) > 0 {
		return nil, fmt.Errorf("%w: Error getting repos: %s", modules.ErrExecution, strings.Join(errorRepos, ", "))
	}
	return ret, nil
}

// pkgTarget is one requested package: its name and wanted version (nil
// for any).
type pkgTarget struct {
	name    string
	version any
}

// pkgRepack is pkg_resource._repack_pkgs: a list of names and one-key
// {name: version} maps (or YAML text of one) to ordered targets.
func pkgRepack(c *modules.Call, pkgs any, normalize bool) ([]pkgTarget, error) {
	if s, ok := pkgs.(string); ok {
		var v any
		if err := yaml.Unmarshal([]byte(s), &v); err != nil {
			return nil, nil
		}
		pkgs = payload.FromGo(v)
	}
	list, ok := pkgs.([]any)
	if !ok {
		return nil, nil
	}
	norm := func(s string) string {
		if normalize {
			return pkgNormalizeName(c, s)
		}
		return s
	}
	var out []pkgTarget
	index := map[string]int{}
	put := func(name string, ver any) {
		if i, dup := index[name]; dup {
			out[i].version = ver
			return
		}
		index[name] = len(out)
		out = append(out, pkgTarget{name, ver})
	}
	for _, el := range list {
		switch x := el.(type) {
		case string, int64, float64:
			put(norm(pyfmt.Str(x)), nil)
		case *payload.Map:
			if x.Len() != 1 {
				return nil, nil
			}
			it := x.Items()[0]
			var ver any
			if it.Value != nil {
				ver = pyfmt.Str(it.Value)
			}
			put(norm(payload.KeyString(it.Key)), ver)
		default:
			return nil, nil
		}
	}
	if len(out) != len(list) {
		return nil, fmt.Errorf("%w: You are passing a list of packages that contains duplicated packages names: %s. This cannot be processed. In case you are targeting different versions of the same package, please target them individually", modules.ErrInvocation, pyfmt.Repr(list))
	}
	return out, nil
}

// pkgParseTargets is pkg_resource.parse_targets for apt: the targets and
// "repository" or "file"; nil targets when nothing usable was given.
func pkgParseTargets(ctx context.Context, c *modules.Call, name, pkgs, sources, version any, normalize bool) ([]pkgTarget, string, error) {
	switch {
	case payload.Truthy(pkgs) && payload.Truthy(sources):
		c.Log().Error(`Only one of "pkgs" and "sources" can be used.`)
		return nil, "", nil
	case payload.Truthy(pkgs):
		t, err := pkgRepack(c, pkgs, normalize)
		return t, "repository", err
	case payload.Truthy(sources):
		t, err := pkgRepack(c, sources, normalize)
		if err != nil || len(t) == 0 {
			return nil, "", err
		}
		var out []pkgTarget
		for _, s := range t {
			src := payload.Text(s.version)
			if strings.Contains(src, "://") {
				fc, ok := modules.Service[FileClient](c.Env, "files")
				if !ok {
					return nil, "", fmt.Errorf("%w: Unable to cache %s: no file client", modules.ErrExecution, src)
				}
				local, err := fc.CacheFile(ctx, src, "base")
				if err != nil || local == "" {
					return nil, "", fmt.Errorf("%w: Unable to cache %s", modules.ErrExecution, src)
				}
				src = local
			} else if !filepath.IsAbs(src) {
				return nil, "", fmt.Errorf("%w: Path %s for package %s is either not absolute or an invalid protocol", modules.ErrInvocation, src, s.name)
			}
			out = append(out, pkgTarget{name: "", version: src})
		}
		return out, "file", nil
	case payload.Truthy(name):
		var out []pkgTarget
		for _, n := range strings.Split(pyfmt.Str(name), ",") {
			if normalize {
				n = pkgNormalizeName(c, n)
			}
			found := false
			for i := range out {
				if out[i].name == n {
					out[i].version, found = version, true
				}
			}
			if !found {
				out = append(out, pkgTarget{n, version})
			}
		}
		return out, "repository", nil
	}
	c.Log().Error("No package sources provided")
	return nil, "", nil
}

// pkgComparisonRe is the pattern of salt.utils.pkg.split_comparison.
var pkgComparisonRe = regexp.MustCompile(`^(<=>|!=|>=|<=|>>|<<|<>|>|<|=)?\s?([^<>=]+)$`)

// PkgSplitComparison splits "<op>version" (">=1.2") into the operator
// ("" when none) and the version, like salt.utils.pkg.split_comparison.
func PkgSplitComparison(v string) (oper, version string) {
	if m := pkgComparisonRe.FindStringSubmatch(v); m != nil {
		return m[1], m[2]
	}
	return "", v
}

func pkgInstallFn(ctx context.Context, c *modules.Call) (any, error) {
	if err := pkgVirtual(c); err != nil {
		return nil, err
	}
	a := c.Args
	kw := a.Kwargs
	name, pkgs, sources := a.Get("name"), a.Get("pkgs"), a.Get("sources")
	fromrepo := a.Get("fromrepo")
	reinstall := payload.Truthy(a.Get("reinstall"))
	ignoreEpoch := payload.Truthy(a.Get("ignore_epoch"))
	version := kwGet(kw, "version")

	refreshDB := false
	if a.Bool("refresh") {
		refreshDB = true
		if payload.Truthy(version) {
			refreshDB = false
			lv, err := pkgLatestVersion(ctx, c, []string{pyfmt.Str(name)}, payload.NewMap("refresh", false, "show_installed", true))
			if err != nil {
				return nil, err
			}
			if lv != version {
				refreshDB = true
			}
		}
		if payload.Truthy(pkgs) {
			refreshDB = false
			list, _ := pkgs.([]any)
			for _, p := range list {
				m, ok := p.(*payload.Map)
				if !ok || m.Len() == 0 {
					refreshDB = true
					continue
				}
				it := m.Items()[0]
				lv, err := pkgLatestVersion(ctx, c, []string{payload.KeyString(it.Key)}, payload.NewMap("refresh", false, "show_installed", true))
				if err != nil {
					return nil, err
				}
				if lv != it.Value {
					refreshDB = true
				}
			}
		}
	}
	if payload.Truthy(a.Get("debconf")) {
		if c.Env == nil || c.Env.Registry == nil {
			return nil, fmt.Errorf("%w: 'debconf.set_file' is not available.", modules.ErrExecution)
		}
		if _, ok := c.Env.Registry.Lookup("debconf.set_file"); !ok {
			return nil, fmt.Errorf("%w: 'debconf.set_file' is not available.", modules.ErrExecution)
		}
		if res := c.Env.Registry.Execute(ctx, modules.Binder{}, c.Env, "debconf.set_file", []any{a.Get("debconf")}, nil); res.Retcode != 0 {
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, payload.Text(res.Return))
		}
	}
	normalize := true
	if v, ok := kw.Get("normalize"); ok {
		normalize = payload.Truthy(v)
	}
	params, pkgType, err := pkgParseTargets(ctx, c, name, pkgs, sources, version, normalize)
	if err != nil {
		return nil, err
	}
	if !payload.Truthy(fromrepo) && payload.Truthy(kwGet(kw, "repo")) {
		fromrepo = kwGet(kw, "repo")
	}
	if len(params) == 0 {
		return &payload.Map{}, nil
	}
	oldAll, err := pkgListPkgs(ctx, c, false, false, false)
	if err != nil {
		return nil, err
	}
	var targets, downgrade []string
	var toReinstall []pkgTarget // name -> install argument
	var errs []any
	var available map[string][]string
	cmpSet := map[string]bool{}
	if pkgType == "repository" {
		var cmpNames []string
		for _, p := range params {
			if s, ok := p.version.(string); ok && (strings.HasPrefix(s, "<") || strings.HasPrefix(s, ">")) {
				cmpNames = append(cmpNames, p.name)
				cmpSet[p.name] = true
			}
		}
		if len(cmpNames) > 0 {
			if available, err = pkgListRepoPkgsRaw(ctx, c, cmpNames); err != nil {
				return nil, err
			}
		}
	}
	prefix := []string{"apt-get", "-q", "-y"}
	if payload.Truthy(kwGet(kw, "force_yes")) {
		prefix = append(prefix, "--force-yes")
	}
	if payload.Truthy(kwGet(kw, "force_conf_new")) {
		prefix = append(prefix, "-o", "DPkg::Options::=--force-confnew")
	} else {
		prefix = append(prefix, "-o", "DPkg::Options::=--force-confold", "-o", "DPkg::Options::=--force-confdef")
	}
	if v, ok := kw.Get("install_recommends"); ok {
		if payload.Truthy(v) {
			prefix = append(prefix, "--install-recommends")
		} else {
			prefix = append(prefix, "--no-install-recommends")
		}
	}
	if payload.Truthy(kwGet(kw, "only_upgrade")) {
		prefix = append(prefix, "--only-upgrade")
	}
	if payload.Truthy(a.Get("skip_verify")) {
		prefix = append(prefix, "--allow-unauthenticated")
	}
	if payload.Truthy(fromrepo) && pkgType == "repository" {
		prefix = append(prefix, "-t", pyfmt.Str(fromrepo))
	}
	prefix = append(prefix, "install")
	addReinstall := func(n, arg string) {
		for i := range toReinstall {
			if toReinstall[i].name == n {
				toReinstall[i].version = arg
				return
			}
		}
		toReinstall = append(toReinstall, pkgTarget{n, arg})
	}
	for _, p := range params {
		pkgname := p.name
		var ver any
		var pkgpath string
		if pkgType == "repository" {
			ver = p.version
			if payload.Truthy(name) && pkgs == nil && payload.Truthy(version) && len(params) == 1 {
				ver = version
			}
		} else {
			pkgpath = payload.Text(p.version)
		}
		if ver == nil {
			if pkgType == "repository" {
				if _, inOld := oldAll.Get(pkgname); reinstall && inOld {
					addReinstall(pkgname, pkgname)
				} else {
					targets = append(targets, pkgname)
				}
			} else {
				targets = append(targets, pkgpath)
			}
			continue
		}
		vnum := strings.TrimLeft(pyfmt.Str(ver), "=")
		if pkgType == "repository" && cmpSet[pkgname] {
			cands := available[pkgname]
			match := pkgMatchVersion(vnum, cands, ignoreEpoch)
			if match == "" {
				list := "None"
				if len(cands) > 0 {
					list = strings.Join(cands, ", ")
				}
				errs = append(errs, fmt.Sprintf("No version matching '%s%s' could be found (available: %s)", pkgname, vnum, list))
				continue
			}
			vnum = match
		}
		pkgstr := pkgname + "=" + vnum
		cver := payload.Text(kwGet(oldAll, pkgname))
		switch {
		case reinstall && cver != "" && pkgCompare(vnum, "==", cver, false):
			addReinstall(pkgname, pkgstr)
		case cver == "" || pkgCompare(vnum, ">=", cver, false):
			targets = append(targets, pkgstr)
		default:
			downgrade = append(downgrade, pkgstr)
		}
	}
	if payload.Truthy(fromrepo) && !payload.Truthy(sources) {
		c.Log().Info("Targeting repo", "fromrepo", pyfmt.Str(fromrepo))
	}
	var cmds [][]string
	var allPkgs []string
	if len(targets) > 0 {
		allPkgs = append(allPkgs, targets...)
		cmds = append(cmds, append(append([]string(nil), prefix...), targets...))
	}
	if len(downgrade) > 0 {
		cmd := append([]string(nil), prefix...)
		if pkgType == "repository" && !pkgContains(cmd, "--force-yes") {
			cmd = append(cmd[:len(cmd)-1], "--force-yes", "install")
		}
		cmds = append(cmds, append(cmd, downgrade...))
	}
	if payload.Truthy(a.Get("downloadonly")) && len(cmds) > 0 {
		cmds[len(cmds)-1] = append(cmds[len(cmds)-1], "--download-only")
	}
	if len(toReinstall) > 0 {
		cmd := append([]string(nil), prefix...)
		if !payload.Truthy(sources) {
			cmd = append(cmd, "--reinstall")
		}
		for _, t := range toReinstall {
			allPkgs = append(allPkgs, t.name)
			cmd = append(cmd, payload.Text(t.version))
		}
		cmds = append(cmds, cmd)
	}
	ret := &payload.Map{}
	if len(cmds) > 0 {
		if refreshDB {
			if _, err := pkgRefreshDB(ctx, c, kwGet(kw, "cache_valid_time"), false); err != nil {
				return nil, err
			}
		}
		sel, err := pkgGetSelections(ctx, c, "", "hold")
		if err != nil {
			return nil, err
		}
		var toUnhold []string
		held, _ := sel.Get("hold")
		for _, h := range held.([]any) {
			hs := payload.Text(h)
			for _, p := range allPkgs {
				if strings.SplitN(p, "=", 2)[0] == hs {
					toUnhold = append(toUnhold, hs)
					break
				}
			}
		}
		if len(toUnhold) > 0 {
			if _, err := pkgSetSelections(ctx, c, "install", toUnhold); err != nil {
				return nil, err
			}
		}
		env := pkgUserEnv(kwGet(kw, "env"))
		for _, cmd := range cmds {
			out, err := pkgCallApt(ctx, c, cmd, true, pkgRunOpts{env: env})
			if err != nil {
				return nil, err
			}
			if out.retcode != 0 && out.stderr != "" {
				errs = append(errs, out.stderr)
			}
		}
		newAll, err := pkgListPkgs(ctx, c, false, false, false)
		if err != nil {
			return nil, err
		}
		ret = PkgCompareDicts(oldAll, newAll)
		for _, t := range toReinstall {
			_, inRet := ret.Get(t.name)
			_, inOld := oldAll.Get(t.name)
			if !inRet || inOld {
				ret.Set(t.name, payload.NewMap("old", pkgTextOr(oldAll, t.name), "new", pkgTextOr(newAll, t.name)))
			}
		}
		if len(toUnhold) > 0 {
			if _, err := pkgSetSelections(ctx, c, "hold", toUnhold); err != nil {
				return nil, err
			}
		}
	}
	if len(errs) > 0 {
		return nil, &ExecInfoError{Message: "Problem encountered installing package(s)", Info: payload.NewMap("errors", errs, "changes", ret)}
	}
	return ret, nil
}

// pkgMatchVersion is salt.utils.pkg.match_version: the first available
// version satisfying "<op>version", or "".
func pkgMatchVersion(desired string, available []string, ignoreEpoch bool) string {
	oper, ver := PkgSplitComparison(desired)
	if oper == "" {
		oper = "=="
	}
	for _, cand := range available {
		if pkgCompare(cand, oper, ver, ignoreEpoch) {
			return cand
		}
	}
	return ""
}

func pkgContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func pkgTextOr(m *payload.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return payload.Text(v)
	}
	return ""
}

// pkgUserEnv turns the env argument (a map or a list of one-key maps) into
// KEY=value entries.
func pkgUserEnv(v any) []string {
	var out []string
	add := func(m *payload.Map) {
		for _, it := range m.Items() {
			out = append(out, payload.KeyString(it.Key)+"="+pyfmt.Str(it.Value))
		}
	}
	switch x := v.(type) {
	case *payload.Map:
		add(x)
	case []any:
		for _, el := range x {
			if m, ok := el.(*payload.Map); ok {
				add(m)
			}
		}
	}
	return out
}

// PkgCompareDicts is salt.utils.data.compare_dicts: {key: {old, new}} for
// every key added, removed or changed between old and new, sorted by key
// (Python's order there is a set's and so arbitrary).
func PkgCompareDicts(old, new *payload.Map) *payload.Map {
	keys := map[string]bool{}
	for _, m := range []*payload.Map{old, new} {
		if m == nil {
			continue
		}
		for _, it := range m.Items() {
			keys[payload.KeyString(it.Key)] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	ret := &payload.Map{}
	for _, k := range sorted {
		var ov, nv any
		var inOld, inNew bool
		if old != nil {
			ov, inOld = old.Get(k)
		}
		if new != nil {
			nv, inNew = new.Get(k)
		}
		switch {
		case !inOld:
			ret.Set(k, payload.NewMap("old", "", "new", nv))
		case !inNew:
			ret.Set(k, payload.NewMap("new", "", "old", ov))
		case !py.Equal(ov, nv):
			ret.Set(k, payload.NewMap("old", ov, "new", nv))
		}
	}
	return ret
}

// pkgUninstall is aptpkg's _uninstall for remove and purge.
func pkgUninstall(ctx context.Context, c *modules.Call, action string) (any, error) {
	if err := pkgVirtual(c); err != nil {
		return nil, err
	}
	params, _, err := pkgParseTargets(ctx, c, c.Args.Get("name"), c.Args.Get("pkgs"), nil, nil, true)
	if err != nil {
		return nil, err
	}
	if params == nil {
		return nil, fmt.Errorf("%w: No package sources provided", modules.ErrInvocation)
	}
	old, err := pkgListPkgs(ctx, c, false, false, false)
	if err != nil {
		return nil, err
	}
	oldRemoved, err := pkgListPkgs(ctx, c, false, true, false)
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, p := range params {
		if old.Has(p.name) {
			targets = append(targets, p.name)
		}
	}
	if action == "purge" {
		for _, p := range params {
			if oldRemoved.Has(p.name) {
				targets = append(targets, p.name)
			}
		}
	}
	if len(targets) == 0 {
		return &payload.Map{}, nil
	}
	out, err := pkgCallApt(ctx, c, append([]string{"apt-get", "-q", "-y", action}, targets...), true, pkgRunOpts{env: pkgUserEnv(kwGet(c.Args.Kwargs, "env"))})
	if err != nil {
		return nil, err
	}
	var errs []any
	if out.retcode != 0 && out.stderr != "" {
		errs = append(errs, out.stderr)
	}
	newList, err := pkgListPkgs(ctx, c, false, false, false)
	if err != nil {
		return nil, err
	}
	changes := PkgCompareDicts(old, newList)
	var ret *payload.Map
	if action == "purge" {
		newRemoved, err := pkgListPkgs(ctx, c, false, true, false)
		if err != nil {
			return nil, err
		}
		ret = payload.NewMap("removed", PkgCompareDicts(oldRemoved, newRemoved), "installed", changes)
	} else {
		ret = changes
	}
	if len(errs) > 0 {
		return nil, &ExecInfoError{Message: "Problem encountered removing package(s)", Info: payload.NewMap("errors", errs, "changes", ret)}
	}
	return ret, nil
}

var pkgConfRe = regexp.MustCompile(`(?m)^Conf ([^ ]+) \(([^ ]+)`)

func pkgListUpgradesFn(ctx context.Context, c *modules.Call) (any, error) {
	if err := pkgVirtual(c); err != nil {
		return nil, err
	}
	kw := c.Args.CleanKwargs()
	if c.Args.Bool("refresh") {
		if _, err := pkgRefreshDB(ctx, c, kwGet(kw, "cache_valid_time"), false); err != nil {
			return nil, err
		}
	}
	args := []string{"apt-get", "--just-print"}
	if payload.Truthy(c.Args.Get("dist_upgrade")) {
		args = append(args, "dist-upgrade")
	} else {
		args = append(args, "upgrade")
	}
	if v, ok := kw.Get("fromrepo"); ok {
		args = append(args, "-o", "APT::Default-Release="+pyfmt.Str(v))
	}
	call, err := pkgCallApt(ctx, c, args, true, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	if call.retcode != 0 {
		msg := "Failed to get upgrades"
		for _, s := range []string{call.stderr, call.stdout} {
			if s != "" {
				msg += ": " + s
				break
			}
		}
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, msg)
	}
	ret := &payload.Map{}
	for _, m := range pkgConfRe.FindAllStringSubmatch(call.stdout, -1) {
		ret.Set(m[1], m[2])
	}
	return ret, nil
}

// pkgListRepoPkgsRaw parses "apt-cache show" (or dump) into name ->
// available versions.
func pkgListRepoPkgsRaw(ctx context.Context, c *modules.Call, names []string) (map[string][]string, error) {
	args := []string{"apt-cache", "dump"}
	if len(names) > 0 {
		args = append([]string{"apt-cache", "show"}, names...)
	}
	out, err := pkgCallApt(ctx, c, args, false, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	ret := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(out.stdout, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "Package: "); ok && rest != "" {
			if rest != cur {
				cur = rest
				continue
			}
		}
		comps := strings.SplitN(strings.TrimSpace(line), " ", 2)
		if comps[0] == "Version:" && len(comps) == 2 {
			ret[cur] = append(ret[cur], strings.TrimSpace(comps[1]))
		}
	}
	return ret, nil
}

func pkgListRepoPkgs(ctx context.Context, c *modules.Call, names []string) (*payload.Map, error) {
	raw, err := pkgListRepoPkgsRaw(ctx, c, names)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ret := &payload.Map{}
	for _, k := range keys {
		vs := make([]any, len(raw[k]))
		for i, v := range raw[k] {
			vs[i] = v
		}
		ret.Set(k, vs)
	}
	return ret, nil
}

// pkgGetSelections is get_selections: "dpkg --get-selections" grouped by
// state ({state: [names]}), or only {state: [...]} when state is given.
func pkgGetSelections(ctx context.Context, c *modules.Call, pattern, state string) (*payload.Map, error) {
	if pattern == "" {
		pattern = "*"
	}
	out, err := pkgRun(ctx, []string{"dpkg", "--get-selections", pattern}, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	for _, line := range strings.Split(out.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		cur, _ := ret.Get(f[1])
		list, _ := cur.([]any)
		ret.Set(f[1], append(list, f[0]))
	}
	if state != "" {
		v, ok := ret.Get(state)
		if !ok {
			v = []any{}
		}
		return payload.NewMap(state, v), nil
	}
	return ret, nil
}

// pkgSetSelections sets the dpkg selection state of each package that is
// not already in it, returning {pkg: {old, new}}.
func pkgSetSelections(ctx context.Context, c *modules.Call, state string, pkgs []string) (*payload.Map, error) {
	cur, err := pkgGetSelections(ctx, c, "", "")
	if err != nil {
		return nil, err
	}
	rev := map[string]string{}
	for _, it := range cur.Items() {
		list, _ := it.Value.([]any)
		for _, p := range list {
			rev[payload.Text(p)] = payload.KeyString(it.Key)
		}
	}
	ret := &payload.Map{}
	for _, p := range pkgs {
		if rev[p] == state {
			continue
		}
		res, err := pkgCallApt(ctx, c, []string{"dpkg", "--set-selections"}, false, pkgRunOpts{stdin: p + " " + state})
		if err != nil {
			return nil, err
		}
		if res.retcode != 0 {
			c.Log().Error("failed to set state for package", "state", state, "pkg", p)
			continue
		}
		var old any
		if s, ok := rev[p]; ok {
			old = s
		}
		ret.Set(p, payload.NewMap("old", old, "new", state))
	}
	return ret, nil
}

// pkgTestMode reports opts test=True.
func pkgTestMode(c *modules.Call) bool {
	if c.Env == nil || c.Env.Opts == nil {
		return false
	}
	v, _ := c.Env.Opts.Get("test")
	return payload.Truthy(v)
}

// pkgHold is hold (hold=true) and unhold.
func pkgHold(ctx context.Context, c *modules.Call, hold bool) (any, error) {
	if err := pkgVirtual(c); err != nil {
		return nil, err
	}
	name, pkgs, sources := c.Args.Get("name"), c.Args.Get("pkgs"), c.Args.Get("sources")
	if !payload.Truthy(name) && !payload.Truthy(pkgs) && !payload.Truthy(sources) {
		return nil, fmt.Errorf("%w: One of name, pkgs, or sources must be specified.", modules.ErrInvocation)
	}
	if payload.Truthy(pkgs) && payload.Truthy(sources) {
		return nil, fmt.Errorf("%w: Only one of pkgs or sources can be specified.", modules.ErrInvocation)
	}
	var targets []string
	first := func(v any) string {
		if m, ok := v.(*payload.Map); ok && m.Len() > 0 {
			return payload.KeyString(m.Items()[0].Key)
		}
		return pyfmt.Str(v)
	}
	switch {
	case payload.Truthy(pkgs):
		list, _ := pkgs.([]any)
		for _, p := range list {
			targets = append(targets, first(p))
		}
	case payload.Truthy(sources):
		list, _ := sources.([]any)
		for _, p := range list {
			targets = append(targets, first(p))
		}
	default:
		targets = append(targets, pyfmt.Str(name))
	}
	ret := &payload.Map{}
	for _, t := range targets {
		r := payload.NewMap("name", t, "changes", &payload.Map{}, "result", false, "comment", "")
		ret.Set(t, r)
		var state *payload.Map
		var err error
		if hold {
			state, err = pkgGetSelections(ctx, c, t, "hold")
		} else {
			state, err = pkgGetSelections(ctx, c, t, "")
		}
		if err != nil {
			return nil, err
		}
		isHeld := modules.IsTrue(kwGet(state, "hold"))
		switch {
		case state.Len() == 0:
			if hold {
				r.Set("comment", fmt.Sprintf("Package %s not currently held.", t))
			} else {
				r.Set("comment", fmt.Sprintf("Package %s does not have a state.", t))
			}
		case hold != isHeld:
			verb, want := "held", "hold"
			if !hold {
				verb, want = "not to be held", "install"
			}
			if pkgTestMode(c) {
				r.Set("result", nil)
				if hold {
					r.Set("comment", fmt.Sprintf("Package %s is set to be held.", t))
				} else {
					r.Set("comment", fmt.Sprintf("Package %s is set %s.", t, verb))
				}
				continue
			}
			res, err := pkgSetSelections(ctx, c, want, []string{t})
			if err != nil {
				return nil, err
			}
			ch, _ := res.Get(t)
			if ch == nil {
				ch = &payload.Map{}
			}
			r.Set("changes", ch)
			r.Set("result", true)
			if hold {
				r.Set("comment", fmt.Sprintf("Package %s is now being held.", t))
			} else {
				r.Set("comment", fmt.Sprintf("Package %s is no longer being held.", t))
			}
		default:
			r.Set("result", true)
			if hold {
				r.Set("comment", fmt.Sprintf("Package %s is already set to be held.", t))
			} else {
				r.Set("comment", fmt.Sprintf("Package %s is already set not to be held.", t))
			}
		}
	}
	return ret, nil
}

// DebVersionCompare compares two Debian package versions the way dpkg
// and apt do ([epoch:]upstream[-revision], '~' sorting before anything),
// returning -1, 0 or 1. ignoreEpoch drops "epoch:" from both first.
func DebVersionCompare(a, b string, ignoreEpoch bool) int {
	if ignoreEpoch {
		if i := strings.IndexByte(a, ':'); i >= 0 {
			a = a[i+1:]
		}
		if i := strings.IndexByte(b, ':'); i >= 0 {
			b = b[i+1:]
		}
	}
	ea, ua, ra := debSplit(a)
	eb, ub, rb := debSplit(b)
	if ea != eb {
		if ea < eb {
			return -1
		}
		return 1
	}
	if r := debVerrevcmp(ua, ub); r != 0 {
		return r
	}
	return debVerrevcmp(ra, rb)
}

// debSplit splits a version into epoch, upstream version and revision.
func debSplit(v string) (epoch int64, upstream, revision string) {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, ':'); i >= 0 {
		if n, err := strconv.ParseInt(v[:i], 10, 64); err == nil {
			epoch = n
		}
		v = v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

// debOrder is the weight of one non-digit character: '~' lowest, then the
// end of the part, then letters, then everything else.
func debOrder(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return 0
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return int(c)
	case c == '~':
		return -1
	case c != 0:
		return int(c) + 256
	}
	return 0
}

func debVerrevcmp(a, b string) int {
	i, j := 0, 0
	isDigit := func(s string, k int) bool { return k < len(s) && s[k] >= '0' && s[k] <= '9' }
	for i < len(a) || j < len(b) {
		firstDiff := 0
		for (i < len(a) && !isDigit(a, i)) || (j < len(b) && !isDigit(b, j)) {
			var ac, bc int
			if i < len(a) {
				ac = debOrder(a[i])
			}
			if j < len(b) {
				bc = debOrder(b[j])
			}
			if ac != bc {
				return pkgSign(ac - bc)
			}
			i++
			j++
		}
		for i < len(a) && a[i] == '0' {
			i++
		}
		for j < len(b) && b[j] == '0' {
			j++
		}
		for isDigit(a, i) && isDigit(b, j) {
			if firstDiff == 0 {
				firstDiff = int(a[i]) - int(b[j])
			}
			i++
			j++
		}
		if isDigit(a, i) {
			return 1
		}
		if isDigit(b, j) {
			return -1
		}
		if firstDiff != 0 {
			return pkgSign(firstDiff)
		}
	}
	return 0
}

func pkgSign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

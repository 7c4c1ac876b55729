package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pep440"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's pip execution module (salt/modules/pip.py) over
// the pip binary: install, uninstall, freeze, list, version,
// list_upgrades, upgrade, is_installed, upgrade_available, list_all_versions,
// with Salt's command lines and returns (cmd.run_all dicts for install and
// uninstall). salt:// requirements files are cached through cp.

// pipNotFound is Salt's CommandNotFoundError of the pip module.
func pipNotFound(msg string) error {
	return fmt.Errorf("%w: %s", modules.ErrCommandNotFound, msg)
}

// pipBin is _get_pip_bin: the command that runs pip for bin_env.
func pipBin(binEnv any) ([]string, error) {
	if !payload.Truthy(binEnv) {
		py, err := exec.LookPath("python3")
		if err != nil {
			return nil, pipNotFound("Could not find a `pip` binary")
		}
		return []string{py, "-m", "pip"}, nil
	}
	be := pyfmt.Str(binEnv)
	if st, err := os.Stat(be); err == nil && st.IsDir() {
		for _, p := range []string{filepath.Join(be, "python"), filepath.Join(be, "bin", "python"), filepath.Join(be, "Scripts", "python")} {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
				return []string{filepath.Clean(p), "-m", "pip"}, nil
			}
		}
		return nil, pipNotFound("Could not find a pip binary in virtualenv " + be)
	}
	st, err := os.Stat(be)
	if err == nil && st.Mode()&0o111 != 0 {
		if st.Mode().IsRegular() {
			if strings.Contains(filepath.Base(be), "python") {
				return []string{filepath.Clean(be), "-m", "pip"}, nil
			}
			return []string{filepath.Clean(be)}, nil
		}
		return nil, fmt.Errorf("%w: Could not find a pip binary within %s", modules.ErrExecution, be)
	}
	return nil, pipNotFound(fmt.Sprintf("Access denied to %s, could not find a pip binary", be))
}

// pipRun is cmd.run_all(cmd, python_shell=False, cwd, runas, env) with
// VIRTUAL_ENV set for a virtualenv bin_env.
func pipRun(ctx context.Context, c *modules.Call, cmd []string, binEnv, cwd, user any, env *payload.Map) (*cmdOutcome, error) {
	if env == nil {
		env = &payload.Map{}
	}
	if payload.Truthy(binEnv) {
		if st, err := os.Stat(pyfmt.Str(binEnv)); err == nil && st.IsDir() {
			env.Set("VIRTUAL_ENV", pyfmt.Str(binEnv))
		}
	}
	argv := make([]any, len(cmd))
	for i, s := range cmd {
		argv[i] = s
	}
	req := cmdRequest{cmd: argv, cwd: cwd, runas: cmdOptStr(user), shell: "/bin/sh", pythonShell: false, rstrip: true,
		loglevel: "debug", resetLocale: true}
	if env.Len() > 0 {
		req.env = env
	}
	return cmdRunCore(ctx, c, req)
}

// pipEnvVars is _format_env_vars.
func pipEnvVars(v any) (*payload.Map, error) {
	out := &payload.Map{}
	if !payload.Truthy(v) {
		return out, nil
	}
	m, ok := v.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: env_vars %s is not a dictionary", modules.ErrExecution, pyfmt.Str(v))
	}
	for _, it := range m.Items() {
		out.Set(pyfmt.Str(it.Key), pyfmt.Str(it.Value))
	}
	return out, nil
}

var pipVersionRe = regexp.MustCompile(`^pip (\S+)`)

// pipVersion is pip.version (not cached: each call asks pip).
func pipVersion(ctx context.Context, c *modules.Call, binEnv, cwd, user any) (any, error) {
	cmd, err := pipBin(binEnv)
	if err != nil {
		return nil, err
	}
	out, err := pipRun(ctx, c, append(cmd, "--version"), nil, cwd, user, nil)
	if err != nil {
		return nil, err
	}
	if !cmdRetcodeZero(out.retcode) {
		return nil, pipNotFound("Could not find a `pip` binary")
	}
	if m := pipVersionRe.FindStringSubmatch(out.stdout); m != nil {
		return m[1], nil
	}
	return nil, nil
}

// pipVerCmp compares dotted versions numerically where it can (Salt's
// LooseVersion comparison for pip's own version).
func pipVerCmp(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		if i >= len(pa) {
			return -1
		}
		if i >= len(pb) {
			return 1
		}
		x, err1 := strconv.Atoi(pa[i])
		y, err2 := strconv.Atoi(pb[i])
		switch {
		case err1 == nil && err2 == nil && x != y:
			if x < y {
				return -1
			}
			return 1
		case (err1 != nil || err2 != nil) && pa[i] != pb[i]:
			if pa[i] < pb[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// pipSplit is "a, b" -> ["a", "b"] for a string, the list as strings
// otherwise.
func pipSplit(v any) []string {
	if s, ok := v.(string); ok {
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	return pipStrList(v)
}

// pipStrList is a list argument as strings (nil for None).
func pipStrList(v any) []string {
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		return []string{pyfmt.Str(v)}
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, pyfmt.Str(x))
	}
	return out
}

var pipValidProtos = []string{"http", "https", "ftp", "file"}

// pipValidURL is salt.utils.url.validate(url, VALID_PROTOS).
func pipValidURL(u string) bool {
	scheme, _, ok := strings.Cut(u, "://")
	if !ok {
		return false
	}
	for _, p := range pipValidProtos {
		if scheme == p {
			return true
		}
	}
	return false
}

// pipRequirements is _process_requirements without the user copy: the
// --requirement arguments (salt:// files cached first). A missing
// salt:// file returns Salt's error dict.
func pipRequirements(ctx context.Context, c *modules.Call, reqs any, cmd []string) ([]string, *payload.Map, error) {
	if reqs == nil {
		return cmd, nil, nil
	}
	var list []string
	switch r := reqs.(type) {
	case string:
		list = pipSplit(r)
	case []any:
		list = pipStrList(r)
	default:
		return nil, nil, fmt.Errorf("%w: requirements must be a string or list", modules.ErrArguments)
	}
	for _, r := range list {
		if strings.HasPrefix(r, "salt://") {
			saltenv := "base"
			if v := c.Args.Get("saltenv"); v != nil {
				saltenv = pyfmt.Str(v)
			}
			cached, err := cmdCacheSource(ctx, c, r, saltenv)
			if err != nil || cached == "" {
				return nil, payload.NewMap("result", false, "comment", fmt.Sprintf("pip requirements file '%s' not found", r)), nil
			}
			r = cached
		}
		cmd = append(cmd, "--requirement", r)
	}
	return cmd, nil, nil
}

// pipProxy is the --proxy argument from proxy or the proxy_* options.
func pipProxy(c *modules.Call, cmd []string) []string {
	proxy := c.Args.Get("proxy")
	if payload.Truthy(proxy) {
		return append(cmd, "--proxy", pyfmt.Str(proxy))
	}
	if proxy == false || c.Env == nil || c.Env.Opts == nil {
		return cmd
	}
	opts := c.Env.Opts
	o := func(k string) string {
		if v, ok := opts.Get(k); ok && payload.Truthy(v) {
			return pyfmt.Str(v)
		}
		return ""
	}
	if o("proxy_host") == "" || o("proxy_port") == "" {
		return cmd
	}
	if o("proxy_username") != "" && o("proxy_password") != "" {
		return append(cmd, "--proxy", fmt.Sprintf("http://%s:%s@%s:%s", o("proxy_username"), o("proxy_password"), o("proxy_host"), o("proxy_port")))
	}
	return append(cmd, "--proxy", fmt.Sprintf("http://%s:%s", o("proxy_host"), o("proxy_port")))
}

// pipTimeout checks and appends --timeout.
func pipTimeout(c *modules.Call, cmd []string) ([]string, error) {
	t := c.Args.Get("timeout")
	if !payload.Truthy(t) {
		return cmd, nil
	}
	s := pyfmt.Str(t)
	_, isFloat := t.(float64)
	if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil || isFloat {
		return nil, fmt.Errorf("ValueError: '%s' is not a valid timeout, must be an integer", s)
	}
	return append(cmd, "--timeout", s), nil
}

var pipEggRe = regexp.MustCompile(`(?:#|#.*?&)egg=([^&]*)`)

func pipInstall(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	binEnv := a.Get("bin_env")
	cmd, err := pipBin(binEnv)
	if err != nil {
		return nil, err
	}
	cmd = append(cmd, "install")
	cmd, errRet, err := pipRequirements(ctx, c, a.Get("requirements"), cmd)
	if err != nil || errRet != nil {
		return errRet, err
	}
	curV, err := pipVersion(ctx, c, binEnv, a.Get("cwd"), a.Get("user"))
	if err != nil {
		return nil, err
	}
	cur := pyfmt.Str(curV)
	for _, w := range []struct{ arg, flag string }{{"use_wheel", "--use-wheel"}, {"no_use_wheel", "--no-use-wheel"}} {
		if argsBool(c, w.arg) {
			if pipVerCmp(cur, "1.4") < 0 || pipVerCmp(cur, "9.0.3") > 0 {
				c.Log().Error(fmt.Sprintf("The %s option is only supported in pip between 1.4 and 9.0.3. The version of pip detected is %s. This option will be ignored.", w.flag, cur))
			} else {
				cmd = append(cmd, w.flag)
			}
		}
	}
	if nb := a.Get("no_binary"); payload.Truthy(nb) {
		if pipVerCmp(cur, "7.0.0") < 0 {
			c.Log().Error("The --no-binary option is only supported in pip 7.0.0 and newer. This option will be ignored.")
		} else {
			cmd = append(cmd, "--no-binary", strings.Join(pipStrList(nb), ","))
		}
	}
	if l := a.Get("log"); payload.Truthy(l) {
		p := pyfmt.Str(l)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return nil, fmt.Errorf("OSError: '%s' is a directory. Use --log path_to_file", p)
		}
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err != nil {
			return nil, fmt.Errorf("OSError: '%s' is not writeable", p)
		} else {
			f.Close()
		}
		cmd = append(cmd, "--log", p)
	}
	cmd = pipProxy(c, cmd)
	if cmd, err = pipTimeout(c, cmd); err != nil {
		return nil, err
	}
	if fl := a.Get("find_links"); payload.Truthy(fl) {
		for _, l := range pipSplit(fl) {
			if _, err := os.Stat(l); !pipValidURL(l) && err != nil {
				return nil, fmt.Errorf("%w: '%s' is not a valid URL or path", modules.ErrExecution, l)
			}
			cmd = append(cmd, "--find-links", l)
		}
	}
	idx, extra := a.Get("index_url"), a.Get("extra_index_url")
	if argsBool(c, "no_index") && (payload.Truthy(idx) || payload.Truthy(extra)) {
		return nil, fmt.Errorf("%w: 'no_index' and ('index_url' or 'extra_index_url') are mutually exclusive.", modules.ErrExecution)
	}
	for _, u := range []struct {
		v    any
		flag string
	}{{idx, "--index-url"}, {extra, "--extra-index-url"}} {
		if payload.Truthy(u.v) {
			if !pipValidURL(pyfmt.Str(u.v)) {
				return nil, fmt.Errorf("%w: '%s' is not a valid URL", modules.ErrExecution, pyfmt.Str(u.v))
			}
			cmd = append(cmd, u.flag, pyfmt.Str(u.v))
		}
	}
	if argsBool(c, "no_index") {
		cmd = append(cmd, "--no-index")
	}
	if payload.Truthy(a.Get("mirrors")) && pipVerCmp(cur, "7.0.0") >= 0 {
		return nil, fmt.Errorf("%w: pip >= 7.0.0 does not support mirror argument: use index_url and/or extra_index_url instead", modules.ErrExecution)
	}
	if argsBool(c, "disable_version_check") {
		cmd = append(cmd, "--disable-pip-version-check")
	}
	strFlag := func(arg, flag string) {
		if v := a.Get(arg); payload.Truthy(v) {
			cmd = append(cmd, flag, pyfmt.Str(v))
		}
	}
	strFlag("build", "--build")
	target := a.Get("target")
	if target == nil && binEnv == nil {
		if t, ok := os.LookupEnv("VENV_PIP_TARGET"); ok {
			target = t
		}
	}
	if payload.Truthy(target) {
		cmd = append(cmd, "--target", pyfmt.Str(target))
	}
	strFlag("download", "--download")
	if dc := a.Get("download_cache"); payload.Truthy(dc) || payload.Truthy(a.Get("cache_dir")) {
		if !payload.Truthy(dc) {
			dc = a.Get("cache_dir")
		}
		flag := "--cache-dir"
		if pipVerCmp(cur, "6.0") < 0 {
			flag = "--download-cache"
		}
		cmd = append(cmd, flag, pyfmt.Str(dc))
	}
	strFlag("source", "--source")
	for _, f := range []struct{ arg, flag string }{{"upgrade", "--upgrade"}, {"force_reinstall", "--force-reinstall"}, {"ignore_installed", "--ignore-installed"}} {
		if argsBool(c, f.arg) {
			cmd = append(cmd, f.flag)
		}
	}
	if ea := a.Get("exists_action"); payload.Truthy(ea) {
		s := pyfmt.Str(ea)
		if !strings.Contains("sSiIwWbB", s) || len(s) != 1 {
			return nil, fmt.Errorf("%w: The exists_action pip option only supports the values s, i, w, and b. '%s' is not valid.", modules.ErrExecution, s)
		}
		cmd = append(cmd, "--exists-action", s)
	}
	for _, f := range []struct{ arg, flag string }{{"no_deps", "--no-deps"}, {"no_install", "--no-install"}, {"no_download", "--no-download"}, {"no_cache_dir", "--no-cache-dir"}} {
		if argsBool(c, f.arg) {
			cmd = append(cmd, f.flag)
		}
	}
	if argsBool(c, "pre_releases") && pipVerCmp(cur, "1.4") >= 0 {
		cmd = append(cmd, "--pre")
	}
	strFlag("cert", "--cert")
	for _, o := range []struct{ arg, flag string }{{"global_options", "--global-option"}, {"install_options", "--install-option"}} {
		if v := a.Get(o.arg); payload.Truthy(v) {
			for _, x := range pipSplit(v) {
				cmd = append(cmd, o.flag, x)
			}
		}
	}
	pkgs := a.Get("pkgs")
	editable := a.Get("editable")
	if payload.Truthy(pkgs) {
		var list []string
		if l, ok := pkgs.([]any); ok {
			list = pipStrList(l)
		} else {
			list = pipSplit(pyfmt.Str(pkgs))
		}
		for _, p := range list {
			cmd = append(cmd, strings.ReplaceAll(p, ";", ","))
		}
	} else if !payload.Truthy(a.Get("requirements")) && !payload.Truthy(editable) {
		return payload.NewMap("retcode", int64(0), "stdout", "No packages to install."), nil
	}
	if payload.Truthy(editable) {
		for _, e := range pipSplit(editable) {
			if !(e == "." || strings.HasPrefix(e, "file://") || strings.HasPrefix(e, "/")) {
				if m := pipEggRe.FindStringSubmatch(e); m == nil || m[1] == "" {
					return nil, fmt.Errorf("%w: You must specify an egg for this editable", modules.ErrExecution)
				}
			}
			cmd = append(cmd, "--editable", e)
		}
	}
	if argsBool(c, "allow_all_external") {
		cmd = append(cmd, "--allow-all-external")
	}
	for _, o := range []struct{ arg, flag string }{{"allow_external", "--allow-external"}, {"allow_unverified", "--allow-unverified"}} {
		if v := a.Get(o.arg); payload.Truthy(v) {
			for _, x := range pipSplit(v) {
				cmd = append(cmd, o.flag, x)
			}
		}
	}
	if argsBool(c, "process_dependency_links") {
		cmd = append(cmd, "--process-dependency-links")
	}
	strFlag("trusted_host", "--trusted-host")
	if ea, ok := a.Get("extra_args").([]any); ok {
		for _, x := range ea {
			if m, ok := x.(*payload.Map); ok && m.Len() > 0 {
				it := m.Items()[m.Len()-1]
				switch it.Value.(type) {
				case *payload.Map, []any:
					return nil, fmt.Errorf("%w: Too many levels in: %s", modules.ErrArguments, pyfmt.Str(it.Key))
				}
				cmd = append(cmd, pyfmt.Str(it.Key), pyfmt.Str(it.Value))
				continue
			}
			cmd = append(cmd, pyfmt.Str(x))
		}
	}
	env, err := pipEnvVars(a.Get("env_vars"))
	if err != nil {
		return nil, err
	}
	out, err := pipRun(ctx, c, cmd, binEnv, a.Get("cwd"), a.Get("user"), env)
	if err != nil {
		return nil, err
	}
	return out.toMap(), nil
}

func pipUninstall(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	binEnv := a.Get("bin_env")
	cmd, err := pipBin(binEnv)
	if err != nil {
		return nil, err
	}
	cmd = append(cmd, "uninstall", "-y")
	cmd, errRet, err := pipRequirements(ctx, c, a.Get("requirements"), cmd)
	if err != nil || errRet != nil {
		return errRet, err
	}
	if l := a.Get("log"); payload.Truthy(l) {
		cmd = append(cmd, "--log", pyfmt.Str(l))
	}
	cmd = pipProxy(c, cmd)
	if cmd, err = pipTimeout(c, cmd); err != nil {
		return nil, err
	}
	if pkgs := a.Get("pkgs"); payload.Truthy(pkgs) {
		list := pipSplit(pkgs)
		for _, r := range pipStrList(a.Get("requirements")) {
			b, err := os.ReadFile(r)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
			for _, line := range strings.SplitAfter(string(b), "\n") {
				parts := strings.Split(line, "==")
				if len(parts) != 2 {
					continue
				}
				for i, p := range list {
					if p == parts[0] {
						list = append(list[:i], list[i+1:]...)
						break
					}
				}
			}
		}
		cmd = append(cmd, list...)
	}
	out, err := pipRun(ctx, c, cmd, binEnv, a.Get("cwd"), a.Get("user"), nil)
	if err != nil {
		return nil, err
	}
	return out.toMap(), nil
}

// pipFreezeLines is pip.freeze.
func pipFreezeLines(ctx context.Context, c *modules.Call, binEnv, cwd, user, envVars any) ([]string, error) {
	cmd, err := pipBin(binEnv)
	if err != nil {
		return nil, err
	}
	cmd = append(cmd, "freeze")
	v, err := pipVersion(ctx, c, binEnv, cwd, nil)
	if err != nil {
		return nil, err
	}
	if pipVerCmp(pyfmt.Str(v), "8.0.3") >= 0 {
		cmd = append(cmd, "--all")
	}
	env, err := pipEnvVars(envVars)
	if err != nil {
		return nil, err
	}
	out, err := pipRun(ctx, c, cmd, binEnv, cwd, user, env)
	if err != nil {
		return nil, err
	}
	if !cmdRetcodeZero(out.retcode) {
		return nil, pipCmdError(out)
	}
	return pySplitLines(out.stdout), nil
}

// pipCmdError is CommandExecutionError(stderr, info=result).
func pipCmdError(out *cmdOutcome) error {
	return fmt.Errorf("%w: %s", modules.ErrExecution, out.stderr)
}

// pySplitLines is str.splitlines on \n and \r\n.
func pySplitLines(s string) []string {
	if s == "" {
		return []string{}
	}
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// pipList is pip.list.
func pipList(ctx context.Context, c *modules.Call, prefix, binEnv, cwd, user, envVars any) (*payload.Map, error) {
	cmd, err := pipBin(binEnv)
	if err != nil {
		return nil, err
	}
	if _, err := pipVersion(ctx, c, binEnv, cwd, user); err != nil {
		return nil, err
	}
	env, err := pipEnvVars(envVars)
	if err != nil {
		return nil, err
	}
	out, err := pipRun(ctx, c, append(cmd, "list", "--format=json"), binEnv, cwd, user, env)
	if err != nil {
		return nil, err
	}
	if !cmdRetcodeZero(out.retcode) {
		return nil, pipCmdError(out)
	}
	var pkgs []struct{ Name, Version string }
	if err := json.Unmarshal([]byte(out.stdout), &pkgs); err != nil {
		return nil, fmt.Errorf("%w: Invalid JSON", modules.ErrExecution)
	}
	ret := &payload.Map{}
	p := ""
	if prefix != nil {
		p = strings.ToLower(pyfmt.Str(prefix))
	}
	for _, pk := range pkgs {
		if p == "" || strings.HasPrefix(strings.ToLower(pk.Name), p) {
			ret.Set(pk.Name, pk.Version)
		}
	}
	return ret, nil
}

// pipListUpgrades is pip.list_upgrades.
func pipListUpgrades(ctx context.Context, c *modules.Call, binEnv, cwd, user any) (*payload.Map, error) {
	cmd, err := pipBin(binEnv)
	if err != nil {
		return nil, err
	}
	if _, err := pipVersion(ctx, c, binEnv, cwd, user); err != nil {
		return nil, err
	}
	out, err := pipRun(ctx, c, append(cmd, "list", "--outdated", "--format=json"), binEnv, cwd, user, nil)
	if err != nil {
		return nil, err
	}
	if !cmdRetcodeZero(out.retcode) {
		return nil, pipCmdError(out)
	}
	var pkgs []struct {
		Name           string
		LatestVersion  string `json:"latest_version"`
		LatestFiletype string `json:"latest_filetype"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &pkgs); err != nil {
		return nil, fmt.Errorf("%w: Invalid JSON", modules.ErrExecution)
	}
	ret := &payload.Map{}
	for _, pk := range pkgs {
		ret.Set(pk.Name, fmt.Sprintf("%s [%s]", pk.LatestVersion, pk.LatestFiletype))
	}
	return ret, nil
}

// pipUpgrade is pip.upgrade: "install -U" for each package
// list_upgrades names, stderr gathered into the comment, changes as
// compare_dicts of pip.list before and after.
func pipUpgrade(ctx context.Context, c *modules.Call) (any, error) {
	binEnv, cwd, user := c.Args.Get("bin_env"), c.Args.Get("cwd"), c.Args.Get("user")
	cmd, err := pipBin(binEnv)
	if err != nil {
		return nil, err
	}
	cmd = append(cmd, "install", "-U")
	old, err := pipList(ctx, c, nil, binEnv, cwd, user, nil)
	if err != nil {
		return nil, err
	}
	ups, err := pipListUpgrades(ctx, c, binEnv, cwd, user)
	if err != nil {
		return nil, err
	}
	var comment strings.Builder
	failed := false
	for _, pkg := range ups.Keys() {
		out, err := pipRun(ctx, c, append(append([]string{}, cmd...), pkg), binEnv, cwd, user, nil)
		if err != nil {
			return nil, err
		}
		if !cmdRetcodeZero(out.retcode) {
			failed = true
		}
		comment.WriteString(out.stderr)
	}
	cur, err := pipList(ctx, c, nil, binEnv, cwd, user, nil)
	if err != nil {
		return nil, err
	}
	return payload.NewMap("changes", PkgCompareDicts(old, cur), "result", !failed, "comment", comment.String()), nil
}

var pipAvailRe = regexp.MustCompile(`\s*Available versions: (.*)`)

func pipFunctions() []modules.Function {
	be, usr, cwd := opt("bin_env", nil), opt("user", nil), opt("cwd", nil)
	installSpec := modules.Spec{Kwargs: true, Params: []modules.Param{opt("pkgs", nil), opt("requirements", nil), be, opt("use_wheel", false), opt("no_use_wheel", false),
		opt("log", nil), opt("proxy", nil), opt("timeout", nil), opt("editable", nil), opt("find_links", nil), opt("index_url", nil), opt("extra_index_url", nil),
		opt("no_index", false), opt("mirrors", nil), opt("build", nil), opt("target", nil), opt("download", nil), opt("download_cache", nil), opt("source", nil),
		opt("upgrade", false), opt("force_reinstall", false), opt("ignore_installed", false), opt("exists_action", nil), opt("no_deps", false),
		opt("no_install", false), opt("no_download", false), opt("global_options", nil), opt("install_options", nil), usr, cwd, opt("pre_releases", false),
		opt("cert", nil), opt("allow_all_external", false), opt("allow_external", nil), opt("allow_unverified", nil), opt("process_dependency_links", false),
		opt("saltenv", "base"), opt("env_vars", nil), opt("use_vt", false), opt("trusted_host", nil), opt("no_cache_dir", false), opt("extra_args", nil),
		opt("cache_dir", nil), opt("no_binary", nil), opt("disable_version_check", false)}}
	return []modules.Function{
		{Name: "pip.install", Spec: installSpec, Fn: pipInstall,
			Doc: "Install packages with pip\n\nInstall packages individually or from a pip requirements file. Install\npackages globally or to a virtualenv.\n\nCLI Example:\n\n    salt '*' pip.install <package name>,<package2 name>\n    salt '*' pip.install requirements=/path/to/requirements.txt\n    salt '*' pip.install <package name> bin_env=/path/to/virtualenv"},
		{Name: "pip.uninstall", Spec: modules.Spec{Params: []modules.Param{opt("pkgs", nil), opt("requirements", nil), be, opt("log", nil), opt("proxy", nil),
			opt("timeout", nil), usr, cwd, opt("saltenv", "base"), opt("use_vt", false)}}, Fn: pipUninstall,
			Doc: "Uninstall packages individually or from a pip requirements file\n\nCLI Example:\n\n    salt '*' pip.uninstall <package name>,<package2 name>\n    salt '*' pip.uninstall <package name> bin_env=/path/to/virtualenv"},
		{Name: "pip.freeze", Spec: modules.Spec{Kwargs: true, Params: []modules.Param{be, usr, cwd, opt("use_vt", false), opt("env_vars", nil)}},
			Doc: "Return a list of installed packages either globally or in the specified\nvirtualenv\n\nCLI Example:\n\n    salt '*' pip.freeze bin_env=/home/code/path/to/virtualenv",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				l, err := pipFreezeLines(ctx, c, c.Args.Get("bin_env"), c.Args.Get("cwd"), c.Args.Get("user"), c.Args.Get("env_vars"))
				if err != nil {
					return nil, err
				}
				return grainsStrList(l), nil
			}},
		{Name: "pip.list", Spec: modules.Spec{Kwargs: true, Params: []modules.Param{opt("prefix", nil), be, usr, cwd, opt("env_vars", nil)}},
			Doc: "Filter list of installed apps from ``freeze`` and check to see if\n``prefix`` exists in the list of packages installed.\n\nCLI Example:\n\n    salt '*' pip.list salt",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pipList(ctx, c, c.Args.Get("prefix"), c.Args.Get("bin_env"), c.Args.Get("cwd"), c.Args.Get("user"), c.Args.Get("env_vars"))
			}},
		{Name: "pip.list_freeze_parse", Spec: modules.Spec{Kwargs: true, Params: []modules.Param{opt("prefix", nil), be, usr, cwd, opt("env_vars", nil)}},
			Doc: "Filter list of installed apps from ``freeze`` and check to see if\n``prefix`` exists in the list of packages installed.\n\n.. note::\n\n    If the version of pip available is older than 8.0.3, the packages\n    ``wheel``, ``setuptools``, and ``distribute`` will not be reported by\n    this function even if they are installed. Unlike :py:func:`pip.freeze\n    <salt.modules.pip.freeze>`, this function always reports the version of\n    pip which is installed.\n\nCLI Example:\n\n    salt '*' pip.list_freeze_parse salt",
			Fn:  pipListFreezeParse},
		{Name: "pip.version", Spec: modules.Spec{Params: []modules.Param{be, cwd, usr}},
			Doc: "Returns the version of pip. Use ``bin_env`` to specify the path to a\nvirtualenv and get the version of pip in that virtualenv.\n\nCLI Example:\n\n    salt '*' pip.version",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pipVersion(ctx, c, c.Args.Get("bin_env"), c.Args.Get("cwd"), c.Args.Get("user"))
			}},
		{Name: "pip.list_upgrades", Spec: modules.Spec{Params: []modules.Param{be, usr, cwd}},
			Doc: "Check whether or not an upgrade is available for all packages\n\nCLI Example:\n\n    salt '*' pip.list_upgrades",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return pipListUpgrades(ctx, c, c.Args.Get("bin_env"), c.Args.Get("cwd"), c.Args.Get("user"))
			}},
		{Name: "pip.upgrade", Spec: modules.Spec{Params: []modules.Param{be, usr, cwd, opt("use_vt", false)}}, Fn: pipUpgrade,
			Doc: "Upgrades outdated pip packages.\n\nReturns a dict containing the changes.\n\n    {'<package>':  {'old': '<old-version>',\n                    'new': '<new-version>'}}\n\nCLI Example:\n\n    salt '*' pip.upgrade"},
		{Name: "pip.is_installed", Spec: modules.Spec{Params: []modules.Param{req("pkgname"), be, usr, cwd}},
			Doc: "Filter list of installed apps from ``freeze`` and return True or False  if\n``pkgname`` exists in the list of packages installed.\n\nCLI Example:\n\n    salt '*' pip.is_installed salt",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				name := c.Args.Str("pkgname")
				l, err := pipList(ctx, c, name, c.Args.Get("bin_env"), c.Args.Get("cwd"), c.Args.Get("user"), nil)
				if err != nil {
					return nil, err
				}
				for _, k := range l.Keys() {
					if strings.EqualFold(k, name) {
						return true, nil
					}
				}
				return false, nil
			}},
		{Name: "pip.upgrade_available", Spec: modules.Spec{Params: []modules.Param{req("pkg"), be, usr, cwd}},
			Doc: "Check whether or not an upgrade is available for a given package\n\nCLI Example:\n\n    salt '*' pip.upgrade_available <package name>",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				l, err := pipListUpgrades(ctx, c, c.Args.Get("bin_env"), c.Args.Get("cwd"), c.Args.Get("user"))
				if err != nil {
					return nil, err
				}
				return l.Has(c.Args.Str("pkg")), nil
			}},
		{Name: "pip.list_all_versions", Spec: modules.Spec{Params: []modules.Param{req("pkg"), be, opt("include_alpha", false), opt("include_beta", false),
			opt("include_rc", false), usr, cwd, opt("index_url", nil), opt("extra_index_url", nil)}},
			Doc: "Lists all available versions of the specified package\n\nCLI Example:\n\n    salt '*' pip.list_all_versions <package name>",
			Fn:  pipListAllVersions},
	}
}

func pipListAllVersions(ctx context.Context, c *modules.Call) (any, error) {
	a := c.Args
	cmd, err := pipBin(a.Get("bin_env"))
	if err != nil {
		return nil, err
	}
	for _, u := range []struct{ arg, flag string }{{"index_url", "--index-url"}, {"extra_index_url", "--extra-index-url"}} {
		if v := a.Get(u.arg); payload.Truthy(v) {
			if !pipValidURL(pyfmt.Str(v)) {
				return nil, fmt.Errorf("%w: '%s' is not a valid URL", modules.ErrExecution, pyfmt.Str(v))
			}
			cmd = append(cmd, u.flag, pyfmt.Str(v))
		}
	}
	if _, err := pipVersion(ctx, c, a.Get("bin_env"), a.Get("cwd"), a.Get("user")); err != nil {
		return nil, err
	}
	cmd = append(cmd, "index", "versions", a.Str("pkg"))
	env := &payload.Map{}
	if b := a.Get("bin_env"); payload.Truthy(b) {
		if st, err := os.Stat(pyfmt.Str(b)); err == nil && st.IsDir() {
			env.Set("VIRTUAL_ENV", pyfmt.Str(b))
		}
	}
	argv := make([]any, len(cmd))
	for i, s := range cmd {
		argv[i] = s
	}
	req := cmdRequest{cmd: argv, cwd: a.Get("cwd"), runas: cmdOptStr(a.Get("user")), shell: "/bin/sh", pythonShell: false, rstrip: true,
		loglevel: "quiet", resetLocale: true, mergeStderr: true}
	if env.Len() > 0 {
		req.env = env
	}
	out, err := cmdRunCore(ctx, c, req)
	if err != nil {
		return nil, err
	}
	var excl []string
	for _, f := range []struct{ arg, s string }{{"include_alpha", "a"}, {"include_beta", "b"}, {"include_rc", "rc"}} {
		if !argsBool(c, f.arg) {
			excl = append(excl, f.s)
		}
	}
	for _, line := range pySplitLines(out.stdout) {
		m := pipAvailRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var vs []string
		for _, v := range strings.Split(m[1], ", ") {
			skip := v == ""
			for _, e := range excl {
				skip = skip || strings.Contains(v, e)
			}
			if !skip {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			return nil, nil
		}
		pep440.Sort(vs)
		return grainsStrList(vs), nil
	}
	return nil, nil
}

// pipListFreezeParse is list_freeze_parse (pip.list before 3006): pip's
// own version, then each `pip freeze` line split at "===" or "==" (an
// editable "-e" line at "#egg="), kept when its name starts with prefix
// (case-insensitively). An editable line with neither reuses the previous
// line's name and version, as Salt's loop does.
func pipListFreezeParse(ctx context.Context, c *modules.Call) (any, error) {
	prefix, binEnv, cwd := c.Args.Get("prefix"), c.Args.Get("bin_env"), c.Args.Get("cwd")
	p := ""
	if prefix != nil {
		p = pyfmt.Str(prefix)
	}
	pkgs := &payload.Map{}
	if prefix == nil || strings.HasPrefix("pip", p) {
		v, err := pipVersion(ctx, c, binEnv, cwd, nil)
		if err != nil {
			return nil, err
		}
		pkgs.Set("pip", v)
	}
	lines, err := pipFreezeLines(ctx, c, binEnv, cwd, c.Args.Get("user"), c.Args.Get("env_vars"))
	if err != nil {
		return nil, err
	}
	var name, version string
	set := false
	splitEq := func(line string) bool {
		for _, sep := range []string{"===", "=="} {
			if parts := strings.Split(line, sep); len(parts) >= 2 {
				name, version, set = parts[0], parts[1], true
				return true
			}
		}
		return false
	}
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "-f"), strings.HasPrefix(line, "#"), strings.HasPrefix(line, "-e hg+not trust"):
			continue
		case strings.HasPrefix(line, "-e"):
			parts := strings.Split(line, "-e ")
			if len(parts) < 2 {
				return nil, &modules.PyException{Class: "IndexError", Message: "list index out of range"}
			}
			line = parts[1]
			if egg := strings.Split(line, "#egg="); len(egg) == 2 {
				version, name, set = egg[0], egg[1], true
			} else if len(egg) > 2 {
				return nil, &modules.PyException{Class: "ValueError", Message: "too many values to unpack (expected 2)"}
			} else {
				splitEq(line)
			}
		default:
			if !splitEq(line) {
				c.Log().Error(fmt.Sprintf("Can't parse line '%s'", line))
				continue
			}
		}
		if !set {
			return nil, &modules.PyException{Class: "UnboundLocalError", Message: "cannot access local variable 'name' where it is not associated with a value"}
		}
		if p == "" || strings.HasPrefix(strings.ToLower(name), strings.ToLower(p)) {
			pkgs.Set(name, version)
		}
	}
	return pkgs, nil
}

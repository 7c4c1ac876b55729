package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/pep440"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's pip state module (salt/states/pip_state.py):
// pip.installed, pip.removed and pip.uptodate over the pip execution
// module. Requirement lines are parsed as pip's install_req_from_line
// does for names, specifiers, wheel files, paths and URLs.

// pipInstallArgs are pip.installed's arguments passed on to pip.install.
var pipInstallArgs = []string{"requirements", "bin_env", "use_wheel", "no_use_wheel", "no_binary", "log", "proxy", "timeout", "editable",
	"find_links", "index_url", "extra_index_url", "no_index", "mirrors", "build", "target", "download", "download_cache", "source", "upgrade",
	"force_reinstall", "ignore_installed", "exists_action", "no_deps", "no_install", "no_download", "install_options", "global_options", "user",
	"cwd", "pre_releases", "cert", "allow_all_external", "allow_external", "allow_unverified", "process_dependency_links", "env_vars", "use_vt",
	"trusted_host", "no_cache_dir", "extra_args"}

func pipStates() []states.Function {
	params := []modules.Param{sbReq("name"), sbOpt("pkgs", nil), sbOpt("pip_bin", nil), sbOpt("requirements", nil), sbOpt("bin_env", nil),
		sbOpt("use_wheel", false), sbOpt("no_use_wheel", false), sbOpt("log", nil), sbOpt("proxy", nil), sbOpt("timeout", nil), sbOpt("repo", nil),
		sbOpt("editable", nil), sbOpt("find_links", nil), sbOpt("index_url", nil), sbOpt("extra_index_url", nil), sbOpt("no_index", false),
		sbOpt("mirrors", nil), sbOpt("build", nil), sbOpt("target", nil), sbOpt("download", nil), sbOpt("download_cache", nil), sbOpt("source", nil),
		sbOpt("upgrade", false), sbOpt("force_reinstall", false), sbOpt("ignore_installed", false), sbOpt("exists_action", nil), sbOpt("no_deps", false),
		sbOpt("no_install", false), sbOpt("no_download", false), sbOpt("install_options", nil), sbOpt("global_options", nil), sbOpt("user", nil),
		sbOpt("cwd", nil), sbOpt("pre_releases", false), sbOpt("cert", nil), sbOpt("allow_all_external", false), sbOpt("allow_external", nil),
		sbOpt("allow_unverified", nil), sbOpt("process_dependency_links", false), sbOpt("env_vars", nil), sbOpt("use_vt", false),
		sbOpt("trusted_host", nil), sbOpt("no_cache_dir", false), sbOpt("cache_dir", nil), sbOpt("no_binary", nil), sbOpt("extra_args", nil)}
	return []states.Function{
		{Name: "pip.installed", Spec: modules.Spec{Params: params, Kwargs: true}, Fn: pipInstalled},
		{Name: "pip.removed", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("requirements", nil), sbOpt("bin_env", nil), sbOpt("log", nil),
			sbOpt("proxy", nil), sbOpt("timeout", nil), sbOpt("user", nil), sbOpt("cwd", nil), sbOpt("use_vt", false)}}, Fn: pipRemoved},
		{Name: "pip.uptodate", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("bin_env", nil), sbOpt("user", nil), sbOpt("cwd", nil),
			sbOpt("use_vt", false)}}, Fn: pipUptodate},
	}
}

// pipSpec is one (operator, version) of a requirement.
type pipSpec struct{ op, version string }

var (
	pipNameRe  = regexp.MustCompile(`^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*?)\s*$`)
	pipSpecRe  = regexp.MustCompile(`^\s*(~=|===|==|!=|<=|>=|<|>)\s*([A-Za-z0-9_.*+!-]+)\s*$`)
	pipWheelRe = regexp.MustCompile(`^([^-]+)-([^-]+)(?:-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$`)
	pipEggRe   = regexp.MustCompile(`#egg=([A-Za-z0-9._-]+)`)
	pipNonAlnu = regexp.MustCompile(`[^A-Za-z0-9.]+`)
)

// pipParseReq is _check_pkg_version_format: the project prefix ("" for a
// URL or path pip cannot name before installing) and the version specs,
// or a comment for an invalid line.
func pipParseReq(pkg string) (prefix string, specs []pipSpec, comment string) {
	isURL := strings.Contains(pkg, "://")
	isPath := strings.HasPrefix(pkg, "/") || strings.HasPrefix(pkg, ".") || strings.Contains(pkg, string(filepath.Separator))
	if isURL || isPath {
		base := pkg
		if i := strings.IndexAny(base, "#?"); i >= 0 {
			base = base[:i]
		}
		if m := pipWheelRe.FindStringSubmatch(filepath.Base(base)); m != nil {
			if _, err := os.Stat(base); err == nil || isURL {
				return pipNonAlnu.ReplaceAllString(m[1], "-"), []pipSpec{{"==", m[2]}}, ""
			}
		}
		if m := pipEggRe.FindStringSubmatch(pkg); m != nil {
			return pipNonAlnu.ReplaceAllString(m[1], "-"), nil, ""
		}
		return "", nil, ""
	}
	if name, url, ok := strings.Cut(pkg, " @ "); ok && strings.TrimSpace(url) != "" {
		if m := pipNameRe.FindStringSubmatch(name); m != nil && m[3] == "" {
			return pipNonAlnu.ReplaceAllString(m[1], "-"), nil, ""
		}
	}
	m := pipNameRe.FindStringSubmatch(pkg)
	invalid := func() (string, []pipSpec, string) {
		if strings.Contains(pkg, "=") && !strings.Contains(pkg, "==") {
			return "", nil, fmt.Sprintf("Invalid version specification in package %s. '=' is not supported, use '==' instead.", pkg)
		}
		return "", nil, fmt.Sprintf("pip raised an exception while parsing '%s': Invalid requirement: '%s'", pkg, pkg)
	}
	if m == nil {
		return invalid()
	}
	rest := m[3]
	if i := strings.Index(rest, ";"); i >= 0 {
		rest = strings.TrimSpace(rest[:i])
	}
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "("), ")")
	if strings.TrimSpace(rest) != "" {
		for _, part := range strings.Split(rest, ",") {
			sm := pipSpecRe.FindStringSubmatch(part)
			if sm == nil {
				return invalid()
			}
			specs = append(specs, pipSpec{sm[1], sm[2]})
		}
	}
	return pipNonAlnu.ReplaceAllString(m[1], "-"), specs, ""
}

// pipFulfills is _fulfills_version_spec.
func pipFulfills(version string, specs []pipSpec) bool {
	for _, s := range specs {
		if !pep440.Satisfies(version, s.op, s.version) {
			return false
		}
	}
	return true
}

// pipCIGet is CaseInsensitiveDict lookup.
func pipCIGet(m *payload.Map, key string) (any, bool) {
	if m == nil {
		return nil, false
	}
	for _, it := range m.Items() {
		if strings.EqualFold(payload.KeyString(it.Key), key) {
			return it.Value, true
		}
	}
	return nil, false
}

// pipListCall is __salt__["pip.list"](prefix, bin_env=..., ...).
func pipListCall(ctx context.Context, c *states.Call, prefix any) (*payload.Map, error) {
	kw := payload.NewMap("bin_env", c.Args.Get("bin_env"), "user", c.Args.Get("user"), "cwd", c.Args.Get("cwd"))
	if c.Args.Get("env_vars") != nil {
		kw.Set("env_vars", c.Args.Get("env_vars"))
	}
	var args []any
	if prefix != nil {
		args = []any{prefix}
	}
	v, err := sbExec(ctx, c, "pip.list", args, kw)
	if err != nil {
		return nil, err
	}
	m, _ := v.(*payload.Map)
	if m == nil {
		m = &payload.Map{}
	}
	return m, nil
}

// pipCheckInstalled is _check_if_installed: result true (with comment)
// when nothing needs installing.
func pipCheckInstalled(ctx context.Context, c *states.Call, prefix, stateName string, specs []pipSpec, pipList *payload.Map) (bool, string, error) {
	if pipList == nil || pipList.Len() == 0 {
		l, err := pipListCall(ctx, c, prefix)
		if err != nil {
			return false, "", err
		}
		pipList = l
	}
	a := c.Args
	cur, ok := pipCIGet(pipList, prefix)
	if a.Get("ignore_installed") != false || !ok {
		return false, "", nil
	}
	force := a.Get("force_reinstall") == false
	upgrade := payload.Truthy(a.Get("upgrade"))
	if force && !upgrade && (len(specs) == 0 || pipFulfills(pyfmt.Str(cur), specs)) {
		return true, fmt.Sprintf("Python package %s was already installed", stateName), nil
	}
	if force && upgrade {
		kw := payload.NewMap("bin_env", a.Get("bin_env"), "include_alpha", false, "include_beta", false, "include_rc", false,
			"user", a.Get("user"), "cwd", a.Get("cwd"), "index_url", a.Get("index_url"), "extra_index_url", a.Get("extra_index_url"))
		for _, s := range specs {
			if strings.Contains(s.version, "a") {
				kw.Set("include_alpha", true)
			}
			if strings.Contains(s.version, "b") {
				kw.Set("include_beta", true)
			}
			if strings.Contains(s.version, "rc") {
				kw.Set("include_rc", true)
			}
		}
		av, err := sbExec(ctx, c, "pip.list_all_versions", []any{prefix}, kw)
		if err != nil {
			return false, "", err
		}
		versions := strList(av)
		desired := ""
		if len(specs) > 0 {
			for i := len(versions) - 1; i >= 0; i-- {
				if pipFulfills(versions[i], specs) {
					desired = versions[i]
					break
				}
			}
		} else if len(versions) > 0 {
			desired = versions[len(versions)-1]
		}
		if desired == "" {
			return true, fmt.Sprintf("Python package %s was already installed and\nthe available upgrade doesn't fulfills the version requirements", prefix), nil
		}
		if pep440.Compare(pyfmt.Str(cur), desired) == 0 {
			return true, fmt.Sprintf("Python package %s was already installed", stateName), nil
		}
	}
	return false, "", nil
}

func pipInstalled(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := sbName(c)
	binEnv := a.Get("bin_env")
	if pb := a.Get("pip_bin"); payload.Truthy(pb) && !payload.Truthy(binEnv) {
		binEnv = pb
	}
	var pkgs []string
	if p := a.Get("pkgs"); payload.Truthy(p) {
		l, ok := p.([]any)
		if !ok {
			return states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}, Comment: "pkgs argument must be formatted as a list"}, nil
		}
		for _, x := range l {
			if m, ok := x.(*payload.Map); ok && m.Len() > 0 {
				it := m.Items()[0]
				pkgs = append(pkgs, payload.KeyString(it.Key)+" "+pyfmt.Str(it.Value))
				continue
			}
			pkgs = append(pkgs, pyfmt.Str(x))
		}
	} else {
		pkgs = []string{name}
	}
	ret := states.Ret{Name: strings.Join(pkgs, ";"), Result: states.None, Changes: &payload.Map{}}
	curV, err := sbExec(ctx, c, "pip.version", []any{binEnv}, nil)
	if err != nil {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Error installing '%s': %s", name, sbErrText(err))
		return ret, nil
	}
	cur := pyfmt.Str(curV)
	for _, w := range []string{"use_wheel", "no_use_wheel"} {
		if payload.Truthy(a.Get(w)) && (pipVersionLess(cur, "1.4") || pipVersionLess("9.0.3", cur)) {
			ret.Result = states.False
			ret.Comment = fmt.Sprintf("The '%s' option is only supported in pip between 1.4 and 9.0.3. The version of pip detected was %s.", w, cur)
			return ret, nil
		}
	}
	if payload.Truthy(a.Get("no_binary")) && pipVersionLess(cur, "7.0.0") {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("The 'no_binary' option is only supported in pip 7.0.0 and newer. The version of pip detected was %s.", cur)
		return ret, nil
	}
	requirements, editable := a.Get("requirements"), a.Get("editable")
	reqOrEdit := payload.Truthy(requirements) || payload.Truthy(editable)
	type detail struct {
		prefix, pkg string
		specs       []pipSpec
	}
	var details []detail
	if !reqOrEdit {
		var comments []string
		for _, p := range pkgs {
			prefix, specs, comment := pipParseReq(p)
			if comment != "" {
				comments = append(comments, comment)
				continue
			}
			details = append(details, detail{prefix, p, specs})
		}
		if len(comments) > 0 {
			ret.Result = states.False
			ret.Comment = strings.Join(comments, "\n")
			return ret, nil
		}
	}
	type target struct{ prefix, name string }
	var targets []target
	var already []string
	upgrade := payload.Truthy(a.Get("upgrade"))
	if reqOrEdit {
		if c.Test {
			var comments []string
			if payload.Truthy(requirements) {
				comments = append(comments, fmt.Sprintf("Requirements file '%s' will be processed.", pyfmt.Str(requirements)))
			}
			if payload.Truthy(editable) {
				comments = append(comments, fmt.Sprintf("Package will be installed in editable mode (i.e. setuptools \"develop mode\") from %s.", pyfmt.Str(editable)))
			}
			ret.Comment = strings.Join(comments, " ")
			return ret, nil
		}
	} else {
		pipList, err := pipListCall(ctx, c, nil)
		if err != nil {
			sbLog(c).Error("pip.list failed", "error", err)
			pipList = nil
		}
		for _, d := range details {
			installed, comment := false, ""
			if d.prefix != "" {
				installed, comment, err = pipCheckInstalled(ctx, c, d.prefix, d.pkg, d.specs, pipList)
				if err != nil {
					return ret, err
				}
			}
			if !installed {
				targets = append(targets, target{d.prefix, strings.ReplaceAll(d.pkg, ",", ";")})
				if c.Test {
					if len(details) > 1 {
						msg := "Python package(s) set to be installed:"
						for _, x := range details {
							msg += "\n" + x.pkg
						}
						ret.Comment = msg
					} else {
						ret.Comment = fmt.Sprintf("Python package %s is set to be installed", d.pkg)
					}
					ret.Result = states.None
					return ret, nil
				}
				continue
			}
			already = append(already, comment)
		}
		if len(targets) == 0 {
			ret.Result = states.True
			last := "All specified packages are already installed"
			if upgrade {
				last += " and up-to-date"
			}
			ret.Comment = pipJoinComments(already, last)
			return ret, nil
		}
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.name
	}
	kw := payload.NewMap("pkgs", strings.Join(names, ","))
	for _, k := range pipInstallArgs {
		kw.Set(k, a.Get(k))
	}
	kw.Set("bin_env", binEnv)
	kw.Set("saltenv", c.Saltenv)
	kw.Set("disable_version_check", true)
	if a.Kwargs != nil {
		for _, it := range a.Kwargs.Items() {
			if k := payload.KeyString(it.Key); !sbInternalKeyword(k) && !kw.Has(k) {
				kw.Set(k, it.Value)
			}
		}
	}
	callV, err := sbExec(ctx, c, "pip.install", nil, kw)
	if err != nil {
		return ret, err
	}
	call, _ := callV.(*payload.Map)
	if call == nil || call.Len() == 0 {
		ret.Result = states.False
		ret.Comment = "Could not install package"
		return ret, nil
	}
	if rc, ok := call.Get("retcode"); !ok || !pyfmt.Equal(rc, int64(0)) {
		ret.Result = states.False
		var errText string
		if call.Has("stdout") {
			errText = fmt.Sprintf("Error: %s %s", call.Str("stdout"), call.Str("stderr"))
		} else {
			errText = fmt.Sprintf("Error: %s", call.Str("comment"))
		}
		if reqOrEdit {
			var comments []string
			if payload.Truthy(requirements) {
				comments = append(comments, fmt.Sprintf("Unable to process requirements file \"%s\"", pyfmt.Str(requirements)))
			}
			if payload.Truthy(editable) {
				comments = append(comments, fmt.Sprintf("Unable to install from VCS checkout %s.", pyfmt.Str(editable)))
			}
			ret.Comment = strings.Join(append(comments, errText), " ")
		} else {
			ret.Comment = pipJoinComments(already, fmt.Sprintf("Failed to install packages: %s. %s", strings.Join(names, ", "), errText))
		}
		return ret, nil
	}
	ret.Result = states.True
	stdout := call.Str("stdout")
	if reqOrEdit {
		var comments []string
		if payload.Truthy(requirements) {
			nochange := []string{"Requirement already satisfied", "Requirement already up-to-date", "Requirement not upgraded", "Collecting",
				"Cloning", "Cleaning up...", "Looking in indexes"}
			for _, line := range strings.Split(stdout, "\n") {
				t := strings.TrimSpace(line)
				hit := false
				for _, p := range nochange {
					hit = hit || strings.HasPrefix(t, p)
				}
				if !hit {
					ret.Changes.Set("requirements", true)
				}
			}
			if ret.Changes.Has("requirements") {
				comments = append(comments, fmt.Sprintf("Successfully processed requirements file %s.", pyfmt.Str(requirements)))
			} else {
				comments = append(comments, "Requirements were already installed.")
			}
		}
		if payload.Truthy(editable) {
			comments = append(comments, fmt.Sprintf("Package successfully installed from VCS checkout %s.", pyfmt.Str(editable)))
			ret.Changes.Set("editable", true)
		}
		ret.Comment = strings.Join(comments, " ")
		return ret, nil
	}
	upToDate := map[string]bool{}
	for _, line := range strings.Split(stdout, "\n") {
		if rest, ok := strings.CutPrefix(line, "Requirement already up-to-date: "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				upToDate[strings.ToLower(f[0])] = true
			}
		}
	}
	var notFound []string
	for _, t := range targets {
		if t.prefix == "" {
			ret.Changes.Set(t.name+"==???", "Installed")
			continue
		}
		search, err := pipListCall(ctx, c, t.prefix)
		if err != nil {
			return ret, err
		}
		if search.Len() == 0 {
			notFound = append(notFound, fmt.Sprintf("There was no error installing package '%s' although it does not show when calling 'pip.freeze'.", pkgs[len(pkgs)-1]))
			continue
		}
		if v, ok := pipCIGet(search, t.prefix); ok && !upToDate[strings.ToLower(t.prefix)] {
			ret.Changes.Set(fmt.Sprintf("%s==%s", t.prefix, pyfmt.Str(v)), "Installed")
		}
	}
	succ := "All packages were successfully installed"
	if len(notFound) > 0 {
		succ = strings.Join(notFound, "\n")
	}
	ret.Comment = pipJoinComments(already, succ)
	return ret, nil
}

// pipJoinComments is aicomms + ("\n" if aicomms else "") + last.
func pipJoinComments(already []string, last string) string {
	ai := strings.Join(already, "\n")
	if ai != "" {
		return ai + "\n" + last
	}
	return last
}

// pipVersionLess is salt.utils.versions.compare(a, "<", b) on pip's own
// version.
func pipVersionLess(a, b string) bool { return pep440.Compare(a, b) < 0 }

func pipRemoved(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	lv, err := sbExec(ctx, c, "pip.list", nil, payload.NewMap("bin_env", a.Get("bin_env"), "user", a.Get("user"), "cwd", a.Get("cwd")))
	if err != nil {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Error uninstalling '%s': %s", name, sbErrText(err))
		return ret, nil
	}
	if m, _ := lv.(*payload.Map); m == nil || !m.Has(name) {
		ret.Result = states.True
		ret.Comment = "Package is not installed."
		return ret, nil
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("Package %s is set to be removed", name)
		return ret, nil
	}
	kw := payload.NewMap("pkgs", name)
	for _, k := range []string{"requirements", "bin_env", "log", "proxy", "timeout", "user", "cwd", "use_vt"} {
		kw.Set(k, a.Get(k))
	}
	out, err := sbExec(ctx, c, "pip.uninstall", nil, kw)
	if err != nil {
		return ret, err
	}
	if payload.Truthy(out) {
		ret.Result = states.True
		ret.Changes.Set(name, "Removed")
		ret.Comment = "Package was successfully removed."
	} else {
		ret.Result = states.False
		ret.Comment = "Could not remove package."
	}
	return ret, nil
}

// pipUptodate is pip.uptodate: every outdated package of the environment
// upgraded through pip.upgrade, whose whole return becomes the changes
// (as Salt's state does).
func pipUptodate(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	ret := states.Ret{Name: sbName(c), Result: states.False, Changes: &payload.Map{}, Comment: "Failed to update."}
	kw := payload.NewMap("bin_env", a.Get("bin_env"), "user", a.Get("user"), "cwd", a.Get("cwd"))
	ups, err := sbExec(ctx, c, "pip.list_upgrades", nil, kw)
	if err != nil {
		ret.Comment = sbErrText(err)
		return ret, nil
	}
	switch {
	case !payload.Truthy(ups):
		ret.Result = states.True
		ret.Comment = "System is already up-to-date."
		return ret, nil
	case c.Test:
		ret.Result = states.None
		ret.Comment = "System update will be performed"
		return ret, nil
	}
	kw.Set("use_vt", a.Get("use_vt"))
	out, err := sbExec(ctx, c, "pip.upgrade", nil, kw)
	if err != nil {
		return ret, err
	}
	up, _ := out.(*payload.Map)
	var res any
	if up != nil {
		res, _ = up.Get("result")
	}
	switch {
	case res == false:
		if ch, ok := up.Get("changes"); ok {
			if m, ok := ch.(*payload.Map); ok {
				ret.Changes = m
			}
		}
		if cm, ok := up.Get("comment"); ok {
			ret.Comment = pyfmt.Str(cm)
		}
	case payload.Truthy(out):
		ret.Changes = up
		ret.Result = states.True
		ret.Comment = "Upgrade successful."
	default:
		ret.Comment = "Upgrade failed."
	}
	return ret, nil
}

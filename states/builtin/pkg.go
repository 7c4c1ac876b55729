package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	yaml "gopkg.in/yaml.v3"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's pkg state module (salt/states/pkg.py) for apt
// minions: pkg.installed, pkg.latest, pkg.removed, pkg.purged and
// mod_watch, over the pkg.* execution functions.

// pkgStates returns the pkg state functions.
func pkgStates() []states.Function {
	installed := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("version", nil), sbOpt("refresh", nil),
		sbOpt("fromrepo", nil), sbOpt("skip_verify", false), sbOpt("skip_suggestions", false), sbOpt("pkgs", nil),
		sbOpt("sources", nil), sbOpt("allow_updates", false), sbOpt("pkg_verify", false), sbOpt("normalize", true),
		sbOpt("ignore_epoch", nil), sbOpt("reinstall", false), sbOpt("update_holds", false)}, Kwargs: true}
	latest := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("refresh", nil), sbOpt("fromrepo", nil),
		sbOpt("skip_verify", false), sbOpt("pkgs", nil), sbOpt("watch_flags", true)}, Kwargs: true}
	removed := modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("version", nil), sbOpt("pkgs", nil),
		sbOpt("normalize", true), sbOpt("ignore_epoch", nil)}, Kwargs: true}
	return []states.Function{
		{Name: "pkg.installed", Spec: installed, Fn: pkgInstalled, Watch: pkgModWatch},
		{Name: "pkg.latest", Spec: latest, Fn: pkgLatest, Watch: pkgModWatch},
		{Name: "pkg.removed", Spec: removed, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pkgUninstallState(ctx, c, "remove")
		}, Watch: pkgModWatch},
		{Name: "pkg.purged", Spec: removed, Fn: func(ctx context.Context, c *states.Call) (states.Ret, error) {
			return pkgUninstallState(ctx, c, "purge")
		}, Watch: pkgModWatch},
		{Name: "pkg.mod_beacon", Spec: modules.Spec{Params: []modules.Param{sbReq("name")}, Kwargs: true},
			Fn: beaconModBeacon("pkg", "mod_beacon", []string{"installed", "removed"}, pkgBeaconKwargs)},
	}
}

// pkgBeaconKwargs is the beacon.present of pkg.mod_beacon: a pkg beacon
// on the pkgs argument (else the name), every 60 s.
func pkgBeaconKwargs(name, _ string, kwargs, _ *payload.Map) (*payload.Map, error) {
	return payload.NewMap("pkgs", beaconGet(kwargs, "pkgs", []any{name}), "interval", int64(60), "beacon_module", "pkg"), nil
}

// PkgModInit is pkg.mod_init: the state system calls it once per state run
// before the first pkg state runs. For pkg.installed and pkg.latest it
// writes the refresh tag (<cachedir>/pkg_refresh) so that the first state
// installing something refreshes the package database (pkg.refresh_db
// removes the tag again). It returns whether the module was initialised.
func PkgModInit(env *modules.Env, low *payload.Map) bool {
	fun := ""
	if low != nil {
		fun = low.Str("fun")
	}
	if fun != "installed" && fun != "latest" {
		return false
	}
	if rt := pkgsRtag(env); rt != "" {
		if _, err := os.Stat(rt); err != nil {
			if f, err := os.OpenFile(rt, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				f.Close()
			}
		}
	}
	return true
}

// pkgsRtag is the refresh tag file, or "" without a cachedir.
func pkgsRtag(env *modules.Env) string {
	if env == nil || env.Opts == nil {
		return ""
	}
	dir, ok := env.Opts.Get("cachedir")
	if !ok || payload.Text(dir) == "" {
		return ""
	}
	return filepath.Join(payload.Text(dir), "pkg_refresh")
}

// pkgsCheckRefresh is salt.utils.pkg.check_refresh.
func pkgsCheckRefresh(c *states.Call, refresh any) bool {
	if modules.IsTrue(refresh) {
		return true
	}
	if refresh == false {
		return false
	}
	rt := pkgsRtag(c.Env)
	if rt == "" {
		return false
	}
	st, err := os.Stat(rt)
	return err == nil && st.Mode().IsRegular()
}

// pkgsRet is a Salt ret dict under construction.
type pkgsRet = *payload.Map

func pkgsNewRet(name string, result any, comment string) pkgsRet {
	return payload.NewMap("name", name, "changes", &payload.Map{}, "result", result, "comment", comment)
}

// pkgsToRet converts a ret dict to states.Ret.
func pkgsToRet(m pkgsRet) states.Ret {
	r := states.Ret{Name: m.Str("name"), Result: states.ResultOf(pkgsBool(kwv(m, "result"))), Comment: payload.Text(kwv(m, "comment"))}
	if ch, ok := kwv(m, "changes").(*payload.Map); ok {
		r.Changes = ch
	}
	if w, ok := kwv(m, "warnings").([]any); ok {
		for _, x := range w {
			r.Warnings = append(r.Warnings, payload.Text(x))
		}
	}
	return r
}

// pkgsBool maps a Python result value to true/false/nil.
func pkgsBool(v any) any {
	if v == nil {
		return nil
	}
	return payload.Truthy(v)
}

func kwv(m *payload.Map, k string) any {
	if m == nil {
		return nil
	}
	v, _ := m.Get(k)
	return v
}

// pkgsKwargs are the state's **kwargs as Salt passes them on to execution
// functions: the extra low-chunk keys, without state-system keywords.
func pkgsKwargs(c *states.Call) *payload.Map {
	out := &payload.Map{}
	if c.Args == nil || c.Args.Kwargs == nil {
		return out
	}
	for _, it := range c.Args.Kwargs.Items() {
		k := payload.KeyString(it.Key)
		if k == "name" || k == "sfun" || strings.HasPrefix(k, "__") || sbInternalKeyword(k) {
			continue
		}
		out.Set(k, it.Value)
	}
	return out
}

// pkgsMerge returns a new map: base's items, then extra's.
func pkgsMerge(base *payload.Map, kv ...any) *payload.Map {
	out := base.Clone()
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i].(string), kv[i+1])
	}
	return out
}

// pkgsHas reports whether the execution function exists.
func pkgsHas(c *states.Call, fun string) bool {
	if c.Env == nil || c.Env.Registry == nil {
		return false
	}
	_, ok := c.Env.Registry.Lookup(fun)
	return ok
}

// pkgsIsExecErr reports a CommandExecutionError (what pkg states catch).
func pkgsIsExecErr(err error) bool { return errors.Is(err, modules.ErrExecution) }

// pkgsListPkgs is pkg.list_pkgs(versions_as_list=True, **kw).
func pkgsListPkgs(ctx context.Context, c *states.Call, kw *payload.Map, extra ...any) (*payload.Map, error) {
	v, err := sbExec(ctx, c, "pkg.list_pkgs", nil, pkgsMerge(kw, append([]any{"versions_as_list", true}, extra...)...))
	if err != nil {
		return nil, err
	}
	m, _ := v.(*payload.Map)
	if m == nil {
		m = &payload.Map{}
	}
	return m, nil
}

// pkgsVersions returns a list_pkgs entry as a list of version strings.
func pkgsVersions(m *payload.Map, name string) []string {
	v, ok := m.Get(name)
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case []any:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = payload.Text(s)
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	}
	return nil
}

// pkgsDesired is an ordered name -> wanted version (nil: any) map.
type pkgsDesired struct {
	names []string
	ver   map[string]any
}

func (d *pkgsDesired) set(name string, v any) {
	if d.ver == nil {
		d.ver = map[string]any{}
	}
	if _, ok := d.ver[name]; !ok {
		d.names = append(d.names, name)
	}
	d.ver[name] = v
}

func (d *pkgsDesired) has(name string) bool { _, ok := d.ver[name]; return ok }

// verStr is the wanted version as text, "" for none.
func (d *pkgsDesired) verStr(name string) string {
	if v := d.ver[name]; v != nil {
		return payload.Text(v)
	}
	return ""
}

// pkgsNormalize is pkg.normalize_name when available.
func pkgsNormalize(ctx context.Context, c *states.Call, name string) string {
	if !pkgsHas(c, "pkg.normalize_name") {
		return name
	}
	v, err := sbExec(ctx, c, "pkg.normalize_name", []any{name}, nil)
	if err != nil {
		return name
	}
	return payload.Text(v)
}

// pkgsRepack is pkg_resource._repack_pkgs (and pack_sources): a list of
// names and one-key maps to the desired map; ok is false for a badly
// formatted list (Salt logs it and returns {}).
func pkgsRepack(ctx context.Context, c *states.Call, pkgs any, normalize bool) (*pkgsDesired, bool, error) {
	if s, ok := pkgs.(string); ok {
		var v any
		if err := yaml.Unmarshal([]byte(s), &v); err != nil {
			return nil, false, nil
		}
		pkgs = payload.FromGo(v)
	}
	list, ok := pkgs.([]any)
	if !ok {
		return nil, false, nil
	}
	d := &pkgsDesired{}
	norm := func(s string) string {
		if normalize {
			return pkgsNormalize(ctx, c, s)
		}
		return s
	}
	for _, el := range list {
		switch x := el.(type) {
		case string, int64, float64:
			d.set(norm(pyfmt.Str(x)), nil)
		case *payload.Map:
			if x.Len() != 1 {
				return nil, false, nil
			}
			it := x.Items()[0]
			var v any
			if it.Value != nil {
				v = pyfmt.Str(it.Value)
			}
			d.set(norm(payload.KeyString(it.Key)), v)
		default:
			return nil, false, nil
		}
	}
	if len(d.names) == 0 {
		return nil, false, nil
	}
	if len(d.names) != len(list) {
		return nil, false, fmt.Errorf("%w: You are passing a list of packages that contains duplicated packages names: %s. This cannot be processed. In case you are targeting different versions of the same package, please target them individually", modules.ErrInvocation, pyfmt.Repr(list))
	}
	return d, true, nil
}

// pkgsCompare is salt.utils.versions.compare with pkg.version_cmp.
func pkgsCompare(ctx context.Context, c *states.Call, v1, oper, v2 string, ignoreEpoch bool) bool {
	var r int
	if pkgsHas(c, "pkg.version_cmp") {
		res, err := sbExec(ctx, c, "pkg.version_cmp", []any{v1, v2}, payload.NewMap("ignore_epoch", ignoreEpoch))
		n, ok := payload.AsInt(res)
		if err != nil || !ok {
			return false
		}
		r = int(n)
	} else {
		r = mbuiltin.DebVersionCompare(v1, v2, ignoreEpoch)
	}
	return mbuiltin.VersionCmpOp(r, oper)
}

// pkgsConditions is _parse_version_string: (operator, version) pairs.
func pkgsConditions(s string) [][2]string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var out [][2]string
	for _, cond := range strings.Split(s, ",") {
		oper, v := mbuiltin.PkgSplitComparison(strings.TrimSpace(cond))
		if oper == "=" || oper == "" {
			oper = "=="
		}
		out = append(out, [2]string{oper, v})
	}
	return out
}

// pkgsFulfills is _fulfills_version_string: whether any installed version
// meets all conditions. ignoreEpoch is nil (decide per condition) or a
// bool.
func pkgsFulfills(ctx context.Context, c *states.Call, installed []string, conditions string, ignoreEpoch any, allowUpdates bool) bool {
	conds := pkgsConditions(conditions)
	for _, iv := range installed {
		all := true
		for _, cond := range conds {
			oper, want := cond[0], cond[1]
			if allowUpdates && len(conds) == 1 && oper == "==" {
				oper = ">="
			}
			ie := !strings.ContainsAny(oper, "<>") && !strings.Contains(want, ":")
			if ignoreEpoch != nil {
				ie = payload.Truthy(ignoreEpoch)
			}
			ok := (oper == "==" && py.Fnmatch(iv, want)) || pkgsCompare(ctx, c, iv, oper, want, ie)
			all = all && ok
		}
		if all {
			return true
		}
	}
	return false
}

// pkgsDesiredPkg is _get_desired_pkg: "name=version" (or "name<op>version").
func pkgsDesiredPkg(name string, d map[string]any) string {
	v := ""
	if d[name] != nil {
		v = payload.Text(d[name])
	}
	if v == "" || strings.HasPrefix(v, "<") || strings.HasPrefix(v, ">") || strings.HasPrefix(v, "=") {
		return name + v
	}
	return name + "=" + v
}

// pkgsTargets is what _find_install_targets found to do.
type pkgsTargets struct {
	desired     *pkgsDesired
	targets     *pkgsDesired
	toUnpurge   []string
	toReinstall *pkgsDesired
	warnings    []string
	refreshed   bool
}

// pkgsFindInstallTargets is _find_install_targets; a non-nil ret means
// there is nothing to do (or a problem) and is the state's return.
func pkgsFindInstallTargets(ctx context.Context, c *states.Call, name string, version any, pkgs, sources any,
	normalize bool, ignoreEpoch any, reinstall, refresh bool, kw *payload.Map) (*pkgsTargets, pkgsRet, error) {
	if payload.Truthy(pkgs) && payload.Truthy(sources) {
		return nil, pkgsNewRet(name, false, `Only one of "pkgs" and "sources" is permitted.`), nil
	}
	cur, err := pkgsListPkgs(ctx, c, kw)
	if err != nil {
		if pkgsIsExecErr(err) {
			return nil, pkgsNewRet(name, false, sbErrText(err)), nil
		}
		return nil, nil, err
	}
	t := &pkgsTargets{targets: &pkgsDesired{}, toReinstall: &pkgsDesired{}}
	purgeDesired := func() (*payload.Map, error) {
		return pkgsListPkgs(ctx, c, kw, "purge_desired", true)
	}
	if payload.Truthy(pkgs) || payload.Truthy(sources) {
		src, which := pkgs, "pkgs"
		if !payload.Truthy(pkgs) {
			src, which = sources, "sources"
		}
		d, ok, err := pkgsRepack(ctx, c, src, normalize)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, pkgsNewRet(name, false, fmt.Sprintf("Invalidly formatted '%s' parameter. See minion log.", which)), nil
		}
		t.desired = d
		pd, err := purgeDesired()
		if err != nil {
			return nil, nil, err
		}
		for _, n := range d.names {
			if pd.Has(n) {
				t.toUnpurge = append(t.toUnpurge, n)
			}
		}
	} else {
		d := &pkgsDesired{}
		n := name
		if normalize {
			n = pkgsNormalize(ctx, c, name)
		}
		d.set(n, version)
		t.desired = d
		pd, err := purgeDesired()
		if err != nil {
			return nil, nil, err
		}
		if pd.Has(n) {
			t.toUnpurge = append(t.toUnpurge, n)
		}
		cver := pkgsVersions(cur, name)
		if !pd.Has(name) {
			vs := ""
			if version != nil {
				vs = payload.Text(version)
			}
			switch {
			case vs != "" && pkgsContains(cver, vs) && !reinstall:
				return nil, pkgsNewRet(name, true, fmt.Sprintf("Version %s of package '%s' is already installed", vs, name)), nil
			case len(cver) > 0 && version == nil && !reinstall:
				return nil, pkgsNewRet(name, true, fmt.Sprintf("Package %s is already installed", name)), nil
			}
		}
	}
	// apt has no pkg.check_db: skip_suggestions has nothing to check.
	var wantsLatest []string
	if !payload.Truthy(sources) {
		for _, n := range t.desired.names {
			if t.desired.ver[n] == "latest" {
				wantsLatest = append(wantsLatest, n)
			}
		}
	}
	if len(wantsLatest) > 0 {
		args := make([]any, len(wantsLatest))
		for i, n := range wantsLatest {
			args[i] = n
		}
		res, err := sbExec(ctx, c, "pkg.latest_version", args, pkgsMerge(kw, "refresh", refresh))
		if err != nil {
			return nil, nil, err
		}
		resolved := map[string]any{}
		if len(wantsLatest) == 1 {
			resolved[wantsLatest[0]] = res
		} else if m, ok := res.(*payload.Map); ok {
			for _, it := range m.Items() {
				resolved[payload.KeyString(it.Key)] = it.Value
			}
		}
		if refresh {
			t.refreshed = true
		}
		for _, n := range wantsLatest {
			v := resolved[n]
			if !payload.Truthy(v) {
				if cv := pkgsVersions(cur, n); len(cv) > 0 {
					v = cv[len(cv)-1]
				} else {
					v = nil
				}
			}
			t.desired.set(n, v)
		}
	}
	versionSpec := false
	allowUpdates := !payload.Truthy(sources) && payload.Truthy(kwv(kw, "allow_updates"))
	for _, n := range t.desired.names {
		vstr := t.desired.ver[n]
		cver := pkgsVersions(cur, n)
		if len(cver) == 0 {
			t.targets.set(n, vstr)
			continue
		}
		if payload.Truthy(sources) {
			if reinstall {
				t.toReinstall.set(n, vstr)
			}
			// Without lowpkg.bin_pkg_info the file's version is unknown:
			// an installed package counts as installed.
			continue
		}
		if reinstall {
			t.toReinstall.set(n, vstr)
			continue
		}
		if vstr == nil {
			continue
		}
		fulfilled := pkgsFulfills(ctx, c, cver, payload.Text(vstr), ignoreEpoch, allowUpdates)
		versionSpec = true
		if !fulfilled {
			t.targets.set(n, vstr)
		}
	}
	if len(t.targets.names) == 0 && len(t.toUnpurge) == 0 && len(t.toReinstall.names) == 0 {
		msg := "All specified packages are already installed"
		if versionSpec && !payload.Truthy(sources) {
			msg += " and are at the desired version"
		}
		ret := pkgsNewRet(name, true, msg)
		if len(t.warnings) > 0 {
			ret.Set("warnings", pkgsAnyList(t.warnings))
		}
		return nil, ret, nil
	}
	return t, nil, nil
}

func pkgsContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func pkgsAnyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// pkgsVerifyInstall is _verify_install: which desired packages are now
// installed at the wanted version.
func pkgsVerifyInstall(ctx context.Context, c *states.Call, desired *pkgsDesired, newPkgs *payload.Map, ignoreEpoch any) (ok, failed []string) {
	debian := true
	if c.Env != nil && c.Env.Grains != nil {
		if fam, has := c.Env.Grains.Get("os_family"); has && fam != "Debian" {
			debian = false
		}
	}
	for _, n := range desired.names {
		key := n
		if debian {
			key = strings.SplitN(n, "=", 2)[0]
		}
		cver := pkgsVersions(newPkgs, key)
		want := desired.ver[n]
		ws := desired.verStr(n)
		switch {
		case len(cver) == 0:
			failed = append(failed, n)
		case want == "latest", ws == "":
			ok = append(ok, n)
		case strings.HasSuffix(ws, "*") && strings.HasPrefix(cver[0], ws[:len(ws)-1]):
			ok = append(ok, n)
		case pkgsFulfills(ctx, c, cver, ws, ignoreEpoch, false):
			ok = append(ok, n)
		default:
			failed = append(failed, n)
		}
	}
	return ok, failed
}

// pkgsExecFailure is the ret of a pkg.install/remove/purge that raised
// CommandExecutionError: its info's changes and text, or verb's generic
// message.
func pkgsExecFailure(name string, err error, verb string, warnings []string) pkgsRet {
	ret := payload.NewMap("name", name, "result", false)
	var info *mbuiltin.ExecInfoError
	if errors.As(err, &info) && info.Info != nil && info.Info.Len() > 0 {
		ret.Set("changes", info.Changes())
		ret.Set("comment", info.TextWithoutChanges())
	} else {
		ret.Set("changes", &payload.Map{})
		ret.Set("comment", fmt.Sprintf("An error was encountered while %s package(s): %s", verb, sbErrText(err)))
	}
	if len(warnings) > 0 {
		ret.Set("warnings", pkgsAnyList(warnings))
	}
	return ret
}

func pkgInstalled(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := sbName(c)
	version, refreshArg := a.Get("version"), a.Get("refresh")
	pkgs, sources := a.Get("pkgs"), a.Get("sources")
	fromrepo := a.Get("fromrepo")
	normalize := payload.Truthy(a.Get("normalize"))
	ignoreEpoch := a.Get("ignore_epoch")
	reinstall := payload.Truthy(a.Get("reinstall"))
	if l, ok := pkgs.([]any); ok && len(l) == 0 {
		return pkgsToRet(pkgsNewRet(name, true, "No packages to install provided")), nil
	}
	if name != "" && !payload.Truthy(pkgs) && !payload.Truthy(sources) {
		if payload.Truthy(version) {
			pkgs = []any{payload.NewMap(name, version)}
			version = nil
		} else {
			pkgs = []any{name}
		}
	}
	kw := pkgsKwargs(c)
	kw.Set("saltenv", c.Saltenv)
	refresh := pkgsCheckRefresh(c, refreshArg)
	pkgVerify := a.Get("pkg_verify")
	if _, isList := pkgVerify.([]any); isList || pkgVerify == true {
		if !pkgsHas(c, "pkg.verify") {
			return pkgsToRet(pkgsNewRet(name, false, "pkg.verify not implemented")), nil
		}
	}
	if version != nil {
		if _, ok := version.(string); !ok {
			version = pyfmt.Str(version)
		}
	}
	kw.Set("allow_updates", a.Get("allow_updates"))
	t, early, err := pkgsFindInstallTargets(ctx, c, name, version, pkgs, sources, normalize, ignoreEpoch, reinstall, refresh, kw)
	if err != nil {
		return states.Ret{}, err
	}
	if early != nil {
		return pkgsToRet(early), nil
	}
	if t.refreshed {
		refresh = false
	}
	if len(t.toUnpurge) > 0 && !pkgsHas(c, "lowpkg.unpurge") {
		ret := pkgsNewRet(name, false, "lowpkg.unpurge not implemented")
		if len(t.warnings) > 0 {
			ret.Set("warnings", pkgsAnyList(t.warnings))
		}
		return pkgsToRet(ret), nil
	}
	if payload.Truthy(pkgs) {
		var list []any
		for _, d := range []*pkgsDesired{t.targets, t.toReinstall} {
			for _, n := range d.names {
				list = append(list, payload.NewMap(n, d.ver[n]))
			}
		}
		pkgs = list
	} else if payload.Truthy(sources) {
		old, _ := sources.([]any)
		var list []any
		for _, d := range []*pkgsDesired{t.targets, t.toReinstall} {
			for _, s := range old {
				if m, ok := s.(*payload.Map); ok && m.Len() > 0 && d.has(payload.KeyString(m.Items()[0].Key)) {
					list = append(list, s)
				}
			}
		}
		sources = list
	}
	var comment []string
	changes := &payload.Map{}
	if c.Test {
		if len(t.targets.names) > 0 {
			comment = append(comment, "The following packages would be installed/updated: "+strings.Join(t.targets.names, ", "))
			for _, n := range t.targets.names {
				changes.Set(n, payload.NewMap("new", "installed", "old", ""))
			}
		}
		if len(t.toUnpurge) > 0 {
			comment = append(comment, "The following packages would have their selection status changed from 'purge' to 'install': "+strings.Join(t.toUnpurge, ", "))
			for _, n := range t.toUnpurge {
				changes.Set(n, payload.NewMap("new", "installed", "old", ""))
			}
		}
		if len(t.toReinstall.names) > 0 && reinstall {
			var rt []string
			for _, n := range t.toReinstall.names {
				if payload.Truthy(sources) {
					rt = append(rt, n)
				} else {
					rt = append(rt, pkgsDesiredPkg(n, t.toReinstall.ver))
				}
				for _, x := range rt {
					changes.Set(x, payload.NewMap("new", "installed", "old", ""))
				}
			}
			comment = append(comment, "The following packages would be reinstalled: "+strings.Join(rt, ", "))
		}
		ret := payload.NewMap("name", name, "changes", changes, "result", nil, "comment", strings.Join(comment, "\n"))
		if len(t.warnings) > 0 {
			ret.Set("warnings", pkgsAnyList(t.warnings))
		}
		return pkgsToRet(ret), nil
	}
	pkgRet := &payload.Map{}
	if len(t.targets.names) > 0 || len(t.toReinstall.names) > 0 {
		args := pkgsMerge(kw, "name", nil, "refresh", refresh, "version", version, "fromrepo", fromrepo,
			"skip_verify", a.Get("skip_verify"), "pkgs", pkgs, "sources", sources, "reinstall", len(t.toReinstall.names) > 0,
			"normalize", a.Get("normalize"), "update_holds", a.Get("update_holds"), "ignore_epoch", ignoreEpoch, "split_arch", false)
		res, err := sbExec(ctx, c, "pkg.install", nil, args)
		if err != nil {
			if pkgsIsExecErr(err) {
				return pkgsToRet(pkgsExecFailure(name, err, "installing", t.warnings)), nil
			}
			return states.Ret{}, err
		}
		switch x := res.(type) {
		case *payload.Map:
			pkgRet = x
			for _, it := range x.Items() {
				changes.SetKey(it.Key, it.Value)
			}
		case string:
			comment = append(comment, x)
		}
	}
	if len(t.toUnpurge) > 0 {
		res, err := sbExec(ctx, c, "lowpkg.unpurge", pkgsAnyList(t.toUnpurge), nil)
		if err != nil {
			return states.Ret{}, err
		}
		changes.Set("purge_desired", res)
	}
	var modified, notModified, failed []string
	if payload.Truthy(sources) {
		for _, n := range t.targets.names {
			if changes.Has(n) {
				modified = append(modified, n)
			} else {
				failed = append(failed, n)
			}
		}
		for _, n := range t.desired.names {
			if !t.targets.has(n) && !t.toReinstall.has(n) {
				notModified = append(notModified, n)
			}
		}
	} else {
		newPkgs, err := pkgsListPkgs(ctx, c, kw)
		if err != nil {
			return states.Ret{}, err
		}
		ok, bad := pkgsVerifyInstall(ctx, c, t.desired, newPkgs, ignoreEpoch)
		for _, n := range ok {
			switch {
			case t.targets.has(n):
				modified = append(modified, n)
			case !t.toReinstall.has(n):
				notModified = append(notModified, n)
			}
		}
		for _, n := range bad {
			if t.targets.has(n) {
				failed = append(failed, n)
			}
		}
	}
	summary := func(list []string) string {
		if payload.Truthy(sources) {
			return strings.Join(list, ", ")
		}
		parts := make([]string, len(list))
		for i, n := range list {
			parts[i] = pkgsDesiredPkg(n, t.desired.ver)
		}
		return strings.Join(parts, ", ")
	}
	plural := func(n int, one, many string) string {
		if n > 1 {
			return many
		}
		return one
	}
	if len(modified) > 0 {
		if s := summary(modified); len([]rune(s)) < 20 {
			comment = append(comment, "The following packages were installed/updated: "+s)
		} else {
			comment = append(comment, fmt.Sprintf("%d targeted package%s %s installed/updated.", len(modified), plural(len(modified), "", "s"), plural(len(modified), "was", "were")))
		}
	}
	if len(notModified) > 0 {
		if len(notModified) <= 20 {
			comment = append(comment, "The following packages were already installed: "+summary(notModified))
		} else {
			comment = append(comment, fmt.Sprintf("%d targeted package%s %s already installed", len(notModified), plural(len(notModified), "", "s"), plural(len(notModified), "was", "were")))
		}
	}
	result := true
	if len(failed) > 0 {
		comment = append([]string{"The following packages failed to install/update: " + summary(failed)}, comment...)
		result = false
	}
	var reinstalled, notReinstalled []string
	if reinstall {
		for _, n := range t.toReinstall.names {
			if pkgRet.Has(n) {
				reinstalled = append(reinstalled, n)
			} else {
				notReinstalled = append(notReinstalled, n)
			}
		}
	}
	for _, n := range reinstalled {
		p := n
		if !payload.Truthy(sources) {
			p = pkgsDesiredPkg(n, t.desired.ver)
		}
		comment = append(comment, fmt.Sprintf("Package %s was reinstalled.", p))
	}
	for _, n := range notReinstalled {
		p := n
		if !payload.Truthy(sources) {
			p = pkgsDesiredPkg(n, t.desired.ver)
		}
		comment = append(comment, fmt.Sprintf("Reinstall was not successful for package %s.", p))
		result = false
	}
	ret := payload.NewMap("name", name, "changes", changes, "result", result, "comment", strings.Join(comment, "\n"))
	if len(t.warnings) > 0 {
		ret.Set("warnings", pkgsAnyList(t.warnings))
	}
	return pkgsToRet(ret), nil
}

func pkgLatest(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := sbName(c)
	refresh := pkgsCheckRefresh(c, a.Get("refresh"))
	kw := pkgsKwargs(c)
	pkgs := a.Get("pkgs")
	var desired []string
	switch {
	case payload.Truthy(kwv(kw, "sources")):
		return pkgsToRet(pkgsNewRet(name, false, `The "sources" parameter is not supported.`)), nil
	case payload.Truthy(pkgs):
		d, ok, err := pkgsRepack(ctx, c, pkgs, true)
		if err != nil {
			return states.Ret{}, err
		}
		if !ok {
			return pkgsToRet(pkgsNewRet(name, false, `Invalidly formatted "pkgs" parameter. See minion log.`)), nil
		}
		desired = d.names
	default:
		if l, ok := pkgs.([]any); ok && len(l) == 0 {
			return pkgsToRet(pkgsNewRet(name, true, "No packages to install provided")), nil
		}
		desired = []string{name}
	}
	kw.Set("saltenv", c.Saltenv)
	args := pkgsAnyList(desired)
	avail, err := sbExec(ctx, c, "pkg.latest_version", args, pkgsMerge(kw, "fromrepo", a.Get("fromrepo"), "refresh", refresh))
	if err != nil {
		if pkgsIsExecErr(err) {
			return pkgsToRet(pkgsNewRet(name, false, "An error was encountered while checking the newest available version of package(s): "+sbErrText(err))), nil
		}
		return states.Ret{}, err
	}
	cur, err := sbExec(ctx, c, "pkg.version", args, kw)
	if err != nil {
		if pkgsIsExecErr(err) {
			return pkgsToRet(pkgsNewRet(name, false, sbErrText(err))), nil
		}
		return states.Ret{}, err
	}
	asMap := func(v any) *payload.Map {
		if s, ok := v.(string); ok {
			return payload.NewMap(desired[0], s)
		}
		if m, ok := v.(*payload.Map); ok {
			return m
		}
		return &payload.Map{}
	}
	availM, curM := asMap(avail), asMap(cur)
	targets := &pkgsDesired{}
	var problems []string
	for _, p := range desired {
		if v := kwv(availM, p); !payload.Truthy(v) {
			if !payload.Truthy(kwv(curM, p)) {
				msg := fmt.Sprintf("No information found for '%s'.", p)
				sbLog(c).Error(msg)
				problems = append(problems, msg)
			}
		} else {
			targets.set(p, v)
		}
	}
	if len(problems) > 0 {
		return pkgsToRet(pkgsNewRet(name, false, strings.Join(problems, " "))), nil
	}
	if len(targets.names) == 0 {
		var comment string
		switch {
		case len(desired) > 10:
			comment = fmt.Sprintf("All %d packages are up-to-date.", len(desired))
		case len(desired) > 1:
			s := append([]string(nil), desired...)
			sort.Strings(s)
			comment = fmt.Sprintf("All packages are up-to-date (%s).", strings.Join(s, ", "))
		default:
			comment = fmt.Sprintf("Package %s is already up-to-date", desired[0])
		}
		return pkgsToRet(pkgsNewRet(name, true, comment)), nil
	}
	var upToDate []string
	if payload.Truthy(pkgs) {
		list, _ := pkgs.([]any)
		for _, x := range list {
			n := pyfmt.Str(x)
			if m, ok := x.(*payload.Map); ok && m.Len() > 0 {
				n = payload.KeyString(m.Items()[0].Key)
			}
			if !targets.has(n) {
				upToDate = append(upToDate, n)
			}
		}
	}
	sortedTargets := append([]string(nil), targets.names...)
	sort.Strings(sortedTargets)
	sort.Strings(upToDate)
	if c.Test {
		comments := []string{"The following packages would be installed/upgraded: " + strings.Join(sortedTargets, ", ")}
		if len(upToDate) > 0 {
			if len(upToDate) <= 10 {
				parts := make([]string, len(upToDate))
				for i, x := range upToDate {
					parts[i] = fmt.Sprintf("%s (%s)", x, payload.Text(kwv(curM, x)))
				}
				comments = append(comments, "The following packages are already up-to-date: "+strings.Join(parts, ", "))
			} else {
				comments = append(comments, fmt.Sprintf("%d packages are already up-to-date", len(upToDate)))
			}
		}
		return pkgsToRet(payload.NewMap("name", name, "changes", &payload.Map{}, "result", nil, "comment", strings.Join(comments, "\n"))), nil
	}
	res, err := sbExec(ctx, c, "pkg.install", nil, pkgsMerge(kw, "name", nil, "refresh", false, "fromrepo", a.Get("fromrepo"),
		"skip_verify", a.Get("skip_verify"), "pkgs", pkgsAnyList(targets.names)))
	if err != nil {
		if pkgsIsExecErr(err) {
			return pkgsToRet(pkgsNewRet(name, false, "An error was encountered while installing package(s): "+sbErrText(err))), nil
		}
		return states.Ret{}, err
	}
	changes, _ := res.(*payload.Map)
	if changes == nil {
		changes = &payload.Map{}
	}
	if changes.Len() > 0 {
		var failed, successful []string
		for _, n := range targets.names {
			ch, _ := kwv(changes, n).(*payload.Map)
			if !payload.Truthy(ch) || (!py.Equal(kwv(ch, "new"), targets.ver[n]) && targets.ver[n] != "latest") {
				failed = append(failed, n)
			} else {
				successful = append(successful, n)
			}
		}
		sort.Strings(failed)
		sort.Strings(successful)
		var comments []string
		if len(failed) > 0 {
			comments = append(comments, "The following packages failed to update: "+strings.Join(failed, ", "))
		}
		if len(successful) > 0 {
			comments = append(comments, "The following packages were successfully installed/upgraded: "+strings.Join(successful, ", "))
		}
		if len(upToDate) > 0 {
			if len(upToDate) <= 10 {
				comments = append(comments, "The following packages were already up-to-date: "+strings.Join(upToDate, ", "))
			} else {
				comments = append(comments, fmt.Sprintf("%d packages were already up-to-date ", len(upToDate)))
			}
		}
		return pkgsToRet(payload.NewMap("name", name, "changes", changes, "result", len(failed) == 0, "comment", strings.Join(comments, " "))), nil
	}
	var comment string
	switch {
	case len(targets.names) > 10:
		comment = fmt.Sprintf("%d targeted packages failed to update. See debug log for details.", len(targets.names))
	case len(targets.names) > 1:
		comment = fmt.Sprintf("The following targeted packages failed to update. See debug log for details: (%s).", strings.Join(sortedTargets, ", "))
	default:
		comment = fmt.Sprintf("Package %s failed to update.", targets.names[0])
	}
	if len(upToDate) > 0 {
		if len(upToDate) <= 10 {
			comment += " The following packages were already up-to-date: " + strings.Join(upToDate, ", ")
		} else {
			comment += fmt.Sprintf("%d packages were already up-to-date", len(upToDate))
		}
	}
	return pkgsToRet(payload.NewMap("name", name, "changes", changes, "result", false, "comment", comment)), nil
}

// pkgsParseTargets is pkg_resource.parse_targets(name, pkgs) as the
// removal states call it: the desired map, nil when nothing was given.
func pkgsParseTargets(ctx context.Context, c *states.Call, name string, pkgs any, normalize bool) (*pkgsDesired, error) {
	if payload.Truthy(pkgs) {
		d, ok, err := pkgsRepack(ctx, c, pkgs, normalize)
		if err != nil || !ok {
			return nil, err
		}
		return d, nil
	}
	if name == "" {
		return nil, nil
	}
	d := &pkgsDesired{}
	for _, n := range strings.Split(name, ",") {
		if normalize {
			n = pkgsNormalize(ctx, c, n)
		}
		d.set(n, nil)
	}
	return d, nil
}

// pkgUninstallState is pkg.removed / pkg.purged (_uninstall and its
// CommandExecutionError handling).
func pkgUninstallState(ctx context.Context, c *states.Call, action string) (states.Ret, error) {
	name := sbName(c)
	ret, err := pkgsUninstall(ctx, c, action, name)
	if err != nil {
		if pkgsIsExecErr(err) {
			verb := "removing"
			if action == "purge" {
				verb = "purging"
			}
			return pkgsToRet(pkgsExecFailure(name, err, verb, nil)), nil
		}
		return states.Ret{}, err
	}
	return pkgsToRet(ret), nil
}

func pkgsUninstall(ctx context.Context, c *states.Call, action, name string) (pkgsRet, error) {
	a := c.Args
	pkgs, version := a.Get("pkgs"), a.Get("version")
	normalize := payload.Truthy(a.Get("normalize"))
	kw := pkgsKwargs(c)
	kw.Set("saltenv", c.Saltenv)
	params, err := pkgsParseTargets(ctx, c, name, pkgs, normalize)
	if err != nil {
		return nil, err
	}
	if params == nil {
		params = &pkgsDesired{}
	}
	// _find_remove_targets
	cur, err := pkgsListPkgs(ctx, c, kw)
	if err != nil {
		return nil, err
	}
	var toRemove *pkgsDesired
	if payload.Truthy(pkgs) {
		d, ok, err := pkgsRepack(ctx, c, pkgs, normalize)
		if err != nil {
			return nil, err
		}
		if !ok {
			if action == "remove" {
				return pkgsNewRet(name, false, "Invalidly formatted pkgs parameter. See minion log."), nil
			}
			d = &pkgsDesired{}
		}
		toRemove = d
	} else {
		toRemove = &pkgsDesired{}
		var v any
		if version != nil {
			v = pyfmt.Str(version)
		}
		toRemove.set(pkgsNormalize(ctx, c, name), v)
	}
	var targets []string
	versionSpec := false
	for _, n := range toRemove.names {
		cver := pkgsVersions(cur, n)
		if len(cver) == 0 {
			continue
		}
		if toRemove.ver[n] == nil {
			targets = append(targets, n)
			continue
		}
		versionSpec = true
		if pkgsFulfills(ctx, c, cver, toRemove.verStr(n), a.Get("ignore_epoch"), false) {
			targets = append(targets, n)
		}
	}
	if len(targets) == 0 && action == "remove" {
		msg := "All specified packages are already absent"
		if versionSpec {
			msg = "All specified packages (matching specified versions) are already absent"
		}
		return pkgsNewRet(name, true, msg), nil
	}
	if action == "purge" {
		oldRemoved, err := pkgsListPkgs(ctx, c, kw, "removed", true)
		if err != nil {
			return nil, err
		}
		for _, n := range params.names {
			if oldRemoved.Has(n) {
				targets = append(targets, n)
			}
		}
	}
	sort.Strings(targets)
	if len(targets) == 0 {
		msg := "None of the targeted packages are installed"
		if action == "purge" {
			msg += " or partially installed"
		}
		return pkgsNewRet(name, true, msg), nil
	}
	if c.Test {
		ch := &payload.Map{}
		for _, n := range targets {
			ch.Set(n, payload.NewMap("new", action+"d", "old", ""))
		}
		return payload.NewMap("name", name, "changes", ch, "result", nil,
			"comment", fmt.Sprintf("The following packages will be %sd: %s.", action, strings.Join(targets, ", "))), nil
	}
	res, err := sbExec(ctx, c, "pkg."+action, []any{name}, pkgsMerge(kw, "pkgs", pkgs, "version", version, "split_arch", false))
	if err != nil {
		return nil, err
	}
	newPkgs, err := pkgsListPkgs(ctx, c, kw)
	if err != nil {
		return nil, err
	}
	var failed []string
	for _, n := range params.names {
		if newPkgs.Has(n) {
			failed = append(failed, n)
		}
	}
	if action == "purge" {
		newRemoved, err := pkgsListPkgs(ctx, c, kw, "removed", true)
		if err != nil {
			return nil, err
		}
		for _, n := range params.names {
			if newRemoved.Has(n) {
				failed = append(failed, n)
			}
		}
	}
	sort.Strings(failed)
	if len(failed) > 0 {
		return payload.NewMap("name", name, "changes", res, "result", false,
			"comment", fmt.Sprintf("The following packages failed to %s: %s.", action, strings.Join(failed, ", "))), nil
	}
	var notInstalled []string
	for _, n := range params.names {
		if !pkgsContains(targets, n) {
			notInstalled = append(notInstalled, n)
		}
	}
	sort.Strings(notInstalled)
	var comments []string
	if len(notInstalled) > 0 {
		comments = append(comments, "The following packages were not installed: "+strings.Join(notInstalled, ", "),
			fmt.Sprintf("The following packages were %sd: %s.", action, strings.Join(targets, ", ")))
	} else {
		comments = append(comments, fmt.Sprintf("All targeted packages were %sd.", action))
	}
	return payload.NewMap("name", name, "changes", res, "result", true, "comment", strings.Join(comments, " ")), nil
}

// pkgModWatch is pkg.mod_watch: rerun the watching state function.
func pkgModWatch(ctx context.Context, c *states.Call) (states.Ret, error) {
	sfun := c.Fun
	if c.Low != nil {
		if v, ok := c.Low.Get("sfun"); ok && v != nil {
			sfun = payload.Text(v)
		}
	}
	switch sfun {
	case "installed":
		return pkgInstalled(ctx, c)
	case "latest":
		return pkgLatest(ctx, c)
	case "removed":
		return pkgUninstallState(ctx, c, "remove")
	case "purged":
		return pkgUninstallState(ctx, c, "purge")
	}
	return states.Ret{Name: sbName(c), Result: states.False, Comment: fmt.Sprintf("pkg.%s does not work with the watch requisite", sfun)}, nil
}

package builtin

// This file is Salt's pkgrepo state module (salt/states/pkgrepo.py) for
// apt: pkgrepo.managed and pkgrepo.absent over pkg.get_repo,
// pkg.mod_repo, pkg.del_repo and pkg.list_repos, with Salt's comparison
// of the wanted and the configured repository, comments and changes.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func pkgrepoStates() []states.Function {
	return []states.Function{
		{Name: "pkgrepo.managed", Fn: pkgrepoManaged, Spec: modules.Spec{Kwargs: true, Params: []modules.Param{sbReq("name"), sbOpt("ppa", nil), sbOpt("copr", nil), sbOpt("aptkey", true)}}},
		{Name: "pkgrepo.absent", Fn: pkgrepoAbsent, Spec: modules.Spec{Kwargs: true, Params: []modules.Param{sbReq("name")}}},
	}
}

// pkgrepoKwargs are the extra keyword arguments without the state
// system's keywords.
func pkgrepoKwargs(c *states.Call) *payload.Map {
	out := &payload.Map{}
	for _, it := range c.Args.CleanKwargs().Items() {
		k := payload.KeyString(it.Key)
		if sbInternalKeyword(k) || k == "name" {
			continue
		}
		out.Set(k, it.Value)
	}
	return out
}

func pkgrepoEtcDir(c *states.Call) string {
	if c.Env != nil && c.Env.Opts != nil {
		if v, ok := c.Env.Opts.Get("aptpkg.etc_dir"); ok && v != nil {
			return strings.TrimRight(payload.Text(v), "/") + "/"
		}
	}
	return "/etc/apt/"
}

func pkgrepoSortedStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = append(out, pyfmt.Str(e))
		}
	case string:
		for _, r := range x {
			out = append(out, string(r))
		}
	}
	sort.Strings(out)
	return out
}

func pkgrepoManaged(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	aptkey := c.Args.Get("aptkey")
	if _, err := exec.LookPath("apt-key"); err != nil {
		aptkey = false
	}
	kw := pkgrepoKwargs(c)
	if c.Env == nil || c.Env.Registry == nil {
		ret.Result = states.False
		ret.Comment = "Repo management not implemented on this platform"
		return ret, nil
	}
	if _, ok := c.Env.Registry.Lookup("pkg.get_repo"); !ok {
		ret.Result = states.False
		ret.Comment = "Repo management not implemented on this platform"
		return ret, nil
	}
	if kw.Has("key_url") && (kw.Has("keyid") || kw.Has("keyserver")) {
		ret.Result = states.False
		ret.Comment = `You may not use both "keyid"/"keyserver" and "key_url" argument.`
	}
	if kw.Has("key_text") && (kw.Has("keyid") || kw.Has("keyserver")) {
		ret.Result = states.False
		ret.Comment = `You may not use both "keyid"/"keyserver" and "key_text" argument.`
	}
	if kw.Has("key_text") && kw.Has("key_url") {
		ret.Result = states.False
		ret.Comment = `You may not use both "key_url" and "key_text" argument.`
	}
	if kw.Has("repo") {
		ret.Result = states.False
		ret.Comment = "'repo' is not a supported argument for this state. The 'name' argument is probably what was intended."
		return ret, nil
	}
	enabled, hasEnabled := kw.Delete("enabled")
	disabled, hasDisabled := kw.Delete("disabled")
	if hasEnabled && enabled != nil && hasDisabled && disabled != nil {
		ret.Result = states.False
		ret.Comment = "Only one of enabled/disabled is allowed"
		return ret, nil
	}
	if !hasEnabled && !hasDisabled {
		enabled, hasEnabled = true, true
	}
	allowInsecure := true
	if v, ok := kw.Delete("allow_insecure_key"); ok {
		allowInsecure = payload.Truthy(v)
	}
	if ku, ok := kw.Get("key_url"); ok && strings.HasPrefix(strings.TrimSpace(pyfmt.Str(ku)), "http:") && !allowInsecure {
		ret.Result = states.False
		ret.Comment = "Cannot have 'key_url' using http with 'allow_insecure_key' set to True"
		return ret, nil
	}
	repo := name
	grains := c.Env.Grains
	osName := ""
	if grains != nil {
		osName = grains.Str("os")
	}
	if osName == "Ubuntu" || osName == "Mint" {
		if ppa := c.Args.Get("ppa"); ppa != nil {
			repo = "ppa:" + pyfmt.Str(ppa)
		}
		if hasEnabled && enabled != nil {
			kw.Set("disabled", !modules.IsTrue(enabled))
		} else {
			kw.Set("disabled", modules.IsTrue(disabled))
		}
	}
	pre, err := sbExec(ctx, c, "pkg.get_repo", nil, kw.Clone().Set("repo", repo))
	if err != nil {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to examine repo '%s': %s", name, sbErrText(err))
		return ret, nil
	}
	preM, _ := pre.(*payload.Map)
	if preM == nil {
		preM = &payload.Map{}
	}
	sanitized := kw
	if grains != nil && grains.Str("os_family") == "Debian" {
		s, err := mbuiltin.AptExpandRepoDef(pkgrepoEtcDir(c), kw.Clone().Set("repo", repo))
		if err != nil {
			return ret, err
		}
		sanitized = s
	}
	if preM.Len() > 0 {
		preM = preM.Clone()
		preM.Delete("file")
		sanitized = sanitized.Clone()
		sanitized.Delete("file")
		configured := true
	loop:
		for _, it := range sanitized.Items() {
			k := payload.KeyString(it.Key)
			pv, has := preM.Get(k)
			switch {
			case !has:
				if k == "enabled" || k == "comps" || k == "key_url" {
					configured = false
					break loop
				}
			case k == "comps" || k == "key_url":
				if strings.Join(pkgrepoSortedStrings(it.Value), "\x00") != strings.Join(pkgrepoSortedStrings(pv), "\x00") {
					configured = false
					break loop
				}
			case k == "line":
				dv, _ := sanitized.Get("disabled")
				if !payload.Truthy(dv) {
					ss := strings.Fields(pyfmt.Str(it.Value))
					if len(ss) > 3 {
						tail := append([]string{}, ss[3:]...)
						sort.Strings(tail)
						ss = append(ss[:3], tail...)
					}
					before, after, _ := strings.Cut(pyfmt.Str(pv), "#")
					rs := strings.Fields(strings.TrimSpace(before))
					if len(rs) > 3 {
						tail := append([]string{}, rs[3:]...)
						sort.Strings(tail)
						rs = append(rs[:3], tail...)
					}
					if strings.Join(ss, " ") != strings.Join(rs, " ") {
						configured = false
						break loop
					}
					if cv, ok := kw.Get("comments"); ok {
						if strings.TrimSpace(after) != mbuiltin.AptCombineComments(cv) {
							configured = false
							break loop
						}
					}
				}
			case k == "architectures" && payload.Truthy(it.Value):
				if strings.Join(pkgrepoSortedStrings(it.Value), "\x00") != strings.Join(pkgrepoSortedStrings(pv), "\x00") {
					configured = false
					break loop
				}
			default:
				if k == "architectures" {
					// An empty wanted list compares as str() below.
				}
				if pyfmt.Str(it.Value) != pyfmt.Str(pv) {
					configured = false
					break loop
				}
			}
		}
		if configured {
			ret.Result = states.True
			ret.Comment = fmt.Sprintf("Package repo '%s' already configured", name)
			return ret, nil
		}
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("Package repo '%s' would be configured. This may cause pkg states to behave differently than stated if this action is repeated without test=True, due to the differences in the configured repositories.", name)
		if preM.Len() > 0 {
			for _, it := range sanitized.Items() {
				k := payload.KeyString(it.Key)
				pv, _ := preM.Get(k)
				if !pyfmt.Equal(it.Value, pv) {
					ret.Changes.Set(k, payload.NewMap("new", it.Value, "old", pv))
				}
			}
		} else {
			ret.Changes.Set("repo", name)
		}
		return ret, nil
	}
	if v, ok := kw.Get("clean_file"); ok && payload.Truthy(v) {
		if f, ok := kw.Get("file"); ok {
			if err := os.WriteFile(pyfmt.Str(f), nil, 0o644); err != nil {
				return ret, fmt.Errorf("clean_file: %w", err)
			}
		}
	}
	mkw := kw.Clone().Set("saltenv", fileNewRun(ctx, c).saltenv()).Set("aptkey", aptkey)
	if _, err := sbExec(ctx, c, "pkg.mod_repo", []any{repo}, mkw); err != nil {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to configure repo '%s': %s", name, sbErrText(err))
		return ret, nil
	}
	post, err := sbExec(ctx, c, "pkg.get_repo", nil, kw.Clone().Set("repo", repo))
	if err != nil {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to confirm config of repo '%s': %s", name, sbErrText(err))
		return ret, nil
	}
	postM, _ := post.(*payload.Map)
	if postM == nil {
		postM = &payload.Map{}
	}
	if preM.Len() > 0 {
		for _, it := range sanitized.Items() {
			k := payload.KeyString(it.Key)
			pv, _ := preM.Get(k)
			qv, _ := postM.Get(k)
			if !pyfmt.Equal(qv, pv) {
				ret.Changes.Set(k, payload.NewMap("new", qv, "old", pv))
			}
		}
	} else {
		ret.Changes = payload.NewMap("repo", repo)
	}
	ret.Result = states.True
	ret.Comment = fmt.Sprintf("Configured package repo '%s'", name)
	return ret, nil
}

// pkgrepoStripURI is salt.utils.pkg.deb.strip_uri.
func pkgrepoStripURI(repo string) string {
	f := strings.Fields(repo)
	for i, v := range f {
		if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "ftp://") {
			f[i] = strings.TrimRight(v, "/")
		}
	}
	return strings.Join(f, " ")
}

func pkgrepoAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.None, Changes: &payload.Map{}}
	kw := pkgrepoKwargs(c)
	grains := c.Env.Grains
	if grains != nil && (grains.Str("os") == "Ubuntu" || grains.Str("os") == "Mint") {
		if p, ok := kw.Delete("ppa"); ok {
			name = pyfmt.Str(p)
			if !strings.HasPrefix(name, "ppa:") {
				name = "ppa:" + name
			}
		}
	}
	removeKey := false
	for _, k := range []string{"keyid", "keyid_ppa"} {
		if v, ok := kw.Get(k); ok && v != nil {
			removeKey = true
		}
	}
	if removeKey {
		if _, ok := c.Env.Registry.Lookup("pkg.del_repo_key"); !ok {
			ret.Result = states.False
			ret.Comment = "Repo key management is not implemented for this platform"
			return ret, nil
		}
	}
	strip := name
	if grains != nil && grains.Str("os_family") == "Debian" {
		strip = pkgrepoStripURI(name)
	}
	repo, err := sbExec(ctx, c, "pkg.get_repo", []any{strip}, kw)
	if err != nil {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("Failed to configure repo '%s': %s", name, sbErrText(err))
		return ret, nil
	}
	if !payload.Truthy(repo) {
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("Package repo %s is absent", name)
		return ret, nil
	}
	if c.Test {
		ret.Comment = fmt.Sprintf("Package repo '%s' will be removed. This may cause pkg states to behave differently than stated if this action is repeated without test=True, due to the differences in the configured repositories.", name)
		return ret, nil
	}
	if _, err := sbExec(ctx, c, "pkg.del_repo", nil, kw.Clone().Set("repo", strip)); err != nil {
		ret.Result = states.False
		ret.Comment = sbErrText(err)
		return ret, nil
	}
	repos, _ := sbExec(ctx, c, "pkg.list_repos", nil, nil)
	if m, ok := repos.(*payload.Map); ok && m.Has(strip) {
		ret.Result = states.False
		ret.Comment = "Failed to remove repo " + name
		return ret, nil
	}
	ret.Changes.Set("repo", name)
	ret.Comment = "Removed repo " + name
	if !removeKey {
		ret.Result = states.True
		return ret, nil
	}
	keyid, err := sbExec(ctx, c, "pkg.del_repo_key", []any{strip}, kw)
	if err != nil {
		ret.Result = states.False
		ret.Comment += ", but failed to remove key: " + sbErrText(err)
		return ret, nil
	}
	ret.Result = states.True
	ret.Changes.Set("keyid", keyid)
	ret.Comment += fmt.Sprintf(", and keyid %s", pyfmt.Str(keyid))
	return ret, nil
}

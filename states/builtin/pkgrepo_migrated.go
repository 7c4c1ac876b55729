package builtin

// This file is pkgrepo.migrated (Salt 3006's salt/states/pkgrepo.py):
// copy the minion's package repositories (and GPG keys) into another root
// directory. Salt supports it on Suse only; elsewhere, as on every apt
// minion, the state fails with Salt's comment.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func pkgrepoMigratedStates() []states.Function {
	return []states.Function{
		{Name: "pkgrepo.migrated", Fn: pkgrepoMigrated, Spec: modules.Spec{Kwargs: true,
			Params: []modules.Param{sbReq("name"), sbOpt("keys", true), sbOpt("drop", false), sbOpt("method", nil)}}},
	}
}

// pkgrepoSuseFields are the pkg.list_repos fields of a zypper repository
// that pkg.mod_repo takes back, by the name mod_repo gives them.
var pkgrepoSuseFields = map[string]string{
	"name": "humanname", "priority": "priority", "enabled": "enabled", "autorefresh": "refresh",
	"gpgcheck": "gpgcheck", "keepackages": "cache", "baseurl": "url",
}

// pkgrepoCopyDirs are the repository configuration paths method=copy
// copies, by os_family.
var pkgrepoCopyDirs = map[string][]string{
	"Suse":   {"/etc/zypp/repos.d"},
	"RedHat": {"/etc/yum.conf", "/etc/yum.repos.d"},
}

// pkgrepoEntry is one repository or key: its name and the normalized
// fields, sorted by field name (Salt's (name, tuple(sorted(items)))).
type pkgrepoEntry struct {
	name   string
	fields *payload.Map
	id     string // name and fields as JSON: the set identity
}

// pkgrepoEntries normalizes a list_repos / list_gpg_keys dict with the
// field table (fields not in it are dropped) into entries.
func pkgrepoEntries(v any, table map[string]string) ([]pkgrepoEntry, error) {
	m, ok := v.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: 'dict' expected, got '%s'", modules.ErrExecution, payload.TypeName(v))
	}
	var out []pkgrepoEntry
	for _, it := range m.Items() {
		info, _ := it.Value.(*payload.Map)
		fields := &payload.Map{}
		if info != nil {
			var keys []string
			vals := map[string]any{}
			for _, f := range info.Items() {
				if to, ok := table[payload.KeyString(f.Key)]; ok {
					keys = append(keys, to)
					vals[to] = f.Value
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				fields.Set(k, vals[k])
			}
		}
		name := payload.KeyString(it.Key)
		b, err := json.Marshal([]any{name, fields})
		if err != nil {
			return nil, fmt.Errorf("pkgrepo.migrated: %w", err)
		}
		out = append(out, pkgrepoEntry{name: name, fields: fields, id: string(b)})
	}
	return out, nil
}

// pkgrepoMinus is a - b of two entry sets, sorted by name then fields
// (Salt's sets have no order; gsalt's lists are stable).
func pkgrepoMinus(a, b []pkgrepoEntry) []pkgrepoEntry {
	in := map[string]bool{}
	for _, e := range b {
		in[e.id] = true
	}
	seen := map[string]bool{}
	var out []pkgrepoEntry
	for _, e := range a {
		if !in[e.id] && !seen[e.id] {
			seen[e.id] = true
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// pkgrepoPlan is what remains to do: repositories and keys to migrate
// into the root and (with drop) to drop from it.
type pkgrepoPlan struct {
	repos, dropRepos, keys, dropKeys []pkgrepoEntry
}

func (p pkgrepoPlan) empty() bool {
	return len(p.repos)+len(p.dropRepos)+len(p.keys)+len(p.dropKeys) == 0
}

func pkgrepoNames(l []pkgrepoEntry) []any {
	out := []any{}
	for _, e := range l {
		out = append(out, e.name)
	}
	return out
}

// pkgrepoMigratePlan compares the minion's repositories (and keys) with
// those configured below root; the root's may fail to list (an
// uninitialized root), which counts as none.
func pkgrepoMigratePlan(ctx context.Context, c *states.Call, root string, keys, drop bool) (pkgrepoPlan, error) {
	family := ""
	if c.Env.Grains != nil {
		family = c.Env.Grains.Str("os_family")
	}
	repoTable := map[string]string{}
	if family == "Suse" {
		repoTable = pkgrepoSuseFields
	}
	keyTable := map[string]string{}
	if family == "Suse" || family == "RedHat" {
		keyTable = map[string]string{"Description": "key"}
	}
	v, err := sbExec(ctx, c, "pkg.list_repos", nil, nil)
	if err != nil {
		return pkgrepoPlan{}, err
	}
	src, err := pkgrepoEntries(v, repoTable)
	if err != nil {
		return pkgrepoPlan{}, err
	}
	var tgt []pkgrepoEntry
	if v, err := sbExec(ctx, c, "pkg.list_repos", nil, payload.NewMap("root", root)); err == nil {
		if e, err := pkgrepoEntries(v, repoTable); err == nil {
			tgt = e
		}
	}
	var srcKeys, tgtKeys []pkgrepoEntry
	if keys {
		v, err := sbExec(ctx, c, "lowpkg.list_gpg_keys", nil, payload.NewMap("info", true))
		if err != nil {
			return pkgrepoPlan{}, err
		}
		if srcKeys, err = pkgrepoEntries(v, keyTable); err != nil {
			return pkgrepoPlan{}, err
		}
		if v, err := sbExec(ctx, c, "lowpkg.list_gpg_keys", nil, payload.NewMap("info", true, "root", root)); err == nil {
			if e, err := pkgrepoEntries(v, keyTable); err == nil {
				tgtKeys = e
			}
		}
	}
	p := pkgrepoPlan{repos: pkgrepoMinus(src, tgt), keys: pkgrepoMinus(srcKeys, tgtKeys)}
	if drop {
		p.dropRepos, p.dropKeys = pkgrepoMinus(tgt, src), pkgrepoMinus(tgtKeys, srcKeys)
	}
	return p, nil
}

func pkgrepoMigrated(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	family := ""
	if c.Env.Grains != nil {
		family = c.Env.Grains.Str("os_family")
	}
	if family != "Suse" {
		ret.Comment = "Migration not supported for this platform"
		return ret, nil
	}
	keys := payload.Truthy(c.Args.Get("keys"))
	if _, ok := c.Env.Registry.Lookup("lowpkg.import_gpg_key"); keys && !ok {
		ret.Comment = "Keys cannot be migrated for this platform"
		return ret, nil
	}
	method := c.Args.Get("method")
	if method != nil && method != "salt" && method != "copy" {
		ret.Comment = "Migration method not supported"
		return ret, nil
	}
	drop := payload.Truthy(c.Args.Get("drop"))
	plan, err := pkgrepoMigratePlan(ctx, c, name, keys, drop)
	if err != nil {
		return ret, err
	}
	if plan.empty() {
		ret.Result = states.True
		ret.Comment = "Repositories are already migrated"
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = "There are keys or repositories to migrate or drop"
		ret.Changes = payload.NewMap("repos to migrate", pkgrepoNames(plan.repos), "repos to drop", pkgrepoNames(plan.dropRepos),
			"keys to migrate", pkgrepoNames(plan.keys), "keys to drop", pkgrepoNames(plan.dropKeys))
		return ret, nil
	}
	for _, r := range plan.repos {
		if method == "copy" {
			for _, src := range pkgrepoCopyDirs[family] {
				dst := filepath.Join(name, strings.TrimPrefix(filepath.Clean(src), "/"))
				if _, err := sbExec(ctx, c, "file.copy", nil, payload.NewMap("src", src, "dst", dst, "recurse", true)); err != nil {
					return ret, err
				}
			}
			continue
		}
		kw := payload.DeepClone(r.fields).(*payload.Map)
		kw.Set("root", name)
		if _, err := sbExec(ctx, c, "pkg.mod_repo", []any{r.name}, kw); err != nil {
			return ret, err
		}
	}
	for _, r := range plan.dropRepos {
		if _, err := sbExec(ctx, c, "pkg.del_repo", []any{r.name}, payload.NewMap("root", name)); err != nil {
			return ret, err
		}
	}
	for _, k := range plan.keys {
		key, _ := k.fields.Get("key")
		if key == nil {
			return ret, &modules.PyException{Class: "KeyError", Message: "'key'"}
		}
		if _, err := sbExec(ctx, c, "lowpkg.import_gpg_key", []any{key}, payload.NewMap("root", name)); err != nil {
			return ret, err
		}
	}
	for _, k := range plan.dropKeys {
		if _, err := sbExec(ctx, c, "lowpkg.remove_gpg_key", []any{k.name}, payload.NewMap("root", name)); err != nil {
			return ret, err
		}
	}
	after, err := pkgrepoMigratePlan(ctx, c, name, keys, drop)
	if err != nil {
		return ret, err
	}
	if !after.empty() {
		ret.Comment = "Migration of repositories failed"
		return ret, nil
	}
	ret.Result = states.True
	ret.Comment = "Repositories synchronized"
	ret.Changes = payload.NewMap("repos migrated", pkgrepoNames(plan.repos), "repos dropped", pkgrepoNames(plan.dropRepos),
		"keys migrated", pkgrepoNames(plan.keys), "keys dropped", pkgrepoNames(plan.dropKeys))
	return ret, nil
}

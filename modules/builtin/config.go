package builtin

import (
	"context"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// configFunctions is Salt's config module (salt/modules/config.py).
//
// Minion options are read through Env.Opts. Options that also list their
// keys (Range, as *payload.Map does) additionally serve config.items, the
// wildcard form of config.option, config.dot_vals and merged lookups over
// the whole configuration; with a Get-only Options those see no keys.
func configFunctions() []modules.Function {
	return []modules.Function{
		{Name: "config.get", Doc: "Attempt to retrieve the named value from the minion config file, grains,\npillar or the master config (pillar 'master'), in that order. Nested\nvalues are reached with the delimiter (default ':'). merge=recurse or\nmerge=overwrite searches the merged data instead.\n\nCLI Example:\n\n    salt '*' config.get pkg:apache",
			Spec: modules.Spec{Params: []modules.Param{req("key"), opt("default", ""), opt("delimiter", ":"), opt("merge", nil),
				opt("omit_opts", false), opt("omit_pillar", false), opt("omit_master", false), opt("omit_grains", false)}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				a := c.Args
				om := configOmit{opts: payload.Truthy(a.Get("omit_opts")), grains: payload.Truthy(a.Get("omit_grains")),
					pillar: payload.Truthy(a.Get("omit_pillar")), master: payload.Truthy(a.Get("omit_master"))}
				delim := pyfmt.Str(a.Get("delimiter"))
				if v, ok := configLookup(c, pyfmt.Str(a.Get("key")), delim, a.Get("merge"), om); ok {
					return v, nil
				}
				return a.Get("default"), nil
			}},
		{Name: "config.option", Doc: "Return the setting for the specified config value, looking in the minion\nconfig, grains, pillar, the master config and a set of defaults, without\nrecursing into nested data. wildcard=True matches keys with a glob and\nreturns a dict.\n\nCLI Example:\n\n    salt '*' config.option redis.host",
			Spec: modules.Spec{Params: []modules.Param{req("value"), opt("default", nil), opt("omit_opts", false), opt("omit_grains", false),
				opt("omit_pillar", false), opt("omit_master", false), opt("omit_all", false), opt("wildcard", false)}},
			Fn: configOption},
		{Name: "config.merge", Doc: "Retrieve an option based on key, merging all matches (minion config,\nmaster config, pillar).\n\nCLI Example:\n\n    salt '*' config.merge schedule",
			Spec: modules.Spec{Params: []modules.Param{req("value"), opt("default", ""), opt("omit_opts", false), opt("omit_master", false), opt("omit_pillar", false)}},
			Fn:   configMerge},
		{Name: "config.items", Doc: "Return the complete config from the currently running minion process.\n\nCLI Example:\n\n    salt '*' config.items",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				out := &payload.Map{}
				if m, ok := configOptsMapper(c.Env); ok {
					m.Range(func(k, v any) bool {
						out.SetKey(k, v)
						return true
					})
				}
				return out, nil
			}},
		{Name: "config.dot_vals", Doc: "Return all the master config (pillar 'master') and minion config values\nwhose key starts with the given value and a dot.\n\nCLI Example:\n\n    salt '*' config.dot_vals host",
			Spec: modules.Spec{Params: []modules.Param{req("value")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				prefix := pyfmt.Str(c.Args.Get("value")) + "."
				out := &payload.Map{}
				add := func(k, v any) bool {
					if s, ok := k.(string); ok && strings.HasPrefix(s, prefix) {
						out.Set(s, v)
					}
					return true
				}
				if master, ok := configMaster(c.Env).(*payload.Map); ok {
					master.Range(add)
				}
				if m, ok := configOptsMapper(c.Env); ok {
					m.Range(add)
				}
				return out, nil
			}},
		{Name: "config.valid_fileproto", Doc: "Returns a boolean value based on whether or not the URI passed has a valid\nremote file protocol designation\n\nCLI Example:\n\n    salt '*' config.valid_fileproto salt://path/to/file",
			Spec: modules.Spec{Params: []modules.Param{req("uri")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				switch configURLScheme(pyfmt.Str(c.Args.Get("uri"))) {
				case "salt", "file", "http", "https", "ftp", "swift", "s3":
					return true, nil
				}
				return false, nil
			}},
		{Name: "config.backup_mode", Doc: "Return the backup mode\n\nCLI Example:\n\n    salt '*' config.backup_mode",
			Spec: modules.Spec{Params: []modules.Param{opt("backup", "")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				if b := c.Args.Get("backup"); payload.Truthy(b) {
					return b, nil
				}
				return configOptionValue(c, "backup_mode", ""), nil
			}},
		{Name: "config.manage_mode", Doc: "Return a mode value, normalized to a string\n\nCLI Example:\n\n    salt '*' config.manage_mode",
			Spec: modules.Spec{Params: []modules.Param{req("mode")}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return fileNormalizeMode(c.Args.Get("mode")), nil
			}},
	}
}

// configOmit says which data stores a lookup skips.
type configOmit struct{ opts, grains, pillar, master bool }

// configDefaults is the module's DEFAULTS table (a fresh copy per call).
func configDefaults() *payload.Map {
	return payload.NewMap(
		"mongo.db", "salt",
		"mongo.password", "",
		"mongo.port", int64(27017),
		"mongo.user", "",
		"redis.db", "0",
		"redis.host", "salt",
		"redis.port", int64(6379),
		"test.foo", "unconfigured",
		"ca.cert_base_path", "/etc/pki",
		"solr.cores", []any{},
		"solr.host", "localhost",
		"solr.port", "8983",
		"solr.baseurl", "/solr",
		"solr.type", "master",
		"solr.request_timeout", nil,
		"solr.init_script", "/etc/rc.d/solr",
		"solr.dih.import_options", payload.NewMap("clean", false, "optimize", true, "commit", true, "verbose", false),
		"solr.backup_path", nil,
		"solr.num_backups", int64(1),
		"poudriere.config", "/usr/local/etc/poudriere.conf",
		"poudriere.config_dir", "/usr/local/etc/poudriere.d",
		"ldap.uri", "",
		"ldap.server", "localhost",
		"ldap.port", "389",
		"ldap.tls", false,
		"ldap.no_verify", false,
		"ldap.anonymous", true,
		"ldap.scope", int64(2),
		"ldap.attrs", nil,
		"ldap.binddn", "",
		"ldap.bindpw", "",
		"hosts.file", "/etc/hosts",
		"aliases.file", "/etc/aliases",
		"virt", payload.NewMap("tunnel", false, "images", "/srv/salt-images"),
		"docker.exec_driver", "docker-exec",
		"docker.compare_container_networks", payload.NewMap(
			"static", []any{"Aliases", "Links", "IPAMConfig"},
			"automatic", []any{"IPAddress", "Gateway", "GlobalIPv6Address", "IPv6Gateway"}),
	)
}

// configGetOnly adapts a Get-only Options to target.Mapper.
type configGetOnly struct{ o modules.Options }

func (g configGetOnly) Get(key string) (any, bool) { return g.o.Get(key) }
func (g configGetOnly) Range(func(k, v any) bool)  {}

// configOptsMapper returns the minion options as a dict view; the bool is
// false when the options cannot list their keys.
func configOptsMapper(env *modules.Env) (target.Mapper, bool) {
	if env == nil || env.Opts == nil {
		return &payload.Map{}, false
	}
	if m, ok := env.Opts.(target.Mapper); ok {
		return m, true
	}
	return configGetOnly{env.Opts}, false
}

func configGrains(env *modules.Env) *payload.Map {
	if env == nil || env.Grains == nil {
		return &payload.Map{}
	}
	return env.Grains
}

func configPillar(env *modules.Env) *payload.Map {
	if env == nil || env.Pillar == nil {
		return &payload.Map{}
	}
	return env.Pillar
}

// configMaster is __pillar__.get("master", {}).
func configMaster(env *modules.Env) any {
	if v, ok := configPillar(env).Get("master"); ok {
		return v
	}
	return &payload.Map{}
}

// configGet is config.get(key, default) with the default delimiter, for
// other modules.
func configGet(env *modules.Env, key string, def any) any {
	c := &modules.Call{Fun: "config.get", Env: env}
	if v, ok := configLookup(c, key, ":", nil, configOmit{}); ok {
		return v
	}
	return def
}

// configLookup is the search of config.get; ok is false when nothing
// matched (Salt returns the default then). sdb:// values are returned as
// they are: gsalt has no sdb modules.
func configLookup(c *modules.Call, key, delim string, merge any, om configOmit) (any, bool) {
	env := c.Env
	opts, _ := configOptsMapper(env)
	if merge == nil {
		stores := []struct {
			skip bool
			data any
		}{
			{om.opts, opts},
			{om.grains, configGrains(env)},
			{om.pillar, configPillar(env)},
			{om.master, configMaster(env)},
			{false, configDefaults()},
		}
		for _, s := range stores {
			if s.skip {
				continue
			}
			if v, ok := target.Traverse(s.data, key, delim); ok {
				return v, true
			}
		}
		return nil, false
	}
	strategy := pyfmt.Str(merge)
	if strategy != "recurse" && strategy != "overwrite" {
		c.Log().Warn("Unsupported merge strategy '" + strategy + "'. Falling back to 'recurse'.")
		strategy = "recurse"
	}
	data := configDefaults()
	optsMap := &payload.Map{}
	opts.Range(func(k, v any) bool {
		optsMap.SetKey(k, v)
		return true
	})
	if _, listable := configOptsMapper(env); !listable && env != nil && env.Opts != nil {
		// Only the top-level key can be known from a Get-only Options.
		first, _, _ := strings.Cut(key, delim)
		if v, ok := env.Opts.Get(first); ok {
			optsMap.Set(first, v)
		}
	}
	for _, src := range []any{configMaster(env), configPillar(env), configGrains(env), optsMap} {
		m, ok := src.(*payload.Map)
		if !ok {
			// dictupdate.update raises TypeError on a non-dict; Salt fails
			// the call there. gsalt skips the store.
			continue
		}
		data = configMergeMaps(data, m, strategy)
	}
	return target.Traverse(data, key, delim)
}

// configMergeMaps is salt.utils.dictupdate.merge with the recurse or
// overwrite strategy (merge_lists False).
func configMergeMaps(a, b *payload.Map, strategy string) *payload.Map {
	if strategy == "overwrite" {
		a = a.Clone()
		for _, it := range b.Items() {
			if _, ok := a.GetKey(it.Key); ok {
				a.SetKey(it.Key, it.Value)
			}
		}
	}
	dest, _ := payload.DeepClone(a).(*payload.Map)
	return configUpdate(dest, b)
}

// configUpdate is dictupdate.update: b merged into dest, recursively where
// both sides hold dicts.
func configUpdate(dest, upd *payload.Map) *payload.Map {
	common := false
	for _, it := range upd.Items() {
		if _, ok := dest.GetKey(it.Key); ok {
			common = true
			break
		}
	}
	for _, it := range upd.Items() {
		if common {
			cur, _ := dest.GetKey(it.Key)
			cm, ok1 := cur.(*payload.Map)
			um, ok2 := it.Value.(*payload.Map)
			if ok1 && ok2 {
				dest.SetKey(it.Key, configUpdate(cm, um))
				continue
			}
		}
		dest.SetKey(it.Key, it.Value)
	}
	return dest
}

// configOptionValue is config.option(value, default) with nothing omitted.
func configOptionValue(c *modules.Call, value string, def any) any {
	opts, _ := configOptsMapper(c.Env)
	for _, m := range []target.Mapper{opts, configGrains(c.Env), configPillar(c.Env)} {
		if v, ok := m.Get(value); ok {
			return v
		}
	}
	if master, ok := configMaster(c.Env).(*payload.Map); ok {
		if v, ok := master.Get(value); ok {
			return v
		}
	}
	if v, ok := configDefaults().Get(value); ok {
		return v
	}
	return def
}

func configOption(_ context.Context, c *modules.Call) (any, error) {
	a := c.Args
	value := pyfmt.Str(a.Get("value"))
	omitOpts, omitGrains := payload.Truthy(a.Get("omit_opts")), payload.Truthy(a.Get("omit_grains"))
	omitPillar, omitMaster := payload.Truthy(a.Get("omit_pillar")), payload.Truthy(a.Get("omit_master"))
	if payload.Truthy(a.Get("omit_all")) {
		omitOpts, omitGrains, omitPillar, omitMaster = true, true, true, true
	}
	wildcard := payload.Truthy(a.Get("wildcard"))
	def := a.Get("default")
	if def == nil {
		if wildcard {
			def = &payload.Map{}
		} else {
			def = ""
		}
	}
	opts, _ := configOptsMapper(c.Env)
	master, _ := configMaster(c.Env).(*payload.Map)
	if !wildcard {
		stores := []struct {
			skip bool
			m    target.Mapper
		}{{omitOpts, opts}, {omitGrains, configGrains(c.Env)}, {omitPillar, configPillar(c.Env)}, {omitMaster || master == nil, master}}
		for _, s := range stores {
			if s.skip {
				continue
			}
			if v, ok := s.m.Get(value); ok {
				return v, nil
			}
		}
		if v, ok := configDefaults().Get(value); ok {
			return v, nil
		}
		return def, nil
	}
	ret := &payload.Map{}
	stores := []struct {
		skip bool
		m    target.Mapper
	}{{omitMaster || master == nil, master}, {omitPillar, configPillar(c.Env)}, {omitGrains, configGrains(c.Env)}, {omitOpts, opts}}
	for _, s := range stores {
		if s.skip {
			continue
		}
		s.m.Range(func(k, v any) bool {
			if ks, ok := k.(string); ok && py.Fnmatch(ks, value) {
				ret.Set(ks, v)
			}
			return true
		})
	}
	for _, it := range configDefaults().Items() {
		k := it.Key.(string)
		if py.Fnmatch(k, value) && !ret.Has(k) {
			ret.Set(k, it.Value)
		}
	}
	if ret.Len() == 0 {
		return def, nil
	}
	return ret, nil
}

func configMerge(_ context.Context, c *modules.Call) (any, error) {
	a := c.Args
	value := pyfmt.Str(a.Get("value"))
	var ret any
	have := false
	combine := func(tmp any) (done bool) {
		if !have || ret == nil {
			ret, have = tmp, true
			_, isStr := ret.(string)
			return isStr
		}
		switch r := ret.(type) {
		case *payload.Map:
			if t, ok := tmp.(*payload.Map); ok {
				merged := t.Clone()
				for _, it := range r.Items() {
					merged.SetKey(it.Key, it.Value)
				}
				ret = merged
			}
		case []any:
			if t, ok := tmp.([]any); ok {
				ret = append(append([]any{}, r...), t...)
			}
		}
		return false
	}
	if !payload.Truthy(a.Get("omit_opts")) {
		if c.Env != nil && c.Env.Opts != nil {
			if v, ok := c.Env.Opts.Get(value); ok {
				if combine(v) {
					return ret, nil
				}
			}
		}
	}
	if !payload.Truthy(a.Get("omit_master")) {
		if master, ok := configMaster(c.Env).(*payload.Map); ok {
			if v, ok := master.Get(value); ok && combine(v) {
				return ret, nil
			}
		}
	}
	if !payload.Truthy(a.Get("omit_pillar")) {
		if v, ok := configPillar(c.Env).Get(value); ok && combine(v) {
			return ret, nil
		}
	}
	if !have || ret == nil {
		if v, ok := configDefaults().Get(value); ok {
			return v, nil
		}
		return a.Get("default"), nil
	}
	return ret, nil
}

// configURLScheme is urllib.parse.urlparse(uri).scheme.
func configURLScheme(uri string) string {
	i := strings.IndexByte(uri, ':')
	if i <= 0 {
		return ""
	}
	c0 := uri[0]
	if !((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z')) {
		return ""
	}
	for _, ch := range uri[:i] {
		if !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '.') {
			return ""
		}
	}
	return strings.ToLower(uri[:i])
}

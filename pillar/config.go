package pillar

import (
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Merge strategies of pillar_source_merging_strategy (salt.utils.dictupdate).
const (
	StrategySmart     = "smart"
	StrategyRecurse   = "recurse"
	StrategyAggregate = "aggregate"
	StrategyOverwrite = "overwrite"
	StrategyList      = "list"
	StrategyNone      = "none"
)

// Pillar cache back-ends (pillar_cache_backend).
const (
	CacheDisk   = "disk"
	CacheMemory = "memory"
)

// Config holds the master options the pillar compiler reads. The zero
// value is not useful; build it with ConfigFromOpts or fill every field.
type Config struct {
	// Roots is pillar_roots: saltenv -> directories, searched in order.
	// An "__env__" entry serves any environment not listed (with
	// "__env__" in its paths replaced by the environment name).
	Roots map[string][]string
	// EnvOrder optionally lists the environments of Roots in
	// configuration order; environments missing from it follow, sorted.
	EnvOrder []string
	// StateTop is state_top ("top.sls").
	StateTop string
	// Renderer is the default pipeline (renderer, "jinja|yaml").
	Renderer string
	// RendererBlacklist and RendererWhitelist are renderer_blacklist and
	// renderer_whitelist: disallowed renderers are skipped in a pipeline.
	RendererBlacklist, RendererWhitelist []string
	// Saltenv and Pillarenv are the master's saltenv and pillarenv
	// options ("" for None), used when a request names none.
	Saltenv, Pillarenv string
	// PillarenvFromSaltenv is pillarenv_from_saltenv.
	PillarenvFromSaltenv bool
	// MergeStrategy is pillar_source_merging_strategy ("smart").
	MergeStrategy string
	// MergeLists is pillar_merge_lists.
	MergeLists bool
	// SSHMergePillar is ssh_merge_pillar: a compile that has an initial
	// pillar (Request.Initial) merges its result over it.
	SSHMergePillar bool
	// IncludesOverrideSLS is pillar_includes_override_sls.
	IncludesOverrideSLS bool
	// SafeRenderError is pillar_safe_render_error (true by default):
	// render errors in _errors do not show the error text.
	SafeRenderError bool
	// PillarOpts is pillar_opts: the master options are added to every
	// pillar under "master".
	PillarOpts bool
	// ExtPillar is ext_pillar: a list of {module: arguments} entries run
	// by the compiler's ExtRegistry.
	ExtPillar any
	// OnDemandExtPillar is on_demand_ext_pillar: the modules a request
	// may name in Request.Ext (["libvirt", "virtkey"]); nil when the
	// option is malformed.
	OnDemandExtPillar []string
	// ExtPillarFirst is ext_pillar_first.
	ExtPillarFirst bool
	// ExcludeExtPillar is exclude_ext_pillar.
	ExcludeExtPillar []string
	// DecryptPillar is decrypt_pillar (gsalt has no decryption renderers).
	DecryptPillar any
	// DecryptDelimiter is decrypt_pillar_delimiter (":").
	DecryptDelimiter string
	// Nodegroups is the nodegroups option, for nodegroup and N@ matches.
	Nodegroups map[string]any
	// Cache, CacheTTL and CacheBackend are pillar_cache,
	// pillar_cache_ttl and pillar_cache_backend; CacheDir is cachedir
	// (disk cache files are CacheDir/pillar_cache/<minion id>).
	Cache        bool
	CacheTTL     time.Duration
	CacheBackend string
	CacheDir     string
	// Opts are the master options shown to templates as opts (nil for
	// none); the compiler adds the minion's id, grains, saltenv and
	// pillarenv like Salt's Pillar does.
	Opts *payload.Map
}

// Getter reads options by name; *config.Opts satisfies it. When it also
// has Snapshot() map[string]any, the snapshot becomes Config.Opts.
type Getter interface {
	Get(key string) (any, bool)
}

// GetterFunc adapts a function to Getter.
type GetterFunc func(key string) (any, bool)

// Get calls f.
func (f GetterFunc) Get(key string) (any, bool) { return f(key) }

// ConfigFromOpts builds a Config from master options, with Salt's
// defaults for missing ones.
func ConfigFromOpts(g Getter) Config {
	get := func(k string) any { v, _ := g.Get(k); return v }
	str := func(k, def string) string {
		v, ok := g.Get(k)
		if !ok || v == nil {
			return def
		}
		return optStr(v)
	}
	boolean := func(k string, def bool) bool {
		v, ok := g.Get(k)
		if !ok {
			return def
		}
		return payload.Truthy(goToPayload(v))
	}
	c := Config{
		StateTop:             str("state_top", "top.sls"),
		Renderer:             str("renderer", "jinja|yaml"),
		RendererBlacklist:    strList(get("renderer_blacklist")),
		RendererWhitelist:    strList(get("renderer_whitelist")),
		Saltenv:              str("saltenv", ""),
		Pillarenv:            str("pillarenv", ""),
		PillarenvFromSaltenv: boolean("pillarenv_from_saltenv", false),
		MergeStrategy:        str("pillar_source_merging_strategy", ""),
		MergeLists:           boolean("pillar_merge_lists", false),
		SSHMergePillar:       boolean("ssh_merge_pillar", true),
		IncludesOverrideSLS:  boolean("pillar_includes_override_sls", false),
		SafeRenderError:      boolean("pillar_safe_render_error", true),
		PillarOpts:           boolean("pillar_opts", false),
		ExtPillar:            goToPayload(get("ext_pillar")),
		ExtPillarFirst:       boolean("ext_pillar_first", false),
		ExcludeExtPillar:     strList(get("exclude_ext_pillar")),
		OnDemandExtPillar:    []string{"libvirt", "virtkey"},
		DecryptPillar:        goToPayload(get("decrypt_pillar")),
		DecryptDelimiter:     str("decrypt_pillar_delimiter", ":"),
		Cache:                boolean("pillar_cache", false),
		CacheTTL:             time.Hour,
		CacheBackend:         str("pillar_cache_backend", CacheDisk),
		CacheDir:             str("cachedir", ""),
	}
	if _, ok := g.Get("ext_pillar"); !ok {
		c.ExtPillar = []any{}
	}
	if v, ok := g.Get("on_demand_ext_pillar"); ok {
		switch v.(type) {
		case []any, []string:
			c.OnDemandExtPillar = append([]string{}, strList(v)...)
		default:
			c.OnDemandExtPillar = nil
		}
	}
	if v, ok := g.Get("pillar_cache_ttl"); ok {
		if n, ok := optInt(v); ok {
			c.CacheTTL = time.Duration(n) * time.Second
		}
	}
	if v, ok := g.Get("pillar_roots"); ok {
		c.Roots, c.EnvOrder = rootsOpt(v)
	} else {
		c.Roots = map[string][]string{"base": {"/srv/pillar", "/srv/spm/pillar"}}
		c.EnvOrder = []string{"base"}
	}
	switch ng := get("nodegroups").(type) {
	case map[string]any:
		c.Nodegroups = ng
	case *payload.Map:
		c.Nodegroups = map[string]any{}
		for _, it := range ng.Items() {
			c.Nodegroups[payload.KeyString(it.Key)] = it.Value
		}
	}
	if s, ok := g.(interface{ Snapshot() map[string]any }); ok {
		c.Opts, _ = goToPayload(s.Snapshot()).(*payload.Map)
	}
	return c
}

// optStr renders an option value as Salt's str() would for scalars.
func optStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case bool, int, int64, *big.Int, float64:
		return pyfmt.Str(x)
	}
	return ""
}

func optInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// strList turns a list option (or a single string) into strings.
func strList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s := optStr(e); s != "" || e == "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// rootsOpt reads pillar_roots from a map[string]any (sorted, as the
// configuration loader does not keep key order) or an ordered map.
func rootsOpt(v any) (map[string][]string, []string) {
	roots := map[string][]string{}
	var order []string
	switch x := v.(type) {
	case map[string]any:
		for env, dirs := range x {
			roots[env] = strList(dirs)
			order = append(order, env)
		}
		sort.Strings(order)
	case map[string][]string:
		for env, dirs := range x {
			roots[env] = append([]string(nil), dirs...)
			order = append(order, env)
		}
		sort.Strings(order)
	case *payload.Map:
		for _, it := range x.Items() {
			env := payload.KeyString(it.Key)
			roots[env] = strList(it.Value)
			order = append(order, env)
		}
	}
	return roots, order
}

// goToPayload converts configuration values (map[string]any, int, ...)
// into payload values.
func goToPayload(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return payload.FromGo(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = goToPayload(e)
		}
		return out
	case int:
		return int64(x)
	}
	return v
}

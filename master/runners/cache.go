package runners

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/wire/payload"
)

// TargetEnv is the part of the master the cache runners need besides Env:
// resolving a target to minion ids without publishing anything.
type TargetEnv interface {
	// CheckMinions returns the accepted minions tgt matches with tgtType
	// (Salt's CkMinions.check_minions, greedy).
	CheckMinions(tgt any, tgtType string) ([]string, error)
}

var cacheTargetParams = []Param{{Name: "tgt"}, {Name: "tgt_type", Default: "glob"}}

// cacheRunners is the reading part of Salt's cache runner
// (salt/runners/cache.py): the grains, pillars and mine data the master
// keeps for minions under cachedir/minions/<id>/{data,mine}.p.
func cacheRunners() []Runner {
	return []Runner{
		{Name: "cache.grains", Fn: cacheGrains, VarKwargs: true,
			Params: []Param{{Name: "tgt", Required: true}, {Name: "tgt_type", Default: "glob"}},
			Doc:    "Return cached grains of the targeted minions.\n\n    tgt\n        Target to match minion ids.\n\n    tgt_type\n        The type of targeting to use for matching, such as ``glob``, ``list``,\n        etc.\n\nCLI Example:\n\n    salt-run cache.grains '*'"},
		{Name: "cache.pillar", Fn: cachePillar, VarKwargs: true, Params: cacheTargetParams,
			Doc: "Return cached pillars of the targeted minions if tgt is set.\nIf tgt is not set will return cached pillars for all minions.\n\nCLI Example:\n\n    salt-run cache.pillar"},
		{Name: "cache.mine", Fn: cacheMine, VarKwargs: true, Params: cacheTargetParams,
			Doc: "Return cached mine data of the targeted minions.\n\nCLI Example:\n\n    salt-run cache.mine"},
	}
}

// cacheIDs is MasterPillarUtil._tgt_to_list: the matched ids (a target
// that fails to parse matches nothing, as Salt logs and moves on).
func cacheIDs(c *Call) []string {
	te, ok := c.Env.(TargetEnv)
	if !ok || !payload.Truthy(c.Args["tgt"]) {
		return nil
	}
	ids, err := te.CheckMinions(c.Args["tgt"], c.Str("tgt_type"))
	if err != nil {
		c.Log.Warn("cache runner: failed matching minions", "tgt", c.Args["tgt"], "tgt_type", c.Str("tgt_type"), "err", err)
		return nil
	}
	return ids
}

func optTrue(env Env, key string) bool {
	v, _ := env.Opt(key)
	return payload.Truthy(v)
}

// cacheDir returns cachedir/minions and pki_dir.
func cacheDir(env Env) (string, string) {
	dir, _ := env.Opt("cachedir")
	pki, _ := env.Opt("pki_dir")
	d, _ := dir.(string)
	p, _ := pki.(string)
	if d == "" {
		return "", p
	}
	return filepath.Join(d, "minions"), p
}

// cachedIDs is the localfs cache's list("minions"): the entries of
// cachedir/minions, sorted.
func cachedIDs(env Env) []string {
	dir, _ := cacheDir(env)
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// fetchBank reads cachedir/minions/<id>/<bank>.p like the localfs cache's
// fetch: a missing file is an empty map; ok is false for an invalid id or
// unreadable data.
func fetchBank(c *Call, id, bank string) (*payload.Map, bool) {
	dir, pki := cacheDir(c.Env)
	if dir == "" || !keys.ValidID(pki, id) {
		return nil, false
	}
	m, err := readDataFile(filepath.Join(dir, id, bank+".p"))
	if errors.Is(err, os.ErrNotExist) {
		return payload.NewMap(), true
	}
	if err != nil {
		c.Log.Warn("cache runner: cannot read minion cache data", "id", id, "bank", bank, "err", err)
		return nil, false
	}
	return m, true
}

// cachedData is MasterPillarUtil._get_cached_minion_data for key
// ("grains" or "pillar"): the ids with truthy cached values (every cached
// minion when ids is empty) followed by the values.
func cachedData(c *Call, ids []string, key string) ([]string, map[string]any) {
	vals := map[string]any{}
	if !optTrue(c.Env, "minion_data_cache") {
		return nil, vals
	}
	if len(ids) == 0 {
		ids = cachedIDs(c.Env)
	}
	var order []string
	for _, id := range ids {
		d, ok := fetchBank(c, id, "data")
		if !ok {
			continue
		}
		if v, has := d.Get(key); has && payload.Truthy(v) {
			vals[id] = v
			order = append(order, id)
		}
	}
	return order, vals
}

// merged is dict({id: {} for id in ids} + cached) in Python's order.
func merged(ids, cachedOrder []string, cached map[string]any) *payload.Map {
	out := payload.NewMap()
	for _, id := range ids {
		out.Set(id, payload.NewMap())
	}
	for _, id := range cachedOrder {
		out.Set(id, cached[id])
	}
	return out
}

// cacheGrains is cache.grains: every matched minion with its cached grains
// ({} when none); nothing when the target matches no minion.
func cacheGrains(_ context.Context, c *Call) (any, error) {
	ids := cacheIDs(c)
	if len(ids) == 0 {
		return payload.NewMap(), nil
	}
	order, vals := cachedData(c, ids, "grains")
	return merged(ids, order, vals), nil
}

// cachePillar is cache.pillar: like cache.grains for pillars; without tgt
// the non-empty cached pillars of every minion.
func cachePillar(_ context.Context, c *Call) (any, error) {
	ids := cacheIDs(c)
	if payload.Truthy(c.Args["tgt"]) && len(ids) == 0 {
		return payload.NewMap(), nil
	}
	order, vals := cachedData(c, ids, "pillar")
	return merged(ids, order, vals), nil
}

// cacheMine is cache.mine: the cached mine data of the matched minions
// (of every cached minion without tgt), {} for those without any; only
// with minion_data_cache or enforce_mine_cache.
func cacheMine(_ context.Context, c *Call) (any, error) {
	ids := cacheIDs(c)
	out := payload.NewMap()
	for _, id := range ids {
		out.Set(id, payload.NewMap())
	}
	if !optTrue(c.Env, "minion_data_cache") && !optTrue(c.Env, "enforce_mine_cache") {
		return out, nil
	}
	if len(ids) == 0 {
		ids = cachedIDs(c.Env)
	}
	for _, id := range ids {
		if m, ok := fetchBank(c, id, "mine"); ok {
			out.Set(id, m)
		}
	}
	return out, nil
}

package pillar

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// errTopType is Python's TypeError inside merge_tops, which get_top turns
// into one generic error and an empty top.
var errTopType = errors.New("pillar: malformed top data")

// envTops is the top files of one environment, in rendering order.
type envTops struct {
	env  string
	tops []any
}

// stateTopPath is the salt:// relative path of state_top.
func (c *Compiler) stateTopPath() string {
	p := c.cfg.StateTop
	if p == "" {
		p = "top.sls"
	}
	p = strings.TrimPrefix(p, "salt://")
	return strings.TrimPrefix(p, "/")
}

// getTops is Pillar.get_tops: the rendered top file of every environment
// and the top files they include.
func (r *run) getTops(ctx context.Context) ([]*envTops, []string) {
	var errs []string
	var envs []string
	if r.pillarenv != "" {
		if _, ok := r.roots.dirs[r.pillarenv]; ok {
			envs = []string{r.pillarenv}
		} else {
			r.log.Debug("pillarenv not found in the configured pillar environments", "pillarenv", r.pillarenv)
		}
	} else {
		envs = r.roots.order
		if r.c.cfg.MergeStrategy == StrategyNone {
			want := r.saltenvArg
			if want == "" {
				want = "base"
			}
			envs = nil
			if contains(r.roots.order, want) {
				envs = []string{want}
			}
		}
	}
	var tops []*envTops
	byEnv := map[string]*envTops{}
	topRel := r.c.stateTopPath()
	for _, env := range envs {
		file := r.roots.find(env, topRel)
		if file == "" {
			continue
		}
		data, err := r.renderFile(ctx, file, "salt://"+topRel, env, "", nil)
		if err != nil {
			errs = append(errs, "Rendering Primary Top file failed, render error:\n"+errText(err))
			r.log.Error("pillar top file rendering failed", "id", r.id, "saltenv", env, "err", err)
			break // one try block covers every environment in Salt
		}
		et := &envTops{env: env, tops: []any{data}}
		tops = append(tops, et)
		byEnv[env] = et
	}
	// Includes of the primary top files (not of included ones).
	type inc struct {
		env  string
		slss []any
	}
	var includes []inc
	for _, et := range tops {
		var slss []any
		for _, ctop := range et.tops {
			m, ok := ctop.(*payload.Map)
			if !ok {
				continue
			}
			v, has := m.Get("include")
			if !has {
				continue
			}
			slss = append(slss, iterPy(v)...)
			m.Delete("include")
		}
		if len(slss) > 0 {
			includes = append(includes, inc{et.env, slss})
		}
	}
	for _, in := range includes {
		done := map[string]bool{}
		for _, s := range in.slss {
			sls, ok := s.(string)
			if !ok {
				errs = append(errs, fmt.Sprintf("Rendering Top file %s failed, render error:\n%s", pyStr(s), "include names must be strings"))
				continue
			}
			if done[sls] {
				continue
			}
			done[sls] = true
			source, file := r.roots.getState(sls, in.env)
			var data any = payload.NewMap()
			if file != "" {
				d, err := r.renderFile(ctx, file, source, in.env, "", nil)
				if err != nil {
					errs = append(errs, fmt.Sprintf("Rendering Top file %s failed, render error:\n%s", sls, errText(err)))
					continue
				}
				data = d
			}
			byEnv[in.env].tops = append(byEnv[in.env].tops, data)
		}
	}
	return tops, errs
}

// iterPy lists what Python's for loop yields over v: list items, map
// keys, the characters of a string.
func iterPy(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case *payload.Map:
		out := make([]any, 0, x.Len())
		for _, it := range x.Items() {
			out = append(out, it.Key)
		}
		return out
	case string:
		out := make([]any, 0, len(x))
		for _, ch := range x {
			out = append(out, string(ch))
		}
		return out
	}
	return nil
}

// mergedTop is the merged top: saltenv -> target -> [match dicts...,
// sls names...], targets sorted by their order.
type mergedTop = payload.Map

// mergeTops is Pillar.merge_tops + sort_top_targets. It records the SLS
// of targets with ignore_missing in r.ignored.
func (r *run) mergeTops(tops []*envTops) (*mergedTop, error) {
	top := payload.NewMap()
	orders := map[string]*payload.Map{}
	for _, et := range tops {
		for _, ctop := range et.tops {
			cm, ok := ctop.(*payload.Map)
			if !ok {
				return nil, fmt.Errorf("%w: a top file renders to %s, not a dictionary", ErrTop, payload.TypeName(ctop))
			}
			for _, eit := range cm.Items() {
				env := payload.KeyString(eit.Key)
				if env == "include" {
					continue
				}
				tm, ok := eit.Value.(*payload.Map)
				if !ok {
					// Python iterates the value and indexes it by what it
					// yields: fine for nothing, a TypeError otherwise.
					if len(iterPy(eit.Value)) == 0 && eit.Value != nil {
						if _, scalar := eit.Value.(string); scalar || isList(eit.Value) {
							continue
						}
					}
					return nil, fmt.Errorf("%w: the targets of %s are %s", errTopType, env, payload.TypeName(eit.Value))
				}
				if orders[env] == nil {
					orders[env] = payload.NewMap()
				}
				for _, tit := range tm.Items() {
					var matches []any
					var states []string
					seen := map[string]bool{}
					order := int64(0)
					ignore := false
					switch tit.Value.(type) {
					case *payload.Map, []any, string:
					default:
						return nil, fmt.Errorf("%w: the body of %s is %s", errTopType, pyStr(tit.Key), payload.TypeName(tit.Value))
					}
					for _, comp := range iterPy(tit.Value) {
						switch cv := comp.(type) {
						case *payload.Map:
							if cv.Has("match") {
								matches = append(matches, cv)
							}
							if ov, ok := cv.Get("order"); ok {
								n, err := pyIntOrder(ov)
								if err != nil {
									return nil, err
								}
								order = n
							}
							if iv, ok := cv.Get("ignore_missing"); ok && payload.Truthy(iv) {
								ignore = true
							}
						case string:
							if !seen[cv] {
								seen[cv] = true
								states = append(states, cv)
							}
						}
					}
					orders[env].SetKey(tit.Key, order)
					if ignore {
						r.ignored[env] = append(r.ignored[env], states...)
					}
					body := append([]any{}, matches...)
					for _, s := range states {
						body = append(body, s)
					}
					envTop, _ := top.Get(env)
					etm, _ := envTop.(*payload.Map)
					if etm == nil {
						etm = payload.NewMap()
						top.Set(env, etm)
					}
					etm.SetKey(tit.Key, body)
				}
			}
		}
	}
	// sort_top_targets: a stable sort of each environment by order.
	sorted := payload.NewMap()
	for _, eit := range top.Items() {
		env := payload.KeyString(eit.Key)
		items := append([]payload.Item(nil), eit.Value.(*payload.Map).Items()...)
		ord := func(k any) int64 { v, _ := orders[env].GetKey(k); n, _ := v.(int64); return n }
		sort.SliceStable(items, func(i, j int) bool { return ord(items[i].Key) < ord(items[j].Key) })
		em := payload.NewMap()
		for _, it := range items {
			em.SetKey(it.Key, it.Value)
		}
		sorted.Set(env, em)
	}
	return sorted, nil
}

func isList(v any) bool { _, ok := v.([]any); return ok }

// pyIntOrder is int(order) as merge_tops applies it: ints as they are,
// floats truncated, strings parsed (0 when they do not parse); anything
// else is a TypeError.
func pyIntOrder(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case uint64:
		return int64(min(x, math.MaxInt64)), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, nil
		}
		return int64(x), nil
	case string:
		n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(x), "_", ""), 10, 64)
		if err != nil {
			return 0, nil
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: order is %s", errTopType, payload.TypeName(v))
}

// getTop is Pillar.get_top.
func (r *run) getTop(ctx context.Context) (*mergedTop, []string, error) {
	tops, errs := r.getTops(ctx)
	merged, err := r.mergeTops(tops)
	if errors.Is(err, errTopType) {
		r.log.Error("pillar top data is malformed", "id", r.id, "err", err)
		return payload.NewMap(), append(errs, "Error encountered while rendering pillar top file."), nil
	}
	if err != nil {
		return nil, errs, err
	}
	return merged, errs, nil
}

// salt's matcher modules (salt/matchers/*_match.py); a top naming any
// other matcher fails like Salt's KeyError.
var topMatchers = map[string]bool{
	"cache": true, "compound": true, "compound_pillar_exact": true, "data": true, "glob": true,
	"grain": true, "grain_pcre": true, "ipcidr": true, "list": true, "nodegroup": true, "pcre": true,
	"pillar": true, "pillar_exact": true, "pillar_pcre": true, "range": true,
}

// topMatches is Pillar.top_matches: saltenv -> SLS names (patterns) whose
// targets match the minion, in top order.
func (r *run) topMatches(top *mergedTop) (*payload.Map, error) {
	matches := payload.NewMap()
	for _, eit := range top.Items() {
		env := payload.KeyString(eit.Key)
		if r.pillarenv != "" && env != r.pillarenv {
			continue
		}
		body := eit.Value.(*payload.Map)
		for _, tit := range body.Items() {
			data, _ := tit.Value.([]any)
			ok, err := r.confirmTop(tit.Key, data)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			cur, _ := matches.Get(env)
			list, _ := cur.([]any)
			if cur == nil {
				list = []any{}
			}
			for _, item := range data {
				s, isStr := item.(string)
				if isStr && !containsPy(list, s) {
					list = append(list, s)
				}
			}
			matches.Set(env, list)
		}
	}
	return matches, nil
}

// confirmTop is the confirm_top matcher: compound unless the body names
// another matcher (the last "match" wins).
func (r *run) confirmTop(tgt any, data []any) (bool, error) {
	matcher := target.TypeCompound
	for _, item := range data {
		if m, ok := item.(*payload.Map); ok {
			if v, has := m.Get("match"); has {
				s, isStr := v.(string)
				if !isStr {
					return false, fmt.Errorf("%w: match is %s, not a string", ErrMatcher, payload.TypeName(v))
				}
				matcher = s
			}
		}
	}
	if !topMatchers[matcher] {
		return false, fmt.Errorf("%w: '%s_match.match'", ErrMatcher, matcher)
	}
	mn := target.Minion{ID: r.id, Grains: r.grains, Nodegroups: r.c.cfg.Nodegroups}
	if r.matchPillar != nil {
		mn.Pillar = r.matchPillar
	} else {
		mn.Pillar = payload.NewMap()
	}
	if matcher == target.TypeNodegroup && len(r.c.cfg.Nodegroups) == 0 {
		return false, nil
	}
	ok, err := r.c.matcher.Match(tgt, matcher, "", mn)
	if err != nil {
		r.log.Debug("pillar top target did not match", "id", r.id, "target", pyStr(tgt), "matcher", matcher, "err", err)
		return false, nil
	}
	return ok, nil
}

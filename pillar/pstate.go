package pillar

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// modsTable is render_pstate's mods: SLS name -> the SLS's own rendered
// data (nil after a failed render). Like Salt, an SLS included again
// reuses this entry, which holds the file's own keys without its
// includes merged in.
type modsTable map[string]any

// fnmatchFilter is fnmatch.filter over the available SLS names.
func (r *run) fnmatchFilter(names []string, pattern string) []string {
	var out []string
	for _, n := range names {
		if r.c.matcher.Fnmatch(n, pattern) {
			out = append(out, n)
		}
	}
	return out
}

// renderPillar is Pillar.render_pillar: the override, then every matched
// SLS of every environment merged in top order.
func (r *run) renderPillar(ctx context.Context, matches *payload.Map, errs []string) (*payload.Map, []string, error) {
	pillar := r.override.Clone()
	for _, eit := range matches.Items() {
		env := payload.KeyString(eit.Key)
		pstates, _ := eit.Value.([]any)
		var files []string
		mods := modsTable{}
		for _, pm := range pstates {
			match, _ := pm.(string)
			avail, ok := r.avail[env]
			if !ok {
				errs = append(errs, fmt.Sprintf("No matching pillar environment for environment '%s' found", env))
			}
			if m := r.fnmatchFilter(avail, match); len(m) > 0 {
				files = append(files, m...)
			} else {
				files = append(files, match)
			}
		}
		for _, sls := range files {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			pstate, perrs, err := r.renderPState(ctx, sls, env, mods, nil, 0)
			if err != nil {
				return nil, nil, err
			}
			errs = append(errs, perrs...)
			if pstate == nil {
				continue
			}
			pm, ok := pstate.(*payload.Map)
			if !ok {
				r.log.Error("the rendered pillar sls file did not return the expected data format", "sls", sls, "id", r.id)
				continue
			}
			if pillar, err = r.merge(pillar, pm); err != nil {
				return nil, nil, err
			}
		}
	}
	return pillar, errs, nil
}

// renderPState is Pillar.render_pstate: render one SLS and merge its
// includes. The returned data may be any type (nil when it was skipped or
// failed to render); errors Salt reports go to the []string, errors Salt
// would raise are returned as error.
func (r *run) renderPState(ctx context.Context, sls, env string, mods modsTable, defaults *payload.Map, depth int) (any, []string, error) {
	if depth > maxIncludeDepth {
		return nil, nil, fmt.Errorf("%w: includes nested deeper than %d at %s", ErrInclude, maxIncludeDepth, sls)
	}
	var errs []string
	source, file := r.roots.getState(sls, env)
	var state any
	if file == "" {
		switch {
		case contains(r.ignored[env], sls):
			r.log.Debug("skipping ignored and missing SLS", "sls", sls, "saltenv", env)
			return nil, nil, nil
		case len(r.roots.dirs[env]) > 0:
			msg := fmt.Sprintf("Specified SLS '%s' in environment '%s' is not available on the salt master", sls, env)
			r.log.Error(msg)
			errs = append(errs, msg)
			// Salt goes on rendering "no file", which gives {}.
			state = payload.NewMap()
		default:
			r.log.Debug(fmt.Sprintf("Specified SLS '%s' in environment '%s' was not found.", sls, env))
			return nil, nil, nil
		}
	} else {
		data, err := r.renderFile(ctx, file, source, env, sls, defaults)
		if err != nil {
			r.log.Error(fmt.Sprintf("Rendering SLS '%s' failed, render error:\n%s", sls, errText(err)), "id", r.id)
			if r.c.cfg.SafeRenderError {
				errs = append(errs, fmt.Sprintf("Rendering SLS '%s' failed. Please see master log for details.", sls))
			} else {
				errs = append(errs, fmt.Sprintf("Rendering SLS '%s' failed, render error:\n%s", sls, errText(err)))
			}
		} else {
			state = data
		}
	}
	mods[sls] = state
	if !payload.Truthy(state) {
		return state, errs, nil
	}
	sm, ok := state.(*payload.Map)
	if !ok {
		msg := fmt.Sprintf("SLS '%s' does not render to a dictionary", sls)
		r.log.Error(msg)
		return state, append(errs, msg), nil
	}
	incV, has := sm.Get("include")
	if !has {
		return state, errs, nil
	}
	incList, ok := incV.([]any)
	if !ok {
		msg := fmt.Sprintf("Include Declaration in SLS '%s' is not formed as a list", sls)
		r.log.Error(msg)
		return state, append(errs, msg), nil
	}
	sm.Delete("include")
	override := r.c.cfg.IncludesOverrideSLS
	var includeStates []any
	var err []string // Salt's err: kept from the last render_pstate call
	for _, entry := range incList {
		var subSLS string
		var key any
		switch e := entry.(type) {
		case string:
			subSLS = e
		case *payload.Map:
			if e.Len() == 0 {
				return nil, nil, fmt.Errorf("%w: empty include mapping in %s", ErrInclude, sls)
			}
			first := e.Items()[0]
			name, isStr := first.Key.(string)
			opts, isMap := first.Value.(*payload.Map)
			if !isStr || !isMap {
				return nil, nil, fmt.Errorf("%w: include %s in %s", ErrInclude, pyStr(first.Key), sls)
			}
			subSLS = name
			if d, ok := opts.Get("defaults"); ok {
				dm, isMap := d.(*payload.Map)
				if !isMap && d != nil {
					return nil, nil, fmt.Errorf("%w: defaults of include %s in %s is not a mapping", ErrInclude, name, sls)
				}
				defaults = dm
			} else {
				defaults = payload.NewMap()
			}
			key, _ = opts.Get("key")
		default:
			return nil, nil, fmt.Errorf("%w: include entry %s in %s", ErrInclude, pyStr(entry), sls)
		}
		var matched []string
		if avail, ok := r.avail[env]; ok {
			matched = r.fnmatchFilter(avail, strings.ReplaceAll(strings.TrimLeft(subSLS, "."), "/", "."))
			if strings.HasPrefix(subSLS, ".") {
				parts := strings.Split(sls, ".")
				if !strings.HasSuffix(source, "/init.sls") {
					parts = parts[:len(parts)-1]
				}
				subSLS = strings.Join(append(parts, subSLS[1:]), ".")
			}
			matched = append(matched, r.fnmatchFilter(avail, subSLS)...)
		} else {
			errs = append(errs, fmt.Sprintf("No matching pillar environment for environment '%s' found", env))
			matched = []string{subSLS}
		}
		if len(matched) == 0 {
			matched = []string{subSLS}
		}
		for _, m := range matched {
			var nstate any
			if prev, done := mods[m]; done {
				nstate = prev
			} else {
				var e error
				nstate, err, e = r.renderPState(ctx, m, env, mods, defaults, depth+1)
				if e != nil {
					return nil, nil, e
				}
			}
			if payload.Truthy(nstate) {
				if key != nil {
					ks, isStr := key.(string)
					if !isStr {
						return nil, nil, fmt.Errorf("%w: key of include %s in %s is not a string", ErrInclude, m, sls)
					}
					frags := strings.Split(ks, ":")
					for i := len(frags) - 1; i >= 0; i-- {
						nstate = payload.NewMap(frags[i], nstate)
					}
				}
				if !override {
					includeStates = append(includeStates, nstate)
				} else {
					merged, e := mergeAny(state, nstate, r.c.cfg.MergeStrategy, r.c.cfg.Renderer, r.c.cfg.MergeLists, r.log, r.marks)
					if e != nil {
						return nil, nil, e
					}
					state = merged
				}
			}
			errs = append(errs, err...)
		}
	}
	if !override {
		includeStates = append(includeStates, state)
		var acc any
		for i, s := range includeStates {
			if i == 0 {
				acc = s
				continue
			}
			merged, e := mergeAny(acc, s, r.c.cfg.MergeStrategy, r.c.cfg.Renderer, r.c.cfg.MergeLists, r.log, r.marks)
			if e != nil {
				return nil, nil, e
			}
			acc = merged
		}
		state = acc
	}
	return state, errs, nil
}

// decryptPillar is Pillar.decrypt_pillar. gsalt has no decryption
// renderers (gpg), so every configured key present in the pillar is
// reported as failed.
func (r *run) decryptPillar(pillar *payload.Map) []string {
	cfg := r.c.cfg.DecryptPillar
	if !payload.Truthy(cfg) {
		return nil
	}
	keys := payload.NewMap()
	switch x := cfg.(type) {
	case *payload.Map:
		keys = x
	case []any:
		for _, e := range x {
			switch v := e.(type) {
			case string:
				keys.Set(v, nil)
			case *payload.Map:
				for _, it := range v.Items() {
					keys.SetKey(it.Key, it.Value)
				}
			}
		}
	}
	if keys.Len() == 0 {
		return []string{"decrypt_pillar config option is malformed"}
	}
	var errs []string
	for _, it := range keys.Items() {
		k := payload.KeyString(it.Key)
		v, ok := target.Traverse(pillar, k, r.c.cfg.DecryptDelimiter)
		if !ok || v == nil {
			continue
		}
		rend := payload.Text(it.Value)
		if rend == "" {
			rend = "gpg"
		}
		msg := fmt.Sprintf("Failed to decrypt pillar key '%s': Decryption renderer '%s' is not available", k, rend)
		r.log.Error(msg)
		errs = append(errs, msg)
	}
	return errs
}

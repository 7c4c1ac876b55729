package states

import (
	"sort"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// runOpts are the options of one state run: the minion's options with the
// per-run values Salt's get_sls_opts and the state.* functions set (test,
// saltenv, pillarenv) layered on top. It implements modules.Options, so
// execution functions called by states see the run's test flag.
type runOpts struct {
	base modules.Options
	set  map[string]any
}

// newRunOpts layers an empty override map over base (may be nil).
func newRunOpts(base modules.Options) *runOpts {
	return &runOpts{base: base, set: map[string]any{}}
}

// Get returns an option.
func (o *runOpts) Get(key string) (any, bool) {
	if v, ok := o.set[key]; ok {
		return v, true
	}
	if o.base == nil {
		return nil, false
	}
	return o.base.Get(key)
}

// Set overrides an option for this run.
func (o *runOpts) Set(key string, v any) { o.set[key] = v }

// Snapshot returns every option (the base's snapshot when it has one,
// plus the overrides).
func (o *runOpts) Snapshot() map[string]any {
	out := map[string]any{}
	switch b := o.base.(type) {
	case interface{ Snapshot() map[string]any }:
		for k, v := range b.Snapshot() {
			out[k] = v
		}
	case *payload.Map:
		for _, it := range b.Items() {
			out[keyText(it.Key)] = it.Value
		}
	}
	for k, v := range o.set {
		out[k] = v
	}
	return out
}

// Range visits the options sorted by name (target.Mapper).
func (o *runOpts) Range(fn func(k, v any) bool) {
	snap := o.Snapshot()
	keys := make([]string, 0, len(snap))
	for k := range snap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn(k, snap[k]) {
			return
		}
	}
}

// payloadMap returns the options as a payload dict (templates' opts).
func (o *runOpts) payloadMap() *payload.Map {
	m, _ := goToPayload(o.Snapshot()).(*payload.Map)
	if m == nil {
		m = &payload.Map{}
	}
	return m
}

// str returns an option as text ("" when missing or None).
func (o *runOpts) str(key string) string {
	v, ok := o.Get(key)
	if !ok || v == nil {
		return ""
	}
	return pyStr(v)
}

// strOr returns an option as text, def only when the option is missing.
func (o *runOpts) strOr(key, def string) string {
	if _, ok := o.Get(key); !ok {
		return def
	}
	return o.str(key)
}

// strDefault returns an option as text, def when missing or None.
func (o *runOpts) strDefault(key, def string) string {
	if s := o.str(key); s != "" {
		return s
	}
	return def
}

// boolDefault returns an option's truthiness, def when missing.
func (o *runOpts) boolDefault(key string, def bool) bool {
	v, ok := o.Get(key)
	if !ok {
		return def
	}
	return payload.Truthy(v)
}

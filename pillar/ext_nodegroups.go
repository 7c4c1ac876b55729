package pillar

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/payload"
)

// extNodegroups is salt/pillar/nodegroups.py: {pillar_name: [the
// nodegroups the minion is in]}, in the order of the nodegroups option.
func extNodegroups() ExtModule {
	return ExtModule{Name: "nodegroups", Params: []ExtParam{{Name: "pillar_name"}},
		Fn: func(_ context.Context, c *ExtCall) (any, error) {
			name := any("nodegroups")
			if payload.Truthy(c.Args["pillar_name"]) {
				name = c.Args["pillar_name"]
			}
			in := []any{}
			for _, ng := range c.r.nodegroupOrder() {
				if c.r.inNodegroup(c.r.c.cfg.Nodegroups[ng]) {
					in = append(in, ng)
				}
			}
			out := payload.NewMap()
			out.SetKey(name, in)
			return out, nil
		}}
}

// nodegroupOrder lists the configured nodegroups in configuration order
// when the options keep it, sorted otherwise.
func (r *run) nodegroupOrder() []string {
	if r.opts != nil {
		if m, ok := r.opts.Get("nodegroups"); ok {
			if pm, ok := m.(*payload.Map); ok {
				var out []string
				for _, it := range pm.Items() {
					out = append(out, payload.KeyString(it.Key))
				}
				return out
			}
		}
	}
	out := make([]string, 0, len(r.c.cfg.Nodegroups))
	for k := range r.c.cfg.Nodegroups {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// inNodegroup is CkMinions.check_minions(expr, "compound") on the
// master containing the minion: the universe is the accepted keys under
// pki_dir/minions (a minion without an accepted key is in no group); the
// minion data cache entry of the minion holds the grains of this compile
// (what Salt's master cached when the minion sent them with its pillar
// request).
func (r *run) inNodegroup(expr any) bool {
	accepted := r.acceptedKeys()
	found := false
	for _, a := range accepted {
		if a == r.id {
			found = true
		}
	}
	if !found {
		return false
	}
	if l, ok := expr.([]any); ok {
		// A list nodegroup is a compound of its words.
		parts := make([]string, 0, len(l))
		for _, w := range l {
			parts = append(parts, payload.Text(w))
		}
		expr = strings.Join(parts, " ")
	}
	cache := func(id string) (any, any, bool) {
		if id != r.id {
			return nil, nil, false
		}
		return r.grains, payload.NewMap(), true
	}
	ms, _, err := r.c.matcher.CheckMinions(expr, target.TypeCompound, "", accepted, cache, r.c.cfg.Nodegroups, true)
	if err != nil {
		r.log.Debug("nodegroup match failed", "err", err)
	}
	for _, m := range ms {
		if m == r.id {
			return true
		}
	}
	return false
}

// acceptedKeys lists pki_dir/minions.
func (r *run) acceptedKeys() []string {
	pki := ""
	if r.opts != nil {
		pki = r.opts.Str("pki_dir")
	}
	if pki == "" {
		return nil
	}
	names, err := readDirNames(filepath.Join(pki, "minions"))
	if err != nil {
		return nil
	}
	out := names[:0]
	for _, n := range names {
		if fi, err := os.Stat(filepath.Join(pki, "minions", n)); err == nil && fi.Mode().IsRegular() {
			out = append(out, n)
		}
	}
	return out
}

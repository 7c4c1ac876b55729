package states

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestModAggregate runs an SLS of three "agg.inst" states through
// state.sls: with state_aggregate on, the first chunk's mod_aggregate
// folds the others' names into its pkgs (and their requisites into its
// own), so the state function sees all three at once; off, each runs alone.
func TestModAggregate(t *testing.T) {
	sls := "one:\n  agg.inst: []\ntwo:\n  agg.inst:\n    - require:\n      - test: gate\nthree:\n  agg.inst: []\ngate:\n  test.succeed_without_changes: []\n"
	for _, tc := range []struct {
		name string
		on   any
		want []string
	}{
		{"on", true, []string{"one+two,three", "two", "three"}},
		{"list", []any{"agg"}, []string{"one+two,three", "two", "three"}},
		{"off", false, []string{"one", "two", "three"}},
		{"other module", []any{"pkg"}, []string{"one", "two", "three"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			fn := Function{Name: "agg.inst", Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}, {Name: "pkgs"}}, Kwargs: true},
				Fn: func(_ context.Context, c *Call) (Ret, error) {
					var pk []string
					if l, ok := c.Args.Get("pkgs").([]any); ok {
						for _, p := range l {
							pk = append(pk, pyfmt.Str(p))
						}
					}
					s := c.Name
					if len(pk) > 0 {
						s += "+" + strings.Join(pk, ",")
					}
					mu.Lock()
					seen = append(seen, s)
					mu.Unlock()
					return Ret{Name: c.Name, Result: True, Changes: &payload.Map{}}, nil
				}}
			dir := writeTree(t, map[string]string{"t.sls": sls})
			h := newHarness(t, map[string]string{"base": dir}, fn)
			h.states.RegisterModAggregate("agg", func(low *payload.Map, chunks []*payload.Map, running *payload.Map) {
				var names []any
				for _, ch := range chunks {
					if ch.Str("state") == "agg" && !ch.Has("__agg__") && !running.Has(GenTag(ch)) {
						names = append(names, ch.Str("name"))
						ch.Set("__agg__", true)
					}
				}
				if len(names) > 0 {
					low.Set("pkgs", names)
				}
			})
			h.opts.Set("state_aggregate", tc.on)
			res := h.run(t, "state.sls", []any{"t"}, payload.NewMap())
			if res.Retcode != 0 {
				t.Fatalf("retcode %d: %s", res.Retcode, jsonText(res.Return))
			}
			mu.Lock()
			defer mu.Unlock()
			if strings.Join(seen, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("calls %v, want %v", seen, tc.want)
			}
		})
	}
}

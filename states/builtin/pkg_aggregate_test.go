package builtin

import (
	"encoding/json"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestPkgModAggregate checks which chunks pkg.mod_aggregate folds into
// the running one, as Salt's: same function and fromrepo, not yet run,
// not held, names (with versions) or pkgs, sources kept apart.
func TestPkgModAggregate(t *testing.T) {
	chunk := func(id string, kv ...any) *payload.Map {
		m := payload.NewMap("state", "pkg", "fun", "installed", "__id__", id, "name", id)
		for i := 0; i+1 < len(kv); i += 2 {
			m.Set(kv[i].(string), kv[i+1])
		}
		return m
	}
	cases := []struct {
		name    string
		low     *payload.Map
		others  []*payload.Map
		running []string
		want    string
	}{
		{"names and versions", chunk("vim"), []*payload.Map{chunk("git", "version", "1:2.39"), chunk("curl")}, nil,
			`{"pkgs":[{"git":"1:2.39"},"curl"]}`},
		{"pkgs lists", chunk("a", "pkgs", []any{"a1"}), []*payload.Map{chunk("b", "pkgs", []any{"b1", "b2"})}, nil, `{"pkgs":["a1","b1","b2"]}`},
		{"other function", chunk("a"), []*payload.Map{chunk("b", "fun", "removed")}, nil, `{}`},
		{"other repo", chunk("a"), []*payload.Map{chunk("b", "fromrepo", "backports")}, nil, `{}`},
		{"held", chunk("a"), []*payload.Map{chunk("b", "hold", true)}, nil, `{}`},
		{"already ran", chunk("a"), []*payload.Map{chunk("b")}, []string{"pkg_|-b_|-b_|-installed"}, `{}`},
		{"sources first", chunk("a"), []*payload.Map{chunk("s", "sources", []any{payload.NewMap("s", "/tmp/s.deb")}), chunk("b")}, nil,
			`{"sources":[{"s":"/tmp/s.deb"}]}`},
		{"not aggregable", chunk("a", "fun", "uptodate"), []*payload.Map{chunk("b", "fun", "uptodate")}, nil, `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.low.Set("__agg__", true)
			chunks := append([]*payload.Map{tc.low}, tc.others...)
			running := &payload.Map{}
			for _, r := range tc.running {
				running.Set(r, payload.NewMap("result", true))
			}
			PkgModAggregate(tc.low, chunks, running)
			got := &payload.Map{}
			for _, k := range []string{"pkgs", "sources"} {
				if v, ok := tc.low.Get(k); ok {
					got.Set(k, v)
				}
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Fatalf("got %s, want %s", b, tc.want)
			}
		})
	}
}

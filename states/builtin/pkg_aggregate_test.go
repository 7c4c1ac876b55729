package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/vectors"
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

// aggCases are the pkg.mod_aggregate cases checked against Salt: the
// first chunk is the low chunk being run.
func aggCases() []*payload.Map {
	pkg := func(id, fun string, kv ...any) *payload.Map {
		m := payload.NewMap("state", "pkg", "__id__", id, "name", id, "__sls__", "s", "__env__", "base", "fun", fun, "order", int64(10000))
		for i := 0; i+1 < len(kv); i += 2 {
			m.Set(kv[i].(string), kv[i+1])
		}
		return m
	}
	c := func(name string, running []any, chunks ...*payload.Map) *payload.Map {
		r := &payload.Map{}
		for _, t := range running {
			r.Set(t.(string), payload.NewMap("result", true))
		}
		return payload.NewMap("name", name, "chunks", chunksAny(chunks), "running", r)
	}
	return []*payload.Map{
		c("names", nil, pkg("vim", "installed"), pkg("git", "installed", "version", "1:2.39"), pkg("curl", "installed")),
		c("pkgs lists", nil, pkg("a", "installed", "pkgs", []any{"a1"}), pkg("b", "installed", "pkgs", []any{"b1", payload.NewMap("b2", "1.0")})),
		c("low with pkgs", nil, pkg("a", "latest", "pkgs", []any{"a1"}), pkg("b", "latest"), pkg("c", "installed")),
		c("other function", nil, pkg("a", "installed"), pkg("b", "removed")),
		c("removed", nil, pkg("a", "removed"), pkg("b", "removed"), pkg("c", "purged")),
		c("other repo", nil, pkg("a", "installed"), pkg("b", "installed", "fromrepo", "backports"), pkg("c", "installed", "fromrepo", nil)),
		c("same repo", nil, pkg("a", "installed", "fromrepo", "backports"), pkg("b", "installed", "fromrepo", "backports"), pkg("c", "installed")),
		c("held", nil, pkg("a", "installed"), pkg("b", "installed", "hold", true), pkg("c", "installed", "hold", false)),
		c("already ran", []any{"pkg_|-b_|-b_|-installed"}, pkg("a", "installed"), pkg("b", "installed"), pkg("c", "installed")),
		c("already aggregated", nil, pkg("a", "installed"), pkg("b", "installed", "__agg__", true)),
		c("sources first", nil, pkg("a", "installed"), pkg("s", "installed", "sources", []any{payload.NewMap("s", "/tmp/s.deb")}), pkg("b", "installed")),
		c("low sources", nil, pkg("a", "installed", "sources", []any{payload.NewMap("a", "/tmp/a.deb")}), pkg("b", "installed", "sources", []any{payload.NewMap("b", "/tmp/b.deb")}), pkg("c", "installed")),
		c("not aggregable", nil, pkg("a", "uptodate"), pkg("b", "uptodate")),
		c("other states", nil, pkg("a", "installed"), payload.NewMap("state", "service", "__id__", "x", "name", "x", "fun", "installed")),
		c("version none", nil, pkg("a", "installed"), pkg("b", "installed", "version", nil)),
	}
}

// TestPkgModAggregateGolden runs pkg.mod_aggregate on aggCases and
// compares the low chunk and the other chunks afterwards with Salt 3006's
// (testdata/golden/pkg_aggregate.json; -update-golden with GSALT_SALT_SRC
// regenerates it through testdata/pkg_aggregate_golden.py).
func TestPkgModAggregateGolden(t *testing.T) {
	golden := filepath.Join("testdata", "golden", "pkg_aggregate.json")
	if updateGoldenSet() {
		src := saltpeer.Require(t)
		code, err := os.ReadFile(filepath.Join("testdata", "pkg_aggregate_golden.py"))
		if err != nil {
			t.Fatal(err)
		}
		conf := filepath.Join(t.TempDir(), "minion")
		if err := os.WriteFile(conf, []byte("id: golden\nfile_client: local\nroot_dir: "+filepath.Dir(conf)+"\nlog_level: error\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		req, err := json.Marshal(payload.NewMap("conf", conf, "cases", aggCases()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := saltpeer.PythonCommand(ctx, src, string(code))
		cmd.Stdin = bytes.NewReader(req)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("salt: %v\n%s", err, stderr.String())
		}
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (regenerate with -update-golden and GSALT_SALT_SRC)", err)
	}
	raw, err := vectors.Convert(b)
	if err != nil {
		t.Fatal(err)
	}
	want := raw.([]any)
	cases := aggCases()
	if len(want) != len(cases) {
		t.Fatalf("golden has %d cases, test %d; regenerate", len(want), len(cases))
	}
	for i, tc := range cases {
		w := want[i].(*payload.Map)
		t.Run(tc.Str("name"), func(t *testing.T) {
			if w.Str("name") != tc.Str("name") {
				t.Fatalf("golden case %q, test case %q; regenerate", w.Str("name"), tc.Str("name"))
			}
			var chunks []*payload.Map
			for _, ch := range tc.List("chunks") {
				chunks = append(chunks, ch.(*payload.Map))
			}
			low := chunks[0]
			low.Set("__agg__", true)
			PkgModAggregate(low, chunks, tc.Map("running"))
			// Through JSON, as the golden values are.
			got, err := vectors.Convert(mustJSON(t, payload.NewMap("low", low, "chunks", chunksAny(chunks[1:]))))
			if err != nil {
				t.Fatal(err)
			}
			exp := payload.NewMap("low", w.Map("low"), "chunks", w.List("chunks"))
			if d := vectors.Equal(got, exp); d != "" {
				t.Fatalf("differs from Salt: %s\ngot  %s\nwant %s", d, mustJSON(t, got), mustJSON(t, exp))
			}
		})
	}
}

func chunksAny(l []*payload.Map) []any {
	out := make([]any, len(l))
	for i, m := range l {
		out[i] = m
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

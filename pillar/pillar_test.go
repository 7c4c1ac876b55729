package pillar_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/wire/payload"
)

func m(kv ...any) *payload.Map { return payload.NewMap(kv...) }

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMergeStrategies(t *testing.T) {
	a := func() *payload.Map {
		return m("k", m("x", int64(1), "l", []any{int64(1), int64(2)}), "only_a", true)
	}
	b := func() *payload.Map {
		return m("k", m("y", int64(2), "l", []any{int64(2), int64(3)}), "only_b", true)
	}
	cases := []struct {
		strategy, renderer string
		lists              bool
		want               string
	}{
		{"smart", "jinja|yaml", false, `{"k":{"x":1,"l":[2,3],"y":2},"only_a":true,"only_b":true}`},
		{"recurse", "yaml", true, `{"k":{"x":1,"l":[1,2,3],"y":2},"only_a":true,"only_b":true}`},
		{"none", "yaml", true, `{"k":{"x":1,"l":[2,3],"y":2},"only_a":true,"only_b":true}`},
		{"overwrite", "yaml", false, `{"k":{"y":2,"l":[2,3]},"only_a":true,"only_b":true}`},
		{"aggregate", "yaml", false, `{"k":{"y":2,"l":[2,3]},"only_a":true,"only_b":true}`},
		{"smart", "jinja|yamlex", false, `{"k":{"y":2,"l":[2,3]},"only_a":true,"only_b":true}`},
		{"list", "yaml", false, `{"k":[{"x":1,"l":[1,2]},{"y":2,"l":[2,3]}],"only_a":true}`},
		{"bogus", "yaml", true, `{"k":{"x":1,"l":[2,3],"y":2},"only_a":true,"only_b":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.strategy+"/"+tc.renderer, func(t *testing.T) {
			orig := a()
			got := pillar.Merge(orig, b(), tc.strategy, tc.renderer, tc.lists)
			if s := js(t, got); s != tc.want {
				t.Fatalf("got  %s\nwant %s", s, tc.want)
			}
			if tc.strategy != "overwrite" && js(t, orig) != js(t, a()) {
				t.Fatalf("%s changed its first argument: %s", tc.strategy, js(t, orig))
			}
		})
	}
	// overwrite replaces a's top-level values in place, as Salt does.
	orig := a()
	pillar.Merge(orig, b(), "overwrite", "yaml", false)
	if got := js(t, orig); got != `{"k":{"y":2,"l":[2,3]},"only_a":true}` {
		t.Fatalf("overwrite left a = %s", got)
	}
	// pillar_merge_lists compares like Python: 1 == 1.0 == True.
	got := pillar.Merge(m("l", []any{int64(1)}), m("l", []any{1.0, true, "1", int64(1)}), "recurse", "yaml", true)
	if s := js(t, got); s != `{"l":[1,"1"]}` {
		t.Fatalf("merge lists: %s", s)
	}
}

// writeTree creates files (path -> content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestPillarCache(t *testing.T) {
	for _, backend := range []string{pillar.CacheDisk, pillar.CacheMemory} {
		t.Run(backend, func(t *testing.T) {
			roots := writeTree(t, map[string]string{
				"top.sls":  "base:\n  '*':\n    - data\n",
				"data.sls": "v: 1\n",
			})
			cache := t.TempDir()
			clk := &clock{time.Unix(1_700_000_000, 0)}
			comp := pillar.New(pillar.Config{
				Roots: map[string][]string{"base": {roots}}, Cache: true, CacheTTL: time.Hour,
				CacheBackend: backend, CacheDir: cache,
			}, pillar.Options{Logger: quiet, Now: clk.now})
			ctx := context.Background()
			get := func(req pillar.Request) string {
				t.Helper()
				p, err := comp.Compile(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				return js(t, p)
			}
			req := pillar.Request{ID: "m1", Grains: m("id", "m1")}
			if got := get(req); got != `{"v":1}` {
				t.Fatalf("first compile %s", got)
			}
			if err := os.WriteFile(filepath.Join(roots, "data.sls"), []byte("v: 2\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A hit ignores grains and overrides, as Salt's cache does.
			if got := get(pillar.Request{ID: "m1", Override: m("o", 1)}); got != `{"v":1}` {
				t.Fatalf("cached compile %s", got)
			}
			// Another pillarenv is another entry.
			if got := get(pillar.Request{ID: "m1", Pillarenv: "base"}); got != `{"v":2}` {
				t.Fatalf("pillarenv base %s", got)
			}
			// Runners compile without the cache.
			if got := get(pillar.Request{ID: "m1", NoCache: true}); got != `{"v":2}` {
				t.Fatalf("no cache %s", got)
			}
			os.WriteFile(filepath.Join(roots, "data.sls"), []byte("v: 3\n"), 0o644)
			if got := get(req); got != `{"v":1}` {
				t.Fatalf("still cached %s", got)
			}
			// clean_cache (saltutil.refresh_pillar) compiles afresh.
			if got := get(pillar.Request{ID: "m1", CleanCache: true}); got != `{"v":3}` {
				t.Fatalf("clean cache %s", got)
			}
			os.WriteFile(filepath.Join(roots, "data.sls"), []byte("v: 4\n"), 0o644)
			clk.t = clk.t.Add(time.Hour) // exactly the TTL: still valid
			if got := get(req); got != `{"v":3}` {
				t.Fatalf("at ttl %s", got)
			}
			clk.t = clk.t.Add(time.Second)
			if got := get(req); got != `{"v":4}` {
				t.Fatalf("after ttl %s", got)
			}
			if p, ok := comp.CachedPillar("m1", ""); !ok || js(t, p) != `{"v":4}` {
				t.Fatalf("CachedPillar %v %v", p, ok)
			}
			if err := comp.ClearCache("m1"); err != nil {
				t.Fatal(err)
			}
			if _, ok := comp.CachedPillar("m1", ""); ok {
				t.Fatal("ClearCache kept the pillar")
			}
			_, err := os.Stat(filepath.Join(cache, "pillar_cache", "m1"))
			if backend == pillar.CacheDisk && err != nil {
				t.Fatalf("disk cache file: %v", err)
			}
			if backend == pillar.CacheMemory && err == nil {
				t.Fatal("memory back-end wrote a file")
			}
		})
	}
	comp := pillar.New(pillar.Config{Roots: map[string][]string{}}, pillar.Options{Logger: quiet})
	if err := comp.ClearCache("x"); !errors.Is(err, pillar.ErrNoCache) {
		t.Fatalf("ClearCache without pillar_cache: %v", err)
	}
}

// TestPillarCacheSaltReads checks that Salt's CacheDisk reads gsalt's
// pillar cache file (and gsalt reads Salt's).
func TestPillarCacheSaltReads(t *testing.T) {
	src := saltpeer.Require(t)
	roots := writeTree(t, map[string]string{"top.sls": "base:\n  '*': [data]\n", "data.sls": "v: {a: [1, x]}\n"})
	cache := t.TempDir()
	cfg := pillar.Config{Roots: map[string][]string{"base": {roots}}, Cache: true, CacheTTL: time.Hour, CacheDir: cache}
	comp := pillar.New(cfg, pillar.Options{Logger: quiet})
	if _, err := comp.Compile(context.Background(), pillar.Request{ID: "m1"}); err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys, time
import salt.utils.cache
c = salt.utils.cache.CacheDisk(3600, sys.argv[1])
print(json.dumps(c._dict["m1"][None]))
c2 = salt.utils.cache.CacheDisk(3600, sys.argv[2])
c2["m2"] = {"dev": {"from": "salt"}}
`
	path := filepath.Join(cache, "pillar_cache", "m1")
	path2 := filepath.Join(cache, "pillar_cache", "m2")
	cmd := exec.Command(saltpeer.Python(), "-W", "ignore", "-c", script, path, path2)
	cmd.Env = saltpeer.Env(src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != `{"v": {"a": [1, "x"]}}` {
		t.Fatalf("Salt read %s", got)
	}
	if p, ok := comp.CachedPillar("m2", "dev"); !ok || js(t, p) != `{"from":"salt"}` {
		t.Fatalf("gsalt read Salt's file: %v %v", p, ok)
	}
}

func TestCompileOptions(t *testing.T) {
	roots := writeTree(t, map[string]string{
		"top.sls":    "base:\n  '*':\n    - ok\n    - broken\n    - secret\n",
		"ok.sls":     "#!yaml\nok: 1\n",
		"broken.sls": "a: [1\n",
		"secret.sls": "secret: {pw: x}\n",
	})
	base := pillar.Config{Roots: map[string][]string{"base": {roots}}, SafeRenderError: true}
	cases := []struct {
		name   string
		mutate func(*pillar.Config)
		req    pillar.Request
		check  func(t *testing.T, p *payload.Map, s string)
	}{
		{"safe render error", nil, pillar.Request{ID: "m"}, func(t *testing.T, p *payload.Map, s string) {
			if !strings.Contains(s, `"Rendering SLS 'broken' failed. Please see master log for details."`) {
				t.Fatal(s)
			}
		}},
		{"unsafe render error", func(c *pillar.Config) { c.SafeRenderError = false }, pillar.Request{ID: "m"},
			func(t *testing.T, p *payload.Map, s string) {
				errs := p.List("_errors")
				if len(errs) != 1 || !strings.HasPrefix(errs[0].(string), "Rendering SLS 'broken' failed, render error:\n") ||
					len(errs[0].(string)) < 50 {
					t.Fatal(s)
				}
			}},
		{"renderer blacklist skips yaml", func(c *pillar.Config) { c.RendererBlacklist = []string{"yaml"} }, pillar.Request{ID: "m"},
			func(t *testing.T, p *payload.Map, s string) {
				// jinja alone renders the top file to text, which is no
				// dictionary: Salt's merge_tops raises on it.
			}},
		{"pillar_opts", func(c *pillar.Config) { c.PillarOpts = true; c.Opts = m("interface", "0.0.0.0", "grains", m()) },
			pillar.Request{ID: "m", Grains: m("os", "x")}, func(t *testing.T, p *payload.Map, s string) {
				mo := p.Map("master")
				if mo == nil || mo.Str("interface") != "0.0.0.0" || mo.Str("id") != "m" || mo.Has("grains") || mo.Str("saltversion") == "" {
					t.Fatal(s)
				}
			}},
		{"decrypt_pillar", func(c *pillar.Config) { c.DecryptPillar = []any{"secret:pw", "absent"} }, pillar.Request{ID: "m"},
			func(t *testing.T, p *payload.Map, s string) {
				errs := p.List("_errors")
				if len(errs) != 2 || errs[1] != "Failed to decrypt pillar key 'secret:pw': Decryption renderer 'gpg' is not available" {
					t.Fatal(s)
				}
			}},
		{"override merged last", nil, pillar.Request{ID: "m", Override: m("ok", int64(5), "_errors", []any{})},
			func(t *testing.T, p *payload.Map, s string) {
				if s != `{"ok":5,"_errors":[],"secret":{"pw":"x"}}` { // override keys first, as Salt starts from them
					t.Fatal(s)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			if tc.mutate != nil {
				tc.mutate(&cfg)
			}
			comp := pillar.New(cfg, pillar.Options{Logger: quiet})
			p, err := comp.Compile(context.Background(), tc.req)
			if tc.name == "renderer blacklist skips yaml" {
				if !errors.Is(err, pillar.ErrTop) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, p, js(t, p))
		})
	}
	comp := pillar.New(base, pillar.Options{Logger: quiet})
	if _, err := comp.Compile(context.Background(), pillar.Request{}); !errors.Is(err, pillar.ErrRequest) {
		t.Fatalf("no id: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := comp.Compile(ctx, pillar.Request{ID: "m"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestMalformedIncludes(t *testing.T) {
	for name, inc := range map[string]string{
		"number":    "include:\n  - 5\n",
		"empty map": "include:\n  - {}\n",
		"no opts":   "include:\n  - other:\n",
		"bad key":   "include:\n  - other: {key: 5}\n",
	} {
		t.Run(name, func(t *testing.T) {
			roots := writeTree(t, map[string]string{
				"top.sls": "base:\n  '*': [x]\n", "x.sls": inc + "x: 1\n", "other.sls": "o: 1\n",
			})
			comp := pillar.New(pillar.Config{Roots: map[string][]string{"base": {roots}}}, pillar.Options{Logger: quiet})
			if _, err := comp.Compile(context.Background(), pillar.Request{ID: "m"}); !errors.Is(err, pillar.ErrInclude) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestConfigFromOpts(t *testing.T) {
	get := pillar.GetterFunc(func(k string) (any, bool) {
		v, ok := map[string]any{
			"pillar_roots":     map[string]any{"dev": []any{"/d"}, "base": []any{"/b1", "/b2"}},
			"pillar_cache":     true,
			"pillar_cache_ttl": 60,
			"cachedir":         "/c",
			"nodegroups":       map[string]any{"g": "web*"},
			"renderer":         "yaml",
		}[k]
		return v, ok
	})
	c := pillar.ConfigFromOpts(get)
	if !c.Cache || c.CacheTTL != time.Minute || c.CacheBackend != "disk" || c.CacheDir != "/c" || c.Renderer != "yaml" ||
		c.StateTop != "top.sls" || !c.SafeRenderError || len(c.Roots["base"]) != 2 || c.Nodegroups["g"] != "web*" ||
		strings.Join(c.EnvOrder, ",") != "base,dev" {
		t.Fatalf("%+v", c)
	}
}

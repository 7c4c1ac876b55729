package runners_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/wire/payload"
)

// pillarEnv is a runners.Env with options only (the pillar runners use
// nothing else).
type pillarEnv struct {
	runners.Env
	opts map[string]any
}

func (e pillarEnv) Opt(k string) (any, bool) { v, ok := e.opts[k]; return v, ok }

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPillarRunners(t *testing.T) {
	dir := t.TempDir()
	roots, cache := filepath.Join(dir, "pillar"), filepath.Join(dir, "cache")
	writeFiles(t, roots, map[string]string{
		"top.sls": "base:\n  '*':\n    - all\n  'os:Debian':\n    - match: grain\n    - deb\n  'fqdn:ghost':\n    - match: grain\n" +
			"    - ghost\n  'color:red':\n    - match: grain\n    - red\ndev:\n  '*':\n    - devdata\n",
		"all.sls":     "all: {{ grains['id'] if 'id' in grains else 'none' }}\n",
		"deb.sls":     "deb: true\n",
		"ghost.sls":   "ghost: true\n",
		"red.sls":     "red: true\n",
		"devdata.sls": "dev: true\n",
	})
	writeFiles(t, filepath.Join(dir, "dev"), map[string]string{"devdata.sls": "dev: true\n"})
	data, err := payload.MarshalBin(payload.NewMap("grains", payload.NewMap("id", "web1", "os", "Debian"), "pillar", payload.NewMap()))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Join(cache, "minions", "web1"), map[string]string{"data.p": string(data)})
	opts := map[string]any{
		"cachedir":     cache,
		"pillar_roots": map[string]any{"base": []any{roots}, "dev": []any{filepath.Join(dir, "dev")}},
	}
	reg := runners.NewRegistry()
	for _, rn := range runners.PillarRunners() {
		if err := reg.Register(rn); err != nil {
			t.Fatal(err)
		}
	}
	run := func(env runners.Env, fun string, args []any, kw *payload.Map) (runners.Result, []*payload.Map) {
		var progress []*payload.Map
		c := &runners.Call{Env: env, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Progress: func(d *payload.Map) { progress = append(progress, d) }}
		return reg.Run(context.Background(), fun, args, kw, c), progress
	}
	env := pillarEnv{opts: opts}
	cases := []struct {
		name string
		env  runners.Env
		fun  string
		args []any
		kw   *payload.Map
		want string
	}{
		{"cached grains", env, "pillar.show_pillar", []any{"web1"}, nil,
			`{"all":"web1","deb":true,"dev":true}`},
		{"kwargs set grains and pillarenv", env, "pillar.show_pillar", []any{"web1"}, payload.NewMap("color", "red", "pillarenv", "base"),
			`{"all":"web1","deb":true,"red":true}`},
		{"unknown minion gets fqdn", env, "pillar.show_pillar", []any{"ghost"}, payload.NewMap("pillarenv", "base"),
			`{"all":"none","ghost":true}`},
		{"default minion is *", env, "pillar.show_pillar", nil, payload.NewMap("pillarenv", "base"), `{"all":"none"}`},
		{"no data cache", pillarEnv{opts: map[string]any{"cachedir": cache, "pillar_roots": opts["pillar_roots"], "minion_data_cache": false}},
			"pillar.show_pillar", []any{"web1"}, payload.NewMap("pillarenv", "base"), `{"all":"none"}`},
		{"show_top", env, "pillar.show_top", []any{"web1"}, nil,
			`{"base":{"*":["all"],"os:Debian":[{"match":"grain"},"deb"],"fqdn:ghost":[{"match":"grain"},"ghost"],"color:red":[{"match":"grain"},"red"]},"dev":{"*":["devdata"]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := run(tc.env, tc.fun, tc.args, tc.kw)
			if got := jsonText(t, res.Return); got != tc.want || !res.Success {
				t.Fatalf("got  %s (success %v)\nwant %s", got, res.Success, tc.want)
			}
		})
	}

	// Top errors are returned (and sent as a progress event).
	writeFiles(t, roots, map[string]string{"top.sls": "base: [\n"})
	res, progress := run(env, "pillar.show_top", []any{"web1"}, nil)
	l, ok := res.Return.([]any)
	if !ok || len(l) != 1 || len(progress) != 1 || progress[0].Str("outputter") != "nested" {
		t.Fatalf("show_top errors: %s %v", jsonText(t, res.Return), progress)
	}
	// Bad arguments read like Salt's.
	res, _ = run(env, "pillar.show_top", []any{"a", "b", "c"}, nil)
	if s, _ := res.Return.(string); s == "" || !res.Success {
		t.Fatalf("bad args: %v", res.Return)
	}
}

package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// pushChannel is the master connection of the cp.push golden: it records
// the _file_recv loads and answers from a list (True when it runs out).
type pushChannel struct {
	mu      sync.Mutex
	loads   []*payload.Map
	answers []any
}

func (p *pushChannel) SendMaster(_ context.Context, load *payload.Map) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loads = append(p.loads, load.Clone())
	if len(p.answers) == 0 {
		return true, nil
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return a, nil
}

// cpPushTree builds the scenario tree under root.
func cpPushTree(t *testing.T, root string, tree *payload.Map) {
	t.Helper()
	for _, d := range tree.List("dirs") {
		if err := os.MkdirAll(filepath.Join(root, d.(string)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, it := range tree.Map("files").Items() {
		p := filepath.Join(root, payload.KeyString(it.Key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(it.Value.(string)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, it := range tree.Map("links").Items() {
		if err := os.Symlink(it.Value.(string), filepath.Join(root, payload.KeyString(it.Key))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCpPushGolden replays testdata/cp_push/golden.json: the _file_recv
// loads Salt 3006's cp.push and cp.push_dir send (chunks of
// file_buffer_size 4, the path list, size and loc) and their returns for
// the master's answers, on the same tree.
func TestCpPushGolden(t *testing.T) {
	dir := "testdata/cp_push"
	saltpeer.Golden(t, filepath.Join(dir, "golden.json"), func(src string) []byte {
		return saltpeer.RunScript(t, src, filepath.Join(dir, "gen.py"), json.RawMessage(testutil.ReadFile(t, filepath.Join(dir, "scenarios.json"))))
	})
	gv, err := goldenLoad(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	sv, err := goldenLoad(filepath.Join(dir, "scenarios.json"))
	if err != nil {
		t.Fatal(err)
	}
	tree := sv.(*payload.Map).Map("tree")
	r := goldenRegistry(t)
	for i, sv := range gv.([]any) {
		step := sv.(*payload.Map)
		root, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cpPushTree(t, root, tree)
		ch := &pushChannel{answers: payload.DeepClone(step.List("answers")).([]any)}
		env := &modules.Env{ID: "golden", Registry: r, Opts: payload.NewMap("file_buffer_size", int64(4)),
			Services: map[string]any{"master": ch}}
		sub := func(v any) any {
			if s, ok := v.(string); ok {
				return strings.ReplaceAll(s, "$DIR", root)
			}
			return v
		}
		var args []any
		for _, a := range step.List("args") {
			args = append(args, sub(a))
		}
		if kw := step.Map("kwargs"); kw.Len() > 0 {
			k := kw.Clone()
			k.Set("__kwarg__", true)
			args = append(args, k)
		}
		res := r.Execute(context.Background(), modules.Binder{}, env, step.Str("fun"), args, nil)
		name := step.Str("fun") + " " + pyJSON(step.List("args")) + " " + pyJSON(step.Map("kwargs"))
		if got, want := pyJSON(res.Return), pyJSON(func() any { v, _ := step.Get("return"); return v }()); got != want {
			t.Errorf("%d %s: returned %s, want %s", i, name, got, want)
		}
		var sent []any
		for _, l := range ch.loads {
			l.Delete("tok")
			parts := make([]string, 0)
			for _, p := range l.List("path") {
				parts = append(parts, p.(string))
			}
			l.Set("path", strings.ReplaceAll(strings.Join(parts, "/"), strings.TrimLeft(root, "/"), "$DIR"))
			l.Set("data", string(l.Bytes("data")))
			sent = append(sent, l)
		}
		sort.SliceStable(sent, func(a, b int) bool {
			la, lb := sent[a].(*payload.Map), sent[b].(*payload.Map)
			if la.Str("path") != lb.Str("path") {
				return la.Str("path") < lb.Str("path")
			}
			x, _ := la.Int("loc")
			y, _ := lb.Int("loc")
			return x < y
		})
		if sent == nil {
			sent = []any{}
		}
		if got, want := pyJSON(sent), pyJSON(step.List("sent")); got != want {
			t.Errorf("%d %s: sent\n got %s\nwant %s", i, name, got, want)
		}
		left := []any{}
		for _, it := range tree.Map("files").Items() {
			if _, err := os.Lstat(filepath.Join(root, payload.KeyString(it.Key))); err == nil {
				left = append(left, payload.KeyString(it.Key))
			}
		}
		sort.Slice(left, func(a, b int) bool { return left[a].(string) < left[b].(string) })
		if got, want := pyJSON(left), pyJSON(step.List("left")); got != want {
			t.Errorf("%d %s: files left %s, want %s", i, name, got, want)
		}
	}
}

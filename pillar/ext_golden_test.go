package pillar_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileTreeRenderError prefixes file_tree template errors, whose text is
// Python's exception message.
const fileTreeRenderError = "Failed to load ext_pillar file_tree: "

type extSpec struct {
	Minions    map[string]json.RawMessage `json:"minions"`
	Accepted   []string                   `json:"accepted"`
	Nodegroups map[string]any             `json:"nodegroups"`
	Cases      []struct {
		Name      string          `json:"name"`
		Minion    string          `json:"minion"`
		ExtPillar any             `json:"ext_pillar"`
		Ext       any             `json:"ext"`
		Opts      map[string]any  `json:"opts"`
		Roots     bool            `json:"roots"`
		Pillarenv string          `json:"pillarenv"`
		Saltenv   string          `json:"saltenv"`
		Override  json.RawMessage `json:"override"`
		Unordered bool            `json:"unordered"`
		Exception bool            `json:"exception"`
	} `json:"cases"`
}

// TestExtPillarGolden compiles the ext_pillar table of
// testdata/ext_cases.json (commands printing JSON/YAML, file_tree trees
// with nodegroups, binary files and newline options, CSV files, merge
// strategies, ext_pillar_first, exclusions, on-demand ext and the
// failures) and compares the pillars with what Salt 3006's Pillar class
// and its own ext_pillar modules produced. file_tree cases compare
// without key order (directory order differs between checkouts).
func TestExtPillarGolden(t *testing.T) {
	extGolden(t, "ext_cases.json", "ext_golden.json", nil)
}

// extGolden runs the ext_pillar cases of testdata/cases against
// testdata/golden (regenerated with Salt under -update); vars are
// @NAME@ placeholders of the cases besides @DIR@, passed to the
// generator as GSALT_EXT_NAME environment variables.
func extGolden(t *testing.T, cases, goldenFile string, vars map[string]string) {
	if testutil.Update() {
		src := saltpeer.Require(t)
		dir, _ := filepath.Abs("testdata")
		cmd := exec.Command(saltpeer.Python(), "-W", "ignore", filepath.Join(dir, "gen_extpillar.py"), dir, cases, goldenFile)
		cmd.Env = saltpeer.Env(src)
		for k, v := range vars {
			cmd.Env = append(cmd.Env, "GSALT_EXT_"+k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen_extpillar.py: %v\n%s", err, out)
		}
	}
	var spec extSpec
	readJSON(t, filepath.Join("testdata", cases), &spec)
	var golden map[string]map[string]json.RawMessage
	readJSON(t, filepath.Join("testdata", goldenFile), &golden)
	subst := func(v any, dir string) any {
		v = substDir(v, dir)
		for k, val := range vars {
			v = substVar(v, "@"+k+"@", val)
		}
		return v
	}
	extdir, _ := filepath.Abs("testdata/ext")
	pki := t.TempDir()
	if err := os.MkdirAll(filepath.Join(pki, "minions"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range spec.Accepted {
		if err := os.WriteFile(filepath.Join(pki, "minions", m), []byte("KEY"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range spec.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			exp, ok := golden[tc.Name]
			if !ok {
				t.Fatalf("no golden result for %s (run with -update)", tc.Name)
			}
			root := extdir
			if tc.Roots {
				root = filepath.Join(extdir, "roots")
			}
			opts := map[string]any{
				"pillar_roots": map[string]any{"base": []any{root}},
				"nodegroups":   spec.Nodegroups,
			}
			cfg := loadMaster(t, opts)
			// Set after loading, like the generator: the loader would
			// put root_dir in front of pki_dir and refuses a
			// non-list ext_pillar.
			cfg.Opts.Set("pki_dir", pki)
			cfg.Opts.Set("ext_pillar", subst(tc.ExtPillar, extdir))
			for k, v := range tc.Opts {
				cfg.Opts.Set(k, payload.FromGo(subst(v, extdir)))
			}
			comp := pillar.New(pillar.ConfigFromOpts(cfg.Opts), pillar.Options{Logger: quiet, Caller: testCaller(t, cfg.Opts)})
			grains := decodeMap(t, spec.Minions[tc.Minion])
			req := pillar.Request{ID: grains.Str("id"), Grains: grains, Pillarenv: tc.Pillarenv, Saltenv: tc.Saltenv,
				Override: decodeMap(t, tc.Override), Ext: payload.FromGo(substDir(tc.Ext, extdir))}
			got, err := comp.Compile(context.Background(), req)
			if _, isErr := exp["exception"]; isErr {
				if err == nil {
					t.Fatalf("Salt raised %s; Compile gave %v", exp["exception"], got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			view := goldenView(got, extdir)
			for k, val := range vars {
				if strings.HasPrefix(val, "/") { // a path: back to its placeholder
					view = substVar(view, val, "@"+k+"@")
				}
			}
			if tc.Unordered {
				compareUnordered(t, exp["pillar"], view)
				return
			}
			compareJSON(t, "pillar", exp["pillar"], view)
		})
	}
}

// substDir puts the absolute testdata/ext path in for @DIR@.
func substDir(v any, dir string) any { return substVar(v, "@DIR@", dir) }

// substVar replaces the placeholder name with val in every string of v,
// keys included.
func substVar(v any, name, val string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, name, val)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substVar(e, name, val)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[strings.ReplaceAll(k, name, val)] = substVar(e, name, val)
		}
		return out
	case *payload.Map:
		out := payload.NewMap()
		for _, it := range x.Items() {
			k := it.Key
			if ks, ok := k.(string); ok {
				k = strings.ReplaceAll(ks, name, val)
			}
			out.SetKey(k, substVar(it.Value, name, val))
		}
		return out
	}
	return v
}

// goldenView is the generator's plain(): bytes as {"__bytes__": base64},
// the testdata path as @DIR@, keys as text.
func goldenView(v any, dir string) any {
	switch x := v.(type) {
	case []byte:
		return payload.NewMap("__bytes__", base64.StdEncoding.EncodeToString(x))
	case string:
		return strings.ReplaceAll(x, dir, "@DIR@")
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = goldenView(e, dir)
		}
		return out
	case *payload.Map:
		out := payload.NewMap()
		for _, it := range x.Items() {
			k := "null"
			if it.Key != nil {
				k = payload.KeyString(it.Key)
			}
			out.Set(strings.ReplaceAll(k, dir, "@DIR@"), goldenView(it.Value, dir))
		}
		return out
	}
	return v
}

func compareUnordered(t *testing.T, want json.RawMessage, got any) {
	t.Helper()
	gb, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(b []byte) string {
		c, err := canonJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal([]byte(c), &v); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(v) // map keys sorted
		return string(out)
	}
	if w, g := norm(want), norm(gb); w != g {
		t.Errorf("pillar differs from Salt's (key order ignored)\n got: %s\nwant: %s", g, w)
	}
}

package pillar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// quiet discards the compiler's logs (Salt logs every pillar error too).
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type goldenSpec struct {
	Configs map[string]struct {
		PillarRoots map[string][]string `json:"pillar_roots"`
		Nodegroups  map[string]any      `json:"nodegroups"`
	} `json:"configs"`
	Minions map[string]json.RawMessage `json:"minions"`
	Cases   []struct {
		Name      string          `json:"name"`
		Config    string          `json:"config"`
		Minion    string          `json:"minion"`
		Top       bool            `json:"top"`
		Opts      map[string]any  `json:"opts"`
		Saltenv   string          `json:"saltenv"`
		Pillarenv string          `json:"pillarenv"`
		Override  json.RawMessage `json:"override"`
	} `json:"cases"`
}

// regenerate runs testdata/gen_golden.py under real Salt. PYTHONHASHSEED
// is fixed because Salt renders the top files of its environments in set
// order; with it the order is stable (the cases only ever render one
// top file per compilation, so it does not change the results).
func regenerate(t *testing.T) {
	src := saltpeer.Require(t)
	dir, _ := filepath.Abs("testdata")
	cmd := exec.Command(saltpeer.Python(), "-W", "ignore", filepath.Join(dir, "gen_golden.py"), dir)
	cmd.Env = append(saltpeer.Env(src), "PYTHONHASHSEED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gen_golden.py: %v\n%s", err, out)
	}
}

// loadMaster writes a master config (JSON is YAML) and loads it the way
// gsalt-master does.
func loadMaster(t testing.TB, opts map[string]any) *config.Master {
	t.Helper()
	dir := t.TempDir()
	opts["root_dir"] = dir
	b, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "master"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadMaster(dir)
	if err != nil {
		t.Fatalf("LoadMaster: %v", err)
	}
	return cfg
}

func decodeMap(t *testing.T, raw json.RawMessage) *payload.Map {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	v, err := config.DecodeYAMLPayload(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*payload.Map)
}

// TestGolden compiles the testdata trees for fake minions and compares
// the pillars (key order included), the merged tops and the top errors
// with what Salt 3006's Pillar class produced.
func TestGolden(t *testing.T) {
	if testutil.Update() {
		regenerate(t)
	}
	var spec goldenSpec
	readJSON(t, "testdata/cases.json", &spec)
	var golden map[string]json.RawMessage
	readJSON(t, "testdata/golden.json", &golden)
	abs, _ := filepath.Abs("testdata")
	for _, tc := range spec.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			want, ok := golden[tc.Name]
			if !ok {
				t.Fatalf("no golden result for %s (run with -update)", tc.Name)
			}
			var exp map[string]json.RawMessage
			if err := json.Unmarshal(want, &exp); err != nil {
				t.Fatal(err)
			}
			cc := spec.Configs[tc.Config]
			roots := map[string]any{}
			for env, dirs := range cc.PillarRoots {
				var l []any
				for _, d := range dirs {
					l = append(l, filepath.Join(abs, d))
				}
				roots[env] = l
			}
			cfg := loadMaster(t, map[string]any{"pillar_roots": roots, "nodegroups": cc.Nodegroups})
			for k, v := range tc.Opts { // like the generator's opts.update
				cfg.Opts.Set(k, v)
			}
			comp := pillar.New(pillar.ConfigFromOpts(cfg.Opts), pillar.Options{Logger: quiet, Caller: testCaller(t, cfg.Opts)})
			grains := decodeMap(t, spec.Minions[tc.Minion])
			req := pillar.Request{ID: grains.Str("id"), Grains: grains, Saltenv: tc.Saltenv,
				Pillarenv: tc.Pillarenv, Override: decodeMap(t, tc.Override)}
			if _, isErr := exp["exception"]; isErr {
				if _, err := comp.Compile(context.Background(), req); !errors.Is(err, pillar.ErrMatcher) {
					t.Fatalf("Salt raised %s; Compile error = %v", exp["exception"], err)
				}
				return
			}
			if tc.Top {
				top, errs, err := comp.Top(context.Background(), req)
				if err != nil {
					t.Fatalf("Top: %v", err)
				}
				compareJSON(t, "top", exp["top"], top)
				if errs == nil {
					errs = []string{}
				}
				compareJSON(t, "top errors", exp["top_errors"], errs)
			}
			got, err := comp.Compile(context.Background(), req)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			compareJSON(t, "pillar", exp["pillar"], got)
		})
	}
}

// testCaller runs execution functions for salt['mod.fun'] in templates,
// as Salt's master does with the minion's id and grains.
func testCaller(t *testing.T, opts modules.Options) func(string, *payload.Map) render.Caller {
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	return func(id string, grains *payload.Map) render.Caller {
		return callerFunc(func(ctx context.Context, fun string, args []any, kw *payload.Map) (any, error) {
			fn, ok := reg.Lookup(fun)
			if !ok {
				return nil, fmt.Errorf("%s is not available", fun)
			}
			bound, err := modules.Binder{}.Bind(fn, args, nil)
			if err != nil {
				return nil, err
			}
			env := &modules.Env{ID: id, Opts: opts, Grains: grains, Registry: reg}
			return fn.Fn(ctx, &modules.Call{Fun: fun, Env: env, Args: bound})
		})
	}
}

type callerFunc func(ctx context.Context, fun string, args []any, kw *payload.Map) (any, error)

func (f callerFunc) CallFunction(ctx context.Context, fun string, args []any, kw *payload.Map) (any, error) {
	return f(ctx, fun, args, kw)
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func compareJSON(t *testing.T, what string, want json.RawMessage, got any) {
	t.Helper()
	gb, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := canonJSON(want)
	if err != nil {
		t.Fatalf("golden %s: %v", what, err)
	}
	g, err := canonJSON(gb)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if w != g {
		t.Errorf("%s differs from Salt's\n got: %s\nwant: %s", what, g, w)
	}
}

// canonJSON re-encodes JSON keeping key order, with numbers normalised
// and render error texts (Python's exception messages, which gsalt's
// renderers do not reproduce) cut to their first line.
func canonJSON(b []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var sb strings.Builder
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				sb.WriteByte('{')
				for i := 0; dec.More(); i++ {
					if i > 0 {
						sb.WriteByte(',')
					}
					k, err := dec.Token()
					if err != nil {
						return err
					}
					sb.WriteString(strconv.Quote(k.(string)) + ":")
					if err := walk(); err != nil {
						return err
					}
				}
				sb.WriteByte('}')
			case '[':
				sb.WriteByte('[')
				for i := 0; dec.More(); i++ {
					if i > 0 {
						sb.WriteByte(',')
					}
					if err := walk(); err != nil {
						return err
					}
				}
				sb.WriteByte(']')
			}
			_, err := dec.Token() // closing delimiter
			return err
		case json.Number:
			f, err := v.Float64()
			if err != nil {
				return err
			}
			sb.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		case string:
			if strings.HasPrefix(v, "Rendering Primary Top file failed") || strings.HasPrefix(v, "Rendering Top file ") {
				v, _, _ = strings.Cut(v, "\n")
			}
			if strings.HasPrefix(v, fileTreeRenderError) {
				v = fileTreeRenderError // Python's YAML/Jinja exception text
			}
			sb.WriteString(strconv.Quote(v))
		case nil:
			sb.WriteString("null")
		default:
			sb.WriteString(fmt.Sprint(v))
		}
		return nil
	}
	if err := walk(); err != nil {
		return "", err
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", fmt.Errorf("trailing data")
	}
	return sb.String(), nil
}

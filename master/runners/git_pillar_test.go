package runners_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/pillar"
	"github.com/gsalt/gsalt/wire/payload"
)

// gitPillarScenario is one scenario of testdata/git_pillar_update_cases.json:
// master options and a list of steps, each a git_pillar.update call or
// a commit pushed to one of the repositories.
type gitPillarScenario struct {
	Name      string          `json:"name"`
	ExtPillar json.RawMessage `json:"ext_pillar"`
	Opts      map[string]any  `json:"opts"`
	Steps     []struct {
		Kwargs map[string]string `json:"kwargs"`
		Push   string            `json:"push"`
		// Branch is the branch Push commits to (master when empty).
		Branch string `json:"branch"`
		// Pillar compiles the pillar of this minion id, in Saltenv and
		// Pillarenv, from the remotes as the runner left them.
		Pillar    string `json:"pillar"`
		Saltenv   string `json:"saltenv"`
		Pillarenv string `json:"pillarenv"`
	} `json:"steps"`
}

// gitPillarRepos makes the git ext_pillar golden repositories (the
// pillar package's testdata/git/mkrepos.sh) in a new folder.
func gitPillarRepos(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("/bin/sh", filepath.Join("..", "..", "pillar", "testdata", "git", "mkrepos.sh"), dir).CombinedOutput(); err != nil {
		t.Fatalf("mkrepos.sh: %v\n%s", err, out)
	}
	return dir
}

// TestGitPillarUpdateGolden runs the git_pillar.update scenarios of
// testdata/git_pillar_update_cases.json (all remotes, one branch, one
// repo by URL or by name, commits pushed between the calls, a remote that
// cannot be fetched, nothing configured or matched) on local bare
// repositories and compares every return and error with what Salt 3006's
// runner (GitPython) gave in the same steps (testdata/git_pillar_update.json,
// written by testdata/git_pillar_update.py under -update with
// GSALT_SALT_SRC).
func TestGitPillarUpdateGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("TestGitPillarUpdateGolden: no git binary; skipping")
	}
	golden := filepath.Join("testdata", "git_pillar_update.json")
	if testutil.Update() {
		src := saltpeer.Require(t)
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(10*time.Minute))
		defer cancel()
		cmd := exec.CommandContext(ctx, saltpeer.Python(), filepath.Join("testdata", "git_pillar_update.py"), gitPillarRepos(t), golden)
		cmd.Env = saltpeer.Env(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git_pillar_update.py: %v\n%s", err, out)
		}
	}
	var scenarios []gitPillarScenario
	readJSON(t, filepath.Join("testdata", "git_pillar_update_cases.json"), &scenarios)
	var want []struct {
		Name  string            `json:"name"`
		Steps []json.RawMessage `json:"steps"`
	}
	readJSON(t, golden, &want)
	if len(want) != len(scenarios) {
		t.Fatalf("%s has %d scenarios, the cases %d: run with -update", golden, len(want), len(scenarios))
	}
	gitdir := gitPillarRepos(t)
	subst := func(s string) string { return strings.ReplaceAll(s, "@GITDIR@", gitdir) }
	for i, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			ext, err := vectors.Convert(json.RawMessage(subst(string(sc.ExtPillar))))
			if err != nil {
				t.Fatal(err)
			}
			opts := map[string]any{"ext_pillar": ext, "cachedir": t.TempDir()}
			for k, v := range sc.Opts {
				opts[k] = v
			}
			env := &fakeEnv{opts: opts}
			rn, ok := runners.Default().Lookup("git_pillar.update")
			if !ok {
				t.Fatal("git_pillar.update is not registered")
			}
			for j, st := range sc.Steps {
				var got map[string]any
				if st.Push != "" {
					argv := []string{filepath.Join("testdata", "git_pillar_push.sh"), gitdir, st.Push}
					if st.Branch != "" {
						argv = append(argv, st.Branch)
					}
					if out, err := exec.Command("/bin/sh", argv...).CombinedOutput(); err != nil {
						t.Fatalf("push: %v\n%s", err, out)
					}
					got = map[string]any{"push": st.Push}
				} else if st.Pillar != "" {
					comp := pillar.New(pillar.ConfigFromOpts(pillar.GetterFunc(env.Opt)), pillar.Options{Logger: slog.New(slog.DiscardHandler)})
					p, err := comp.Compile(context.Background(), pillar.Request{ID: st.Pillar, Grains: payload.NewMap("id", st.Pillar), Saltenv: st.Saltenv, Pillarenv: st.Pillarenv})
					if err != nil {
						got = map[string]any{"error": err.Error()}
					} else {
						got = map[string]any{"pillar": p}
					}
				} else {
					args := map[string]any{}
					for k, v := range st.Kwargs {
						args[k] = subst(v)
					}
					ret, err := rn.Fn(context.Background(), &runners.Call{Fun: rn.Name, Args: args, Env: env, Log: slog.New(slog.DiscardHandler)})
					if err != nil {
						got = map[string]any{"error": "SaltRunnerError: " + err.Error()}
					} else {
						m := map[string]any{}
						var order []string
						for _, it := range ret.(*payload.Map).Items() {
							k := strings.ReplaceAll(payload.KeyString(it.Key), gitdir, "@GITDIR@")
							m[k] = it.Value
							order = append(order, k)
						}
						got = map[string]any{"return": m}
						// the remotes come in Salt's order too
						if wv, err := vectors.Convert(want[i].Steps[j]); err == nil {
							if wm, ok := wv.(*payload.Map).Get("return"); ok {
								var worder []string
								for _, it := range wm.(*payload.Map).Items() {
									worder = append(worder, payload.KeyString(it.Key))
								}
								if !reflect.DeepEqual(order, worder) {
									t.Errorf("step %d: remotes in order %q, Salt %q", j, order, worder)
								}
							}
						}
					}
				}
				var w map[string]any
				if err := json.Unmarshal(want[i].Steps[j], &w); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(normJSON(t, got), w) {
					t.Errorf("step %d %+v: got %v, Salt %v", j, st, normJSON(t, got), w)
				}
			}
		})
	}
}

// normJSON is v through JSON (the golden file's types).
func normJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// readJSON decodes the JSON file path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

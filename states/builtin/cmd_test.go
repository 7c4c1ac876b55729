package builtin

// Golden tests for the cmd, test, event and module state modules: every
// scenario is one state in an SLS that real Salt 3006 applies
// (salt-call --local state.apply, once plainly and once with test=True);
// Salt's ret dicts, without start_time, duration, __run_num__, __id__,
// __sls__ and the pid of command changes, are kept in
// ../testdata/<module>/<scenario>.json. `go test -run Golden -update` with
// GSALT_SALT_SRC set regenerates them; without -update the Go state
// functions must return the same dicts.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	mbuiltin "github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// ctemScenario is one state run compared with Salt.
type ctemScenario struct {
	// ID is the state ID and the golden file's name; name defaults to it.
	ID string
	// Fun is the state function, "cmd.run".
	Fun string
	// Args are the state's arguments in order (payload values).
	Args *payload.Map
	// Test runs with test=True.
	Test bool
	// Watch makes the state watch a test.succeed_with_changes state, so
	// Salt runs its mod_watch; gsalt's Watch function is called.
	Watch bool
}

// ctemKV builds an ordered map from alternating keys and values.
func ctemKV(pairs ...any) *payload.Map { return payload.NewMap(pairs...) }

// ctemSrv is the salt:// root of the scenarios (scripts for cmd.script).
const ctemSrv = "../testdata/cmd/srv"

// ctemFiles serves salt:// URLs from a directory, as the minion's file
// client would.
type ctemFiles struct{ root string }

func (f ctemFiles) CacheFile(_ context.Context, src, _ string) (string, error) {
	rel, ok := strings.CutPrefix(src, "salt://")
	if !ok {
		return "", fmt.Errorf("not a salt:// URL: %s", src)
	}
	if i := strings.IndexByte(rel, '?'); i >= 0 {
		rel = rel[:i]
	}
	p, err := filepath.Abs(filepath.Join(f.root, filepath.FromSlash(rel)))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// ctemOpts is a minion configuration.
type ctemOpts map[string]any

func (o ctemOpts) Get(k string) (any, bool) { v, ok := o[k]; return v, ok }

// ctemRunning says every watched state changed.
type ctemRunning struct{ changed map[string]bool }

func (r ctemRunning) HasChanges(tag string) bool { return r.changed == nil || r.changed[tag] }

// ctemEnv returns a masterless minion environment with gsalt's execution
// modules registered; services may add to its Services.
func ctemEnv(t *testing.T, services map[string]any) *modules.Env {
	t.Helper()
	reg := modules.NewRegistry()
	if err := mbuiltin.Register(reg); err != nil {
		t.Fatalf("register execution modules: %v", err)
	}
	svc := map[string]any{"files": ctemFiles{root: ctemSrv}}
	for k, v := range services {
		svc[k] = v
	}
	return &modules.Env{
		ID:       "golden",
		Opts:     ctemOpts{"id": "golden", "file_client": "local", "saltenv": nil, "pillarenv": nil},
		Grains:   payload.NewMap("id", "golden", "shell", "/bin/sh", "os", "Debian"),
		Pillar:   payload.NewMap(),
		Registry: reg,
		Services: svc,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// ctemFunctions indexes this package's state functions by name.
func ctemFunctions() map[string]states.Function {
	out := map[string]states.Function{}
	for _, list := range [][]states.Function{cmdStates(), testStates(), eventStates(), moduleStates()} {
		for _, f := range list {
			out[f.Name] = f
		}
	}
	return out
}

// ctemLow is the low chunk Salt builds for a scenario.
func ctemLow(sc ctemScenario) *payload.Map {
	state, fun, _ := strings.Cut(sc.Fun, ".")
	low := payload.NewMap("state", state, "__id__", sc.ID)
	if sc.Args == nil {
		sc.Args = ctemKV()
	}
	if !sc.Args.Has("name") {
		low.Set("name", sc.ID)
	}
	for _, it := range sc.Args.Items() {
		low.SetKey(it.Key, it.Value)
	}
	low.Set("__sls__", "golden").Set("__env__", "base").Set("order", int64(10000)).Set("fun", fun)
	return low
}

// ctemCall runs a scenario through gsalt's state function.
func ctemCall(t *testing.T, env *modules.Env, sc ctemScenario) (states.Ret, *states.Call, error) {
	t.Helper()
	f, ok := ctemFunctions()[sc.Fun]
	if !ok {
		t.Fatalf("%s: no state function %s", sc.ID, sc.Fun)
	}
	low := ctemLow(sc)
	fn := f.Fn
	if sc.Watch {
		if f.Watch == nil {
			t.Fatalf("%s: %s has no mod_watch", sc.ID, sc.Fun)
		}
		fn = f.Watch
		low.Set("sfun", low.Str("fun"))
		low.Set("fun", "mod_watch")
		changer := payload.NewMap("state", "test", "__id__", sc.ID+"_changer", "name", sc.ID+"_changer",
			"__sls__", "golden", "__env__", "base", "order", int64(10000), "fun", "succeed_with_changes")
		low.Set("__reqs__", payload.NewMap("watch", []any{changer}))
	}
	args, err := modules.BindKeywords(f.Spec, low)
	if err != nil {
		t.Fatalf("%s: bind: %v", sc.ID, err)
	}
	state, fun, _ := strings.Cut(sc.Fun, ".")
	c := &states.Call{ID: sc.ID, Name: low.Str("name"), State: state, Fun: fun, Args: args, Low: low,
		Test: sc.Test, Saltenv: "base", SLS: "golden", Env: env, Render: render.Default(), Files: ctemFiles{root: ctemSrv}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ret, err := fn(ctx, c)
	return ret, c, err
}

// ctemRetJSON is a Ret as the generic JSON Salt prints.
func ctemRetJSON(t *testing.T, r states.Ret) map[string]any {
	t.Helper()
	changes := r.Changes
	if changes == nil {
		changes = payload.NewMap()
	}
	m := payload.NewMap("name", r.Name, "changes", changes, "result", r.Result.Value(), "comment", r.Comment)
	if r.Warnings != nil {
		w := make([]any, len(r.Warnings))
		for i, s := range r.Warnings {
			w[i] = s
		}
		m.Set("warnings", w)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal ret: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal ret: %v", err)
	}
	ctemStrip(out)
	return out
}

// ctemStrip removes what differs between runs: bookkeeping keys and the
// pid of command results anywhere in the changes.
func ctemStrip(ret map[string]any) {
	for _, k := range []string{"start_time", "duration", "__run_num__", "__id__", "__sls__"} {
		delete(ret, k)
	}
	var walk func(v any)
	walk = func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if _, isCmd := m["retcode"]; isCmd {
			delete(m, "pid")
		}
		for _, sub := range m {
			walk(sub)
		}
	}
	walk(ret["changes"])
}

// ctemGoldenPath is a scenario's golden file.
func ctemGoldenPath(module, id string) string {
	return filepath.Join("..", "testdata", module, id+".json")
}

// ctemRunGolden compares every scenario of a module with its golden file,
// regenerating the files first with -update.
func ctemRunGolden(t *testing.T, module string, scenarios []ctemScenario) {
	t.Helper()
	if testutil.Update() {
		ctemUpdate(t, module, scenarios)
	}
	env := ctemEnv(t, nil)
	for _, sc := range scenarios {
		t.Run(sc.ID, func(t *testing.T) {
			raw, err := os.ReadFile(ctemGoldenPath(module, sc.ID))
			if err != nil {
				t.Fatalf("golden file missing (run `go test -run Golden -update` with GSALT_SALT_SRC set): %v", err)
			}
			var golden struct {
				Ret map[string]any `json:"ret"`
			}
			if err := json.Unmarshal(raw, &golden); err != nil {
				t.Fatalf("golden: %v", err)
			}
			want := golden.Ret
			ret, call, ferr := ctemCall(t, env, sc)
			if comment, _ := want["comment"].(string); strings.HasPrefix(comment, "An exception occurred in this state: ") {
				if ferr == nil {
					t.Fatalf("Salt raised (%q) but gsalt returned %+v", ctemLastLine(comment), ret)
				}
				if got := ctemLastLine(comment); !strings.HasSuffix(got, ferr.Error()) {
					t.Fatalf("exception: Salt %q, gsalt %q", got, ferr.Error())
				}
				return
			}
			if ferr != nil {
				t.Fatalf("gsalt error %v, Salt returned %v", ferr, want)
			}
			got := ctemRetJSON(t, ret)
			if names, ok := want["name"].([]any); ok {
				// Salt names a new-syntax module.run by its function list,
				// which Ret.Name (a string) cannot hold.
				var gotNames []any
				for _, n := range ModuleRunNames(call) {
					gotNames = append(gotNames, n)
				}
				if !reflect.DeepEqual(gotNames, names) {
					t.Errorf("name list: got %v, Salt %v", gotNames, names)
				}
				got["name"] = want["name"]
			}
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.MarshalIndent(got, "", "  ")
				wb, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("ret differs\ngsalt: %s\nSalt:  %s", gb, wb)
			}
		})
	}
}

// ctemLastLine is the last non-empty line of a traceback.
func ctemLastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// ctemUpdate runs the scenarios through real Salt and writes the golden
// files.
func ctemUpdate(t *testing.T, module string, scenarios []ctemScenario) {
	t.Helper()
	src := saltpeer.Require(t)
	dir := t.TempDir()
	srv := filepath.Join(dir, "srv")
	if err := os.MkdirAll(srv, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(ctemSrv)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(ctemSrv, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(srv, e.Name()), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf("id: golden\nfile_client: local\nroot_dir: %s\nfile_roots: {base: [%s]}\npillar_roots: {base: [%s]}\n"+
		"enable_fqdns_grains: False\nipv6: False\nlog_level: error\n", filepath.Join(dir, "root"), srv, filepath.Join(dir, "pillar"))
	if err := os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "pillar"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join("..", "testdata", module), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, testMode := range []bool{false, true} {
		high := payload.NewMap()
		var ids []string
		for _, sc := range scenarios {
			if sc.Test != testMode {
				continue
			}
			ids = append(ids, sc.ID)
			args := []any{}
			if sc.Args == nil {
				sc.Args = ctemKV()
			}
			for _, it := range sc.Args.Items() {
				args = append(args, payload.NewMap(payload.KeyString(it.Key), it.Value))
			}
			if sc.Watch {
				high.Set(sc.ID+"_changer", payload.NewMap("test.succeed_with_changes", []any{}))
				args = append(args, payload.NewMap("watch", []any{payload.NewMap("test", sc.ID+"_changer")}))
			}
			high.Set(sc.ID, payload.NewMap(sc.Fun, args))
		}
		if len(ids) == 0 {
			continue
		}
		sls := fmt.Sprintf("golden_%s_%v", module, testMode)
		b, err := json.MarshalIndent(high, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(srv, sls+".sls"), append([]byte("#!json\n"), b...), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-c", dir, "--local", "state.apply", sls, "--out", "json"}
		if testMode {
			args = append(args, "test=True")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := saltpeer.Command(ctx, src, "salt-call", args...)
		cmd.Dir = dir
		out, _ := cmd.Output()
		cancel()
		var res struct {
			Local map[string]map[string]any `json:"local"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("salt-call %v: %v\n%s", args, err, out)
		}
		byID := map[string]map[string]any{}
		for _, ret := range res.Local {
			if id, ok := ret["__id__"].(string); ok {
				byID[id] = ret
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			ret, ok := byID[id]
			if !ok {
				t.Fatalf("salt-call gave no result for %s:\n%s", id, out)
			}
			ctemStrip(ret)
			b, err := json.MarshalIndent(map[string]any{"ret": ret}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ctemGoldenPath(module, id), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// cmdScenarios are the cmd state runs compared with Salt.
func cmdScenarios() []ctemScenario {
	return []ctemScenario{
		{ID: "run_echo", Fun: "cmd.run", Args: ctemKV("name", "echo hello")},
		{ID: "run_fail", Fun: "cmd.run", Args: ctemKV("name", "echo oops >&2; exit 3")},
		{ID: "run_cwd", Fun: "cmd.run", Args: ctemKV("name", "pwd", "cwd", "/tmp")},
		{ID: "run_cwd_missing", Fun: "cmd.run", Args: ctemKV("name", "pwd", "cwd", "/nonexistent/gsalt")},
		{ID: "run_env_dict", Fun: "cmd.run", Args: ctemKV("name", `echo "x=$GSALT_X"`, "env", ctemKV("GSALT_X", "dict"))},
		{ID: "run_env_list", Fun: "cmd.run", Args: ctemKV("name", `echo "x=$GSALT_X"`, "env", []any{ctemKV("GSALT_X", "list")})},
		{ID: "run_env_bad", Fun: "cmd.run", Args: ctemKV("name", "true", "env", "GSALT_X=1")},
		{ID: "run_stateful_kv", Fun: "cmd.run", Args: ctemKV("name", `echo working; echo "changed=yes comment='all good' extra=1"`, "stateful", true)},
		{ID: "run_stateful_single", Fun: "cmd.run", Args: ctemKV("name", "echo changed=true", "stateful", true)},
		{ID: "run_stateful_json", Fun: "cmd.run", Args: ctemKV("name", `echo '{"changed": true, "comment": "json ok", "x": [1, 2]}'`, "stateful", true)},
		{ID: "run_stateful_json_list", Fun: "cmd.run", Args: ctemKV("name", "echo '[1]'", "stateful", true)},
		{ID: "run_stateful_nochange", Fun: "cmd.run", Args: ctemKV("name", "echo 'changed=no comment=nothing'", "stateful", true)},
		{ID: "run_stateful_bad", Fun: "cmd.run", Args: ctemKV("name", "echo not a kv line", "stateful", true)},
		{ID: "run_stateful_stderr", Fun: "cmd.run", Args: ctemKV("name", "echo only-err >&2", "stateful", true)},
		{ID: "run_timeout", Fun: "cmd.run", Args: ctemKV("name", "sleep 5", "timeout", int64(1))},
		{ID: "run_ignore_timeout", Fun: "cmd.run", Args: ctemKV("name", "sleep 5", "timeout", int64(1), "ignore_timeout", true)},
		{ID: "run_hide_output", Fun: "cmd.run", Args: ctemKV("name", "echo secret", "hide_output", true)},
		{ID: "run_success_retcodes", Fun: "cmd.run", Args: ctemKV("name", "exit 2", "success_retcodes", []any{int64(2)})},
		{ID: "run_stdin_kwarg", Fun: "cmd.run", Args: ctemKV("name", "cat", "stdin", "piped in")},
		{ID: "run_runas_missing", Fun: "cmd.run", Args: ctemKV("name", "true", "runas", "gsalt-no-such-user")},
		{ID: "run_creates_ignored", Fun: "cmd.run", Args: ctemKV("name", "echo ran", "unless", "false")},
		{ID: "script_source_args", Fun: "cmd.script", Args: ctemKV("name", "myscript", "source", "salt://script.sh", "args", "x 'y z'")},
		{ID: "script_name_args", Fun: "cmd.script", Args: ctemKV("name", "salt://script.sh a b")},
		{ID: "script_name", Fun: "cmd.script", Args: ctemKV("name", "salt://script.sh")},
		{ID: "script_fail", Fun: "cmd.script", Args: ctemKV("name", "salt://fail.sh")},
		{ID: "script_missing", Fun: "cmd.script", Args: ctemKV("name", "salt://nope.sh")},
		{ID: "script_template", Fun: "cmd.script", Args: ctemKV("name", "tpl", "source", "salt://tpl.sh", "template", "jinja",
			"context", ctemKV("who", "world"), "defaults", ctemKV("greet", "hi", "who", "nobody"))},
		{ID: "script_bad_context", Fun: "cmd.script", Args: ctemKV("name", "salt://script.sh", "context", "x")},
		{ID: "script_bad_defaults", Fun: "cmd.script", Args: ctemKV("name", "salt://script.sh", "defaults", []any{"x"})},
		{ID: "script_cwd_missing", Fun: "cmd.script", Args: ctemKV("name", "salt://script.sh", "cwd", "/nonexistent/gsalt")},
		{ID: "script_stateful", Fun: "cmd.script", Args: ctemKV("name", "salt://stateful.sh", "args", "things", "stateful", true)},
		{ID: "wait_noop", Fun: "cmd.wait", Args: ctemKV("name", "echo never")},
		{ID: "watch_alias_noop", Fun: "cmd.watch", Args: ctemKV("name", "echo never")},
		{ID: "wait_script_noop", Fun: "cmd.wait_script", Args: ctemKV("name", "salt://script.sh")},
		{ID: "mw_wait", Fun: "cmd.wait", Args: ctemKV("name", "echo fired", "cwd", "/tmp"), Watch: true},
		{ID: "mw_wait_stateful", Fun: "cmd.wait", Args: ctemKV("name", "echo 'changed=yes comment=watched'", "stateful", true), Watch: true},
		{ID: "mw_wait_script", Fun: "cmd.wait_script", Args: ctemKV("name", "salt://script.sh w1"), Watch: true},
		{ID: "mw_wait_fail", Fun: "cmd.wait", Args: ctemKV("name", "exit 5"), Watch: true},
		// test=True
		{ID: "t_run", Fun: "cmd.run", Args: ctemKV("name", "echo hello"), Test: true},
		{ID: "t_run_stateful", Fun: "cmd.run", Args: ctemKV("name", "echo changed=yes", "stateful", true), Test: true},
		{ID: "t_run_test_name", Fun: "cmd.run", Args: ctemKV("name", "echo real", "stateful", []any{ctemKV("test_name", "echo 'changed=yes comment=dry'")}), Test: true},
		{ID: "t_run_test_name_nochange", Fun: "cmd.run", Args: ctemKV("name", "echo real", "stateful", []any{ctemKV("test_name", "echo changed=no")}), Test: true},
		{ID: "t_run_env_bad", Fun: "cmd.run", Args: ctemKV("name", "true", "env", "X"), Test: true},
		{ID: "t_run_cwd_missing", Fun: "cmd.run", Args: ctemKV("name", "true", "cwd", "/nonexistent/gsalt"), Test: true},
		{ID: "t_script", Fun: "cmd.script", Args: ctemKV("name", "salt://script.sh a"), Test: true},
		{ID: "t_script_test_name", Fun: "cmd.script", Args: ctemKV("name", "salt://script.sh", "stateful", []any{ctemKV("test_name", "salt://stateful.sh dry")}), Test: true},
		{ID: "t_wait", Fun: "cmd.wait", Args: ctemKV("name", "echo never"), Test: true},
		{ID: "t_mw_wait", Fun: "cmd.wait", Args: ctemKV("name", "echo fired"), Test: true, Watch: true},
	}
}

func TestCmdGolden(t *testing.T) { ctemRunGolden(t, "cmd", cmdScenarios()) }

func TestCmdReinterpret(t *testing.T) {
	cmdRet := func(stdout, stderr string) states.Ret {
		return states.Ret{Name: "x", Result: states.True,
			Changes: ctemKV("pid", int64(1), "retcode", int64(0), "stdout", stdout, "stderr", stderr)}
	}
	for _, tc := range []struct {
		name            string
		in              states.Ret
		result          states.Result
		comment, errTxt string
		changes         string // JSON of the changes
	}{
		{name: "no output", in: cmdRet("", ""), result: states.True, changes: `{}`},
		{name: "stderr only", in: cmdRet("", "bad"), result: states.True, comment: "bad", changes: `{}`},
		{name: "kv changed", in: cmdRet("line1\nchanged=yes comment='ok now' k=v", ""), result: states.True, comment: "ok now",
			changes: `{"changed":"yes","k":"v","pid":1,"retcode":0,"stdout":"line1","stderr":""}`},
		{name: "kv unchanged", in: cmdRet("changed=no", ""), result: states.True, changes: `{}`},
		{name: "kv no changed key", in: cmdRet("a=b", ""), result: states.True, changes: `{}`},
		{name: "json changed", in: cmdRet(`{"changed": true, "n": 2}`, "e"), result: states.True,
			changes: `{"changed":true,"n":2,"pid":1,"retcode":0,"stdout":"","stderr":"e"}`},
		{name: "json not object", in: cmdRet(`"str"`, ""), result: states.False,
			comment: "script JSON output must be a JSON object (e.g., {})!", changes: `{}`},
		{name: "whitespace is not json", in: cmdRet("   ", ""), result: states.True, changes: `{}`},
		{name: "unclosed quote", in: cmdRet(`changed="yes`, ""), result: states.False,
			comment: "Failed parsing script output! Stdout must be JSON or a line of name=value pairs.",
			changes: `{"pid":1,"retcode":0,"stdout":"changed=\"yes","stderr":""}`},
		{name: "two equals", in: cmdRet("a=b=c", ""), result: states.False,
			comment: "Failed parsing script output! Stdout must be JSON or a line of name=value pairs.",
			changes: `{"pid":1,"retcode":0,"stdout":"a=b=c","stderr":""}`},
		{name: "bad boolean", in: cmdRet("changed=maybe", ""), errTxt: "ValueError: Failed parsing boolean value: maybe"},
		{name: "json bad boolean", in: cmdRet(`{"changed": 2}`, ""), errTxt: "ValueError: Failed parsing boolean value: 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cmdReinterpret(tc.in)
			if tc.errTxt != "" {
				if err == nil || err.Error() != tc.errTxt {
					t.Fatalf("error %v, want %q", err, tc.errTxt)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Result != tc.result || got.Comment != tc.comment {
				t.Errorf("result %v comment %q, want %v %q", got.Result, got.Comment, tc.result, tc.comment)
			}
			b, _ := json.Marshal(got.Changes)
			if string(b) != tc.changes {
				t.Errorf("changes %s, want %s", b, tc.changes)
			}
		})
	}
}

// ctemDirect runs a state function of this package on an explicit low
// chunk (no golden).
func ctemDirect(t *testing.T, env *modules.Env, fun string, low *payload.Map, watch, test bool) (states.Ret, error) {
	t.Helper()
	f, ok := ctemFunctions()[fun]
	if !ok {
		t.Fatalf("no state function %s", fun)
	}
	args, err := modules.BindKeywords(f.Spec, low)
	if err != nil {
		t.Fatalf("bind: %v", err)
	}
	state, short, _ := strings.Cut(fun, ".")
	c := &states.Call{ID: low.Str("__id__"), Name: low.Str("name"), State: state, Fun: short, Args: args, Low: low,
		Test: test, Saltenv: "base", Env: env, Files: ctemFiles{root: ctemSrv}}
	fn := f.Fn
	if watch {
		fn = f.Watch
	}
	return fn(context.Background(), c)
}

func TestCmdModWatchDispatch(t *testing.T) {
	env := ctemEnv(t, nil)
	for _, tc := range []struct {
		name    string
		fun     string
		low     *payload.Map
		comment string
		result  states.Result
		errTxt  string
	}{
		{name: "sfun from Fun", fun: "cmd.wait", low: ctemKV("name", "echo via-fun"), comment: `Command "echo via-fun" run`, result: states.True},
		{name: "sfun in low", fun: "cmd.mod_watch", low: ctemKV("name", "echo via-low", "sfun", "run", "cwd", "/"), comment: `Command "echo via-low" run`, result: states.True},
		{name: "unsupported sfun", fun: "cmd.mod_watch", low: ctemKV("name", "x", "sfun", "bogus"),
			comment: "cmd.bogus does not work with the watch requisite, please use cmd.wait or cmd.wait_script", result: states.False},
		{name: "call without func", fun: "cmd.mod_watch", low: ctemKV("name", "x", "sfun", "wait_call"),
			comment: "cmd.wait_call needs a named parameter func", result: states.False},
		{name: "no sfun", fun: "cmd.mod_watch", low: ctemKV("name", "x"), errTxt: "KeyError: 'sfun'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// cmd.mod_watch is called as a state; the others through Watch.
			ret, err := ctemDirect(t, env, tc.fun, tc.low, tc.fun != "cmd.mod_watch", false)
			if tc.errTxt != "" {
				if err == nil || err.Error() != tc.errTxt {
					t.Fatalf("error %v, want %q", err, tc.errTxt)
				}
				return
			}
			if err != nil || ret.Comment != tc.comment || ret.Result != tc.result {
				t.Fatalf("got %+v, %v; want %q %v", ret, err, tc.comment, tc.result)
			}
		})
	}
}

func TestCmdRunEdges(t *testing.T) {
	env := ctemEnv(t, nil)
	// Internal keywords in the low chunk never reach cmd.run_all (which
	// would refuse none of them, but umask would change the command).
	ret, err := ctemDirect(t, env, "cmd.run", ctemKV("name", "umask", "umask", "0777", "onlyif", "false", "order", int64(1), "__id__", "x"), false, false)
	if err != nil || ret.Result != states.True {
		t.Fatalf("run: %+v %v", ret, err)
	}
	if out, _ := ret.Changes.Get("stdout"); out == "0777" {
		t.Errorf("umask from the low chunk reached cmd.run_all")
	}
	// root= needs cmd.run_chroot, which gsalt lacks: Salt's KeyError text.
	ret, err = ctemDirect(t, env, "cmd.run", ctemKV("name", "true", "root", "/"), false, false)
	if err != nil || ret.Result != states.False || ret.Comment != "'cmd.run_chroot'" {
		t.Fatalf("root: %+v %v", ret, err)
	}
	// A template without a renderer registry is a cache error.
	ret, err = ctemDirect(t, env, "cmd.script", ctemKV("name", "salt://tpl.sh", "template", "jinja"), false, false)
	if err != nil || ret.Result != states.False || ret.Comment != "Unable to cache script salt://tpl.sh from saltenv 'base'" {
		t.Fatalf("template without renderer: %+v %v", ret, err)
	}
	// The legacy retcode kwarg makes the result "not bool(cmd_all)".
	ret, err = ctemDirect(t, env, "cmd.script", ctemKV("name", "salt://script.sh", "retcode", true), false, false)
	if err != nil || ret.Result != states.False || ret.Comment != "Command 'salt://script.sh' run" {
		t.Fatalf("retcode kwarg: %+v %v", ret, err)
	}
	// An empty stateful list is Python's IndexError.
	if _, err := ctemDirect(t, env, "cmd.run", ctemKV("name", "true", "stateful", []any{}), false, false); err == nil {
		t.Fatalf("empty stateful list: no error")
	}
}

func TestSbBindPythonErrors(t *testing.T) {
	env := ctemEnv(t, nil)
	c := &states.Call{Env: env}
	for _, tc := range []struct {
		fun    string
		args   []any
		kwargs *payload.Map
		want   string
	}{
		{fun: "test.echo", want: "echo() missing 1 required positional argument: 'text'"},
		{fun: "test.echo", args: []any{"a", "b"}, want: "echo() takes 1 positional argument but 2 were given"},
		{fun: "test.retcode", args: []any{int64(1), int64(2)}, want: "retcode() takes from 0 to 1 positional arguments but 2 were given"},
		{fun: "test.echo", kwargs: ctemKV("text", "a", "x", int64(1)), want: "echo() got an unexpected keyword argument 'x'"},
		{fun: "test.echo", args: []any{"a"}, kwargs: ctemKV("text", "b"), want: "echo() got multiple values for argument 'text'"},
		{fun: "nope.nope", want: "'nope.nope'"},
	} {
		_, err := sbExec(context.Background(), c, tc.fun, tc.args, tc.kwargs)
		if err == nil || sbErrText(err) != tc.want {
			t.Errorf("%s %v %v: %v, want %q", tc.fun, tc.args, tc.kwargs, err, tc.want)
		}
	}
	// A successful call binds the arguments Python's way.
	out, err := sbExec(context.Background(), c, "test.arg", []any{int64(1), "two=2"}, ctemKV("k", "v"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(out); string(b) != `{"args":[1,"two=2"],"kwargs":{"k":"v"}}` {
		t.Errorf("test.arg: %s", b)
	}
}

func TestRegistrable(t *testing.T) {
	reg := states.NewRegistry()
	for _, list := range [][]states.Function{cmdStates(), testStates(), eventStates(), moduleStates()} {
		if err := reg.Register(list...); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"cmd.run", "cmd.script", "cmd.wait", "cmd.wait_script", "cmd.mod_watch", "test.nop",
		"test.configurable_test_state", "test.mod_watch", "event.send", "event.wait", "module.run", "module.wait"} {
		f, ok := reg.Lookup(n)
		if !ok {
			t.Errorf("%s not registered", n)
			continue
		}
		if f.Spec.Params[0].Name != "name" {
			t.Errorf("%s: first parameter %q", n, f.Spec.Params[0].Name)
		}
		if !strings.HasSuffix(n, ".mod_watch") && f.Watch == nil {
			t.Errorf("%s has no mod_watch", n)
		}
	}
}

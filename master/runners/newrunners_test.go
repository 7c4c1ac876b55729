package runners_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/master/runners"
	"github.com/gsalt/gsalt/wire/payload"
)

// fakeEnv is a master for the runners of this file: options, a real job
// cache and file server, a recorded event bus and a target matcher over a
// fixed id list.
type fakeEnv struct {
	runners.Env
	opts     map[string]any
	jobs     *jobcache.Cache
	fs       *fileserver.Roots
	events   []string
	eventErr error
	accepted []string
	conn     map[string]string
}

func (e *fakeEnv) Opt(k string) (any, bool)    { v, ok := e.opts[k]; return v, ok }
func (e *fakeEnv) Jobs() runners.JobCache      { return e.jobs }
func (e *fakeEnv) Accepted() ([]string, error) { return e.accepted, nil }
func (e *fakeEnv) Connected() (map[string]string, error) {
	out := map[string]string{}
	for k, v := range e.conn {
		out[k] = v
	}
	return out, nil
}

func (e *fakeEnv) FireEvent(tag string, data *payload.Map) error {
	if e.eventErr != nil {
		return e.eventErr
	}
	e.events = append(e.events, tag+" "+mapText(data))
	return nil
}

func (e *fakeEnv) FileServer(ctx context.Context, cmd string, load *payload.Map) (any, error) {
	return e.fs.Handle(ctx, cmd, load)
}

func (e *fakeEnv) CheckMinions(tgt any, tgtType string) ([]string, error) {
	if tgtType != "glob" {
		return nil, errors.New("only glob here")
	}
	var out []string
	for _, id := range e.accepted {
		if ok, _ := filepath.Match(payload.Text(tgt), id); ok {
			out = append(out, id)
		}
	}
	return out, nil
}

func mapText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newFakeEnv(t *testing.T) *fakeEnv {
	t.Helper()
	dir := t.TempDir()
	jobs, err := jobcache.Open(filepath.Join(dir, "jobs.db"), jobcache.Options{Keep: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jobs.Close() })
	writeFiles(t, filepath.Join(dir, "srv"), map[string]string{"top.sls": "a: 1\n", "sub/f.txt": "x\n"})
	writeFiles(t, filepath.Join(dir, "dev"), map[string]string{"d.sls": "d: 1\n"})
	o := fileserver.Options{Roots: map[string][]string{"base": {filepath.Join(dir, "srv")}, "dev": {filepath.Join(dir, "dev")}}, Logger: quiet()}
	return &fakeEnv{
		opts: map[string]any{"cachedir": filepath.Join(dir, "cache"), "pki_dir": filepath.Join(dir, "pki"),
			"minion_data_cache": true, "id": "tmaster", "conf_file": filepath.Join(dir, "etc", "master")},
		jobs: jobs, fs: fileserver.New(o), accepted: []string{"m1", "m2", "web1"},
		conn: map[string]string{"m1": "10.0.0.1"},
	}
}

func run(t *testing.T, env runners.Env, fun string, args []any, kwargs *payload.Map) runners.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return runners.Default().Run(ctx, fun, args, kwargs, &runners.Call{Env: env, Log: quiet()})
}

func TestNewRunners(t *testing.T) {
	env := newFakeEnv(t)
	cache := env.opts["cachedir"].(string)
	for id, d := range map[string]*payload.Map{
		"m1":    payload.NewMap("grains", payload.NewMap("os", "Debian"), "pillar", payload.NewMap("p", int64(1))),
		"m2":    payload.NewMap("grains", payload.NewMap(), "pillar", payload.NewMap()),
		"ghost": payload.NewMap("grains", payload.NewMap("os", "Ghost"), "pillar", payload.NewMap("g", true)),
	} {
		b, err := payload.MarshalBin(d)
		if err != nil {
			t.Fatal(err)
		}
		writeFiles(t, filepath.Join(cache, "minions", id), map[string]string{"data.p": string(b)})
	}
	mine, _ := payload.MarshalBin(payload.NewMap("test.ping", true))
	writeFiles(t, filepath.Join(cache, "minions", "m1"), map[string]string{"mine.p": string(mine)})

	tests := []struct {
		name   string
		fun    string
		args   []any
		kwargs *payload.Map
		want   string // JSON of the return, or a prefix ending in "…"
		ok     bool
	}{
		{"alived", "manage.alived", nil, nil, `["m1"]`, true},
		{"joined_ip", "manage.joined", nil, payload.NewMap("show_ip", true), `{"m1":"10.0.0.1"}`, true},
		{"not_allowed", "manage.not_allowed", nil, nil, `["m2","web1"]`, true},
		{"not_reaped_subset", "manage.not_reaped", []any{[]any{"web1"}}, nil, `["web1"]`, true},
		{"event_send", "event.send", []any{"my/tag"}, payload.NewMap("data", payload.NewMap("a", int64(1))), `true`, true},
		{"event_send_nodata", "event.send", []any{"other/tag"}, nil, `true`, true},
		{"event_send_bad_data", "event.send", []any{"x/tag", "str"}, nil, `"Exception occurred in runner event.send: runners: invalid arguments: Dict object expected, not 'str'."`, false},
		{"envs", "fileserver.envs", nil, nil, `["base","dev"]`, true},
		{"envs_sources", "fileserver.envs", nil, payload.NewMap("sources", true), `["roots"]`, true},
		{"envs_other_backend", "fileserver.envs", []any{"git"}, nil, `[]`, true},
		{"file_list", "fileserver.file_list", nil, nil, `["sub/f.txt","top.sls"]`, true},
		{"file_list_dev", "fileserver.file_list", []any{"dev"}, nil, `["d.sls"]`, true},
		{"dir_list", "fileserver.dir_list", nil, nil, `["sub"]`, true},
		{"empty_dir_list", "fileserver.empty_dir_list", nil, nil, `[]`, true},
		{"symlink_list", "fileserver.symlink_list", nil, nil, `{}`, true},
		{"sync_modules", "saltutil.sync_modules", nil, nil, `[]`, true},
		{"cache_grains", "cache.grains", []any{"*"}, nil, `{"m1":{"os":"Debian"},"m2":{},"web1":{}}`, true},
		{"cache_grains_nomatch", "cache.grains", []any{"zz*"}, nil, `{}`, true},
		{"cache_grains_missing_tgt", "cache.grains", nil, nil, "\"\\nPassed invalid arguments: grains() missing 1 required positional argument: 'tgt'…", true},
		{"cache_pillar_all", "cache.pillar", nil, nil, `{"ghost":{"g":true},"m1":{"p":1}}`, true},
		{"cache_pillar_tgt", "cache.pillar", []any{"m*"}, nil, `{"m1":{"p":1},"m2":{}}`, true},
		{"cache_mine_all", "cache.mine", nil, nil, `{"ghost":{},"m1":{"test.ping":true},"m2":{}}`, true},
		{"cache_mine_tgt", "cache.mine", []any{"web*"}, nil, `{"web1":{}}`, true},
		{"test_arg", "test.arg", []any{int64(1), "two"}, payload.NewMap("k", "v", "__pub_x", 1), `{"args":[1,"two"],"kwargs":{"k":"v"}}`, true},
		{"test_arg_none", "test.arg", nil, nil, `{"args":[],"kwargs":{}}`, true},
		{"test_stdout_print", "test.stdout_print", nil, nil, `"bar"`, true},
		{"test_sleep", "test.sleep", []any{0.05}, nil, `true`, true},
		{"test_metasyntactic", "test.metasyntactic", nil, payload.NewMap("locality", "uk"), `["wibble","wobble","wubble","flob"]`, true},
		{"salt_cmd_ping", "salt.cmd", []any{"test.ping"}, nil, `true`, true},
		{"salt_cmd_arg", "salt.cmd", []any{"test.arg", int64(1)}, payload.NewMap("b", int64(2)), `{"args":[1],"kwargs":{"b":2}}`, true},
		{"salt_cmd_missing", "salt.cmd", []any{"nope.nope"}, nil, `"'nope.nope' is not available."`, true},
		{"salt_cmd_config", "salt.cmd", []any{"config.get", "id"}, nil, `"tmaster"`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, env, tc.fun, tc.args, tc.kwargs)
			got := mapText(res.Return)
			if strings.HasSuffix(tc.want, "…") {
				if !strings.HasPrefix(got, strings.TrimSuffix(tc.want, "…")) {
					t.Fatalf("%s: got %s", tc.fun, got)
				}
			} else if got != tc.want {
				t.Fatalf("%s: got %s want %s", tc.fun, got, tc.want)
			}
			if res.Success != tc.ok {
				t.Fatalf("%s: success %v", tc.fun, res.Success)
			}
		})
	}
	want := []string{`my/tag {"a":1}`, `other/tag {}`}
	if !reflect.DeepEqual(env.events, want) {
		t.Fatalf("events %q", env.events)
	}
	// sync_all: every kind, in Salt's order, empty.
	res := run(t, env, "saltutil.sync_all", nil, nil)
	m, ok := res.Return.(*payload.Map)
	if !ok || m.Len() != 23 || m.Keys()[0] != "clouds" || m.Keys()[22] != "roster" || mapText(m.List("tokens")) != "[]" {
		t.Fatalf("sync_all %s", mapText(res.Return))
	}
	// A bus that refuses the event: event.send returns False.
	env.eventErr = errors.New("closed")
	if res := run(t, env, "event.send", []any{"t/x"}, nil); res.Return != false {
		t.Fatalf("event.send on a closed bus: %v", res.Return)
	}
	// minion_data_cache off: the cache runners see no data.
	env.opts["minion_data_cache"] = false
	if got := mapText(run(t, env, "cache.grains", []any{"m*"}, nil).Return); got != `{"m1":{},"m2":{}}` {
		t.Fatalf("grains without data cache: %s", got)
	}
	if got := mapText(run(t, env, "cache.mine", []any{"m1"}, nil).Return); got != `{"m1":{}}` {
		t.Fatalf("mine without data cache: %s", got)
	}
	env.opts["enforce_mine_cache"] = true
	if got := mapText(run(t, env, "cache.mine", []any{"m1"}, nil).Return); got != `{"m1":{"test.ping":true}}` {
		t.Fatalf("mine with enforce_mine_cache: %s", got)
	}
}

// TestTestSleepCancel checks test.sleep stops with the master.
func TestTestSleepCancel(t *testing.T) {
	env := newFakeEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := runners.Default().Run(ctx, "test.sleep", []any{int64(100)}, nil, &runners.Call{Env: env, Log: quiet()})
	if res.Success || !strings.Contains(payload.Text(res.Return), "context canceled") {
		t.Fatalf("cancelled sleep: %v", res)
	}
}

func TestJobsExitSuccessAndTimeFilters(t *testing.T) {
	env := newFakeEnv(t)
	save := func(jid, fun string, tgt any, minions []string, rets map[string]any) {
		t.Helper()
		if err := env.jobs.SaveLoad(jid, payload.NewMap("fun", fun, "arg", []any{}, "tgt", tgt, "tgt_type", "glob", "user", "root", "jid", jid), minions); err != nil {
			t.Fatal(err)
		}
		for id, r := range rets {
			if err := env.jobs.SaveReturn(jid, id, payload.NewMap("return", r, "retcode", int64(0), "success", true)); err != nil {
				t.Fatal(err)
			}
		}
	}
	save("20240301120000000001", "test.ping", "*", []string{"m1", "m2", "m3"}, map[string]any{"m1": true, "m2": false})
	save("20240315093000000002", "cmd.run", "web*", []string{"web1"}, map[string]any{"web1": "ok"})
	save("20250101000000000003", "state.apply", []any{"db1", "db2"}, []string{"db1"}, map[string]any{"db1": payload.NewMap()})
	save("20250601000000000004", "test.ping", "m9", nil, map[string]any{"m9": true})

	if got := mapText(run(t, env, "jobs.exit_success", []any{"20240301120000000001"}, nil).Return); got != `{"m1":true,"m2":false,"m3":false}` {
		t.Fatalf("exit_success %s", got)
	}
	if got := mapText(run(t, env, "jobs.exit_success", []any{"20250601000000000004"}, nil).Return); got != `{"m9":true}` {
		t.Fatalf("exit_success without minions %s", got)
	}
	if got := mapText(run(t, env, "jobs.exit_success", []any{"20990101000000000000"}, nil).Return); got != `{}` {
		t.Fatalf("exit_success unknown jid %s", got)
	}

	keysOf := func(t *testing.T, kw *payload.Map) []string {
		t.Helper()
		res := run(t, env, "jobs.list_jobs", nil, kw)
		m, ok := res.Return.(*payload.Map)
		if !ok {
			t.Fatalf("list_jobs %v: %s", mapText(kw), mapText(res.Return))
		}
		return m.Keys()
	}
	all := []string{"20240301120000000001", "20240315093000000002", "20250101000000000003", "20250601000000000004"}
	for _, tc := range []struct {
		name string
		kw   *payload.Map
		want []string
	}{
		{"none", payload.NewMap(), all},
		{"function", payload.NewMap("search_function", "test.*"), []string{all[0], all[3]}},
		{"function_list", payload.NewMap("search_function", "cmd.run,state.*"), []string{all[1], all[2]}},
		{"target_glob", payload.NewMap("search_target", "web*"), []string{all[1]}},
		{"target_in_list", payload.NewMap("search_target", []any{"db2"}), []string{all[2]}},
		{"target_and_function", payload.NewMap("search_target", "m*", "search_function", "test.ping"), []string{all[3]}},
		{"start_time", payload.NewMap("start_time", "2025, Jan 1 00:00"), all[2:]},
		{"start_time_iso", payload.NewMap("start_time", "2024-03-15T09:30:00"), all[1:]},
		{"end_time", payload.NewMap("end_time", "March 15 2024"), all[:1]},
		{"between", payload.NewMap("start_time", "2024-03-02", "end_time", "12/31/2024 11:59pm"), all[1:2]},
		{"time_and_function", payload.NewMap("start_time", "2024-01-01", "search_function", "test.ping"), []string{all[0], all[3]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := keysOf(t, tc.kw); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
	// A time dateutil does not understand fails the runner, as in Salt.
	res := run(t, env, "jobs.list_jobs", nil, payload.NewMap("start_time", "not a date"))
	if res.Success || !strings.Contains(payload.Text(res.Return), "Unknown string format: not a date") {
		t.Fatalf("bad start_time: %s", mapText(res.Return))
	}
	res = run(t, env, "jobs.list_jobs", nil, payload.NewMap("end_time", "2024-03-15T09:30:00Z"))
	if res.Success || !strings.Contains(payload.Text(res.Return), "can't compare offset-naive and offset-aware datetimes") {
		t.Fatalf("aware end_time: %s", mapText(res.Return))
	}
}

func TestVarArgsBinding(t *testing.T) {
	rn, _ := runners.Default().Lookup("salt.cmd")
	b, extra, err := rn.Bind([]any{"test.arg", int64(1), int64(2)}, payload.NewMap("with_pillar", false))
	if err != nil || b["fun"] != "test.arg" || !reflect.DeepEqual(b["args"], []any{int64(1), int64(2)}) || extra["with_pillar"] != false {
		t.Fatalf("bind %v %v %v", b, extra, err)
	}
	if _, _, err := rn.Bind(nil, nil); err == nil || !strings.Contains(err.Error(), "cmd() missing 1 required positional argument: 'fun'") {
		t.Fatalf("missing fun: %v", err)
	}
	rn, _ = runners.Default().Lookup("manage.alived")
	if _, _, err := rn.Bind([]any{1, 2, 3}, nil); err == nil || !strings.Contains(err.Error(), "alived() takes from 0 to 2 positional arguments but 3 were given") {
		t.Fatalf("too many: %v", err)
	}
}

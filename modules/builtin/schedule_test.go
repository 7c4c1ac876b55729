package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/builtin"
	"github.com/gsalt/gsalt/schedule"
	"github.com/gsalt/gsalt/wire/payload"
)

const (
	scheduleStepsPath  = "testdata/schedule_offline_steps.json"
	scheduleGoldenPath = "testdata/schedule_offline_golden.json"
)

// schedStep is one call of testdata/schedule_offline_steps.json.
type schedStep struct {
	fun    string
	args   []any
	kwargs *payload.Map
}

func loadSchedSteps(t *testing.T) []schedStep {
	t.Helper()
	b, err := os.ReadFile(scheduleStepsPath)
	if err != nil {
		t.Fatal(err)
	}
	v, err := config.DecodeYAMLPayload(b)
	if err != nil {
		t.Fatal(err)
	}
	var out []schedStep
	for _, s := range v.([]any) {
		m := s.(*payload.Map)
		st := schedStep{fun: m.Str("function"), args: m.List("args"), kwargs: m.Map("kwargs")}
		st.fun = m.Str("fun")
		out = append(out, st)
	}
	return out
}

func schedEnv(dir string, services map[string]any) *modules.Env {
	reg := modules.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		panic(err)
	}
	return &modules.Env{ID: "golden", Registry: reg, Log: slog.New(slog.DiscardHandler),
		Opts:     payload.NewMap("conf_file", filepath.Join(dir, "minion"), "default_include", "minion.d/*.conf"),
		Pillar:   &payload.Map{},
		Grains:   &payload.Map{},
		Services: services}
}

func schedCall(env *modules.Env, fun string, args []any, kwargs *payload.Map) modules.Result {
	all := append([]any{}, args...)
	if kwargs != nil && kwargs.Len() > 0 {
		kw := kwargs.Clone().Set("__kwarg__", true)
		all = append(all, kw)
	}
	return env.Registry.Execute(context.Background(), modules.Binder{}, env, fun, all, nil)
}

// TestScheduleOffline runs the steps with offline=True against
// _schedule.conf, comparing each return and the file after it with what
// Salt 3006's own module returned and wrote (testdata/schedule_offline_golden.json).
func TestScheduleOffline(t *testing.T) {
	steps := loadSchedSteps(t)
	if testutil.Update() {
		src := saltpeer.Require(t)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "minion"), []byte("id: golden\nfile_client: local\nroot_dir: "+dir+"/root\nlog_level: error\nenable_fqdns_grains: False\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, err := os.ReadFile("testdata/schedule_offline.py")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := saltpeer.PythonCommand(ctx, src, string(code), scheduleStepsPath, dir).Output()
		if err != nil {
			t.Fatalf("schedule_offline.py: %v", err)
		}
		var b bytes.Buffer // keep Salt's key order
		if err := json.Indent(&b, out, "", " "); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(scheduleGoldenPath, append(b.Bytes(), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gb, err := os.ReadFile(scheduleGoldenPath)
	if err != nil {
		t.Fatal(err)
	}
	gv, err := config.DecodeYAMLPayload(gb)
	if err != nil {
		t.Fatal(err)
	}
	golden := gv.([]any)
	if len(golden) != len(steps) {
		t.Fatalf("%d golden results for %d steps: regenerate with -update", len(golden), len(steps))
	}
	dir := t.TempDir()
	env := schedEnv(dir, nil)
	conf := filepath.Join(dir, "minion.d", "_schedule.conf")
	for i, st := range steps {
		want := golden[i].(*payload.Map)
		res := schedCall(env, st.fun, st.args, st.kwargs)
		gotJSON, _ := json.Marshal(res.Return)
		wantRet, _ := want.Get("ret")
		wantJSON, _ := json.Marshal(wantRet)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("step %d %s %v: returned\n%s\nSalt returned\n%s", i, st.fun, st.kwargs, gotJSON, wantJSON)
		}
		gotFile := "<none>"
		if b, err := os.ReadFile(conf); err == nil {
			gotFile = string(b)
		}
		wantFile := "<none>"
		if f, _ := want.Get("file"); f != nil {
			wantFile = payload.Text(f)
		}
		if gotFile != wantFile {
			t.Errorf("step %d %s: _schedule.conf\n%s\nSalt wrote\n%s", i, st.fun, gotFile, wantFile)
		}
	}
}

// TestScheduleWithScheduler drives the module against the minion's real
// scheduler (schedule.Manager as the "schedule" service).
func TestScheduleWithScheduler(t *testing.T) {
	dir := t.TempDir()
	var ran []string
	pillar := payload.NewMap("schedule", payload.NewMap("pj", payload.NewMap("function", "test.ping", "hours", int64(1))))
	mgr := schedule.New(schedule.Options{
		Opts:   payload.NewMap("conf_file", filepath.Join(dir, "minion"), "default_include", "minion.d/*.conf"),
		Pillar: func() *payload.Map { return pillar },
		Run:    func(_ context.Context, j schedule.Job) { ran = append(ran, j.Name) },
		Logger: slog.New(slog.DiscardHandler),
	})
	env := schedEnv(dir, map[string]any{"schedule": mgr})
	env.Pillar = pillar
	kw := func(kv ...any) *payload.Map { return payload.NewMap(kv...) }
	type step struct {
		fun    string
		args   []any
		kwargs *payload.Map
		want   string // JSON of the return
	}
	steps := []step{
		{"schedule.add", []any{"job1"}, kw("function", "test.ping", "seconds", int64(60)), `{"comment":"Added job: job1 to schedule.","result":true,"changes":{"job1":"added"}}`},
		{"schedule.add", []any{"job1"}, kw("function", "test.ping", "seconds", int64(60)), `{"comment":"Job job1 already exists in schedule.","result":false,"changes":{}}`},
		{"schedule.list", nil, kw("return_yaml", false),
			`{"pj":{"function":"test.ping","hours":1,"enabled":true},"job1":{"function":"test.ping","seconds":60,"maxrunning":1,"name":"job1","enabled":true,"jid_include":true}}`},
		{"schedule.is_enabled", nil, kw("name", "job1"), `{"function":"test.ping","seconds":60,"maxrunning":1,"name":"job1","enabled":true,"jid_include":true}`},
		{"schedule.is_enabled", nil, nil, `true`},
		{"schedule.disable_job", []any{"job1"}, nil, `{"comment":"Disabled Job job1 in schedule.","result":true,"changes":{"job1":"disabled"}}`},
		{"schedule.run_job", []any{"job1"}, nil, `{"comment":"Job job1 is disabled.","result":true}`},
		{"schedule.run_job", []any{"job1"}, kw("force", true), `{"comment":"Scheduling Job job1 on minion.","result":true}`},
		{"schedule.enable_job", []any{"job1"}, nil, `{"comment":"Enabled Job job1 in schedule.","result":true,"changes":{"job1":"enabled"}}`},
		{"schedule.enable_job", []any{"nope"}, nil, `{"comment":"Job nope does not exist.","result":false,"changes":{}}`},
		{"schedule.modify", []any{"job1"}, kw("seconds", int64(30)), ""},
		{"schedule.postpone_job", []any{"job1", "2026-11-22T10:00:00", "2026-11-22T10:05:00"}, nil, `{"comment":"Postponed Job job1 in schedule.","result":true}`},
		{"schedule.skip_job", []any{"job1", "22/11/2026"}, nil, `{"comment":"Date string could not be parsed.","result":false}`},
		{"schedule.skip_job", []any{"job1", "22/11/2026"}, kw("time_fmt", "%d/%m/%Y"), `{"comment":"Added Skip Job job1 in schedule.","result":true}`},
		{"schedule.show_next_fire_time", []any{"nope"}, nil, `{"result":true,"next_fire_time":null}`},
		{"schedule.disable", nil, nil, `{"comment":"Disabled schedule on minion.","changes":{"schedule":"disabled"},"result":true}`},
		{"schedule.enable", nil, nil, `{"comment":"Enabled schedule on minion.","changes":{"schedule":"enabled"},"result":true}`},
		{"schedule.save", nil, nil, `{"comment":"Schedule (non-pillar items) saved.","result":true}`},
		{"schedule.delete", []any{"pj"}, nil, `{"comment":"Failed to delete job pj from schedule.","result":false,"changes":{}}`},
		{"schedule.delete", []any{"job1"}, nil, `{"comment":"Deleted Job job1 from schedule.","result":true,"changes":{"job1":"removed"}}`},
		{"schedule.delete", []any{"job1"}, nil, `{"comment":"Job job1 does not exist.","result":false,"changes":{}}`},
		{"schedule.copy", []any{"pj", "other"}, nil, `{"comment":"'publish.publish' is not available.","result":false}`},
	}
	for i, s := range steps {
		res := schedCall(env, s.fun, s.args, s.kwargs)
		got, _ := json.Marshal(res.Return)
		if s.want != "" && string(got) != s.want {
			t.Errorf("step %d %s: %s\nwant %s", i, s.fun, got, s.want)
		}
		if s.fun == "schedule.modify" {
			m, _ := res.Return.(*payload.Map)
			if m.Str("comment") != "Modified job: job1 in schedule." || m.Map("changes").Map("job1").Map("new").Str("function") != "test.ping" {
				t.Errorf("modify: %s", got)
			}
		}
	}
	if len(ran) != 1 || ran[0] != "job1" {
		t.Errorf("run_job ran %v", ran)
	}
	mgr.Eval(context.Background(), time.Now())
	res := schedCall(env, "schedule.show_next_fire_time", []any{"pj"}, nil)
	if nf := res.Return.(*payload.Map).Str("next_fire_time"); !strings.HasPrefix(nf, time.Now().Add(time.Hour).Format("2006-01-02T15")) {
		t.Errorf("next fire time of pj: %v", res.Return)
	}
	st := schedCall(env, "schedule.job_status", []any{"pj"}, payload.NewMap("time_fmt", "%H:%M"))
	if m := st.Return.(*payload.Map); m.Str("function") != "test.ping" || len(m.Str("_next_fire_time")) != 5 {
		t.Errorf("job_status: %v", st.Return)
	}
	b, err := os.ReadFile(filepath.Join(dir, "minion.d", "_schedule.conf"))
	if err != nil || string(b) != "schedule: {enabled: true}\n" {
		t.Errorf("saved %q %v", b, err)
	}

	// Without a scheduler: Salt's answers when the event system is missing.
	bare := schedEnv(t.TempDir(), nil)
	for fun, want := range map[string]string{
		"schedule.list":   `{"comment":"Event module not available. Schedule list failed.","result":true}`,
		"schedule.save":   `{"comment":"Event module not available. Schedule save failed.","result":true}`,
		"schedule.enable": `{"comment":"Event module not available. Schedule enable job failed.","changes":{},"result":true}`,
	} {
		got, _ := json.Marshal(schedCall(bare, fun, nil, nil).Return)
		if string(got) != want {
			t.Errorf("%s without a scheduler: %s\nwant %s", fun, got, want)
		}
	}
}

package builtin

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/schedule"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestScheduleStatesWithScheduler applies schedule.present, disabled,
// enabled and absent from SLS text (state.template_str) against the
// minion's real scheduler: each step's comment, result and changes, and
// the job as schedule.list shows it afterwards. The returns of the state
// functions for given execution answers are compared with Salt's own in
// TestNetStatesGolden (the schedule scenarios).
func TestScheduleStatesWithScheduler(t *testing.T) {
	dir := t.TempDir()
	opts := payload.NewMap("id", "sched", "conf_file", filepath.Join(dir, "minion"), "default_include", "minion.d/*.conf",
		"file_client", "local", "cachedir", filepath.Join(dir, "cache"), "file_roots", payload.NewMap("base", []any{dir}))
	mgr := schedule.New(schedule.Options{
		Opts:   opts,
		Pillar: func() *payload.Map { return &payload.Map{} },
		Run:    func(context.Context, schedule.Job) {},
		Logger: slog.New(slog.DiscardHandler),
	})
	reg := suiteRegistry(t)
	env := &modules.Env{ID: "sched", Registry: reg, Grains: payloadLinuxGrains(), Pillar: payload.NewMap(),
		Log: slog.New(slog.DiscardHandler), Opts: opts, Services: map[string]any{"schedule": mgr}}

	present := func(seconds int) string {
		return "job1:\n  schedule.present:\n    - function: test.ping\n    - seconds: " + itoa(seconds) + "\n"
	}
	steps := []struct {
		sls     string
		test    bool
		result  any
		comment string
		changes string // JSON of the changes; "" when any
		job     string // JSON of schedule.list's job1 after the step, "-" when absent
	}{
		{sls: present(3600), test: true, result: true, comment: "Job: job1 would be added to schedule.", changes: `{}`, job: "-"},
		{sls: present(3600), result: true, comment: "Adding new job job1 to schedule", changes: `{"job1":"added"}`,
			job: `{"function":"test.ping","seconds":3600,"maxrunning":1,"name":"job1","enabled":true,"jid_include":true}`},
		{sls: present(3600), result: true, comment: "Job job1 in correct state", changes: `{}`,
			job: `{"function":"test.ping","seconds":3600,"maxrunning":1,"name":"job1","enabled":true,"jid_include":true}`},
		{sls: present(60), test: true, result: true, comment: "Job: job1 would be modified in schedule.",
			job: `{"function":"test.ping","seconds":3600,"maxrunning":1,"name":"job1","enabled":true,"jid_include":true}`},
		{sls: present(60), result: true, comment: "Modifying job job1 in schedule",
			job: `{"function":"test.ping","seconds":60,"maxrunning":1,"name":"job1","enabled":true,"jid_include":true}`},
		{sls: "job1:\n  schedule.disabled: []\n", result: true, comment: "Disabled job job1 from schedule", changes: `{}`,
			job: `{"function":"test.ping","seconds":60,"maxrunning":1,"name":"job1","enabled":false,"jid_include":true}`},
		{sls: "job1:\n  schedule.enabled: []\n", test: true, result: true, comment: "Job: job1 would be enabled in schedule.", changes: `{}`,
			job: `{"function":"test.ping","seconds":60,"maxrunning":1,"name":"job1","enabled":false,"jid_include":true}`},
		{sls: "job1:\n  schedule.enabled: []\n", result: true, comment: "Enabled job job1 from schedule", changes: `{}`,
			job: `{"function":"test.ping","seconds":60,"maxrunning":1,"name":"job1","enabled":true,"jid_include":true}`},
		{sls: "job1:\n  schedule.absent: []\n", result: true, comment: "Removed job job1 from schedule", changes: `{"job1":"removed"}`, job: "-"},
		{sls: "job1:\n  schedule.absent: []\n", result: true, comment: "Job job1 not present in schedule", changes: `{}`, job: "-"},
		{sls: "job1:\n  schedule.enabled: []\n", result: true, comment: "Job job1 not present in schedule", changes: `{}`, job: "-"},
	}
	for i, st := range steps {
		args := []any{st.sls}
		if st.test {
			args = append(args, payload.NewMap("__kwarg__", true, "test", true))
		}
		res := reg.Execute(context.Background(), modules.Binder{}, env, "state.template_str", args, nil)
		running, ok := res.Return.(*payload.Map)
		if !ok || running.Len() != 1 {
			t.Fatalf("step %d: state.template_str returned %v", i, res.Return)
		}
		ret := running.Items()[0].Value.(*payload.Map)
		r, _ := ret.Get("result")
		if r != st.result || ret.Str("comment") != st.comment {
			t.Errorf("step %d %q: result %v comment %q; want %v %q", i, st.sls, r, ret.Str("comment"), st.result, st.comment)
		}
		ch, _ := json.Marshal(ret.Map("changes"))
		if st.changes != "" && string(ch) != st.changes {
			t.Errorf("step %d: changes %s; want %s", i, ch, st.changes)
		}
		if st.changes == "" && !strings.Contains(string(ch), `"old"`) {
			t.Errorf("step %d: changes %s; want the job's old and new", i, ch)
		}
		lr := reg.Execute(context.Background(), modules.Binder{}, env, "schedule.list",
			[]any{payload.NewMap("__kwarg__", true, "return_yaml", false, "show_all", true)}, nil)
		job := "-"
		if j, ok := lr.Return.(*payload.Map).Get("job1"); ok {
			b, _ := json.Marshal(j)
			job = string(b)
		}
		if job != st.job {
			t.Errorf("step %d: job1 listed as %s; want %s", i, job, st.job)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "minion.d", "_schedule.conf")); err != nil {
		t.Errorf("the schedule was not saved (persist defaults to True): %v", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

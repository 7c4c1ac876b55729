package schedule

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func req(kv ...any) *payload.Map { return payload.NewMap(kv...) }

func jobNames(t *testing.T, res *payload.Map) []string {
	t.Helper()
	s := res.Map("schedule")
	if s == nil {
		t.Fatalf("no schedule in %v", res)
	}
	var out []string
	for _, it := range s.Items() {
		out = append(out, payload.KeyString(it.Key))
	}
	return out
}

// TestManageSchedule walks the manage_schedule requests in order, each
// checked on the completion data and on _schedule.conf.
func TestManageSchedule(t *testing.T) {
	dir := t.TempDir()
	pillar := payload.NewMap("schedule", payload.NewMap("pj", payload.NewMap("function", "test.ping", "seconds", int64(60))))
	m := New(Options{
		Opts: payload.NewMap("conf_file", filepath.Join(dir, "proxy"), "default_include", "proxy.d/sw1/*.conf",
			"schedule", payload.NewMap("cfg", payload.NewMap("function", "test.ping", "minutes", int64(5)))),
		Pillar: func() *payload.Map { return pillar },
		Logger: quiet(),
	})
	file := filepath.Join(dir, "proxy.d", "sw1", "_schedule.conf")
	if m.File() != file {
		t.Fatalf("File() = %s, want %s", m.File(), file)
	}
	ctx := context.Background()
	do := func(r *payload.Map) *payload.Map {
		t.Helper()
		res, err := m.ManageSchedule(ctx, r)
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if !res.Bool("complete") {
			t.Fatalf("%v: not complete: %v", r, res)
		}
		return res
	}
	saved := func() string {
		t.Helper()
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	steps := []struct {
		name      string
		req       *payload.Map
		wantJobs  []string
		wantSaved string // "" = not checked
	}{
		{"list all", req("func", "list"), []string{"pj", "cfg"}, ""},
		{"list opts", req("func", "list", "where", "opts"), []string{"cfg"}, ""},
		{"list pillar", req("func", "list", "where", "pillar"), []string{"pj"}, ""},
		{"add", req("func", "add", "persist", true, "schedule", payload.NewMap("job1",
			payload.NewMap("function", "net.load_config", "kwargs", payload.NewMap("commit_jid", "20261122", "replace", false), "once", "2026-11-22T18:00:00"))),
			[]string{"pj", "cfg", "job1"},
			"schedule:\n  cfg: {function: test.ping, minutes: 5}\n  job1:\n    enabled: true\n    function: net.load_config\n    kwargs: {commit_jid: '20261122', replace: false}\n    once: '2026-11-22T18:00:00'\n"},
		{"disable_job", req("func", "disable_job", "name", "job1"), []string{"pj", "cfg", "job1"},
			"schedule:\n  cfg: {function: test.ping, minutes: 5}\n  job1:\n    enabled: false\n    function: net.load_config\n    kwargs: {commit_jid: '20261122', replace: false}\n    once: '2026-11-22T18:00:00'\n"},
		{"delete a pillar job changes nothing", req("func", "delete", "name", "pj"), []string{"pj", "cfg", "job1"}, ""},
		{"delete", req("func", "delete", "name", "job1"), []string{"pj", "cfg"},
			"schedule:\n  cfg: {function: test.ping, minutes: 5}\n"},
		{"modify", req("func", "modify", "name", "cfg", "schedule", payload.NewMap("function", "test.echo", "seconds", int64(7))), []string{"pj", "cfg"},
			"schedule:\n  cfg: {function: test.echo, seconds: 7}\n"},
		{"disable the schedule", req("func", "disable"), []string{"pj", "cfg", "enabled"},
			"schedule:\n  cfg: {function: test.echo, seconds: 7}\n  enabled: false\n"},
		{"enable without persisting", req("func", "enable", "persist", false), []string{"pj", "cfg", "enabled"},
			"schedule:\n  cfg: {function: test.echo, seconds: 7}\n  enabled: false\n"},
	}
	for _, s := range steps {
		res := do(s.req)
		if got := jobNames(t, res); !reflect.DeepEqual(got, s.wantJobs) {
			t.Errorf("%s: jobs %v, want %v", s.name, got, s.wantJobs)
		}
		if s.wantSaved != "" {
			if got := saved(); got != s.wantSaved {
				t.Errorf("%s: saved\n%s\nwant\n%s", s.name, got, s.wantSaved)
			}
		}
	}
	if res := do(req("func", "list")); !res.Map("schedule").Bool("enabled") {
		t.Errorf("enable not applied: %v", res)
	}

	// A pillar job stays what the pillar says.
	do(req("func", "disable_job", "name", "pj"))
	if v, _ := do(req("func", "list")).Map("schedule").Map("pj").Get("enabled"); v != nil {
		t.Errorf("pillar job changed: enabled=%v", v)
	}

	// Bad requests are errors, not silent successes.
	for _, bad := range []*payload.Map{
		req("func", "add", "schedule", "notadict"),
		req("func", "add", "schedule", payload.NewMap("a", payload.NewMap(), "b", payload.NewMap())),
		req("func", "frobnicate"),
	} {
		if _, err := m.ManageSchedule(ctx, bad); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%v: err %v, want ErrBadRequest", bad, err)
		}
	}
}

// TestNextFireTimeAndStatus checks get_next_fire_time, job_status,
// postpone_job and skip_job on an evaluated job.
func TestNextFireTimeAndStatus(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var runs []string
	m := New(Options{
		Opts: payload.NewMap("conf_file", filepath.Join(t.TempDir(), "minion"),
			"schedule", payload.NewMap("j", payload.NewMap("function", "test.ping", "seconds", int64(30)))),
		Now:    func() time.Time { return now },
		Logger: quiet(),
		Run:    func(_ context.Context, j Job) { runs = append(runs, pytimeFmt(now)+" "+j.Fun) },
	})
	ctx := context.Background()
	m.Eval(ctx, now)
	res, _ := m.ManageSchedule(ctx, req("func", "get_next_fire_time", "name", "j"))
	if v, _ := res.Get("next_fire_time"); v != "2026-11-22T10:00:30" {
		t.Errorf("next_fire_time %v", res)
	}
	res, _ = m.ManageSchedule(ctx, req("func", "get_next_fire_time", "name", "nope"))
	if v, ok := res.Get("next_fire_time"); !ok || v != nil {
		t.Errorf("unknown job next_fire_time %v", res)
	}
	// skip the 10:00:30 run, postpone... the next one to 10:01:10.
	m.ManageSchedule(ctx, req("func", "skip_job", "name", "j", "time", "2026-11-22T10:00:30"))
	m.ManageSchedule(ctx, req("func", "postpone_job", "name", "j", "time", "2026-11-22T10:01:00", "new_time", "2026-11-22T10:01:10"))
	for i := 1; i <= 100; i++ {
		now = time.Date(2026, 11, 22, 10, 0, i, 0, time.UTC)
		m.Eval(ctx, now)
	}
	// The interval restarts from the postponed run.
	want := []string{"2026-11-22T10:01:10 test.ping", "2026-11-22T10:01:40 test.ping"}
	if !reflect.DeepEqual(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
	st, _ := m.ManageSchedule(ctx, req("func", "job_status", "name", "j"))
	data := st.Map("data")
	if data.Str("_last_run") != "2026-11-22T10:01:40" || data.Str("_next_fire_time") != "2026-11-22T10:02:10" || data.Str("function") != "test.ping" || data.Str("name") != "j" {
		t.Errorf("job_status %v", data)
	}
	if st, _ := m.ManageSchedule(ctx, req("func", "job_status", "name", "nope")); st.Map("data").Len() != 0 {
		t.Errorf("unknown job status %v", st)
	}
}

func pytimeFmt(t time.Time) string { return t.Format("2006-01-02T15:04:05") }

// TestRunLoop runs the scheduler on the real clock: idle until a job is
// added, then the job runs; run_job runs a job at once.
func TestRunLoop(t *testing.T) {
	var mu sync.Mutex
	ran := map[string]int{}
	m := New(Options{
		Opts:   payload.NewMap("loop_interval", 0.05, "conf_file", filepath.Join(t.TempDir(), "minion")),
		Logger: quiet(),
		Run: func(_ context.Context, j Job) {
			mu.Lock()
			ran[j.Name]++
			mu.Unlock()
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	count := func(n string) int { mu.Lock(); defer mu.Unlock(); return ran[n] }
	once := time.Now().Add(1500 * time.Millisecond).Format("2006-01-02T15:04:05")
	if _, err := m.ManageSchedule(ctx, req("func", "add", "persist", false, "schedule",
		payload.NewMap("soon", payload.NewMap("function", "test.ping", "once", once)))); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(5*time.Second, func() bool { return count("soon") > 0 })
	if count("soon") != 1 {
		t.Errorf("once job ran %d times", count("soon"))
	}
	m.ManageSchedule(ctx, req("func", "add", "persist", false, "schedule",
		payload.NewMap("later", payload.NewMap("function", "test.ping", "hours", int64(1)))))
	m.ManageSchedule(ctx, req("func", "run_job", "name", "later"))
	if count("later") != 1 {
		t.Errorf("run_job: later ran %d times", count("later"))
	}
	// A negative check: no job runs again within many loop intervals.
	time.Sleep(200 * time.Millisecond)
	if count("soon") != 1 || count("later") != 1 {
		t.Errorf("extra runs: %v", ran)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
	if strings.Contains(m.File(), "minion.d") == false {
		t.Errorf("file %s", m.File())
	}
}

// TestLoopOnlyWithJobs checks that no loop runs while the schedule is
// empty: it starts with the first job and ends after the last is deleted.
func TestLoopOnlyWithJobs(t *testing.T) {
	m := New(Options{Opts: payload.NewMap("loop_interval", 0.02, "conf_file", filepath.Join(t.TempDir(), "minion")), Logger: quiet()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx)
	time.Sleep(50 * time.Millisecond) // a negative check: no loop starts within a few intervals
	if m.looping.Load() {
		t.Fatal("a loop runs for an empty schedule")
	}
	m.ManageSchedule(ctx, req("func", "add", "persist", false, "schedule", payload.NewMap("j", payload.NewMap("function", "test.ping", "hours", int64(1)))))
	if !m.looping.Load() {
		t.Fatal("no loop after a job was added")
	}
	m.ManageSchedule(ctx, req("func", "delete", "persist", false, "name", "j"))
	testutil.Eventually(t, 5*time.Second, func() bool { return !m.looping.Load() }, "the loop to end with no job left")
}

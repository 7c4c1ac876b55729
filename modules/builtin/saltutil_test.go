package builtin_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

type fakeJobs struct {
	mu      sync.Mutex
	jobs    []*payload.Map
	signals map[string]int
}

func (f *fakeJobs) Running() []*payload.Map {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.jobs
}

func (f *fakeJobs) Signal(jid string, sig int) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range f.jobs {
		if j.Str("jid") == jid {
			f.signals[jid] = sig
			pid, _ := j.Int("pid")
			return int(pid), true
		}
	}
	return 0, false
}

// fakeFinder is a job table that answers find_job by jid only.
type fakeFinder struct {
	fakeJobs
	found []string
}

func (f *fakeFinder) RunningJob(jid string) (*payload.Map, bool) {
	f.found = append(f.found, jid)
	for _, j := range f.jobs {
		if j.Str("jid") == jid {
			return j, true
		}
	}
	return nil, false
}

// TestSaltutilFindJobByJID: find_job asks a JobFinder for the one job.
func TestSaltutilFindJobByJID(t *testing.T) {
	r := registry(t)
	jobs := &fakeFinder{fakeJobs: fakeJobs{jobs: []*payload.Map{
		payload.NewMap("pid", int64(4242), "fun", "test.sleep", "jid", "12345"),
		payload.NewMap("pid", int64(4242), "fun", "test.ping", "jid", "20260101000000000002"),
	}}}
	env := &modules.Env{ID: "m1", Registry: r, Services: map[string]any{"jobs": jobs}}
	cases := []struct {
		jid  any
		want string
	}{
		{"20260101000000000002", "test.ping"},
		{int64(12345), "test.sleep"},
		{"20269999999999999999", ""},
		{"", ""},
	}
	for _, tc := range cases {
		got, _ := r.Execute(context.Background(), modules.Binder{}, env, "saltutil.find_job", []any{tc.jid}, nil).Return.(*payload.Map)
		if got.Str("fun") != tc.want || (tc.want == "" && got.Len() != 0) {
			t.Errorf("find_job %v: %s, want fun %q", tc.jid, jsonText(got), tc.want)
		}
	}
	if len(jobs.found) != len(cases) {
		t.Errorf("RunningJob called for %v, want every find_job", jobs.found)
	}
}

type fakePillar struct {
	mu        sync.Mutex
	refreshes []bool
	compiled  []any
	fresh     *payload.Map
}

func (f *fakePillar) CompilePillar(_ context.Context, pillarenv any, override *payload.Map) (*payload.Map, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compiled = append(f.compiled, pillarenv)
	out := f.fresh.Clone()
	if override != nil {
		for _, it := range override.Items() {
			out.SetKey(it.Key, it.Value)
		}
	}
	return out, nil
}

func (f *fakePillar) RefreshPillar(_ context.Context, wait bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes = append(f.refreshes, wait)
	return nil
}

func TestSaltutilJobs(t *testing.T) {
	r := registry(t)
	jobs := &fakeJobs{signals: map[string]int{}, jobs: []*payload.Map{
		payload.NewMap("pid", int64(4242), "fun", "test.sleep", "arg", []any{int64(30)}, "tgt", "m1", "jid", "20260101000000000001", "ret", "", "tgt_type", "glob", "user", "root"),
		payload.NewMap("pid", int64(4242), "fun", "cmd.run", "arg", []any{"sleep 9"}, "tgt", "m1", "jid", "20260101000000000002"),
	}}
	env := &modules.Env{ID: "m1", Registry: r, Services: map[string]any{"jobs": jobs}}
	run := func(fun string, args ...any) any {
		return r.Execute(context.Background(), modules.Binder{}, env, fun, args, nil).Return
	}
	if got := run("saltutil.find_job", "20260101000000000001").(*payload.Map); got.Str("fun") != "test.sleep" {
		t.Errorf("find_job: %s", jsonText(got))
	}
	if got := run("saltutil.find_job", "20269999999999999999").(*payload.Map); got.Len() != 0 {
		t.Errorf("find_job of an unknown jid: %s", jsonText(got))
	}
	if got := run("saltutil.running").([]any); len(got) != 2 {
		t.Errorf("running: %v", got)
	}
	if got := run("saltutil.is_running", "cmd.*").([]any); len(got) != 1 {
		t.Errorf("is_running: %v", got)
	}
	tests := []struct {
		fun  string
		args []any
		want string
		sig  int
	}{
		{"saltutil.kill_job", []any{"20260101000000000001"}, "Signal 9 sent to job 20260101000000000001 at pid 4242", 9},
		{"saltutil.term_job", []any{"20260101000000000002"}, "Signal 15 sent to job 20260101000000000002 at pid 4242", 15},
		{"saltutil.signal_job", []any{"20260101000000000002", "2"}, "Signal 2 sent to job 20260101000000000002 at pid 4242", 2},
		{"saltutil.kill_job", []any{"nope"}, "", 0},
	}
	for _, tc := range tests {
		if got := run(tc.fun, tc.args...); got != tc.want {
			t.Errorf("%s%v = %q, want %q", tc.fun, tc.args, got, tc.want)
		}
		if tc.sig != 0 && jobs.signals[payload.Text(tc.args[0])] != tc.sig {
			t.Errorf("%s delivered %d", tc.fun, jobs.signals[payload.Text(tc.args[0])])
		}
	}
}

func TestSaltutilProcDirFallback(t *testing.T) {
	r := registry(t)
	cache := t.TempDir()
	proc := filepath.Join(cache, "proc")
	os.MkdirAll(proc, 0o700)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	write := func(jid string, pid int) {
		b, _ := payload.Marshal(payload.NewMap("pid", int64(pid), "fun", "test.sleep", "jid", jid))
		os.WriteFile(filepath.Join(proc, jid), b, 0o600)
	}
	write("20260101000000000001", dead.Process.Pid)
	write("20260101000000000002", os.Getppid())
	write("20260101000000000003", os.Getpid())
	os.WriteFile(filepath.Join(proc, "20260101000000000004"), nil, 0o600)
	env := &modules.Env{ID: "m1", Registry: r, Opts: payload.NewMap("cachedir", cache)}
	res := r.Execute(context.Background(), modules.Binder{}, env, "saltutil.running", nil, nil)
	l, _ := res.Return.([]any)
	if len(l) != 1 || l[0].(*payload.Map).Str("jid") != "20260101000000000002" {
		t.Fatalf("running: %v", res.Return)
	}
	for _, jid := range []string{"20260101000000000001", "20260101000000000004"} {
		if _, err := os.Stat(filepath.Join(proc, jid)); !os.IsNotExist(err) {
			t.Errorf("stale proc file %s kept", jid)
		}
	}
	res = r.Execute(context.Background(), modules.Binder{}, env, "saltutil.signal_job", []any{"20260101000000000002", int64(0)}, nil)
	if res.Return != "Signal 0 sent to job 20260101000000000002 at pid "+strconv.Itoa(os.Getppid()) {
		t.Errorf("signal 0: %v", res.Return)
	}
}

func TestSaltutilSyncAndRefresh(t *testing.T) {
	r := registry(t)
	st := &fakePillar{fresh: &payload.Map{}}
	env := &modules.Env{ID: "m1", Registry: r, Opts: payload.NewMap("file_client", "remote"), Services: map[string]any{"pillar": st}}
	res := r.Execute(context.Background(), modules.Binder{}, env, "saltutil.sync_all", nil, nil)
	m, _ := res.Return.(*payload.Map)
	want := "clouds,beacons,modules,states,sdb,grains,renderers,returners,output,utils,log_handlers,executors,proxymodules,engines,thorium,serializers,matchers"
	if m == nil || strings.Join(m.Keys(), ",") != want {
		t.Fatalf("sync_all keys: %v", res.Return)
	}
	for _, it := range m.Items() {
		if l, ok := it.Value.([]any); !ok || len(l) != 0 {
			t.Errorf("sync_all %v = %v", it.Key, it.Value)
		}
	}
	if len(st.refreshes) != 1 || st.refreshes[0] {
		t.Errorf("sync_all refreshes %v", st.refreshes)
	}
	res = r.Execute(context.Background(), modules.Binder{}, env, "saltutil.sync_all", []any{payload.NewMap("__kwarg__", true, "refresh", false)}, nil)
	if len(st.refreshes) != 1 {
		t.Errorf("refresh=False still refreshed")
	}
	res = r.Execute(context.Background(), modules.Binder{}, env, "saltutil.refresh_pillar", []any{payload.NewMap("__kwarg__", true, "wait", true, "timeout", int64(1))}, nil)
	if res.Return != true || len(st.refreshes) != 2 || !st.refreshes[1] {
		t.Errorf("refresh_pillar wait: %v %v", res.Return, st.refreshes)
	}
	if res = r.Execute(context.Background(), modules.Binder{}, env, "saltutil.sync_modules", nil, nil); len(res.Return.([]any)) != 0 {
		t.Errorf("sync_modules: %v", res.Return)
	}
	_ = time.Second
}

func jsonText(m *payload.Map) string {
	b, _ := m.MarshalJSON()
	return string(b)
}

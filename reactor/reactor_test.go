package reactor_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/reactor"
	"github.com/gsalt/gsalt/wire/payload"
)

func testLogger() *slog.Logger {
	if os.Getenv("GSALT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// fakeLocal records published jobs. When block is set, Publish waits on
// it; when onPublish is set it runs after recording.
type fakeLocal struct {
	mu        sync.Mutex
	reqs      []master.PublishRequest
	block     chan struct{}
	onPublish func(req master.PublishRequest)
	n         atomic.Int64
	jid       atomic.Int64
}

func (f *fakeLocal) Publish(ctx context.Context, req master.PublishRequest) (string, []string, []string, error) {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return "", nil, nil, ctx.Err()
		}
	}
	if req.JID == "" {
		req.JID = fmt.Sprintf("2024050110000%07d", f.jid.Add(1))
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	f.n.Add(1)
	if f.onPublish != nil {
		f.onPublish(req)
	}
	return req.JID, []string{"m1"}, nil, nil
}

func (f *fakeLocal) all() []master.PublishRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]master.PublishRequest(nil), f.reqs...)
}

// fakeRunner records runner calls and fires the events RunRunner fires.
type fakeRunner struct {
	bus   *event.Bus
	mu    sync.Mutex
	calls []string
}

func (f *fakeRunner) RunRunner(_ context.Context, jid, fun string, args []any, kwargs *payload.Map, user string) *payload.Map {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s %v %s", fun, user, args, kwargs.Keys()))
	f.mu.Unlock()
	d := payload.NewMap("fun", "runner."+fun, "jid", jid, "user", user, "fun_args", []any{})
	f.bus.Publish(event.Event{Tag: "salt/run/" + jid + "/new", Data: d})
	ret := d.Clone().Set("return", true).Set("success", true)
	f.bus.Publish(event.Event{Tag: "salt/run/" + jid + "/ret", Data: ret})
	return ret
}

func (f *fakeRunner) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond (the test fails after a generous deadline).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 20*time.Second, cond, what)
}

// quiet waits until the reactor's counters stop moving.
func quiet(t testing.TB, r *reactor.Reactor) reactor.Stats {
	t.Helper()
	prev := r.Stats()
	for range 1000 {
		// Settling means no change over an interval, so this waits one
		// interval between two looks.
		time.Sleep(30 * time.Millisecond) // settling is "no change over an interval"
		cur := r.Stats()
		if cur == prev && cur.QueueLen == 0 {
			return cur
		}
		prev = cur
	}
	t.Fatal("reactor never settled")
	return prev
}

var jidSeq atomic.Int64

func newJID() string { return fmt.Sprintf("2024050111000%07d", jidSeq.Add(1)) }

func startReactor(t testing.TB, o reactor.Options) *reactor.Reactor {
	t.Helper()
	if o.Logger == nil {
		o.Logger = testLogger()
	}
	r, err := reactor.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestReactionsFromEvents(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "start.sls"), "sync_grains:\n  local.saltutil.sync_grains:\n    - tgt: {{ data['id'] }}\n")
	writeFile(t, filepath.Join(dir, "jobs.sls"), "list:\n  runner.jobs.list_jobs:\n    - args:\n      - search_function: {{ data['data']['fun'] }}\n")
	writeFile(t, filepath.Join(dir, "srv", "reactor", "url.sls"), "from_url:\n  local.test.ping:\n    - tgt: {{ tag.split('/')[1] }}\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	local := &fakeLocal{}
	runner := &fakeRunner{bus: bus}
	roots := fileserver.New(fileserver.Options{Roots: map[string][]string{"base": {filepath.Join(dir, "srv")}}})
	r := startReactor(t, reactor.Options{
		Bus: bus,
		Map: []any{
			map[string]any{"salt/minion/*/start": []any{filepath.Join(dir, "start.sls")}},
			map[string]any{"run/jobs": filepath.Join(dir, "jobs.sls")},
			map[string]any{"url/*": []any{"salt://reactor/url.sls"}},
			"not a dict",
		},
		Compiler: &reactor.Compiler{Files: reactor.RootsFiles{Roots: roots}},
		Local:    local, Runner: runner, NewJID: newJID,
	})
	bus.Publish(event.Event{Tag: "salt/minion/m7/start", Data: payload.NewMap("id", "m7")})
	bus.Publish(event.Event{Tag: "run/jobs", Data: payload.NewMap("id", "m7", "data", payload.NewMap("fun", "test.*"))})
	bus.Publish(event.Event{Tag: "url/web2", Data: payload.NewMap()})
	bus.Publish(event.Event{Tag: "unrelated/tag", Data: payload.NewMap()})
	// The reactor's own runner events are ignored even when they match.
	bus.Publish(event.Event{Tag: "run/jobs", Data: payload.NewMap("user", reactor.EventUser, "data", payload.NewMap("fun", "x"))})
	waitFor(t, "two jobs and a runner", func() bool { return local.n.Load() == 2 && len(runner.all()) == 1 })
	st := quiet(t, r)
	reqs := local.all()
	byFun := map[string]master.PublishRequest{}
	for _, q := range reqs {
		byFun[q.Fun.(string)] = q
	}
	if q := byFun["saltutil.sync_grains"]; q.Tgt != "m7" || q.TgtType != "glob" || q.Timeout != 5 || q.Kwargs.Str("__id__") != "sync_grains" || q.JID == "" || !q.Queued {
		t.Errorf("sync_grains job %+v", q)
	}
	if q := byFun["test.ping"]; q.Tgt != "web2" || q.Kwargs.Str("__sls__") != filepath.Join(dir, "srv", "reactor", "url.sls") {
		t.Errorf("salt:// reaction %+v", q)
	}
	if got := runner.all(); got[0] != "jobs.list_jobs Reactor [] [search_function]" {
		t.Errorf("runner calls %q", got)
	}
	if st.Own != 1 || st.Matched != 3 || st.Local != 2 || st.Runner != 1 || st.Failed != 0 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
	if got := r.ListReactors("salt/minion/x/start"); len(got) != 1 {
		t.Errorf("ListReactors %q", got)
	}
}

func TestMissingClientsAndBadReactions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.sls"), "w:\n  wheel.key.delete:\n    - args:\n      - match: m1\nc:\n  caller.test.ping: []\nno_tgt:\n  local.test.ping: []\n")
	writeFile(t, filepath.Join(dir, "broken.sls"), "{% if %}\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	r := startReactor(t, reactor.Options{Bus: bus, Map: []any{
		map[string]any{"t": []any{filepath.Join(dir, "a.sls"), filepath.Join(dir, "broken.sls"), filepath.Join(dir, "none.sls")}},
	}})
	bus.Publish(event.Event{Tag: "t", Data: payload.NewMap()})
	waitFor(t, "the event to be handled", func() bool { return r.Stats().Rendered == 1 })
	st := quiet(t, r)
	// no tgt (built: refused), no caller, no wheel client: three failures;
	// the broken and the missing file: two render problems.
	if st.Failed != 3 || st.RenderErrors != 2 || st.Local+st.Wheel+st.Caller != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestQueueOverflowNeverBlocksTheBus(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.sls"), "p:\n  local.test.ping:\n    - tgt: {{ data['n'] }}\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	local := &fakeLocal{block: make(chan struct{})}
	r := startReactor(t, reactor.Options{Bus: bus, Local: local, Workers: 1, QueueSize: 2,
		Map: []any{map[string]any{"flood/*": []any{filepath.Join(dir, "a.sls")}}}})
	const n = 50
	for i := range n {
		// Distinct tags: the rate limiter stays out of the way.
		bus.Publish(event.Event{Tag: fmt.Sprintf("flood/%d", i), Data: payload.NewMap("n", int64(i))})
	}
	// Every event was read although the only worker is stuck.
	waitFor(t, "all events read", func() bool { return r.Stats().Received == n })
	st := r.Stats()
	if st.Dropped == 0 || st.Queued+st.Dropped != n || st.QueueCap != 2 || st.Queued > 3 {
		t.Fatalf("stats %+v", st)
	}
	close(local.block)
	waitFor(t, "queued events handled", func() bool { return local.n.Load() == int64(st.Queued) })
}

func TestRateLimitPerTagFileAndMinion(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.sls"), "p:\n  local.test.ping:\n    - tgt: x\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	local := &fakeLocal{}
	var now atomic.Int64
	now.Store(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	r := startReactor(t, reactor.Options{Bus: bus, Local: local,
		Loop: reactor.LoopOptions{Burst: 3, Rate: 1, Now: clock},
		Map: []any{
			map[string]any{"salt/job/*/ret/*": []any{filepath.Join(dir, "a.sls")}},
			map[string]any{"same": []any{filepath.Join(dir, "a.sls")}},
			map[string]any{"same": []any{filepath.Join(dir, "a.sls")}, "x": 1}, // two keys: skipped, as in Salt
		}})
	fire := func(tag, id string) {
		bus.Publish(event.Event{Tag: tag, Data: payload.NewMap("id", id)})
	}
	for range 10 {
		fire("same", "m1")
	}
	fire("same", "m2") // another minion has its own budget
	for i := range 5 {
		// Job ids are generalised: one key for m1's returns.
		fire(fmt.Sprintf("salt/job/2024050112000000000%d/ret/m1", i), "m1")
	}
	waitFor(t, "events read", func() bool { return r.Stats().Received == 16 })
	st := quiet(t, r)
	// m1: 3 of 10; m2: 1; the returns: 3 of 5.
	if local.n.Load() != 7 || st.Suppressed != 9 || st.Matched != 16 {
		t.Fatalf("published %d, stats %+v", local.n.Load(), st)
	}
	now.Add(int64(2 * time.Second)) // two tokens back
	for range 3 {
		fire("same", "m1")
	}
	waitFor(t, "events read", func() bool { return r.Stats().Received == 19 })
	st = quiet(t, r)
	if local.n.Load() != 9 || st.Suppressed != 10 {
		t.Fatalf("after refill: published %d, stats %+v", local.n.Load(), st)
	}
}

// TestLoopDetected: a reaction whose job fires the same tag again (like a
// local.event.send reaction) is an endless loop in Salt; here it is
// detected through the job's __pub_jid and cut to the loop budget.
func TestLoopDetected(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "loop.sls"), "again:\n  local.event.send:\n    - tgt: m1\n    - arg: [loop/tag]\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	local := &fakeLocal{}
	local.onPublish = func(req master.PublishRequest) {
		// What the minion's event.send puts on the master bus.
		bus.Publish(event.Event{Tag: "loop/tag", Data: payload.NewMap("id", "m1", "cmd", "_minion_event",
			"data", payload.NewMap("__pub_jid", req.JID, "__pub_fun", "event.send"))})
	}
	r := startReactor(t, reactor.Options{Bus: bus, Local: local, NewJID: newJID,
		Loop: reactor.LoopOptions{LoopBurst: 2, LoopRate: 1e-6},
		Map:  []any{map[string]any{"loop/tag": []any{filepath.Join(dir, "loop.sls")}}}})
	bus.Publish(event.Event{Tag: "loop/tag", Data: payload.NewMap("id", "m1")})
	waitFor(t, "the loop to be cut", func() bool { return r.Stats().Suppressed == 1 })
	st := quiet(t, r)
	// The original reaction, then LoopBurst looped ones.
	if local.n.Load() != 3 || st.Loops != 3 || st.Suppressed != 1 {
		t.Fatalf("published %d, stats %+v", local.n.Load(), st)
	}
	// An unrelated event with the same tag still reacts.
	bus.Publish(event.Event{Tag: "loop/tag", Data: payload.NewMap("id", "m2")})
	waitFor(t, "the fresh event", func() bool { return local.n.Load() >= 4 })
}

func TestManageRequests(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.sls"), "p:\n  local.test.ping:\n    - tgt: x\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	local := &fakeLocal{}
	r := startReactor(t, reactor.Options{Bus: bus, Local: local, MasterKey: "k3y", MasterID: "mid", Map: []any{}})
	sub := bus.Subscribe(event.Prefix("salt/reactors/manage/"), 64)
	defer sub.Close()
	ask := func(verb string, data *payload.Map, reply string) *payload.Map {
		t.Helper()
		// The reactor runner fires its requests namespaced under its jid.
		bus.Publish(event.Event{Tag: "salt/run/20240501130000000001/salt/reactors/manage/" + verb, Data: data})
		for {
			select {
			case ev := <-sub.C():
				if ev.Tag == "salt/reactors/manage/"+reply {
					return ev.Data
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no %s reply to %s", reply, verb)
			}
		}
	}
	res := ask("add", payload.NewMap("event", "added/*", "reactors", []any{filepath.Join(dir, "a.sls")}, "key", "k3y"), "add-complete")
	if res.Map("result").Str("comment") != "Reactor added." || len(res.List("reactors")) != 1 {
		t.Fatalf("add: %v", res)
	}
	if res := ask("add", payload.NewMap("event", "added/*", "reactors", []any{}, "key", "k3y"), "add-complete"); res.Map("result").Str("comment") != "Reactor already exists." {
		t.Fatalf("second add: %v", res)
	}
	bus.Publish(event.Event{Tag: "added/1", Data: payload.NewMap()})
	waitFor(t, "the added reactor", func() bool { return local.n.Load() == 1 })
	if res := ask("list", payload.NewMap("key", "k3y"), "list-results"); len(res.List("reactors")) != 1 {
		t.Fatalf("list: %v", res)
	}
	if res := ask("set_leader", payload.NewMap("id", "mid", "value", false, "key", "k3y"), "leader/value"); res.Bool("result") {
		t.Fatalf("set_leader: %v", res)
	}
	if res := ask("is_leader", payload.NewMap("key", "k3y"), "leader/value"); res.Bool("result") || r.Leader() {
		t.Fatalf("is_leader: %v", res)
	}
	before := r.Stats().Received
	bus.Publish(event.Event{Tag: "added/2", Data: payload.NewMap()}) // not the leader: ignored
	waitFor(t, "the event", func() bool { return r.Stats().Received > before })
	r.SetLeader(true)
	// A request without the key is discarded: the reactor survives it.
	bus.Publish(event.Event{Tag: "salt/reactors/manage/delete", Data: payload.NewMap("event", "added/*", "key", "wrong")})
	if res := ask("delete", payload.NewMap("event", "added/*", "key", "k3y"), "delete-complete"); res.Map("result").Str("comment") != "Reactor deleted." {
		t.Fatalf("delete: %v", res)
	}
	if res := ask("delete", payload.NewMap("event", "added/*", "key", "k3y"), "delete-complete"); res.Map("result").Str("comment") != "Reactor does not exists." {
		t.Fatalf("second delete: %v", res)
	}
	bus.Publish(event.Event{Tag: "added/3", Data: payload.NewMap()})
	quiet(t, r)
	if local.n.Load() != 1 {
		t.Fatalf("published %d", local.n.Load())
	}
}

func TestMapFileRefresh(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.sls"), "p:\n  local.test.ping:\n    - tgt: x\n")
	mapFile := filepath.Join(dir, "reactor.yaml")
	writeFile(t, mapFile, "- first/tag:\n  - "+filepath.Join(dir, "a.sls")+"\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	local := &fakeLocal{}
	r := startReactor(t, reactor.Options{Bus: bus, Local: local, Map: mapFile, RefreshInterval: 10 * time.Millisecond})
	if got := r.ListReactors("first/tag"); len(got) != 1 {
		t.Fatalf("ListReactors %q", got)
	}
	if res := r.Add("x", []any{}); res.Bool("status") {
		t.Fatalf("add to a map file: %v", res)
	}
	writeFile(t, mapFile, "- second/tag: "+filepath.Join(dir, "a.sls")+"\n# longer, so the size changes\n")
	waitFor(t, "the map file to be re-read", func() bool { return len(r.ListReactors("second/tag")) == 1 })
	bus.Publish(event.Event{Tag: "second/tag", Data: payload.NewMap()})
	waitFor(t, "the reaction", func() bool { return local.n.Load() == 1 })
}

func TestCallerReactionWithModules(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.sls"), "touch:\n  caller.rec.it:\n    - args:\n      - name: {{ salt['rec.echo']('via-template') }}\nold:\n  caller.rec.it:\n    - args: [positional]\n")
	var mu sync.Mutex
	var got []string
	reg := modules.NewRegistry()
	err := reg.Register(
		modules.Function{Name: "rec.it", Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}}}, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			mu.Lock()
			got = append(got, c.Args.Str("name")+"@"+c.Env.ID)
			mu.Unlock()
			return true, nil
		}},
		modules.Function{Name: "rec.echo", Spec: modules.Spec{Params: []modules.Param{{Name: "s", Required: true}}}, Fn: func(_ context.Context, c *modules.Call) (any, error) {
			return c.Args.Str("s"), nil
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	caller := reactor.ModuleCaller{Registry: reg, Env: &modules.Env{ID: "the_master", Registry: reg}}
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	r := startReactor(t, reactor.Options{Bus: bus, Caller: caller, Compiler: &reactor.Compiler{Salt: caller},
		Map: []any{map[string]any{"c": []any{filepath.Join(dir, "a.sls")}}}})
	bus.Publish(event.Event{Tag: "c", Data: payload.NewMap()})
	// The counter may move before the second call has run: wait for both.
	waitFor(t, "two caller reactions", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return r.Stats().Caller == 2 && len(got) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != "positional@the_master" || got[1] != "via-template@the_master" {
		t.Fatalf("calls %q", got)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	if _, err := reactor.New(reactor.Options{}); err == nil {
		t.Fatal("no bus accepted")
	}
	bus := event.New(event.Options{})
	defer bus.Close()
	if _, err := reactor.New(reactor.Options{Bus: bus, Map: 3}); err == nil {
		t.Fatal("a number as the map accepted")
	}
	for _, v := range []any{nil, "", []any{}} {
		if reactor.Enabled(v) {
			t.Errorf("Enabled(%v)", v)
		}
	}
	if !reactor.Enabled("/etc/salt/reactor.yaml") || !reactor.Enabled([]any{map[string]any{"a": "b"}}) {
		t.Error("Enabled false for a configured map")
	}
}

type fakeWheel struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeWheel) RunWheel(_ context.Context, fun string, args []any, kwargs *payload.Map, user string) *payload.Map {
	b, _ := kwargs.MarshalJSON()
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s %v %s %s", fun, args, b, user))
	f.mu.Unlock()
	return payload.NewMap("jid", "20240501100000000009", "success", true)
}

func TestWheelReaction(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.sls"), "acc:\n  wheel.key.accept:\n    - match: {{ data['id'] }}\nrm:\n  wheel.key.delete:\n    - args:\n      - match: {{ data['id'] }}\n")
	bus := event.New(event.Options{Logger: testLogger()})
	defer bus.Close()
	w := &fakeWheel{}
	sigs := func(fun string) (reactor.Signature, bool) {
		if fun != "key.accept" {
			return reactor.Signature{}, false
		}
		return reactor.Signature{Params: []reactor.Param{{Name: "match", Required: true},
			{Name: "include_rejected", Default: false}, {Name: "include_denied", Default: false}}}, true
	}
	r := startReactor(t, reactor.Options{Bus: bus, Wheel: w, Wheels: sigs,
		Map: []any{map[string]any{"salt/auth": []any{filepath.Join(dir, "a.sls")}}}})
	bus.Publish(event.Event{Tag: "salt/auth", Data: payload.NewMap("id", "m9", "act", "pend")})
	waitFor(t, "two wheel reactions", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return r.Stats().Wheel == 2 && len(w.calls) == 2
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	want := []string{
		`key.accept [m9] {"include_denied":false,"include_rejected":false} Reactor`,
		`key.delete [] {"match":"m9"} Reactor`,
	}
	got := append([]string(nil), w.calls...)
	if len(got) == 2 && got[0] > got[1] {
		got[0], got[1] = got[1], got[0] // the pool runs them in any order
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("wheel calls\n got  %q\n want %q", got, want)
	}
}

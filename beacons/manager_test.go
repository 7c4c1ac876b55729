package beacons_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/beacons/builtin"
	"github.com/gsalt/gsalt/beacons/internal/golden"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

var quiet = slog.New(slog.DiscardHandler)

// upCaller: service.status is True for "up" only.
type upCaller struct{}

func (upCaller) Call(_ context.Context, fun string, args ...any) (any, error) {
	if fun == "service.status" {
		return args[0] == "up", nil
	}
	return nil, fmt.Errorf("%w: %s", beacons.ErrNotAvailable, fun)
}

func eventsJSON(evs []beacons.Event) string {
	list := make([]any, len(evs))
	for i, e := range evs {
		list[i] = e.Map()
	}
	return golden.PyJSON(list)
}

// TestProcessGolden runs Beacon.process's golden loops (from real Salt):
// tags, the id key, beacon_module aliases, interval counting, disabled and
// invalid beacons, error events and disable_during_state_run.
func TestProcessGolden(t *testing.T) {
	v, err := golden.Load("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	g := v.(*payload.Map).Map("process")
	proc := t.TempDir()
	avg := g.List("loadavg")
	line := fmt.Sprintf("%v %v %v 1/1 1\n", avg[0], avg[1], avg[2])
	if err := os.WriteFile(filepath.Join(proc, "loadavg"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := g.Get("config")
	m := beacons.New(beacons.Options{
		Opts:    payload.NewMap("id", g.Str("id"), "loop_interval", int64(1), "beacons", cfg),
		Caller:  upCaller{},
		Modules: builtin.All(builtin.Options{ProcRoot: proc}),
		Logger:  quiet,
	})
	defer m.Close()
	running := g.List("state_running")
	for i, want := range g.List("loops") {
		evs := m.Process(context.Background(), time.Now(), running[i].(bool))
		if got, w := eventsJSON(evs), golden.PyJSON(want); got != w {
			t.Errorf("loop %d:\n got %s\nwant %s", i, got, w)
		}
	}
	off := beacons.New(beacons.Options{
		Opts:    payload.NewMap("id", "x", "beacons", payload.NewMap("enabled", false, "service", []any{payload.NewMap("services", payload.NewMap("up", &payload.Map{}))})),
		Caller:  upCaller{},
		Modules: builtin.All(builtin.Options{}),
		Logger:  quiet,
	})
	if evs := off.Process(context.Background(), time.Now(), false); evs != nil {
		t.Errorf("all disabled: %v", evs)
	}
}

// countBeacon counts runs and closes, and emits its config.
type countBeacon struct {
	mu            sync.Mutex
	runs, closes  int
	lastConfig    any
	fail, panicky bool
}

func (b *countBeacon) Beacon(_ context.Context, r *beacons.Request) ([]*payload.Map, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.runs++
	b.lastConfig = r.Config
	if b.panicky {
		panic("kaboom")
	}
	if b.fail {
		return nil, errors.New("broken")
	}
	return []*payload.Map{payload.NewMap("tag", "sfx", "n", int64(b.runs)), payload.NewMap("id", "other")}, nil
}

func (b *countBeacon) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closes++
	return nil
}

func countModule(b *countBeacon) beacons.Module {
	return beacons.Module{Name: "count", New: func(*beacons.Env) beacons.Beacon { return b }}
}

func TestProcessRules(t *testing.T) {
	l := func(items ...*payload.Map) []any {
		out := make([]any, len(items))
		for i := range items {
			out[i] = items[i]
		}
		return out
	}
	m := payload.NewMap
	cases := []struct {
		name     string
		opts     *payload.Map
		pillar   *payload.Map
		loops    int
		running  bool
		wantRuns int
		wantTags string
		wantCfg  string
		check    func(t *testing.T, b *countBeacon, mgr *beacons.Manager)
	}{
		{name: "plain", opts: m("count", l(m("a", int64(1)))), loops: 2, wantRuns: 2,
			wantTags: "salt/beacon/m1/count/sfx,salt/beacon/m1/count/", wantCfg: `[{"a": 1}]`},
		{name: "interval", opts: m("count", l(m("interval", int64(3)), m("a", int64(1)))), loops: 7, wantRuns: 2, wantCfg: `[{"a": 1}]`},
		{name: "enabled true stripped", opts: m("count", l(m("enabled", true), m("a", int64(1)))), loops: 1, wantRuns: 1, wantCfg: `[{"a": 1}]`},
		{name: "disabled", opts: m("count", l(m("enabled", false))), loops: 2, wantRuns: 0},
		{name: "state run", opts: m("count", l(m("disable_during_state_run", true))), loops: 2, running: true, wantRuns: 0,
			check: func(t *testing.T, b *countBeacon, _ *beacons.Manager) {
				if b.closes != 0 { // never started, nothing to close
					t.Errorf("closes %d", b.closes)
				}
			}},
		{name: "alias", opts: m("other", l(m("beacon_module", "count"))), loops: 1, wantRuns: 1,
			wantTags: "salt/beacon/m1/other/sfx,salt/beacon/m1/other/", wantCfg: `[{"beacon_module": "count"}]`},
		{name: "dict form", opts: m("count", m("a", int64(1))), loops: 1, wantRuns: 0},
		{name: "pillar", pillar: m("beacons", m("count", l(m("p", int64(1))))), loops: 1, wantRuns: 1, wantCfg: `[{"p": 1}]`},
		{name: "pillar master", pillar: m("master", m("beacons", m("count", l(m("p", int64(2)))))), loops: 1, wantRuns: 1, wantCfg: `[{"p": 2}]`},
		{name: "opts win over pillar", opts: m("count", l(m("o", int64(1)))), pillar: m("beacons", m("count", l(m("p", int64(1))))), loops: 1, wantRuns: 1, wantCfg: `[{"o": 1}]`},
		{name: "run_once", opts: m("count", l(m("run_once", true))), loops: 3, wantRuns: 1,
			check: func(t *testing.T, _ *countBeacon, mgr *beacons.Manager) {
				if got := golden.PyJSON(mgr.Beacons()); got != `{"count": [{"run_once": true}, {"enabled": false}]}` {
					t.Errorf("after run_once: %s", got)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := &countBeacon{}
			opts := payload.NewMap("id", "m1")
			if c.opts != nil {
				opts.Set("beacons", c.opts)
			}
			mgr := beacons.New(beacons.Options{Opts: opts, Modules: []beacons.Module{countModule(b)}, Logger: quiet,
				Pillar: func() *payload.Map { return c.pillar }})
			var tags []string
			for range c.loops {
				for _, e := range mgr.Process(context.Background(), time.Now(), c.running) {
					tags = append(tags, e.Tag)
					if e.Data.Str("id") == "" {
						t.Errorf("no id in %s", golden.PyJSON(e.Data))
					}
				}
			}
			if b.runs != c.wantRuns {
				t.Errorf("runs %d, want %d", b.runs, c.wantRuns)
			}
			if c.wantTags != "" && strings.Join(tags[:2], ",") != c.wantTags {
				t.Errorf("tags %v", tags)
			}
			if c.wantCfg != "" && golden.PyJSON(b.lastConfig) != c.wantCfg {
				t.Errorf("config %s, want %s", golden.PyJSON(b.lastConfig), c.wantCfg)
			}
			if c.check != nil {
				c.check(t, b, mgr)
			}
		})
	}
}

func TestErrorEventsAndClose(t *testing.T) {
	b := &countBeacon{}
	mgr := beacons.New(beacons.Options{ID: "m1", Opts: payload.NewMap("beacons", payload.NewMap(
		"count", []any{payload.NewMap("disable_during_state_run", true)})),
		Modules: []beacons.Module{countModule(b)}, Logger: quiet})
	mgr.Process(context.Background(), time.Now(), false)
	mgr.Process(context.Background(), time.Now(), true) // state run: closed
	if b.closes != 1 {
		t.Errorf("closes after state run %d", b.closes)
	}
	b.fail = true
	evs := mgr.Process(context.Background(), time.Now(), false)
	if got := eventsJSON(evs); got != `[{"tag": "salt/beacon/m1/count/", "error": "broken", "data": {}, "beacon_name": "count"}]` {
		t.Errorf("error event %s", got)
	}
	b.fail, b.panicky = false, true
	if evs := mgr.Process(context.Background(), time.Now(), false); len(evs) != 1 || evs[0].Error != "kaboom" {
		t.Errorf("panic event %+v", evs)
	}
	// Deleting the beacon closes it.
	if _, err := mgr.ManageBeacons(context.Background(), payload.NewMap("func", "delete", "name", "count")); err != nil {
		t.Fatal(err)
	}
	mgr.Process(context.Background(), time.Now(), false)
	if b.closes != 2 {
		t.Errorf("closes after delete %d", b.closes)
	}
}

func TestEventsLoad(t *testing.T) {
	if beacons.EventsLoad("m1", nil) != nil {
		t.Error("load for no events")
	}
	evs := []beacons.Event{
		{Tag: "salt/beacon/m1/load/", Data: payload.NewMap("1m", 0.5, "id", "m1"), BeaconName: "load"},
		{Tag: "salt/beacon/m1/x/", Error: "boom", BeaconName: "x"},
	}
	got := golden.PyJSON(beacons.EventsLoad("m1", evs))
	want := `{"id": "m1", "cmd": "_minion_event", "pretag": null, "tok": null, "events": [` +
		`{"tag": "salt/beacon/m1/load/", "data": {"1m": 0.5, "id": "m1"}, "beacon_name": "load"}, ` +
		`{"tag": "salt/beacon/m1/x/", "error": "boom", "data": {}, "beacon_name": "x"}]}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	for fun, want := range map[string]bool{"state.apply": true, "state": true, "statefoo": true, "test.state": false, "stat": false} {
		if beacons.IsStateFunction(fun) != want {
			t.Errorf("IsStateFunction(%q)", fun)
		}
	}
}

func TestRun(t *testing.T) {
	b := &countBeacon{}
	mgr := beacons.New(beacons.Options{
		Opts:    payload.NewMap("id", "m1", "loop_interval", 0.01, "beacons", payload.NewMap("count", []any{})),
		Modules: []beacons.Module{countModule(b)}, Logger: quiet,
		StateRunning: func() bool { return false },
	})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan []beacons.Event, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		mgr.Run(ctx, func(_ context.Context, evs []beacons.Event) {
			select {
			case got <- evs:
			default:
			}
		})
	}()
	select {
	case evs := <-got:
		if len(evs) != 2 || evs[0].Tag != "salt/beacon/m1/count/sfx" {
			t.Errorf("events %+v", evs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no events from Run")
	}
	cancel()
	<-done
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closes != 1 {
		t.Errorf("Run did not close the beacon: %d", b.closes)
	}
}

func TestManageBeacons(t *testing.T) {
	m := payload.NewMap
	pillar := m("beacons", m("psvc", []any{m("services", m("a", &payload.Map{}))}))
	mgr := beacons.New(beacons.Options{
		Opts:    m("beacons", map[string]any{"load": []any{map[string]any{"averages": map[string]any{}}}, "d": map[string]any{"x": 1}}),
		Pillar:  func() *payload.Map { return pillar },
		Modules: builtin.All(builtin.Options{}), Logger: quiet,
	})
	steps := []struct {
		req  *payload.Map
		want string
	}{
		{m("func", "list"), `{"complete": true, "beacons": {"psvc": [{"services": {"a": {}}}], "d": {"x": 1}, "load": [{"averages": {}}]}}`},
		{m("func", "list", "include_pillar", false), `{"complete": true, "beacons": {"d": {"x": 1}, "load": [{"averages": {}}]}}`},
		{m("func", "list_available"), `{"complete": true, "beacons": ["diskusage", "inotify", "load", "network_info", "pkg", "service", "status"]}`},
		{m("func", "validate_beacon", "name", "load", "beacon_data", []any{m("averages", &payload.Map{})}), `{"complete": true, "vcomment": "Averages configuration for load beacon must contain 1m, 5m or 15m items.", "valid": false}`},
		{m("func", "validate_beacon", "name", "x", "beacon_data", []any{m("beacon_module", "nope")}), `{"complete": true, "vcomment": "Beacon nope does not have a validate function, skipping validation.", "valid": true}`},
		{m("func", "add", "name", "psvc", "beacon_data", []any{}), `{"complete": false, "comment": "Cannot update beacon item psvc, because it is configured in pillar.", "beacons": {"d": {"x": 1}, "load": [{"averages": {}}]}}`},
		{m("func", "enable_beacon", "name", "d"), `{"complete": true, "comment": "Enabling beacon item d", "beacons": {"d": {"x": 1, "enabled": true}, "load": [{"averages": {}}]}}`},
		{m("func", "disable_beacon", "name", "load"), `{"complete": true, "comment": "Disabling beacon item load", "beacons": {"d": {"x": 1, "enabled": true}, "load": [{"averages": {}}, {"enabled": false}]}}`},
		{m("func", "enable_beacon", "name", "load"), `{"complete": true, "comment": "Enabling beacon item load", "beacons": {"d": {"x": 1, "enabled": true}, "load": [{"averages": {}}, {"enabled": true}]}}`},
		{m("func", "disable"), `{"complete": true, "beacons": {"d": {"x": 1, "enabled": true}, "load": [{"averages": {}}, {"enabled": true}], "enabled": false}}`},
		{m("func", "delete", "name", "nope"), `{"complete": true, "comment": "Beacon item nope not found.", "beacons": {"d": {"x": 1, "enabled": true}, "load": [{"averages": {}}, {"enabled": true}], "enabled": false}}`},
		{m("func", "reset"), `{"complete": true, "comment": "Beacons have been reset", "beacons": {}}`},
	}
	for i, s := range steps {
		got, err := mgr.ManageBeacons(context.Background(), s.req)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if g := golden.PyJSON(got); g != s.want {
			t.Errorf("%d %s:\n got %s\nwant %s", i, s.req.Str("func"), g, s.want)
		}
	}
	for _, req := range []*payload.Map{m("func", "enable_beacon", "name", "missing"), m("func", "bogus"), m("func", "validate_beacon", "name", "x", "beacon_data", m("a", int64(1)))} {
		if _, err := mgr.ManageBeacons(context.Background(), req); !errors.Is(err, beacons.ErrBadConfig) {
			t.Errorf("%s: want ErrBadConfig, got %v", golden.PyJSON(req), err)
		}
	}
	pillar = m("beacons", []any{"bad"})
	if _, err := mgr.ManageBeacons(context.Background(), m("func", "list")); !errors.Is(err, beacons.ErrBadConfig) {
		t.Errorf("pillar beacons not a dict: %v", err)
	}
}

func TestRegistryCaller(t *testing.T) {
	r := modules.NewRegistry()
	err := r.Register(
		modules.Function{Name: "service.status", Spec: modules.Spec{Params: []modules.Param{{Name: "name", Required: true}}},
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return c.Args.Str("name") == "up" && c.Env.ID == "m1", nil
			}},
		modules.Function{Name: "status.bad", Fn: func(context.Context, *modules.Call) (any, error) {
			return nil, fmt.Errorf("%w: nope", modules.ErrExecution)
		}},
		modules.Function{Name: "status.panic", Fn: func(context.Context, *modules.Call) (any, error) { panic("x") }},
	)
	if err != nil {
		t.Fatal(err)
	}
	rc := beacons.RegistryCaller{Registry: r, Env: func() *modules.Env { return &modules.Env{ID: "m1"} }}
	if v, err := rc.Call(context.Background(), "service.status", "up"); v != true || err != nil {
		t.Errorf("service.status: %v %v", v, err)
	}
	if _, err := rc.Call(context.Background(), "status.missing"); !errors.Is(err, beacons.ErrNotAvailable) {
		t.Errorf("missing: %v", err)
	}
	if _, err := rc.Call(context.Background(), "status.bad"); !errors.Is(err, beacons.ErrExecution) {
		t.Errorf("execution error: %v", err)
	}
	if _, err := rc.Call(context.Background(), "status.panic"); err == nil {
		t.Error("panic not reported")
	}
	if _, err := rc.Call(context.Background(), "service.status"); !errors.Is(err, modules.ErrArguments) {
		t.Errorf("missing argument: %v", err)
	}
}

// TestIdle: a Manager is idle (Tick skips Process) only when no beacon is
// configured in the options or the pillar and none is running; a beacon
// removed from the pillar keeps it busy until the next loop closes it.
func TestIdle(t *testing.T) {
	count := payload.NewMap("count", []any{})
	tests := []struct {
		name   string
		opts   *payload.Map
		pillar *payload.Map
		want   bool
	}{
		{"nothing", payload.NewMap("id", "m1"), nil, true},
		{"empty pillar", payload.NewMap("id", "m1"), payload.NewMap("foo", 1), true},
		{"own beacons", payload.NewMap("id", "m1", "beacons", count), nil, false},
		{"pillar beacons", payload.NewMap("id", "m1"), payload.NewMap("beacons", count), false},
		{"pillar master:beacons", payload.NewMap("id", "m1"), payload.NewMap("master", payload.NewMap("beacons", count)), false},
	}
	for _, tc := range tests {
		b := &countBeacon{}
		mgr := beacons.New(beacons.Options{Opts: tc.opts, Pillar: func() *payload.Map { return tc.pillar },
			Modules: []beacons.Module{countModule(b)}, Logger: quiet})
		if got := mgr.Idle(); got != tc.want {
			t.Errorf("%s: Idle() = %v, want %v", tc.name, got, tc.want)
		}
		fired := 0
		mgr.Tick(context.Background(), time.Now(), func(context.Context, []beacons.Event) { fired++ })
		if (fired == 0) != tc.want {
			t.Errorf("%s: Tick fired %d times (idle %v)", tc.name, fired, tc.want)
		}
	}
	var mu sync.Mutex
	pillar := payload.NewMap("beacons", count)
	b := &countBeacon{}
	mgr := beacons.New(beacons.Options{Opts: payload.NewMap("id", "m1"), Modules: []beacons.Module{countModule(b)}, Logger: quiet,
		Pillar: func() *payload.Map { mu.Lock(); defer mu.Unlock(); return pillar }})
	mgr.Tick(context.Background(), time.Now(), nil)
	mu.Lock()
	pillar = payload.NewMap()
	mu.Unlock()
	if mgr.Idle() {
		t.Error("idle while a beacon removed from the pillar still runs")
	}
	mgr.Tick(context.Background(), time.Now(), nil)
	if !mgr.Idle() {
		t.Error("not idle after the removed beacon was closed")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closes != 1 {
		t.Errorf("the removed beacon was closed %d times", b.closes)
	}
}

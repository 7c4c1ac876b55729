package builtin_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/beacons"
	"github.com/gsalt/gsalt/beacons/builtin"
	"github.com/gsalt/gsalt/beacons/internal/golden"
	"github.com/gsalt/gsalt/wire/payload"
)

// The goldens come from real Salt: see ../testdata/gen_goldens.py.
const goldensPath = "../testdata/goldens.json"

func loadGoldens(t *testing.T) *payload.Map {
	t.Helper()
	v, err := golden.Load(goldensPath)
	if err != nil {
		t.Fatal(err)
	}
	return v.(*payload.Map)
}

func module(t *testing.T, o builtin.Options, name string) beacons.Module {
	t.Helper()
	for _, m := range builtin.All(o) {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no module %s", name)
	return beacons.Module{}
}

func testEnv(c beacons.Caller) *beacons.Env {
	return &beacons.Env{ID: "golden", Caller: c, Log: slog.New(slog.DiscardHandler)}
}

// run calls a beacon and renders its result like Salt's (nil is []).
func run(t *testing.T, b beacons.Beacon, cfg any, now time.Time) string {
	t.Helper()
	out, err := b.Beacon(context.Background(), &beacons.Request{Config: payload.DeepClone(cfg), Now: now})
	if err != nil {
		t.Fatalf("beacon: %v", err)
	}
	list := make([]any, len(out))
	for i, m := range out {
		list[i] = m
	}
	return golden.PyJSON(list)
}

func pyFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func TestLoadGolden(t *testing.T) {
	g := loadGoldens(t)
	for _, c := range g.List("load") {
		c := c.(*payload.Map)
		t.Run(c.Str("name"), func(t *testing.T) {
			dir := t.TempDir()
			b := module(t, builtin.Options{ProcRoot: dir}, "load").New(testEnv(nil))
			loads := c.List("loads")
			for i, ev := range c.List("events") {
				avg := loads[i].([]any)
				line := fmt.Sprintf("%s %s %s 1/100 4242\n", pyFloat(avg[0].(float64)), pyFloat(avg[1].(float64)), pyFloat(avg[2].(float64)))
				if err := os.WriteFile(filepath.Join(dir, "loadavg"), []byte(line), 0o644); err != nil {
					t.Fatal(err)
				}
				if got, want := run(t, b, c.List("config"), time.Now()), golden.PyJSON(ev); got != want {
					t.Errorf("step %d:\n got %s\nwant %s", i, got, want)
				}
			}
		})
	}
}

// fakeCaller answers service.status from a table.
type fakeCaller struct {
	status map[string]any
	calls  []string
}

func (f *fakeCaller) Call(_ context.Context, fun string, args ...any) (any, error) {
	f.calls = append(f.calls, fun)
	if fun != "service.status" || len(args) != 1 {
		return nil, fmt.Errorf("%w: %s", beacons.ErrNotAvailable, fun)
	}
	v, ok := f.status[args[0].(string)]
	if !ok {
		return nil, errors.New("unknown service")
	}
	return v, nil
}

func TestServiceGolden(t *testing.T) {
	g := loadGoldens(t)
	exists, err := filepath.Abs("../testdata/proc/loadavg")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.List("service") {
		c := c.(*payload.Map)
		t.Run(c.Str("name"), func(t *testing.T) {
			raw := strings.ReplaceAll(golden.PyJSON(c.List("config")), "$EXISTS", exists)
			cfg, err := golden.Decode([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			caller := &fakeCaller{}
			b := module(t, builtin.Options{}, "service").New(testEnv(caller))
			steps := c.List("steps")
			for i, ev := range c.List("events") {
				step := steps[i].(*payload.Map)
				caller.status = map[string]any{}
				for _, it := range step.Map("status").Items() {
					caller.status[it.Key.(string)] = it.Value
				}
				sec, _ := step.Get("time")
				now := time.Unix(0, int64(sec.(float64)*1e9))
				if got, want := run(t, b, cfg, now), golden.PyJSON(ev); got != want {
					t.Errorf("step %d:\n got %s\nwant %s", i, got, want)
				}
			}
		})
	}
}

func TestServiceCallerError(t *testing.T) {
	b := module(t, builtin.Options{}, "service").New(testEnv(nil))
	cfg := []any{payload.NewMap("services", payload.NewMap("x", &payload.Map{}))}
	if _, err := b.Beacon(context.Background(), &beacons.Request{Config: cfg, Now: time.Now()}); !errors.Is(err, beacons.ErrNotAvailable) {
		t.Fatalf("want ErrNotAvailable, got %v", err)
	}
}

func TestDiskUsageGolden(t *testing.T) {
	g := loadGoldens(t).Map("diskusage")
	stat := map[string]builtin.DiskStat{}
	for _, it := range g.Map("statvfs").Items() {
		l := it.Value.([]any)
		stat[it.Key.(string)] = builtin.DiskStat{Frsize: uint64(l[0].(int64)), Blocks: uint64(l[1].(int64)), Bfree: uint64(l[2].(int64)), Bavail: uint64(l[3].(int64))}
	}
	o := builtin.Options{ProcRoot: "../testdata/proc", Statfs: func(p string) (builtin.DiskStat, error) {
		if st, ok := stat[p]; ok {
			return st, nil
		}
		return builtin.DiskStat{}, os.ErrNotExist
	}}
	for _, c := range g.List("cases") {
		c := c.(*payload.Map)
		t.Run(c.Str("name"), func(t *testing.T) {
			b := module(t, o, "diskusage").New(testEnv(nil))
			if got, want := run(t, b, c.List("config"), time.Now()), golden.PyJSON(c.List("events")); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
	// A Python-only expression is an error, as an invalid one is in Salt.
	b := module(t, o, "diskusage").New(testEnv(nil))
	_, err := b.Beacon(context.Background(), &beacons.Request{Config: []any{payload.NewMap(`^\/(?!home).*$`, "90%")}})
	if err == nil {
		t.Error("look-ahead expression accepted")
	}
}

func TestNetworkInfoGolden(t *testing.T) {
	g := loadGoldens(t)
	for _, c := range g.List("network_info") {
		c := c.(*payload.Map)
		t.Run(c.Str("name"), func(t *testing.T) {
			b := module(t, builtin.Options{ProcRoot: "../testdata/proc"}, "network_info").New(testEnv(nil))
			if got, want := run(t, b, c.List("config"), time.Now()), golden.PyJSON(c.List("events")); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestStatusGolden(t *testing.T) {
	g := loadGoldens(t).Map("status")
	now, err := time.Parse("2006-01-02T15:04:05.999999", g.Str("now"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.List("cases") {
		c := c.(*payload.Map)
		t.Run(c.Str("name"), func(t *testing.T) {
			b := module(t, builtin.Options{ProcRoot: "../testdata/proc"}, "status").New(testEnv(nil))
			if got, want := run(t, b, c.List("config"), now), golden.PyJSON(c.List("events")); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

// statusCaller has status.loadavg only, failing with a CommandExecutionError.
type statusCaller struct{}

func (statusCaller) Call(_ context.Context, fun string, _ ...any) (any, error) {
	if fun == "status.loadavg" {
		return nil, fmt.Errorf("%w: boom", beacons.ErrExecution)
	}
	if fun == "status.w" {
		return []any{"a", "b"}, nil
	}
	return nil, fmt.Errorf("%w: %s", beacons.ErrNotAvailable, fun)
}

func TestStatusCaller(t *testing.T) {
	b := module(t, builtin.Options{ProcRoot: "../testdata/proc"}, "status").New(testEnv(statusCaller{}))
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg := []any{payload.NewMap("loadavg", []any{"all"}, "w", []any{int64(1)})}
	got := run(t, b, cfg, now)
	want := `[{"tag": "2026-01-02T03:04:05", "data": {"loadavg": {}, "w": {"1": "b"}}}]`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	_, err := b.Beacon(context.Background(), &beacons.Request{Config: []any{payload.NewMap("nosuch", []any{"all"})}, Now: now})
	if err == nil || err.Error() != "'status.nosuch'" {
		t.Errorf("unknown function: %v", err)
	}
}

func TestValidate(t *testing.T) {
	l := func(items ...*payload.Map) []any {
		out := make([]any, len(items))
		for i := range items {
			out[i] = items[i]
		}
		return out
	}
	m := payload.NewMap
	avg := m("1m", []any{0.0, 1.0}, "5m", []any{0.0, 1.0}, "15m", []any{0.0, 1.0})
	cases := []struct {
		module string
		config any
		ok     bool
		msg    string
	}{
		{"load", m("averages", avg), false, "Configuration for load beacon must be a list."},
		{"load", l(m("averages", avg)), true, "Valid beacon configuration"},
		{"load", l(m("averages", avg), m("onchangeonly", "yes")), false, "Configuration for load beacon option onchangeonly must be a boolean."},
		{"load", l(m("averages", avg), m("emitatstartup", int64(1))), false, "Configuration for load beacon option emitatstartup must be a boolean."},
		{"load", l(m("x", int64(1))), false, "Averages configuration is required for load beacon."},
		{"load", l(m("averages", m("2m", int64(1)))), false, "Averages configuration for load beacon must contain 1m, 5m or 15m items."},
		{"load", l(m("averages", m("1m", "x", "5m", []any{}, "15m", []any{}))), false, "Averages configuration for load beacon: 1m, 5m and 15m items must be a list of two items."},
		{"service", l(m("services", m("a", &payload.Map{}))), true, "Valid beacon configuration"},
		{"service", l(m("x", int64(1))), false, "Configuration for service beacon requires services."},
		{"service", l(m("services", []any{"a"})), false, "Services configuration item for service beacon must be a dictionary."},
		{"service", l(m("services", m("a", nil))), false, "Configuration for service beacon must be a list of dictionaries."},
		{"diskusage", m("/", "1%"), false, "Configuration for diskusage beacon must be a list."},
		{"status", "x", false, "Configuration for status beacon must be a list."},
		{"network_info", l(m("interfaces", m("eth0", []any{}))), false, "Configuration for network_info beacon must be a list of dictionaries."},
		{"network_info", l(m("interfaces", m("eth0", m("speed", int64(1))))), false, "Invalid configuration item in Beacon configuration."},
		{"network_info", l(m("interfaces", m("eth0", m("type", "greater")))), true, "Valid beacon configuration"},
		{"inotify", l(m("x", int64(1))), false, "Configuration for inotify beacon must include files."},
		{"inotify", l(m("files", []any{})), false, "Configuration for inotify beacon invalid, files must be a dict."},
		{"inotify", l(m("files", m("/a", "x"))), false, "Configuration for inotify beacon must be a list of dictionaries."},
		{"inotify", l(m("files", m("/a", m("exclude", []any{})))), false, "Configuration for inotify beacon must contain mask, recurse or auto_add items."},
		{"inotify", l(m("files", m("/a", m("auto_add", "yes")))), false, "Configuration for inotify beacon auto_add must be boolean."},
		{"inotify", l(m("files", m("/a", m("recurse", int64(1))))), false, "Configuration for inotify beacon recurse must be boolean."},
		{"inotify", l(m("files", m("/a", m("mask", "create")))), false, "Configuration for inotify beacon mask must be list."},
		{"inotify", l(m("files", m("/a", m("mask", []any{"create", "dont_follow"})))), false, "Configuration for inotify beacon invalid mask option dont_follow."},
		{"inotify", l(m("files", m("/a", m("mask", []any{"open", "close_write"})))), true, "Valid beacon configuration"},
	}
	for i, c := range cases {
		ok, msg := module(t, builtin.Options{}, c.module).Validate(c.config)
		if ok != c.ok || msg != c.msg {
			t.Errorf("%d %s: got %v %q, want %v %q", i, c.module, ok, msg, c.ok, c.msg)
		}
	}
}

package builtin

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// eventScenarios are the event state runs compared with Salt. salt-call
// --local has no minion event bus, so Salt's event.send returns False;
// gsalt's Env has no "events" service, so it does too.
func eventScenarios() []ctemScenario {
	return []ctemScenario{
		{ID: "send", Fun: "event.send", Args: ctemKV("name", "gsalt/test/tag", "data", ctemKV("a", int64(1), "b", []any{"x"}))},
		{ID: "send_no_data", Fun: "event.send", Args: ctemKV("name", "gsalt/test/nodata")},
		{ID: "send_hidden", Fun: "event.send", Args: ctemKV("name", "gsalt/test/hidden", "data", ctemKV("a", int64(1)), "show_changed", false)},
		{ID: "send_extra", Fun: "event.send", Args: ctemKV("name", "gsalt/test/extra", "foo", "bar", "with_grains", []any{"id"})},
		{ID: "fire_master", Fun: "event.fire_master", Args: ctemKV("name", "gsalt/test/fm", "data", ctemKV("k", "v"))},
		{ID: "wait_noop", Fun: "event.wait", Args: ctemKV("name", "gsalt/test/wait")},
		{ID: "mw_wait", Fun: "event.wait", Args: ctemKV("name", "gsalt/test/watched", "data", ctemKV("w", true)), Watch: true},
		{ID: "t_send", Fun: "event.send", Args: ctemKV("name", "gsalt/test/tag", "data", ctemKV("a", int64(1))), Test: true},
		{ID: "t_send_hidden", Fun: "event.send", Args: ctemKV("name", "gsalt/test/tag", "show_changed", false), Test: true},
		{ID: "t_wait", Fun: "event.wait", Args: ctemKV("name", "gsalt/test/wait"), Test: true},
		{ID: "t_mw_wait", Fun: "event.wait", Args: ctemKV("name", "gsalt/test/watched"), Test: true, Watch: true},
	}
}

func TestEventGolden(t *testing.T) { ctemRunGolden(t, "event", eventScenarios()) }

// ctemEventBus records fired events.
type ctemEventBus struct {
	mu     sync.Mutex
	events []string
}

func (b *ctemEventBus) Fire(_ context.Context, tag string, data any) bool {
	raw, _ := json.Marshal(data)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, tag+" "+string(raw))
	return true
}

func TestEventSendFires(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fun   string
		low   *payload.Map
		watch bool
		want  string
	}{
		{name: "data, kwargs and grains", fun: "event.send",
			low:  ctemKV("name", "my/tag", "data", ctemKV("a", int64(1)), "foo", "bar", "with_grains", []any{"id"}, "onlyif", "true", "__id__", "x"),
			want: `my/tag {"grains":{"id":"golden"},"foo":"bar","a":1}`},
		{name: "data wins over kwargs", fun: "event.fire_master", low: ctemKV("name", "t2", "data", ctemKV("foo", "data"), "foo", "kw"),
			want: `t2 {"foo":"data"}`},
		{name: "watch passes sfun like Salt", fun: "event.wait", low: ctemKV("name", "t3", "data", ctemKV("w", true), "sfun", "wait"), watch: true,
			want: `t3 {"sfun":"wait","w":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus := &ctemEventBus{}
			ret, err := ctemDirect(t, ctemEnv(t, map[string]any{"events": bus}), tc.fun, tc.low, tc.watch, false)
			if err != nil || ret.Result != states.True || ret.Comment != "Event fired" {
				t.Fatalf("ret %+v %v", ret, err)
			}
			if len(bus.events) != 1 || bus.events[0] != tc.want {
				t.Errorf("events %q, want %q", bus.events, tc.want)
			}
		})
	}
	// test=True fires nothing.
	bus := &ctemEventBus{}
	ret, err := ctemDirect(t, ctemEnv(t, map[string]any{"events": bus}), "event.send", ctemKV("name", "t"), false, true)
	if err != nil || ret.Result != states.None || len(bus.events) != 0 {
		t.Fatalf("test mode: %+v %v %q", ret, err, bus.events)
	}
}

package builtin_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/modules/salttest"
	"github.com/gsalt/gsalt/wire/payload"
)

// shapeOf replaces every number by its kind, keeping keys, strings of
// stable entries and list lengths, for live values that move between two
// reads (counters, free memory).
func shapeOf(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		out := &payload.Map{}
		keys := x.Keys()
		sort.Strings(keys)
		for _, k := range keys {
			e, _ := x.Get(k)
			out.Set(k, shapeOf(e))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = shapeOf(e)
		}
		return out
	case int64:
		return "int"
	case float64:
		return "float"
	}
	return v
}

// TestStatusLive compares the status module with Salt 3006's on this
// machine (gated on GSALT_SALT_SRC): stable values exactly, moving ones
// (counters, memory, uptime) by their keys and kinds.
func TestStatusLive(t *testing.T) {
	normalize := func(name string, v any) any {
		switch name {
		case "cpuinfo":
			if m, ok := v.(*payload.Map); ok {
				m = m.Clone()
				m.Delete("cpu MHz")
				m.Delete("bogomips")
				return m
			}
		case "meminfo":
			if m, ok := v.(*payload.Map); ok {
				out := &payload.Map{}
				for _, it := range m.Items() {
					e := it.Value.(*payload.Map).Clone()
					e.Set("value", "n")
					out.SetKey(it.Key, e)
				}
				return out
			}
		case "uptime":
			if m, ok := v.(*payload.Map); ok {
				out := shapeOf(m).(*payload.Map)
				out.Set("since_iso", "iso")
				out.Set("time", "h:m")
				return out
			}
		case "diskusage root":
			return shapeOf(v)
		case "procs":
			if m, ok := v.(*payload.Map); ok {
				p1, _ := m.Get("1")
				return p1
			}
		case "cpustats", "netdev", "vmstats", "loadavg", "diskstats", "netstats":
			return shapeOf(v)
		}
		return v
	}
	calls := []salttest.Call{
		{Name: "uptime", Fun: "status.uptime"},
		{Name: "loadavg", Fun: "status.loadavg"},
		{Name: "meminfo", Fun: "status.meminfo"},
		{Name: "cpuinfo", Fun: "status.cpuinfo"},
		{Name: "cpustats", Fun: "status.cpustats"},
		{Name: "netdev", Fun: "status.netdev"},
		{Name: "vmstats", Fun: "status.vmstats"},
		{Name: "version", Fun: "status.version"},
		{Name: "diskstats", Fun: "status.diskstats"},
		{Name: "netstats", Fun: "status.netstats"},
		{Name: "nproc", Fun: "status.nproc"},
		{Name: "procs", Fun: "status.procs"},
		{Name: "w", Fun: "status.w"},
		{Name: "diskusage root", Fun: "status.diskusage", Args: []any{"/"}},
		{Name: "diskusage fstype", Fun: "status.diskusage", Args: []any{"nosuchfs*"}},
		{Name: "pid none", Fun: "status.pid", Args: []any{"no-such-process-gsalt-xyz"}},
		{Name: "time", Fun: "status.time", Args: []any{"%Y"}},
	}
	runSuite(t, salttest.Suite{Name: "status_live", Live: true, RealGrains: true, Calls: calls, Normalize: normalize})
}

// TestStatusAllStatus: all_status gathers the eleven readers under their
// names, in Salt's order.
func TestStatusAllStatus(t *testing.T) {
	r := goldenRegistry(t)
	res := r.Execute(context.Background(), modules.Binder{}, &modules.Env{ID: "m1", Registry: r, Grains: payload.NewMap("ps", "ps -efHww")}, "status.all_status", nil, nil)
	m, ok := res.Return.(*payload.Map)
	if !ok || res.Retcode != 0 {
		t.Fatalf("all_status: %v", res.Return)
	}
	want := "cpuinfo,cpustats,diskstats,diskusage,loadavg,meminfo,netdev,netstats,uptime,vmstats,w"
	if got := strings.Join(m.Keys(), ","); got != want {
		t.Fatalf("keys %s, want %s", got, want)
	}
	if up := m.Map("uptime"); up == nil || !up.Has("seconds") {
		t.Fatalf("uptime %v", m.Map("uptime"))
	}
}

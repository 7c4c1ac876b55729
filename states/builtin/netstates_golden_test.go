package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// The network state modules (netntp, netsnmp, netusers, probes) and the
// schedule state module (a scenario's "fun": present, absent, enabled,
// disabled) are checked against the returns of Salt's own state
// functions: each scenario
// of testdata/netstates/scenarios.json gives the answers of the execution
// functions; testdata/netstates_golden.py runs Salt's managed() with a fake
// __salt__ giving them and records the return and the calls it made
// (testdata/netstates/golden.json, written with -update when
// GSALT_SALT_SRC is set); gsalt's state runs against the same answers and
// must return and call the same.

const nsDir = "testdata/netstates"

type nsScenario struct {
	Name      string                     `json:"name"`
	State     string                     `json:"state"`
	Fun       string                     `json:"fun"` // "managed" when empty
	Test      bool                       `json:"test"`
	Kwargs    json.RawMessage            `json:"kwargs"`
	Responses map[string]json.RawMessage `json:"responses"`
}

type nsGolden struct {
	Ret       json.RawMessage `json:"ret"`
	Exception string          `json:"exception"`
	Calls     json.RawMessage `json:"calls"`
}

// nsValue decodes JSON into payload values (integers as int64).
func nsValue(t *testing.T, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var conv func(any) any
	conv = func(v any) any {
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				return n
			}
			f, _ := x.Float64()
			return f
		case map[string]any:
			m := &payload.Map{}
			for k, e := range x {
				m.Set(k, conv(e))
			}
			return m
		case []any:
			l := make([]any, len(x))
			for i, e := range x {
				l[i] = conv(e)
			}
			return l
		}
		return v
	}
	return conv(v)
}

var nsExecNames = []string{"ntp.peers", "ntp.servers", "ntp.set_peers", "ntp.set_servers", "ntp.delete_peers",
	"ntp.delete_servers", "net.config_control", "snmp.config", "snmp.update_config", "snmp.remove_config",
	"users.config", "users.set_users", "users.delete_users", "probes.config", "probes.set_probes",
	"probes.delete_probes", "probes.schedule_probes", "net.load_template", "schedule.list", "schedule.build_schedule_item",
	"schedule.add", "schedule.modify", "schedule.delete", "schedule.enable_job", "schedule.disable_job"}

// nsRun runs gsalt's state for one scenario: its return (or error) and the
// execution calls it made, each [fun, args, kwargs].
func nsRun(t *testing.T, sc nsScenario) (states.Ret, []any, error) {
	t.Helper()
	var calls []any
	reg := modules.NewRegistry()
	for _, name := range nsExecNames {
		resp, ok := sc.Responses[name]
		reg.Register(modules.Function{Name: name, Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				args := append([]any{}, c.Args.Varargs...)
				calls = append(calls, []any{name, args, c.Args.CleanKwargs()})
				if !ok {
					return nil, fmt.Errorf("%w: %s not answered by the scenario", modules.ErrExecution, name)
				}
				return nsValue(t, resp), nil
			}})
	}
	// config.merge with no such option set: the value given, not recorded
	reg.Register(modules.Function{Name: "config.merge", Spec: modules.Spec{Params: []modules.Param{{Name: "value", Required: true}, {Name: "default", Default: nil}}, Kwargs: true},
		Fn: func(ctx context.Context, c *modules.Call) (any, error) { return c.Args.Get("default"), nil }})
	env := &modules.Env{ID: "dev1", Registry: reg, Log: slog.New(slog.DiscardHandler), Grains: payload.NewMap(), Pillar: payload.NewMap(), Opts: payload.NewMap()}
	fun := sc.Fun
	if fun == "" {
		fun = "managed"
	}
	var fn *states.Function
	for _, f := range slices.Concat(netntpStates(), netsnmpStates(), netusersStates(), probesStates(), netconfigStates(), scheduleStates()) {
		if f.Name == sc.State+"."+fun {
			fn = &f
		}
	}
	if fn == nil {
		t.Fatalf("%s: no state %s.%s", sc.Name, sc.State, fun)
	}
	low := nsValue(t, sc.Kwargs).(*payload.Map)
	low.Set("name", sc.Name)
	args, err := modules.BindKeywords(fn.Spec, low)
	if err != nil {
		t.Fatalf("%s: bind: %v", sc.Name, err)
	}
	c := &states.Call{ID: sc.Name, Name: sc.Name, State: sc.State, Fun: fun, Args: args, Low: low, Test: sc.Test, Env: env}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ret, err := fn.Fn(ctx, c)
	return ret, calls, err
}

func TestNetStatesGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(nsDir, "scenarios.json"))
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []nsScenario
	if err := json.Unmarshal(raw, &scenarios); err != nil {
		t.Fatal(err)
	}
	if testutil.Update() {
		src := saltpeer.Require(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, saltpeer.Python(), "testdata/netstates_golden.py", nsDir)
		cmd.Env = saltpeer.Env(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("netstates_golden.py: %v\n%s", err, out)
		}
	}
	graw, err := os.ReadFile(filepath.Join(nsDir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]nsGolden
	if err := json.Unmarshal(graw, &golden); err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			g, ok := golden[sc.Name]
			if !ok {
				t.Fatalf("no golden entry (run with -update and GSALT_SALT_SRC)")
			}
			ret, calls, err := nsRun(t, sc)
			switch {
			case g.Exception != "":
				if err == nil || nsExceptionText(err) != g.Exception {
					t.Errorf("Salt raised %q; gsalt: %v (ret %+v)", g.Exception, err, ret)
				}
			case err != nil:
				t.Errorf("gsalt failed: %v", err)
			default:
				changes := ret.Changes
				if changes == nil {
					changes = &payload.Map{}
				}
				got := payload.NewMap("name", ret.Name, "changes", changes, "result", ret.Result.Value(), "comment", ret.Comment)
				want := nsValue(t, g.Ret)
				if !py.Equal(got, want) {
					t.Errorf("return\n got %s\nwant %s", nsJSON(got), nsJSON(want))
				}
			}
			wantCalls := nsValue(t, g.Calls)
			if calls == nil {
				calls = []any{}
			}
			if !py.Equal(calls, wantCalls) {
				t.Errorf("calls\n got %s\nwant %s", nsJSON(calls), nsJSON(wantCalls))
			}
		})
	}
}

// nsExceptionText is what Python's str() of the exception gsalt's error
// stands for: a PyException's message without its class.
func nsExceptionText(err error) string {
	if pe, ok := errors.AsType[*modules.PyException](err); ok {
		return pe.Message
	}
	return err.Error()
}

func nsJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}

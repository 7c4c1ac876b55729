package runners_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/master/runners"
	sbuiltin "github.com/gsalt/gsalt/states/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// orchEnv is a master for the state runners: options (file_roots and
// pillar_roots on temporary directories) and a recording master client.
type orchEnv struct {
	runners.Env
	opts   map[string]any
	client *orchClient
}

func (e *orchEnv) Opt(k string) (any, bool) { v, ok := e.opts[k]; return v, ok }

func (e *orchEnv) MasterClient(user string) sbuiltin.MasterClient {
	e.client.mu.Lock()
	e.client.users = append(e.client.users, user)
	e.client.mu.Unlock()
	return e.client
}

// orchClient answers every job with true from m1 and records jobs and
// events.
type orchClient struct {
	mu     sync.Mutex
	users  []string
	jobs   []string
	events []string
}

func (c *orchClient) RunJob(_ context.Context, job sbuiltin.MasterJob) (*sbuiltin.MasterJobResult, error) {
	c.mu.Lock()
	c.jobs = append(c.jobs, payload.Text(job.Tgt)+" "+job.Fun)
	c.mu.Unlock()
	return &sbuiltin.MasterJobResult{JID: "j", Minions: []string{"m1"},
		Returns: []sbuiltin.MinionReturn{{ID: "m1", Data: payload.NewMap("id", "m1", "return", true, "retcode", int64(0), "jid", "j")}}}, nil
}

func (c *orchClient) RunRunner(context.Context, string, []any, *payload.Map, string) (*payload.Map, error) {
	return payload.NewMap("return", true, "success", true), nil
}

func (c *orchClient) RunWheel(context.Context, string, []any, *payload.Map, string) (*payload.Map, error) {
	return payload.NewMap("return", true, "success", true), nil
}

func (c *orchClient) FunctionParams(string, string) ([]string, bool) { return nil, true }

func (c *orchClient) FireEvent(tag string, data *payload.Map) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, tag+" "+mapText(data))
	return nil
}

func (c *orchClient) WatchEvents(context.Context, string) (<-chan sbuiltin.MasterEvent, func(), error) {
	return make(chan sbuiltin.MasterEvent), func() {}, nil
}

// newOrchEnv writes the orchestration files and returns the master.
func newOrchEnv(t *testing.T) *orchEnv {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"srv/orch/mixed.sls": "good:\n  test.succeed_with_changes:\n    - name: {{ pillar['greeting'] }} {{ pillar.get('extra', 'none') }}\n" +
			"bad:\n  test.fail_without_changes: []\n" +
			"after:\n  test.nop:\n    - require:\n      - test: bad\n",
		"srv/orch/ok.sls":   "ping:\n  salt.function:\n    - name: test.ping\n    - tgt: m1\nquiet:\n  test.nop: []\n",
		"pillar/top.sls":    "base:\n  '*':\n    - common\n",
		"pillar/common.sls": "greeting: hello\nid_seen: {{ grains['id'] }}\n",
	})
	return &orchEnv{client: &orchClient{}, opts: map[string]any{
		"id": "gm_master", "cachedir": dir + "/cache", "file_roots": map[string]any{"base": []any{dir + "/srv"}},
		"pillar_roots": map[string]any{"base": []any{dir + "/pillar"}}, "grains": payload.NewMap("os", "Testing"),
		"test": false, "user": "salt"}}
}

// orchRun runs a state runner as the master does (jid, user, progress).
func orchRun(t *testing.T, env runners.Env, fun string, args []any, kwargs *payload.Map) (runners.Result, []*payload.Map) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var progress []*payload.Map
	call := &runners.Call{Env: env, Log: quiet(), JID: "20260102030405060708", User: "root",
		Progress: func(d *payload.Map) { progress = append(progress, d) }}
	return runners.Default().Run(ctx, fun, args, kwargs, call), progress
}

// orchSteps maps each state's ID to "result comment" in an
// orchestration's data for the master.
func orchSteps(t *testing.T, data any) map[string]string {
	t.Helper()
	m, ok := data.(*payload.Map)
	if !ok {
		t.Fatalf("data %s", mapText(data))
	}
	out := map[string]string{}
	for _, it := range m.Items() {
		st := it.Value.(*payload.Map)
		r, _ := st.Get("result")
		out[st.Str("__id__")] = mapText(r) + " " + st.Str("comment")
	}
	return out
}

func TestStateRunnersRegistered(t *testing.T) {
	reg := runners.Default()
	for _, n := range []string{"state.orchestrate", "state.orch", "state.sls", "state.orchestrate_single",
		"state.orchestrate_high", "state.orchestrate_show_sls", "state.orch_show_sls"} {
		if _, ok := reg.Lookup(n); !ok {
			t.Errorf("%s is not registered", n)
		}
	}
}

func TestOrchestrate(t *testing.T) {
	env := newOrchEnv(t)
	tests := []struct {
		name    string
		fun     string
		args    []any
		kw      *payload.Map
		success bool
		retcode int64
		steps   map[string]string
	}{
		{name: "failing step, pillar from pillar_roots and override", fun: "state.orchestrate", args: []any{"orch.mixed"},
			kw: payload.NewMap("pillar", payload.NewMap("extra", "there")), retcode: 1,
			steps: map[string]string{
				"good":  "true Success!",
				"bad":   "false Failure!",
				"after": "false One or more requisite failed: orch.mixed.bad",
			}},
		{name: "test mode via alias", fun: "state.orch", args: []any{"orch.mixed"}, kw: payload.NewMap("test", true), retcode: 1,
			steps: map[string]string{
				"good":  "null If we weren't testing, this would be successful with changes",
				"bad":   "false If we weren't testing, this would be a failure!",
				"after": "false One or more requisite failed: orch.mixed.bad",
			}},
		{name: "salt.function through the master client", fun: "state.sls", args: []any{"orch.ok"}, success: true,
			steps: map[string]string{
				"ping":  "true Function ran successfully. Function test.ping ran on m1.",
				"quiet": "true Success!",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := orchRun(t, env, tc.fun, tc.args, tc.kw)
			ret, ok := res.Return.(*payload.Map)
			if !ok || res.Success != tc.success || ret.Str("outputter") != "highstate" || ret.Len() != 3 {
				t.Fatalf("return %s success %v", mapText(res.Return), res.Success)
			}
			if rc, _ := ret.Int("retcode"); rc != tc.retcode {
				t.Errorf("retcode %d, want %d", rc, tc.retcode)
			}
			data := ret.Map("data")
			if data == nil || data.Len() != 1 || !data.Has("gm_master") {
				t.Fatalf("data %s", mapText(data))
			}
			got := orchSteps(t, data.Map("gm_master"))
			for id, want := range tc.steps {
				if got[id] != want {
					t.Errorf("%s: %q, want %q", id, got[id], want)
				}
			}
			if len(got) != len(tc.steps) {
				t.Errorf("steps %v", got)
			}
		})
	}
	// The master's pillar and the override reached the template.
	res, _ := orchRun(t, env, "state.orchestrate", []any{"orch.mixed"}, payload.NewMap("pillar", payload.NewMap("extra", "there")))
	if !strings.Contains(mapText(res.Return), `"name":"hello there"`) {
		t.Errorf("pillar in the orchestration: %s", mapText(res.Return))
	}
	// The salt.function step fired its args under the runner's jid and
	// ran as the runner's user.
	env.client.mu.Lock()
	events, jobs, users := env.client.events, env.client.jobs, env.client.users
	env.client.mu.Unlock()
	if len(jobs) != 1 || jobs[0] != "m1 test.ping" || len(events) != 1 ||
		!strings.HasPrefix(events[0], "salt/run/20260102030405060708/args ") || users[len(users)-1] != "root" {
		t.Errorf("jobs %q events %q users %q", jobs, events, users)
	}
}

func TestOrchestrateErrors(t *testing.T) {
	env := newOrchEnv(t)
	// A missing SLS: the render error list, retcode 1.
	res, _ := orchRun(t, env, "state.orchestrate", []any{"nope"}, nil)
	ret, _ := res.Return.(*payload.Map)
	var errs any
	if ret != nil && ret.Map("data") != nil {
		errs, _ = ret.Map("data").Get("gm_master")
	}
	if res.Success || mapText(errs) != `["No matching sls found for 'nope' in env 'base'"]` {
		t.Fatalf("missing sls: %s", mapText(res.Return))
	}
	// A pillar that is not a dict is the runner's exception.
	res, _ = orchRun(t, env, "state.orchestrate", []any{"orch.ok"}, payload.NewMap("pillar", "x"))
	if s, _ := res.Return.(string); res.Success || !strings.Contains(s, "Pillar data must be formatted as a dictionary") {
		t.Fatalf("bad pillar: %s", mapText(res.Return))
	}
	// mods is required.
	res, _ = orchRun(t, env, "state.orchestrate", nil, nil)
	if s, _ := res.Return.(string); !strings.Contains(s, "orchestrate() missing 1 required positional argument: 'mods'") {
		t.Fatalf("no mods: %s", mapText(res.Return))
	}
}

func TestOrchestrateSingleHighShow(t *testing.T) {
	env := newOrchEnv(t)
	res, progress := orchRun(t, env, "state.orchestrate_single", []any{"test.succeed_with_changes", "one"}, nil)
	single := mapText(res.Return)
	if !res.Success || !strings.HasPrefix(single, `{"gm_master":{"test_|-one_|-one_|-succeed_with_changes":{`) ||
		len(progress) != 1 || progress[0].Str("outputter") != "highstate" || mapText(progress[0].Map("data")) != single {
		t.Fatalf("orchestrate_single: %s progress %v", single, progress)
	}
	high := payload.NewMap("stage", payload.NewMap("test", []any{"succeed_without_changes"}))
	res, progress = orchRun(t, env, "state.orchestrate_high", []any{high}, nil)
	if got := mapText(res.Return); !res.Success || !strings.Contains(got, `"test_|-stage_|-stage_|-succeed_without_changes":{`) || len(progress) != 1 {
		t.Fatalf("orchestrate_high: %s", got)
	}
	for _, fun := range []string{"state.orchestrate_show_sls", "state.orch_show_sls"} {
		res, _ = orchRun(t, env, fun, []any{"orch.ok"}, nil)
		want := `{"gm_master":{"ping":{"salt":[{"name":"test.ping"},{"tgt":"m1"},"function",{"order":10000}],"__sls__":"orch.ok","__env__":"base"},` +
			`"quiet":{"test":["nop",{"order":10001}],"__sls__":"orch.ok","__env__":"base"}}}`
		if got := mapText(res.Return); got != want {
			t.Errorf("%s:\n got %s\nwant %s", fun, got, want)
		}
	}
}

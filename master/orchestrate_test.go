package master

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	sbuiltin "github.com/gsalt/gsalt/states/builtin"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestOrchestrateClient exercises the master client of the salt.* states
// on a master whose minions m1 and p1 answer test.ping (p1 stays silent).
func TestOrchestrateClient(t *testing.T) {
	e := newEnv(t, "timeout: 1\ngather_job_timeout: 1\n")
	tm := e.login("minion1", "m1")
	p1 := e.login("proxy1", "p1")
	e.respond(map[string]bool{"p1": true}, tm, p1)
	mc := (&runnerEnv{m: e.m}).MasterClient("root")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// RunJob: returns sorted by id, expected minions, no error for an
	// empty target.
	res, err := mc.RunJob(ctx, sbuiltin.MasterJob{Tgt: "*", Fun: "test.ping"})
	if err != nil || len(res.Returns) != 1 || res.Returns[0].ID != "m1" || res.Returns[0].Data.Bool("return") != true ||
		!reflect.DeepEqual(res.Minions, []string{"m1", "p1"}) {
		t.Fatalf("RunJob: %+v %v", res, err)
	}
	if res, err := mc.RunJob(ctx, sbuiltin.MasterJob{Tgt: "nobody", Fun: "test.ping"}); err != nil || len(res.Returns) != 0 || len(res.Minions) != 0 {
		t.Fatalf("RunJob without minions: %+v %v", res, err)
	}
	e.drain()

	// RunRunner: the runner's events, its full return; unknown runners
	// and runaway nesting are errors.
	out, err := mc.RunRunner(ctx, "test.arg", []any{"a"}, payload.NewMap("b", int64(1)), "root")
	if err != nil || out.Bool("success") != true || out.Str("fun") != "runner.test.arg" || out.Str("user") != "root" ||
		mapJSON(out.Map("return")) != `{"args":["a"],"kwargs":{"b":1}}` {
		t.Fatalf("RunRunner: %v %v", out, err)
	}
	e.waitEvent("salt/run/" + out.Str("jid") + "/new")
	e.waitEvent("salt/run/" + out.Str("jid") + "/ret")
	if _, err := mc.RunRunner(ctx, "nope.nothing", nil, nil, "root"); !errors.Is(err, sbuiltin.ErrMasterFunction) {
		t.Fatalf("unknown runner: %v", err)
	}
	deep := context.WithValue(ctx, orchDepthKey{}, maxOrchestrationDepth)
	if _, err := mc.RunRunner(deep, "test.arg", nil, nil, "root"); !errors.Is(err, ErrOrchestrationDepth) {
		t.Fatalf("depth: %v", err)
	}

	// RunWheel.
	out, err = mc.RunWheel(ctx, "key.list_all", nil, payload.NewMap(), "UNKNOWN")
	if err != nil || out.Bool("success") != true || out.Str("fun") != "wheel.key.list_all" ||
		!strings.Contains(mapJSON(out.Map("return")), `"minions":["m1","p1"]`) {
		t.Fatalf("RunWheel: %v %v", out, err)
	}
	if _, err := mc.RunWheel(ctx, "nope.nothing", nil, nil, "root"); !errors.Is(err, sbuiltin.ErrMasterFunction) {
		t.Fatalf("unknown wheel: %v", err)
	}

	// FunctionParams.
	for _, tc := range []struct {
		kind, fun string
		want      []string
		ok        bool
	}{
		{"runner", "state.orchestrate", []string{"mods", "saltenv", "test", "exclude", "pillar", "pillarenv", "pillar_enc", "orchestration_jid"}, true},
		{"wheel", "file_roots.find", []string{"path", "saltenv"}, true},
		{"wheel", "key.list_all", []string{}, true},
		{"runner", "nope.nothing", nil, false},
		{"cloud", "x.y", nil, false},
	} {
		got, ok := mc.FunctionParams(tc.kind, tc.fun)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("FunctionParams(%s, %s) = %v %v", tc.kind, tc.fun, got, ok)
		}
	}

	// WatchEvents sees the matching events FireEvent puts on the bus and
	// closes its channel when stopped.
	evs, stop, err := mc.WatchEvents(ctx, "my/*/start")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"my/a/start", "other/b/start", "my/c/start"} {
		if err := mc.FireEvent(tag, payload.NewMap("id", tag)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"my/a/start", "my/c/start"} {
		select {
		case ev := <-evs:
			if ev.Tag != want || ev.Data.Str("id") != want {
				t.Fatalf("event %s %v, want %s", ev.Tag, ev.Data, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no event %s", want)
		}
	}
	stop()
	select {
	case _, ok := <-evs:
		if ok {
			t.Fatal("an event after stop")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel stayed open after stop")
	}
}

// TestOrchestrateRunnerCommand: the clear runner command runs an
// orchestration whose salt.function, salt.wheel, salt.runner and
// salt.wait_for_event steps go through the master.
func TestOrchestrateRunnerCommand(t *testing.T) {
	e := newEnv(t, "timeout: 2\ngather_job_timeout: 1\n")
	tm := e.login("minion1", "m1")
	e.respond(nil, tm)
	sls := "ping:\n  salt.function:\n    - name: test.ping\n    - tgt: m1\n" +
		"keys:\n  salt.wheel:\n    - name: key.list_all\n" +
		"inner:\n  salt.runner:\n    - name: test.arg\n    - arg: [x]\n    - require:\n      - salt: ping\n" +
		"waited:\n  salt.wait_for_event:\n    - name: orch/ready/*\n    - id_list: [m1]\n    - timeout: 20\n" +
		"ghost:\n  salt.function:\n    - name: test.ping\n    - tgt: ghost\n"
	p := filepath.Join(e.root, "srv", "salt", "orch.sls")
	if err := os.WriteFile(p, []byte(sls), 0o644); err != nil {
		t.Fatal(err)
	}
	// The event the wait_for_event step waits for, fired once it listens.
	go func() {
		sub := e.bus.Subscribe(event.Prefix("salt/run/"), 1024)
		defer sub.Close()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case ev := <-sub.C():
				if strings.HasSuffix(ev.Tag, "/ret") && ev.Data.Str("fun") == "runner.test.arg" {
					time.Sleep(100 * time.Millisecond) // the event comes late, while the orchestration already waits for it
					e.bus.Publish(event.Event{Tag: "orch/ready/m1", Data: payload.NewMap("id", "m1")})
					return
				}
			case <-timeout:
				return
			}
		}
	}()
	runEvents := e.bus.Subscribe(event.Prefix("salt/run/"), 1024)
	defer runEvents.Close()
	jid, ret := e.runner("state.orchestrate", payload.NewMap("arg", []any{"orch"}))
	if ret.Bool("success") {
		t.Errorf("success although the ghost step failed")
	}
	rv := ret.Map("return")
	if rc, _ := rv.Int("retcode"); rc != 1 || rv.Str("outputter") != "highstate" {
		t.Fatalf("return %s", mapJSON(ret))
	}
	got := map[string]string{}
	for _, it := range rv.Map("data").Map(e.cfg.ID).Items() {
		st := it.Value.(*payload.Map)
		r, _ := st.Get("result")
		got[st.Str("__id__")] = payload.Text(r) + " " + st.Str("comment")
	}
	want := map[string]string{
		"ping":   "True Function ran successfully. Function test.ping ran on m1.",
		"keys":   "True Wheel function 'key.list_all' executed.",
		"inner":  "True Runner function 'test.arg' executed.",
		"waited": "True All events seen in ",
		"ghost":  "False No minions responded",
	}
	for id, w := range want {
		if !strings.HasPrefix(got[id], w) {
			t.Errorf("%s: %q, want %q", id, got[id], w)
		}
	}
	// The steps' arguments went out under the runner's jid.
	args := 0
	for len(runEvents.C()) > 0 {
		if ev := <-runEvents.C(); ev.Tag == "salt/run/"+jid+"/args" {
			args++
		}
	}
	if args != 4 {
		t.Errorf("%d args events under the orchestration's jid, want 4 (function, wheel, runner, function)", args)
	}
}

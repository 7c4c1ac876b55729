package master

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/target"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// respond makes the given minions answer publishes: test.ping returns
// true, saltutil.find_job {} and saltutil.running one fake job. Minions
// listed in silent do not answer test.ping.
func (e *env) respond(silent map[string]bool, tms ...*tminion) {
	e.pub.mu.Lock()
	defer e.pub.mu.Unlock()
	e.pub.hook = func(frames [][]byte) {
		for _, tm := range tms {
			load, _, err := message.OpenPublish(tm.sess, nil, frames[len(frames)-1], payload.DefaultLimits)
			if err != nil {
				continue
			}
			tgt, _ := load.Get("tgt")
			if ok, _ := e.m.matcher.Match(tgt, load.Str("tgt_type"), "", target.Minion{ID: tm.id}); !ok {
				continue
			}
			var ret any
			switch load.Str("fun") {
			case "test.ping":
				if silent[tm.id] {
					continue
				}
				ret = true
			case "saltutil.find_job":
				ret = payload.NewMap()
			case "saltutil.running":
				ret = []any{payload.NewMap("pid", 42, "fun", "test.sleep", "arg", []any{10}, "tgt", "*",
					"jid", "20260101000000000001", "ret", "", "tgt_type", "glob", "user", "root")}
			default:
				continue
			}
			frame, _, err := message.EncodeAESRequest(tm.sess, returnLoad(tm.id, load.Str("jid"), ret).Set("fun", load.Str("fun")))
			if err != nil {
				continue
			}
			e.m.HandleRequest(context.Background(), frame)
		}
	}
}

// runner sends the clear runner command and waits for its ret event.
func (e *env) runner(fun string, kwarg *payload.Map) (jid string, ret *payload.Map) {
	e.t.Helper()
	load := payload.NewMap("cmd", "runner", "fun", fun, "kwarg", kwarg, "key", e.rootKy, "user", "root")
	rep, ok := e.clear(load).(*payload.Map)
	if !ok || rep.Has("error") {
		e.t.Fatalf("runner reply %v", rep)
	}
	jid = rep.Str("jid")
	if rep.Str("tag") != "salt/run/"+jid || len(jid) != 20 {
		e.t.Fatalf("runner reply %s", mapJSON(rep))
	}
	newEv := e.waitEvent("salt/run/" + jid + "/new")
	if newEv.Data.Str("fun") != "runner."+fun || newEv.Data.Str("user") != "root" {
		e.t.Fatalf("new event %s", mapJSON(newEv.Data))
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-e.events.C():
			if ev.Tag == "salt/run/"+jid+"/ret" {
				return jid, ev.Data
			}
		case <-deadline:
			e.t.Fatalf("no ret event for %s", fun)
		}
	}
}

func TestRunnerCommand(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	p1 := e.login("proxy1", "p1")
	e.respond(map[string]bool{"p1": true}, tm, p1) // p1 never answers test.ping
	e.drain()

	// Authentication.
	for _, l := range []*payload.Map{
		payload.NewMap("cmd", "runner", "fun", "manage.up"),
		payload.NewMap("cmd", "runner", "fun", "manage.up", "key", "nope"),
		payload.NewMap("cmd", "runner", "fun", "manage.up", "key", e.rootKy, "token", "t"),
	} {
		rep, _ := e.clear(l).(*payload.Map)
		if rep == nil || rep.Map("error") == nil {
			t.Fatalf("unauthenticated runner: %v", rep)
		}
	}
	e.noEvent("salt/run/")

	_, ret := e.runner("manage.status", payload.NewMap("timeout", 1, "gather_job_timeout", 1))
	want := payload.NewMap("up", []any{"m1"}, "down", []any{"p1"})
	if !reflect.DeepEqual(mustGet(ret, "return"), want) || ret.Bool("success") != true {
		t.Fatalf("manage.status %s", mapJSON(ret))
	}
	if !reflect.DeepEqual(ret.Keys(), []string{"fun", "jid", "user", "fun_args", "return", "success", "_stamp"}) {
		t.Fatalf("ret keys %v", ret.Keys())
	}
	jid, ret := e.runner("manage.down", payload.NewMap("arg", []any{}, "kwarg", payload.NewMap("timeout", 1, "gather_job_timeout", "1")))
	if !reflect.DeepEqual(mustGet(ret, "return"), []any{"p1"}) {
		t.Fatalf("manage.down %s", mapJSON(ret))
	}
	// The runner's return is in the job cache under the master's id.
	job, err := e.jobs.Get(jid)
	if err != nil || job.Returns[e.cfg.ID] == nil {
		t.Fatalf("runner job %v %v", job, err)
	}
	_, ret = e.runner("manage.up", payload.NewMap("tgt", "p*", "timeout", 1, "gather_job_timeout", 1))
	if !reflect.DeepEqual(mustGet(ret, "return"), []any{}) {
		t.Fatalf("manage.up p* %s", mapJSON(ret))
	}
	_, ret = e.runner("manage.up", payload.NewMap("tgt", "nobody", "timeout", 1))
	if !reflect.DeepEqual(mustGet(ret, "return"), []any{}) {
		t.Fatalf("manage.up nobody %s", mapJSON(ret))
	}

	// jobs.* over a published job with one return.
	pjid, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "*", Fun: "test.ping", Kwargs: payload.NewMap("metadata", payload.NewMap("k", "v"))})
	if err != nil {
		t.Fatal(err)
	}
	e.waitEvent("salt/job/" + pjid + "/ret/m1")
	_, ret = e.runner("jobs.lookup_jid", payload.NewMap("jid", pjid, "missing", true))
	if got := mustGet(ret, "return"); !reflect.DeepEqual(got, payload.NewMap("m1", true, "p1", "Minion did not return")) {
		t.Fatalf("lookup_jid %v", got)
	}
	_, ret = e.runner("jobs.print_job", payload.NewMap("arg", []any{pjid}, "kwarg", payload.NewMap()))
	pj := ret.Map("return").Map(pjid)
	if pj == nil || !reflect.DeepEqual(pj.Keys(), []string{"Function", "Arguments", "Target", "Target-type", "User", "Metadata", "Minions", "StartTime", "Result"}) {
		t.Fatalf("print_job %s", mapJSON(ret))
	}
	if r := pj.Map("Result").Map("m1"); r == nil || r.Bool("return") != true || !strings.HasPrefix(pj.Str("StartTime"), pjid[:4]+", ") {
		t.Fatalf("print_job result %s", mapJSON(pj))
	}
	_, ret = e.runner("jobs.list_jobs", payload.NewMap("search_function", "test.*"))
	lj := ret.Map("return")
	if lj == nil || lj.Map(pjid) == nil || lj.Map(pjid).Has("Minions") || lj.Map(pjid).Str("Function") != "test.ping" {
		t.Fatalf("list_jobs %s", mapJSON(ret))
	}
	for _, it := range lj.Items() {
		if it.Value.(*payload.Map).Str("Function") == "runner.manage.status" {
			t.Fatal("list_jobs lists runner jobs")
		}
	}
	_, ret = e.runner("jobs.list_jobs", payload.NewMap("search_function", "nomatch.*"))
	if ret.Map("return").Len() != 0 {
		t.Fatalf("list_jobs filter %s", mapJSON(ret))
	}
	_, ret = e.runner("jobs.active", payload.NewMap())
	act := ret.Map("return").Map("20260101000000000001")
	if act == nil || !reflect.DeepEqual(act.List("Running"), []any{payload.NewMap("m1", int64(42)), payload.NewMap("p1", int64(42))}) || act.Str("Function") != "test.sleep" {
		t.Fatalf("jobs.active %s", mapJSON(ret))
	}

	// Errors are reported in the return, as Salt does.
	_, ret = e.runner("nope.nope", payload.NewMap())
	if ret.Bool("success") || ret.Str("return") != "Exception occurred in runner nope.nope: 'nope.nope' is not available." {
		t.Fatalf("unknown runner %s", mapJSON(ret))
	}
	_, ret = e.runner("jobs.lookup_jid", payload.NewMap())
	if !strings.Contains(ret.Str("return"), "Passed invalid arguments: lookup_jid() missing 1 required positional argument: 'jid'") {
		t.Fatalf("missing arg %s", mapJSON(ret))
	}
}

func TestRunJobFindJob(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	// m1 answers find_job with a running job twice, then returns.
	var finds atomic.Int32
	e.pub.mu.Lock()
	e.pub.hook = func(frames [][]byte) {
		load, _, err := message.OpenPublish(tm.sess, nil, frames[0], payload.DefaultLimits)
		if err != nil {
			return
		}
		send := func(jid, fun string, ret any) {
			frame, _, _ := message.EncodeAESRequest(tm.sess, returnLoad("m1", jid, ret).Set("fun", fun))
			e.m.HandleRequest(context.Background(), frame)
		}
		if load.Str("fun") == "saltutil.find_job" {
			n := finds.Add(1)
			jid := payload.Text(load.List("arg")[0])
			send(load.Str("jid"), "saltutil.find_job", payload.NewMap("jid", jid, "fun", "test.sleep", "pid", 1))
			if n == 2 {
				send(jid, "test.sleep", true)
			}
		}
	}
	e.pub.mu.Unlock()
	start := time.Now()
	res, err := e.m.RunJob(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.sleep", Arg: []any{5}}, 200*time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Returns["m1"]; r == nil || r.Bool("return") != true || finds.Load() != 2 {
		t.Fatalf("returns %v finds %d after %v", res.Returns, finds.Load(), time.Since(start))
	}
}

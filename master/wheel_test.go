package master

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/wire/payload"
)

// nextEvents returns the next n events whose tag has one of the prefixes.
func (e *env) nextEvents(n int, prefixes ...string) []event.Event {
	e.t.Helper()
	var out []event.Event
	deadline := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case ev := <-e.events.C():
			for _, p := range prefixes {
				if strings.HasPrefix(ev.Tag, p) {
					out = append(out, ev)
					break
				}
			}
		case <-deadline:
			e.t.Fatalf("only %d of %d events %v", len(out), n, prefixes)
		}
	}
	return out
}

func TestWheelCommand(t *testing.T) {
	e := newEnv(t, "")
	copyFile(t, filepath.Join(vectorsDir, "pki/minion1/minion.pub"), filepath.Join(e.cfg.PKIDir, "minions_pre", "m1"), 0o644)
	e.drain()

	// Authentication, as for the runner command.
	for _, tc := range []struct {
		load *payload.Map
		name string
	}{
		{payload.NewMap("cmd", "wheel", "fun", "key.list_all"), "UserAuthenticationError"},
		{payload.NewMap("cmd", "wheel", "fun", "key.list_all", "key", "nope"), "UserAuthenticationError"},
		{payload.NewMap("cmd", "wheel", "fun", "key.list_all", "token", "t"), "TokenAuthenticationError"},
		{payload.NewMap("cmd", "wheel", "fun", "key.list_all", "eauth", "pam", "username", "bob"), "EauthAuthenticationError"},
	} {
		rep, _ := e.clear(tc.load).(*payload.Map)
		if rep == nil || rep.Map("error") == nil || rep.Map("error").Str("name") != tc.name {
			t.Fatalf("unauthenticated wheel %s: %v", mapJSON(tc.load), rep)
		}
	}
	e.noEvent("salt/wheel/")

	// key.list_all by name, as salt-api and WheelClient.cmd_sync send it.
	rep, ok := e.clear(payload.NewMap("cmd", "wheel", "fun", "key.list_all", "key", e.rootKy)).(*payload.Map)
	if !ok || rep.Map("data") == nil {
		t.Fatalf("wheel reply %v", rep)
	}
	data := rep.Map("data")
	jid := data.Str("jid")
	if rep.Str("tag") != "salt/wheel/"+jid || data.Str("tag") != rep.Str("tag") || data.Str("fun") != "wheel.key.list_all" ||
		data.Str("user") != e.m.processUser() || data.Bool("success") != true ||
		!reflect.DeepEqual(data.Keys(), []string{"fun", "jid", "tag", "user", "_stamp", "return", "success"}) {
		t.Fatalf("wheel reply %s", mapJSON(rep))
	}
	want := `{"minions":[],"minions_pre":["m1"],"minions_rejected":[],"minions_denied":[],"local":["master.pem","master.pub"]}`
	if got := mapJSON(data.Map("return")); got != want {
		t.Fatalf("key.list_all %s", got)
	}
	// Events: the command's new, the client's new and ret under a second
	// jid, the command's ret (whose data is the reply's).
	evs := e.nextEvents(4, "salt/wheel/")
	if evs[0].Tag != "salt/wheel/"+jid+"/new" || evs[0].Data.Has("return") || evs[0].Data.Str("tag") != rep.Str("tag") {
		t.Fatalf("first event %s %s", evs[0].Tag, mapJSON(evs[0].Data))
	}
	inner := evs[1].Data.Str("jid")
	if inner == jid || evs[1].Tag != "salt/wheel/"+inner+"/new" || evs[1].Data.Str("user") != "UNKNOWN" ||
		!reflect.DeepEqual(evs[1].Data.Keys(), []string{"fun", "jid", "user", "fun_args", "_stamp"}) || len(evs[1].Data.List("fun_args")) != 0 {
		t.Fatalf("inner new %s %s", evs[1].Tag, mapJSON(evs[1].Data))
	}
	if evs[2].Tag != "salt/wheel/"+inner+"/ret" || mapJSON(evs[2].Data.Map("return")) != want ||
		!reflect.DeepEqual(evs[2].Data.Keys(), []string{"fun", "jid", "user", "fun_args", "_stamp", "return", "success"}) {
		t.Fatalf("inner ret %s %s", evs[2].Tag, mapJSON(evs[2].Data))
	}
	if evs[3].Tag != "salt/wheel/"+jid+"/ret" || mapJSON(evs[3].Data) != mapJSON(data) {
		t.Fatalf("outer ret %s %s\nreply %s", evs[3].Tag, mapJSON(evs[3].Data), mapJSON(data))
	}
	// The function's run is in the job cache under the master's id.
	if job, err := e.jobs.Get(inner); err != nil || job.Returns[e.cfg.ID] == nil {
		t.Fatalf("wheel job %v %v", job, err)
	}

	// key.accept: the key moves and salt/key fires between the new and ret
	// events.
	rep, _ = e.clear(payload.NewMap("cmd", "wheel", "fun", "key.accept", "match", "m1", "key", e.rootKy)).(*payload.Map)
	if got := mapJSON(rep.Map("data").Map("return")); got != `{"minions":["m1"]}` {
		t.Fatalf("key.accept %s", got)
	}
	evs = e.nextEvents(5, "salt/wheel/", keys.TagKey)
	tags := []string{}
	for _, ev := range evs {
		tags = append(tags, ev.Tag[strings.LastIndex(ev.Tag, "/")+1:])
	}
	if !reflect.DeepEqual(tags, []string{"new", "new", "key", "ret", "ret"}) || evs[2].Data.Str("act") != "accept" || evs[2].Data.Str("id") != "m1" ||
		len(evs[1].Data.List("fun_args")) != 2 {
		t.Fatalf("accept events %v %s", tags, mapJSON(evs[1].Data))
	}
	if _, err := os.Stat(filepath.Join(e.cfg.PKIDir, "minions", "m1")); err != nil {
		t.Fatal("m1 not accepted")
	}

	// Salt passes the load's "user" on to the function, which rejects it;
	// an unknown function and a missing argument fail the same way.
	for _, tc := range []struct {
		load *payload.Map
		ret  string
	}{
		{payload.NewMap("cmd", "wheel", "fun", "key.list_all", "user", "root"),
			"Exception occurred in wheel key.list_all: 'user' is an invalid keyword argument for 'salt.loaded.int.wheel.key.list_all'"},
		{payload.NewMap("cmd", "wheel", "fun", "nope.nope"), "Exception occurred in wheel nope.nope: 'nope.nope' is not available."},
		{payload.NewMap("cmd", "wheel", "fun", "key.list"), "Exception occurred in wheel key.list: list_ takes at least 1 argument (0 given)"},
	} {
		tc.load.Set("key", e.rootKy)
		e.drain()
		rep, _ := e.clear(tc.load).(*payload.Map)
		d := rep.Map("data")
		if d == nil || d.Str("return") != tc.ret || d.Bool("success") {
			t.Fatalf("%s: %s", mapJSON(tc.load), mapJSON(rep))
		}
		// No client "new" event: only the command's new, the client's ret
		// and the command's ret.
		evs := e.nextEvents(3, "salt/wheel/")
		if !strings.HasSuffix(evs[0].Tag, "/new") || !strings.HasSuffix(evs[1].Tag, "/ret") || !strings.HasSuffix(evs[2].Tag, "/ret") {
			t.Fatalf("events %s %s %s", evs[0].Tag, evs[1].Tag, evs[2].Tag)
		}
	}
	rep, _ = e.clear(payload.NewMap("cmd", "wheel", "key", e.rootKy)).(*payload.Map)
	if rep.Map("error") == nil {
		t.Fatalf("no fun: %s", mapJSON(rep))
	}
}

func TestRunWheel(t *testing.T) {
	e := newEnv(t, "")
	e.drain()
	ret := e.m.RunWheel(context.Background(), "key.list", []any{"acc"}, nil, "Reactor")
	if ret.Str("fun") != "wheel.key.list" || ret.Str("user") != "Reactor" || !ret.Bool("success") ||
		mapJSON(ret.Map("return")) != `{"minions":[]}` || !reflect.DeepEqual(ret.List("fun_args"), []any{"acc"}) ||
		!reflect.DeepEqual(ret.Keys(), []string{"fun", "jid", "user", "fun_args", "_stamp", "return", "success"}) {
		t.Fatalf("RunWheel %s", mapJSON(ret))
	}
	evs := e.nextEvents(2, "salt/wheel/")
	jid := ret.Str("jid")
	if evs[0].Tag != "salt/wheel/"+jid+"/new" || evs[1].Tag != "salt/wheel/"+jid+"/ret" || mapJSON(evs[1].Data) != mapJSON(ret) {
		t.Fatalf("events %s %s", evs[0].Tag, evs[1].Tag)
	}
	if job, err := e.jobs.Get(jid); err != nil || job.Returns[e.cfg.ID] == nil {
		t.Fatalf("job %v %v", job, err)
	}
	// Keyword arguments are passed on; an unexpected one gives Salt's
	// "Passed invalid arguments" text, still a success.
	ret = e.m.RunWheel(context.Background(), "key.list", []any{"acc"}, payload.NewMap("bogus", 1), "Reactor")
	if !ret.Bool("success") || !strings.HasPrefix(ret.Str("return"), "\nPassed invalid arguments: list_() got an unexpected keyword argument 'bogus'") {
		t.Fatalf("bad kwarg %s", mapJSON(ret))
	}
}

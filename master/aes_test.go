package master

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

func returnLoad(id, jid string, ret any) *payload.Map {
	return payload.NewMap("cmd", "_return", "id", id, "success", true, "return", ret, "retcode", 0,
		"jid", jid, "fun", "test.ping", "fun_args", []any{})
}

func TestReturn(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	jid := e.pingJob("m1")
	if got := e.mustAES(tm, returnLoad("m1", jid, true)); got != nil {
		t.Fatalf("_return reply %v, want nil", got)
	}
	ev := e.waitEvent("salt/job/" + jid + "/ret/m1")
	want := []string{"cmd", "id", "success", "return", "retcode", "jid", "fun", "fun_args", "_stamp"}
	if !reflect.DeepEqual(ev.Data.Keys(), want) || ev.Data.Bool("return") != true {
		t.Fatalf("ret event %s", mapJSON(ev.Data))
	}
	job, err := e.jobs.Get(jid)
	if err != nil {
		t.Fatal(err)
	}
	if r := job.Returns["m1"]; r == nil || r.Bool("return") != true || r.Str("fun") != "test.ping" {
		t.Fatalf("stored return %v", job.Returns)
	}
	// A duplicate (retry or replay) is dropped without an event.
	e.mustAES(tm, returnLoad("m1", jid, false))
	e.noEvent("salt/job/")
	if job, _ := e.jobs.Get(jid); job.Returns["m1"].Bool("return") != true {
		t.Fatal("duplicate return replaced the first one")
	}
	// A return for an id without an accepted key is ignored.
	e.mustAES(tm, returnLoad("ghost", jid, true))
	e.mustAES(tm, returnLoad("../x", jid, true))
	e.noEvent("salt/job/")
	if job, _ := e.jobs.Get(jid); len(job.Returns) != 1 {
		t.Fatalf("returns %v", job.Returns)
	}
	// Incomplete returns are ignored.
	e.mustAES(tm, payload.NewMap("cmd", "_return", "id", "m1", "jid", jid))
	e.noEvent("salt/job/")
	// jid "req": the master allocates a jid and saves the load.
	e.mustAES(tm, returnLoad("m1", "req", "sched").Set("fun_args", []any{"a"}))
	ev = e.waitEvent("salt/job/")
	newJID := ev.Data.Str("jid")
	if newJID == "req" || ev.Tag != "salt/job/"+newJID+"/ret/m1" || ev.Data.Str("tgt") != "m1" {
		t.Fatalf("req return event %s %s", ev.Tag, mapJSON(ev.Data))
	}
	job, err = e.jobs.Get(newJID)
	if err != nil || job.Load.Str("tgt_type") != "glob" || !reflect.DeepEqual(job.Load.List("arg"), []any{"a"}) {
		t.Fatalf("req job %v %v", job, err)
	}
	// nocache: fired, not stored.
	e.mustAES(tm, returnLoad("m1", "nocache", true))
	e.waitEvent("salt/job/nocache/ret/m1")
}

func TestReturnSigned(t *testing.T) {
	e := newEnv(t, "require_minion_sign_messages: True\ndrop_messages_signature_fail: True\n")
	tm := e.login("minion1", "m1")
	jid, _, _, _ := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"})
	e.drain()
	e.mustAES(tm, returnLoad("m1", jid, true))
	e.noEvent("salt/job/")
	l := returnLoad("m1", jid, true)
	packed, _ := payload.MarshalBin(l)
	sig, _ := crypt.Sign(tm.priv, packed)
	bad := l.Clone().Set("sig", append([]byte{}, sig[:len(sig)-1]...))
	e.mustAES(tm, bad)
	e.noEvent("salt/job/")
	e.mustAES(tm, l.Set("sig", sig))
	if ev := e.waitEvent("salt/job/" + jid + "/ret/m1"); !ev.Data.Has("sig") {
		t.Fatal("signature dropped from the event")
	}
}

func TestMinionEvent(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	other := e.login("proxy1", "p1")
	e.drain()
	// Single form: the whole load (without tok) is the data.
	got := e.mustAES(tm, payload.NewMap("id", "m1", "cmd", "_minion_event", "pretag", nil, "tok", tm.tok(t),
		"data", payload.NewMap("x", 1), "tag", "my/tag"))
	if got != nil {
		t.Fatalf("reply %v", got)
	}
	ev := e.waitEvent("my/tag")
	if !reflect.DeepEqual(ev.Data.Keys(), []string{"id", "cmd", "pretag", "data", "tag", "_stamp"}) {
		t.Fatalf("event %s", mapJSON(ev.Data))
	}
	// Batch form with pretag: each event twice.
	e.mustAES(tm, payload.NewMap("id", "m1", "cmd", "_minion_event", "pretag", "syndic/s1", "tok", tm.tok(t),
		"events", []any{payload.NewMap("tag", "b/one", "data", payload.NewMap("n", 1)), payload.NewMap("tag", "b/two", "k", "v")}))
	if ev := e.waitEvent("b/one"); ev.Data.Map("n") != nil || !ev.Data.Has("n") {
		t.Fatalf("b/one %s", mapJSON(ev.Data))
	}
	e.waitEvent("syndic/s1/b/one")
	if ev := e.waitEvent("b/two"); ev.Data.Str("k") != "v" {
		t.Fatalf("b/two %s", mapJSON(ev.Data))
	}
	e.waitEvent("syndic/s1/b/two")
	// A tok of another minion, or none, is refused with {}.
	for _, l := range []*payload.Map{
		payload.NewMap("id", "m1", "cmd", "_minion_event", "tok", other.tok(t), "data", payload.NewMap(), "tag", "evil"),
		payload.NewMap("id", "m1", "cmd", "_minion_event", "data", payload.NewMap(), "tag", "evil"),
		payload.NewMap("id", "ghost", "cmd", "_minion_event", "tok", tm.tok(t), "data", payload.NewMap(), "tag", "evil"),
	} {
		if got := e.mustAES(tm, l); !reflect.DeepEqual(got, payload.NewMap()) {
			t.Errorf("forged event reply %v", got)
		}
	}
	e.noEvent("evil")
}

func pillarLoad(id string, grains *payload.Map) *payload.Map {
	return payload.NewMap("cmd", "_pillar", "id", id, "grains", grains, "saltenv", "base", "pillarenv", nil,
		"pillar_override", payload.NewMap(), "extra_minion_data", payload.NewMap(), "ver", "2")
}

func TestPillar(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	e.login("proxy1", "p1")
	e.drain()
	mpub, _ := crypt.ParsePublicKeyPEM(e.m.pubPEM)
	ask := func(tm *tminion, load *payload.Map) (any, error) {
		frame, nonce, err := message.EncodeAESRequest(tm.sess, load)
		if err != nil {
			t.Fatal(err)
		}
		reply, _ := e.request(frame)
		return message.OpenPrivateReply(tm.priv, mpub, reply, nonce, payload.DefaultLimits)
	}
	got, err := ask(tm, pillarLoad("m1", payload.NewMap("os", "Debian", "ipv4", []any{"10.0.0.1"})))
	if err != nil || !reflect.DeepEqual(got, payload.NewMap()) {
		t.Fatalf("pillar %v %v", got, err)
	}
	if ev := e.waitEvent("minion/refresh/m1"); ev.Data.Str("Minion data cache refresh") != "m1" {
		t.Fatalf("refresh event %s", mapJSON(ev.Data))
	}
	if _, err := os.Stat(filepath.Join(e.cfg.CacheDir, "minions", "m1", "data.p")); err != nil {
		t.Fatal(err)
	}
	// Grain targeting now uses the cache; p1 has none and is included
	// (greedy), m1 is excluded when its grains do not match.
	_, minions, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "os:Debian", TgtType: "grain", Fun: "test.ping"})
	if err != nil || !reflect.DeepEqual(minions, []string{"m1", "p1"}) {
		t.Fatalf("grain target: %v %v", minions, err)
	}
	_, minions, _, _ = e.m.Publish(context.Background(), PublishRequest{Tgt: "os:Arch", TgtType: "grain", Fun: "test.ping"})
	if !reflect.DeepEqual(minions, []string{"p1"}) {
		t.Fatalf("grain target os:Arch: %v", minions)
	}
	_, minions, _, _ = e.m.Publish(context.Background(), PublishRequest{Tgt: "10.0.0.0/8", TgtType: "ipcidr", Fun: "test.ping"})
	if !reflect.DeepEqual(minions, []string{"m1", "p1"}) {
		t.Fatalf("ipcidr: %v", minions)
	}
	// A pillar function is used when given; its result is cached too.
	e.m.pillar = func(_ context.Context, r PillarRequest) (*payload.Map, error) {
		return payload.NewMap("role", "web", "id", r.ID, "os", r.Grains.Str("os")), nil
	}
	got, err = ask(tm, pillarLoad("m1", payload.NewMap("os", "Debian")))
	if err != nil || !reflect.DeepEqual(got, payload.NewMap("role", "web", "id", "m1", "os", "Debian")) {
		t.Fatalf("pillar with function %v %v", got, err)
	}
	_, minions, _, _ = e.m.Publish(context.Background(), PublishRequest{Tgt: "role:web", TgtType: "pillar", Fun: "test.ping"})
	if !reflect.DeepEqual(minions, []string{"m1", "p1"}) {
		t.Fatalf("pillar target: %v", minions)
	}
	// A request for an id without an accepted key.
	if _, err := ask(tm, pillarLoad("ghost", payload.NewMap())); err == nil {
		t.Fatal("pillar for ghost succeeded")
	}
	frame, _, _ := message.EncodeAESRequest(tm.sess, pillarLoad("ghost", payload.NewMap()))
	reply, _ := e.request(frame)
	if v, _ := payload.Unmarshal(reply); !reflect.DeepEqual(v, payload.NewMap("error", "AES key not found")) {
		t.Fatalf("ghost pillar reply %v", v)
	}
	// m1's pillar encrypted for m1 cannot be opened with p1's key.
	frame, nonce, _ := message.EncodeAESRequest(tm.sess, pillarLoad("m1", payload.NewMap()))
	reply, _ = e.request(frame)
	p1 := vectorMinion(t, "proxy1", "p1")
	if _, err := message.OpenPrivateReply(p1.priv, mpub, reply, nonce, payload.DefaultLimits); err == nil {
		t.Fatal("p1 opened m1's pillar")
	}
}

func TestMasterOpts(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	got := e.mustAES(tm, payload.NewMap("cmd", "_master_opts")).(*payload.Map)
	want := []string{"file_roots", "top_file_merging_strategy", "env_order", "default_top", "renderer", "failhard",
		"state_top", "state_top_saltenv", "nodegroups", "state_auto_order", "state_events", "state_aggregate",
		"jinja_env", "jinja_sls_env", "jinja_lstrip_blocks", "jinja_trim_blocks"}
	if !reflect.DeepEqual(got.Keys(), want) {
		t.Fatalf("keys %v", got.Keys())
	}
	if !reflect.DeepEqual(got.Map("file_roots"), payload.NewMap("base", []any{})) || got.Str("renderer") != "jinja|yaml" || got.Str("state_top") != "top.sls" {
		t.Fatalf("values %s", mapJSON(got))
	}
	got = e.mustAES(tm, payload.NewMap("cmd", "_master_opts", "env_only", true)).(*payload.Map)
	if len(got.Keys()) != 4 {
		t.Fatalf("env_only keys %v", got.Keys())
	}
	if got := e.mustAES(tm, payload.NewMap("cmd", "_master_tops", "id", "m1", "tok", tm.tok(t), "opts", payload.NewMap())); !reflect.DeepEqual(got, payload.NewMap()) {
		t.Fatalf("tops %v", got)
	}
}

func TestMine(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	p1 := e.login("proxy1", "p1")
	mine := func(tm *tminion, kv ...any) any {
		l := payload.NewMap(kv...)
		l.Set("id", tm.id).Set("tok", tm.tok(t))
		return e.mustAES(tm, l)
	}
	if got := mine(tm, "cmd", "_mine", "data", payload.NewMap("network.ip_addrs", []any{"10.0.0.1"}, "f2", 2), "clear", false); got != true {
		t.Fatalf("_mine %v", got)
	}
	mine(p1, "cmd", "_mine", "data", payload.NewMap("network.ip_addrs", []any{"10.0.0.2"}), "clear", false)
	got := mine(p1, "cmd", "_mine_get", "tgt", "*", "fun", "network.ip_addrs", "tgt_type", "glob")
	want := payload.NewMap("m1", []any{"10.0.0.1"}, "p1", []any{"10.0.0.2"})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("_mine_get %v", got)
	}
	got = mine(p1, "cmd", "_mine_get", "tgt", "m1", "fun", "network.ip_addrs,f2", "tgt_type", "glob")
	if m, ok := got.(*payload.Map); !ok || m.Map("f2") == nil || m.Map("network.ip_addrs") == nil {
		t.Fatalf("multi _mine_get %v", got)
	}
	// Merge, then replace with clear.
	mine(tm, "cmd", "_mine", "data", payload.NewMap("f3", 3), "clear", false)
	if got := e.m.data.getMine("m1"); got.Len() != 3 {
		t.Fatalf("merged mine %s", mapJSON(got))
	}
	mine(tm, "cmd", "_mine", "data", payload.NewMap("f4", 4), "clear", true)
	if got := e.m.data.getMine("m1"); !reflect.DeepEqual(got.Keys(), []string{"f4"}) {
		t.Fatalf("cleared mine %s", mapJSON(got))
	}
	// Persisted in Salt's layout, and read back by a new master.
	m2, err := New(Options{Config: e.cfg, Keys: e.keys, Bus: e.bus, Jobs: e.jobs, Publisher: e.pub, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if got := m2.data.getMine("m1"); !reflect.DeepEqual(got, payload.NewMap("f4", int64(4))) {
		t.Fatalf("reloaded mine %v", got)
	}
	if got := mine(tm, "cmd", "_mine_delete", "fun", "f4"); got != true {
		t.Fatalf("_mine_delete %v", got)
	}
	if got := e.m.data.getMine("m1"); got.Len() != 0 {
		t.Fatalf("after delete %s", mapJSON(got))
	}
	if got := mine(tm, "cmd", "_mine_flush"); got != true {
		t.Fatalf("_mine_flush %v", got)
	}
	if got := mine(tm, "cmd", "_mine_flush"); got != false {
		t.Fatalf("second _mine_flush %v", got)
	}
	// Minion-side ACL: p1's function is only for m1.
	mine(p1, "cmd", "_mine", "data", payload.NewMap("secret", payload.NewMap("__saltmine_acl__", 1, "__data__", "s3cr3t", "allow_tgt", "m1")), "clear", false)
	if got := mine(p1, "cmd", "_mine_get", "tgt", "p1", "fun", "secret"); !reflect.DeepEqual(got, payload.NewMap()) {
		t.Fatalf("ACL not applied: %v", got)
	}
	if got := mine(tm, "cmd", "_mine_get", "tgt", "p1", "fun", "secret"); !reflect.DeepEqual(got, payload.NewMap("p1", "s3cr3t")) {
		t.Fatalf("ACL allowed: %v", got)
	}
	// The mine.get runner asks with the master's id: the ACL'd entry is
	// hidden, plain entries are returned for the target.
	mine(tm, "cmd", "_mine", "data", payload.NewMap("network.ip_addrs", []any{"10.0.0.1"}), "clear", false)
	rr := e.m.RunRunner(context.Background(), "", "mine.get", []any{"*", "network.ip_addrs,secret"}, nil, "root")
	if got := rr.Map("return"); got == nil || got.Map("secret") != nil || got.Map("network.ip_addrs").Len() != 2 {
		t.Fatalf("mine.get runner: %s", mapJSON(rr))
	}
	// Without a valid tok: {}.
	l := payload.NewMap("cmd", "_mine", "id", "m1", "tok", p1.tok(t), "data", payload.NewMap("x", 1))
	if got := e.mustAES(tm, l); !reflect.DeepEqual(got, payload.NewMap()) {
		t.Fatalf("forged _mine %v", got)
	}
}

func TestUnknownAndPrivateCommands(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	for _, cmd := range []string{"__init__", "_nope", "verify_minion", "minion_pub", "_syndic_return", "pub_ret"} {
		if got := e.mustAES(tm, payload.NewMap("cmd", cmd, "id", "m1")); !reflect.DeepEqual(got, payload.NewMap()) {
			t.Errorf("%s: %v", cmd, got)
		}
	}
	if got := e.mustAES(tm, payload.NewMap("cmd", "_file_recv", "id", "m1", "path", []any{"x"}, "loc", 0, "data", "x")); got != false {
		t.Errorf("_file_recv %v", got)
	}
}

func TestRotation(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"})
	old := tm.sess
	e.drain()
	// A dropfile with the wrong mode is ignored.
	drop := filepath.Join(e.cfg.CacheDir, ".dfn")
	if err := os.WriteFile(drop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.m.CheckRotation(); ok || err != nil {
		t.Fatalf("wrong-mode dropfile rotated: %v %v", ok, err)
	}
	os.Remove(drop)
	if ok, _ := e.m.CheckRotation(); ok {
		t.Fatal("rotated without dropfile")
	}
	if _, err := e.keys.Delete("nothing-matches"); err != nil {
		t.Fatal(err)
	}
	// salt-key's delete creates the dropfile (mode 0400).
	if _, err := os.Stat(drop); err != nil {
		t.Fatalf("no dropfile after delete: %v", err)
	}
	if ok, err := e.m.CheckRotation(); !ok || err != nil {
		t.Fatalf("rotation: %v %v", ok, err)
	}
	if _, err := os.Stat(drop); !os.IsNotExist(err) {
		t.Fatal("dropfile left behind")
	}
	if ev := e.waitEvent("key"); ev.Tag != "key" || ev.Data.Bool("rotate_aes_key") != true {
		t.Fatalf("rotation event %s %s", ev.Tag, mapJSON(ev.Data))
	}
	if e.m.SessionKey() == old.KeyString() {
		t.Fatal("session key unchanged")
	}
	// The old key gets the clear "bad load", which OpenSendReply reports
	// as ErrDecrypt: the minion re-authenticates.
	_, err := e.aes(tm, payload.NewMap("cmd", "_file_envs"))
	if !errors.Is(err, message.ErrDecrypt) {
		t.Fatalf("old key: %v", err)
	}
	if r := e.auth(tm); r.Status != message.AuthAccepted || r.SessionKey != e.m.SessionKey() {
		t.Fatalf("re-auth %v", r.Status)
	}
	if got := e.mustAES(tm, payload.NewMap("cmd", "_file_envs")); !reflect.DeepEqual(got, []any{"base"}) {
		t.Fatalf("after re-auth %v", got)
	}
	// The serial starts again at 1, and the old key cannot read publishes.
	e.pub.reset()
	e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"})
	msg := e.pub.all()[0]
	if _, s := e.openPublish(tm.sess, msg); s != 1 {
		t.Fatalf("serial after rotation %d", s)
	}
	if _, _, err := message.OpenPublish(old, nil, msg[0], payload.DefaultLimits); !errors.Is(err, message.ErrDecrypt) {
		t.Fatalf("old key read the publish: %v", err)
	}
}

func TestPingOnRotate(t *testing.T) {
	e := newEnv(t, "ping_on_rotate: True\n")
	tm := e.login("minion1", "m1")
	if err := e.m.Rotate(); err != nil {
		t.Fatal(err)
	}
	e.auth(tm)
	msgs := e.pub.all()
	if len(msgs) != 1 {
		t.Fatalf("%d publishes", len(msgs))
	}
	if pl, _ := e.openPublish(tm.sess, msgs[0]); pl.Str("fun") != "test.ping" {
		t.Fatalf("ping_on_rotate published %s", mapJSON(pl))
	}
}

// TestManyReturnsAtOnce: many minions (sharing one key, like deltaproxy
// sub-ids) return at the same moment; nothing is lost.
func TestManyReturnsAtOnce(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	const n = 300
	pub, _ := os.ReadFile(filepath.Join(vectorsDir, "pki/minion1/minion.pub"))
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("sub-%03d", i)
		ids = append(ids, id)
		if err := os.WriteFile(filepath.Join(e.cfg.PKIDir, "minions", id), pub, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jid, minions, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "sub-*", Fun: "test.ping"})
	if err != nil || len(minions) != n {
		t.Fatalf("publish: %d %v", len(minions), err)
	}
	e.drain()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			frame, _, err := message.EncodeAESRequest(tm.sess, returnLoad(id, jid, true))
			if err != nil {
				t.Error(err)
				return
			}
			e.m.HandleRequest(context.Background(), frame)
		}(id)
	}
	wg.Wait()
	got := map[string]bool{}
	for len(got) < n {
		ev := e.waitEvent("salt/job/" + jid + "/ret/")
		got[ev.Data.Str("id")] = true
	}
	job, err := e.jobs.Get(jid)
	if err != nil || len(job.Returns) != n {
		t.Fatalf("stored %d returns: %v", len(job.Returns), err)
	}
}

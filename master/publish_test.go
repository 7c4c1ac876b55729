package master

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

func authError() *payload.Map {
	return payload.NewMap("error", payload.NewMap("name", "AuthenticationError", "message", "Authentication error occurred."))
}

// otherKey returns key with its first character changed (never equal to key).
func otherKey(key string) string {
	if key[0] == 'x' {
		return "y" + key[1:]
	}
	return "x" + key[1:]
}

func TestClearPublishAuthentication(t *testing.T) {
	e := newEnv(t, "")
	e.login("minion1", "m1")
	for _, tc := range []struct {
		name string
		load *payload.Map
	}{
		{"no key", e.publishReq("*", "test.ping", []any{}, nil)},
		{"empty key", e.publishReq("*", "test.ping", []any{}, "")},
		{"wrong key", e.publishReq("*", "test.ping", []any{}, otherKey(e.rootKy))},
		{"find_job without key", e.publishReq("*", "saltutil.find_job", []any{"20260101000000000000"}, nil)},
		{"token", e.publishReq("*", "test.ping", []any{}, e.rootKy).Set("kwargs", payload.NewMap("token", "abc"))},
		{"eauth", e.publishReq("*", "test.ping", []any{}, e.rootKy).Set("kwargs", payload.NewMap("eauth", "pam"))},
	} {
		e.pub.reset()
		got := e.clear(tc.load)
		if !reflect.DeepEqual(got, authError()) {
			t.Errorf("%s: reply %v", tc.name, got)
		}
		if len(e.pub.all()) != 0 {
			t.Errorf("%s: something was published", tc.name)
		}
		if ev := e.waitEvent("salt/job/error"); ev.Data.Map("error") == nil || ev.Data.Has("key") {
			t.Errorf("%s: error event %s", tc.name, mapJSON(ev.Data))
		}
	}
	e.noEvent("salt/job/2")
}

func TestClearPublish(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	e.drain()
	arg := []any{"1", "two", payload.NewMap("__kwarg__", true, "k", "v")}
	load := e.publishReq("*", "test.arg", arg, e.rootKy)
	load.Set("kwargs", payload.NewMap("metadata", payload.NewMap("a", "b"), "delimiter", "|"))
	rep, ok := e.clear(load).(*payload.Map)
	if !ok || rep.Str("enc") != "clear" {
		t.Fatalf("reply %v", rep)
	}
	rl := rep.Map("load")
	jid := rl.Str("jid")
	if len(jid) != 20 || !reflect.DeepEqual(rl.List("minions"), []any{"m1"}) || len(rl.List("missing")) != 0 || !rl.Has("missing") {
		t.Fatalf("reply load %s", mapJSON(rl))
	}
	if ev := e.waitEvent(jid); ev.Tag != jid || !reflect.DeepEqual(ev.Data.List("minions"), []any{"m1"}) {
		t.Fatalf("bare jid event %s %s", ev.Tag, mapJSON(ev.Data))
	}
	ev := e.waitEvent("salt/job/" + jid + "/new")
	want := []string{"jid", "tgt_type", "tgt", "user", "fun", "arg", "minions", "missing", "_stamp"}
	if !reflect.DeepEqual(ev.Data.Keys(), want) || ev.Data.Str("fun") != "test.arg" || ev.Data.Str("user") != "root" {
		t.Fatalf("new event %s", mapJSON(ev.Data))
	}
	job, err := e.jobs.Get(jid)
	if err != nil {
		t.Fatal(err)
	}
	if job.Load.Has("key") || job.Load.Str("jid") != jid || job.Load.Str("fun") != "test.arg" || !reflect.DeepEqual(job.Minions, []string{"m1"}) {
		t.Fatalf("saved load %s minions %v", mapJSON(job.Load), job.Minions)
	}
	msgs := e.pub.all()
	if len(msgs) != 1 || len(msgs[0]) != 1 {
		t.Fatalf("published %d messages", len(msgs))
	}
	pl, serial := e.openPublish(tm.sess, msgs[0])
	if serial != 1 {
		t.Errorf("serial %d", serial)
	}
	wantKeys := []string{"fun", "arg", "tgt", "jid", "ret", "delimiter", "tgt_type", "metadata", "user"}
	if !reflect.DeepEqual(pl.Keys(), wantKeys) {
		t.Errorf("publish load keys %v, want %v", pl.Keys(), wantKeys)
	}
	if pl.Str("jid") != jid || pl.Str("delimiter") != "|" || !reflect.DeepEqual(pl.List("arg"), arg) {
		t.Errorf("publish load %s", mapJSON(pl))
	}

	// A second publish carries the next serial; a list target reports
	// names without a key as missing.
	e.pub.reset()
	l2 := e.publishReq([]any{"m1", "ghost"}, "test.ping", []any{}, e.rootKy).Set("tgt_type", "list")
	rl = e.clear(l2).(*payload.Map).Map("load")
	if !reflect.DeepEqual(rl.List("minions"), []any{"m1"}) || !reflect.DeepEqual(rl.List("missing"), []any{"ghost"}) {
		t.Fatalf("list publish %s", mapJSON(rl))
	}
	if _, s := e.openPublish(tm.sess, e.pub.all()[0]); s != 2 {
		t.Errorf("second serial %d", s)
	}

	// No minion matched: Salt's error form, nothing published.
	e.pub.reset()
	got := e.clear(e.publishReq("nomatch*", "test.ping", []any{}, e.rootKy))
	wantErr := payload.NewMap("enc", "clear", "load", payload.NewMap("jid", nil, "minions", []any{},
		"error", "Master could not resolve minions for target nomatch*"))
	if !reflect.DeepEqual(got, wantErr) || len(e.pub.all()) != 0 {
		t.Fatalf("no-minion reply %v", got)
	}

	// A preset jid is kept; a bad one is refused.
	preset := e.jobs.NewJID()
	rl = e.clear(e.publishReq("m1", "test.ping", []any{}, e.rootKy).Set("jid", preset)).(*payload.Map).Map("load")
	if rl.Str("jid") != preset {
		t.Fatalf("preset jid: %s", mapJSON(rl))
	}
	if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping", JID: "notajid"}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("bad jid: %v", err)
	}
	if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1"}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("no fun: %v", err)
	}
}

func TestPublishInProcess(t *testing.T) {
	e := newEnv(t, "nodegroups: {grp: 'L@m1,m2'}\n")
	tm := e.login("minion1", "m1")
	jid, minions, missing, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "grp", TgtType: "nodegroup", Fun: "test.ping"})
	if err != nil || len(jid) != 20 || !reflect.DeepEqual(minions, []string{"m1"}) || !reflect.DeepEqual(missing, []string{"m2"}) {
		t.Fatalf("publish: %v %v %v %v", jid, minions, missing, err)
	}
	pl, _ := e.openPublish(tm.sess, e.pub.all()[0])
	if pl.Str("tgt_type") != "compound" || pl.Str("tgt") == "grp" {
		t.Fatalf("nodegroup not expanded: %s", mapJSON(pl))
	}
	if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "zzz", Fun: "test.ping"}); !errors.Is(err, ErrNoMinions) {
		t.Fatalf("no minions: %v", err)
	}
}

func TestPublishZMQFiltering(t *testing.T) {
	e := newEnv(t, "zmq_filtering: True\n")
	tm := e.login("minion1", "m1")
	e.login("proxy1", "p1")
	sum := sha1.Sum([]byte("m1"))
	for _, tc := range []struct {
		tgt     any
		tgtType string
		topics  []string
	}{
		{"m*", "glob", []string{hex.EncodeToString(sum[:])}},
		{[]any{"m1", "nokey"}, "list", []string{hex.EncodeToString(sum[:]), sha1hex("nokey")}},
		{"os:Debian", "grain", []string{"broadcast"}},
	} {
		e.pub.reset()
		if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: tc.tgt, TgtType: tc.tgtType, Fun: "test.ping"}); err != nil {
			t.Fatal(err)
		}
		msgs := e.pub.all()
		var topics []string
		for _, m := range msgs {
			if len(m) != 2 {
				t.Fatalf("%v: %d frames", tc.tgt, len(m))
			}
			topics = append(topics, string(m[0]))
			e.openPublish(tm.sess, m)
		}
		if !reflect.DeepEqual(topics, tc.topics) {
			t.Errorf("%v: topics %v, want %v", tc.tgt, topics, tc.topics)
		}
	}
}

func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestClearPingAndUnknown(t *testing.T) {
	e := newEnv(t, "")
	got := e.clear(payload.NewMap("cmd", "ping", "x", 1))
	if !reflect.DeepEqual(got, payload.NewMap("cmd", "ping", "x", int64(1))) {
		t.Fatalf("ping: %v", got)
	}
	if got := e.clear(payload.NewMap("cmd", "mk_token", "key", e.rootKy)); got != "" {
		t.Errorf("mk_token without eauth: %v", got)
	}
	if got := e.clear(payload.NewMap("cmd", "get_token", "key", e.rootKy)); got != false {
		t.Errorf("get_token without token: %v", got)
	}
	for _, cmd := range []string{"publish_batch", "nope"} {
		if got := e.clear(payload.NewMap("cmd", cmd, "key", e.rootKy)); !reflect.DeepEqual(got, payload.NewMap()) {
			t.Errorf("%s: %v", cmd, got)
		}
	}
}

func TestLocalCacheMirror(t *testing.T) {
	e := newEnv(t, "keep_jobs_seconds: 3600\n")
	e.login("minion1", "m1")
	mirrorDir := func(jid string) string {
		sum := sha256.Sum256([]byte(jid))
		h := hex.EncodeToString(sum[:])
		return filepath.Join(e.cfg.CacheDir, "jobs", h[:2], h[2:])
	}
	// An in-process publish (reactor, runners) has no Python LocalClient
	// waiting for its jid: no mirror, but the job cache has the job.
	inproc, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mirrorDir(inproc)); !os.IsNotExist(err) {
		t.Fatalf("in-process publish wrote a local_cache mirror: %v", err)
	}
	if j, err := e.m.jobs.Get(inproc); err != nil || j.Load.Str("fun") != "test.ping" {
		t.Fatalf("in-process publish not in the job cache: %v %v", j, err)
	}
	// A queued one (the reactor's) is committed soon after, without a mirror.
	queued, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.echo", Arg: []any{"q"}, Queued: true})
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		j, err := e.m.jobs.Get(queued)
		return err == nil && j.Load.Str("fun") == "test.echo" && len(j.Minions) == 1
	}, "the queued publish's load in the job cache")
	if _, err := os.Stat(mirrorDir(queued)); !os.IsNotExist(err) {
		t.Fatalf("queued publish wrote a local_cache mirror: %v", err)
	}
	// The clear publish command (Python's LocalClient) gets the mirror.
	rl, _ := e.clear(e.publishReq("m1", "test.ping", []any{}, e.rootKy)).(*payload.Map)
	jid := rl.Map("load").Str("jid")
	if jid == "" {
		t.Fatalf("clear publish: %v", rl)
	}
	dir := mirrorDir(jid)
	if b, err := os.ReadFile(filepath.Join(dir, "jid")); err != nil || string(b) != jid {
		t.Fatalf("jid file %q %v", b, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".load.p"))
	if err != nil {
		t.Fatal(err)
	}
	load, err := payload.UnmarshalMap(b)
	if err != nil || load.Str("jid") != jid || load.Str("fun") != "test.ping" || load.Has("key") {
		t.Fatalf(".load.p %v %v", load, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".minions.p")); !bytes.Equal(b, []byte("\x91\xa2m1")) {
		t.Fatalf(".minions.p %x", b)
	}
	// Pruning keeps young jobs and removes old ones and jid-less dirs,
	// but not a jid-less dir just made (a job being written).
	stray := filepath.Join(e.cfg.CacheDir, "jobs", "zz", "stray")
	os.MkdirAll(stray, 0o755)
	if err := e.m.pruneMirror(time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatal("a job directory being written (no jid file yet) was pruned")
	}
	if err := e.m.pruneMirror(time.Now().Add(2 * mirrorGrace)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal("young job pruned")
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatal("jid-less dir kept")
	}
	if err := e.m.pruneMirror(time.Now().Add(2 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatal("old job kept")
	}
}

// TestConcurrentPublishSerialOrder: publishes from many goroutines sign
// in parallel but leave in serial order (1, 2, 3, ...), every one signed;
// a rotation in the middle lets the publishes already in line go out
// with the old key first, and later ones carry the new key from serial 1.
func TestConcurrentPublishSerialOrder(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	e.drain()
	e.pub.reset()
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	msgs := e.pub.all()
	if len(msgs) != n {
		t.Fatalf("published %d messages, want %d", len(msgs), n)
	}
	for i, msg := range msgs {
		if _, s := e.openPublish(tm.sess, msg); s != int64(i+1) {
			t.Fatalf("message %d has serial %d", i, s)
		}
	}

	// Rotation racing with publishes: each message decrypts with exactly
	// one of the two keys, old-key messages all come first, and serials
	// increase within each key.
	old := tm.sess
	e.pub.reset()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i == n/2 {
				if err := e.m.Rotate(); err != nil {
					t.Error(err)
				}
				return
			}
			if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	newSess, err := crypt.NewCrypticle(e.m.SessionKey())
	if err != nil {
		t.Fatal(err)
	}
	msgs = e.pub.all()
	if len(msgs) != n-1 {
		t.Fatalf("published %d messages, want %d", len(msgs), n-1)
	}
	last := int64(n) // the old key's serials go on from the first part
	seenNew := false
	for i, msg := range msgs {
		_, s, err := message.OpenPublish(old, nil, msg[len(msg)-1], payload.DefaultLimits)
		if err != nil {
			_, s, err = message.OpenPublish(newSess, nil, msg[len(msg)-1], payload.DefaultLimits)
			if err != nil {
				t.Fatalf("message %d opens with neither key: %v", i, err)
			}
			if !seenNew {
				seenNew, last = true, 0
			}
		} else if seenNew {
			t.Fatalf("message %d uses the old key after a new-key message", i)
		}
		if s != last+1 {
			t.Fatalf("message %d has serial %d after %d", i, s, last)
		}
		last = s
	}
}

// TestPublishAnswersDespiteStuckCommit: a publish whose load the job cache
// cannot commit (here its writer is held, as a seconds-long fsync on a
// busy disk holds it) is still sent and answered after loadCommitWait,
// counted in SlowLoadCommits, and its load is stored once the writer
// goes on. Without the bound the publish waited for the commit and the
// CLI's request (timeout -t) ran out during a 10,000-minion auth storm.
func TestPublishAnswersDespiteStuckCommit(t *testing.T) {
	e := newEnv(t, "")
	e.login("minion1", "m1")
	// Answered from the commit when the writer runs freely.
	if _, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"}); err != nil {
		t.Fatal(err)
	}
	if n := e.m.Stats().SlowLoadCommits; n != 0 {
		t.Fatalf("free writer: %d slow commits", n)
	}
	release := make(chan struct{})
	held := make(chan struct{})
	// A done callback runs on the writer's goroutine: blocking it holds
	// every later commit.
	if err := e.jobs.SaveLoadQueued("20260101000000000000", payload.NewMap("fun", "test.ping"), nil, func(error) {
		close(held)
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	<-held
	type res struct {
		jid string
		err error
	}
	got := make(chan res, 1)
	go func() {
		jid, _, _, err := e.m.Publish(context.Background(), PublishRequest{Tgt: "m1", Fun: "test.ping"})
		got <- res{jid, err}
	}()
	var r res
	select {
	case r = <-got:
	case <-time.After(loadCommitWait + 30*time.Second):
		close(release)
		t.Fatal("the publish waited for the held commit")
	}
	if r.err != nil || r.jid == "" {
		close(release)
		t.Fatalf("publish: %q %v", r.jid, r.err)
	}
	if n := e.m.Stats().SlowLoadCommits; n != 1 {
		close(release)
		t.Fatalf("%d slow commits, want 1", n)
	}
	if n := len(e.pub.all()); n != 2 {
		close(release)
		t.Fatalf("%d publishes sent, want 2", n)
	}
	if _, err := e.jobs.Get(r.jid); err == nil {
		close(release)
		t.Fatal("the load was committed while the writer was held")
	}
	close(release)
	testutil.Eventually(t, 10*time.Second, func() bool { _, err := e.jobs.Get(r.jid); return err == nil },
		"the load committed after the writer went on")
}

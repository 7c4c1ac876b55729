package minion

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// wait bounds every poll of the minion tests (stretched by
// GSALT_TEST_SLOWDOWN on a loaded machine).
var wait = testutil.Scale(20 * time.Second)

func keysOf(m *payload.Map) []string { return m.Keys() }

func jobLoad(jid, fun string, args []any, kv ...any) *payload.Map {
	l := payload.NewMap("fun", fun, "arg", args, "tgt", "m1", "jid", jid, "ret", "", "tgt_type", "glob", "user", "root")
	for i := 0; i+1 < len(kv); i += 2 {
		l.Set(kv[i].(string), kv[i+1])
	}
	return l
}

// TestPendingThenAccepted covers first start: key generation, pending
// retries, TOFU of the master key, pillar, start events and a job.
func TestPendingThenAccepted(t *testing.T) {
	fm := newFakeMaster(t, filepath.Join(vectorsPKI, "master/master.pem"), 0, 0)
	cfg := minionConfig(t, "m1", fm, "")
	var readyCalls atomic.Int64
	m, stop := startMinion(t, cfg, Options{OnReady: func() { readyCalls.Add(1) }})

	testutil.Eventually(t, wait, func() bool { return fm.authCount("m1") >= 2 }, "the minion to retry its pending auth")
	select {
	case <-m.Ready():
		t.Fatal("ready while pending")
	default:
	}
	if n := readyCalls.Load(); n != 0 {
		t.Fatalf("OnReady called %d times while pending", n)
	}
	if !errors.Is(m.LastAuthError(), ErrPending) {
		t.Fatalf("last auth error %v, want pending", m.LastAuthError())
	}
	st, err := os.Stat(filepath.Join(cfg.PKIDir, "minion.pem"))
	if err != nil || st.Mode().Perm() != 0o400 {
		t.Fatalf("minion.pem: %v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.PKIDir, "minion_master.pub")); err == nil {
		t.Fatal("master key cached before acceptance")
	}
	fm.set("m1", "accept")

	pl := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_pillar" })
	if got, want := keysOf(pl), []string{"id", "grains", "saltenv", "pillarenv", "pillar_override", "extra_minion_data", "ver", "cmd"}; !reflect.DeepEqual(got, want) {
		t.Errorf("_pillar keys %v, want %v", got, want)
	}
	if pl.Str("ver") != "2" || pl.Map("grains").Str("id") != "m1" {
		t.Errorf("_pillar load %s", mustJSON(pl))
	}
	pub, _ := crypt.ParsePublicKeyPEM(fm.minionPub("m1"))
	for _, tag := range []string{"minion_start", "salt/minion/m1/start"} {
		ev := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_minion_event" && l.Str("tag") == tag })
		if got, want := keysOf(ev), []string{"id", "cmd", "pretag", "tok", "data", "tag"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s keys %v, want %v", tag, got, want)
		}
		if !strings.HasPrefix(ev.Str("data"), "Minion m1 started at ") {
			t.Errorf("%s data %q", tag, ev.Str("data"))
		}
		if err := crypt.VerifyToken(pub, ev.Bytes("tok")); err != nil {
			t.Errorf("%s tok: %v", tag, err)
		}
	}
	waitReady(t, m, wait)
	testutil.Eventually(t, wait, func() bool { return readyCalls.Load() >= 1 }, "OnReady once ready")
	defer func() {
		if n := readyCalls.Load(); n != 1 {
			t.Errorf("OnReady called %d times", n)
		}
	}()
	warmup(t, fm)
	cached, err := os.ReadFile(filepath.Join(cfg.PKIDir, "minion_master.pub"))
	if err != nil || !bytes.Equal(cached, fm.pubPEM) {
		t.Fatalf("minion_master.pub not cached: %v", err)
	}
	if v, _ := m.Pillar().Get("role"); v != "web" {
		t.Errorf("pillar %s", mustJSON(m.Pillar()))
	}

	fm.publish(jobLoad("20260101000000000001", "test.ping", []any{}))
	ret := fm.waitReq(t, wait, isReturn("20260101000000000001"))
	if got, want := keysOf(ret), []string{"cmd", "id", "success", "return", "retcode", "jid", "fun", "fun_args", "user"}; !reflect.DeepEqual(got, want) {
		t.Errorf("_return keys %v, want %v", got, want)
	}
	if v, _ := ret.Get("return"); v != true || !ret.Bool("success") || ret.Str("id") != "m1" || ret.Str("user") != "root" {
		t.Errorf("_return %s", mustJSON(ret))
	}

	fm.publish(jobLoad("20260101000000000002", "test.arg", []any{int64(1), "two", payload.NewMap("__kwarg__", true, "k", "v")}))
	ret = fm.waitReq(t, wait, isReturn("20260101000000000002"))
	fa := ret.List("fun_args")
	if len(fa) != 3 || fa[2].(*payload.Map).Has("__kwarg__") || fa[2].(*payload.Map).Str("k") != "v" {
		t.Errorf("fun_args %v", fa)
	}
	r := ret.Map("return")
	if r == nil || !reflect.DeepEqual(r.List("args"), []any{int64(1), "two"}) || r.Map("kwargs").Str("k") != "v" || r.Map("kwargs").Str("__pub_jid") != "20260101000000000002" {
		t.Errorf("test.arg return %s", mustJSON(ret))
	}

	// Errors: a missing function, an exception, a retcode.
	fm.publish(jobLoad("20260101000000000003", "nosuch.fun", []any{}))
	ret = fm.waitReq(t, wait, isReturn("20260101000000000003"))
	if got, want := keysOf(ret), []string{"cmd", "id", "success", "return", "retcode", "out", "jid", "fun", "fun_args", "user"}; !reflect.DeepEqual(got, want) {
		t.Errorf("missing function keys %v, want %v", got, want)
	}
	if ret.Str("return") != "'nosuch.fun' is not available." || ret.Bool("success") {
		t.Errorf("missing function return %s", mustJSON(ret))
	}
	fm.publish(jobLoad("20260101000000000004", "test.retcode", []any{int64(3)}))
	ret = fm.waitReq(t, wait, isReturn("20260101000000000004"))
	if rc, _ := ret.Int("retcode"); rc != 3 || ret.Bool("success") {
		t.Errorf("retcode return %s", mustJSON(ret))
	}
	fm.publish(jobLoad("20260101000000000005", "test.exception", []any{"boom"}))
	ret = fm.waitReq(t, wait, isReturn("20260101000000000005"))
	if got := keysOf(ret)[:6]; !reflect.DeepEqual(got, []string{"cmd", "id", "success", "return", "out", "retcode"}) || ret.Str("out") != "nested" {
		t.Errorf("exception return %s", mustJSON(ret))
	}
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// acceptedMinion starts a master that accepts m1 and a ready minion.
func acceptedMinion(t *testing.T, extra string) (*fakeMaster, *Minion) {
	t.Helper()
	fm := newFakeMaster(t, filepath.Join(vectorsPKI, "master/master.pem"), 0, 0)
	fm.set("m1", "accept")
	cfg := minionConfig(t, "m1", fm, extra)
	installKey(t, cfg, "minion1")
	m, _ := startMinion(t, cfg, Options{})
	waitReady(t, m, wait)
	if strings.Contains(extra, "zmq_filtering: True") {
		warmup(t, fm, []byte("broadcast"))
	} else {
		warmup(t, fm)
	}
	return fm, m
}

// warmup publishes test.ping until the minion answers: a subscription
// reaches the publisher a moment after the connection is up (ZeroMQ's
// "slow joiner"), so a publish sent right after Ready may be missed.
func warmup(t *testing.T, fm *fakeMaster, topic ...[]byte) {
	t.Helper()
	deadline := time.Now().Add(wait)
	var others []*payload.Map
	defer func() {
		// Give the other requests back to the test, in order.
		for _, l := range others {
			fm.reqCh <- l
		}
	}()
	for i := 0; ; i++ {
		jid := fmt.Sprintf("2025010100000000%04d", i)
		frames := append(append([][]byte{}, topic...), fm.publishFrame(jobLoad(jid, "test.ping", []any{}), 0))
		if err := fm.pub.Publish(frames...); err != nil {
			t.Fatal(err)
		}
		timer := time.NewTimer(200 * time.Millisecond)
	drain:
		for {
			select {
			case l := <-fm.reqCh:
				if l.Str("cmd") == "_return" && strings.HasPrefix(l.Str("jid"), "2025010100000000") {
					timer.Stop()
					return
				}
				others = append(others, l)
			case <-timer.C:
				break drain
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the minion never answered a warm-up ping")
		}
	}
}

func TestTargeting(t *testing.T) {
	fm, _ := acceptedMinion(t, "")
	tests := []struct {
		jid     string
		tgt     any
		tgtType string
		extra   []any
		match   bool
	}{
		{"20260101000000000101", "other", "glob", nil, false},
		{"20260101000000000102", "m*", "glob", nil, true},
		{"20260101000000000103", "role:db", "grain", nil, false},
		{"20260101000000000104", "roles:app", "grain", nil, true},
		{"20260101000000000105", "nested:k:v", "pillar", nil, true},
		{"20260101000000000106", "nested:k:x", "pillar", nil, false},
		{"20260101000000000107", []any{"a", "m1"}, "list", nil, true},
		{"20260101000000000108", "G@role:web and not m2", "compound", nil, true},
		{"20260101000000000109", "role|web", "grain", []any{"delimiter", "|"}, true},
		{"20260101000000000110", "m1", "nosuchtype", nil, false},
	}
	for _, tc := range tests {
		l := jobLoad(tc.jid, "test.ping", []any{}, tc.extra...)
		l.Set("tgt", tc.tgt).Set("tgt_type", tc.tgtType)
		fm.publish(l)
	}
	got := map[string]bool{}
	fm.noReq(t, 1500*time.Millisecond, func(l *payload.Map) bool {
		if l.Str("cmd") == "_return" {
			got[l.Str("jid")] = true
		}
		return false
	})
	for _, tc := range tests {
		if got[tc.jid] != tc.match {
			t.Errorf("%v/%s: returned %v, want %v", tc.tgt, tc.tgtType, got[tc.jid], tc.match)
		}
	}
}

func TestReplayAndDuplicates(t *testing.T) {
	fm, _ := acceptedMinion(t, "")
	first := fm.publishFrame(jobLoad("20260101000000000201", "test.ping", []any{}), 10)
	if err := fm.pub.Publish(first); err != nil {
		t.Fatal(err)
	}
	fm.waitReq(t, wait, isReturn("20260101000000000201"))
	// A lower (or equal) serial with a new jid is a replay; the same frame
	// again is both a replay and a duplicate jid.
	for _, f := range [][]byte{
		fm.publishFrame(jobLoad("20260101000000000202", "test.ping", []any{}), 10),
		fm.publishFrame(jobLoad("20260101000000000203", "test.ping", []any{}), 3),
		first,
	} {
		if err := fm.pub.Publish(f); err != nil {
			t.Fatal(err)
		}
	}
	// A new serial with an already seen jid is a duplicate.
	if err := fm.pub.Publish(fm.publishFrame(jobLoad("20260101000000000201", "test.ping", []any{}), 11)); err != nil {
		t.Fatal(err)
	}
	if err := fm.pub.Publish(fm.publishFrame(jobLoad("20260101000000000204", "test.ping", []any{}), 12)); err != nil {
		t.Fatal(err)
	}
	fm.waitReq(t, wait, func(l *payload.Map) bool {
		if l.Str("cmd") == "_return" && l.Str("jid") != "20260101000000000204" {
			t.Fatalf("replayed or duplicate job ran: %s", mustJSON(l))
		}
		return l.Str("cmd") == "_return"
	})
	fm.noReq(t, 500*time.Millisecond, func(l *payload.Map) bool { return l.Str("cmd") == "_return" })
}

func TestSessionKeyChange(t *testing.T) {
	fm, m := acceptedMinion(t, "")
	before := fm.authCount("m1")
	fm.rotate()
	fm.publish(jobLoad("20260101000000000301", "test.ping", []any{}))
	fm.waitReq(t, wait, isReturn("20260101000000000301"))
	if fm.authCount("m1") <= before || m.Authentications() < 2 {
		t.Fatalf("no re-auth after the key change (%d -> %d)", before, fm.authCount("m1"))
	}
	// The serial restarts at 1 with the new key and keeps being checked.
	fm.publish(jobLoad("20260101000000000302", "test.ping", []any{}))
	fm.waitReq(t, wait, isReturn("20260101000000000302"))

	// Request path: a request made with a stale key is answered "bad
	// load"; the minion re-authenticates and retries it once.
	fm.rotate()
	n := fm.authCount("m1")
	fm.mu.Lock()
	fm.c, _ = crypt.NewCrypticle(fm.key)
	fm.mu.Unlock()
	if _, err := m.request(t.Context(), payload.NewMap("cmd", "_minion_event", "id", "m1", "tok", nil, "data", "x", "tag", "t/x"), 1, 5*time.Second); err != nil {
		t.Fatalf("request after rotation: %v", err)
	}
	if fm.authCount("m1") != n+1 {
		t.Fatalf("request path re-auths: %d, want %d", fm.authCount("m1")-n, 1)
	}
	// Later auths carry the token (the master key is cached).
	fm.mu.Lock()
	last := fm.lastAuth["m1"]
	fm.mu.Unlock()
	if got, want := keysOf(last), []string{"cmd", "id", "nonce", "token", "pub"}; !reflect.DeepEqual(got, want) {
		t.Errorf("re-auth load keys %v, want %v", got, want)
	}
}

func TestMasterRestart(t *testing.T) {
	fm, m := acceptedMinion(t, "")
	ret, pub := fm.retPort(), fm.pubPort()
	fm.stop()
	// newFakeMaster retries binding until the ports are reusable.
	fm2 := newFakeMaster(t, filepath.Join(vectorsPKI, "master/master.pem"), ret, pub)
	fm2.set("m1", "accept")
	testutil.Eventually(t, wait, func() bool { return fm2.authCount("m1") > 0 && fm2.pub.Subscribers() > 0 },
		"the minion to reconnect (auth and subscribe)")
	// Wait until the re-auth completed with the new key.
	testutil.Eventually(t, wait, func() bool { return m.current() != nil && m.current().key == fm2.key }, "a new session after the restart")
	warmup(t, fm2)
	fm2.publish(jobLoad("20260101000000000401", "test.ping", []any{}))
	fm2.waitReq(t, wait, isReturn("20260101000000000401"))
}

func TestFindJobAndKillJob(t *testing.T) {
	fm, m := acceptedMinion(t, "")
	sleeper := "20260101000000000501"
	fm.publish(jobLoad(sleeper, "test.sleep", []any{int64(30)}))
	testutil.Eventually(t, wait, func() bool { return m.jobs.count() > 0 }, "the job to start")
	// The proc file appears once the job has run for procDelay.
	proc := filepath.Join(m.cacheDir, "proc", sleeper)
	var b []byte
	var err error
	testutil.Eventually(t, wait, func() bool { b, err = os.ReadFile(proc); return err == nil }, "the proc file ", proc)
	pm, err := payload.UnmarshalMap(b)
	if err != nil || keysOf(pm)[0] != "pid" || pm.Str("fun") != "test.sleep" || pm.Has("serial") {
		t.Fatalf("proc file %s %v", mustJSON(pm), err)
	}

	fm.publish(jobLoad("20260101000000000502", "saltutil.find_job", []any{sleeper}))
	ret := fm.waitReq(t, wait, isReturn("20260101000000000502"))
	fj := ret.Map("return")
	if fj == nil || fj.Str("jid") != sleeper || fj.Str("fun") != "test.sleep" || !reflect.DeepEqual(fj.List("arg"), []any{int64(30)}) {
		t.Fatalf("find_job %s", mustJSON(ret))
	}
	if pid, _ := fj.Int("pid"); int(pid) != os.Getpid() {
		t.Errorf("find_job pid %d", pid)
	}
	fm.publish(jobLoad("20260101000000000503", "saltutil.running", []any{}))
	ret = fm.waitReq(t, wait, isReturn("20260101000000000503"))
	found := false
	for _, r := range ret.List("return") {
		if r.(*payload.Map).Str("jid") == sleeper {
			found = true
		}
	}
	if !found {
		t.Errorf("saltutil.running %s", mustJSON(ret))
	}

	fm.publish(jobLoad("20260101000000000504", "saltutil.kill_job", []any{sleeper}))
	ret = fm.waitReq(t, wait, isReturn("20260101000000000504"))
	if want := "Signal 9 sent to job " + sleeper + " at pid "; !strings.HasPrefix(ret.Str("return"), want) {
		t.Fatalf("kill_job %q", ret.Str("return"))
	}
	fm.publish(jobLoad("20260101000000000505", "saltutil.find_job", []any{sleeper}))
	fm.waitReq(t, wait, func(l *payload.Map) bool {
		if l.Str("cmd") == "_return" && l.Str("jid") == sleeper {
			t.Fatal("a killed job returned")
		}
		if l.Str("cmd") == "_return" && l.Str("jid") == "20260101000000000505" {
			if r := l.Map("return"); r == nil || r.Len() != 0 {
				t.Fatalf("find_job after kill %s", mustJSON(l))
			}
			return true
		}
		return false
	})
	if _, err := os.Stat(proc); !os.IsNotExist(err) {
		t.Errorf("proc file left behind: %v", err)
	}
	fm.noReq(t, 300*time.Millisecond, isReturn(sleeper))
}

func TestMultiFunctionJob(t *testing.T) {
	fm, _ := acceptedMinion(t, "")
	l := jobLoad("20260101000000000601", "", nil)
	l.Set("fun", []any{"test.ping", "test.echo", "test.retcode"}).Set("arg", []any{[]any{}, []any{"hi"}, []any{int64(2)}})
	fm.publish(l)
	ret := fm.waitReq(t, wait, isReturn("20260101000000000601"))
	if got, want := keysOf(ret), []string{"cmd", "id", "return", "retcode", "success", "jid", "fun", "fun_args", "user"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("multi keys %v, want %v", got, want)
	}
	r, rc, ok := ret.Map("return"), ret.Map("retcode"), ret.Map("success")
	if v, _ := r.Get("test.ping"); v != true || r.Str("test.echo") != "hi" {
		t.Errorf("multi return %s", mustJSON(ret))
	}
	if n, _ := rc.Int("test.retcode"); n != 2 || ok.Bool("test.retcode") || !ok.Bool("test.echo") {
		t.Errorf("multi retcode/success %s", mustJSON(ret))
	}
}

func TestZMQFiltering(t *testing.T) {
	fm, _ := acceptedMinion(t, "zmq_filtering: True\n")
	frame := fm.publishFrame(jobLoad("20260101000000000701", "test.ping", []any{}), 0)
	if err := fm.pub.Publish([]byte(hexID("m2")), frame); err != nil {
		t.Fatal(err)
	}
	if err := fm.pub.Publish(fm.publishFrame(jobLoad("20260101000000000702", "test.ping", []any{}), 0)); err != nil {
		t.Fatal(err)
	}
	if err := fm.pub.Publish([]byte(hexID("m1")), fm.publishFrame(jobLoad("20260101000000000703", "test.ping", []any{}), 0)); err != nil {
		t.Fatal(err)
	}
	if err := fm.pub.Publish([]byte("broadcast"), fm.publishFrame(jobLoad("20260101000000000704", "test.ping", []any{}), 0)); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	fm.noReq(t, 1500*time.Millisecond, func(l *payload.Map) bool {
		if l.Str("cmd") == "_return" {
			got[l.Str("jid")] = true
		}
		return false
	})
	want := map[string]bool{"20260101000000000703": true, "20260101000000000704": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("returns %v, want %v", got, want)
	}
}

func TestAuthRefusals(t *testing.T) {
	master := filepath.Join(vectorsPKI, "master/master.pem")
	t.Run("rejected", func(t *testing.T) {
		fm := newFakeMaster(t, master, 0, 0)
		fm.set("m1", "reject")
		cfg := minionConfig(t, "m1", fm, "")
		installKey(t, cfg, "minion1")
		_, stop, finished := startMinionRun(t, cfg, Options{})
		select {
		case <-finished: // Run ends by itself on the rejection
		case <-time.After(wait):
			t.Fatal("Run did not end on the rejection")
		}
		if err := stop(); !errors.Is(err, ErrRejected) {
			t.Fatalf("Run: %v, want ErrRejected", err)
		}
	})
	t.Run("master key changed", func(t *testing.T) {
		fm := newFakeMaster(t, master, 0, 0)
		fm.set("m1", "accept")
		cfg := minionConfig(t, "m1", fm, "")
		installKey(t, cfg, "minion1")
		other, _ := os.ReadFile(filepath.Join(vectorsPKI, "proxy1/minion.pub"))
		if err := os.WriteFile(filepath.Join(cfg.PKIDir, "minion_master.pub"), other, 0o644); err != nil {
			t.Fatal(err)
		}
		m, _ := startMinion(t, cfg, Options{})
		testutil.Eventually(t, wait, func() bool { return errors.Is(m.LastAuthError(), message.ErrMasterKeyChanged) },
			"the master key change to be the last auth error")
		select {
		case <-m.Ready():
			t.Fatal("connected to a master with a changed key")
		case <-time.After(300 * time.Millisecond):
		}
		if b, _ := os.ReadFile(filepath.Join(cfg.PKIDir, "minion_master.pub")); !bytes.Equal(b, other) {
			t.Fatal("the cached master key was replaced")
		}
	})
	t.Run("master_finger", func(t *testing.T) {
		fm := newFakeMaster(t, master, 0, 0)
		fm.set("m1", "accept")
		cfg := minionConfig(t, "m1", fm, "master_finger: 'ab:cd'\n")
		installKey(t, cfg, "minion1")
		_, stop, finished := startMinionRun(t, cfg, Options{})
		select {
		case <-finished: // Run ends by itself on the fingerprint mismatch
		case <-time.After(wait):
			t.Fatal("Run did not end on the master_finger mismatch")
		}
		if err := stop(); !errors.Is(err, ErrMasterFinger) {
			t.Fatalf("Run: %v, want ErrMasterFinger", err)
		}
	})
	t.Run("master_finger ok", func(t *testing.T) {
		fm := newFakeMaster(t, master, 0, 0)
		fm.set("m1", "accept")
		fp, err := crypt.Fingerprint(fm.pubPEM, "sha256")
		if err != nil {
			t.Fatal(err)
		}
		cfg := minionConfig(t, "m1", fm, "master_finger: '"+fp+"'\n")
		installKey(t, cfg, "minion1")
		m, _ := startMinion(t, cfg, Options{})
		waitReady(t, m, wait)
	})
}

func TestModulesThroughMaster(t *testing.T) {
	fm, m := acceptedMinion(t, "mine_functions:\n  test.echo: [mined]\n  pingalias:\n    - mine_function: test.ping\n")
	mine := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_mine" })
	if got, want := keysOf(mine), []string{"cmd", "data", "id", "clear", "tok"}; !reflect.DeepEqual(got, want) {
		t.Errorf("_mine keys %v", got)
	}
	if d := mine.Map("data"); d.Str("test.echo") != "mined" || !d.Bool("pingalias") {
		t.Errorf("_mine data %s", mustJSON(mine))
	}

	fm.publish(jobLoad("20260101000000000801", "event.send", []any{"my/tag", payload.NewMap("a", int64(1))}))
	ev := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_minion_event" && l.Str("tag") == "my/tag" })
	if a, _ := ev.Map("data").Int("a"); a != 1 || ev.Map("data").Str("__pub_jid") != "20260101000000000801" {
		t.Errorf("event.send load %s", mustJSON(ev))
	}
	ret := fm.waitReq(t, wait, isReturn("20260101000000000801"))
	if v, _ := ret.Get("return"); v != true {
		t.Errorf("event.send return %s", mustJSON(ret))
	}

	fm.mu.Lock()
	fm.replies["_mine_get"] = payload.NewMap("m1", []any{"127.0.0.1"}, "m2", []any{"10.0.0.2"})
	fm.mu.Unlock()
	fm.publish(jobLoad("20260101000000000802", "mine.get", []any{"*", "network.ip_addrs", payload.NewMap("__kwarg__", true, "exclude_minion", true)}))
	get := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_mine_get" })
	if got, want := keysOf(get), []string{"cmd", "id", "tgt", "fun", "tgt_type", "tok"}; !reflect.DeepEqual(got, want) {
		t.Errorf("_mine_get keys %v", got)
	}
	ret = fm.waitReq(t, wait, isReturn("20260101000000000802"))
	if r := ret.Map("return"); r == nil || r.Has("m1") || !r.Has("m2") {
		t.Errorf("mine.get return %s", mustJSON(ret))
	}

	fm.mu.Lock()
	fm.pillar = payload.NewMap("fresh", "yes")
	fm.mu.Unlock()
	fm.publish(jobLoad("20260101000000000803", "pillar.items", []any{}))
	ret = fm.waitReq(t, wait, isReturn("20260101000000000803"))
	if ret.Map("return").Str("fresh") != "yes" {
		t.Errorf("pillar.items %s", mustJSON(ret))
	}
	if m.Pillar().Has("fresh") {
		t.Error("pillar.items changed the in-memory pillar")
	}
	fm.publish(jobLoad("20260101000000000804", "saltutil.refresh_pillar", []any{payload.NewMap("__kwarg__", true, "wait", true)}))
	fm.waitReq(t, wait, isReturn("20260101000000000804"))
	if !m.Pillar().Has("fresh") {
		t.Error("refresh_pillar did not replace the pillar")
	}
	fm.publish(jobLoad("20260101000000000805", "pillar.get", []any{"fresh"}))
	if ret = fm.waitReq(t, wait, isReturn("20260101000000000805")); ret.Str("return") != "yes" {
		t.Errorf("pillar.get %s", mustJSON(ret))
	}
}

func TestBlackout(t *testing.T) {
	fm := newFakeMaster(t, filepath.Join(vectorsPKI, "master/master.pem"), 0, 0)
	fm.pillar = payload.NewMap("minion_blackout", true, "minion_blackout_whitelist", []any{"test.echo"})
	fm.set("m1", "accept")
	cfg := minionConfig(t, "m1", fm, "")
	installKey(t, cfg, "minion1")
	m, _ := startMinion(t, cfg, Options{})
	waitReady(t, m, wait)
	warmup(t, fm)
	fm.publish(jobLoad("20260101000000000901", "test.ping", []any{}))
	ret := fm.waitReq(t, wait, isReturn("20260101000000000901"))
	if !strings.HasPrefix(ret.Str("return"), "ERROR executing 'test.ping': Minion in blackout mode.") || ret.Bool("success") {
		t.Errorf("blacked-out job: %s", mustJSON(ret))
	}
	fm.publish(jobLoad("20260101000000000902", "test.echo", []any{"ok"}))
	if ret = fm.waitReq(t, wait, isReturn("20260101000000000902")); ret.Str("return") != "ok" {
		t.Errorf("whitelisted job: %s", mustJSON(ret))
	}
	fm.mu.Lock()
	fm.pillar = &payload.Map{}
	fm.mu.Unlock()
	fm.publish(jobLoad("20260101000000000903", "saltutil.refresh_pillar", []any{payload.NewMap("__kwarg__", true, "wait", true)}))
	fm.waitReq(t, wait, isReturn("20260101000000000903"))
	fm.publish(jobLoad("20260101000000000904", "test.ping", []any{}))
	if ret = fm.waitReq(t, wait, isReturn("20260101000000000904")); !ret.Bool("return") {
		t.Errorf("after the blackout: %s", mustJSON(ret))
	}
}

// TestSignedReturns: with minion_sign_messages the _return carries a
// PKCS#1 v1.5 signature over the load packed with use_bin_type=True (minus
// nonce and sig), which the master verifies against the id's key.
func TestSignedReturns(t *testing.T) {
	fm, m := acceptedMinion(t, "minion_sign_messages: True\n")
	jid := "20260101000000000777"
	fm.publish(jobLoad(jid, "test.ping", []any{}))
	l := fm.waitReq(t, wait, func(l *payload.Map) bool { return l.Str("cmd") == "_return" && l.Str("jid") == jid })
	sig := l.Bytes("sig")
	if sig == nil {
		t.Fatal("no sig in the _return")
	}
	l.Delete("nonce")
	l.Delete("sig")
	packed, err := payload.MarshalBin(l)
	if err != nil {
		t.Fatal(err)
	}
	if err := crypt.Verify(&m.priv.PublicKey, packed, sig); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	other, _ := crypt.GenerateKey(2048)
	if err := crypt.Verify(&other.PublicKey, packed, sig); err == nil {
		t.Fatal("verified with another key")
	}
}

// TestReturnResentAfterRepeatedBadLoad: a master that restarts again and
// again answers a return "bad load" more than once; the minion
// re-authenticates and sends it again each time (and, past the per-request
// bound, in a new return_retry_timer round) until the return is stored.
// Before, the second "bad load" lost the return.
func TestReturnResentAfterRepeatedBadLoad(t *testing.T) {
	for _, bad := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(bad), func(t *testing.T) {
			fm, _ := acceptedMinion(t, "return_retry_timer: 0\nreturn_retry_timer_max: 0\n")
			jid := fmt.Sprintf("2026010100000000%04d", 500+bad)
			fm.mu.Lock()
			fm.badLoads["_return"] = bad
			fm.mu.Unlock()
			fm.publish(jobLoad(jid, "test.ping", []any{}))
			fm.waitReq(t, wait, isReturn(jid))
			fm.mu.Lock()
			left := fm.badLoads["_return"]
			fm.mu.Unlock()
			if left != 0 {
				t.Fatalf("%d bad loads not consumed", left)
			}
		})
	}
}

// TestReplayDroppedAcrossRestart: a captured signed publish replayed after
// the minion restarted (same master session key) is dropped, by its jid
// and by its serial; a fresh publish still runs. Before, the serial guard
// and the jid queue lived in memory only and the replay ran again.
func TestReplayDroppedAcrossRestart(t *testing.T) {
	fm := newFakeMaster(t, filepath.Join(vectorsPKI, "master/master.pem"), 0, 0)
	fm.set("m1", "accept")
	cfg := minionConfig(t, "m1", fm, "")
	installKey(t, cfg, "minion1")
	m, stop := startMinion(t, cfg, Options{})
	waitReady(t, m, wait)
	warmup(t, fm)
	captured := fm.publishFrame(jobLoad("20260101000000000601", "test.ping", []any{}), 1000)
	if err := fm.pub.Publish(captured); err != nil {
		t.Fatal(err)
	}
	fm.waitReq(t, wait, isReturn("20260101000000000601"))
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	m2, _ := startMinion(t, cfg, Options{})
	waitReady(t, m2, wait)
	// The replays are the first publishes the restarted minion sees: send
	// them again and again until well after its subscription is up.
	replays := [][]byte{
		captured, // same jid, same serial
		fm.publishFrame(jobLoad("20260101000000000602", "test.ping", []any{}), 900), // new jid, older serial
	}
	deadline := time.Now().Add(wait)
	var upSince time.Time
	for {
		for _, f := range replays {
			if err := fm.pub.Publish(f); err != nil {
				t.Fatal(err)
			}
		}
		if l := fm.tryReq(50*time.Millisecond, func(l *payload.Map) bool { return l.Str("cmd") == "_return" }); l != nil {
			t.Fatalf("a replayed publish ran after the restart: %s", mustJSON(l))
		}
		if upSince.IsZero() && fm.pub.Subscribers() > 0 {
			upSince = time.Now()
		}
		if !upSince.IsZero() && time.Since(upSince) > 1500*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the restarted minion never subscribed")
		}
	}
	// A genuine new publish (next serial) runs: the minion was listening.
	fresh := fm.publishFrame(jobLoad("20260101000000000603", "test.ping", []any{}), 1001)
	if err := fm.pub.Publish(fresh); err != nil {
		t.Fatal(err)
	}
	fm.waitReq(t, wait, isReturn("20260101000000000603"))
}

// TestUnknownReturnerRefused: a job published with --return naming a
// returner gsalt does not have is refused with Salt's loader text instead
// of running with the returner silently ignored.
func TestUnknownReturnerRefused(t *testing.T) {
	fm, _ := acceptedMinion(t, "")
	for i, ret := range []any{"mysql", "smtp,redis", []any{"syslog"}} {
		jid := fmt.Sprintf("2026010100000000%04d", 700+i)
		fm.publish(jobLoad(jid, "test.ping", []any{}, "ret", ret))
		l := fm.waitReq(t, wait, isReturn(jid))
		msg := l.Str("return")
		if !strings.Contains(msg, "could not be loaded: '") || !strings.Contains(msg, ".returner' is not available.") || l.Bool("success") {
			t.Fatalf("ret %v: return %s", ret, mustJSON(l))
		}
	}
	// Without ret the job runs.
	fm.publish(jobLoad("20260101000000000710", "test.ping", []any{}))
	if l := fm.waitReq(t, wait, isReturn("20260101000000000710")); !l.Bool("return") {
		t.Fatalf("plain job: %s", mustJSON(l))
	}
}

// TestProcFileOnlyForLongerJobs checks that a job ending at once leaves no
// proc file behind, that a longer job gets one while it runs, and that it
// is removed when the job ends.
func TestProcFileOnlyForLongerJobs(t *testing.T) {
	fm, m := acceptedMinion(t, "")
	procDir := filepath.Join(m.cacheDir, "proc")
	fm.publish(jobLoad("20260101000000000601", "test.ping", []any{}))
	fm.waitReq(t, wait, isReturn("20260101000000000601"))
	if ents, _ := os.ReadDir(procDir); len(ents) != 0 {
		t.Errorf("proc files after a quick job: %v", ents)
	}
	long := "20260101000000000602"
	fm.publish(jobLoad(long, "test.sleep", []any{int64(1)}))
	testutil.Eventually(t, wait, func() bool {
		_, err := os.Stat(filepath.Join(procDir, long))
		return err == nil
	}, "a proc file for a running test.sleep")
	fm.waitReq(t, wait, isReturn(long))
	testutil.Eventually(t, wait, func() bool {
		_, err := os.Stat(filepath.Join(procDir, long))
		return errors.Is(err, os.ErrNotExist)
	}, "the proc file to go with its job")
}

// TestReturnBurstBoundedConnections: a burst of returns larger than the
// idle connections a minion keeps goes through at most reqPoolOpen
// request connections, all of them answered. Each return is held by the
// master, so all the returns of 3×reqPoolOpen jobs are in flight at
// once; without the bound the minion connected (TCP + ZMTP handshake) for
// every return beyond the idle ones and closed the connection after its
// one reply.
func TestReturnBurstBoundedConnections(t *testing.T) {
	fm := newFakeMaster(t, filepath.Join(vectorsPKI, "master/master.pem"), 0, 0)
	fm.set("m1", "accept")
	proxy, accepted := testutil.CountingProxy(t, fm.req.Addr().String())
	addr, err := net.ResolveTCPAddr("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	cfg := minionConfig(t, "m1", fm, "")
	cfg.MasterPort = addr.Port
	installKey(t, cfg, "minion1")
	m, _ := startMinion(t, cfg, Options{})
	waitReady(t, m, wait)
	warmup(t, fm)
	fm.mu.Lock()
	fm.retDelay = 50 * time.Millisecond
	fm.mu.Unlock()
	before := accepted()
	const jobs = 3 * reqPoolOpen
	want := map[string]bool{}
	for i := range jobs {
		jid := fmt.Sprintf("202601010000000%05d", 900+i)
		want[jid] = true
		fm.publish(jobLoad(jid, "test.ping", []any{}))
	}
	deadline := time.Now().Add(testutil.Scale(30 * time.Second))
	for len(want) > 0 && time.Now().Before(deadline) {
		if l := fm.tryReq(time.Until(deadline), func(l *payload.Map) bool { return l.Str("cmd") == "_return" }); l != nil {
			delete(want, l.Str("jid"))
		}
	}
	if len(want) > 0 {
		t.Fatalf("%d of %d returns missing", len(want), jobs)
	}
	if got := accepted() - before; got > reqPoolOpen {
		t.Errorf("%d request connections for %d returns in flight, want at most %d", got, jobs, reqPoolOpen)
	}
}

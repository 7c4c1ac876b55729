package master

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// Keys of the reference run the captures were taken from.
const (
	captureSessionKey = "lZaTFg8t9iC9Pn9q4N68H+kOI/sOVXrVcoZ7AGolF4msDoFVdD4sRO+JmCMsrwX09QDANTgeKpc="
	captureRootKey    = "Y/fA/k5CjzLv9Xp129pTLHI/jkJSVNaNCp9aCHYhw999gAz7hbKP8IogndpbL8Cdchu3J47imX8="
)

// captureRequests returns the request bodies real Salt 3006 minions and the
// salt CLI sent in the reference captures.
func captureRequests(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, name := range []string{"auth_accept", "startup_and_testping", "testping", "reactor", "pending_auth"} {
		f, err := os.Open(filepath.Join(vectorsDir, "captures", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var r struct {
				Type, Dir, Channel string
				Frames             []string
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.Type != "message" || r.Dir != "client->master" || r.Channel != "req/4506" || len(r.Frames) == 0 {
				continue
			}
			b, err := hex.DecodeString(r.Frames[len(r.Frames)-1])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		f.Close()
	}
	return out
}

// captureEnv is a master holding the reference run's keys: the vector
// master key, minion1 and proxy1 accepted, the captured session key and
// root key.
func captureEnv(t testing.TB) *env {
	e := newEnv(t, "")
	for _, id := range []string{"minion1", "proxy1"} {
		copyFile(t, filepath.Join(vectorsDir, "pki/master/minions", id), filepath.Join(e.cfg.PKIDir, "minions", id), 0o644)
	}
	c, err := crypt.NewCrypticle(captureSessionKey)
	if err != nil {
		t.Fatal(err)
	}
	e.m.sess.Store(&session{key: captureSessionKey, c: c})
	e.m.clientKeys = map[string]string{"root": captureRootKey}
	return e
}

// TestCaptureReplay answers every request of the reference captures and
// checks each reply the way the real client would.
func TestCaptureReplay(t *testing.T) {
	e := captureEnv(t)
	sess := e.m.sess.Load().c
	mpub, _ := crypt.ParsePublicKeyPEM(e.m.pubPEM)
	privs := map[string]*tminion{"minion1": vectorMinion(t, "minion1", "minion1"), "proxy1": vectorMinion(t, "proxy1", "proxy1")}
	counts := map[string]int{}
	for i, frame := range captureRequests(t) {
		req, err := message.ParseRequest(frame, payload.DefaultLimits)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		reply, ok := e.request(frame)
		if !ok {
			t.Fatalf("request %d: no reply", i)
		}
		if req.Enc == "clear" {
			cmd := req.Load.Str("cmd")
			counts[cmd]++
			switch cmd {
			case "_auth":
				inner, _, err := message.OpenSignedClear(reply, mpub, payload.DefaultLimits)
				if err != nil || inner.Str("nonce") != req.Load.Str("nonce") {
					t.Fatalf("_auth %d: %v", i, err)
				}
				tm := privs[req.Load.Str("id")]
				if tm == nil { // pendtest: its key goes to pending
					if v, _ := inner.Get("ret"); v != true {
						t.Fatalf("pendtest: %s", mapJSON(inner))
					}
					continue
				}
				key, err := crypt.DecryptOAEP(tm.priv, inner.Bytes("aes"))
				if err != nil || string(key) != captureSessionKey {
					t.Fatalf("_auth %d aes: %v", i, err)
				}
				if req.Load.Has("token") != inner.Has("token") {
					t.Fatalf("_auth %d: token echo", i)
				}
			case "publish":
				want := []any{"minion1", "proxy1"}
				if tgt := req.Load.Str("tgt"); tgt != "*" {
					want = []any{tgt}
				}
				rep, err := payload.UnmarshalMap(reply)
				if err != nil || rep.Map("load") == nil || len(rep.Map("load").Str("jid")) != 20 ||
					!reflect.DeepEqual(rep.Map("load").List("minions"), want) {
					t.Fatalf("publish %d: %v %v", i, rep, err)
				}
			default:
				t.Fatalf("unexpected clear command %q", cmd)
			}
			continue
		}
		load, nonce, err := message.OpenAESRequest(sess, req, payload.DefaultLimits)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		cmd := load.Str("cmd")
		counts[cmd]++
		if cmd == "_pillar" {
			tm := privs[load.Str("id")]
			if _, err := message.OpenPrivateReply(tm.priv, mpub, reply, nonce, payload.DefaultLimits); err != nil {
				t.Fatalf("_pillar %d: %v", i, err)
			}
			continue
		}
		got, err := message.OpenSendReply(sess, reply, nonce, payload.DefaultLimits)
		if err != nil {
			t.Fatalf("%s %d: %v", cmd, i, err)
		}
		switch cmd {
		case "_return", "_minion_event":
			if got != nil {
				t.Errorf("%s reply %v", cmd, got)
			}
		case "_mine":
			if got != true {
				t.Errorf("_mine reply %v", got)
			}
		}
	}
	want := map[string]int{"_auth": 6, "publish": 4, "_file_list": 36, "_pillar": 9, "_minion_event": 9,
		"_return": 8, "_master_opts": 2, "_file_envs": 2, "_file_hash": 2, "_mine": 4}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("commands %v, want %v", counts, want)
	}
	// The real minions' start events and returns reached the bus.
	e.waitEvent("salt/minion/minion1/start")
	e.waitEvent("salt/minion/proxy1/start")
	if g := e.m.data.getMine("minion1"); !g.Has("network.ip_addrs") {
		t.Errorf("mine of minion1: %s", mapJSON(g))
	}
	if g, _ := e.m.data.grains("minion1").(*payload.Map); g == nil || g.Str("id") != "minion1" {
		t.Errorf("grains of minion1 not cached")
	}
}

// FuzzHandleRequest feeds arbitrary request frames to the dispatcher, with
// the captured requests of real Salt as seeds (they decrypt with the
// session key, so the fuzzer starts inside every command). Any panic fails.
func FuzzHandleRequest(f *testing.F) {
	e := captureEnv(f)
	e.m.noRecover = true
	e.m.lim = payload.Limits{MaxSize: 1 << 20, MaxDepth: 64}
	for _, fr := range captureRequests(f) {
		f.Add(fr)
	}
	sess := e.m.sess.Load().c
	for _, l := range []*payload.Map{
		payload.NewMap("cmd", "_serve_file", "path", "../../etc/passwd", "saltenv", "base", "loc", 0, "gzip", 9),
		payload.NewMap("cmd", "_mine_get", "id", "minion1", "tgt", "G@os:* and not L@x", "fun", []any{"a", 1}, "tgt_type", "compound"),
		payload.NewMap("cmd", "_return", "id", "minion1", "jid", "req", "return", payload.NewMap("fun", 1), "fun_args", 3),
		payload.NewMap("cmd", "_minion_event", "id", "minion1", "events", []any{1, payload.NewMap("tag", 2)}),
		payload.NewMap("cmd", "_pillar", "id", "minion1", "grains", []any{}, "ver", "2"),
		payload.NewMap("cmd", "_file_list", "saltenv", 7, "prefix", []any{}),
	} {
		fr, _, err := message.EncodeAESRequest(sess, l)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(fr)
	}
	for _, l := range []*payload.Map{
		payload.NewMap("cmd", "publish", "tgt", []any{1, nil}, "fun", "test.ping", "arg", "x", "tgt_type", "list", "key", captureRootKey),
		payload.NewMap("cmd", "runner", "fun", "jobs.lookup_jid", "kwarg", payload.NewMap("arg", 1, "kwarg", 2), "key", captureRootKey),
		payload.NewMap("cmd", "_auth", "id", "x", "nonce", 1, "pub", []any{}, "autosign_grains", payload.NewMap(1, 2)),
	} {
		fr, err := message.EncodeClearRequest(l)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(fr)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.m.HandleRequest(context.Background(), frame)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("HandleRequest hangs on %x\n%s", frame, buf[:runtime.Stack(buf, true)])
		}
	})
}

package master

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestAuthLifecycle(t *testing.T) {
	e := newEnv(t, "publish_port: 4999\n")
	tm := vectorMinion(t, "minion1", "m1")

	// First contact: pending, key stored in minions_pre, salt/auth pend.
	for i := 0; i < 2; i++ {
		if r := e.auth(tm); r.Status != message.AuthPending {
			t.Fatalf("attempt %d: %v, want pending", i, r.Status)
		}
		ev := e.waitEvent("salt/auth")
		if ev.Data.Str("act") != "pend" || ev.Data.Bool("result") != true || ev.Data.Str("id") != "m1" ||
			ev.Data.Str("pub") != string(tm.pubPEM) {
			t.Fatalf("pend event %s", mapJSON(ev.Data))
		}
		if got := ev.Data.Keys(); len(got) < 4 || got[0] != "result" || got[1] != "act" {
			t.Errorf("event key order %v", got)
		}
	}
	if b, err := os.ReadFile(filepath.Join(e.cfg.PKIDir, "minions_pre", "m1")); err != nil || string(b) != string(tm.pubPEM) {
		t.Fatalf("pending key file: %v", err)
	}

	e.accept("m1")
	r := e.auth(tm)
	if r.Status != message.AuthAccepted || !r.FirstContact {
		t.Fatalf("after accept: %v first=%v", r.Status, r.FirstContact)
	}
	if r.SessionKey != e.m.SessionKey() || r.PublishPort != 4999 {
		t.Fatalf("session key / publish port: %d", r.PublishPort)
	}
	if ev := e.waitEvent("salt/auth"); ev.Data.Str("act") != "accept" {
		t.Fatalf("accept event %s", mapJSON(ev.Data))
	}
	// Second contact carries a token, which the master must give back
	// (e.auth checks it).
	if r := e.auth(tm); r.Status != message.AuthAccepted || r.FirstContact {
		t.Fatalf("token auth: %v", r.Status)
	}
	e.drain()

	// Another key under the same id is denied.
	impostor := vectorMinion(t, "proxy1", "m1")
	impostor.master = tm.master
	if r := e.auth(impostor); r.Status != message.AuthRejected {
		t.Fatalf("impostor: %v", r.Status)
	}
	if ev := e.waitEvent("salt/auth"); ev.Data.Str("act") != "denied" || ev.Data.Bool("result") {
		t.Fatalf("denied event %s", mapJSON(ev.Data))
	}
	if _, err := os.Stat(filepath.Join(e.cfg.PKIDir, "minions_denied", "m1")); err != nil {
		t.Fatal(err)
	}
	// The real minion still gets in.
	if r := e.auth(tm); r.Status != message.AuthAccepted {
		t.Fatalf("after impostor: %v", r.Status)
	}

	// Rejected keys are refused with an event without act.
	p := vectorMinion(t, "proxy1", "p1")
	e.auth(p)
	if _, err := e.keys.Reject("p1"); err != nil {
		t.Fatal(err)
	}
	e.drain()
	if r := e.auth(p); r.Status != message.AuthRejected {
		t.Fatalf("rejected: %v", r.Status)
	}
	ev := e.waitEvent("salt/auth")
	if ev.Data.Has("act") || ev.Data.Bool("result") {
		t.Fatalf("rejected event %s", mapJSON(ev.Data))
	}
}

func TestAuthMalformed(t *testing.T) {
	e := newEnv(t, "")
	tm := vectorMinion(t, "minion1", "m1")
	mk := func(kv ...any) []byte {
		f, err := message.EncodeClearRequest(payload.NewMap(kv...))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	nonce := crypt.NewNonce()
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"no nonce", mk("cmd", "_auth", "id", "m1", "pub", string(tm.pubPEM))},
		{"no pub", mk("cmd", "_auth", "id", "m1", "nonce", nonce)},
		{"no id", mk("cmd", "_auth", "nonce", nonce, "pub", string(tm.pubPEM))},
	} {
		if reply, ok := e.request(tc.frame); ok {
			t.Errorf("%s: got a reply %x, Salt sends none", tc.name, reply)
		}
	}
	// An invalid id gets a signed ret False (no pub needed), without event.
	for _, id := range []string{"..", "a/b", ""} {
		reply, ok := e.request(mk("cmd", "_auth", "id", id, "nonce", nonce))
		if !ok {
			t.Fatalf("%q: no reply", id)
		}
		mpub, _ := crypt.ParsePublicKeyPEM(e.m.pubPEM)
		inner, _, err := message.OpenSignedClear(reply, mpub, payload.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := inner.Get("ret"); v != false || inner.Str("nonce") != nonce {
			t.Fatalf("%q: %s", id, mapJSON(inner))
		}
	}
	e.noEvent("salt/auth")
}

func TestAuthV1Unsigned(t *testing.T) {
	e := newEnv(t, "")
	tm := vectorMinion(t, "minion1", "old")
	load := func() []byte {
		b, err := payload.Marshal(payload.NewMap("enc", "clear",
			"load", payload.NewMap("cmd", "_auth", "id", "old", "pub", string(tm.pubPEM)), "version", 1))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	reply, ok := e.request(load())
	if !ok {
		t.Fatal("no reply")
	}
	v, err := payload.UnmarshalMap(reply)
	if err != nil {
		t.Fatal(err)
	}
	if v.Str("enc") != "clear" || v.Map("load") == nil || v.Map("load").Bool("ret") != true {
		t.Fatalf("v1 pending reply %s", mapJSON(v))
	}
	e.accept("old")
	reply, _ = e.request(load())
	acc, err := payload.UnmarshalMap(reply)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Str("enc") != "pub" || acc.Has("nonce") || !acc.Has("aes") {
		t.Fatalf("v1 accept reply keys %v", acc.Keys())
	}
	key, err := crypt.DecryptOAEP(tm.priv, acc.Bytes("aes"))
	if err != nil || string(key) != e.m.SessionKey() {
		t.Fatalf("aes: %v", err)
	}
}

func TestAuthPubSig(t *testing.T) {
	e := newEnv(t, "master_sign_pubkey: True\n")
	tm := e.login("minion1", "m1")
	_ = tm
	if e.m.pubSig == "" || e.m.pubSig[len(e.m.pubSig)-1] != '\n' {
		t.Fatalf("pub_sig %q", e.m.pubSig)
	}
	spub, err := crypt.LoadPublicKey(filepath.Join(e.cfg.PKIDir, "master_sign.pub"))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := decodeB64(e.m.pubSig)
	if err != nil {
		t.Fatal(err)
	}
	if err := crypt.Verify(spub, e.m.pubPEM, sig); err != nil {
		t.Fatal(err)
	}
}

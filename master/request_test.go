package master

import (
	"bytes"
	"context"
	"reflect"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

func pack(t testing.TB, v any) []byte {
	t.Helper()
	b, err := payload.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMalformedRequests(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	blob := func(plain []byte) []byte {
		b, err := tm.sess.Encrypt(plain)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	otherKey, _ := crypt.GenerateKeyString()
	other, _ := crypt.NewCrypticle(otherKey)
	foreign, _, _ := message.EncodeAESRequest(other, payload.NewMap("cmd", "_file_envs"))
	aes := func(plain []byte) []byte {
		return pack(t, payload.NewMap("enc", "aes", "load", blob(plain), "version", 2))
	}
	for _, tc := range []struct {
		name  string
		frame []byte
		want  any
	}{
		{"not msgpack", []byte{0xc1}, payload.NewMap("msg", "bad load")},
		{"truncated", pack(t, payload.NewMap("enc", "clear"))[:5], payload.NewMap("msg", "bad load")},
		{"trailing data", append(pack(t, payload.NewMap("enc", "clear")), 0x01), payload.NewMap("msg", "bad load")},
		{"not a map", pack(t, []any{1, 2}), "bad load"},
		{"no enc", pack(t, payload.NewMap("load", payload.NewMap())), "bad load"},
		{"no load", pack(t, payload.NewMap("enc", "clear")), "bad load"},
		{"bad enc", pack(t, payload.NewMap("enc", "rot13", "load", payload.NewMap())), "bad load"},
		{"clear load not a map", pack(t, payload.NewMap("enc", "clear", "load", "x")), "payload and load must be a dict"},
		{"id with NUL", pack(t, payload.NewMap("enc", "clear", "load", payload.NewMap("cmd", "_auth", "id", "a\x00b"))), "bad load: id contains a null byte"},
		{"id not a string", pack(t, payload.NewMap("enc", "clear", "load", payload.NewMap("cmd", "ping", "id", 5))), "bad load: id 5 is not a string"},
		{"clear without cmd", pack(t, payload.NewMap("enc", "clear", "load", payload.NewMap("id", "m1"))), "Some exception handling minion payload"},
		{"clear cmd not a string", pack(t, payload.NewMap("enc", "clear", "load", payload.NewMap("cmd", 3))), payload.NewMap()},
		{"aes not bytes", pack(t, payload.NewMap("enc", "aes", "load", payload.NewMap())), "bad load"},
		{"aes garbage", pack(t, payload.NewMap("enc", "aes", "load", []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), "version", 2)), "bad load"},
		{"aes short", pack(t, payload.NewMap("enc", "aes", "load", "x", "version", 2)), "bad load"},
		{"aes foreign key", foreign, "bad load"},
		{"aes no pickle", aes([]byte("\x81\xa3cmd\xa4_xyz")), "Some exception handling minion payload"},
		{"aes bad msgpack", aes([]byte("pickle::\xc1")), "bad load"},
		{"aes load not a map", aes(append([]byte("pickle::"), pack(t, "x")...)), "payload and load must be a dict"},
		{"aes id NUL", aes(append([]byte("pickle::"), pack(t, payload.NewMap("cmd", "_return", "id", "\x00"))...)), "bad load: id contains a null byte"},
		{"aes no cmd", aes(append([]byte("pickle::"), pack(t, payload.NewMap("id", "m1"))...)), "Some exception handling minion payload"},
	} {
		reply, ok := e.request(tc.frame)
		if !ok {
			t.Errorf("%s: no reply", tc.name)
			continue
		}
		got, err := payload.Unmarshal(reply)
		if err != nil {
			t.Errorf("%s: reply %x: %v", tc.name, reply, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: reply %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestOversizedRequest(t *testing.T) {
	e := newEnv(t, "")
	e.m.lim = payload.Limits{MaxSize: 4096, MaxDepth: 16}
	big := pack(t, payload.NewMap("enc", "clear", "load", payload.NewMap("cmd", "ping", "x", bytes.Repeat([]byte("a"), 8192))))
	reply, ok := e.request(big)
	if got, _ := payload.Unmarshal(reply); !ok || !reflect.DeepEqual(got, payload.NewMap("msg", "bad load")) {
		t.Fatalf("oversized: %v", got)
	}
	var deep any = "x"
	for i := 0; i < 40; i++ {
		deep = []any{deep}
	}
	reply, _ = e.request(pack(t, payload.NewMap("enc", "clear", "load", payload.NewMap("cmd", "ping", "x", deep))))
	if got, _ := payload.Unmarshal(reply); !reflect.DeepEqual(got, payload.NewMap("msg", "bad load")) {
		t.Fatalf("too deep: %v", got)
	}
}

func TestHandlerPanicIsContained(t *testing.T) {
	e := newEnv(t, "")
	tm := e.login("minion1", "m1")
	aesHandlers["_test_panic"] = func(*Master, context.Context, *payload.Map) (any, error) { panic("boom") }
	defer delete(aesHandlers, "_test_panic")
	frame, _, _ := message.EncodeAESRequest(tm.sess, payload.NewMap("cmd", "_test_panic"))
	reply, ok := e.request(frame)
	if got, _ := payload.Unmarshal(reply); !ok || got != message.HandlerErrorText {
		t.Fatalf("panic reply %v", got)
	}
}

package message_test

import (
	"crypto/rsa"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestAuthRoundTrip(t *testing.T) {
	k := loadKeys(t)
	minion := k.minion["minion1"]
	pubPEM := crypt.MarshalPublicKeyPEM(&minion.PublicKey)
	session, _ := crypt.GenerateKeyString()
	for _, cached := range []bool{false, true} {
		var masterPub = k.masterPub
		var cachedPEM = k.masterPEM
		if !cached {
			masterPub, cachedPEM = nil, nil
		}
		s, err := message.NewSignIn("minion1", pubPEM, masterPub, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys := s.Load.Keys()
		wantKeys := []string{"cmd", "id", "nonce", "pub"}
		if cached {
			wantKeys = []string{"cmd", "id", "nonce", "token", "pub"}
		}
		if len(keys) != len(wantKeys) {
			t.Fatalf("sign-in keys %v", keys)
		}
		for i := range keys {
			if keys[i] != wantKeys[i] {
				t.Fatalf("sign-in keys %v, want %v", keys, wantKeys)
			}
		}
		inner, err := message.BuildAuthAccept(message.AuthAccept{
			MasterPriv: k.masterPriv, MasterPubPEM: k.masterPEM, MinionPub: &minion.PublicKey,
			SessionKey: session, PublishPort: 4505, EncToken: s.Load.Bytes("token"), Nonce: s.Nonce,
		})
		if err != nil {
			t.Fatal(err)
		}
		frame, err := message.EncodeSignedClear(k.masterPriv, inner)
		if err != nil {
			t.Fatal(err)
		}
		res, err := message.OpenAuthReply(frame, s, minion, cachedPEM, payload.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != message.AuthAccepted || res.SessionKey != session || res.FirstContact == cached {
			t.Fatalf("result %+v", res)
		}
		// A reply to another attempt (nonce) is refused.
		s2 := *s
		s2.Nonce = crypt.NewNonce()
		if _, err := message.OpenAuthReply(frame, &s2, minion, cachedPEM, payload.DefaultLimits); !errors.Is(err, message.ErrNonceMismatch) {
			t.Fatalf("foreign nonce: %v", err)
		}
		// A different cached master key is refused.
		other, _ := crypt.GenerateKey(2048)
		if _, err := message.OpenAuthReply(frame, s, minion, crypt.MarshalPublicKeyPEM(&other.PublicKey), payload.DefaultLimits); !errors.Is(err, message.ErrMasterKeyChanged) {
			t.Fatalf("changed master key: %v", err)
		}
	}
	for _, tc := range []struct {
		ret  any
		want message.AuthStatus
	}{{true, message.AuthPending}, {false, message.AuthRejected}, {"full", message.AuthFull}} {
		s, _ := message.NewSignIn("m", pubPEM, nil, nil)
		frame, _ := message.EncodeSignedClear(k.masterPriv, message.BuildAuthRefusal(tc.ret, s.Nonce))
		res, err := message.OpenAuthReply(frame, s, minion, nil, payload.DefaultLimits)
		if err != nil || res.Status != tc.want {
			t.Fatalf("ret %v: %+v %v", tc.ret, res, err)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	c, _ := crypt.NewCrypticle(mustKey(t))
	other, _ := crypt.NewCrypticle(mustKey(t))
	aesFrame, _, _ := message.EncodeAESRequest(c, payload.NewMap("cmd", "_return", "id", "m1"))
	tests := []struct {
		name  string
		frame any
		want  error
	}{
		{"not msgpack", []byte{0xc1}, message.ErrUndecodable},
		{"not a map", "x", message.ErrNotMap},
		{"no enc", payload.NewMap("load", payload.NewMap()), message.ErrMissingField},
		{"no load", payload.NewMap("enc", "clear"), message.ErrMissingField},
		{"bad enc", payload.NewMap("enc", "rot13", "load", "x"), message.ErrBadEnc},
		{"clear load not map", payload.NewMap("enc", "clear", "load", []any{}), message.ErrLoadNotMap},
	}
	for _, tc := range tests {
		b, ok := tc.frame.([]byte)
		if !ok {
			b, _ = payload.Marshal(tc.frame)
		}
		if _, err := message.ParseRequest(b, payload.DefaultLimits); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	req, err := message.ParseRequest(aesFrame, payload.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := message.OpenAESRequest(other, req, payload.DefaultLimits); !errors.Is(err, message.ErrDecrypt) {
		t.Fatalf("wrong key: %v", err)
	}
	load, nonce, err := message.OpenAESRequest(c, req, payload.DefaultLimits)
	if err != nil || len(nonce) != 32 || load.Has("nonce") || load.Str("id") != "m1" {
		t.Fatalf("open: %v %q %v", load, nonce, err)
	}
	// send reply: right nonce only; "bad load" text means re-auth.
	reply, _ := message.EncodeSendReply(c, true, nonce)
	if v, err := message.OpenSendReply(c, reply, nonce, payload.DefaultLimits); err != nil || v != true {
		t.Fatalf("reply %v %v", v, err)
	}
	if _, err := message.OpenSendReply(c, reply, crypt.NewNonce(), payload.DefaultLimits); !errors.Is(err, message.ErrNonceMismatch) {
		t.Fatalf("foreign nonce: %v", err)
	}
	bad, _ := payload.Marshal(message.BadLoadText)
	if _, err := message.OpenSendReply(c, bad, nonce, payload.DefaultLimits); !errors.Is(err, message.ErrDecrypt) {
		t.Fatalf("bad load: %v", err)
	}
	for _, id := range []any{"a\x00b", int64(5)} {
		if txt, err := message.CheckID(payload.NewMap("id", id)); !errors.Is(err, message.ErrBadID) || txt == "" {
			t.Fatalf("id %q: %v", id, err)
		}
	}
}

func TestPublishChecks(t *testing.T) {
	k := loadKeys(t)
	c, _ := crypt.NewCrypticle(mustKey(t))
	frame, err := message.EncodePublish(c, k.masterPriv, payload.NewMap("fun", "test.ping", "arg", []any{}, "tgt", "*", "jid", "1"), 7)
	if err != nil {
		t.Fatal(err)
	}
	load, serial, err := message.OpenPublish(c, k.masterPub, frame, payload.DefaultLimits)
	if err != nil || serial != 7 || load.Has("serial") {
		t.Fatalf("open %v %d %v", load, serial, err)
	}
	unsigned, _ := message.EncodePublish(c, nil, load, 8)
	if _, _, err := message.OpenPublish(c, k.masterPub, unsigned, payload.DefaultLimits); !errors.Is(err, message.ErrBadSignature) {
		t.Fatalf("unsigned publish with verification on: %v", err)
	}
	if _, _, err := message.OpenPublish(c, nil, unsigned, payload.DefaultLimits); err != nil {
		t.Fatalf("unsigned publish, verification off: %v", err)
	}
	rotated, _ := crypt.NewCrypticle(mustKey(t))
	if _, _, err := message.OpenPublish(rotated, nil, frame, payload.DefaultLimits); !errors.Is(err, message.ErrDecrypt) {
		t.Fatalf("old key: %v", err)
	}
	var ctr message.Counter
	if ctr.Next() != 1 || ctr.Next() != 2 {
		t.Fatal("counter")
	}
	ctr.Reset()
	if ctr.Next() != 1 {
		t.Fatal("counter reset")
	}
}

func mustKey(t testing.TB) string {
	s, err := crypt.GenerateKeyString()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func FuzzParseRequest(f *testing.F) {
	c, _ := crypt.NewCrypticle("HAHehm4Cbd9+bL/JN/8jl63zjSr4IkfqE38azCx+WnpyhvbqFBlEC+ca61x503Mto1iDR89my/o=")
	fr, _, _ := message.EncodeAESRequest(c, payload.NewMap("cmd", "_return"))
	f.Add(fr)
	cl, _ := message.EncodeClearRequest(payload.NewMap("cmd", "_auth", "id", "x"))
	f.Add(cl)
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := message.ParseRequest(data, payload.DefaultLimits)
		if err != nil {
			return
		}
		if req.Enc == message.EncAES {
			_, _, _ = message.OpenAESRequest(c, req, payload.DefaultLimits)
		} else if req.Load == nil {
			t.Fatal("clear request without load")
		}
	})
}

func FuzzOpenPublish(f *testing.F) {
	k := loadKeys(f)
	c, _ := crypt.NewCrypticle("HAHehm4Cbd9+bL/JN/8jl63zjSr4IkfqE38azCx+WnpyhvbqFBlEC+ca61x503Mto1iDR89my/o=")
	fr, _ := message.EncodePublish(c, k.masterPriv, payload.NewMap("fun", "test.ping"), 1)
	f.Add(fr)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = message.OpenPublish(c, nil, data, payload.DefaultLimits)
		_, _, _ = message.OpenPublish(c, k.masterPub, data, payload.DefaultLimits)
	})
}

func FuzzOpenReplies(f *testing.F) {
	k := loadKeys(f)
	c, _ := crypt.NewCrypticle("HAHehm4Cbd9+bL/JN/8jl63zjSr4IkfqE38azCx+WnpyhvbqFBlEC+ca61x503Mto1iDR89my/o=")
	nonce := "0123456789abcdef0123456789abcdef"
	r1, _ := message.EncodeSendReply(c, payload.NewMap("a", 1), nonce)
	f.Add(r1)
	r2, _ := message.EncodeSignedClear(k.masterPriv, message.BuildAuthRefusal(true, nonce))
	f.Add(r2)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = message.OpenSendReply(c, data, nonce, payload.DefaultLimits)
		_, _, _ = message.OpenSignedClear(data, k.masterPub, payload.DefaultLimits)
		s := &message.SignIn{ID: "minion1", Nonce: nonce}
		_, _ = message.OpenAuthReply(data, s, k.minion["minion1"], nil, payload.DefaultLimits)
	})
}

// BenchmarkPublishEncode: encode + encrypt (+ RSA-2048 sign) of one
// test.ping publish, the exact call the master makes per job
// (EncodePublish with the master key when sign_pub_messages is on, Salt
// 3006's master default; nil when off). The parallel variants run it on
// every P (go test -cpu 2: the master's publishes sign on their callers'
// goroutines in parallel).
func BenchmarkPublishEncode(b *testing.B) {
	k := loadKeys(b)
	c, _ := crypt.NewCrypticle(mustKey(b))
	load := payload.NewMap("fun", "test.ping", "arg", []any{}, "tgt", "*", "jid", "20261122025809097120", "ret", "", "tgt_type", "glob", "user", "root")
	for _, tc := range []struct {
		name string
		priv *rsa.PrivateKey
	}{{"signed", k.masterPriv}, {"unsigned", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := message.EncodePublish(c, tc.priv, load, int64(i+1)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"-parallel", func(b *testing.B) {
			b.ReportAllocs()
			var serial atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := message.EncodePublish(c, tc.priv, load, serial.Add(1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkReturnEncode: encode + encrypt of one test.ping _return, a
// swarm identity's work per job, and the master's encrypted reply to it.
func BenchmarkReturnEncode(b *testing.B) {
	c, _ := crypt.NewCrypticle(mustKey(b))
	load := payload.NewMap("cmd", "_return", "id", "minion1", "success", true, "return", true, "retcode", 0, "jid", "20261122025809097120", "fun", "test.ping", "fun_args", []any{}, "user", "root")
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := message.EncodeAESRequest(c, load); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reply", func(b *testing.B) {
		nonce := crypt.NewNonce()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := message.EncodeSendReply(c, nil, nonce); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReturnDecode: decrypt + decode of one _return request on the master.
func BenchmarkReturnDecode(b *testing.B) {
	c, _ := crypt.NewCrypticle(mustKey(b))
	frame, _, _ := message.EncodeAESRequest(c, payload.NewMap("cmd", "_return", "id", "minion1", "success", true, "return", true, "retcode", 0, "jid", "20261122025809097120", "fun", "test.ping", "fun_args", []any{}, "user", "root"))
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for i := 0; i < b.N; i++ {
		req, err := message.ParseRequest(frame, payload.DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := message.OpenAESRequest(c, req, payload.DefaultLimits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthAccept: the master's work for one accepted _auth (two OAEP
// encryptions, one OAEP token decryption, X9.31 and PKCS#1 signatures).
func BenchmarkAuthAccept(b *testing.B) {
	k := loadKeys(b)
	minion := k.minion["minion1"]
	s, _ := message.NewSignIn("minion1", crypt.MarshalPublicKeyPEM(&minion.PublicKey), k.masterPub, nil)
	session := mustKey(b)
	for i := 0; i < b.N; i++ {
		inner, err := message.BuildAuthAccept(message.AuthAccept{MasterPriv: k.masterPriv, MasterPubPEM: k.masterPEM, MinionPub: &minion.PublicKey, SessionKey: session, PublishPort: 4505, EncToken: s.Load.Bytes("token"), Nonce: s.Nonce})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := message.EncodeSignedClear(k.masterPriv, inner); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAuthReplyTrustsTheSignature: with a cached master key the minion
// relies on the reply's signature (made over a load holding the request's
// nonce) to know the master holds that key, and does not decrypt the
// returned token: a reply signed by another key is refused even with the
// right token, one signed by the master is accepted whatever its token
// says, and the master's token still decrypts to the request's.
func TestAuthReplyTrustsTheSignature(t *testing.T) {
	k := loadKeys(t)
	minion := k.minion["minion1"]
	pubPEM := crypt.MarshalPublicKeyPEM(&minion.PublicKey)
	session, _ := crypt.GenerateKeyString()
	s, err := message.NewSignIn("minion1", pubPEM, k.masterPub, nil)
	if err != nil {
		t.Fatal(err)
	}
	accept := func(signer *rsa.PrivateKey, token []byte) []byte {
		t.Helper()
		inner, err := message.BuildAuthAccept(message.AuthAccept{
			MasterPriv: k.masterPriv, MasterPubPEM: k.masterPEM, MinionPub: &minion.PublicKey,
			SessionKey: session, PublishPort: 4505, EncToken: s.Load.Bytes("token"), Nonce: s.Nonce,
		})
		if err != nil {
			t.Fatal(err)
		}
		if token != nil {
			inner.Set("token", token)
		}
		frame, err := message.EncodeSignedClear(signer, inner)
		if err != nil {
			t.Fatal(err)
		}
		return frame
	}
	honest := accept(k.masterPriv, nil)
	if tok, err := message.AuthReplyToken(honest, minion, payload.DefaultLimits); err != nil || tok != s.Token {
		t.Fatalf("returned token %q, %v; want the request's", tok, err)
	}
	if res, err := message.OpenAuthReply(honest, s, minion, k.masterPEM, payload.DefaultLimits); err != nil || res.Status != message.AuthAccepted {
		t.Fatalf("honest reply: %+v %v", res, err)
	}
	impostor, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := message.OpenAuthReply(accept(impostor, nil), s, minion, k.masterPEM, payload.DefaultLimits); !errors.Is(err, message.ErrBadSignature) {
		t.Fatalf("reply signed by another key: %v, want ErrBadSignature", err)
	}
	garbage := accept(k.masterPriv, []byte("not a token"))
	if _, err := message.AuthReplyToken(garbage, minion, payload.DefaultLimits); !errors.Is(err, message.ErrAuthReply) {
		t.Fatalf("garbage token decrypts: %v", err)
	}
	if res, err := message.OpenAuthReply(garbage, s, minion, k.masterPEM, payload.DefaultLimits); err != nil || res.Status != message.AuthAccepted || res.SessionKey != session {
		t.Fatalf("master-signed reply with another token: %+v %v", res, err)
	}
}

package message_test

import (
	"bytes"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/vectors"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

var captureNames = []string{"testping", "startup_and_testping", "auth_accept", "pending_auth", "reactor"}

type keys struct {
	masterPriv *rsa.PrivateKey
	masterPub  *rsa.PublicKey
	masterPEM  []byte
	minion     map[string]*rsa.PrivateKey
}

func loadKeys(t testing.TB) keys {
	t.Helper()
	k := keys{minion: map[string]*rsa.PrivateKey{}}
	var err error
	if k.masterPriv, err = crypt.LoadPrivateKey(vectors.Path("pki", "master", "master.pem")); err != nil {
		t.Fatal(err)
	}
	if k.masterPEM, err = os.ReadFile(vectors.Path("pki", "master", "master.pub")); err != nil {
		t.Fatal(err)
	}
	if k.masterPub, err = crypt.ParsePublicKeyPEM(k.masterPEM); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"minion1", "proxy1"} {
		if k.minion[id], err = crypt.LoadPrivateKey(vectors.Path("pki", id, "minion.pem")); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// pending request state per TCP connection, to open the reply.
type pendingReq struct {
	cmd, id, nonce, token string
}

// TestCaptures decodes every message of the five pcaps recorded from a real
// Salt 3006 with the throwaway keys: frame -> msgpack envelope (compared
// with Salt's own decode, and re-encoded byte for byte) -> decrypted and
// verified inner layer (compared with the recorded plaintext).
func TestCaptures(t *testing.T) {
	k := loadKeys(t)
	total := 0
	for _, name := range captureNames {
		recs, err := vectors.ReadJSONL(vectors.Path("captures", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		pending := map[string]pendingReq{}
		for _, r := range recs {
			if r.Str("type") != "message" {
				continue
			}
			total++
			var n int
			_ = r.Unmarshal("n", &n)
			t.Run(name+"/"+r.Str("what")+"/"+r.Str("cmd")+r.Str("reply_to"), func(t *testing.T) {
				checkMessage(t, k, r, pending)
			})
		}
	}
	if total != 173 {
		t.Fatalf("checked %d messages, the captures hold 173", total)
	}
}

func checkMessage(t *testing.T, k keys, r vectors.Record, pending map[string]pendingReq) {
	var frames []string
	if err := r.Unmarshal("frames", &frames); err != nil {
		t.Fatal(err)
	}
	body, _ := hex.DecodeString(frames[len(frames)-1])
	if strings.HasPrefix(r.Str("channel"), "req") && (len(frames) != 2 || frames[0] != "") {
		t.Fatalf("request channel frames %v: want [\"\", body]", len(frames))
	}
	// Layer 1: msgpack, both directions.
	got, err := payload.Unmarshal(body)
	if err != nil {
		t.Fatalf("n=%d: %v", 0, err)
	}
	want := mustValue(t, r, "decoded")
	if d := vectors.Equal(got, want); d != "" {
		t.Fatalf("decoded: %s", d)
	}
	again, err := payload.Marshal(got)
	if err != nil || !bytes.Equal(again, body) {
		t.Fatalf("re-encode differs: %v", err)
	}

	var sess *crypt.Crypticle
	if ks := r.Str("session_key"); ks != "" {
		if sess, err = crypt.NewCrypticle(ks); err != nil {
			t.Fatal(err)
		}
	}
	conn := r.Str("conn")
	switch r.Str("what") {
	case "request":
		req, err := message.ParseRequest(body, payload.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if req.Version != 2 {
			t.Fatalf("version %d", req.Version)
		}
		p := pendingReq{cmd: r.Str("cmd"), id: r.Str("id"), nonce: r.Str("nonce")}
		if req.Enc == message.EncAES {
			load, nonce, err := message.OpenAESRequest(sess, req, payload.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			plain := mustValue(t, r, "plain").(*payload.Map)
			if nonce != plain.Str("nonce") || nonce != r.Str("nonce") {
				t.Fatalf("nonce %q", nonce)
			}
			plain.Delete("nonce")
			if d := vectors.Equal(load, plain); d != "" {
				t.Fatalf("aes load: %s", d)
			}
			checkPlainHex(t, sess, r, req.Cipher, "")
			checkTok(t, k, load)
		} else if req.Load.Str("cmd") == "_auth" {
			if tokEnc := req.Load.Bytes("token"); tokEnc != nil {
				tok, err := crypt.DecryptOAEP(k.masterPriv, tokEnc)
				if err != nil {
					t.Fatal(err)
				}
				p.token = string(tok)
				var rsaInfo map[string]map[string]any
				_ = r.Unmarshal("rsa", &rsaInfo)
				if rsaInfo["token"]["plain"] != p.token {
					t.Fatalf("token %q vs %v", tok, rsaInfo["token"]["plain"])
				}
			}
		}
		pending[conn] = p
	case "reply":
		p := pending[conn]
		switch r.Str("reply_to") {
		case "_auth":
			var cached []byte
			if p.token != "" {
				cached = k.masterPEM
			}
			s := &message.SignIn{ID: p.id, Nonce: p.nonce, Token: p.token}
			res, err := message.OpenAuthReply(body, s, k.minion[p.id], cached, payload.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			inner := mustValue(t, r, "plain").(*payload.Map)
			if inner.Has("ret") {
				if res.Status != message.AuthPending {
					t.Fatalf("status %v", res.Status)
				}
				// The refusal is signed by the master.
				if _, _, err := message.OpenSignedClear(body, k.masterPub, payload.DefaultLimits); err != nil {
					t.Fatal(err)
				}
				return
			}
			if res.Status != message.AuthAccepted || res.SessionKey != r.Str("session_key") || res.PublishPort != 4505 {
				t.Fatalf("auth result %+v", res)
			}
			if !bytes.Equal(res.MasterPubPEM, k.masterPEM) {
				t.Fatal("pub_key differs from master.pub")
			}
		case "_pillar":
			pillar, err := message.OpenPrivateReply(k.minion[p.id], k.masterPub, body, p.nonce, payload.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			inner := mustValue(t, r, "plain_inner").(*payload.Map)
			wantP, _ := inner.Get("pillar")
			if d := vectors.Equal(pillar, wantP); d != "" {
				t.Fatalf("pillar: %s", d)
			}
		case "publish":
			// clear reply to the CLI: nothing inside.
		default:
			v, err := message.OpenSendReply(sess, body, p.nonce, payload.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if d := vectors.Equal(v, mustValue(t, r, "plain")); d != "" {
				t.Fatalf("send reply: %s", d)
			}
			blob := got.([]byte)
			checkPlainHex(t, sess, r, blob, p.nonce)
		}
		delete(pending, conn)
	case "publish":
		load, serial, err := message.OpenPublish(sess, k.masterPub, body, payload.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		plain := mustValue(t, r, "plain").(*payload.Map)
		ws, _ := plain.Int("serial")
		plain.Delete("serial")
		if serial != ws || serial < 1 {
			t.Fatalf("serial %d want %d", serial, ws)
		}
		if d := vectors.Equal(load, plain); d != "" {
			t.Fatalf("publish load: %s", d)
		}
		// A receiving minion takes each serial once.
		var g message.SerialGuard
		if err := g.Accept(serial); err != nil {
			t.Fatal(err)
		}
		if err := g.Accept(serial); err == nil {
			t.Fatal("replayed serial accepted")
		}
	default:
		t.Fatalf("unknown record kind %q", r.Str("what"))
	}
}

func checkPlainHex(t *testing.T, c *crypt.Crypticle, r vectors.Record, blob []byte, nonce string) {
	t.Helper()
	plain, err := c.Decrypt(blob)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(plain) != r.Str("plain_hex") {
		t.Fatalf("plaintext differs")
	}
	if !bytes.HasPrefix(plain, []byte("pickle::"+nonce)) {
		t.Fatal("no pickle:: prefix")
	}
}

// checkTok verifies a minion's X9.31 tok against its key, as the master's
// __verify_minion does.
func checkTok(t *testing.T, k keys, load *payload.Map) {
	t.Helper()
	tok := load.Bytes("tok")
	if tok == nil {
		return
	}
	priv := k.minion[load.Str("id")]
	if priv == nil {
		t.Fatalf("no key for %q", load.Str("id"))
	}
	if err := crypt.VerifyToken(&priv.PublicKey, tok); err != nil {
		t.Fatalf("tok: %v", err)
	}
	other := k.minion["proxy1"]
	if load.Str("id") == "proxy1" {
		other = k.minion["minion1"]
	}
	if err := crypt.VerifyToken(&other.PublicKey, tok); err == nil {
		t.Fatal("tok verified with the wrong key")
	}
}

func mustValue(t testing.TB, r vectors.Record, name string) any {
	t.Helper()
	v, err := r.Value(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCryptoVectorsEnvelopes reproduces the deterministic envelope vectors
// byte for byte: signed clear replies, the publish frame, the _return
// request and its reply.
func TestCryptoVectorsEnvelopes(t *testing.T) {
	k := loadKeys(t)
	recs, err := vectors.ReadJSONL(vectors.Path("crypto.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range recs {
		kind := r.Str("kind")
		switch kind {
		case "clear_signed":
			load := mustValue(t, r, "load").(*payload.Map)
			frame, err := message.EncodeSignedClear(k.masterPriv, load)
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(frame) != r.Str("frame_hex") {
				t.Errorf("%s: signed clear frame differs", r.Str("name"))
			}
		case "publish_build":
			c, _ := crypt.NewCrypticle(r.Str("key_string"))
			load := mustValue(t, r, "load_in").(*payload.Map)
			var serial int64
			_ = r.Unmarshal("serial", &serial)
			frame, err := message.EncodePublishWithIV(c, k.masterPriv, load, serial, r.Hex("iv_hex"))
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(frame) != r.Str("frame_hex") {
				t.Errorf("publish frame differs:\n got %x\nwant %s", frame, r.Str("frame_hex"))
			}
			if load.Has("serial") {
				t.Error("EncodePublish changed the caller's load")
			}
		case "request_build":
			c, _ := crypt.NewCrypticle(r.Str("key_string"))
			load := mustValue(t, r, "load").(*payload.Map)
			frame, err := message.EncodeAESRequestWithIV(c, load, r.Hex("request_iv_hex"))
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(frame) != r.Str("request_frame_hex") {
				t.Errorf("request frame differs")
			}
			reply, err := message.EncodeSendReplyWithIV(c, nil, load.Str("nonce"), r.Hex("reply_iv_hex"))
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(reply) != r.Str("reply_frame_hex") {
				t.Errorf("reply frame differs")
			}
		case "encrypt_private":
			priv, err := crypt.LoadPrivateKey(vectors.Path(r.Str("decrypt_key")))
			if err != nil {
				t.Fatal(err)
			}
			got, err := message.OpenPrivateReply(priv, k.masterPub, r.Hex("frame_hex"), r.Str("nonce"), payload.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if d := vectors.Equal(got, mustValue(t, r, "ret")); d != "" {
				t.Fatal(d)
			}
			if _, err := message.OpenPrivateReply(priv, k.masterPub, r.Hex("frame_hex"), strings.Repeat("0", 32), payload.DefaultLimits); err == nil {
				t.Fatal("wrong nonce accepted")
			}
		default:
			continue
		}
		seen[kind]++
	}
	want := map[string]int{"clear_signed": 3, "publish_build": 1, "request_build": 1, "encrypt_private": 1}
	if js, _ := json.Marshal(seen); string(js) != mustJSON(want) {
		t.Fatalf("vectors seen %s, want %s", js, mustJSON(want))
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

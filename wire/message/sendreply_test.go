package message

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestEncodeSendReplyBytes: the in-place reply encoder gives exactly the
// bytes of msgpack(raw(Crypticle.Seal(msgpack(ret)))), the straightforward
// construction, across the raw header sizes and with and without a nonce.
func TestEncodeSendReplyBytes(t *testing.T) {
	c := newTestCrypticle(t)
	iv := bytes.Repeat([]byte{7}, crypt.IVSize)
	nonce := strings.Repeat("ab", crypt.NonceLen/2)
	chunk := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*31 + 5)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		ret  any
	}{
		{"empty string", ""},
		{"small map", payload.NewMap("data", "x", "dest", "a/b")},
		{"str16 boundary", payload.NewMap("data", chunk(65535-200), "dest", "f")},
		{"str32", payload.NewMap("data", chunk(1<<20), "dest", "big.bin")},
		{"text chunk", payload.NewMap("data", strings.Repeat("line\n", 70000), "dest", "t.txt")},
		{"list", []any{int64(1), "two", chunk(100)}},
	} {
		for _, n := range []string{"", nonce} {
			t.Run(tc.name, func(t *testing.T) {
				plain, err := payload.Marshal(tc.ret)
				if err != nil {
					t.Fatal(err)
				}
				blob, err := c.SealWithIV(plain, n, iv)
				if err != nil {
					t.Fatal(err)
				}
				want, err := payload.Marshal(blob)
				if err != nil {
					t.Fatal(err)
				}
				got, err := EncodeSendReplyWithIV(c, tc.ret, n, iv)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("reply differs: %d bytes, want %d", len(got), len(want))
				}
				back, err := OpenSendReply(c, got, n, payload.DefaultLimits)
				if err != nil {
					t.Fatal(err)
				}
				again, err := payload.Marshal(back)
				if err != nil || !bytes.Equal(again, plain) {
					t.Fatalf("round trip changed the value (%v)", err)
				}
				// In place: same value; a frame with a bad MAC is refused
				// and left as it was.
				own := append([]byte(nil), got...)
				back, err = OpenSendReplyInPlace(c, own, n, payload.DefaultLimits)
				if err != nil {
					t.Fatal(err)
				}
				if again, err = payload.Marshal(back); err != nil || !bytes.Equal(again, plain) {
					t.Fatalf("in-place round trip changed the value (%v)", err)
				}
				bad := append([]byte(nil), got...)
				bad[len(bad)-1] ^= 1
				keep := append([]byte(nil), bad...)
				if _, err := OpenSendReplyInPlace(c, bad, n, payload.DefaultLimits); !errors.Is(err, ErrDecrypt) {
					t.Fatalf("bad MAC: %v", err)
				}
				if !bytes.Equal(bad, keep) {
					t.Fatal("a refused frame was changed")
				}
			})
		}
	}
}

// TestEncodeAESRequestBytes: the in-place request encoder gives exactly
// the bytes of msgpack({enc: aes, load: Crypticle.Seal(msgpack(load)),
// version: 2}), the straightforward construction (pinned to Salt by the
// captured request_build frames), across the raw header sizes; the frame
// parses back to the load.
func TestEncodeAESRequestBytes(t *testing.T) {
	c := newTestCrypticle(t)
	iv := bytes.Repeat([]byte{9}, crypt.IVSize)
	for _, tc := range []struct {
		name string
		load *payload.Map
	}{
		{"empty", payload.NewMap()},
		{"return", payload.NewMap("cmd", "_return", "id", "sw-0001", "success", true, "return", true, "retcode", 0,
			"jid", "20261128152101123456", "fun", "test.ping", "fun_args", []any{}, "nonce", strings.Repeat("cd", 16))},
		{"str16 boundary", payload.NewMap("cmd", "_file_recv", "data", strings.Repeat("z", 65535-200))},
		{"str32", payload.NewMap("cmd", "_file_recv", "data", bytes.Repeat([]byte{0xfe, 1}, 1<<19))},
		{"hint short", payload.NewMap("cmd", "_mine", "data", []any{int64(1) << 40, 2.5, nil, true, []any{int64(-7)}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain, err := payload.Marshal(tc.load)
			if err != nil {
				t.Fatal(err)
			}
			blob, err := c.SealWithIV(plain, "", iv)
			if err != nil {
				t.Fatal(err)
			}
			want, err := payload.Marshal(payload.NewMap("enc", EncAES, "load", blob, "version", ProtocolVersion))
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeAESRequestWithIV(c, tc.load, iv)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("request differs: %d bytes %x..., want %d bytes %x...", len(got), got[:min(24, len(got))], len(want), want[:min(24, len(want))])
			}
			req, err := ParseRequest(got, payload.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			back, _, err := OpenAESRequest(c, req, payload.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			// A version 2 request's nonce is taken out of the load.
			sent := tc.load.Clone()
			sent.Delete("nonce")
			wantBack, _ := payload.Marshal(sent)
			if again, err := payload.Marshal(back); err != nil || !bytes.Equal(again, wantBack) {
				t.Fatalf("round trip changed the load (%v)", err)
			}
		})
	}
}

// newTestCrypticle returns a Crypticle with a fresh session key.
func newTestCrypticle(t *testing.T) *crypt.Crypticle {
	t.Helper()
	key, err := crypt.GenerateKeyString()
	if err != nil {
		t.Fatal(err)
	}
	c, err := crypt.NewCrypticle(key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEncodeAESRequestFresh: the request frame made without copying the
// load has the bytes of the frame of a copy with the nonce Set (appended
// after the load's entries, or in place where the load has one), and the
// caller's load is left as it was.
func TestEncodeAESRequestFresh(t *testing.T) {
	c := newTestCrypticle(t)
	iv := bytes.Repeat([]byte{5}, crypt.IVSize)
	nonce := strings.Repeat("ef", crypt.NonceLen/2)
	for _, tc := range []struct {
		name string
		load *payload.Map
	}{
		{"empty", payload.NewMap()},
		{"return", payload.NewMap("cmd", "_return", "id", "sw-0001", "success", true, "return", true, "retcode", 0,
			"jid", "20261128152101123456", "fun", "test.ping", "fun_args", []any{}, "user", "root")},
		{"nonce first", payload.NewMap("nonce", "old", "cmd", "_minion_event", "tag", "t", "data", payload.NewMap("a", 1))},
		{"nonce middle", payload.NewMap("cmd", "_return", "nonce", strings.Repeat("0", 32), "id", "m1")},
		{"large", payload.NewMap("cmd", "_file_recv", "data", strings.Repeat("z", 70000))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := payload.Marshal(tc.load)
			if err != nil {
				t.Fatal(err)
			}
			l := tc.load.Clone()
			l.Set("nonce", nonce)
			want, err := EncodeAESRequestWithIV(c, l, iv)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeAESRequestNonce(c, tc.load, nonce, iv)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("frame differs: %d bytes %x..., want %d bytes %x...", len(got), got[:min(24, len(got))], len(want), want[:min(24, len(want))])
			}
			after, _ := payload.Marshal(tc.load)
			if !bytes.Equal(before, after) {
				t.Error("the caller's load was modified")
			}
		})
	}
	// The exported form draws a fresh nonce and returns it.
	load := payload.NewMap("cmd", "_return", "id", "m1")
	frame, n, err := EncodeAESRequestFresh(c, load)
	if err != nil {
		t.Fatal(err)
	}
	req, err := ParseRequest(frame, payload.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	back, gotNonce, err := OpenAESRequest(c, req, payload.DefaultLimits)
	if err != nil || gotNonce != n || back.Str("id") != "m1" || load.Has("nonce") {
		t.Fatalf("opened %v nonce %q (sent %q), err %v; load %v", back, gotNonce, n, err, load)
	}
}

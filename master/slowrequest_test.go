package master

import (
	"testing"

	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestSlowRequest: only a clear-text "_auth" request goes to the request
// port's slow lane.
func TestSlowRequest(t *testing.T) {
	clear := func(load *payload.Map) []byte {
		b, err := message.EncodeClearRequest(load)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	aesLike, err := payload.Marshal(payload.NewMap("enc", "aes", "load", []byte("\xa5_auth ciphertext that happens to contain the marker")))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		body []byte
		want bool
	}{
		{"auth", clear(payload.NewMap("cmd", "_auth", "id", "m1", "pub", "-----BEGIN PUBLIC KEY-----", "token", []byte("t"))), true},
		{"publish", clear(payload.NewMap("cmd", "publish", "tgt", "*", "fun", "test.ping")), false},
		{"id named _auth", clear(payload.NewMap("cmd", "_return", "id", "_auth")), false},
		{"aes", aesLike, false},
		{"garbage", []byte("\xa5_auth\xff\xff"), false},
		{"empty", nil, false},
		{"enc and cmd as bin", mustMarshal(t, payload.NewMap([]byte("enc"), []byte("clear"), "load", payload.NewMap([]byte("cmd"), []byte("_auth")))), true},
		{"cmd repeated, the last is _auth", []byte("\x82\xa3enc\xa5clear\xa4load\x82\xa3cmd\xa7publish\xa3cmd\xa5_auth"), true},
		{"cmd repeated, the last is publish", []byte("\x82\xa3enc\xa5clear\xa4load\x82\xa3cmd\xa5_auth\xa3cmd\xa7publish"), false},
		{"load is not a map", mustMarshal(t, payload.NewMap("enc", "clear", "load", []any{"cmd", "_auth"})), false},
		{"no enc", mustMarshal(t, payload.NewMap("load", payload.NewMap("cmd", "_auth"))), false},
		{"truncated", func() []byte {
			b := clear(payload.NewMap("cmd", "_auth", "id", "m1"))
			return b[:len(b)-2]
		}(), false},
	}
	for _, tc := range cases {
		if got := SlowRequest(tc.body); got != tc.want {
			t.Errorf("%s: SlowRequest = %v, want %v", tc.name, got, tc.want)
		}
		// The full decode the handler does later agrees.
		full := false
		if req, err := message.ParseRequest(tc.body, payload.DefaultLimits); err == nil && req.Enc == message.EncClear {
			cmd, _ := req.Load.Get("cmd")
			full = cmd == "_auth"
		}
		if full != tc.want {
			t.Errorf("%s: the decoded request says %v", tc.name, full)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := payload.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

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
	}
	for _, tc := range cases {
		if got := SlowRequest(tc.body); got != tc.want {
			t.Errorf("%s: SlowRequest = %v, want %v", tc.name, got, tc.want)
		}
	}
}

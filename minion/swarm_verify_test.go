package minion

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
)

// TestVerifiedPubs checks the swarm's shared publish signature checks: a
// good signature verifies (and again from memory), a bad one fails every
// time and is not remembered, and the memory stays bounded.
func TestVerifiedPubs(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	blob := []byte("encrypted publish load")
	sig, err := crypt.Sign(priv, blob)
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifiedPubs()
	tests := []struct {
		name    string
		pub     *rsa.PublicKey
		blob    []byte
		sig     []byte
		wantErr bool
	}{
		{"good", &priv.PublicKey, blob, sig, false},
		{"good again", &priv.PublicKey, blob, sig, false},
		{"other key", &other.PublicKey, blob, sig, true},
		{"other key again", &other.PublicKey, blob, sig, true},
		{"changed load", &priv.PublicKey, []byte("encrypted publish loaD"), sig, true},
		{"empty sig", &priv.PublicKey, blob, nil, true},
	}
	for _, tc := range tests {
		if err := v.verify(tc.pub, tc.blob, tc.sig); (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", tc.name, err, tc.wantErr)
		}
	}
	if len(v.seen) != 1 {
		t.Errorf("%d signatures remembered, want 1 (failures are not kept)", len(v.seen))
	}
	for i := range maxVerified + 10 {
		b := []byte(fmt.Sprintf("publish %d", i))
		s, err := crypt.Sign(priv, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.verify(&priv.PublicKey, b, s); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if len(v.seen) != maxVerified || len(v.ring) != maxVerified {
		t.Errorf("remembered %d/%d signatures, want the bound %d", len(v.seen), len(v.ring), maxVerified)
	}
}

package message_test

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/message"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestSignedMasterKey checks Salt's verify_master rules for signed master
// keys (master_sign_pubkey / verify_master_pubkey_sign /
// always_verify_signature): which replies are accepted, when the new key
// must be cached, and which error a refusal is.
func TestSignedMasterKey(t *testing.T) {
	k := loadKeys(t)
	minion := k.minion["minion1"]
	pubPEM := crypt.MarshalPublicKeyPEM(&minion.PublicKey)
	signKey, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	otherSign, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	oldMaster, err := crypt.GenerateKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	oldPEM := crypt.MarshalPublicKeyPEM(&oldMaster.PublicKey)
	// pubSig is what a master with master_sign_pubkey sends: base64 of the
	// PKCS#1 v1.5 SHA-1 signature of its pub_key text, with a newline.
	pubSig := func(signer *rsa.PrivateKey) string {
		sig, err := crypt.Sign(signer, k.masterPEM)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(sig) + "\n"
	}
	good, forged := pubSig(signKey), pubSig(otherSign)
	verify := message.MasterKeySign{Verify: true, SignPub: &signKey.PublicKey}
	tests := []struct {
		name      string
		cached    []byte // minion_master.pub, nil on first contact
		tokenWith *rsa.PublicKey
		sig       string
		ks        message.MasterKeySign
		err       error
		cacheKey  bool
	}{
		{name: "neither side signs, first contact", cacheKey: true},
		{name: "neither side signs, same key", cached: k.masterPEM, tokenWith: k.masterPub},
		{name: "master signs, minion does not verify", sig: good, err: message.ErrAuthDeps},
		{name: "minion verifies, master does not sign", ks: verify, err: message.ErrAuthDeps},
		{name: "signed first contact", sig: good, ks: verify, cacheKey: true},
		{name: "forged signature on first contact", sig: forged, ks: verify, err: message.ErrMasterKeySig},
		{name: "no master_sign.pub", sig: good, ks: message.MasterKeySign{Verify: true}, err: message.ErrMasterKeySig},
		{name: "signature that is not base64", sig: "%%%", ks: verify, err: message.ErrMasterKeySig},
		{name: "new master key, signed", cached: oldPEM, tokenWith: &oldMaster.PublicKey, sig: good, ks: verify, cacheKey: true},
		{name: "new master key, forged", cached: oldPEM, tokenWith: &oldMaster.PublicKey, sig: forged, ks: verify, err: message.ErrMasterKeySig},
		{name: "new master key, unsigned", cached: oldPEM, tokenWith: &oldMaster.PublicKey, err: message.ErrMasterKeyChanged},
		{name: "same key, signed, not re-verified", cached: k.masterPEM, tokenWith: k.masterPub, sig: forged, ks: message.MasterKeySign{Verify: true, SignPub: &signKey.PublicKey}},
		{name: "same key, always_verify_signature", cached: k.masterPEM, tokenWith: k.masterPub, sig: good, ks: message.MasterKeySign{Verify: true, Always: true, SignPub: &signKey.PublicKey}},
		{name: "same key, always_verify_signature, forged", cached: k.masterPEM, tokenWith: k.masterPub, sig: forged, ks: message.MasterKeySign{Verify: true, Always: true, SignPub: &signKey.PublicKey}, err: message.ErrMasterKeySig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := message.NewSignIn("minion1", pubPEM, tc.tokenWith, nil)
			if err != nil {
				t.Fatal(err)
			}
			session, _ := crypt.GenerateKeyString()
			inner, err := message.BuildAuthAccept(message.AuthAccept{
				MasterPriv: k.masterPriv, MasterPubPEM: k.masterPEM, MinionPub: &minion.PublicKey,
				SessionKey: session, PublishPort: 4505, EncToken: s.Load.Bytes("token"), Nonce: s.Nonce, PubSig: tc.sig,
			})
			if err != nil {
				t.Fatal(err)
			}
			frame, err := message.EncodeSignedClear(k.masterPriv, inner)
			if err != nil {
				t.Fatal(err)
			}
			res, err := message.OpenAuthReplySigned(frame, s, minion, tc.cached, payload.DefaultLimits, tc.ks)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != message.AuthAccepted || res.SessionKey != session || res.CacheKey != tc.cacheKey {
				t.Fatalf("result %+v, want accepted with CacheKey %v", res, tc.cacheKey)
			}
		})
	}
}

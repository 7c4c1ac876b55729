package crypt

import (
	"bytes"
	"encoding/hex"
	"os"
	"testing"
)

func FuzzCrypticleOpen(f *testing.F) {
	c := mustCrypticle(f, keyA)
	nonce := "0123456789abcdef0123456789abcdef"
	for _, kind := range []string{"crypticle_encrypt", "crypticle_decrypt", "crypticle_error"} {
		for _, v := range loadVectors(f, kind) {
			if b, err := hex.DecodeString(v.optStr("output_hex")); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte{})
	f.Add(make([]byte, MinBlobSize))
	f.Add(make([]byte, MinBlobSize+1))
	f.Fuzz(func(t *testing.T, blob []byte) {
		for _, n := range []string{"", nonce} {
			payload, err := c.Open(blob, n)
			if err != nil {
				continue
			}
			// Anything accepted must re-seal to a blob that opens the same.
			again, err := c.Seal(payload, n)
			if err != nil {
				t.Fatalf("reseal: %v", err)
			}
			back, err := c.Open(again, n)
			if err != nil || !bytes.Equal(back, payload) {
				t.Fatalf("reseal round trip: %v", err)
			}
		}
	})
}

func FuzzX931Recover(f *testing.F) {
	pub := loadVecPub(f, "pki/master/minions/minion1")
	for _, v := range loadVectors(f, "x931_sign") {
		if b, err := hex.DecodeString(v.optStr("signature_hex")); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 257))
	f.Add(pub.N.Bytes())
	k := modulusBytes(pub.N)
	f.Fuzz(func(t *testing.T, sig []byte) {
		m, err := X931Recover(pub, sig)
		if err == nil && len(m) > k-2 {
			t.Fatalf("recovered %d bytes from a %d-byte modulus", len(m), k)
		}
		_ = VerifyToken(pub, sig)
	})
}

func FuzzParsePublicKeyPEM(f *testing.F) {
	for _, p := range []string{"pki/master/master.pub", "pki/minion1/minion.pub", "pki/master/master.pem"} {
		if b, err := os.ReadFile(vecPath(p)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\n\n-----END PUBLIC KEY-----\n"))
	f.Add([]byte("-----BEGIN RSA PUBLIC KEY-----\nMAA=\n-----END RSA PUBLIC KEY-----"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Fingerprint(data, "")
		pub, err := ParsePublicKeyPEM(data)
		if err != nil {
			return
		}
		text := MarshalPublicKeyPEM(pub)
		if text == nil {
			return // Go can parse but not re-encode some odd keys
		}
		again, err := ParsePublicKeyPEM(text)
		if err != nil || !again.Equal(pub) {
			t.Fatalf("re-parse of our own encoding failed: %v", err)
		}
	})
}

package crypt

import (
	"bytes"
	"testing"
)

// BenchmarkDecryptOAEP measures the master's per-auth RSA work (one
// 2048-bit OAEP decrypt of the minion's token).
func BenchmarkDecryptOAEP(b *testing.B) {
	priv := loadVecPriv(b, "pki/master/master.pem")
	ct, err := EncryptOAEP(&priv.PublicKey, []byte(keyA))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecryptOAEP(priv, ct); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPayload is a publish-sized msgpack-like payload.
var benchPayload = bytes.Repeat([]byte("x"), 512)

func BenchmarkSeal(b *testing.B) {
	c := mustCrypticle(b, keyA)
	b.SetBytes(int64(len(benchPayload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Seal(benchPayload, ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	c := mustCrypticle(b, keyA)
	nonce := NewNonce()
	blob, err := c.Seal(benchPayload, nonce)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchPayload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Open(blob, nonce); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	priv := loadVecPriv(b, "pki/master/master.pem")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sign(priv, benchPayload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkX931Sign(b *testing.B) {
	priv := loadVecPriv(b, "pki/master/master.pem")
	msg := []byte("046c56ad37d9a72596dbce2936b1dd404a103053a215fecb8c480195fff362aa")
	for b.Loop() {
		if _, err := X931Sign(priv, msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyToken(b *testing.B) {
	priv := loadVecPriv(b, "pki/minion1/minion.pem")
	tok, err := Token(priv)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := VerifyToken(&priv.PublicKey, tok); err != nil {
			b.Fatal(err)
		}
	}
}

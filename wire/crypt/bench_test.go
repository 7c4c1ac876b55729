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

// chunkPayload is a file_buffer_size-like _serve_file chunk (1 MiB).
var chunkPayload = bytes.Repeat([]byte{0x5a}, 1<<20)

// BenchmarkSealChunk is the master's per-chunk work on a 1 MiB file
// chunk (AES-192-CBC encrypt in place + HMAC-SHA256): 1 GiB costs
// 1024 × ns/op. BenchmarkSealChunkStdlib is the same with crypto/cipher's
// CBC.
func BenchmarkSealChunk(b *testing.B)       { benchSealChunk(b, false) }
func BenchmarkSealChunkStdlib(b *testing.B) { benchSealChunk(b, true) }

func benchSealChunk(b *testing.B, stdlib bool) {
	c := mustCrypticle(b, keyA)
	if stdlib {
		c.fast = nil
	}
	nonce := NewNonce()
	head := SealHeadroom(nonce)
	buf := make([]byte, head+len(chunkPayload), head+len(chunkPayload)+SealOverhead)
	b.SetBytes(int64(len(chunkPayload)))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf[head:], chunkPayload)
		if _, err := c.SealInPlace(buf[:head+len(chunkPayload)], nonce, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenChunk is the minion's per-chunk work (HMAC-SHA256 check +
// AES-192-CBC decrypt in place) on a 1 MiB chunk; BenchmarkOpenChunkStdlib
// with crypto/cipher's CBC.
func BenchmarkOpenChunk(b *testing.B)       { benchOpenChunk(b, false) }
func BenchmarkOpenChunkStdlib(b *testing.B) { benchOpenChunk(b, true) }

func benchOpenChunk(b *testing.B, stdlib bool) {
	c := mustCrypticle(b, keyA)
	if stdlib {
		c.fast = nil
	}
	nonce := NewNonce()
	blob, err := c.Seal(chunkPayload, nonce)
	if err != nil {
		b.Fatal(err)
	}
	work := make([]byte, len(blob))
	b.SetBytes(int64(len(chunkPayload)))
	b.ReportAllocs()
	for b.Loop() {
		copy(work, blob)
		if _, err := c.OpenInPlace(work, nonce); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMACChunk is HMAC-SHA256 alone over a 1 MiB chunk (SHA-NI
// where the CPU has it): the part of both sides the CBC loops leave.
func BenchmarkMACChunk(b *testing.B) {
	c := mustCrypticle(b, keyA)
	b.SetBytes(int64(len(chunkPayload)))
	b.ReportAllocs()
	for b.Loop() {
		c.mac(chunkPayload)
	}
}

// BenchmarkVerify measures a minion's check of one signed publish
// (sign_pub_messages): PKCS#1 v1.5 SHA-1 over a publish-sized blob with the
// master's 2048-bit key.
func BenchmarkVerify(b *testing.B) {
	priv := loadVecPriv(b, "pki/master/master.pem")
	sig, err := Sign(priv, benchPayload)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Verify(&priv.PublicKey, benchPayload, sig); err != nil {
			b.Fatal(err)
		}
	}
}

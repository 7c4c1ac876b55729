//go:build cgo && unix

package crypt

import (
	"crypto/sha1"
	"testing"
)

// BenchmarkBackend measures each backend's private-key operations on
// Salt's 2048-bit master key: a publish/reply signature, a token or
// session-key OAEP decryption and an X9.31 (auth reply sig, minion tok)
// signature; the -parallel variants run on every core (b.RunParallel).
func BenchmarkBackend(b *testing.B) {
	priv := loadVecPriv(b, "pki/master/master.pem")
	ct, err := EncryptOAEP(&priv.PublicKey, []byte(keyA))
	if err != nil {
		b.Fatal(err)
	}
	h := sha1.Sum(benchPayload)
	em, err := x931Pad(modulusBytes(priv.N), []byte("salt"))
	if err != nil {
		b.Fatal(err)
	}
	ops := []struct {
		name string
		op   func(privateBackend) ([]byte, error)
	}{
		{"sign", func(be privateBackend) ([]byte, error) { return be.signSHA1(priv, h[:]) }},
		{"decrypt", func(be privateBackend) ([]byte, error) { return be.decryptOAEP(priv, ct) }},
		{"x931", func(be privateBackend) ([]byte, error) { return be.raw(priv, em) }},
	}
	for _, be := range bothBackends(b) {
		for _, o := range ops {
			b.Run(be.name()+"/"+o.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := o.op(be); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(be.name()+"/"+o.name+"-parallel", func(b *testing.B) {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := o.op(be); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkOpenSSLConvert measures the one-time conversion of a parsed key
// to an OpenSSL key (Validate included).
func BenchmarkOpenSSLConvert(b *testing.B) {
	opensslForTest(b)
	priv := loadVecPriv(b, "pki/minion1/minion.pem")
	b.ReportAllocs()
	for b.Loop() {
		if convertKey(priv) == nil {
			b.Fatal("not converted")
		}
	}
}

//go:build cgo && unix

package crypt

import (
	"crypto"
	"crypto/rsa"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/golang-fips/openssl/v2"
)

// libcrypto is the shared library the OpenSSL backend dlopens (OpenSSL 3,
// Debian's libssl3).
const libcrypto = "libcrypto.so.3"

// minOpenSSLBits is the smallest modulus handed to OpenSSL: Go refuses
// smaller keys (crypto/rsa's rsa1024min), so they stay with Go and fail
// the same way with either backend.
const minOpenSSLBits = 1024

// errOpenSSLFIPS says why a FIPS-mode libcrypto is not used: it refuses
// SHA-1 signatures, which Salt's protocol needs.
var errOpenSSLFIPS = errors.New("libcrypto is in FIPS mode (no SHA-1 signatures)")

// loadOpenSSL dlopens libcrypto and returns its backend.
func loadOpenSSL() (privateBackend, error) {
	if err := openssl.Init(libcrypto); err != nil {
		return nil, fmt.Errorf("crypt: %w", err)
	}
	if openssl.FIPS() {
		return nil, errOpenSSLFIPS
	}
	return &opensslBackend{}, nil
}

// opensslBackend runs the private-key operations in libcrypto. Each
// *rsa.PrivateKey is converted to an OpenSSL key once and kept in keys,
// keyed by a weak pointer to it; the entry is removed when the Go key is
// collected. Lookups are lock-free (sync.Map), and libcrypto calls run
// without any lock of ours, so parallel callers use every core.
//
// A key OpenSSL does not take (not two primes, below minOpenSSLBits, failing
// Validate) and any operation libcrypto refuses fall back to goBackend,
// whose result and error are then the answer.
type opensslBackend struct {
	keys sync.Map // weak.Pointer[rsa.PrivateKey] -> *opensslKey
	// converted counts key conversions (tests check that a key is
	// converted once).
	converted atomic.Int64
	// fallbacks counts operations handed to goBackend (tests check that
	// valid ones are not).
	fallbacks atomic.Int64
}

// opensslKey is a converted key; k is nil when OpenSSL does not take the
// key. n and d are the fields it was made from: a key whose fields were
// replaced since is converted again.
type opensslKey struct {
	k    *openssl.PrivateKeyRSA
	n, d *big.Int
}

func (*opensslBackend) name() string { return "openssl" }

// key returns priv's OpenSSL key, converting it on first use, or nil.
func (b *opensslBackend) key(priv *rsa.PrivateKey) *openssl.PrivateKeyRSA {
	wp := weak.Make(priv)
	if v, ok := b.keys.Load(wp); ok {
		if e := v.(*opensslKey); e.n == priv.N && e.d == priv.D {
			return e.k
		}
	}
	e := &opensslKey{k: convertKey(priv), n: priv.N, d: priv.D}
	b.converted.Add(1)
	if _, loaded := b.keys.Swap(wp, e); !loaded {
		runtime.AddCleanup(priv, func(wp weak.Pointer[rsa.PrivateKey]) { b.keys.Delete(wp) }, wp)
	}
	return e.k
}

// convertKey makes the OpenSSL key for priv, or returns nil when it stays
// with Go.
func convertKey(priv *rsa.PrivateKey) *openssl.PrivateKeyRSA {
	if priv.N == nil || priv.D == nil || priv.N.BitLen() < minOpenSSLBits || len(priv.Primes) != 2 ||
		priv.Primes[0] == nil || priv.Primes[1] == nil || priv.E <= 0 || priv.Validate() != nil {
		return nil
	}
	dp, dq, qinv := crtValues(priv)
	if qinv == nil {
		return nil
	}
	k, err := openssl.NewPrivateKeyRSA(bn(priv.N), bn(big.NewInt(int64(priv.E))), bn(priv.D),
		bn(priv.Primes[0]), bn(priv.Primes[1]), bn(dp), bn(dq), bn(qinv))
	if err != nil {
		return nil
	}
	return k
}

// bn copies x's words into an openssl.BigInt.
func bn(x *big.Int) openssl.BigInt {
	w := x.Bits()
	out := make(openssl.BigInt, len(w))
	for i, v := range w {
		out[i] = uint(v)
	}
	return out
}

func (b *opensslBackend) decryptOAEP(priv *rsa.PrivateKey, ct []byte) ([]byte, error) {
	if k := b.key(priv); k != nil {
		if pt, err := openssl.DecryptRSAOAEP(openssl.NewSHA1(), openssl.NewSHA1(), k, ct, nil); err == nil {
			return pt, nil
		}
	}
	b.fallbacks.Add(1)
	return goBackend{}.decryptOAEP(priv, ct)
}

func (b *opensslBackend) signSHA1(priv *rsa.PrivateKey, digest []byte) ([]byte, error) {
	if k := b.key(priv); k != nil && len(digest) == crypto.SHA1.Size() {
		if sig, err := openssl.SignRSAPKCS1v15(k, crypto.SHA1, digest); err == nil {
			return sig, nil
		}
	}
	b.fallbacks.Add(1)
	return goBackend{}.signSHA1(priv, digest)
}

func (b *opensslBackend) raw(priv *rsa.PrivateKey, block []byte) ([]byte, error) {
	if k := b.key(priv); k != nil && len(block) == modulusBytes(priv.N) {
		// DecryptRSANoPadding checks the result with the public key.
		if s, err := openssl.DecryptRSANoPadding(k, block); err == nil && len(s) == len(block) {
			return s, nil
		}
	}
	b.fallbacks.Add(1)
	return goBackend{}.raw(priv, block)
}

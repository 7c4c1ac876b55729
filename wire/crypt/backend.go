package crypt

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"log/slog"
	"math/big"
	"os"
	"strings"
	"sync"
)

// CryptoEnv names the environment variable that selects the RSA
// private-key backend: "go" forces Go's crypto/rsa; anything else (or
// unset) uses OpenSSL's libcrypto when it loads.
const CryptoEnv = "GSALT_CRYPTO"

// privateBackend performs the RSA private-key operations of this package:
// OAEP decryption, PKCS#1 v1.5 SHA-1 signatures and the raw private
// operation behind X9.31 signing. Both implementations give the same bytes
// for the same key and input (the signatures are deterministic); the
// errors they return are the ones crypto/rsa returns.
type privateBackend interface {
	// name is "openssl" or "go".
	name() string
	// decryptOAEP is RSAES-OAEP-SHA1 decryption with an empty label.
	decryptOAEP(priv *rsa.PrivateKey, ct []byte) ([]byte, error)
	// signSHA1 is RSASSA-PKCS1-v1_5 over a SHA-1 digest.
	signSHA1(priv *rsa.PrivateKey, digest []byte) ([]byte, error)
	// raw computes block^d mod n (block is k bytes and below n), checked
	// against the public key, as k bytes.
	raw(priv *rsa.PrivateKey, block []byte) ([]byte, error)
}

// backend returns the process's RSA private-key backend, chosen once on
// first use (the package's only lazily initialised state): OpenSSL's
// libcrypto through golang-fips/openssl when it loads and $GSALT_CRYPTO is
// not "go", else Go's crypto/rsa. The choice is logged once at debug
// level.
var backend = sync.OnceValue(func() privateBackend {
	b, reason := chooseBackend(os.Getenv(CryptoEnv), loadOpenSSL)
	slog.Debug("crypt: RSA private-key backend", "backend", b.name(), "reason", reason)
	return b
})

// chooseBackend picks the backend for the $GSALT_CRYPTO value mode; load
// loads OpenSSL's backend (or says why it cannot). It returns the backend
// and why it was chosen.
func chooseBackend(mode string, load func() (privateBackend, error)) (privateBackend, string) {
	if strings.EqualFold(strings.TrimSpace(mode), "go") {
		return goBackend{}, CryptoEnv + "=go"
	}
	b, err := load()
	if err != nil {
		return goBackend{}, err.Error()
	}
	return b, "libcrypto loaded"
}

// goBackend is Go's crypto/rsa (constant-time) plus rawPrivate (math/big,
// blinded) for X9.31.
type goBackend struct{}

func (goBackend) name() string { return "go" }

func (goBackend) decryptOAEP(priv *rsa.PrivateKey, ct []byte) ([]byte, error) {
	return rsa.DecryptOAEP(sha1.New(), nil, priv, ct, nil)
}

func (goBackend) signSHA1(priv *rsa.PrivateKey, digest []byte) ([]byte, error) {
	return rsa.SignPKCS1v15(nil, priv, crypto.SHA1, digest)
}

func (goBackend) raw(priv *rsa.PrivateKey, block []byte) ([]byte, error) {
	s, err := rawPrivate(priv, new(big.Int).SetBytes(block))
	if err != nil {
		return nil, err
	}
	return s.FillBytes(make([]byte, len(block))), nil
}

package crypt

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gsalt/gsalt/internal/atomicfile"
)

// DefaultKeyBits is Salt's default RSA key size (the keysize option).
const DefaultKeyBits = 2048

// MaxKeyBits is the largest RSA modulus accepted when parsing keys; it
// matches OpenSSL's OPENSSL_RSA_MAX_MODULUS_BITS and bounds the cost of a
// public operation on a key received from the network.
const MaxKeyBits = 16384

// PEM block types written and read by Salt.
const (
	pemTypePKCS1Private = "RSA PRIVATE KEY"
	pemTypePKCS8Private = "PRIVATE KEY"
	pemTypeSPKI         = "PUBLIC KEY"
	pemTypePKCS1Public  = "RSA PUBLIC KEY"
	pemTypeEncPKCS8     = "ENCRYPTED PRIVATE KEY"
)

// File modes used by salt.crypt.gen_keys.
const (
	privateKeyMode fs.FileMode = 0o400
	publicKeyMode  fs.FileMode = 0o644
)

// GenerateKey creates a new RSA key with public exponent 65537. A bits value
// of zero or less selects DefaultKeyBits (2048). Go refuses sizes below 1024.
func GenerateKey(bits int) (*rsa.PrivateKey, error) {
	if bits <= 0 {
		bits = DefaultKeyBits
	}
	if bits > MaxKeyBits {
		return nil, fmt.Errorf("crypt: generate %d-bit key: larger than %d bits", bits, MaxKeyBits)
	}
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return nil, fmt.Errorf("crypt: generate %d-bit key: %w", bits, err)
	}
	return k, nil
}

// encodePEM writes one PEM block with 64-character base64 lines and "\n"
// line ends, and without a newline after the END line.
//
// Choice of the trailing newline: Salt's pycryptodome backend (the one the
// reference vectors and every file in testdata/vectors/pki were made with)
// writes none, M2Crypto writes one, and Salt reads both. We follow
// pycryptodome so that re-marshalling a parsed Salt key gives the same bytes
// (and the same fingerprint; the fingerprint ignores the trailing newline
// anyway).
func encodePEM(typ string, der []byte) []byte {
	out := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	return bytes.TrimSuffix(out, []byte("\n"))
}

// MarshalPrivateKeyPEM encodes priv as a PKCS#1 "RSA PRIVATE KEY" PEM block
// with 64-character lines and no trailing newline, the format Salt writes to
// master.pem / minion.pem. It returns nil for a nil key.
func MarshalPrivateKeyPEM(priv *rsa.PrivateKey) []byte {
	if priv == nil || priv.N == nil {
		return nil
	}
	return encodePEM(pemTypePKCS1Private, x509.MarshalPKCS1PrivateKey(priv))
}

// MarshalPublicKeyPEM encodes pub as a SubjectPublicKeyInfo "PUBLIC KEY" PEM
// block with 64-character lines and no trailing newline, the format Salt
// writes to *.pub files and sends as "pub" / "pub_key". It returns nil for a
// nil or unencodable key.
func MarshalPublicKeyPEM(pub *rsa.PublicKey) []byte {
	if pub == nil || pub.N == nil {
		return nil
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	return encodePEM(pemTypeSPKI, der)
}

// decodeFirstPEM returns the first PEM block of data. encoding/pem skips
// leading junk and accepts CRLF line ends and trailing whitespace.
func decodeFirstPEM(data []byte) (*pem.Block, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, ErrNoPEM
	}
	return block, nil
}

func checkModulus(n int) error {
	if n > MaxKeyBits {
		return fmt.Errorf("%w: %d-bit modulus exceeds %d bits", ErrKeyFormat, n, MaxKeyBits)
	}
	return nil
}

// ParsePrivateKeyPEM parses the first PEM block of data as an RSA private
// key. It accepts PKCS#1 "RSA PRIVATE KEY" (what Salt writes) and PKCS#8
// "PRIVATE KEY". Passphrase-protected keys return ErrEncryptedKey.
func ParsePrivateKeyPEM(data []byte) (*rsa.PrivateKey, error) {
	block, err := decodeFirstPEM(data)
	if err != nil {
		return nil, err
	}
	if block.Type == pemTypeEncPKCS8 || strings.Contains(block.Headers["Proc-Type"], "ENCRYPTED") {
		return nil, ErrEncryptedKey
	}
	var key *rsa.PrivateKey
	switch block.Type {
	case pemTypePKCS1Private:
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKeyFormat, err)
		}
	case pemTypePKCS8Private:
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKeyFormat, err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%w: PKCS#8 key is %T", ErrNotRSA, k)
		}
		key = rk
	default:
		return nil, fmt.Errorf("%w: PEM type %q is not a private key", ErrKeyFormat, block.Type)
	}
	if err := checkModulus(key.N.BitLen()); err != nil {
		return nil, err
	}
	return key, nil
}

// ParsePublicKeyPEM parses the first PEM block of data as an RSA public key.
// It accepts SubjectPublicKeyInfo "PUBLIC KEY" (what Salt writes) and PKCS#1
// "RSA PUBLIC KEY". Note that Salt itself cannot read the PKCS#1 form (its
// loaders delete "RSA " from the text), so never send one to a Salt peer.
func ParsePublicKeyPEM(data []byte) (*rsa.PublicKey, error) {
	block, err := decodeFirstPEM(data)
	if err != nil {
		return nil, err
	}
	var pub *rsa.PublicKey
	switch block.Type {
	case pemTypeSPKI:
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKeyFormat, err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%w: public key is %T", ErrNotRSA, k)
		}
		pub = rk
	case pemTypePKCS1Public:
		pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKeyFormat, err)
		}
	default:
		return nil, fmt.Errorf("%w: PEM type %q is not a public key", ErrKeyFormat, block.Type)
	}
	if err := checkModulus(pub.N.BitLen()); err != nil {
		return nil, err
	}
	return pub, nil
}

// LoadPrivateKey reads and parses an RSA private key PEM file.
func LoadPrivateKey(path string) (*rsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("crypt: load private key: %w", err)
	}
	k, err := ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("crypt: load private key %s: %w", path, err)
	}
	return k, nil
}

// LoadPublicKey reads and parses an RSA public key PEM file.
func LoadPublicKey(path string) (*rsa.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("crypt: load public key: %w", err)
	}
	k, err := ParsePublicKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("crypt: load public key %s: %w", path, err)
	}
	return k, nil
}

// WriteKeyPair generates a bits-sized key (0 selects 2048) and writes it
// like salt.crypt.gen_keys: dir/<name>.pem (PKCS#1, mode 0400) and
// dir/<name>.pub (SPKI, mode 0644). dir must exist. If dir/<name>.pem
// already exists nothing is written and the error wraps ErrKeyExists; use
// SaveKeyPair with overwrite to replace a key.
func WriteKeyPair(dir, name string, bits int) (*rsa.PrivateKey, error) {
	pemPath := filepath.Join(dir, name+".pem")
	if _, err := os.Lstat(pemPath); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrKeyExists, pemPath)
	}
	priv, err := GenerateKey(bits)
	if err != nil {
		return nil, err
	}
	if err := SaveKeyPair(dir, name, priv, false); err != nil {
		return nil, err
	}
	return priv, nil
}

// SaveKeyPair writes priv as dir/<name>.pem (mode 0400) and its public half
// as dir/<name>.pub (mode 0644). Each file is written to a temporary file in
// dir, synced and then moved into place, so readers never see a partial
// key. Without overwrite an existing private key is never replaced (checked
// atomically with a hard link where the file system allows it) and the
// error wraps ErrKeyExists; the .pub file is always replaced.
func SaveKeyPair(dir, name string, priv *rsa.PrivateKey, overwrite bool) error {
	if priv == nil || priv.N == nil {
		return fmt.Errorf("crypt: save key pair: nil key")
	}
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("crypt: save key pair: invalid key name %q", name)
	}
	pemPath := filepath.Join(dir, name+".pem")
	pubPath := filepath.Join(dir, name+".pub")
	if err := writeFileAtomic(pemPath, MarshalPrivateKeyPEM(priv), privateKeyMode, overwrite); err != nil {
		return err
	}
	return writeFileAtomic(pubPath, MarshalPublicKeyPEM(&priv.PublicKey), publicKeyMode, true)
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory (atomicfile.WriteFile). With overwrite=false an existing path is
// left alone and ErrKeyExists is returned.
func writeFileAtomic(path string, data []byte, mode fs.FileMode, overwrite bool) error {
	err := atomicfile.WriteFile(path, data, mode, !overwrite)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, atomicfile.ErrExists):
		return fmt.Errorf("%w: %s", ErrKeyExists, path)
	}
	return fmt.Errorf("crypt: %w", err)
}

package crypt

import (
	"bytes"
	"crypto/rsa"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/pyhash"
)

// DefaultFingerprintHash is Salt 3006's default hash_type for fingerprints.
const DefaultFingerprintHash = "sha256"

func newFingerHash(hashType string) (hash.Hash, error) {
	name := strings.ToLower(hashType)
	if name == "" {
		name = DefaultFingerprintHash
	}
	if h, ok := pyhash.NewCommon(name); ok {
		return h, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnsupportedHash, hashType)
}

// pyWhitespace is what Python's bytes.strip() removes.
const pyWhitespace = " \t\n\r\x0b\x0c"

// fingerText returns the bytes salt.utils.crypt.pem_finger hashes for a PEM
// file: the lines (split after each "\n", keeping it) that are not blank,
// without the first and the last one, concatenated, with "\r\n" turned into
// "\n". The base64 text is hashed, not the DER.
func fingerText(pemText []byte) []byte {
	var kept [][]byte
	rest := pemText
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		var line []byte
		if i < 0 {
			line, rest = rest, nil
		} else {
			line, rest = rest[:i+1], rest[i+1:]
		}
		if len(bytes.Trim(line, pyWhitespace)) > 0 {
			kept = append(kept, line)
		}
	}
	if len(kept) <= 2 {
		return nil
	}
	body := bytes.Join(kept[1:len(kept)-1], nil)
	return bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
}

// Fingerprint computes the Salt fingerprint (salt-key -F, key.finger,
// master_finger) of the PEM text of a key file, exactly like
// salt.utils.crypt.pem_finger reading that file: hash the base64 body lines
// including their "\n" (see fingerText), take the lowercase hex digest and
// put ":" between every pair of characters. hashType is one of sha256 (also
// used when empty), md5, sha1, sha224, sha384, sha512; other values wrap
// ErrUnsupportedHash. Like Salt, text that is not PEM still gets a
// fingerprint (of whatever lines lie between the first and the last).
func Fingerprint(pemText []byte, hashType string) (string, error) {
	h, err := newFingerHash(hashType)
	if err != nil {
		return "", err
	}
	h.Write(fingerText(pemText))
	return colonHex(h.Sum(nil)), nil
}

// FingerprintFile reads a key file and returns its Fingerprint. Unlike Salt,
// which returns "" for a missing file, a read error is returned.
func FingerprintFile(path, hashType string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("crypt: fingerprint: %w", err)
	}
	return Fingerprint(data, hashType)
}

// PublicKeyFingerprint returns the Fingerprint of pub as
// MarshalPublicKeyPEM writes it, which equals the fingerprint of any Salt
// .pub file holding the same key.
func PublicKeyFingerprint(pub *rsa.PublicKey, hashType string) (string, error) {
	text := MarshalPublicKeyPEM(pub)
	if text == nil {
		return "", fmt.Errorf("%w: nil public key", ErrKeyFormat)
	}
	return Fingerprint(text, hashType)
}

func colonHex(sum []byte) string {
	hx := hex.EncodeToString(sum)
	var b strings.Builder
	b.Grow(len(hx) + len(hx)/2)
	for i := 0; i < len(hx); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(hx[i : i+2])
	}
	return b.String()
}

// Package pyhash returns Go hashes by the names Python's hashlib gives
// them, for the places where Salt takes a hash name (hash_type, form,
// checksum, fingerprint_hash_type). Callers apply their own Salt rules
// (lower-casing, a default for "", which names they accept) before asking.
package pyhash

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"hash"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/blake2s"
)

// New returns a fresh hash for a hashlib name: md5, sha1, sha224, sha256,
// sha384, sha512, sha3_224, sha3_256, sha3_384, sha3_512, blake2b or
// blake2s (with hashlib's default digest sizes, 64 and 32 bytes). ok is
// false for any other name; names are matched exactly.
func New(name string) (h hash.Hash, ok bool) {
	switch name {
	case "sha3_224":
		return sha3.New224(), true
	case "sha3_256":
		return sha3.New256(), true
	case "sha3_384":
		return sha3.New384(), true
	case "sha3_512":
		return sha3.New512(), true
	case "blake2b":
		h, err := blake2b.New512(nil)
		return h, err == nil
	case "blake2s":
		h, err := blake2s.New256(nil)
		return h, err == nil
	}
	return NewCommon(name)
}

// NewCommon is New for the six names salt.utils.hashutil and ssh's
// _fingerprint accept (md5, sha1, sha224, sha256, sha384, sha512); ok is
// false for the others.
func NewCommon(name string) (h hash.Hash, ok bool) {
	switch name {
	case "md5":
		return md5.New(), true
	case "sha1":
		return sha1.New(), true
	case "sha224":
		return sha256.New224(), true
	case "sha256":
		return sha256.New(), true
	case "sha384":
		return sha512.New384(), true
	case "sha512":
		return sha512.New(), true
	}
	return nil, false
}

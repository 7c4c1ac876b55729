package crypt

import (
	"crypto/rand"
	"encoding/hex"
)

// NewNonce returns a fresh request nonce in the format of Python's
// uuid.uuid4().hex: 32 lowercase hex characters of 122 random bits with the
// version (4) and RFC 4122 variant bits set. crypto/rand never fails (Go
// 1.24+ aborts the program if the system source is broken).
func NewNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}

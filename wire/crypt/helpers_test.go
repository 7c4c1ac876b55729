package crypt

import (
	"encoding/hex"
	"strings"
	"testing"
)

func hexEncode(b []byte) string { return hex.EncodeToString(b) }

// hexBytes decodes hex, ignoring spaces.
func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

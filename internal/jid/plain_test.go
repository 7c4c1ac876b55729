package jid

import "testing"

// FuzzPlainJID: the shortcut for plain jids accepts only what the full
// is_jid rules accept.
func FuzzPlainJID(f *testing.F) {
	for _, s := range []string{"20261129000000000001", "20261129000000000001_12", "2026112900000000000\u0661", "20261129000000000001_", " 2026112900000000001", "2026_1129000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if plainJID(s) && !isJID(s) {
			t.Fatalf("plainJID(%q) but not is_jid", s)
		}
		if Is(s) != isJID(s) {
			t.Fatalf("Is(%q) = %v, is_jid %v", s, Is(s), isJID(s))
		}
	})
}

// Package unixcrypt computes crypt(3) password hashes in the formats
// /etc/shadow uses: SHA-512 ($6$), SHA-256 ($5$) and MD5 ($1$), as glibc
// and libxcrypt do (Ulrich Drepper's SHA-crypt specification and
// Poul-Henning Kamp's MD5-crypt). Salt's shadow.gen_password hashes with
// Python's crypt module; this is the same function in Go.
package unixcrypt

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// ErrUnsupported is returned for a setting whose method is not
// implemented (blowfish, DES): callers report it.
var ErrUnsupported = errors.New("unixcrypt: unsupported hash method")

// Failure is what crypt(3) (libxcrypt) returns for an invalid setting.
const Failure = "*0"

const b64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Method is one hash method: its name as Python's crypt.methods spells it
// (lower case), its prefix and its salt length.
type Method struct {
	Name    string
	Ident   string
	SaltLen int
}

// Methods are the implemented methods, strongest first (Python's order).
var Methods = []Method{{"sha512", "6", 16}, {"sha256", "5", 16}, {"md5", "1", 8}}

// MethodByName returns the method called name.
func MethodByName(name string) (Method, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}

// MkSalt returns a random setting for m ("$6$" and 16 salt characters),
// like Python's crypt.mksalt.
func MkSalt(m Method) (string, error) {
	buf := make([]byte, m.SaltLen)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("unixcrypt: %w", err)
	}
	var b strings.Builder
	b.WriteString("$" + m.Ident + "$")
	for _, c := range buf {
		b.WriteByte(b64[int(c)%len(b64)])
	}
	return b.String(), nil
}

// Crypt hashes password with setting ("$6$salt", "$6$rounds=N$salt",
// "$5$...", "$1$salt"), returning the full hash string. An invalid salt
// gives Failure, as libxcrypt's crypt does.
func Crypt(password, setting string) (string, error) {
	switch {
	case strings.HasPrefix(setting, "$6$"):
		return shaCrypt(password, setting[3:], "$6$", sha512.New, sha512Perm, 64)
	case strings.HasPrefix(setting, "$5$"):
		return shaCrypt(password, setting[3:], "$5$", sha256.New, sha256Perm, 32)
	case strings.HasPrefix(setting, "$1$"):
		return md5Crypt(password, setting[3:])
	}
	return "", fmt.Errorf("%w: %q", ErrUnsupported, setting)
}

// validSalt reports whether libxcrypt accepts s as a salt: printable
// ASCII except space and "!*:;\\" (what it refuses, measured).
func validSalt(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || strings.IndexByte("!*:;\\", c) >= 0 {
			return false
		}
	}
	return true
}

// encode24 appends n characters of the 24-bit group b2 b1 b0.
func encode24(b *strings.Builder, b2, b1, b0 byte, n int) {
	w := uint(b2)<<16 | uint(b1)<<8 | uint(b0)
	for ; n > 0; n-- {
		b.WriteByte(b64[w&0x3f])
		w >>= 6
	}
}

var sha512Perm = [][3]int{{0, 21, 42}, {22, 43, 1}, {44, 2, 23}, {3, 24, 45}, {25, 46, 4}, {47, 5, 26}, {6, 27, 48}, {28, 49, 7},
	{50, 8, 29}, {9, 30, 51}, {31, 52, 10}, {53, 11, 32}, {12, 33, 54}, {34, 55, 13}, {56, 14, 35}, {15, 36, 57}, {37, 58, 16},
	{59, 17, 38}, {18, 39, 60}, {40, 61, 19}, {62, 20, 41}}

var sha256Perm = [][3]int{{0, 10, 20}, {21, 1, 11}, {12, 22, 2}, {3, 13, 23}, {24, 4, 14}, {15, 25, 5}, {6, 16, 26}, {27, 7, 17},
	{18, 28, 8}, {9, 19, 29}}

const (
	roundsDefault = 5000
	roundsMin     = 1000
	roundsMax     = 999999999
)

// repeatTo returns d repeated to n bytes.
func repeatTo(d []byte, n int) []byte {
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, d[:min(len(d), n-len(out))]...)
	}
	return out
}

func shaCrypt(password, rest, prefix string, newHash func() hash.Hash, perm [][3]int, size int) (string, error) {
	rounds, custom := roundsDefault, false
	if r, ok := strings.CutPrefix(rest, "rounds="); ok {
		num, after, found := strings.Cut(r, "$")
		n, err := strconv.ParseUint(num, 10, 64)
		// libxcrypt refuses a count out of range (glibc clamps it).
		if !found || err != nil || num == "" || num[0] == '0' || n < roundsMin || n > roundsMax {
			return Failure, nil
		}
		rounds, custom = int(n), true
		rest = after
	}
	salt, _, _ := strings.Cut(rest, "$")
	if len(salt) > 16 {
		salt = salt[:16]
	}
	if !validSalt(salt) {
		return Failure, nil
	}
	p, s := []byte(password), []byte(salt)
	h := newHash()
	h.Write(p)
	h.Write(s)
	h.Write(p)
	bSum := h.Sum(nil)
	h = newHash()
	h.Write(p)
	h.Write(s)
	cnt := len(p)
	for ; cnt > size; cnt -= size {
		h.Write(bSum)
	}
	h.Write(bSum[:cnt])
	for cnt = len(p); cnt > 0; cnt >>= 1 {
		if cnt&1 != 0 {
			h.Write(bSum)
		} else {
			h.Write(p)
		}
	}
	a := h.Sum(nil)
	h = newHash()
	for range len(p) {
		h.Write(p)
	}
	pSeq := repeatTo(h.Sum(nil), len(p))
	h = newHash()
	for range 16 + int(a[0]) {
		h.Write(s)
	}
	sSeq := repeatTo(h.Sum(nil), len(s))
	for i := range rounds {
		h = newHash()
		if i&1 != 0 {
			h.Write(pSeq)
		} else {
			h.Write(a)
		}
		if i%3 != 0 {
			h.Write(sSeq)
		}
		if i%7 != 0 {
			h.Write(pSeq)
		}
		if i&1 != 0 {
			h.Write(a)
		} else {
			h.Write(pSeq)
		}
		a = h.Sum(a[:0])
	}
	var b strings.Builder
	b.WriteString(prefix)
	if custom {
		fmt.Fprintf(&b, "rounds=%d$", rounds)
	}
	b.WriteString(salt)
	b.WriteByte('$')
	for _, t := range perm {
		encode24(&b, a[t[0]], a[t[1]], a[t[2]], 4)
	}
	if size == 64 {
		encode24(&b, 0, 0, a[63], 2)
	} else {
		encode24(&b, 0, a[31], a[30], 3)
	}
	return b.String(), nil
}

func md5Crypt(password, rest string) (string, error) {
	salt, _, _ := strings.Cut(rest, "$")
	if len(salt) > 8 {
		salt = salt[:8]
	}
	if !validSalt(salt) {
		return Failure, nil
	}
	return MD5Crypt(password, salt, "$1$"), nil
}

// MD5Crypt is Poul-Henning Kamp's MD5-based crypt with the given magic
// ("$1$", or "$apr1$" as Apache's htpasswd writes it) and salt (at most
// 8 characters are used, unchecked), returning magic+salt+"$"+hash.
func MD5Crypt(password, salt, magic string) string {
	if len(salt) > 8 {
		salt = salt[:8]
	}
	p, s := []byte(password), []byte(salt)
	h := md5.New()
	h.Write(p)
	h.Write(s)
	h.Write(p)
	alt := h.Sum(nil)
	h = md5.New()
	h.Write(p)
	h.Write([]byte(magic))
	h.Write(s)
	for n := len(p); n > 0; n -= 16 {
		h.Write(alt[:min(n, 16)])
	}
	for n := len(p); n > 0; n >>= 1 {
		if n&1 != 0 {
			h.Write([]byte{0})
		} else {
			h.Write(p[:1])
		}
	}
	fin := h.Sum(nil)
	for i := range 1000 {
		h = md5.New()
		if i&1 != 0 {
			h.Write(p)
		} else {
			h.Write(fin)
		}
		if i%3 != 0 {
			h.Write(s)
		}
		if i%7 != 0 {
			h.Write(p)
		}
		if i&1 != 0 {
			h.Write(fin)
		} else {
			h.Write(p)
		}
		fin = h.Sum(fin[:0])
	}
	var b strings.Builder
	b.WriteString(magic + salt + "$")
	for _, t := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		encode24(&b, fin[t[0]], fin[t[1]], fin[t[2]], 4)
	}
	encode24(&b, 0, 0, fin[11], 2)
	return b.String()
}

package crypt

import (
	"bytes"
	"crypto/rsa"
	"errors"
	"math/big"
	"testing"
)

func TestOAEPRoundTrip(t *testing.T) {
	priv := loadVecPriv(t, "pki/minion1/minion.pem")
	for _, n := range []int{0, 1, 76, 214} { // 214 = 256 - 2*20 - 2, the maximum
		msg := bytes.Repeat([]byte{0xA5}, n)
		ct, err := EncryptOAEP(&priv.PublicKey, msg)
		if err != nil {
			t.Fatalf("len %d: %v", n, err)
		}
		pt, err := DecryptOAEP(priv, ct)
		if err != nil || !bytes.Equal(pt, msg) {
			t.Fatalf("len %d: %v", n, err)
		}
	}
	if _, err := EncryptOAEP(&priv.PublicKey, make([]byte, 215)); err == nil {
		t.Fatal("oversized OAEP message accepted")
	}
	other := loadVecPriv(t, "pki/proxy1/minion.pem")
	ct, _ := EncryptOAEP(&priv.PublicKey, []byte("x"))
	for name, tc := range map[string]struct {
		k  *rsa.PrivateKey
		ct []byte
	}{
		"wrong key": {other, ct},
		"short":     {priv, ct[:100]},
		"empty":     {priv, nil},
		"nil key":   {nil, ct},
	} {
		if _, err := DecryptOAEP(tc.k, tc.ct); !errors.Is(err, ErrDecrypt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestSignVerify(t *testing.T) {
	priv := loadVecPriv(t, "pki/master/master.pem")
	pub := &priv.PublicKey
	msg := []byte("some publish ciphertext")
	sig, err := Sign(priv, msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(pub, msg, sig); err != nil {
		t.Fatal(err)
	}
	sig2, _ := Sign(priv, msg)
	if !bytes.Equal(sig, sig2) {
		t.Fatal("PKCS#1 v1.5 must be deterministic")
	}
	bad := bytes.Clone(sig)
	bad[5] ^= 0x10
	other := loadVecPub(t, "pki/master/minions/minion1")
	for name, tc := range map[string]struct {
		pub      *rsa.PublicKey
		msg, sig []byte
	}{
		"tampered sig": {pub, msg, bad},
		"other msg":    {pub, []byte("x"), sig},
		"wrong key":    {other, msg, sig},
		"short sig":    {pub, msg, sig[1:]},
		"nil key":      {nil, msg, sig},
	} {
		if err := Verify(tc.pub, tc.msg, tc.sig); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestX931Padding(t *testing.T) {
	for _, tc := range []struct {
		k    int
		msg  string
		want string
	}{
		{8, "salt", "6bbbba73616c74cc"},
		{7, "salt", "6bba73616c74cc"}, // j == 1: no BB byte at all
		{6, "salt", "6a73616c74cc"},
	} {
		em, err := x931Pad(tc.k, []byte(tc.msg))
		if err != nil {
			t.Fatal(err)
		}
		if got := bytesHex(em); got != tc.want {
			t.Errorf("k=%d: %s want %s", tc.k, got, tc.want)
		}
		back, err := x931Unpad(em)
		if tc.k == 7 {
			// OpenSSL cannot check the padding it makes for a k-3 byte
			// message (it requires at least one BB); neither can we.
			if !errors.Is(err, ErrX931) {
				t.Errorf("k=7 unpad: %q %v, want ErrX931 like OpenSSL", back, err)
			}
			continue
		}
		if err != nil || string(back) != tc.msg {
			t.Errorf("k=%d unpad: %q %v", tc.k, back, err)
		}
	}
	if _, err := x931Pad(5, []byte("salt")); !errors.Is(err, ErrMessageTooLong) {
		t.Fatalf("too long: %v", err)
	}
	// OpenSSL's check, including its quirks.
	for _, tc := range []struct {
		name, block string
		want        string // hex of message, or "err"
	}{
		{"6a", "6a0102cc", "0102"},
		{"6a empty", "6acc", ""},
		{"6b one pad", "6bbb ba 01 cc", "01"},
		{"6b empty message (OpenSSL rejects)", "6bbbbbbacc", "err"},
		{"6b no BB", "6bba01cc", "err"},
		{"6b no BA quirk", "6bbbbbbbcc00", ""},
		{"6b no BA bad", "6bbbbbbbbbcc", "err"},
		{"bad pad byte", "6bbbbcba01cc", "err"},
		{"bad trailer", "6bbbba01cd", "err"},
		{"bad header", "6cbbba01cc", "err"},
		{"zero block", "00000000", "err"},
		{"one byte", "6a", "err"},
	} {
		blk := hexBytes(t, tc.block)
		got, err := x931Unpad(blk)
		if tc.want == "err" {
			if !errors.Is(err, ErrX931) {
				t.Errorf("%s: got %x, %v; want error", tc.name, got, err)
			}
			continue
		}
		if err != nil || bytesHex(got) != tc.want {
			t.Errorf("%s: got %x, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}

func TestX931SignRecover(t *testing.T) {
	priv := loadVecPriv(t, "pki/proxy1/minion.pem")
	pub := &priv.PublicKey
	k := modulusBytes(pub.N)
	branches := map[string]int{}
	for i := range 24 {
		msg := bytes.Repeat([]byte{byte('a' + i)}, 1+i*10)
		sig, err := X931Sign(priv, msg)
		if err != nil {
			t.Fatal(err)
		}
		if len(sig) != k {
			t.Fatalf("sig length %d", len(sig))
		}
		s := new(big.Int).SetBytes(sig)
		if half := new(big.Int).Rsh(pub.N, 1); s.Cmp(half) > 0 {
			t.Fatalf("signature is not min(s, n-s)")
		}
		v := new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N)
		if v.Bit(0)|v.Bit(1)<<1|v.Bit(2)<<2|v.Bit(3)<<3 == 0xC {
			branches["s"]++
		} else {
			branches["n-s"]++
		}
		got, err := X931Recover(pub, sig)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("msg %d: recover %q %v", i, got, err)
		}
		again, _ := X931Sign(priv, msg)
		if !bytes.Equal(again, sig) {
			t.Fatal("X9.31 signing must be deterministic (blinding must not leak)")
		}
	}
	if branches["s"] == 0 || branches["n-s"] == 0 {
		t.Errorf("both branches expected over 24 messages: %v", branches)
	}
	// Longest message: j == 0, 6A header.
	full := bytes.Repeat([]byte{0x11}, k-2)
	sig, err := X931Sign(priv, full)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := X931Recover(pub, sig); err != nil || !bytes.Equal(got, full) {
		t.Fatalf("6A block: %v", err)
	}
	if _, err := X931Sign(priv, make([]byte, k-1)); !errors.Is(err, ErrMessageTooLong) {
		t.Fatalf("k-1 bytes: %v", err)
	}
	// OpenSSL signs, but cannot recover, empty and k-3 byte messages.
	for _, n := range []int{0, k - 3} {
		sig, err := X931Sign(priv, make([]byte, n))
		if err != nil {
			t.Fatalf("sign %d bytes: %v", n, err)
		}
		if _, err := X931Recover(pub, sig); !errors.Is(err, ErrX931) {
			t.Fatalf("recover %d bytes: %v, want ErrX931 like OpenSSL", n, err)
		}
	}
	// Leading zero bytes of a signature may be dropped, as with OpenSSL.
	tok, _ := Token(priv)
	// Leading zero bytes may be omitted: OpenSSL reads the signature as a
	// big-endian number of at most k bytes.
	trimmed := bytes.TrimLeft(tok, "\x00")
	if got, err := X931Recover(pub, trimmed); err != nil || string(got) != "salt" {
		t.Fatalf("trimmed token: %q %v", got, err)
	}
	// Errors.
	nBytes := pub.N.FillBytes(make([]byte, k))
	for name, s := range map[string][]byte{
		"too long":   append([]byte{0}, tok...),
		"equals n":   nBytes,
		"all ff":     bytes.Repeat([]byte{0xff}, k),
		"random-ish": bytes.Repeat([]byte{0x5a}, k),
		"empty":      nil,
	} {
		if _, err := X931Recover(pub, s); !errors.Is(err, ErrX931) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := VerifyToken(pub, tok); err != nil {
		t.Fatal(err)
	}
	other := loadVecPub(t, "pki/master/minions/minion1")
	if err := VerifyToken(other, tok); !errors.Is(err, ErrBadToken) {
		t.Fatalf("wrong key: %v", err)
	}
	notSalt, _ := X931Sign(priv, []byte("SALT"))
	if err := VerifyToken(pub, notSalt); !errors.Is(err, ErrBadToken) {
		t.Fatalf("wrong message: %v", err)
	}
	if _, err := X931Sign(nil, []byte("x")); err == nil {
		t.Fatal("nil key")
	}
}

func TestX931WithoutPrecomputed(t *testing.T) {
	priv := loadVecPriv(t, "pki/master/master.pem")
	want, _ := X931Sign(priv, []byte("salt"))
	bare := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: priv.D, Primes: priv.Primes}
	got, err := X931Sign(bare, []byte("salt"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("CRT without precomputed values: %v", err)
	}
	noPrimes := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: priv.D}
	got, err = X931Sign(noPrimes, []byte("salt"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("non-CRT path: %v", err)
	}
	broken := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: new(big.Int).Add(priv.D, big.NewInt(2))}
	if _, err := X931Sign(broken, []byte("salt")); err == nil {
		t.Fatal("a wrong private exponent must fail the self-check")
	}
}

func bytesHex(b []byte) string { return hexEncode(b) }

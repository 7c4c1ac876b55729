package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

const keyA = "HAHehm4Cbd9+bL/JN/8jl63zjSr4IkfqE38azCx+WnpyhvbqFBlEC+ca61x503Mto1iDR89my/o="

func mustCrypticle(t testing.TB, ks string) *Crypticle {
	t.Helper()
	c, err := NewCrypticle(ks)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGenerateKeyString(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		ks, err := GenerateKeyString()
		if err != nil {
			t.Fatal(err)
		}
		if len(ks) != KeyStringLen || !strings.HasSuffix(ks, "=") || strings.HasSuffix(ks, "==") {
			t.Fatalf("shape %q", ks)
		}
		raw, err := base64.StdEncoding.DecodeString(ks)
		if err != nil || len(raw) != KeySize {
			t.Fatalf("decode: %d %v", len(raw), err)
		}
		if seen[ks] {
			t.Fatal("repeated key string")
		}
		seen[ks] = true
		if c := mustCrypticle(t, ks); c.KeyString() != ks {
			t.Fatal("KeyString")
		}
	}
}

func TestNewCrypticleErrors(t *testing.T) {
	raw55 := base64.StdEncoding.EncodeToString(make([]byte, 55))
	raw57 := base64.StdEncoding.EncodeToString(make([]byte, 57))
	for _, ks := range []string{"", "not base64!", raw55, raw57, keyA[:75], keyA + "AAAA", "_" + keyA[1:]} {
		if _, err := NewCrypticle(ks); !errors.Is(err, ErrBadKeyString) {
			t.Errorf("%q: %v", ks, err)
		}
	}
}

func TestCrypticleRoundTrip(t *testing.T) {
	c := mustCrypticle(t, keyA)
	for n := 0; n <= 40; n++ {
		pt := bytes.Repeat([]byte{byte(n)}, n)
		blob, err := c.Encrypt(pt)
		if err != nil {
			t.Fatal(err)
		}
		wantLen := IVSize + (n/16+1)*16 + MACSize
		if len(blob) != wantLen {
			t.Fatalf("len(%d) blob %d, want %d", n, len(blob), wantLen)
		}
		got, err := c.Decrypt(blob)
		if err != nil || !bytes.Equal(got, pt) {
			t.Fatalf("len %d: %x %v", n, got, err)
		}
	}
	a, _ := c.Encrypt([]byte("same"))
	b, _ := c.Encrypt([]byte("same"))
	if bytes.Equal(a, b) {
		t.Fatal("random IVs expected")
	}
	if _, err := c.EncryptWithIV(nil, make([]byte, 15)); !errors.Is(err, ErrBadIV) {
		t.Fatalf("short IV: %v", err)
	}
}

func TestSealOpen(t *testing.T) {
	c := mustCrypticle(t, keyA)
	nonce := NewNonce()
	payload := []byte{0x81, 0xa1, 'x', 0x01}
	for _, tc := range []struct {
		name      string
		seal, exp string
		err       error
	}{
		{"no nonce", "", "", nil},
		{"nonce", nonce, nonce, nil},
		{"nonce expected but absent", "", nonce, ErrNonceMismatch},
		{"other nonce", NewNonce(), nonce, ErrNonceMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blob, err := c.Seal(payload, tc.seal)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Open(blob, tc.exp)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, payload) {
				t.Fatalf("Open %x %v", got, err)
			}
		})
	}
	// Sealed with a nonce, opened without expecting one: the nonce stays in
	// front of the payload, as in Salt.
	blob, _ := c.Seal(payload, nonce)
	got, err := c.Open(blob, "")
	if err != nil || string(got) != nonce+string(payload) {
		t.Fatalf("open without nonce: %q %v", got, err)
	}
	if _, err := c.Seal(payload, "short"); !errors.Is(err, ErrBadNonce) {
		t.Fatalf("seal short nonce: %v", err)
	}
	if _, err := c.Open(blob, "short"); !errors.Is(err, ErrBadNonce) {
		t.Fatalf("open short nonce: %v", err)
	}
	// Payload shorter than the nonce.
	tiny, _ := c.Encrypt([]byte(PicklePrefix + "abc"))
	if _, err := c.Open(tiny, nonce); !errors.Is(err, ErrNonceMismatch) {
		t.Fatalf("tiny: %v", err)
	}
	noPickle, _ := c.Encrypt([]byte("hello"))
	if _, err := c.Open(noPickle, ""); !errors.Is(err, ErrNoPickle) {
		t.Fatalf("no pickle: %v", err)
	}
	// Fixed IV output equals Encrypt of the same plaintext.
	iv := bytes.Repeat([]byte{7}, 16)
	s1, _ := c.SealWithIV(payload, nonce, iv)
	s2, _ := c.EncryptWithIV([]byte(PicklePrefix+nonce+string(payload)), iv)
	if !bytes.Equal(s1, s2) {
		t.Fatal("SealWithIV != EncryptWithIV of the framed plaintext")
	}
	if _, err := c.SealWithIV(payload, "", iv[:3]); !errors.Is(err, ErrBadIV) {
		t.Fatalf("SealWithIV bad iv: %v", err)
	}
}

// rawBlob encrypts already-padded data and MACs it, to build blobs that
// Encrypt would never produce.
func rawBlob(c *Crypticle, iv, padded []byte) []byte {
	out := append(bytes.Clone(iv), padded...)
	if len(padded)%aes.BlockSize == 0 {
		cipher.NewCBCEncrypter(c.block, iv).CryptBlocks(out[IVSize:], padded)
	}
	return append(out, c.mac(out)...)
}

func TestDecryptErrors(t *testing.T) {
	c := mustCrypticle(t, keyA)
	other := mustCrypticle(t, "Yr1ijy7AQ1HlHMEQ/s9SqtJsQQFuxMSGL1TmC8qXgnp5a3VO3FWtq9fUt7ucfLqLsk45wyxJ97c=")
	good, _ := c.Seal(bytes.Repeat([]byte{0xc0}, 20), "") // 80 bytes
	iv := make([]byte, 16)
	block := func(last []byte) []byte {
		b := bytes.Repeat([]byte{'p'}, 16-len(last))
		return append(b, last...)
	}
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 1; return b }
	for _, tc := range []struct {
		name string
		c    *Crypticle
		blob []byte
		err  error
	}{
		{"empty", c, nil, ErrMalformed},
		{"63 bytes", c, good[:63], ErrMalformed},
		{"flipped iv", c, flip(0), ErrMACMismatch},
		{"flipped ct", c, flip(20), ErrMACMismatch},
		{"flipped mac", c, flip(len(good) - 1), ErrMACMismatch},
		{"truncated", c, good[:len(good)-1], ErrMACMismatch},
		{"wrong key", other, good, ErrMACMismatch},
		{"unaligned (valid mac)", c, rawBlob(c, iv, make([]byte, 17)), ErrMalformed},
		{"pad 0", c, rawBlob(c, iv, block([]byte{0})), ErrBadPadding},
		{"pad 17", c, rawBlob(c, iv, block([]byte{17})), ErrBadPadding},
		{"pad inconsistent", c, rawBlob(c, iv, block([]byte{2, 3, 3})), ErrBadPadding},
		{"pad 255", c, rawBlob(c, iv, block([]byte{255})), ErrBadPadding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pt, err := tc.c.Decrypt(tc.blob)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Decrypt = %x, %v; want %v", pt, err, tc.err)
			}
			if _, err := tc.c.Open(tc.blob, ""); !errors.Is(err, tc.err) {
				t.Fatalf("Open: %v; want %v", err, tc.err)
			}
		})
	}
	// A full block of padding (16 x 0x10) is valid.
	full := rawBlob(c, iv, append([]byte(PicklePrefix+"\xc0\xc0\xc0\xc0\xc0\xc0\xc0\xc0"), bytes.Repeat([]byte{16}, 16)...))
	if got, err := c.Open(full, ""); err != nil || len(got) != 8 {
		t.Fatalf("full pad block: %x %v", got, err)
	}
}

var nonceRe = regexp.MustCompile(`^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$`)

func TestNewNonce(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := NewNonce()
		if len(n) != NonceLen || !nonceRe.MatchString(n) {
			t.Fatalf("nonce %q is not uuid4().hex shaped", n)
		}
		if seen[n] {
			t.Fatal("repeated nonce")
		}
		seen[n] = true
	}
}

func TestCrypticleConcurrent(t *testing.T) {
	c := mustCrypticle(t, keyA)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				payload := []byte(fmt.Sprintf("g%d-i%d", g, i))
				nonce := NewNonce()
				blob, err := c.Seal(payload, nonce)
				if err != nil {
					errs <- err
					return
				}
				got, err := c.Open(blob, nonce)
				if err != nil || !bytes.Equal(got, payload) {
					errs <- fmt.Errorf("g%d i%d: %q %v", g, i, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

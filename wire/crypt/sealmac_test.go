package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"testing"
)

// refSeal is the Crypticle's encrypt-then-MAC done with crypto/cipher and
// crypto/hmac: msg is IV || plaintext (whole blocks); it returns
// IV || ciphertext || HMAC.
func refSeal(t testing.TB, key, msg []byte) []byte {
	t.Helper()
	blk, err := aes.NewCipher(key[:AESKeySize])
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(msg)
	cipher.NewCBCEncrypter(blk, out[:IVSize]).CryptBlocks(out[IVSize:], out[IVSize:])
	h := hmac.New(sha256.New, key[AESKeySize:])
	h.Write(out)
	return h.Sum(out)
}

// sealMACCase seals msg with encryptMAC and compares the bytes and the
// MAC with refSeal's.
func sealMACCase(t testing.TB, key, msg []byte) {
	t.Helper()
	c, err := NewCrypticle(base64.StdEncoding.EncodeToString(key))
	if err != nil {
		t.Fatal(err)
	}
	want := refSeal(t, key, msg)
	got := bytes.Clone(msg)
	got = append(got, c.encryptMAC(got)...)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("message of %d bytes: sealed differently from byte %d (one pass %v)", len(msg), i, c.sealMAC != nil && len(msg) >= sealMACMin)
	}
}

// TestSealMACMatchesStdlib checks the one-pass encrypt-then-MAC (on amd64
// with AES-NI and SHA-NI) against crypto/cipher and crypto/hmac for
// random keys and messages of every length around the pass's 64-byte
// steps and its threshold.
func TestSealMACMatchesStdlib(t *testing.T) {
	c, err := NewCrypticle(base64.StdEncoding.EncodeToString(make([]byte, KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case c.sealMAC == nil && haveSealMAC():
		t.Fatal("the CPU has AES-NI and SHA-NI but the one-pass seal is off (round keys not aligned?)")
	case c.sealMAC == nil:
		t.Log("no AES-NI and SHA-NI here: comparing the two-pass seal")
	}
	sizes := []int{IVSize, IVSize + 16, 512, sealMACMin - 16, 1 << 20, 1<<20 + 16, 3<<20 + 48}
	for n := sealMACMin; n <= sealMACMin+256; n += 16 {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		key := make([]byte, KeySize)
		msg := make([]byte, n)
		for _, b := range [][]byte{key, msg} {
			if _, err := rand.Read(b); err != nil {
				t.Fatal(err)
			}
		}
		sealMACCase(t, key, msg)
	}
}

// TestSealInPlaceOnePass checks SealInPlace end to end on large messages:
// Open gives the payload back and the blob equals Encrypt's with the same
// IV.
func TestSealInPlaceOnePass(t *testing.T) {
	key := make([]byte, KeySize)
	rand.Read(key)
	c, err := NewCrypticle(base64.StdEncoding.EncodeToString(key))
	if err != nil {
		t.Fatal(err)
	}
	r := mrand.New(mrand.NewPCG(1, 2))
	for range 50 {
		payload := make([]byte, 1000+r.IntN(200000))
		for i := range payload {
			payload[i] = byte(r.Uint32())
		}
		iv := make([]byte, IVSize)
		rand.Read(iv)
		head := SealHeadroom("")
		buf := make([]byte, head, head+len(payload)+SealOverhead)
		buf = append(buf, payload...)
		blob, err := c.SealInPlace(buf, "", iv)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := sealPlaintext(payload, "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := c.EncryptWithIV(pt, iv)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(blob, want) {
			t.Fatalf("%d-byte payload: SealInPlace and EncryptWithIV differ", len(payload))
		}
		got, err := c.Open(blob, "")
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("%d-byte payload: Open: %v", len(payload), err)
		}
	}
}

// FuzzSealMAC compares the one-pass seal with crypto/cipher and
// crypto/hmac on generated keys and messages.
func FuzzSealMAC(f *testing.F) {
	f.Add(make([]byte, KeySize), 0, uint64(1))
	f.Add(bytes.Repeat([]byte{7}, KeySize), 200, uint64(9))
	f.Fuzz(func(t *testing.T, key []byte, blocks int, seed uint64) {
		if len(key) < KeySize {
			key = append(key, make([]byte, KeySize-len(key))...)
		}
		key = key[:KeySize]
		if blocks < 0 {
			blocks = -blocks
		}
		n := IVSize + 16*(blocks%8192)
		r := mrand.New(mrand.NewPCG(seed, seed>>1))
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(r.Uint32())
		}
		sealMACCase(t, key, msg)
	})
}

// openMACCase opens the sealed blob of msg with the one-pass open (a copy
// and in place) and checks the plaintext against crypto/cipher's, then
// that a flipped bit anywhere is refused with ErrMACMismatch.
func openMACCase(t testing.TB, key, msg []byte, flip int) {
	t.Helper()
	c, err := NewCrypticle(base64.StdEncoding.EncodeToString(key))
	if err != nil {
		t.Fatal(err)
	}
	sealed := refSeal(t, key, msg)
	want := msg[IVSize:]
	for _, inPlace := range []bool{false, true} {
		blob := bytes.Clone(sealed)
		body := blob[:len(blob)-MACSize]
		pt := body[IVSize:]
		if !inPlace {
			pt = make([]byte, len(body)-IVSize)
		}
		var sum []byte
		if c.canOpenMAC(len(body)) {
			sum = c.decryptMAC(body, pt)
		} else {
			sum = c.mac(body)
			c.cbcDecrypt(body[:IVSize], pt, body[IVSize:])
		}
		if !hmac.Equal(sum, sealed[len(sealed)-MACSize:]) {
			t.Fatalf("%d bytes (in place %v, one pass %v): wrong MAC", len(msg), inPlace, c.canOpenMAC(len(body)))
		}
		if !bytes.Equal(pt, want) {
			t.Fatalf("%d bytes (in place %v, one pass %v): wrong plaintext", len(msg), inPlace, c.canOpenMAC(len(body)))
		}
		if !inPlace && !bytes.Equal(blob, sealed) {
			t.Fatalf("%d bytes: the blob changed opening into another buffer", len(msg))
		}
	}
	bad := bytes.Clone(sealed)
	i := flip % len(bad)
	if i < 0 {
		i = -i
	}
	bad[i] ^= 0x10
	keep := bytes.Clone(bad)
	if _, err := c.decrypt(bad, flip%2 == 0); err != ErrMACMismatch {
		t.Fatalf("%d bytes, bit flipped at %d: %v", len(msg), i, err)
	}
	if !bytes.Equal(bad, keep) {
		t.Fatalf("%d bytes, bit flipped at %d: the refused blob was changed (in place %v)", len(msg), i, flip%2 == 0)
	}
}

// TestOpenMACMatchesStdlib checks the one-pass open (AES-NI, SHA-NI and
// AVX) against crypto/cipher and crypto/hmac, into another buffer and in
// place, and that a flipped bit in the IV, the ciphertext (first block,
// inside the pass, the tail) or the MAC is refused.
func TestOpenMACMatchesStdlib(t *testing.T) {
	c := mustCrypticle(t, keyA)
	if !c.canOpenMAC(1 << 20) {
		t.Log("no AES-NI, SHA-NI and AVX here: comparing the two-pass open")
	}
	sizes := []int{IVSize + 16, 512, sealMACMin - 16, 1 << 20, 1<<20 + 16, 3<<20 + 48}
	for n := sealMACMin; n <= sealMACMin+256; n += 16 {
		sizes = append(sizes, n)
	}
	for k, n := range sizes {
		key := make([]byte, KeySize)
		msg := make([]byte, n)
		for _, b := range [][]byte{key, msg} {
			if _, err := rand.Read(b); err != nil {
				t.Fatal(err)
			}
		}
		for _, flip := range []int{3, 20, 100 + k, n / 2, n - 8, n + 5} {
			openMACCase(t, key, msg, flip)
		}
	}
}

// FuzzOpenMAC compares the one-pass open with crypto/cipher and
// crypto/hmac on generated keys, messages and flipped bits.
func FuzzOpenMAC(f *testing.F) {
	f.Add(make([]byte, KeySize), 70, uint64(1), 5)
	f.Add(bytes.Repeat([]byte{7}, KeySize), 300, uint64(9), 4000)
	f.Fuzz(func(t *testing.T, key []byte, blocks int, seed uint64, flip int) {
		if len(key) < KeySize {
			key = append(key, make([]byte, KeySize-len(key))...)
		}
		key = key[:KeySize]
		if blocks < 0 {
			blocks = -blocks
		}
		n := IVSize + 16*(1+blocks%8192)
		r := mrand.New(mrand.NewPCG(seed, seed>>1))
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(r.Uint32())
		}
		openMACCase(t, key, msg, flip)
	})
}

// TestSealMACGenerated checks that sealmac_amd64.s is what sealmac_gen.py
// writes (go generate), so the assembly is not edited by hand.
func TestSealMACGenerated(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to run sealmac_gen.py")
	}
	out, err := exec.Command(py, "sealmac_gen.py").Output()
	if err != nil {
		t.Fatalf("sealmac_gen.py: %v", err)
	}
	have, err := os.ReadFile("sealmac_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, have) {
		t.Fatal("sealmac_amd64.s differs from sealmac_gen.py's output: run go generate ./wire/crypt")
	}
}

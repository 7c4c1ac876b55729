package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"testing"
)

// TestCBCMatchesStdlib checks the Crypticle's CBC (the assembly loops on
// amd64 with AES-NI) against crypto/cipher for random keys, IVs and
// lengths around the eight-block groups, in place and into another buffer.
func TestCBCMatchesStdlib(t *testing.T) {
	if !haveAESNI() {
		t.Log("no AES-NI: the Crypticle uses crypto/cipher itself; comparing that")
	}
	sizes := []int{0, 16, 32, 112, 128, 144, 240, 256, 272, 1008, 1024, 4096 + 48, 1 << 20}
	for _, n := range sizes {
		for _, inPlace := range []bool{false, true} {
			key := make([]byte, KeySize)
			iv := make([]byte, IVSize)
			src := make([]byte, n)
			for _, b := range [][]byte{key, iv, src} {
				if _, err := rand.Read(b); err != nil {
					t.Fatal(err)
				}
			}
			c, err := NewCrypticle(base64.StdEncoding.EncodeToString(key))
			if err != nil {
				t.Fatal(err)
			}
			if (c.fast != nil) != haveAESNI() {
				t.Fatalf("fast path %v, AES-NI %v", c.fast != nil, haveAESNI())
			}
			blk, err := aes.NewCipher(key[:AESKeySize])
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, n)
			cipher.NewCBCEncrypter(blk, iv).CryptBlocks(want, src)
			ivCopy := bytes.Clone(iv)

			got := make([]byte, n)
			if inPlace {
				got = bytes.Clone(src)
				c.cbcEncrypt(iv, got, got)
			} else {
				c.cbcEncrypt(iv, got, src)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encrypt n=%d inPlace=%v differs from crypto/cipher", n, inPlace)
			}
			if !bytes.Equal(iv, ivCopy) {
				t.Fatalf("encrypt n=%d changed the IV", n)
			}

			var back []byte
			if inPlace {
				back = got
				c.cbcDecrypt(iv, back, back)
			} else {
				back = make([]byte, n)
				c.cbcDecrypt(iv, back, got)
			}
			if !bytes.Equal(back, src) {
				t.Fatalf("decrypt n=%d inPlace=%v does not give the plaintext back", n, inPlace)
			}
			if !bytes.Equal(iv, ivCopy) {
				t.Fatalf("decrypt n=%d changed the IV", n)
			}
		}
	}
}

// TestCBCFallbackSameBlob checks that a Crypticle without the assembly
// round keys (crypto/cipher's CBC) seals and opens the same blobs.
func TestCBCFallbackSameBlob(t *testing.T) {
	c := mustCrypticle(t, keyA)
	slow := mustCrypticle(t, keyA)
	slow.fast, slow.sealMAC = nil, nil
	iv := bytes.Repeat([]byte{7}, IVSize)
	for _, n := range []int{0, 1, 15, 16, 127, 128, 129, 5000} {
		payload := bytes.Repeat([]byte{byte(n)}, n)
		a, err := c.SealWithIV(payload, "", iv)
		if err != nil {
			t.Fatal(err)
		}
		b, err := slow.SealWithIV(payload, "", iv)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("n=%d: blobs differ", n)
		}
		for _, x := range []*Crypticle{c, slow} {
			got, err := x.Open(a, "")
			if err != nil || !bytes.Equal(got, payload) {
				t.Fatalf("n=%d: open: %v", n, err)
			}
		}
	}
}

// TestCBCOverlapFallsBack checks that buffers overlapping inexactly are
// left to crypto/cipher, which refuses them.
func TestCBCOverlapFallsBack(t *testing.T) {
	buf := make([]byte, 64)
	if exactOrNoOverlap(buf[16:], buf[:48]) || !exactOrNoOverlap(buf[:32], buf[32:]) || !exactOrNoOverlap(buf, buf) {
		t.Fatal("overlap check is wrong")
	}
}

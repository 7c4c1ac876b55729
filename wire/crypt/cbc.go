package crypt

import (
	"crypto/cipher"
	"unsafe"
)

// The Crypticle's AES-192-CBC. Go's crypto/cipher runs CBC one block per
// call on amd64 (cryptBlocksEncGeneric/DecGeneric): a function call, a
// reload of the key schedule and a separate XOR for every 16 bytes, and
// decryption one block at a time although CBC decryption has no chain.
// On amd64 with AES-NI a Crypticle keeps its own round keys and runs the
// loops in cbc_amd64.s: encryption with the 13 round keys in registers,
// decryption eight blocks at a time. Anything else uses crypto/cipher.
// Both give the same bytes (TestCBCMatchesStdlib).

// aes192Rounds is the number of AES rounds for a 24-byte key.
const aes192Rounds = 12

// cbcKeys holds the expanded AES-192 round keys in AES-NI's byte order:
// enc for AESENC, dec (the equivalent inverse cipher's) for AESDEC.
type cbcKeys struct {
	enc [aes192Rounds + 1][16]byte
	dec [aes192Rounds + 1][16]byte
}

// newCBCKeys expands a 24-byte AES key (FIPS-197 §5.2 and §5.3.5); nil
// when the key is not 24 bytes or the CPU lacks AES-NI.
func newCBCKeys(key []byte) *cbcKeys {
	if len(key) != AESKeySize || !haveAESNI() {
		return nil
	}
	const nk = AESKeySize / 4
	var w [4 * (aes192Rounds + 1)][4]byte
	for i := range nk {
		copy(w[i][:], key[4*i:])
	}
	rcon := byte(1)
	for i := nk; i < len(w); i++ {
		t := w[i-1]
		if i%nk == 0 {
			t = [4]byte{sbox(t[1]) ^ rcon, sbox(t[2]), sbox(t[3]), sbox(t[0])}
			rcon = gmul(rcon, 2)
		}
		for j := range 4 {
			w[i][j] = w[i-nk][j] ^ t[j]
		}
	}
	k := &cbcKeys{}
	for r := range aes192Rounds + 1 {
		for c := range 4 {
			copy(k.enc[r][4*c:], w[4*r+c][:])
		}
	}
	k.dec[0] = k.enc[aes192Rounds]
	k.dec[aes192Rounds] = k.enc[0]
	for r := 1; r < aes192Rounds; r++ {
		k.dec[r] = invMixColumns(k.enc[aes192Rounds-r])
	}
	return k
}

// gmul multiplies in GF(2^8) modulo x^8+x^4+x^3+x+1.
func gmul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1b
		}
		b >>= 1
	}
	return p
}

// sbox is the AES S-box: the multiplicative inverse (x^254) followed by
// the affine map.
func sbox(x byte) byte {
	inv, sq := byte(1), x
	for e := 254; e > 0; e >>= 1 {
		if e&1 != 0 {
			inv = gmul(inv, sq)
		}
		sq = gmul(sq, sq)
	}
	rotl := func(b byte, n uint) byte { return b<<n | b>>(8-n) }
	return inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ 0x63
}

// invMixColumns applies InvMixColumns to a round key (AESIMC).
func invMixColumns(k [16]byte) [16]byte {
	var o [16]byte
	for c := 0; c < 16; c += 4 {
		a0, a1, a2, a3 := k[c], k[c+1], k[c+2], k[c+3]
		o[c] = gmul(a0, 14) ^ gmul(a1, 11) ^ gmul(a2, 13) ^ gmul(a3, 9)
		o[c+1] = gmul(a0, 9) ^ gmul(a1, 14) ^ gmul(a2, 11) ^ gmul(a3, 13)
		o[c+2] = gmul(a0, 13) ^ gmul(a1, 9) ^ gmul(a2, 14) ^ gmul(a3, 11)
		o[c+3] = gmul(a0, 11) ^ gmul(a1, 13) ^ gmul(a2, 9) ^ gmul(a3, 14)
	}
	return o
}

// exactOrNoOverlap reports whether dst and src are the same memory or do
// not overlap (what the assembly loops, like crypto/cipher, require).
func exactOrNoOverlap(dst, src []byte) bool {
	if len(dst) == 0 || len(src) == 0 {
		return true
	}
	d := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	s := uintptr(unsafe.Pointer(unsafe.SliceData(src)))
	return d == s || d+uintptr(len(dst)) <= s || s+uintptr(len(src)) <= d
}

// cbcEncrypt encrypts src (whole blocks) into dst, which is src or does
// not overlap it.
func (c *Crypticle) cbcEncrypt(iv, dst, src []byte) {
	if c.fast != nil && len(iv) == IVSize && len(src)%16 == 0 && len(dst) >= len(src) && exactOrNoOverlap(dst, src) {
		if len(src) > 0 {
			cbcEncAsm(&c.fast.enc[0][0], &iv[0], &dst[0], &src[0], len(src))
		}
		return
	}
	cipher.NewCBCEncrypter(c.block, iv).CryptBlocks(dst, src)
}

// cbcDecrypt decrypts src (whole blocks) into dst, which is src or does
// not overlap it.
func (c *Crypticle) cbcDecrypt(iv, dst, src []byte) {
	if c.fast != nil && len(iv) == IVSize && len(src)%16 == 0 && len(dst) >= len(src) && exactOrNoOverlap(dst, src) {
		if len(src) > 0 {
			cbcDecAsm(&c.fast.dec[0][0], &iv[0], &dst[0], &src[0], len(src))
		}
		return
	}
	cipher.NewCBCDecrypter(c.block, iv).CryptBlocks(dst, src)
}

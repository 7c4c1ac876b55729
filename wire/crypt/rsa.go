package crypt

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"fmt"
	"math/big"
)

// tokenMessage is the message a minion X9.31-signs to make its tok.
var tokenMessage = []byte("salt")

// EncryptOAEP encrypts msg to pub with RSAES-OAEP, SHA-1, MGF1-SHA-1 and an
// empty label, as Salt does for the auth "aes" and "token" fields and the
// send_private "key". The output is randomized.
func EncryptOAEP(pub *rsa.PublicKey, msg []byte) ([]byte, error) {
	if pub == nil || pub.N == nil {
		return nil, fmt.Errorf("crypt: oaep encrypt: %w: nil key", ErrKeyFormat)
	}
	ct, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, msg, nil)
	if err != nil {
		return nil, fmt.Errorf("crypt: oaep encrypt: %w", err)
	}
	return ct, nil
}

// DecryptOAEP decrypts an RSAES-OAEP (SHA-1, MGF1-SHA-1, empty label)
// ciphertext. Failures wrap ErrDecrypt (and the crypto/rsa error). The
// private operation is libcrypto's or crypto/rsa's constant-time one (see
// backend); both give the same result.
func DecryptOAEP(priv *rsa.PrivateKey, ct []byte) ([]byte, error) {
	if priv == nil || priv.N == nil {
		return nil, fmt.Errorf("%w: nil key", ErrDecrypt)
	}
	pt, err := backend().decryptOAEP(priv, ct)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDecrypt, err)
	}
	return pt, nil
}

// Sign returns the RSASSA-PKCS1-v1_5 signature with SHA-1 of msg, Salt's
// sign_message (signed clear replies, publish sig, pillar signed_msg,
// pub_sig). It is deterministic: libcrypto and crypto/rsa (see backend)
// give the same bytes.
func Sign(priv *rsa.PrivateKey, msg []byte) ([]byte, error) {
	if priv == nil || priv.N == nil {
		return nil, fmt.Errorf("crypt: sign: %w: nil key", ErrKeyFormat)
	}
	h := sha1.Sum(msg)
	sig, err := backend().signSHA1(priv, h[:])
	if err != nil {
		return nil, fmt.Errorf("crypt: sign: %w", err)
	}
	return sig, nil
}

// Verify checks an RSASSA-PKCS1-v1_5 SHA-1 signature of msg (Salt's
// verify_signature). A signature that does not verify wraps
// ErrBadSignature.
func Verify(pub *rsa.PublicKey, msg, sig []byte) error {
	if pub == nil || pub.N == nil {
		return fmt.Errorf("%w: nil key", ErrBadSignature)
	}
	h := sha1.Sum(msg)
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA1, h[:], sig); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	return nil
}

// x931Pad builds OpenSSL's RSA_padding_add_X931 block of k bytes:
// 6A || msg || CC when msg fills it, else 6B || BB*(j-1) || BA || msg || CC.
func x931Pad(k int, msg []byte) ([]byte, error) {
	j := k - len(msg) - 2
	if j < 0 {
		return nil, fmt.Errorf("%w: %d bytes for a %d-byte modulus", ErrMessageTooLong, len(msg), k)
	}
	em := make([]byte, k)
	if j == 0 {
		em[0] = 0x6A
	} else {
		em[0] = 0x6B
		for i := 1; i < j; i++ {
			em[i] = 0xBB
		}
		em[j] = 0xBA
	}
	copy(em[j+1:], msg)
	em[k-1] = 0xCC
	return em, nil
}

// x931Unpad is OpenSSL's RSA_padding_check_X931 on a k-byte block,
// including its quirks (checked against libcrypto 3.0): at least one BB
// byte is required after 6B (so the block made for a k-3 byte message is
// rejected), and a 6B block whose padding runs to the end without a BA
// byte is accepted when block[k-2] is CC, yielding an empty message.
func x931Unpad(block []byte) ([]byte, error) {
	n := len(block)
	if n < 2 || (block[0] != 0x6A && block[0] != 0x6B) {
		return nil, fmt.Errorf("%w: invalid header", ErrX931)
	}
	p := 1
	var j int
	if block[0] == 0x6B {
		j = n - 3
		i := 0
		for ; i < j; i++ {
			c := block[p]
			p++
			if c == 0xBA {
				break
			}
			if c != 0xBB {
				return nil, fmt.Errorf("%w: invalid padding", ErrX931)
			}
		}
		if i == 0 {
			return nil, fmt.Errorf("%w: invalid padding", ErrX931)
		}
		j -= i
	} else {
		j = n - 2
	}
	if block[p+j] != 0xCC {
		return nil, fmt.Errorf("%w: invalid trailer", ErrX931)
	}
	return bytes.Clone(block[p : p+j]), nil
}

func modulusBytes(n *big.Int) int { return (n.BitLen() + 7) / 8 }

// crtValues returns priv's CRT exponents and coefficient (two primes):
// the precomputed ones, else computed; qinv is nil when the primes are not
// coprime.
func crtValues(priv *rsa.PrivateKey) (dp, dq, qinv *big.Int) {
	dp, dq, qinv = priv.Precomputed.Dp, priv.Precomputed.Dq, priv.Precomputed.Qinv
	if dp == nil || dq == nil || qinv == nil {
		p, q := priv.Primes[0], priv.Primes[1]
		one := big.NewInt(1)
		dp = new(big.Int).Mod(priv.D, new(big.Int).Sub(p, one))
		dq = new(big.Int).Mod(priv.D, new(big.Int).Sub(q, one))
		qinv = new(big.Int).ModInverse(q, p)
	}
	return dp, dq, qinv
}

// rawPrivate computes c^d mod n with CRT when two primes are known.
//
// math/big is not constant-time, so the input is blinded with a random
// r^e (the exponentiation then runs on a value unknown to an observer) and
// the result is checked against the public key to catch CRT faults before
// anything is released.
func rawPrivate(priv *rsa.PrivateKey, c *big.Int) (*big.Int, error) {
	n := priv.N
	e := big.NewInt(int64(priv.E))
	var r, rInv *big.Int
	for {
		var err error
		r, err = rand.Int(rand.Reader, n)
		if err != nil {
			return nil, fmt.Errorf("crypt: blinding: %w", err)
		}
		if r.Sign() == 0 {
			continue
		}
		rInv = new(big.Int).ModInverse(r, n)
		if rInv != nil {
			break
		}
	}
	cb := new(big.Int).Exp(r, e, n)
	cb.Mul(cb, c).Mod(cb, n)

	var m *big.Int
	if len(priv.Primes) == 2 && priv.Primes[0] != nil && priv.Primes[1] != nil {
		p, q := priv.Primes[0], priv.Primes[1]
		dp, dq, qinv := crtValues(priv)
		if qinv == nil {
			return nil, fmt.Errorf("crypt: private key: %w: primes not coprime", ErrKeyFormat)
		}
		m1 := new(big.Int).Exp(cb, dp, p)
		m2 := new(big.Int).Exp(cb, dq, q)
		h := m1.Sub(m1, m2)
		h.Mul(h, qinv).Mod(h, p)
		m = h.Mul(h, q).Add(h, m2)
	} else {
		m = new(big.Int).Exp(cb, priv.D, n)
	}
	m.Mul(m, rInv).Mod(m, n)

	if new(big.Int).Exp(m, e, n).Cmp(c) != 0 {
		return nil, fmt.Errorf("crypt: RSA private operation failed its self-check: %w", ErrKeyFormat)
	}
	return m, nil
}

// X931Sign is OpenSSL's RSA_private_encrypt with RSA_X931_PADDING, Salt's
// private_encrypt (the auth reply "sig" over the hex digest and the minion
// "tok" over "salt"): pad msg as X9.31, compute s = block^d mod n and output
// min(s, n-s) as exactly k bytes (k = modulus length). The result is
// deterministic. A msg longer than k-2 bytes wraps ErrMessageTooLong.
func X931Sign(priv *rsa.PrivateKey, msg []byte) ([]byte, error) {
	if priv == nil || priv.N == nil || priv.D == nil || priv.N.Sign() <= 0 {
		return nil, fmt.Errorf("crypt: x931 sign: %w: nil key", ErrKeyFormat)
	}
	k := modulusBytes(priv.N)
	em, err := x931Pad(k, msg)
	if err != nil {
		return nil, err
	}
	if new(big.Int).SetBytes(em).Cmp(priv.N) >= 0 {
		return nil, fmt.Errorf("%w: padded block not below the modulus", ErrMessageTooLong)
	}
	raw, err := backend().raw(priv, em)
	if err != nil {
		return nil, err
	}
	s := new(big.Int).SetBytes(raw)
	if t := new(big.Int).Sub(priv.N, s); s.Cmp(t) > 0 {
		s = t
	}
	return s.FillBytes(make([]byte, k)), nil
}

// X931Recover is OpenSSL's RSA_public_decrypt with RSA_X931_PADDING, Salt's
// public_decrypt: m = sig^e mod n, replaced by n-m unless its low nibble is
// 0xC, then the X9.31 padding is checked and the message returned.
// Signatures longer than the modulus, not below it, or with bad padding
// wrap ErrX931. Shorter signatures are read as big-endian numbers, as
// OpenSSL does. OpenSSL's padding check (mirrored here) cannot recover the
// empty message nor a k-3 byte one, although X931Sign produces them; Salt
// only uses 4-byte ("salt") and 64-byte messages.
func X931Recover(pub *rsa.PublicKey, sig []byte) ([]byte, error) {
	if pub == nil || pub.N == nil || pub.N.Sign() <= 0 || pub.E <= 0 {
		return nil, fmt.Errorf("%w: nil key", ErrX931)
	}
	if pub.N.BitLen() > MaxKeyBits {
		return nil, fmt.Errorf("%w: modulus too large", ErrX931)
	}
	k := modulusBytes(pub.N)
	if len(sig) > k {
		return nil, fmt.Errorf("%w: signature longer than the modulus", ErrX931)
	}
	f := new(big.Int).SetBytes(sig)
	if f.Cmp(pub.N) >= 0 {
		return nil, fmt.Errorf("%w: signature not below the modulus", ErrX931)
	}
	m := new(big.Int).Exp(f, big.NewInt(int64(pub.E)), pub.N)
	nibble := m.Bit(0) | m.Bit(1)<<1 | m.Bit(2)<<2 | m.Bit(3)<<3
	if nibble != 0xC {
		m.Sub(pub.N, m)
	}
	return x931Unpad(m.FillBytes(make([]byte, k)))
}

// Token returns the minion's request "tok": X931Sign(priv, "salt"). It is
// constant for a given key.
func Token(priv *rsa.PrivateKey) ([]byte, error) {
	return X931Sign(priv, tokenMessage)
}

// VerifyToken checks a "tok" the way the master's AESFuncs does: it must
// X9.31-recover to exactly "salt" with the minion's accepted public key.
// Failures wrap ErrBadToken.
func VerifyToken(pub *rsa.PublicKey, tok []byte) error {
	m, err := X931Recover(pub, tok)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadToken, err)
	}
	if !bytes.Equal(m, tokenMessage) {
		return ErrBadToken
	}
	return nil
}

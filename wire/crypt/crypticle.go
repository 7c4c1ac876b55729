package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"sync"
)

// Crypticle sizes (SALT-WIRE §3.3).
const (
	// AESKeySize is the AES key length inside a Crypticle key (AES-192).
	AESKeySize = 24
	// HMACKeySize is the HMAC-SHA256 key length inside a Crypticle key.
	HMACKeySize = 32
	// KeySize is the decoded length of a Crypticle key string.
	KeySize = AESKeySize + HMACKeySize
	// KeyStringLen is the length of a Crypticle key string (base64 of 56 bytes).
	KeyStringLen = 76
	// IVSize is the AES-CBC IV length at the front of a blob.
	IVSize = aes.BlockSize
	// MACSize is the HMAC-SHA256 length at the end of a blob.
	MACSize = sha256.Size
	// MinBlobSize is the smallest valid blob: IV, one block, HMAC.
	MinBlobSize = IVSize + aes.BlockSize + MACSize
	// NonceLen is the length of a request nonce (uuid4().hex).
	NonceLen = 32
)

// PicklePrefix starts every Crypticle.dumps plaintext.
const PicklePrefix = "pickle::"

// GenerateKeyString returns a fresh Crypticle key string: standard base64
// (with padding) of 56 random bytes, 76 ASCII characters, like
// Crypticle.generate_key_string. It is also what a minion uses as its
// auth "token".
func GenerateKeyString() (string, error) {
	var raw [KeySize]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("crypt: generate key string: %w", err)
	}
	return base64.StdEncoding.EncodeToString(raw[:]), nil
}

// Crypticle is Salt's symmetric message format: AES-192-CBC with PKCS#7
// padding and a random IV, authenticated by HMAC-SHA256 over IV and
// ciphertext (encrypt-then-MAC). Blob layout: IV(16) || ciphertext || MAC(32).
//
// A Crypticle is immutable after NewCrypticle and safe for concurrent use.
// The publish "serial" replay check of Salt's Crypticle.loads is not done
// here; it needs the decoded msgpack map and belongs to the caller.
type Crypticle struct {
	keyString string
	block     cipher.Block
	hmacKey   [HMACKeySize]byte
	// macs holds keyed HMAC-SHA256 states for reuse (Reset), so a message
	// does not allocate and key a new one.
	macs sync.Pool
	// fast holds the round keys of the assembly CBC loops (cbc.go); nil
	// where crypto/cipher does the CBC.
	fast *cbcKeys
	// sealMAC keys the one-pass encrypt-then-MAC (sealmac.go); nil where
	// it cannot run.
	sealMAC *sealMACState
	// openMAC says the one-pass open may run too (it needs AVX).
	openMAC bool
}

// NewCrypticle builds a Crypticle from a key string. The string must be
// standard base64 of exactly 56 bytes (first 24: AES key, last 32: HMAC
// key); anything else wraps ErrBadKeyString.
func NewCrypticle(keyString string) (*Crypticle, error) {
	raw, err := base64.StdEncoding.DecodeString(keyString)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKeyString, err)
	}
	if len(raw) != KeySize {
		return nil, fmt.Errorf("%w: decoded length %d, want %d", ErrBadKeyString, len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw[:AESKeySize])
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadKeyString, err)
	}
	c := &Crypticle{keyString: keyString, block: block, fast: newCBCKeys(raw[:AESKeySize])}
	copy(c.hmacKey[:], raw[AESKeySize:])
	if c.fast != nil && c.fast.aligned() {
		c.sealMAC = newSealMACState(c.hmacKey[:])
		c.openMAC = c.sealMAC != nil && haveOpenMAC()
	}
	clear(raw)
	return c, nil
}

// KeyString returns the key string the Crypticle was built from, unchanged
// (it is what Salt RSA-encrypts and hashes for the auth reply sig).
func (c *Crypticle) KeyString() string { return c.keyString }

func (c *Crypticle) mac(data []byte) []byte {
	m, _ := c.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, c.hmacKey[:])
	} else {
		m.Reset()
	}
	m.Write(data)
	sum := m.Sum(nil)
	c.macs.Put(m)
	return sum
}

// Encrypt returns IV || AES-192-CBC(PKCS#7(plaintext)) || HMAC with a fresh
// random IV (Crypticle.encrypt).
func (c *Crypticle) Encrypt(plaintext []byte) ([]byte, error) {
	var iv [IVSize]byte
	if _, err := rand.Read(iv[:]); err != nil {
		return nil, fmt.Errorf("crypt: crypticle IV: %w", err)
	}
	return c.EncryptWithIV(plaintext, iv[:])
}

// EncryptWithIV is Encrypt with a caller-chosen 16-byte IV. It exists for
// deterministic tests and golden vectors; never reuse an IV in production.
func (c *Crypticle) EncryptWithIV(plaintext, iv []byte) ([]byte, error) {
	if len(iv) != IVSize {
		return nil, fmt.Errorf("%w: got %d", ErrBadIV, len(iv))
	}
	pad := aes.BlockSize - len(plaintext)%aes.BlockSize
	out := make([]byte, IVSize+len(plaintext)+pad, IVSize+len(plaintext)+pad+MACSize)
	copy(out, iv)
	body := out[IVSize:]
	copy(body, plaintext)
	for i := len(plaintext); i < len(body); i++ {
		body[i] = byte(pad)
	}
	return append(out, c.encryptMAC(out)...), nil
}

// Decrypt reverses Encrypt (Crypticle.decrypt). Blobs shorter than
// MinBlobSize wrap ErrMalformed; then the HMAC is checked in constant time
// (ErrMACMismatch) before anything else is looked at; a ciphertext that is
// not a whole number of blocks wraps ErrMalformed.
//
// Difference from Salt: Salt strips plaintext[-1] bytes without looking at
// them (so a bad pad byte silently truncates, and a 0 pad byte empties the
// plaintext). Decrypt requires proper PKCS#7 padding (1..16 bytes, all of
// the same value) and returns ErrBadPadding otherwise. Because the HMAC is
// verified first, only a holder of the key can produce such a blob, and no
// padding oracle is exposed; the padding check need not be constant-time.
func (c *Crypticle) Decrypt(blob []byte) ([]byte, error) { return c.decrypt(blob, false) }

// decrypt is Decrypt; inPlace decrypts into blob's own memory.
func (c *Crypticle) decrypt(blob []byte, inPlace bool) ([]byte, error) {
	if len(blob) < MinBlobSize {
		return nil, fmt.Errorf("%w: %d bytes, need at least %d", ErrMalformed, len(blob), MinBlobSize)
	}
	body, mac := blob[:len(blob)-MACSize], blob[len(blob)-MACSize:]
	iv, ct := body[:IVSize], body[IVSize:]
	pt := ct
	if c.canOpenMAC(len(body)) {
		// The HMAC and the decryption in one pass: the plaintext is
		// only looked at once the HMAC has matched. In place, a blob
		// that fails is encrypted back (CBC with its own IV gives the
		// same ciphertext), so it is left as it was.
		if !inPlace {
			pt = make([]byte, len(ct))
		}
		if !hmac.Equal(c.decryptMAC(body, pt), mac) {
			if inPlace {
				c.cbcEncrypt(iv, ct, ct)
			}
			return nil, ErrMACMismatch
		}
	} else {
		if !hmac.Equal(c.mac(body), mac) {
			return nil, ErrMACMismatch
		}
		if len(ct)%aes.BlockSize != 0 {
			return nil, fmt.Errorf("%w: ciphertext of %d bytes is not block aligned", ErrMalformed, len(ct))
		}
		if !inPlace {
			pt = make([]byte, len(ct))
		}
		c.cbcDecrypt(iv, pt, ct)
	}
	pad := int(pt[len(pt)-1])
	if pad < 1 || pad > aes.BlockSize {
		return nil, fmt.Errorf("%w: pad byte %d", ErrBadPadding, pad)
	}
	for _, b := range pt[len(pt)-pad:] {
		if int(b) != pad {
			return nil, fmt.Errorf("%w: inconsistent pad bytes", ErrBadPadding)
		}
	}
	return pt[:len(pt)-pad], nil
}

// sealPlaintext builds "pickle::" + nonce + payload.
func sealPlaintext(payload []byte, nonce string) ([]byte, error) {
	if nonce != "" && len(nonce) != NonceLen {
		return nil, fmt.Errorf("%w: got %d", ErrBadNonce, len(nonce))
	}
	pt := make([]byte, 0, len(PicklePrefix)+len(nonce)+len(payload))
	pt = append(pt, PicklePrefix...)
	pt = append(pt, nonce...)
	return append(pt, payload...), nil
}

// Seal encrypts "pickle::" + nonce + msgpackPayload (Crypticle.dumps; the
// caller has already serialized the object). nonce is "" for publishes,
// requests and pillar data, or the 32-character request nonce for replies;
// other lengths wrap ErrBadNonce.
func (c *Crypticle) Seal(msgpackPayload []byte, nonce string) ([]byte, error) {
	pt, err := sealPlaintext(msgpackPayload, nonce)
	if err != nil {
		return nil, err
	}
	return c.Encrypt(pt)
}

// SealWithIV is Seal with a fixed IV, for deterministic tests.
func (c *Crypticle) SealWithIV(msgpackPayload []byte, nonce string, iv []byte) ([]byte, error) {
	pt, err := sealPlaintext(msgpackPayload, nonce)
	if err != nil {
		return nil, err
	}
	return c.EncryptWithIV(pt, iv)
}

// SealHeadroom is how many bytes SealInPlace needs in front of the
// payload: the IV, "pickle::" and the nonce.
func SealHeadroom(nonce string) int { return IVSize + len(PicklePrefix) + len(nonce) }

// SealInPlace is Seal without copying the payload: buf holds
// SealHeadroom(nonce) bytes of room followed by the msgpack payload. It
// writes the IV (random when iv is nil), "pickle::" and the nonce into
// the room, pads and encrypts in place and appends the HMAC, and returns
// the blob (buf's array when its capacity holds the padding and the MAC:
// SealOverhead bytes past the payload). The blob is byte for byte what
// Seal returns for the same IV.
func (c *Crypticle) SealInPlace(buf []byte, nonce string, iv []byte) ([]byte, error) {
	if nonce != "" && len(nonce) != NonceLen {
		return nil, fmt.Errorf("%w: got %d", ErrBadNonce, len(nonce))
	}
	head := SealHeadroom(nonce)
	if len(buf) < head {
		return nil, fmt.Errorf("%w: %d bytes of room, need %d", ErrMalformed, len(buf), head)
	}
	if iv == nil {
		if _, err := rand.Read(buf[:IVSize]); err != nil {
			return nil, fmt.Errorf("crypt: crypticle IV: %w", err)
		}
	} else {
		if len(iv) != IVSize {
			return nil, fmt.Errorf("%w: got %d", ErrBadIV, len(iv))
		}
		copy(buf, iv)
	}
	copy(buf[IVSize:], PicklePrefix)
	copy(buf[IVSize+len(PicklePrefix):], nonce)
	pad := aes.BlockSize - (len(buf)-IVSize)%aes.BlockSize
	for range pad {
		buf = append(buf, byte(pad))
	}
	return append(buf, c.encryptMAC(buf)...), nil
}

// SealOverhead is the most SealInPlace appends to a buffer: a block of
// padding and the MAC.
const SealOverhead = aes.BlockSize + MACSize

// Open decrypts blob (Crypticle.loads up to, not including, msgpack
// decoding) and returns the payload bytes after "pickle::" and, when nonce
// is not "", after the 32-character nonce, which must equal nonce
// (ErrNonceMismatch; a nonce argument of another length wraps ErrBadNonce).
// A plaintext without the "pickle::" prefix returns ErrNoPickle: Salt
// silently yields {} there, the caller decides. Decrypt errors are passed
// through.
func (c *Crypticle) Open(blob []byte, nonce string) ([]byte, error) {
	return c.open(blob, nonce, false)
}

// OpenInPlace is Open decrypting into blob's memory: the payload it
// returns is part of blob, whose bytes are overwritten (a blob with a bad
// MAC is left as it was: the one-pass open decrypts while it checks the
// MAC and then encrypts it back). For callers that own the received frame
// and drop it afterwards.
func (c *Crypticle) OpenInPlace(blob []byte, nonce string) ([]byte, error) {
	return c.open(blob, nonce, true)
}

func (c *Crypticle) open(blob []byte, nonce string, inPlace bool) ([]byte, error) {
	if nonce != "" && len(nonce) != NonceLen {
		return nil, fmt.Errorf("%w: got %d", ErrBadNonce, len(nonce))
	}
	pt, err := c.decrypt(blob, inPlace)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(pt, []byte(PicklePrefix)) {
		return nil, ErrNoPickle
	}
	pt = pt[len(PicklePrefix):]
	if nonce != "" {
		if len(pt) < NonceLen || !hmac.Equal(pt[:NonceLen], []byte(nonce)) {
			return nil, ErrNonceMismatch
		}
		pt = pt[NonceLen:]
	}
	return pt, nil
}

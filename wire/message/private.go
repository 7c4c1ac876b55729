package message

import (
	"bytes"
	"crypto/rsa"
	"errors"
	"fmt"
	"sync"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// EncodePrivateReply builds the `send_private` reply used for _pillar
// (SALT-WIRE §8.1): a fresh key K is OAEP-encrypted to the minion's key,
// and the payload travels as Crypticle(K)({data, sig}) where data =
// msgpack({key, pillar, nonce}) signed by the master. With an empty nonce
// (a v1 request) the payload is sent unsigned.
func EncodePrivateReply(masterPriv *rsa.PrivateKey, minionPub *rsa.PublicKey, ret any, nonce string) ([]byte, error) {
	keyStr, err := crypt.GenerateKeyString()
	if err != nil {
		return nil, err
	}
	c, err := crypt.NewCrypticle(keyStr)
	if err != nil {
		return nil, err
	}
	encKey, err := crypt.EncryptOAEP(minionPub, []byte(keyStr))
	if err != nil {
		return nil, err
	}
	var inner any = ret
	if nonce != "" {
		data, err := payload.Marshal(payload.NewMap("key", encKey, "pillar", ret, "nonce", nonce))
		if err != nil {
			return nil, err
		}
		sig, err := crypt.Sign(masterPriv, data)
		if err != nil {
			return nil, err
		}
		inner = payload.NewMap("data", data, "sig", sig)
	}
	plain, err := payload.Marshal(inner)
	if err != nil {
		return nil, err
	}
	blob, err := c.Seal(plain, "")
	if err != nil {
		return nil, err
	}
	return payload.Marshal(payload.NewMap("key", encKey, "pillar", blob))
}

// ErrPrivateReply is wrapped by OpenPrivateReply for every check of the
// minion side that fails; a reply without "key" (the master could not
// decrypt the request) also wraps ErrDecrypt, meaning "re-auth and retry".
var ErrPrivateReply = errors.New("message: bad send_private reply")

// OpenPrivateReply runs the six checks a 3006 minion makes on a pillar
// reply and returns the pillar value.
func OpenPrivateReply(minionPriv *rsa.PrivateKey, masterPub *rsa.PublicKey, frame []byte, nonce string, lim payload.Limits) (any, error) {
	v, err := payload.UnmarshalLimits(frame, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	m, ok := v.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: %w: reply is %s", ErrPrivateReply, ErrDecrypt, payload.TypeName(v))
	}
	if e := m.Str("error"); e != "" {
		return nil, fmt.Errorf("%w: master says %q", ErrPrivateReply, e)
	}
	encKey := m.Bytes("key")
	if encKey == nil {
		return nil, fmt.Errorf("%w: %w: no key", ErrPrivateReply, ErrDecrypt)
	}
	keyStr, err := crypt.DecryptOAEP(minionPriv, encKey)
	if err != nil {
		return nil, fmt.Errorf("%w: key: %w", ErrPrivateReply, err)
	}
	c, err := crypt.NewCrypticle(string(keyStr))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPrivateReply, err)
	}
	plain, err := c.Open(m.Bytes("pillar"), "")
	if err != nil {
		return nil, fmt.Errorf("%w: pillar: %w", ErrPrivateReply, err)
	}
	inner, err := payload.UnmarshalLimits(plain, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	if nonce == "" {
		return inner, nil
	}
	signed, ok := inner.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: signed part is %s", ErrPrivateReply, payload.TypeName(inner))
	}
	data := signed.Bytes("data")
	if err := crypt.Verify(masterPub, data, signed.Bytes("sig")); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	dm, err := payload.UnmarshalLimits(data, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	d, ok := dm.(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: data is %s", ErrPrivateReply, payload.TypeName(dm))
	}
	if !bytes.Equal(d.Bytes("key"), encKey) {
		return nil, fmt.Errorf("%w: key in signed data differs", ErrPrivateReply)
	}
	if d.Str("nonce") != nonce {
		return nil, ErrNonceMismatch
	}
	p, _ := d.Get("pillar")
	return p, nil
}

// EncodePublish builds a publish frame body: {enc: aes, load:
// Crypticle(load + serial), sig}. The serial is appended to a copy of load
// (the caller's map is not changed). With priv == nil no sig is added
// (master option sign_pub_messages: False).
func EncodePublish(c *crypt.Crypticle, priv *rsa.PrivateKey, load *payload.Map, serial int64) ([]byte, error) {
	return EncodePublishWithIV(c, priv, load, serial, nil)
}

// EncodePublishWithIV is EncodePublish with a fixed IV (nil: random), for
// golden tests.
func EncodePublishWithIV(c *crypt.Crypticle, priv *rsa.PrivateKey, load *payload.Map, serial int64, iv []byte) ([]byte, error) {
	l := load.Clone()
	l.Set("serial", serial)
	plain, err := payload.Marshal(l)
	if err != nil {
		return nil, err
	}
	blob, err := seal(c, plain, "", iv)
	if err != nil {
		return nil, err
	}
	env := payload.NewMap("enc", EncAES, "load", blob)
	if priv != nil {
		sig, err := crypt.Sign(priv, blob)
		if err != nil {
			return nil, err
		}
		env.Set("sig", sig)
	}
	return payload.Marshal(env)
}

// OpenPublish decodes a publish frame body. When pub is non-nil the sig must
// verify (a minion with sign_pub_messages: True). It returns the load with
// "serial" removed, and the serial (0 when absent). Decryption failures wrap
// ErrDecrypt: the minion re-authenticates and tries the same frame again.
func OpenPublish(c *crypt.Crypticle, pub *rsa.PublicKey, frame []byte, lim payload.Limits) (*payload.Map, int64, error) {
	if pub == nil {
		return OpenPublishWith(c, nil, frame, lim)
	}
	return OpenPublishWith(c, func(blob, sig []byte) error { return crypt.Verify(pub, blob, sig) }, frame, lim)
}

// OpenPublishWith is OpenPublish with the signature check done by verify
// (called with the encrypted load and the envelope's sig; nil skips the
// check), for callers that share checks between identities.
func OpenPublishWith(c *crypt.Crypticle, verify func(blob, sig []byte) error, frame []byte, lim payload.Limits) (*payload.Map, int64, error) {
	v, err := payload.UnmarshalLimits(frame, lim)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	env, ok := v.(*payload.Map)
	if !ok {
		return nil, 0, ErrNotMap
	}
	if env.Str("enc") != EncAES {
		return nil, 0, fmt.Errorf("%w: publish enc %q", ErrBadEnc, env.Str("enc"))
	}
	blob := env.Bytes("load")
	if blob == nil {
		return nil, 0, fmt.Errorf("%w: load", ErrMissingField)
	}
	if verify != nil {
		if err := verify(blob, env.Bytes("sig")); err != nil {
			return nil, 0, fmt.Errorf("%w: %w", ErrBadSignature, err)
		}
	}
	plain, err := c.Open(blob, "")
	switch {
	case errors.Is(err, crypt.ErrNoPickle):
		return nil, 0, ErrEmpty
	case err != nil:
		return nil, 0, fmt.Errorf("%w: %w", ErrDecrypt, err)
	}
	lv, err := payload.UnmarshalLimits(plain, lim)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	load, ok := lv.(*payload.Map)
	if !ok {
		return nil, 0, ErrLoadNotMap
	}
	var serial int64
	if sv, ok := load.Delete("serial"); ok {
		serial, _ = payload.AsInt(sv)
	}
	return load, serial, nil
}

// SerialGuard is the replay check of a receiving Crypticle: a serial must be
// strictly greater than the last one accepted. The zero value starts at 0,
// like a fresh Salt Crypticle; Reset after a new session key.
type SerialGuard struct {
	mu   sync.Mutex
	last int64
}

// Accept records serial and reports whether it is new (> last).
func (g *SerialGuard) Accept(serial int64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if serial <= g.last {
		return fmt.Errorf("%w: %d <= %d", ErrReplay, serial, g.last)
	}
	g.last = serial
	return nil
}

// Reset forgets the last serial (new session key).
func (g *SerialGuard) Reset() {
	g.mu.Lock()
	g.last = 0
	g.mu.Unlock()
}

// Counter is the master's publish serial: one strictly increasing counter
// shared by every publisher, reset on key rotation.
type Counter struct {
	mu sync.Mutex
	n  int64
}

// Next returns the next serial (1 after a reset).
func (c *Counter) Next() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

// Reset sets the counter back to 0.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.n = 0
	c.mu.Unlock()
}

// seal is Crypticle.Seal with an optional fixed IV.
func seal(c *crypt.Crypticle, plain []byte, nonce string, iv []byte) ([]byte, error) {
	if iv == nil {
		return c.Seal(plain, nonce)
	}
	return c.SealWithIV(plain, nonce, iv)
}

// Package message builds and opens Salt 3006's message envelopes: requests
// on the request channel ({enc, load, version}), the master's replies
// (clear, signed clear, `send` and `send_private`) and signed publishes. It
// knows msgpack and crypto but nothing about jobs or sockets.
package message

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Envelope encodings.
const (
	EncClear = "clear"
	EncAES   = "aes"
	EncPub   = "pub"
)

// ProtocolVersion is the request version 3006 clients send.
const ProtocolVersion = 2

// Sentinel errors: every way a message can be wrong. Callers answer
// ErrUndecodable with BadLoadMap and the other request errors with
// BadLoadText, as Salt's request server does (SALT-WIRE §2.2).
var (
	ErrUndecodable   = errors.New("message: msgpack decode failed")
	ErrNotMap        = errors.New("message: envelope is not a map")
	ErrMissingField  = errors.New("message: missing field")
	ErrBadEnc        = errors.New("message: unknown enc")
	ErrLoadNotMap    = errors.New("message: load is not a map")
	ErrBadID         = errors.New("message: bad id")
	ErrDecrypt       = errors.New("message: decryption failed")
	ErrNoNonce       = errors.New("message: nonce missing")
	ErrNonceMismatch = errors.New("message: nonce mismatch")
	ErrBadSignature  = errors.New("message: bad signature")
	ErrReplay        = errors.New("message: serial replayed")
	ErrEmpty         = errors.New("message: plaintext without pickle:: prefix (Salt reads it as {})")
)

// Fixed clear replies of Salt's request server.
var (
	// BadLoadMap answers a request whose msgpack could not be decoded.
	BadLoadMap = payload.NewMap("msg", "bad load")
	// BadLoadText answers a malformed envelope or an undecryptable load.
	BadLoadText = "bad load"
	// NotDictText answers a load that is not a map.
	NotDictText = "payload and load must be a dict"
	// NullIDText answers an id containing a NUL byte.
	NullIDText = "bad load: id contains a null byte"
	// HandlerErrorText answers a request whose handler failed.
	HandlerErrorText = "Some exception handling minion payload"
)

// Request is a decoded request envelope.
type Request struct {
	// Enc is "clear" or "aes".
	Enc string
	// Load is the clear load (Enc == "clear").
	Load *payload.Map
	// Cipher is the Crypticle blob (Enc == "aes").
	Cipher []byte
	// Version is the envelope version (0 when absent).
	Version int64
}

// ParseRequest decodes a request frame. Errors wrap ErrUndecodable (answer
// BadLoadMap), ErrNotMap/ErrMissingField/ErrBadEnc (answer BadLoadText) or
// ErrLoadNotMap (answer NotDictText).
func ParseRequest(frame []byte, lim payload.Limits) (*Request, error) {
	v, err := payload.UnmarshalLimits(frame, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	env, ok := v.(*payload.Map)
	if !ok {
		return nil, ErrNotMap
	}
	encV, ok := env.Get("enc")
	if !ok {
		return nil, fmt.Errorf("%w: enc", ErrMissingField)
	}
	load, ok := env.Get("load")
	if !ok {
		return nil, fmt.Errorf("%w: load", ErrMissingField)
	}
	req := &Request{Enc: payload.Text(encV)}
	req.Version, _ = env.Int("version")
	switch req.Enc {
	case EncClear:
		m, ok := load.(*payload.Map)
		if !ok {
			return nil, ErrLoadNotMap
		}
		req.Load = m
	case EncAES:
		switch b := load.(type) {
		case []byte:
			req.Cipher = b
		case string:
			req.Cipher = []byte(b)
		default:
			return nil, fmt.Errorf("%w: aes load is %s", ErrBadEnc, payload.TypeName(load))
		}
	default:
		return nil, fmt.Errorf("%w: %q", ErrBadEnc, req.Enc)
	}
	return req, nil
}

// CheckID validates the load's id the way the request server does: it must
// be a string without NUL bytes. The returned text is the reply Salt sends.
func CheckID(load *payload.Map) (string, error) {
	v, ok := load.Get("id")
	if !ok {
		return "", nil
	}
	id, ok := v.(string)
	if !ok {
		return fmt.Sprintf("bad load: id %v is not a string", payload.Text(v)), fmt.Errorf("%w: not a string", ErrBadID)
	}
	if strings.ContainsRune(id, 0) {
		return NullIDText, fmt.Errorf("%w: NUL byte", ErrBadID)
	}
	return "", nil
}

// EncodeClearRequest builds {enc: clear, load, version: 2}.
func EncodeClearRequest(load *payload.Map) ([]byte, error) {
	return payload.Marshal(payload.NewMap("enc", EncClear, "load", load, "version", ProtocolVersion))
}

// EncodeAESRequest adds a fresh nonce to load (in place, last key, as the
// 3006 channel does) and builds {enc: aes, load: Crypticle(load), version: 2}.
// It returns the frame and the nonce the reply must echo.
func EncodeAESRequest(c *crypt.Crypticle, load *payload.Map) (frame []byte, nonce string, err error) {
	nonce = crypt.NewNonce()
	load.Set("nonce", nonce)
	frame, err = EncodeAESRequestWithIV(c, load, nil)
	return frame, nonce, err
}

// EncodeAESRequestWithIV encrypts load as it is (its nonce included) with a
// fixed IV (nil: random), for golden tests.
// The frame is {enc: aes, load: blob, version: 2} in Wire mode: it is
// built around the load, which is encoded once into the frame's buffer
// with room in front for the map's head, the raw header and the
// Crypticle head, and encrypted there (a minion sends one per return).
func EncodeAESRequestWithIV(c *crypt.Crypticle, load *payload.Map, iv []byte) ([]byte, error) {
	return encodeAESRequest(c, load, "", iv)
}

// EncodeAESRequestFresh is EncodeAESRequest without modifying load: the
// frame is the one EncodeAESRequest makes of a copy of load (the nonce
// set on it), and load may be shared and sent again. A load without a
// nonce is encoded with the nonce after its entries, as Set adds it,
// without copying the map (a minion encodes one per return).
func EncodeAESRequestFresh(c *crypt.Crypticle, load *payload.Map) (frame []byte, nonce string, err error) {
	nonce = crypt.NewNonce()
	frame, err = encodeAESRequestNonce(c, load, nonce, nil)
	return frame, nonce, err
}

// encodeAESRequestNonce is EncodeAESRequestFresh with a given nonce and IV.
func encodeAESRequestNonce(c *crypt.Crypticle, load *payload.Map, nonce string, iv []byte) ([]byte, error) {
	if load != nil && load.Has("nonce") {
		// Set replaces it where it is: encode such a copy.
		l := load.Clone()
		l.Set("nonce", nonce)
		return encodeAESRequest(c, l, "", iv)
	}
	return encodeAESRequest(c, load, nonce, iv)
}

// encodeAESRequest builds the frame of load; a non-empty nonce is encoded
// as a last "nonce" entry of the load (which must not have one).
func encodeAESRequest(c *crypt.Crypticle, load *payload.Map, nonce string, iv []byte) ([]byte, error) {
	const maxRawHeader = 5
	room := len(aesRequestHead) + maxRawHeader
	pre := room + crypt.SealHeadroom("")
	hint := sizeHint(load, 0)
	if nonce != "" {
		hint += len("nonce") + len(nonce) + 4
	}
	buf := make([]byte, pre, pre+hint+crypt.SealOverhead+len(aesRequestTail))
	var err error
	if nonce != "" {
		buf, err = payload.AppendEncodeMapWith(buf, load, "nonce", nonce, payload.Wire)
	} else {
		buf, err = payload.AppendEncode(buf, load, payload.Wire)
	}
	if err != nil {
		return nil, err
	}
	blob, err := c.SealInPlace(buf[room:], "", iv)
	if err != nil {
		return nil, err
	}
	var hb [maxRawHeader]byte
	hdr, err := payload.AppendRawHeader(hb[:0], len(blob))
	if err != nil {
		return nil, err
	}
	if &buf[room] == &blob[0] {
		start := room - len(hdr) - len(aesRequestHead)
		out := buf[start : room+len(blob)]
		copy(out, aesRequestHead)
		copy(out[len(aesRequestHead):], hdr)
		return append(out, aesRequestTail...), nil
	}
	out := make([]byte, 0, len(aesRequestHead)+len(hdr)+len(blob)+len(aesRequestTail))
	out = append(append(append(append(out, aesRequestHead...), hdr...), blob...), aesRequestTail...)
	return out, nil
}

// aesRequestHead and aesRequestTail surround the blob of an aes request:
// what payload.Marshal writes for {"enc": "aes", "load": blob, "version": 2}.
const (
	aesRequestHead = "\x83\xa3enc\xa3aes\xa4load"
	aesRequestTail = "\xa7version\x02"
)

// OpenAESRequest decrypts an aes request's load and, for version 2, pops its
// nonce. Decryption failures wrap ErrDecrypt: the master answers them with
// BadLoadText so the minion re-authenticates.
func OpenAESRequest(c *crypt.Crypticle, req *Request, lim payload.Limits) (load *payload.Map, nonce string, err error) {
	plain, err := c.Open(req.Cipher, "")
	if err != nil {
		if errors.Is(err, crypt.ErrNoPickle) {
			return nil, "", ErrEmpty
		}
		return nil, "", fmt.Errorf("%w: %w", ErrDecrypt, err)
	}
	v, err := payload.UnmarshalLimits(plain, lim)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	load, ok := v.(*payload.Map)
	if !ok {
		return nil, "", ErrLoadNotMap
	}
	if req.Version > 1 {
		if nv, ok := load.Delete("nonce"); ok {
			nonce = payload.Text(nv)
		}
	}
	return load, nonce, nil
}

// EncodeClearReply packs a clear reply (send_clear): msgpack(ret).
func EncodeClearReply(ret any) ([]byte, error) { return payload.Marshal(ret) }

// EncodeSendReply builds the `send` reply: one raw string holding
// Crypticle("pickle::" + nonce + msgpack(ret)).
func EncodeSendReply(c *crypt.Crypticle, ret any, nonce string) ([]byte, error) {
	return EncodeSendReplyWithIV(c, ret, nonce, nil)
}

// EncodeSendReplyWithIV is EncodeSendReply with a fixed IV (nil: random).
// It encodes ret once, into a buffer with room in front for the raw
// string header and the Crypticle head, and encrypts it there: a file
// chunk is copied once instead of four times.
func EncodeSendReplyWithIV(c *crypt.Crypticle, ret any, nonce string, iv []byte) ([]byte, error) {
	return encodeSendReply(c, ret, nonce, iv, nil)
}

// EncodeSendReplyTo is EncodeSendReply building the reply in scratch when
// it is large enough (a buffer the caller reuses once the reply is
// written); otherwise in a new buffer. The reply is the same either way.
func EncodeSendReplyTo(c *crypt.Crypticle, ret any, nonce string, scratch []byte) ([]byte, error) {
	return encodeSendReply(c, ret, nonce, nil, scratch)
}

func encodeSendReply(c *crypt.Crypticle, ret any, nonce string, iv, scratch []byte) ([]byte, error) {
	const maxRawHeader = 5
	pre := maxRawHeader + crypt.SealHeadroom(nonce)
	size := pre + sizeHint(ret, 0) + crypt.SealOverhead
	if cap(scratch) < size {
		scratch = make([]byte, 0, size)
	}
	buf, err := payload.AppendEncode(scratch[:pre], ret, payload.Wire)
	if err != nil {
		return nil, err
	}
	blob, err := c.SealInPlace(buf[maxRawHeader:], nonce, iv)
	if err != nil {
		return nil, err
	}
	var hb [maxRawHeader]byte
	hdr, err := payload.AppendRawHeader(hb[:0], len(blob))
	if err != nil {
		return nil, fmt.Errorf("reply: %w", err)
	}
	if start := maxRawHeader - len(hdr); &buf[maxRawHeader] == &blob[0] {
		out := buf[start : maxRawHeader+len(blob)]
		copy(out, hdr)
		return out, nil
	}
	out := make([]byte, 0, len(hdr)+len(blob))
	return append(append(out, hdr...), blob...), nil
}

// sizeHint guesses the msgpack size of v from its strings and bytes (a
// file chunk's data), so the reply buffer is allocated once.
func sizeHint(v any, depth int) int {
	if depth > 4 {
		return 64
	}
	switch x := v.(type) {
	case string:
		return len(x) + 5
	case []byte:
		return len(x) + 5
	case *payload.Map:
		n := 5
		for _, it := range x.Items() {
			n += sizeHint(it.Key, depth+1) + sizeHint(it.Value, depth+1)
		}
		return n
	case []any:
		n := 5
		for _, e := range x {
			n += sizeHint(e, depth+1)
		}
		return n
	}
	return 16
}

// OpenSendReply decodes a `send` reply on the client side. A reply that is
// the clear string "bad load" (the master could not decrypt our request,
// usually after a key rotation) returns ErrDecrypt so the caller
// re-authenticates and retries.
func OpenSendReply(c *crypt.Crypticle, frame []byte, nonce string, lim payload.Limits) (any, error) {
	v, err := payload.UnmarshalLimits(frame, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	var blob []byte
	switch b := v.(type) {
	case []byte:
		blob = b
	case string:
		blob = []byte(b)
	case *payload.Map:
		return nil, fmt.Errorf("%w: clear map reply %s", ErrDecrypt, mapText(b))
	default:
		return nil, fmt.Errorf("%w: reply is %s", ErrDecrypt, payload.TypeName(v))
	}
	return openReplyBlob(c.Open, blob, nonce, lim)
}

// OpenSendReplyInPlace is OpenSendReply for a caller that owns frame and
// drops it afterwards: the encrypted string is used where it lies in
// frame and decrypted there (frame's bytes are overwritten), so a file
// chunk is not copied twice before it is decoded.
func OpenSendReplyInPlace(c *crypt.Crypticle, frame []byte, nonce string, lim payload.Limits) (any, error) {
	blob, ok := rawValue(frame)
	if !ok || (lim.MaxSize > 0 && len(frame) > lim.MaxSize) {
		return OpenSendReply(c, frame, nonce, lim)
	}
	return openReplyBlob(c.OpenInPlace, blob, nonce, lim)
}

// rawValue returns the body of frame when frame is exactly one msgpack
// str or bin value.
func rawValue(frame []byte) ([]byte, bool) {
	if len(frame) == 0 {
		return nil, false
	}
	var hdr, n int
	switch b := frame[0]; {
	case b >= 0xa0 && b <= 0xbf:
		hdr, n = 1, int(b&0x1f)
	case (b == 0xd9 || b == 0xc4) && len(frame) >= 2:
		hdr, n = 2, int(frame[1])
	case (b == 0xda || b == 0xc5) && len(frame) >= 3:
		hdr, n = 3, int(frame[1])<<8|int(frame[2])
	case (b == 0xdb || b == 0xc6) && len(frame) >= 5:
		hdr, n = 5, int(frame[1])<<24|int(frame[2])<<16|int(frame[3])<<8|int(frame[4])
	default:
		return nil, false
	}
	if len(frame)-hdr != n {
		return nil, false
	}
	return frame[hdr:], true
}

// openReplyBlob decrypts and decodes a reply's blob. The plaintext is
// ours alone (decrypted in place in a frame the caller drops, or into a
// fresh buffer), so a file chunk is left where it lies instead of being
// copied out.
func openReplyBlob(open func([]byte, string) ([]byte, error), blob []byte, nonce string, lim payload.Limits) (any, error) {
	plain, err := open(blob, nonce)
	switch {
	case errors.Is(err, crypt.ErrNoPickle):
		return payload.NewMap(), nil
	case errors.Is(err, crypt.ErrNonceMismatch):
		return nil, fmt.Errorf("%w: %w", ErrNonceMismatch, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrDecrypt, err)
	}
	out, err := payload.UnmarshalOwned(plain, lim)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	return out, nil
}

func mapText(m *payload.Map) string {
	b, _ := m.MarshalJSON()
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

// EncodeSignedClear builds the v2 signed clear reply used for _auth:
// {enc: clear, load: msgpack(inner) as bytes, sig: PKCS1v15-SHA1(master.pem, load)}.
func EncodeSignedClear(priv *rsa.PrivateKey, inner *payload.Map) ([]byte, error) {
	load, err := payload.Marshal(inner)
	if err != nil {
		return nil, err
	}
	sig, err := crypt.Sign(priv, load)
	if err != nil {
		return nil, err
	}
	return payload.Marshal(payload.NewMap("enc", EncClear, "load", load, "sig", sig))
}

// OpenSignedClear decodes a signed clear reply. When pub is non-nil the
// signature must verify (ErrBadSignature otherwise); pass nil on first
// contact, before the master key is known. It returns the inner load and
// its exact bytes.
func OpenSignedClear(frame []byte, pub *rsa.PublicKey, lim payload.Limits) (*payload.Map, []byte, error) {
	env, err := payload.UnmarshalLimits(frame, lim)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	m, ok := env.(*payload.Map)
	if !ok {
		return nil, nil, fmt.Errorf("%w: reply is %s %q", ErrNotMap, payload.TypeName(env), payload.Text(env))
	}
	load := m.Bytes("load")
	if load == nil {
		return nil, nil, fmt.Errorf("%w: load", ErrMissingField)
	}
	if pub != nil {
		sig := m.Bytes("sig")
		if sig == nil {
			return nil, nil, fmt.Errorf("%w: no sig", ErrBadSignature)
		}
		if err := crypt.Verify(pub, load, sig); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadSignature, err)
		}
	}
	inner, err := payload.UnmarshalLimits(load, lim)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	im, ok := inner.(*payload.Map)
	if !ok {
		return nil, nil, ErrLoadNotMap
	}
	return im, load, nil
}

// IsClearCmd reports whether frame is a clear request whose load's cmd is
// cmd, reading the envelope in place (nothing decoded or allocated): a
// cheap classifier for the request port, which decodes the request fully
// afterwards. Keys repeated in a map count by their last value, as in
// the decoded form; str and bin texts are alike.
func IsClearCmd(frame []byte, cmd string) bool {
	var enc, load []byte
	if !payload.MapAt(frame, func(k, v []byte) bool {
		switch key, _, _ := payload.TextAt(k); string(key) {
		case "enc":
			enc = v
		case "load":
			load = v
		}
		return true
	}) {
		return false
	}
	if e, _, ok := payload.TextAt(enc); !ok || string(e) != EncClear {
		return false
	}
	var got []byte
	found := false
	if !payload.MapAt(load, func(k, v []byte) bool {
		if key, _, _ := payload.TextAt(k); string(key) == "cmd" {
			got, _, found = payload.TextAt(v)
		}
		return true
	}) {
		return false
	}
	return found && string(got) == cmd
}

package message

import (
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Auth outcomes a minion can get from _auth.
type AuthStatus int

const (
	// AuthAccepted: the reply carries the session key.
	AuthAccepted AuthStatus = iota
	// AuthPending: the key waits in minions_pre (ret: True).
	AuthPending
	// AuthRejected: rejected or denied (ret: False).
	AuthRejected
	// AuthFull: the master is over max_minions (ret: "full").
	AuthFull
)

func (s AuthStatus) String() string {
	switch s {
	case AuthAccepted:
		return "accepted"
	case AuthPending:
		return "pending"
	case AuthRejected:
		return "rejected"
	case AuthFull:
		return "full"
	}
	return fmt.Sprintf("AuthStatus(%d)", int(s))
}

// Auth errors a minion branches on.
var (
	// ErrMasterKeyChanged: the master's public key differs from the cached
	// minion_master.pub (Salt: "Invalid master key").
	ErrMasterKeyChanged = errors.New("message: master public key differs from the cached one")
	// ErrAuthReply: the reply failed a check (session key signature, token).
	ErrAuthReply = errors.New("message: invalid auth reply")
)

// SignIn is one _auth attempt of a minion.
type SignIn struct {
	ID    string
	Nonce string
	// Token is the plaintext token sent encrypted to the master (empty on
	// first contact, when no master key is cached).
	Token string
	// Load is the clear load to send with EncodeClearRequest.
	Load *payload.Map
}

// NewSignIn builds the _auth load: cmd, id, nonce, [autosign_grains],
// [token], pub. minionPubPEM is sent exactly as stored in minion.pub.
// masterPub is the cached master key or nil on first contact.
func NewSignIn(id string, minionPubPEM []byte, masterPub *rsa.PublicKey, autosignGrains *payload.Map) (*SignIn, error) {
	s := &SignIn{ID: id, Nonce: crypt.NewNonce()}
	load := payload.NewMap("cmd", "_auth", "id", id, "nonce", s.Nonce)
	if autosignGrains != nil {
		load.Set("autosign_grains", autosignGrains)
	}
	if masterPub != nil {
		tok, err := crypt.GenerateKeyString()
		if err != nil {
			return nil, err
		}
		enc, err := crypt.EncryptOAEP(masterPub, []byte(tok))
		if err != nil {
			return nil, err
		}
		s.Token = tok
		load.Set("token", enc)
	}
	load.Set("pub", string(minionPubPEM))
	s.Load = load
	return s, nil
}

// AuthResult is what a minion learns from an _auth reply.
type AuthResult struct {
	Status AuthStatus
	// SessionKey is the master's Crypticle key string (accepted only).
	SessionKey string
	// PublishPort is the master's publish port (accepted only).
	PublishPort int
	// MasterPubPEM is the pub_key text the master sent (accepted only).
	MasterPubPEM []byte
	// FirstContact is true when no master key was cached: the caller must
	// write MasterPubPEM to minion_master.pub (trust on first use).
	FirstContact bool
	// CacheKey is true when the caller must write MasterPubPEM to
	// minion_master.pub: on first contact, or when a changed master key
	// was verified against master_sign.pub.
	CacheKey bool
}

// MasterKeySign is the minion's side of Salt's signed master keys
// (master_sign_pubkey on the master): verify_master_pubkey_sign,
// always_verify_signature and the master_sign.pub the minion was given.
type MasterKeySign struct {
	// Verify is verify_master_pubkey_sign: the master must send pub_sig,
	// and a master key that verifies against SignPub is trusted even when
	// it differs from the cached one.
	Verify bool
	// Always is always_verify_signature: pub_sig is verified even when the
	// master key equals the cached one.
	Always bool
	// SignPub is the key of master_sign.pub (nil when the file is missing:
	// every verification fails).
	SignPub *rsa.PublicKey
}

// Errors of signed master keys.
var (
	// ErrAuthDeps: the master sends pub_sig and the minion does not verify
	// it, or the other way round (Salt's check_auth_deps).
	ErrAuthDeps = errors.New("message: master_sign_pubkey on the master and verify_master_pubkey_sign on the minion disagree")
	// ErrMasterKeySig: pub_sig does not verify against master_sign.pub.
	ErrMasterKeySig = errors.New("message: the master's public key signature does not verify against master_sign.pub")
)

// OpenAuthReply checks an _auth reply the way a 3006 minion does (SALT-WIRE
// §4.4). cachedMasterPEM is the content of minion_master.pub, or nil.
func OpenAuthReply(frame []byte, s *SignIn, minionPriv *rsa.PrivateKey, cachedMasterPEM []byte, lim payload.Limits) (*AuthResult, error) {
	return OpenAuthReplySigned(frame, s, minionPriv, cachedMasterPEM, lim, MasterKeySign{})
}

// OpenAuthReplySigned is OpenAuthReply for a minion with the signed master
// key options of ks (Salt's verify_master): a reply's pub_sig must be sent
// exactly when ks.Verify is set; with ks.Verify a master key that differs
// from the cached one (or the first one) is accepted when pub_sig verifies
// against ks.SignPub, and the caller must then write it to
// minion_master.pub (CacheKey).
func OpenAuthReplySigned(frame []byte, s *SignIn, minionPriv *rsa.PrivateKey, cachedMasterPEM []byte, lim payload.Limits, ks MasterKeySign) (*AuthResult, error) {
	inner, load, err := OpenSignedClear(frame, nil, lim)
	if err != nil {
		return nil, err
	}
	res := &AuthResult{FirstContact: cachedMasterPEM == nil}
	masterPEM := cachedMasterPEM
	if pk := inner.Bytes("pub_key"); pk != nil {
		_, hasSig := inner.Get("pub_sig")
		if hasSig != ks.Verify {
			return nil, ErrAuthDeps
		}
		verifySig := func() error {
			if ks.SignPub == nil {
				return fmt.Errorf("%w: no master_sign.pub", ErrMasterKeySig)
			}
			sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(inner.Str("pub_sig")))
			if err != nil {
				return fmt.Errorf("%w: %w", ErrMasterKeySig, err)
			}
			if err := crypt.Verify(ks.SignPub, pk, sig); err != nil {
				return fmt.Errorf("%w: %w", ErrMasterKeySig, err)
			}
			return nil
		}
		switch changed := cachedMasterPEM != nil && stripNL(string(pk)) != stripNL(string(cachedMasterPEM)); {
		case changed && !ks.Verify:
			return nil, ErrMasterKeyChanged
		case changed || (cachedMasterPEM == nil && ks.Verify):
			if err := verifySig(); err != nil {
				return nil, err
			}
			res.CacheKey = true
		case cachedMasterPEM == nil:
			res.CacheKey = true
		case ks.Always:
			if err := verifySig(); err != nil {
				return nil, err
			}
		}
		masterPEM = pk
		res.MasterPubPEM = pk
	}
	var masterPub *rsa.PublicKey
	if masterPEM != nil {
		if masterPub, err = crypt.ParsePublicKeyPEM(masterPEM); err != nil {
			return nil, fmt.Errorf("%w: master key: %w", ErrAuthReply, err)
		}
		env, _ := payload.UnmarshalLimits(frame, lim)
		sig := env.(*payload.Map).Bytes("sig")
		if err := crypt.Verify(masterPub, load, sig); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadSignature, err)
		}
	}
	if inner.Str("nonce") != s.Nonce {
		return nil, ErrNonceMismatch
	}
	if ret, ok := inner.Get("ret"); ok {
		switch r := ret.(type) {
		case bool:
			if r {
				res.Status = AuthPending
			} else {
				res.Status = AuthRejected
			}
		case string:
			if r == "full" {
				res.Status = AuthFull
			} else {
				res.Status = AuthPending
			}
		default:
			res.Status = AuthPending
		}
		return res, nil
	}
	if masterPub == nil {
		return nil, fmt.Errorf("%w: accept without pub_key", ErrAuthReply)
	}
	key, err := crypt.DecryptOAEP(minionPriv, inner.Bytes("aes"))
	if err != nil {
		return nil, fmt.Errorf("%w: aes: %w", ErrAuthReply, err)
	}
	digest, err := crypt.X931Recover(masterPub, inner.Bytes("sig"))
	if err != nil {
		return nil, fmt.Errorf("%w: sig: %w", ErrAuthReply, err)
	}
	if string(digest) != SessionKeyDigest(string(key)) {
		return nil, fmt.Errorf("%w: session key signature does not match", ErrAuthReply)
	}
	// The token the request carried (encrypted to the cached master key)
	// is not decrypted back here: Salt's minion does, to learn that the
	// replying master could decrypt it, but this reply's load was already
	// verified above against that same cached key, and the load holds the
	// request's nonce, so it was made for this request by the holder of
	// that private key: the token proves nothing more, and decrypting it
	// is a second RSA private operation per sign-in (a third of a swarm's
	// CPU in an auth storm). Nothing on the wire changes: the token is
	// still sent, and a Salt master still returns it.
	if _, err := crypt.NewCrypticle(string(key)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAuthReply, err)
	}
	port, _ := inner.Int("publish_port")
	res.Status = AuthAccepted
	res.SessionKey = string(key)
	res.PublishPort = int(port)
	return res, nil
}

// AuthReplyToken decrypts the token an accepting _auth reply returns (the
// request's token, which the master decrypted and encrypted again to the
// minion's key), for a check of the master's side; OpenAuthReplySigned
// does not need it (see there). ErrAuthReply when the reply has none or it
// does not decrypt.
func AuthReplyToken(frame []byte, minionPriv *rsa.PrivateKey, lim payload.Limits) (string, error) {
	inner, _, err := OpenSignedClear(frame, nil, lim)
	if err != nil {
		return "", err
	}
	enc := inner.Bytes("token")
	if enc == nil {
		return "", fmt.Errorf("%w: no token", ErrAuthReply)
	}
	tok, err := crypt.DecryptOAEP(minionPriv, enc)
	if err != nil {
		return "", fmt.Errorf("%w: token: %w", ErrAuthReply, err)
	}
	return string(tok), nil
}

func stripNL(s string) string { return strings.NewReplacer("\n", "", "\r", "").Replace(s) }

// SessionKeyDigest is what the auth reply's X9.31 sig signs: the ASCII hex
// of sha256(session key string).
func SessionKeyDigest(keyString string) string {
	h := sha256.Sum256([]byte(keyString))
	return hex.EncodeToString(h[:])
}

// AuthAccept holds what the master puts in an accepting _auth reply.
type AuthAccept struct {
	MasterPriv   *rsa.PrivateKey
	MasterPubPEM []byte
	MinionPub    *rsa.PublicKey
	SessionKey   string
	PublishPort  int
	// EncToken is the request's encrypted token (nil when absent).
	EncToken []byte
	Nonce    string
	// PubSig is added as pub_sig when non-empty (master_sign_pubkey).
	PubSig string
	// KeySig, when not nil, is the X9.31 signature of
	// SessionKeyDigest(SessionKey) made with MasterPriv (deterministic, so
	// a master computes it once per session key); nil signs here.
	KeySig []byte
}

// BuildAuthAccept builds the inner accept map in Salt's key order: enc,
// pub_key, publish_port, [pub_sig], [token], aes, sig, nonce. A token that
// cannot be decrypted is left out, as Salt does.
func BuildAuthAccept(a AuthAccept) (*payload.Map, error) {
	m := payload.NewMap("enc", EncPub, "pub_key", string(a.MasterPubPEM), "publish_port", a.PublishPort)
	if a.PubSig != "" {
		m.Set("pub_sig", a.PubSig)
	}
	if a.EncToken != nil {
		if tok, err := crypt.DecryptOAEP(a.MasterPriv, a.EncToken); err == nil {
			enc, err := crypt.EncryptOAEP(a.MinionPub, tok)
			if err != nil {
				return nil, err
			}
			m.Set("token", enc)
		}
	}
	aes, err := crypt.EncryptOAEP(a.MinionPub, []byte(a.SessionKey))
	if err != nil {
		return nil, err
	}
	sig := a.KeySig
	if sig == nil {
		if sig, err = crypt.X931Sign(a.MasterPriv, []byte(SessionKeyDigest(a.SessionKey))); err != nil {
			return nil, err
		}
	}
	m.Set("aes", aes).Set("sig", sig)
	if a.Nonce != "" {
		m.Set("nonce", a.Nonce)
	}
	return m, nil
}

// BuildAuthRefusal builds {ret, nonce}: ret is true (pending), false
// (rejected/denied) or "full". Salt emits ret first.
func BuildAuthRefusal(ret any, nonce string) *payload.Map {
	m := payload.NewMap("ret", ret)
	if nonce != "" {
		m.Set("nonce", nonce)
	}
	return m
}

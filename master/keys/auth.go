package keys

import (
	"bytes"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gsalt/gsalt/wire/crypt"
)

// AuthResult is the master's verdict on an _auth request.
type AuthResult int

// Auth verdicts and the "ret" each one puts in the reply.
const (
	// AuthReject refuses the minion: reply ret False.
	AuthReject AuthResult = iota
	// AuthAccept accepts the minion: reply with the session key (§4.3).
	AuthAccept
	// AuthPending keeps the key waiting for salt-key: reply ret True.
	AuthPending
	// AuthFull refuses a new minion because max_minions is reached: reply
	// ret "full".
	AuthFull
)

// String names the verdict.
func (r AuthResult) String() string {
	switch r {
	case AuthReject:
		return "reject"
	case AuthAccept:
		return "accept"
	case AuthPending:
		return "pending"
	case AuthFull:
		return "full"
	}
	return fmt.Sprintf("AuthResult(%d)", int(r))
}

// Ret returns the "ret" value of the refusal reply for the verdict: false
// (reject), true (pending) or "full". It returns nil for AuthAccept, whose
// reply carries the session key instead.
func (r AuthResult) Ret() any {
	switch r {
	case AuthPending:
		return true
	case AuthFull:
		return "full"
	case AuthAccept:
		return nil
	}
	return false
}

// AuthRequest is what Authenticate needs from an _auth load.
type AuthRequest struct {
	// ID is the load's "id".
	ID string
	// Pub is the load's "pub": the exact text of the minion's minion.pub,
	// stored byte for byte.
	Pub []byte
	// AutosignGrains is the load's "autosign_grains" (nil when absent).
	AutosignGrains map[string]any
}

// AuthDecision is the outcome of Authenticate.
type AuthDecision struct {
	// Result is the verdict.
	Result AuthResult
	// Event is the salt/auth event data Salt fires for this case (§4.7),
	// or nil when Salt fires none (invalid id, corrupt key, empty key in
	// open mode). Authenticate does not fire it: the caller fires it with
	// tag TagAuth when auth_events is on, for an accept only once the
	// reply is built, as Salt does.
	Event map[string]any
	// MinionPub is the accepted key (loaded from the accepted key file),
	// set only for AuthAccept.
	MinionPub *rsa.PublicKey
	// Reason says why, for logs.
	Reason string
}

func authEvent(result bool, act Act, req AuthRequest) map[string]any {
	ev := map[string]any{"result": result, "id": req.ID, "pub": string(req.Pub)}
	if act != "" {
		ev["act"] = string(act)
	}
	return ev
}

// Authenticate runs the master's _auth decision procedure (SALT-WIRE §4.2,
// Salt's ReqServerChannel._auth) under the store's exclusive lock:
//
//  1. an id failing ValidID is refused, without an event;
//  2. with MaxMinions > 0, a minion that is not connected while more than
//     MaxMinions are gets AuthFull;
//  3. autoreject and autosign are evaluated (this consumes a
//     minions_autosign stub even when the key turns out to be known);
//  4. in OpenMode every check is skipped and a differing non-empty key
//     replaces the stored one (an empty key is refused without event);
//  5. a key in minions_rejected is refused (event without "act");
//  6. an accepted key must equal the received one after stripping
//     whitespace, else the received key goes to minions_denied (act
//     "denied");
//  7. a new key goes to minions_rejected when autorejected (act "reject"),
//     to minions_pre when not autosigned (act "pend", AuthPending), and is
//     accepted when autosigned; a directory in its minions_pre place is
//     refused;
//  8. a pending key is moved to minions_rejected when autorejected, else
//     must equal the received one exactly: when not autosigned it stays
//     pending (act "pend") or the received key goes to minions_denied (act
//     "denied"); when autosigned a mismatch goes to minions_denied with an
//     event without "act", a match is accepted;
//  9. accepting writes the received key to minions/<id> when no file is
//     there, then loads minions/<id>; a key that does not parse is refused
//     without event.
//
// Files are written atomically with mode 0644. A received key longer than
// MaxPubSize is refused without event. The error is non-nil only for I/O
// failures where Salt would have raised (no reply is due then).
//
// The common case, an accepted minion signing in again with the key it
// was accepted with, changes nothing and is decided under the shared lock
// (the Store's read lock and a shared flock), so the master's auth workers
// run it side by side; every other case, and one that could consume or
// expire a minions_autosign stub, takes the exclusive lock.
func (s *Store) Authenticate(req AuthRequest) (AuthDecision, error) {
	var (
		d    AuthDecision
		done bool
	)
	err := s.withLock(false, func() error {
		var err error
		d, done, err = s.authKnown(req)
		return err
	})
	if err != nil || done {
		return d, err
	}
	err = s.withLock(true, func() error {
		var err error
		d, err = s.authLocked(req)
		return err
	})
	return d, err
}

// authKnown is authLocked for a minion whose received key equals its
// accepted key, when deciding it writes, moves and removes nothing: not
// in open mode, no key in minions_rejected, max_minions not exceeded, and
// no minions_autosign stub that checkAutosign could consume or expire (an
// empty minions_autosign directory, or auto_accept, which is checked
// before the stubs). It reports done false, with no decision, for every
// other case, which authLocked then decides under the exclusive lock. It
// only reads, so it runs under the shared lock.
func (s *Store) authKnown(req AuthRequest) (AuthDecision, bool, error) {
	id := req.ID
	if s.opts.OpenMode || len(req.Pub) > MaxPubSize || !ValidID(s.pki, id) {
		return AuthDecision{}, false, nil
	}
	if s.opts.MaxMinions > 0 {
		if s.opts.ConnectedMinions == nil {
			return AuthDecision{}, false, nil
		}
		if count, connected := s.opts.ConnectedMinions(id); count > s.opts.MaxMinions && !connected {
			return AuthDecision{}, false, nil
		}
	}
	if !s.opts.AutoAccept && dirHasEntries(filepath.Join(s.pki, "minions_autosign")) {
		return AuthDecision{}, false, nil
	}
	pubfn := s.KeyPath(StateAccepted, id)
	if isFile(s.KeyPath(StateRejected, id)) || !isFile(pubfn) {
		return AuthDecision{}, false, nil
	}
	stored, err := readSmall(pubfn)
	if err != nil || pyStrip(string(stored)) != pyStrip(string(req.Pub)) {
		return AuthDecision{}, false, nil
	}
	// The received key must pass the checks authLocked makes before
	// anything else (its failure is logged there).
	pub, err := parseMinionPub(req.Pub)
	if err != nil {
		return AuthDecision{}, false, nil
	}
	// The decision carries the key as parsed from the accepted file: the
	// same text (the usual case) is the same key.
	if !bytes.Equal(stored, req.Pub) {
		if pub, err = crypt.ParsePublicKeyPEM(stored); err != nil {
			return AuthDecision{}, false, nil
		}
	}
	return AuthDecision{Result: AuthAccept, Event: authEvent(true, ActAccept, req), MinionPub: pub,
		Reason: "accepted"}, true, nil
}

// dirHasEntries reports whether dir holds any entry: false when it does
// not exist, true when it cannot be read.
func dirHasEntries(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) > 0
}

// MinPubBits is the smallest RSA modulus accepted from a minion (Salt
// generates 2048 bits or more; keysize below 2048 is refused by Salt's
// key generation).
const MinPubBits = 2048

// ErrBadPub is matched by CheckMinionPub's errors.
var ErrBadPub = errors.New("keys: not an acceptable minion public key")

// CheckMinionPub checks a public key sent in _auth: one PEM block, "PUBLIC
// KEY" (SubjectPublicKeyInfo) or "RSA PUBLIC KEY" (PKCS#1), holding an RSA
// key of at least MinPubBits bits, with nothing but white space around it.
func CheckMinionPub(pub []byte) error {
	_, err := parseMinionPub(pub)
	return err
}

// parseMinionPub is CheckMinionPub returning the parsed key.
func parseMinionPub(pub []byte) (*rsa.PublicKey, error) {
	block, rest := pem.Decode(pub)
	if block == nil {
		return nil, fmt.Errorf("%w: no PEM block", ErrBadPub)
	}
	if len(bytes.TrimSpace(rest)) != 0 || len(bytes.TrimSpace(pub[:bytes.Index(pub, []byte("-----BEGIN"))])) != 0 {
		return nil, fmt.Errorf("%w: text around the PEM block", ErrBadPub)
	}
	if block.Type != "PUBLIC KEY" && block.Type != "RSA PUBLIC KEY" {
		return nil, fmt.Errorf("%w: PEM type %q", ErrBadPub, block.Type)
	}
	k, err := crypt.ParsePublicKeyPEM(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPub, err)
	}
	if n := k.N.BitLen(); n < MinPubBits {
		return nil, fmt.Errorf("%w: %d-bit RSA key, at least %d bits needed", ErrBadPub, n, MinPubBits)
	}
	if k.E < 3 || k.E%2 == 0 {
		return nil, fmt.Errorf("%w: bad RSA exponent %d", ErrBadPub, k.E)
	}
	return k, nil
}

// logBadKey logs a refused malformed key at error level once per id
// (bounded), then at debug level.
func (s *Store) logBadKey(id string, err error) {
	s.badKeyMu.Lock()
	first := !s.badKeyLogged[id]
	if first {
		if s.badKeyLogged == nil || len(s.badKeyLogged) >= 4096 {
			s.badKeyLogged = map[string]bool{}
		}
		s.badKeyLogged[id] = true
	}
	s.badKeyMu.Unlock()
	if first {
		s.log.Error("keys: authentication refused: the minion sent a malformed public key; nothing was written", "id", id, "err", err)
		return
	}
	s.log.Debug("keys: malformed public key refused again", "id", id, "err", err)
}

func (s *Store) authLocked(req AuthRequest) (AuthDecision, error) {
	id := req.ID
	if !ValidID(s.pki, id) {
		return AuthDecision{Result: AuthReject, Reason: "invalid id"}, nil
	}
	if len(req.Pub) > MaxPubSize {
		return AuthDecision{Result: AuthReject, Reason: "public key too large"}, nil
	}
	// The key is parsed and checked before any file is written: a string,
	// garbage in PEM armour, an EC key or a private key must never land in
	// minions/ (where it would deny the real minion of that id later).
	if err := CheckMinionPub(req.Pub); err != nil {
		s.logBadKey(id, err)
		return AuthDecision{Result: AuthReject, Reason: "malformed public key: " + err.Error()}, nil
	}
	if s.opts.MaxMinions > 0 {
		count, connected := 0, false
		if s.opts.ConnectedMinions != nil {
			count, connected = s.opts.ConnectedMinions(id)
		}
		if count > s.opts.MaxMinions && !connected {
			return AuthDecision{Result: AuthFull, Event: authEvent(false, ActFull, req),
				Reason: fmt.Sprintf("too many minions connected (max_minions=%d)", s.opts.MaxMinions)}, nil
		}
	}

	autoReject := s.checkAutoreject(id)
	autoSign := s.checkAutosign(id, req.AutosignGrains)

	pubfn := s.KeyPath(StateAccepted, id)
	pend := s.KeyPath(StatePending, id)
	rejected := s.KeyPath(StateRejected, id)
	denied := s.KeyPath(StateDenied, id)

	refuse := func(act Act, reason string) AuthDecision {
		return AuthDecision{Result: AuthReject, Event: authEvent(false, act, req), Reason: reason}
	}

	switch {
	case s.opts.OpenMode:
		// No checks at all.
	case isFile(rejected):
		return refuse("", "key is in minions_rejected"), nil
	case isFile(pubfn):
		stored, err := readSmall(pubfn)
		if err != nil {
			return AuthDecision{}, err
		}
		if pyStrip(string(stored)) != pyStrip(string(req.Pub)) {
			if err := writeFileAtomic(denied, req.Pub, keyFileMode); err != nil {
				return AuthDecision{}, err
			}
			s.log.Error("keys: authentication failed, the public keys did not match; this may be an attempt to compromise the Salt cluster", "id", id)
			return refuse(ActDenied, "key differs from the accepted key"), nil
		}
	case !isFile(pend):
		if isDir(pend) {
			return refuse("", "pending key path is a directory"), nil
		}
		switch {
		case autoReject:
			if err := writeFileAtomic(rejected, req.Pub, keyFileMode); err != nil {
				return AuthDecision{}, err
			}
			return refuse(ActReject, "new key rejected by autoreject_file"), nil
		case !autoSign:
			if err := writeFileAtomic(pend, req.Pub, keyFileMode); err != nil {
				return AuthDecision{}, err
			}
			return AuthDecision{Result: AuthPending, Event: authEvent(true, ActPend, req),
				Reason: "new key placed in pending"}, nil
		}
		// Autosigned: accept below.
	default: // the key is pending
		switch {
		case autoReject:
			if err := os.Rename(pend, rejected); err != nil {
				s.log.Warn("keys: move pending key to rejected", "id", id, "err", err)
			}
			return refuse(ActReject, "pending key rejected by autoreject_file"), nil
		case !autoSign:
			stored, err := readSmall(pend)
			if err != nil {
				return AuthDecision{}, err
			}
			if !bytes.Equal(stored, req.Pub) {
				if err := writeFileAtomic(denied, req.Pub, keyFileMode); err != nil {
					return AuthDecision{}, err
				}
				s.log.Error("keys: authentication failed, the public key in pending did not match; this may be an attempt to compromise the Salt cluster", "id", id)
				return refuse(ActDenied, "key differs from the pending key"), nil
			}
			return AuthDecision{Result: AuthPending, Event: authEvent(true, ActPend, req),
				Reason: "key is pending"}, nil
		default:
			stored, err := readSmall(pend)
			if err != nil {
				return AuthDecision{}, err
			}
			if !bytes.Equal(stored, req.Pub) {
				if err := writeFileAtomic(denied, req.Pub, keyFileMode); err != nil {
					return AuthDecision{}, err
				}
				s.log.Error("keys: authentication failed, the public key in pending did not match; this may be an attempt to compromise the Salt cluster", "id", id)
				return refuse("", "key differs from the pending key"), nil
			}
			if err := os.Remove(pend); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return AuthDecision{}, fmt.Errorf("keys: remove pending key: %w", err)
			}
		}
	}

	// Accept.
	switch {
	case !isFile(pubfn) && !s.opts.OpenMode:
		err := writeFileAtomic(pubfn, req.Pub, keyFileMode)
		s.changes.Add(1)
		if err != nil {
			return AuthDecision{}, err
		}
	case s.opts.OpenMode:
		var disk []byte
		if isFile(pubfn) {
			var err error
			if disk, err = readSmall(pubfn); err != nil {
				return AuthDecision{}, err
			}
		}
		if len(req.Pub) == 0 {
			s.log.Error("keys: public key is empty", "id", id)
			return AuthDecision{Result: AuthReject, Reason: "empty public key in open mode"}, nil
		}
		if !bytes.Equal(req.Pub, disk) {
			s.log.Debug("keys: host key change detected in open mode", "id", id)
			err := writeFileAtomic(pubfn, req.Pub, keyFileMode)
			s.changes.Add(1)
			if err != nil {
				return AuthDecision{}, err
			}
		}
	}
	text, err := readSmall(pubfn)
	if err != nil {
		return AuthDecision{}, err
	}
	pub, err := crypt.ParsePublicKeyPEM(text)
	if err != nil {
		s.log.Error("keys: corrupt public key", "file", filepath.Base(pubfn), "id", id, "err", err)
		return AuthDecision{Result: AuthReject, Reason: "corrupt public key"}, nil
	}
	return AuthDecision{Result: AuthAccept, Event: authEvent(true, ActAccept, req), MinionPub: pub,
		Reason: "accepted"}, nil
}

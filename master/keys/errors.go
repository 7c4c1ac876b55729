package keys

import "errors"

// Sentinel errors. Functions wrap them with %w; test with errors.Is.
var (
	// ErrNoPKIDir means Options.PKIDir is empty.
	ErrNoPKIDir = errors.New("keys: no pki_dir given")
	// ErrInvalidID means a minion id cannot name a key file (it contains
	// "/", "\" or NUL, is empty, "." or "..", or is not valid UTF-8).
	ErrInvalidID = errors.New("keys: invalid minion id")
	// ErrNotFound means no key file exists for the id in any state.
	ErrNotFound = errors.New("keys: key not found")
	// ErrBadListArg means a salt-key --list argument is not one of acc*,
	// pre*, un*, rej*, den*, all*.
	ErrBadListArg = errors.New("keys: not a valid argument to --list")
	// ErrTooLarge means a key file or a received public key is larger than
	// MaxPubSize.
	ErrTooLarge = errors.New("keys: key text too large")
	// ErrBadState means a State value is not one of the key states.
	ErrBadState = errors.New("keys: unknown key state")
)

package eauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// maxTokenFile bounds a token file read from disk.
const maxTokenFile = 1 << 20

// ErrBadToken is returned for a token name that is not a plain file name.
var ErrBadToken = errors.New("eauth: invalid token")

// Tokens is salt.tokens.localfs: one msgpack file per token (named by the
// token, 64 hex digits) under the master's token_dir (cachedir/tokens), so
// tokens survive restarts and a Salt master reads the same files.
type Tokens struct {
	Dir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (t *Tokens) now() float64 {
	n := time.Now
	if t.Now != nil {
		n = t.Now
	}
	return float64(n().UnixNano()) / 1e9
}

func (t *Tokens) path(tok string) (string, error) {
	if tok == "" || tok == "." || tok == ".." || filepath.Base(tok) != tok || len(tok) > 256 {
		return "", ErrBadToken
	}
	return filepath.Join(t.Dir, tok), nil
}

// Mk stores tdata under a new random token, sets tdata["token"] and
// returns it.
func (t *Tokens) Mk(tdata *payload.Map) (string, error) {
	if err := os.MkdirAll(t.Dir, 0o700); err != nil {
		return "", fmt.Errorf("eauth: token dir: %w", err)
	}
	for i := 0; i < 8; i++ {
		var rnd [512]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return "", fmt.Errorf("eauth: %w", err)
		}
		s := sha256.Sum256(rnd[:])
		tok := hex.EncodeToString(s[:])
		p := filepath.Join(t.Dir, tok)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		tdata.Set("token", tok)
		b, err := payload.Marshal(tdata)
		if err != nil {
			return "", fmt.Errorf("eauth: encode token: %w", err)
		}
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return "", fmt.Errorf("eauth: can not write token file: %w", err)
		}
		if err := os.Rename(tmp, p); err != nil {
			_ = os.Remove(tmp)
			return "", fmt.Errorf("eauth: can not write token file: %w", err)
		}
		return tok, nil
	}
	return "", errors.New("eauth: cannot allocate a token")
}

// Get returns the stored data of a valid token, or nil when the token is
// unknown, unreadable or expired (expired and broken tokens are removed).
func (t *Tokens) Get(tok string) *payload.Map {
	p, err := t.path(tok)
	if err != nil {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	b := make([]byte, maxTokenFile+1)
	n, _ := f.Read(b)
	f.Close()
	var tdata *payload.Map
	if n <= maxTokenFile {
		tdata, _ = payload.UnmarshalMap(b[:n])
	}
	if tdata == nil {
		_ = os.Remove(p)
		return nil
	}
	exp, ok := asFloat(mustGet(tdata, "expire"))
	if !ok || exp < t.now() {
		_ = os.Remove(p)
		return nil
	}
	return tdata
}

// Rm removes a token.
func (t *Tokens) Rm(tok string) error {
	p, err := t.path(tok)
	if err != nil {
		return err
	}
	return os.Remove(p)
}

// List returns the stored token names.
func (t *Tokens) List() ([]string, error) {
	ents, err := os.ReadDir(t.Dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func mustGet(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	if n, ok := payload.AsInt(v); ok {
		return float64(n), true
	}
	return 0, false
}

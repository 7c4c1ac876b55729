package master

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/wire/crypt"
)

// errNoKey means the id has no (readable) accepted key.
var errNoKey = errors.New("master: no accepted key")

// maxKeyCache bounds the parsed keys kept in memory.
const maxKeyCache = 1 << 16

type cachedKey struct {
	pub   *rsa.PublicKey
	mtime time.Time
	size  int64
}

// keyCache keeps parsed accepted minion keys, re-validated against the
// file's size and mtime on every use, so a key deleted or replaced by
// gsalt-key (another process) is noticed at once.
type keyCache struct {
	store *keys.Store
	ids   *validIDCache
	mu    sync.Mutex
	m     map[string]cachedKey
}

func newKeyCache(s *keys.Store) *keyCache {
	return &keyCache{store: s, ids: newValidIDCache(s.PKIDir()), m: map[string]cachedKey{}}
}

// get returns the accepted public key of id.
func (c *keyCache) get(id string) (*rsa.PublicKey, error) {
	if !c.ids.valid(id) {
		return nil, fmt.Errorf("%w: invalid id %q", errNoKey, id)
	}
	path := c.store.KeyPath(keys.StateAccepted, id)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		c.mu.Lock()
		delete(c.m, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", errNoKey, id)
	}
	c.mu.Lock()
	ck, ok := c.m[id]
	c.mu.Unlock()
	if ok && ck.mtime.Equal(fi.ModTime()) && ck.size == fi.Size() {
		return ck.pub, nil
	}
	if fi.Size() > keys.MaxPubSize {
		return nil, fmt.Errorf("%w: %s: key file too large", errNoKey, id)
	}
	pub, err := crypt.LoadPublicKey(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errNoKey, id, err)
	}
	c.mu.Lock()
	if len(c.m) >= maxKeyCache {
		clear(c.m)
	}
	c.m[id] = cachedKey{pub: pub, mtime: fi.ModTime(), size: fi.Size()}
	c.mu.Unlock()
	return pub, nil
}

// has reports whether id has an accepted key.
func (c *keyCache) has(id string) bool {
	_, err := c.get(id)
	return err == nil
}

// purge forgets every cached key (maintenance).
func (c *keyCache) purge() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
	c.ids.purge()
}

// maxValidIDs bounds the ids a validIDCache remembers.
const maxValidIDs = 1 << 17

// validIDCache remembers the ids keys.ValidID accepted for one pki_dir:
// the check resolves the path component by component (a dozen lstat calls
// per id), which a return, an auth and the key cache each did for the same
// id. Only accepted ids are remembered; a refused id is checked every time.
// Maintenance forgets them (purge), so a pki_dir changed under a running
// master is seen again within loop_interval.
type validIDCache struct {
	dir string
	mu  sync.Mutex
	ok  map[string]struct{}
}

func newValidIDCache(dir string) *validIDCache {
	return &validIDCache{dir: dir, ok: map[string]struct{}{}}
}

// valid is keys.ValidID(dir, id), remembered when true.
func (v *validIDCache) valid(id string) bool {
	v.mu.Lock()
	_, ok := v.ok[id]
	v.mu.Unlock()
	if ok {
		return true
	}
	if !keys.ValidID(v.dir, id) {
		return false
	}
	v.mu.Lock()
	if len(v.ok) >= maxValidIDs {
		clear(v.ok)
	}
	v.ok[id] = struct{}{}
	v.mu.Unlock()
	return true
}

// purge forgets every remembered id.
func (v *validIDCache) purge() {
	v.mu.Lock()
	clear(v.ok)
	v.mu.Unlock()
}

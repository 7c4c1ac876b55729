package master

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/internal/dirwatch"
	"github.com/gsalt/gsalt/master/keys"
	"github.com/gsalt/gsalt/wire/crypt"
)

// errNoKey means the id has no (readable) accepted key.
var errNoKey = errors.New("master: no accepted key")

// errKeyUnreadable means the id's accepted key exists but could not be
// read for want of file descriptors (EMFILE, ENFILE): a passing state of
// the master, not of the minion. A request that needs the key is then not
// answered, so the minion sends it again, instead of being treated as
// coming from a minion without a key (a return dropped, an empty pillar).
var errKeyUnreadable = errors.New("master: accepted key unreadable (out of file descriptors)")

// outOfFiles reports whether err is the process's or the system's open
// files limit.
func outOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// maxKeyCache bounds the parsed keys kept in memory.
const maxKeyCache = 1 << 16

type cachedKey struct {
	pub   *rsa.PublicKey
	mtime time.Time
	size  int64
	// statEach: re-check the file on every use (a symlink, whose target
	// the directory watch does not see, or no watch running).
	statEach bool
}

// rewatchEvery is how often a key cache without a running directory watch
// tries to set one up again.
const rewatchEvery = time.Second

// keyCache keeps parsed accepted minion keys. A watch on the accepted
// directory (inotify) and the Store's own change count tell it when a
// key was written, replaced, moved or deleted, by this process or by
// another (gsalt-key), so a cached key is used without a stat; the
// entries are forgotten on any change in the directory. Without a watch
// (another OS, inotify limits, the directory missing) every use checks
// the file's size and mtime instead, and a watch is tried again every
// rewatchEvery.
type keyCache struct {
	store *keys.Store
	ids   *validIDCache
	dir   string
	// load reads a key file (crypt.LoadPublicKey; tests replace it).
	load func(path string) (*rsa.PublicKey, error)

	mu        sync.Mutex
	m         map[string]cachedKey
	w         *dirwatch.Watcher
	seen      uint64 // generation the entries of m were loaded under
	nextWatch time.Time
	closed    bool
	// ids is the listing of the accepted directory, valid while the
	// generation is idsGen and a watch runs (listing).
	idList  []string
	idsGen  uint64
	idsGood bool
}

func newKeyCache(s *keys.Store) *keyCache {
	c := &keyCache{store: s, ids: newValidIDCache(s.PKIDir()), m: map[string]cachedKey{},
		dir: filepath.Dir(s.KeyPath(keys.StateAccepted, "x")), load: crypt.LoadPublicKey}
	c.mu.Lock()
	c.watchLocked(time.Now())
	c.mu.Unlock()
	return c
}

// watchLocked (re)starts the directory watch when it is not running.
func (c *keyCache) watchLocked(now time.Time) {
	if c.closed || (c.w != nil && c.w.Valid()) || now.Before(c.nextWatch) {
		return
	}
	c.nextWatch = now.Add(rewatchEvery)
	if c.w != nil {
		_ = c.w.Close()
		c.w = nil
	}
	w, err := dirwatch.New(c.dir)
	if err != nil {
		return
	}
	c.w = w
	clear(c.m) // changes before the watch started are unknown
}

// genLocked is the current change generation (watch plus this process's
// key changes) and whether the watch runs; a moved generation empties the
// cache.
func (c *keyCache) genLocked() (uint64, bool) {
	watching := c.w != nil && c.w.Valid()
	if !watching {
		c.watchLocked(time.Now())
		watching = c.w != nil && c.w.Valid()
	}
	g := c.store.Changes()
	if c.w != nil {
		g += c.w.Gen()
	}
	if g != c.seen {
		clear(c.m)
		c.seen = g
		c.idsGood = false
	}
	return g, watching
}

// listing returns the accepted minion ids (keys.Store.ListState of the
// accepted state), read from the directory again only after a change
// there; without a watch, or when an entry is a symlink (whose target
// the watch does not see), every call reads the directory. The caller
// may keep and change the slice.
func (c *keyCache) listing() ([]string, error) {
	c.mu.Lock()
	g, watching := c.genLocked()
	if watching && c.idsGood && c.idsGen == g {
		out := slices.Clone(c.idList)
		c.mu.Unlock()
		return out, nil
	}
	c.mu.Unlock()
	ids, err := c.store.ListState(keys.StateAccepted)
	if err != nil || !watching {
		return ids, err
	}
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return ids, nil
	}
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink != 0 {
			return ids, nil
		}
	}
	c.mu.Lock()
	if g2, _ := c.genLocked(); g2 == g {
		c.idList, c.idsGen, c.idsGood = slices.Clone(ids), g, true
	}
	c.mu.Unlock()
	return ids, nil
}

// close stops the directory watch.
func (c *keyCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.w != nil {
		_ = c.w.Close()
		c.w = nil
	}
}

// get returns the accepted public key of id. The error wraps errNoKey
// when id has no usable accepted key, errKeyUnreadable when it could not
// be read for want of descriptors.
func (c *keyCache) get(id string) (*rsa.PublicKey, error) {
	if !c.ids.valid(id) {
		return nil, fmt.Errorf("%w: invalid id %q", errNoKey, id)
	}
	c.mu.Lock()
	g, watching := c.genLocked()
	ck, ok := c.m[id]
	c.mu.Unlock()
	if ok && watching && !ck.statEach {
		return ck.pub, nil
	}
	path := c.store.KeyPath(keys.StateAccepted, id)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		c.mu.Lock()
		delete(c.m, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", errNoKey, id)
	}
	if ok && ck.mtime.Equal(fi.ModTime()) && ck.size == fi.Size() {
		return ck.pub, nil
	}
	if fi.Size() > keys.MaxPubSize {
		return nil, fmt.Errorf("%w: %s: key file too large", errNoKey, id)
	}
	statEach := !watching
	if li, err := os.Lstat(path); err != nil || li.Mode()&fs.ModeSymlink != 0 {
		statEach = true
	}
	pub, err := c.load(path)
	if outOfFiles(err) {
		return nil, fmt.Errorf("%w: %s: %w", errKeyUnreadable, id, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errNoKey, id, err)
	}
	c.mu.Lock()
	// Keep the key only if nothing changed while it was read: a change
	// seen later empties the cache anyway.
	if g2, _ := c.genLocked(); g2 == g {
		if len(c.m) >= maxKeyCache {
			clear(c.m)
		}
		c.m[id] = cachedKey{pub: pub, mtime: fi.ModTime(), size: fi.Size(), statEach: statEach}
	}
	c.mu.Unlock()
	return pub, nil
}

// purge forgets the remembered ids and, when no directory watch runs,
// the cached keys (maintenance).
func (c *keyCache) purge() {
	c.mu.Lock()
	if c.w == nil || !c.w.Valid() {
		// Without a watch nothing else empties it; with one, any change
		// of the directory does.
		clear(c.m)
	}
	c.mu.Unlock()
	c.ids.purge()
}

// maxValidIDs bounds the ids a validIDCache remembers.
const maxValidIDs = 1 << 17

// validIDCache remembers the ids keys.ValidID accepted for one pki_dir:
// the check resolves the path component by component (a dozen lstat calls
// per id), which a return, an auth and the key cache each did for the same
// id. Only accepted ids are remembered; a refused id is checked every time.
// Maintenance checks them again (purge), so a pki_dir changed under a
// running master is seen within loop_interval: with one readdir of the
// resolved pki_dir (keys.IDLinks) instead of forgetting them all, which
// cost the returns of the first job after each maintenance 10,000
// resolutions at 10,000 minions (0.2 CPU-s in a profile of the 10k bench,
// where a whole job's returns take ~1 CPU-s).
type validIDCache struct {
	dir  string
	mu   sync.Mutex
	ok   map[string]struct{}
	root string // the resolved dir when ok was last checked; "": unknown
}

func newValidIDCache(dir string) *validIDCache {
	v := &validIDCache{dir: dir, ok: map[string]struct{}{}}
	v.root, _, _ = keys.IDLinks(dir)
	return v
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

// purge checks the remembered ids again: all are forgotten when the
// resolved pki_dir changed (or cannot be read), else those that now name
// a symbolic link in it, whose answer may have changed.
func (v *validIDCache) purge() {
	root, links, err := keys.IDLinks(v.dir)
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil || root != v.root {
		clear(v.ok)
		v.root = root
		return
	}
	for _, l := range links {
		delete(v.ok, l)
	}
}

package keys

import (
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gsalt/gsalt/internal/atomicfile"
	"github.com/gsalt/gsalt/wire/crypt"
)

// lockName is the lock file the Store takes flock(2) locks on. Its name
// starts with "." so Salt and this package ignore it when listing.
const lockName = ".gsalt-keys.lock"

// Modes Salt's master gives what it creates: directories come from
// os.makedirs under umask 022, key files from open("w+") under the same
// umask.
const (
	dirMode      fs.FileMode = 0o755
	keyFileMode  fs.FileMode = 0o644
	dropfileMode fs.FileMode = 0o400
)

// Store manages the minion keys under a master pki_dir the way Salt's
// salt-key (salt/key.py) and the master's _auth do. All methods are safe
// for concurrent use, also by several processes on the same pki_dir: every
// change happens under an exclusive flock(2) on pki_dir/.gsalt-keys.lock and
// every file is written through a temporary file and rename(2), so readers
// (this package or Salt) never see a partial key. Salt itself takes no
// lock, so a Python salt-key running at the same moment is only protected
// by the atomic writes.
type Store struct {
	opts Options
	pki  string
	log  *slog.Logger
	mu   sync.RWMutex

	badKeyMu     sync.Mutex
	badKeyLogged map[string]bool // ids whose malformed key was logged (bounded)

	// changes counts the changes of accepted key files made through this
	// Store (Changes).
	changes atomic.Uint64
}

// Changes counts the accepted key files this Store (this process) wrote,
// moved in or out, or removed. A cache of accepted keys forgets its
// entries when the count moves; changes by other processes (gsalt-key)
// are not counted and need a watch on the directory.
func (s *Store) Changes() uint64 { return s.changes.Load() }

// Change is one key moved or removed by Accept, Reject or Delete. Each
// Change corresponds to one salt/key event (EventData).
type Change struct {
	Act  Act
	ID   string
	From State
}

// EventData returns the salt/key event data Salt fires for the change:
// {"result": true, "act": act, "id": id}.
func (c Change) EventData() map[string]any {
	return map[string]any{"result": true, "act": string(c.Act), "id": c.ID}
}

// Outcome reports what an Accept, Reject or Delete did.
type Outcome struct {
	// Changes lists every key moved or removed, in order; a salt/key event
	// was fired for each.
	Changes []Change
	// Invalid lists the keys Accept left in place because their file does
	// not hold an RSA public key (salt-key prints "Unable to accept invalid
	// key for <id>." for each).
	Invalid []Change
	// After is Salt's dict_match of the keys acted on: for each matched id
	// (read as a glob, as Salt does), the states that now hold it. salt-key
	// prints "Key for minion <id> accepted." / "rejected." from it.
	After Listing
	// Rotated is true when the AES rotation dropfile was requested.
	Rotated bool
}

// Open prepares a Store on opts.PKIDir. Like the Salt master at start-up it
// creates pki_dir and its minions, minions_pre, minions_denied,
// minions_autosign and minions_rejected subdirectories (mode 0755), gives
// pki_dir mode 0700 unless it is already 0700 or 0750, creates CacheDir
// when set, and, unless SkipMasterKey, creates master.pem/master.pub with
// KeySize bits when master.pem is missing (and master.pub from master.pem
// when only the public half is missing). Ownership is not changed.
func Open(opts Options) (*Store, error) {
	if opts.PKIDir == "" {
		return nil, ErrNoPKIDir
	}
	pki, err := filepath.Abs(opts.PKIDir)
	if err != nil {
		return nil, fmt.Errorf("keys: pki_dir %s: %w", opts.PKIDir, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Store{opts: opts, pki: pki, log: log}
	if err := ensureDir(pki); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(pki); err == nil {
		if m := fi.Mode().Perm(); m != 0o700 && m != 0o750 {
			if err := os.Chmod(pki, 0o700); err != nil {
				log.Error("keys: unable to securely set the permissions of pki_dir", "dir", pki, "err", err)
			}
		}
	}
	for _, d := range []string{"minions", "minions_pre", "minions_denied", "minions_autosign", "minions_rejected"} {
		if err := ensureDir(filepath.Join(pki, d)); err != nil {
			return nil, err
		}
	}
	if opts.CacheDir != "" {
		if err := ensureDir(opts.CacheDir); err != nil {
			return nil, err
		}
	}
	if !opts.SkipMasterKey {
		if err := s.ensureMasterKey(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func ensureDir(p string) error {
	fi, err := os.Stat(p)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("keys: %s exists and is not a directory", p)
		}
		return nil
	}
	if err := os.MkdirAll(p, dirMode); err != nil {
		return fmt.Errorf("keys: create %s: %w", p, err)
	}
	// Salt creates its directories under umask 022 whatever the process
	// umask is.
	_ = os.Chmod(p, dirMode)
	return nil
}

func (s *Store) ensureMasterKey() error {
	pem := s.MasterKeyPath()
	if _, err := os.Lstat(pem); errors.Is(err, fs.ErrNotExist) {
		s.log.Info("keys: generating master keys", "dir", s.pki)
		if _, err := crypt.WriteKeyPair(s.pki, "master", s.opts.KeySize); err != nil && !errors.Is(err, crypt.ErrKeyExists) {
			return fmt.Errorf("keys: create master key: %w", err)
		}
	}
	if _, err := os.Stat(s.MasterPubPath()); errors.Is(err, fs.ErrNotExist) {
		priv, err := crypt.LoadPrivateKey(pem)
		if err != nil {
			return fmt.Errorf("keys: write master.pub: %w", err)
		}
		if err := writeFileAtomic(s.MasterPubPath(), crypt.MarshalPublicKeyPEM(&priv.PublicKey), keyFileMode); err != nil {
			return err
		}
	}
	return nil
}

// PKIDir returns the absolute pki_dir.
func (s *Store) PKIDir() string { return s.pki }

// MasterKeyPath returns pki_dir/master.pem.
func (s *Store) MasterKeyPath() string { return filepath.Join(s.pki, "master.pem") }

// MasterPubPath returns pki_dir/master.pub.
func (s *Store) MasterPubPath() string { return filepath.Join(s.pki, "master.pub") }

// LoadMasterKey reads and parses master.pem.
func (s *Store) LoadMasterKey() (*rsa.PrivateKey, error) {
	return crypt.LoadPrivateKey(s.MasterKeyPath())
}

// MasterPub returns the exact text of master.pub, which the auth reply
// sends as pub_key.
func (s *Store) MasterPub() ([]byte, error) {
	return readSmall(s.MasterPubPath())
}

// KeyPath returns the file of id in state st (pki_dir/<dir>/<id>, or
// pki_dir/<id> for StateLocal). It does not check id.
func (s *Store) KeyPath(st State, id string) string {
	if st == StateLocal {
		return filepath.Join(s.pki, id)
	}
	return filepath.Join(s.pki, st.Dir(), id)
}

// withLock runs fn holding the Store mutex and a flock on the lock file.
// If the lock file cannot be opened (a read-only pki_dir), fn runs under
// the mutex only.
func (s *Store) withLock(exclusive bool, fn func() error) error {
	if exclusive {
		s.mu.Lock()
		defer s.mu.Unlock()
	} else {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	path := filepath.Join(s.pki, lockName)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		f, err = os.Open(path)
	}
	if err != nil {
		s.log.Debug("keys: running without the pki_dir lock", "err", err)
		return fn()
	}
	defer f.Close()
	if err := flockFile(f, exclusive); err != nil {
		return fmt.Errorf("keys: lock %s: %w", path, err)
	}
	defer funlockFile(f)
	return fn()
}

// listDir returns the key names in dir the way Salt's list_keys does:
// regular files (after following links) whose names do not start with
// ".", sorted ignoring case. A missing directory gives no names.
func listDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []string{}, nil
		}
		return nil, fmt.Errorf("keys: list %s: %w", dir, err)
	}
	out := []string{}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if entryIsFile(dir, e) {
			out = append(out, name)
		}
	}
	sortIgnoreCase(out)
	return out, nil
}

// entryIsFile is isFile for a directory entry: the entry's type from the
// directory listing answers without a stat unless it is a link (followed,
// as os.path.isfile does) or unknown to the filesystem. A master lists
// the accepted keys on every publish: a stat per key was most of its
// publish cost with thousands of minions.
func entryIsFile(dir string, e fs.DirEntry) bool {
	switch t := e.Type(); {
	case t.IsRegular():
		return true
	case t&(fs.ModeSymlink|fs.ModeIrregular) != 0:
		return isFile(filepath.Join(dir, e.Name()))
	default:
		return false
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// List returns the ids in every managed state (Salt's list_keys): each of
// the four states is present, ids sorted ignoring case, names starting with
// "." ignored.
func (s *Store) List() (map[State][]string, error) {
	var out map[State][]string
	err := s.withLock(false, func() error {
		var err error
		out, err = s.listLocked()
		return err
	})
	return out, err
}

// ListAll returns List as a Listing in Salt's order (salt-key -L).
func (s *Store) ListAll() (Listing, error) {
	m, err := s.List()
	if err != nil {
		return nil, err
	}
	return ListingOf(m), nil
}

func (s *Store) listLocked() (map[State][]string, error) {
	out := make(map[State][]string, 4)
	for _, st := range ManagedStates() {
		ids, err := listDir(filepath.Join(s.pki, st.Dir()))
		if err != nil {
			return nil, err
		}
		out[st] = ids
	}
	return out, nil
}

// ListState returns the ids in one state (salt-key -l acc|un|rej|den).
// StateLocal lists the master's own key files.
func (s *Store) ListState(st State) ([]string, error) {
	if !st.Valid() {
		return nil, fmt.Errorf("%w: %q", ErrBadState, st)
	}
	var out []string
	err := s.withLock(false, func() error {
		var err error
		if st == StateLocal {
			out, err = s.localLocked()
		} else {
			out, err = listDir(filepath.Join(s.pki, st.Dir()))
		}
		return err
	})
	return out, err
}

// localLocked lists pki_dir's own *.pub and *.pem files (Salt's
// local_keys).
func (s *Store) localLocked() ([]string, error) {
	ents, err := os.ReadDir(s.pki)
	if err != nil {
		return nil, fmt.Errorf("keys: list %s: %w", s.pki, err)
	}
	out := []string{}
	for _, e := range ents {
		n := e.Name()
		if (strings.HasSuffix(n, ".pub") || strings.HasSuffix(n, ".pem")) && isFile(filepath.Join(s.pki, n)) {
			out = append(out, n)
		}
	}
	sortIgnoreCase(out)
	return out, nil
}

// splitPatterns applies Salt's name_match rule: a match string that
// contains "," is a list of globs.
func splitPatterns(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		out = append(out, strings.Split(p, ",")...)
	}
	return out
}

// Match returns the keys whose ids match any of the fnmatch globs, like
// salt-key's name_match: groups in Salt's order (accepted, pending,
// rejected, denied, then local when withLocal), only states with matches,
// ids sorted ignoring case. As in Salt a pattern containing "," is split
// into several globs, and with several globs an id matching more than one
// of them is listed once per glob.
func (s *Store) Match(withLocal bool, patterns ...string) (Listing, error) {
	var out Listing
	err := s.withLock(false, func() error {
		var err error
		out, err = s.matchLocked(withLocal, patterns)
		return err
	})
	return out, err
}

func (s *Store) matchLocked(withLocal bool, patterns []string) (Listing, error) {
	pats := splitPatterns(patterns)
	all, err := s.listLocked()
	if err != nil {
		return nil, err
	}
	states := ManagedStates()
	if withLocal {
		local, err := s.localLocked()
		if err != nil {
			return nil, err
		}
		all[StateLocal] = local
		states = append(states, StateLocal)
	}
	globs := make([]func(string) bool, len(pats))
	for i, p := range pats {
		globs[i] = compileGlob(p)
	}
	var out Listing
	for _, st := range states {
		var ids []string
		for _, id := range all[st] {
			for _, match := range globs {
				if match(id) {
					ids = append(ids, id)
				}
			}
		}
		if len(ids) > 0 {
			out = append(out, Group{State: st, IDs: ids})
		}
	}
	return out, nil
}

// DictMatch is Salt's dict_match: for every id of m (in m's order, sorted
// ignoring case within a group), read as a glob, the managed states that
// currently hold a matching key.
func (s *Store) DictMatch(m Listing) (Listing, error) {
	var out Listing
	err := s.withLock(false, func() error {
		var err error
		out, err = s.dictMatchLocked(m)
		return err
	})
	return out, err
}

func (s *Store) dictMatchLocked(m Listing) (Listing, error) {
	cur, err := s.listLocked()
	if err != nil {
		return nil, err
	}
	var out Listing
	add := func(st State, id string) {
		for i := range out {
			if out[i].State == st {
				out[i].IDs = append(out[i].IDs, id)
				return
			}
		}
		out = append(out, Group{State: st, IDs: []string{id}})
	}
	for _, g := range m {
		ids := append([]string(nil), g.IDs...)
		sortIgnoreCase(ids)
		for _, id := range ids {
			match := compileGlob(id)
			for _, st := range ManagedStates() {
				for _, have := range cur[st] {
					if match(have) {
						add(st, id)
						break
					}
				}
			}
		}
	}
	return out, nil
}

// locked runs fn under the store's write lock.
func (s *Store) locked(fn func() (Outcome, error)) (Outcome, error) {
	var out Outcome
	err := s.withLock(true, func() error {
		var err error
		out, err = fn()
		return err
	})
	return out, err
}

// sources are the states a change takes keys from: pending, and the
// states inc includes.
func (inc Include) sources() []State {
	from := []State{StatePending}
	if inc.Accepted {
		from = append(from, StateAccepted)
	}
	if inc.Rejected {
		from = append(from, StateRejected)
	}
	if inc.Denied {
		from = append(from, StateDenied)
	}
	return from
}

// Accept accepts the pending keys matching the globs (salt-key -a).
func (s *Store) Accept(patterns ...string) (Outcome, error) {
	return s.AcceptWith(Include{}, patterns...)
}

// AcceptAll accepts every pending key (salt-key -A, which is accept "*").
func (s *Store) AcceptAll() (Outcome, error) { return s.Accept("*") }

// AcceptWith accepts the keys matching the globs in the pending state and,
// as inc says, the rejected and denied states (salt-key -a GLOB
// --include-rejected --include-denied).
func (s *Store) AcceptWith(inc Include, patterns ...string) (Outcome, error) {
	inc.Accepted = false
	return s.locked(func() (Outcome, error) {
		m, err := s.matchLocked(false, patterns)
		if err != nil {
			return Outcome{}, err
		}
		return s.acceptLocked(m.Filter(ActAccept, inc), inc)
	})
}

// AcceptMatches accepts exactly the keys listed in m (as salt-key does with
// the list it showed before asking "Proceed?"): those in the pending group,
// and in the rejected and denied groups when inc includes them. Each key
// file is checked to hold an RSA public key first; invalid ones stay where
// they are and are reported in Outcome.Invalid. A key is moved with
// rename(2), replacing an accepted key of the same id.
func (s *Store) AcceptMatches(m Listing, inc Include) (Outcome, error) {
	return s.locked(func() (Outcome, error) { return s.acceptLocked(m, inc) })
}

func (s *Store) acceptLocked(m Listing, inc Include) (Outcome, error) {
	var out Outcome
	inc.Accepted = false
	from := inc.sources()
	invalid := map[Change]bool{}
	for _, st := range from {
		for _, id := range m.Get(st) {
			if !safeName(id) {
				continue
			}
			src := s.KeyPath(st, id)
			data, err := readSmall(src)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return out, err
			}
			if _, err := crypt.ParsePublicKeyPEM(data); err != nil {
				s.log.Error("keys: invalid RSA public key", "id", id, "err", err)
				c := Change{Act: ActAccept, ID: id, From: st}
				if !invalid[c] {
					invalid[c] = true
					out.Invalid = append(out.Invalid, c)
				}
				continue
			}
			if err := s.move(st, StateAccepted, id); err != nil {
				continue
			}
			s.record(&out, Change{Act: ActAccept, ID: id, From: st})
		}
	}
	rest := removeInvalid(m, invalid)
	after, err := s.dictMatchLocked(rest)
	if err != nil {
		return out, err
	}
	out.After = after
	return out, nil
}

func removeInvalid(m Listing, invalid map[Change]bool) Listing {
	if len(invalid) == 0 {
		return m
	}
	var out Listing
	for _, g := range m {
		ng := Group{State: g.State, Values: g.Values}
		removed := map[string]bool{}
		for _, id := range g.IDs {
			// Salt removes one occurrence per invalid key.
			if invalid[Change{Act: ActAccept, ID: id, From: g.State}] && !removed[id] {
				removed[id] = true
				continue
			}
			ng.IDs = append(ng.IDs, id)
		}
		out = append(out, ng)
	}
	return out
}

// move renames a key file between states, logging failures like Salt's
// "except OSError: pass".
func (s *Store) move(from, to State, id string) error {
	if from == StateAccepted || to == StateAccepted {
		defer s.changes.Add(1)
	}
	err := os.Rename(s.KeyPath(from, id), s.KeyPath(to, id))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("keys: move key", "id", id, "from", from, "to", to, "err", err)
	}
	return err
}

// record appends a change and fires its salt/key event.
func (s *Store) record(out *Outcome, c Change) {
	out.Changes = append(out.Changes, c)
	if s.opts.Event != nil {
		s.opts.Event(TagKey, c.EventData())
	}
}

// Reject rejects the pending keys matching the globs (salt-key -r).
func (s *Store) Reject(patterns ...string) (Outcome, error) {
	return s.RejectWith(Include{}, patterns...)
}

// RejectAll rejects every pending key (salt-key -R, which is reject "*").
func (s *Store) RejectAll() (Outcome, error) { return s.Reject("*") }

// RejectWith rejects the keys matching the globs in the pending state and,
// as inc says, the accepted and denied states (salt-key -r GLOB
// --include-accepted --include-denied).
func (s *Store) RejectWith(inc Include, patterns ...string) (Outcome, error) {
	inc.Rejected = false
	return s.locked(func() (Outcome, error) {
		m, err := s.matchLocked(false, patterns)
		if err != nil {
			return Outcome{}, err
		}
		return s.rejectLocked(m.Filter(ActReject, inc), inc)
	})
}

// RejectMatches rejects exactly the keys listed in m: the pending group,
// and the accepted and denied groups when inc includes them. Like Salt it
// then removes stale minion caches and requests an AES key rotation
// (unless NoRotateAESKey), even when nothing was rejected.
func (s *Store) RejectMatches(m Listing, inc Include) (Outcome, error) {
	return s.locked(func() (Outcome, error) { return s.rejectLocked(m, inc) })
}

func (s *Store) rejectLocked(m Listing, inc Include) (Outcome, error) {
	var out Outcome
	inc.Rejected = false
	from := inc.sources()
	for _, st := range from {
		for _, id := range m.Get(st) {
			if !safeName(id) {
				continue
			}
			if err := s.move(st, StateRejected, id); err != nil {
				continue
			}
			s.record(&out, Change{Act: ActReject, ID: id, From: st})
		}
	}
	if err := s.checkMinionCacheLocked(nil); err != nil {
		return out, err
	}
	rotated, err := s.rotateLocked()
	out.Rotated = rotated
	if err != nil {
		return out, err
	}
	out.After, err = s.dictMatchLocked(m)
	return out, err
}

// Delete deletes the keys matching the globs in every state (salt-key -d).
func (s *Store) Delete(patterns ...string) (Outcome, error) {
	return s.locked(func() (Outcome, error) {
		m, err := s.matchLocked(false, patterns)
		if err != nil {
			return Outcome{}, err
		}
		return s.deleteLocked(m, false)
	})
}

// DeleteAll deletes every key in every state (salt-key -D).
func (s *Store) DeleteAll() (Outcome, error) { return s.Delete("*") }

// DeleteMatches deletes exactly the keys listed in m (any managed state;
// a local group is ignored). Like Salt it then removes the minion caches
// of ids that have no key left (keeping the accepted ids of m when
// preserveMinions, salt-key --preserve-minions) and requests an AES key
// rotation unless NoRotateAESKey. Revoking the minion's session first
// (salt-key --revoke-auth) is the caller's business.
func (s *Store) DeleteMatches(m Listing, preserveMinions bool) (Outcome, error) {
	return s.locked(func() (Outcome, error) { return s.deleteLocked(m, preserveMinions) })
}

func (s *Store) deleteLocked(m Listing, preserveMinions bool) (Outcome, error) {
	var out Outcome
	for _, g := range m {
		if g.State.Dir() == "" {
			continue
		}
		for _, id := range g.IDs {
			if !safeName(id) {
				continue
			}
			err := os.Remove(s.KeyPath(g.State, id))
			if g.State == StateAccepted {
				s.changes.Add(1) // after the change: see keyCache
			}
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					s.log.Warn("keys: delete key", "id", id, "state", g.State, "err", err)
				}
				continue
			}
			s.record(&out, Change{Act: ActDelete, ID: id, From: g.State})
		}
	}
	var preserve []string
	if preserveMinions {
		preserve = m.Get(StateAccepted)
	}
	if err := s.checkMinionCacheLocked(preserve); err != nil {
		return out, err
	}
	rotated, err := s.rotateLocked()
	out.Rotated = rotated
	if err != nil {
		return out, err
	}
	out.After, err = s.dictMatchLocked(m)
	return out, err
}

// checkMinionCacheLocked is Salt's check_minion_cache: remove
// CacheDir/minions/<id> for every id that has no key in any state and is
// not in preserve, unless PreserveMinionCache.
func (s *Store) checkMinionCacheLocked(preserve []string) error {
	if s.opts.CacheDir == "" || s.opts.PreserveMinionCache {
		return nil
	}
	keys, err := s.listLocked()
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, ids := range keys {
		for _, id := range ids {
			known[id] = true
		}
	}
	for _, id := range preserve {
		known[id] = true
	}
	mcache := filepath.Join(s.opts.CacheDir, "minions")
	ents, err := os.ReadDir(mcache)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		if known[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(mcache, e.Name())); err != nil {
			s.log.Warn("keys: delete minion cache", "id", e.Name(), "err", err)
		}
	}
	return nil
}

func (s *Store) rotateLocked() (bool, error) {
	if s.opts.NoRotateAESKey || s.opts.CacheDir == "" {
		return false, nil
	}
	if err := RequestKeyRotation(s.opts.CacheDir); err != nil {
		return false, err
	}
	return true, nil
}

// RequestKeyRotation creates the AES rotation dropfile cacheDir/.dfn with
// mode 0400 (salt.crypt.dropfile), which makes the master generate a new
// session key on its next maintenance pass. An existing dropfile is left
// alone.
func RequestKeyRotation(cacheDir string) error {
	dfn := filepath.Join(cacheDir, ".dfn")
	if isFile(dfn) {
		return nil
	}
	f, err := os.OpenFile(dfn, os.O_WRONLY|os.O_CREATE|os.O_EXCL, dropfileMode)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return fmt.Errorf("keys: create dropfile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("keys: create dropfile: %w", err)
	}
	if err := os.Chmod(dfn, dropfileMode); err != nil {
		return fmt.Errorf("keys: chmod dropfile: %w", err)
	}
	return nil
}

// Finger returns the fingerprints (Options.HashType) of the keys matching
// the globs, the master's own *.pem/*.pub files included (salt-key -f):
// dictionary groups in Salt's order, only states with matches.
func (s *Store) Finger(patterns ...string) (Listing, error) {
	var out Listing
	err := s.withLock(false, func() error {
		m, err := s.matchLocked(true, patterns)
		if err != nil {
			return err
		}
		out, err = s.valuesLocked(m, func(st State, id string) (string, error) {
			data, err := readSmall(s.KeyPath(st, id))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return "", nil // Salt's pem_finger of a missing file
				}
				return "", err
			}
			return crypt.Fingerprint(data, s.opts.hashType())
		})
		return err
	})
	return out, err
}

// FingerAll returns the fingerprints of every key (salt-key -F, which is
// finger "*").
func (s *Store) FingerAll() (Listing, error) { return s.Finger("*") }

// Print returns the text of the minion keys matching the globs (salt-key
// -p; -P is Print("*")): dictionary groups in Salt's order.
func (s *Store) Print(patterns ...string) (Listing, error) {
	var out Listing
	err := s.withLock(false, func() error {
		m, err := s.matchLocked(false, patterns)
		if err != nil {
			return err
		}
		out, err = s.valuesLocked(m, func(st State, id string) (string, error) {
			data, err := readSmall(s.KeyPath(st, id))
			return string(data), err
		})
		return err
	})
	return out, err
}

// valuesLocked turns matches into dictionary groups (an id appears once,
// as a key of a Python dict does).
func (s *Store) valuesLocked(m Listing, value func(State, string) (string, error)) (Listing, error) {
	var out Listing
	for _, g := range m {
		ng := Group{State: g.State, Values: []string{}}
		seen := map[string]bool{}
		for _, id := range g.IDs {
			if seen[id] || !safeName(id) {
				continue
			}
			seen[id] = true
			v, err := value(g.State, id)
			if err != nil {
				return nil, err
			}
			ng.IDs = append(ng.IDs, id)
			ng.Values = append(ng.Values, v)
		}
		out = append(out, ng)
	}
	return out, nil
}

// ReadPub returns the exact text of id's key and its state, looking in
// accepted, pending, rejected and denied order. A missing key wraps
// ErrNotFound, a bad id ErrInvalidID.
func (s *Store) ReadPub(id string) ([]byte, State, error) {
	if !safeName(id) {
		return nil, "", fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	var (
		data []byte
		st   State
	)
	err := s.withLock(false, func() error {
		for _, cand := range ManagedStates() {
			p := s.KeyPath(cand, id)
			if !isFile(p) {
				continue
			}
			b, err := readSmall(p)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return err
			}
			data, st = b, cand
			return nil
		}
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	})
	if err != nil {
		return nil, "", err
	}
	return data, st, nil
}

// readSmall reads a key-sized file, refusing anything over MaxPubSize.
func readSmall(p string) ([]byte, error) {
	return readLimited(p, MaxPubSize)
}

func readLimited(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("keys: read %s: %w", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("keys: read %s: %w", p, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s", ErrTooLarge, p)
	}
	return data, nil
}

// writeFileAtomic writes data to path through a hidden temporary file in
// the same directory, synced and renamed into place (atomicfile.WriteFile).
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := atomicfile.WriteFile(path, data, mode, false); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	return nil
}

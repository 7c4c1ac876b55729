// Package jobcache is the master's persistent job cache: published job
// loads, the minions expected to answer, and every return, kept in an
// embedded bbolt store that survives restarts and is pruned after
// keep_jobs_seconds. It replaces Salt's local_cache returner on disk but
// keeps its semantics: a jid is 20 UTC digits, a second return from the same
// minion for the same jid is dropped.
package jobcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	bolterrors "go.etcd.io/bbolt/errors"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"go.etcd.io/bbolt"

	"github.com/gsalt/gsalt/wire/payload"
)

// Errors callers branch on.
var (
	ErrNoJob     = errors.New("jobcache: no such job")
	ErrBadJID    = errors.New("jobcache: not a jid")
	ErrDuplicate = errors.New("jobcache: duplicate return")
)

var (
	bucketJobs = []byte("jobs")
	keyLoad    = []byte("load")
	keyMinions = []byte("minions")
	keyStart   = []byte("start")
	keyReturns = []byte("returns")
)

// Options configure a Cache.
type Options struct {
	// Keep is how long jobs are kept (keep_jobs_seconds); 0 keeps forever.
	Keep time.Duration
	// Now returns the current time (tests); nil means time.Now.
	Now func() time.Time
}

// Cache is the job cache. It is safe for concurrent use.
type Cache struct {
	db   *bbolt.DB
	opts Options

	mu      sync.Mutex
	lastJID time.Time
}

// Open opens (creating) the cache file at path.
func Open(path string, opts Options) (*Cache, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("jobcache: open %s: %w", path, err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketJobs)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("jobcache: init: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Cache{db: db, opts: opts}, nil
}

// Close closes the store.
func (c *Cache) Close() error { return c.db.Close() }

// NewJID returns a fresh jid, strictly greater than every jid this Cache
// handed out before.
func (c *Cache) NewJID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.opts.Now().UTC().Truncate(time.Microsecond)
	if !t.After(c.lastJID) {
		t = c.lastJID.Add(time.Microsecond)
	}
	c.lastJID = t
	return saltjid.Format(t)
}

// SaveLoad stores a job's clear load and expected minions (Salt's .load.p
// and .minions.p). Saving again replaces the load and adds minions.
func (c *Cache) SaveLoad(jid string, load *payload.Map, minions []string) error {
	if !saltjid.Is(jid) {
		return fmt.Errorf("%w: %q", ErrBadJID, jid)
	}
	enc, err := payload.MarshalBin(load)
	if err != nil {
		return fmt.Errorf("jobcache: encode load: %w", err)
	}
	return c.db.Batch(func(tx *bbolt.Tx) error {
		jb, err := tx.Bucket(bucketJobs).CreateBucketIfNotExists([]byte(jid))
		if err != nil {
			return err
		}
		if jb.Get(keyStart) == nil {
			var ts [8]byte
			binary.BigEndian.PutUint64(ts[:], uint64(c.opts.Now().UnixNano()))
			if err := jb.Put(keyStart, ts[:]); err != nil {
				return err
			}
		}
		if err := jb.Put(keyLoad, enc); err != nil {
			return err
		}
		all := mergeMinions(decodeStrings(jb.Get(keyMinions)), minions)
		m, err := payload.MarshalBin(all)
		if err != nil {
			return err
		}
		return jb.Put(keyMinions, m)
	})
}

// AddMinions adds expected minions to a job (e.g. from syndics).
func (c *Cache) AddMinions(jid string, minions []string) error {
	return c.db.Batch(func(tx *bbolt.Tx) error {
		jb := tx.Bucket(bucketJobs).Bucket([]byte(jid))
		if jb == nil {
			return fmt.Errorf("%w: %s", ErrNoJob, jid)
		}
		m, err := payload.MarshalBin(mergeMinions(decodeStrings(jb.Get(keyMinions)), minions))
		if err != nil {
			return err
		}
		return jb.Put(keyMinions, m)
	})
}

func mergeMinions(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range [][]string{a, b} {
		for _, s := range l {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

func decodeStrings(b []byte) []string {
	if b == nil {
		return nil
	}
	v, err := payload.Unmarshal(b)
	if err != nil {
		return nil
	}
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, payload.Text(x))
	}
	return out
}

// SaveReturn stores one minion's return for a job (the fields of the
// _return load worth keeping: return, retcode, success, out, fun,
// fun_args, ...). A second return for the same minion and jid returns
// ErrDuplicate and changes nothing, like Salt's local_cache. A return for
// a jid the cache has not seen creates the job (minion-initiated jobs).
func (c *Cache) SaveReturn(jid, minion string, ret *payload.Map) error {
	if !saltjid.Is(jid) {
		return fmt.Errorf("%w: %q", ErrBadJID, jid)
	}
	enc, err := payload.MarshalBin(ret)
	if err != nil {
		return fmt.Errorf("jobcache: encode return: %w", err)
	}
	return c.db.Batch(func(tx *bbolt.Tx) error {
		jb, err := tx.Bucket(bucketJobs).CreateBucketIfNotExists([]byte(jid))
		if err != nil {
			return err
		}
		if jb.Get(keyStart) == nil {
			var ts [8]byte
			binary.BigEndian.PutUint64(ts[:], uint64(c.opts.Now().UnixNano()))
			if err := jb.Put(keyStart, ts[:]); err != nil {
				return err
			}
		}
		rb, err := jb.CreateBucketIfNotExists(keyReturns)
		if err != nil {
			return err
		}
		if rb.Get([]byte(minion)) != nil {
			return fmt.Errorf("%w: %s from %s", ErrDuplicate, jid, minion)
		}
		return rb.Put([]byte(minion), enc)
	})
}

// Job is everything the cache holds for one jid.
type Job struct {
	JID     string
	Load    *payload.Map
	Minions []string
	Returns map[string]*payload.Map
	// Saved is when the job entered the cache.
	Saved time.Time
}

// Get returns a job with its returns.
func (c *Cache) Get(jid string) (*Job, error) {
	var job *Job
	err := c.db.View(func(tx *bbolt.Tx) error {
		jb := tx.Bucket(bucketJobs).Bucket([]byte(jid))
		if jb == nil {
			return fmt.Errorf("%w: %s", ErrNoJob, jid)
		}
		j, err := readJob(jid, jb, true)
		job = j
		return err
	})
	return job, err
}

func readJob(jid string, jb *bbolt.Bucket, withReturns bool) (*Job, error) {
	j := &Job{JID: jid, Minions: decodeStrings(jb.Get(keyMinions))}
	if ts := jb.Get(keyStart); len(ts) == 8 {
		j.Saved = time.Unix(0, int64(binary.BigEndian.Uint64(ts)))
	}
	if lb := jb.Get(keyLoad); lb != nil {
		m, err := payload.UnmarshalMap(bytes.Clone(lb))
		if err != nil {
			return nil, fmt.Errorf("jobcache: %s load: %w", jid, err)
		}
		j.Load = m
	}
	if !withReturns {
		return j, nil
	}
	j.Returns = map[string]*payload.Map{}
	if rb := jb.Bucket(keyReturns); rb != nil {
		err := rb.ForEach(func(k, v []byte) error {
			m, err := payload.UnmarshalMap(bytes.Clone(v))
			if err != nil {
				return fmt.Errorf("jobcache: %s return of %s: %w", jid, k, err)
			}
			j.Returns[string(k)] = m
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return j, nil
}

// List returns every job (without returns), oldest first.
func (c *Cache) List() ([]*Job, error) {
	var out []*Job
	err := c.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketJobs).ForEachBucket(func(k []byte) error {
			j, err := readJob(string(k), tx.Bucket(bucketJobs).Bucket(k), false)
			if err != nil {
				return err
			}
			out = append(out, j)
			return nil
		})
	})
	return out, err
}

// Prune removes jobs older than Keep (by their jid's time, or the time they
// were saved for jids that are not timestamps) and returns how many went.
func (c *Cache) Prune() (int, error) {
	if c.opts.Keep <= 0 {
		return 0, nil
	}
	cutoff := c.opts.Now().Add(-c.opts.Keep)
	var old [][]byte
	err := c.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketJobs).ForEachBucket(func(k []byte) error {
			t, err := saltjid.Parse(string(k))
			if err != nil {
				if ts := tx.Bucket(bucketJobs).Bucket(k).Get(keyStart); len(ts) == 8 {
					t = time.Unix(0, int64(binary.BigEndian.Uint64(ts)))
				}
			}
			if t.Before(cutoff) {
				old = append(old, bytes.Clone(k))
			}
			return nil
		})
	})
	if err != nil || len(old) == 0 {
		return 0, err
	}
	err = c.db.Update(func(tx *bbolt.Tx) error {
		for _, k := range old {
			if err := tx.Bucket(bucketJobs).DeleteBucket(k); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
				return err
			}
		}
		return nil
	})
	return len(old), err
}

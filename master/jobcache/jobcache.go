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
	"io"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
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
	// ErrDamaged is returned when the store file cannot be read: bbolt
	// reported corruption or panicked on a damaged page.
	ErrDamaged = errors.New("jobcache: the job cache file is damaged")
	// ErrClosed is returned by writes after Close.
	ErrClosed = errors.New("jobcache: closed")
)

// The file holds the bucket jobs, a bucket per jid in it, and the bucket
// lost. A job's bucket holds start (when it was saved, 8 bytes big-endian
// Unix nanoseconds), the bucket meta with its load and expected minions
// (msgpack), and the bucket log with its returns in the order they
// arrived (see keyLog). Files written before the log keep a job's returns
// in the buckets returns (minion -> msgpack return) and signed (minion ->
// 1, returns whose signature was verified): they are read there, and
// later returns to those jobs go there too.
//
// The load and minions are in a bucket of their own because bbolt writes
// a changed B+tree node whole: every commit that adds a return moves the
// returns bucket's root page and so changes the job bucket's node, which
// held the minions (~90 KiB at 10,000 minions, written again by each of
// the ~130 commits of a ping). Files written before keep load and minions
// as keys of the job's bucket: they are read there still, and moved to
// meta by the next write of the job's load or minions.
var (
	bucketJobs = []byte("jobs")
	keyMeta    = []byte("meta")
	keyLoad    = []byte("load")
	keyMinions = []byte("minions")
	keyStart   = []byte("start")
	keyReturns = []byte("returns")
	keySigned  = []byte("signed")
	bucketLost = []byte("lost")
)

// Options configure a Cache.
type Options struct {
	// Keep is how long jobs are kept (keep_jobs_seconds); 0 keeps forever.
	Keep time.Duration
	// Now returns the current time (tests); nil means time.Now.
	Now func() time.Time
	// Recover moves a damaged file aside (to PATH.damaged-TIME, kept) and
	// starts a fresh one, copying every job that can still be read and
	// recording the others as lost (job_cache_recover). Without it Open
	// fails with ErrDamaged.
	Recover bool
	// Logger receives the recovery and damage logs; nil means slog.Default().
	Logger *slog.Logger
	// LockTimeout bounds the wait for another process's lock on the file;
	// 0 means 5 s.
	LockTimeout time.Duration
}

// Cache is the job cache. It is safe for concurrent use. No panic of the
// store reaches its callers: a damaged page turns into ErrDamaged.
type Cache struct {
	db   *bbolt.DB
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	lastJID time.Time
	// damaged holds jobs found unreadable since Open (jid -> reason).
	damaged map[string]string

	writes    chan writeOp
	closing   chan struct{}
	writerEnd chan struct{}
	closeOnce sync.Once
	closeErr  error

	// writesDone and writeErrors count update calls (Stats).
	writesDone, writeErrors atomic.Uint64
	// commits counts the transactions of the writer (Stats).
	commits atomic.Uint64
	// errChans keeps the result channels of finished writes for the next
	// ones (one per return at 10,000 minions).
	errChans sync.Pool
	// seen finds the record of a minion's return in a job's log (used by
	// the writer goroutine's transactions only).
	seen *seenIndex
}

// LostJob is a job the cache could not keep: found in a damaged file that
// was moved aside, or unreadable in the current one.
type LostJob struct {
	// JID is the lost job's jid; "" when the damage hid the jids
	// themselves (Reason then says which part of the file was lost).
	JID string
	// Reason says what happened and where the damaged file was kept.
	Reason string
	// When is when the loss was found.
	When time.Time
}

// Open opens (creating) the cache file at path. The whole file is checked
// first; an empty, truncated or otherwise damaged file fails with
// ErrDamaged, or is recovered when opts.Recover is set.
func Open(path string, opts Options) (*Cache, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 5 * time.Second
	}
	db, err := openChecked(path, opts)
	if err != nil && errors.Is(err, ErrDamaged) && opts.Recover {
		return recoverFile(path, opts, err)
	}
	if err != nil {
		return nil, err
	}
	return newCache(db, opts), nil
}

func newCache(db *bbolt.DB, opts Options) *Cache {
	c := &Cache{db: db, opts: opts, log: opts.Logger, damaged: map[string]string{}, seen: newSeenIndex(),
		writes: make(chan writeOp, 1024), closing: make(chan struct{}), writerEnd: make(chan struct{})}
	go c.writer()
	return c
}

// openChecked opens the file and runs bbolt's consistency check over it,
// turning corruption (reported or panicking) into ErrDamaged.
func openChecked(path string, opts Options) (db *bbolt.DB, err error) {
	defer faultsPanic()()
	if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return nil, fmt.Errorf("%w: %s is empty (truncated?)", ErrDamaged, path)
	}
	// bbolt may panic inside Open, before it returns a DB to close: keep
	// the file it opened so the descriptor (and its flock) is released.
	var file *os.File
	defer func() {
		if r := recover(); r != nil {
			if db != nil {
				closeQuietly(db)
			}
			if file != nil {
				_ = file.Close()
			}
			db, err = nil, fmt.Errorf("%w: %s: %v", ErrDamaged, path, r)
		}
	}()
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: opts.LockTimeout, OpenFile: openFile})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) || errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("jobcache: open %s: %w", path, err)
		}
		return nil, fmt.Errorf("%w: open %s: %w", ErrDamaged, path, err)
	}
	var problems []error
	_ = db.View(func(tx *bbolt.Tx) error {
		for e := range tx.Check() {
			if len(problems) < 5 {
				problems = append(problems, e)
			}
		}
		return nil
	})
	if len(problems) == 0 {
		err = db.Update(func(tx *bbolt.Tx) error {
			if _, err := tx.CreateBucketIfNotExists(bucketJobs); err != nil {
				return err
			}
			_, err := tx.CreateBucketIfNotExists(bucketLost)
			return err
		})
		if err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		closeQuietly(db)
		return nil, fmt.Errorf("%w: %s: %w", ErrDamaged, path, errors.Join(problems...))
	}
	return db, nil
}

// faultsPanic makes a memory fault of this goroutine (SIGBUS on a
// truncated mmapped file) a panic the guards recover, until the returned
// function restores the previous setting.
func faultsPanic() func() {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}

func closeQuietly(db *bbolt.DB) {
	defer faultsPanic()()
	defer func() { _ = recover() }()
	_ = db.Close()
}

// recoverFile moves the damaged file aside, opens a fresh one, copies the
// jobs still readable in the old file and records the others as lost.
func recoverFile(path string, opts Options, cause error) (*Cache, error) {
	aside := fmt.Sprintf("%s.damaged-%s", path, opts.Now().UTC().Format("20060102T150405.000000000"))
	if err := os.Rename(path, aside); err != nil {
		return nil, fmt.Errorf("jobcache: cannot move the damaged job cache aside: %w (%w)", err, cause)
	}
	opts.Logger.Error("job cache file is damaged: moved it aside and started a fresh one; jobs that could not be read are listed by the jobs runners",
		"file", path, "moved_to", aside, "err", cause)
	db, err := openChecked(path, opts)
	if err != nil {
		return nil, fmt.Errorf("jobcache: fresh job cache after recovery: %w", err)
	}
	c := newCache(db, opts)
	kept, lost := c.salvage(aside)
	now := opts.Now()
	if err := c.recordLost(lost, now); err != nil {
		c.log.Error("job cache: cannot record the lost jobs", "err", err)
	}
	var jids []string
	for _, l := range lost {
		jids = append(jids, l.JID)
	}
	opts.Logger.Warn("job cache recovered", "file", path, "jobs_kept", kept, "jobs_lost", len(lost), "lost", jids, "damaged_file", aside)
	return c, nil
}

// salvage copies every readable job of the damaged file at old into c and
// returns how many were kept and which were lost.
func (c *Cache) salvage(old string) (kept int, lost []LostJob) {
	defer faultsPanic()()
	where := "kept in " + old
	// Read a copy: a panic inside bbolt.Open leaves the damaged file
	// mapped and locked by this process, which would block a second open.
	cp, err := copyFile(old, old+".salvage")
	if err != nil {
		return 0, []LostJob{{Reason: fmt.Sprintf("every job: the damaged file could not be copied (%v); %s", err, where)}}
	}
	defer os.Remove(cp)
	db, err := func() (db *bbolt.DB, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		var file *os.File
		defer func() {
			if r := recover(); r != nil && file != nil {
				_ = file.Close()
				panic(r)
			}
		}()
		return bbolt.Open(cp, 0o400, &bbolt.Options{ReadOnly: true, Timeout: time.Second,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := os.OpenFile(name, flag, perm)
				file = f
				return f, err
			}})
	}()
	if err != nil {
		return 0, []LostJob{{Reason: fmt.Sprintf("every job: the damaged file could not be read (%v); %s", err, where)}}
	}
	defer closeQuietly(db)
	var jobs []*Job
	last := ""
	err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return db.View(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketJobs)
			if b == nil {
				return errors.New("no jobs bucket")
			}
			if lb := tx.Bucket(bucketLost); lb != nil {
				_ = lb.ForEach(func(k, v []byte) error {
					lost = append(lost, decodeLost(string(k), v))
					return nil
				})
			}
			cur := b.Cursor()
			for k, v := cur.First(); k != nil; k, v = cur.Next() {
				last = string(k)
				if v != nil {
					continue
				}
				j, jerr := readJobSafe(string(k), b, true)
				if jerr != nil {
					lost = append(lost, LostJob{JID: string(k), Reason: fmt.Sprintf("unreadable in the damaged file (%v); %s", jerr, where)})
					continue
				}
				jobs = append(jobs, j)
			}
			return nil
		})
	}()
	if err != nil {
		what := "every job"
		if last != "" {
			what = "the jobs after " + last
		}
		lost = append(lost, LostJob{Reason: fmt.Sprintf("%s: the damaged file could not be read further (%v); %s", what, err, where)})
	}
	for _, j := range jobs {
		if werr := c.restore(j); werr != nil {
			lost = append(lost, LostJob{JID: j.JID, Reason: fmt.Sprintf("could not be copied (%v); %s", werr, where)})
			continue
		}
		kept++
	}
	return kept, lost
}

// copyFile copies src to dst (replaced) and returns dst.
func copyFile(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return "", err
	}
	return dst, out.Close()
}

// restore writes a job read from another file.
func (c *Cache) restore(j *Job) error {
	return c.update(func(tx *bbolt.Tx) error {
		jb, err := tx.Bucket(bucketJobs).CreateBucketIfNotExists([]byte(j.JID))
		if err != nil {
			return err
		}
		var ts [8]byte
		binary.BigEndian.PutUint64(ts[:], uint64(j.Saved.UnixNano()))
		if err := jb.Put(keyStart, ts[:]); err != nil {
			return err
		}
		if j.Load != nil || len(j.Minions) > 0 {
			mb, err := jb.CreateBucketIfNotExists(keyMeta)
			if err != nil {
				return err
			}
			if j.Load != nil {
				enc, err := payload.MarshalBin(j.Load)
				if err != nil {
					return err
				}
				if err := mb.Put(keyLoad, enc); err != nil {
					return err
				}
			}
			if len(j.Minions) > 0 {
				m, err := payload.MarshalBin(j.Minions)
				if err != nil {
					return err
				}
				if err := mb.Put(keyMinions, m); err != nil {
					return err
				}
			}
		}
		c.seen.drop(j.JID)
		if len(j.Returns) == 0 {
			return nil
		}
		lb, err := childBucket(jb, keyLog)
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(j.Returns))
		for id := range j.Returns {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			rec, _, err := newRecord(recUnsigned, id, j.Returns[id])
			if err != nil {
				return err
			}
			seq, err := lb.NextSequence()
			if err != nil {
				return err
			}
			if err := lb.Put(seqKey(seq), rec); err != nil {
				return err
			}
		}
		return nil
	})
}

func (c *Cache) recordLost(lost []LostJob, now time.Time) error {
	if len(lost) == 0 {
		return nil
	}
	return c.update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLost)
		for i, l := range lost {
			when := l.When
			if when.IsZero() {
				when = now
			}
			key := l.JID
			if key == "" {
				key = fmt.Sprintf("~%s-%d", saltjid.Format(now), i)
			}
			enc, err := payload.MarshalBin(payload.NewMap("reason", l.Reason, "when", when.UnixNano(), "jid", l.JID))
			if err != nil {
				return err
			}
			if err := b.Put([]byte(key), enc); err != nil {
				return err
			}
		}
		return nil
	})
}

func decodeLost(key string, v []byte) LostJob {
	l := LostJob{JID: key}
	if m, err := payload.UnmarshalMap(bytes.Clone(v)); err == nil {
		l.JID = m.Str("jid")
		l.Reason = m.Str("reason")
		if n, ok := payload.AsInt(mustGet(m, "when")); ok {
			l.When = time.Unix(0, n)
		}
	}
	return l
}

func mustGet(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

// Lost returns the jobs lost to damage: those recorded when a damaged file
// was recovered, then those found unreadable since Open.
func (c *Cache) Lost() (out []LostJob, err error) {
	defer faultsPanic()()
	defer c.guard(&err)
	err = c.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLost)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			out = append(out, decodeLost(string(k), v))
			return nil
		})
	})
	c.mu.Lock()
	jids := make([]string, 0, len(c.damaged))
	for jid := range c.damaged {
		jids = append(jids, jid)
	}
	sort.Strings(jids)
	for _, jid := range jids {
		out = append(out, LostJob{JID: jid, Reason: c.damaged[jid]})
	}
	c.mu.Unlock()
	return out, err
}

// noteDamaged records a job found unreadable and logs it once.
func (c *Cache) noteDamaged(jid string, err error) {
	c.mu.Lock()
	_, seen := c.damaged[jid]
	if !seen {
		c.damaged[jid] = fmt.Sprintf("unreadable in the job cache (%v); restart the master to recover the file", err)
	}
	c.mu.Unlock()
	if !seen {
		c.log.Error("job cache: a job cannot be read (damaged file); it is reported as lost", "jid", jid, "err", err)
	}
}

// guard turns a panic of the store into ErrDamaged in *err.
func (c *Cache) guard(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", ErrDamaged, r)
		c.log.Error("job cache: the store failed (damaged file?)", "panic", r)
	}
}

// writeOp is one write waiting for the writer goroutine. Its outcome
// goes to err, or to done when the write was queued without waiting
// (SaveLoadQueued).
type writeOp struct {
	fn   func(*bbolt.Tx) error
	err  chan error
	done func(error)
	// refused is the ErrDuplicate of fn in the batch's transaction.
	refused error
}

// finish hands the write's outcome to whoever waits for it.
func (op writeOp) finish(err error) {
	if op.done != nil {
		op.done(err)
		return
	}
	op.err <- err
}

// maxBatch bounds the writes committed in one transaction.
const maxBatch = 256

// writer commits queued writes, as many as are waiting in one transaction
// (one fsync for a burst of returns). Panics of the store are recovered
// here, in the goroutine where they happen, never in a timer goroutine of
// bbolt's own Batch.
func (c *Cache) writer() {
	defer faultsPanic()()
	defer close(c.writerEnd)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	var lastEnd time.Time
	// ops is the batch, its array kept from one batch to the next.
	var ops []writeOp
	for {
		var op writeOp
		select {
		case op = <-c.writes:
		case <-c.closing:
			var rest []writeOp
			for len(c.writes) > 0 {
				rest = append(rest, <-c.writes)
			}
			if len(rest) > 0 {
				c.runBatch(rest)
			}
			return
		}
		ops = append(ops[:0], op)
		busy := time.Since(lastEnd) < batchLinger
	fill:
		for len(ops) < maxBatch {
			select {
			case op := <-c.writes:
				ops = append(ops, op)
			default:
				break fill
			}
		}
		if busy && len(ops) < maxBatch {
			ops = c.gather(ops, linger)
		}
		c.runBatch(ops)
		lastEnd = time.Now()
		clear(ops) // the finished writes' closures go with them
	}
}

// batchLinger is how long the writer waits for more writes to share a
// commit when the previous commit ended less than batchLinger before the
// first of them arrived (writes keep coming): a commit costs two
// fdatasyncs and a pwrite per dirty page whatever it holds, and a reactor
// publishing ~2,000 jobs/s (a load and a return each) found ~2 writes
// waiting per commit, the commits ~11% of the master's CPU. A write on a
// cache that was quiet is committed at once, as before; bbolt's own Batch
// waits up to 10 ms.
const batchLinger = time.Millisecond

// gather adds the writes that arrive within batchLinger to ops (up to
// maxBatch, or until the cache closes).
func (c *Cache) gather(ops []writeOp, t *time.Timer) []writeOp {
	t.Reset(batchLinger)
	defer t.Stop()
	for len(ops) < maxBatch {
		select {
		case op := <-c.writes:
			ops = append(ops, op)
		case <-t.C:
			return ops
		case <-c.closing:
			return ops
		}
	}
	return ops
}

// runBatch runs ops in one transaction and hands each its outcome. A
// write refused with ErrDuplicate (which changes nothing before it says
// so) gets that error and the others go on; a batch of refused writes
// only is rolled back (a commit costs two fdatasyncs). A write failing
// otherwise aborts the transaction: it runs again alone, so its error is
// its own, and the others are run again without it.
func (c *Cache) runBatch(ops []writeOp) {
	for len(ops) > 0 {
		failed, refused := -1, 0
		err := c.safeUpdate(func(tx *bbolt.Tx) error {
			refused = 0
			for i := range ops {
				err := safeCall(ops[i].fn, tx)
				ops[i].refused = nil
				if errors.Is(err, ErrDuplicate) {
					ops[i].refused = err
					refused++
					continue
				}
				if err != nil {
					failed = i
					return err
				}
			}
			if refused == len(ops) {
				return errNothingToCommit
			}
			return nil
		})
		if failed >= 0 {
			// The failing write runs alone so its error is its own.
			op := ops[failed]
			op.finish(c.safeUpdate(op.fn))
			ops = append(ops[:failed:failed], ops[failed+1:]...)
			continue
		}
		if errors.Is(err, errNothingToCommit) {
			err = nil
		} else {
			c.commits.Add(1)
		}
		for _, op := range ops {
			if err == nil && op.refused != nil {
				op.finish(op.refused)
				continue
			}
			op.finish(err)
		}
		return
	}
}

// errNothingToCommit rolls back a batch whose writes were all refused.
var errNothingToCommit = errors.New("jobcache: every write of the batch was refused")

func safeCall(fn func(*bbolt.Tx) error, tx *bbolt.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrDamaged, r)
		}
	}()
	return fn(tx)
}

// safeUpdate is db.Update with the store's panics turned into ErrDamaged.
// The index of returns seen keeps the transaction's changes only when it
// commits.
func (c *Cache) safeUpdate(fn func(*bbolt.Tx) error) (err error) {
	c.seen.begin()
	defer func() {
		if err != nil {
			c.seen.rollback()
		} else {
			c.seen.commit()
		}
	}()
	defer c.guard(&err)
	return c.db.Update(fn)
}

// update queues fn for the writer and waits for its result. fn may run
// more than once (as with bbolt's Batch) and must be idempotent.
func (c *Cache) update(fn func(*bbolt.Tx) error) error {
	op, err := c.enqueue(fn)
	if err != nil {
		return err
	}
	return c.await(op)
}

// enqueue queues fn for the writer (waiting only while the queue is full).
func (c *Cache) enqueue(fn func(*bbolt.Tx) error) (writeOp, error) {
	ch, _ := c.errChans.Get().(chan error)
	if ch == nil {
		ch = make(chan error, 1)
	}
	op := writeOp{fn: fn, err: ch}
	select {
	case c.writes <- op:
		return op, nil
	case <-c.closing:
		return op, ErrClosed
	}
}

// await waits for the outcome of a write enqueue queued.
func (c *Cache) await(op writeOp) error {
	select {
	case err := <-op.err:
		c.countWrite(err)
		// Received its one outcome: empty, and no one else holds it.
		c.errChans.Put(op.err)
		return err
	case <-c.writerEnd:
		select {
		case err := <-op.err:
			return err
		default:
			return ErrClosed
		}
	}
}

// Close stops the writer (queued writes are committed first) and closes
// the store.
func (c *Cache) Close() error {
	c.closeOnce.Do(func() {
		// The writer commits what is queued before it returns.
		close(c.closing)
		<-c.writerEnd
		// Writes that raced with closing get ErrClosed.
		for {
			select {
			case op := <-c.writes:
				op.finish(ErrClosed)
				continue
			default:
			}
			break
		}
		func() {
			defer c.guard(&c.closeErr)
			c.closeErr = c.db.Close()
		}()
	})
	return c.closeErr
}

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
	fn, err := c.saveLoadTx(jid, load, minions)
	if err != nil {
		return err
	}
	return c.update(fn)
}

// SaveLoadStart is SaveLoad in two steps: it queues the write (waiting
// only while the queue is full) and returns a function that waits for its
// commit and returns its outcome (call it once). What the caller does in
// between overlaps the commit's fsync; writes commit in the order they
// were queued, so a return saved after SaveLoadStart is committed after
// the load. A master publishing a job sends it to the minions meanwhile
// and answers its client only once the load is committed.
func (c *Cache) SaveLoadStart(jid string, load *payload.Map, minions []string) (wait func() error) {
	fn, err := c.saveLoadTx(jid, load, minions)
	if err != nil {
		return func() error { return err }
	}
	op, err := c.enqueue(fn)
	if err != nil {
		return func() error { return err }
	}
	return func() error { return c.await(op) }
}

// SaveLoadQueued is SaveLoad without waiting for the commit: the write is
// queued (waiting only while the queue is full) and done, when not nil,
// gets its outcome once committed, on the writer's goroutine (it must not
// block). Writes commit in the order they were queued, so a return saved
// after this call is committed after the load, as a publish's returns
// come after its load. Salt's local_cache writes the load without an
// fsync; a publisher that does not wait for one (the reactor) is not
// held for every transaction of the job cache.
func (c *Cache) SaveLoadQueued(jid string, load *payload.Map, minions []string, done func(error)) error {
	fn, err := c.saveLoadTx(jid, load, minions)
	if err != nil {
		return err
	}
	op := writeOp{fn: fn, done: func(err error) {
		c.countWrite(err)
		if done != nil {
			done(err)
		}
	}}
	if !c.IsOpen() {
		return ErrClosed
	}
	select {
	case c.writes <- op:
		return nil
	case <-c.closing:
		return ErrClosed
	}
}

// saveLoadTx encodes a job's load and returns the transaction that saves
// it with its expected minions.
func (c *Cache) saveLoadTx(jid string, load *payload.Map, minions []string) (func(*bbolt.Tx) error, error) {
	if !saltjid.Is(jid) {
		return nil, fmt.Errorf("%w: %q", ErrBadJID, jid)
	}
	enc, err := payload.MarshalBin(load)
	if err != nil {
		return nil, fmt.Errorf("jobcache: encode load: %w", err)
	}
	key := []byte(jid)
	return func(tx *bbolt.Tx) error {
		jb, err := c.jobBucket(tx, key)
		if err != nil {
			return err
		}
		return putMeta(jb, enc, minions)
	}, nil
}

// jobBucket returns the bucket of job jid in a write transaction,
// creating it with its start time when it is missing.
func (c *Cache) jobBucket(tx *bbolt.Tx, jid []byte) (*bbolt.Bucket, error) {
	jobs := tx.Bucket(bucketJobs)
	if jb := jobs.Bucket(jid); jb != nil {
		return jb, nil
	}
	jb, err := jobs.CreateBucket(jid)
	if err != nil {
		return nil, err
	}
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(c.opts.Now().UnixNano()))
	return jb, jb.Put(keyStart, ts[:])
}

// jobValue returns the job's load or minions (k): from its meta bucket,
// or from the job's bucket itself in a file written before meta.
func jobValue(jb *bbolt.Bucket, k []byte) []byte {
	if mb := jb.Bucket(keyMeta); mb != nil {
		if v := mb.Get(k); v != nil {
			return v
		}
	}
	return jb.Get(k)
}

// putMeta replaces the job's load with the encoded load enc (kept when
// nil) and adds minions to its expected minions, in its meta bucket. A
// load and minions of the older layout, keys of the job's bucket, move to
// meta.
func putMeta(jb *bbolt.Bucket, enc []byte, minions []string) error {
	m, err := payload.MarshalBin(mergeMinions(decodeStrings(jobValue(jb, keyMinions)), minions))
	if err != nil {
		return err
	}
	mb := jb.Bucket(keyMeta)
	if mb == nil {
		if l := jb.Get(keyLoad); l != nil && enc == nil {
			// A put value must stay valid until the commit, which may
			// remap the file: a copy, not the mapped bytes.
			enc = bytes.Clone(l)
		}
		if mb, err = jb.CreateBucket(keyMeta); err != nil {
			return err
		}
	}
	if enc != nil {
		if err := mb.Put(keyLoad, enc); err != nil {
			return err
		}
	}
	if err := mb.Put(keyMinions, m); err != nil {
		return err
	}
	if err := jb.Delete(keyLoad); err != nil {
		return err
	}
	return jb.Delete(keyMinions)
}

// AddMinions adds expected minions to a job (e.g. from syndics).
func (c *Cache) AddMinions(jid string, minions []string) error {
	return c.update(func(tx *bbolt.Tx) error {
		jb := tx.Bucket(bucketJobs).Bucket([]byte(jid))
		if jb == nil {
			return fmt.Errorf("%w: %s", ErrNoJob, jid)
		}
		return putMeta(jb, nil, minions)
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
	return c.SaveReturnSigned(jid, minion, ret, false)
}

// SaveReturnSigned is SaveReturn for a return whose signature (Salt's
// minion_sign_messages) was verified with the minion's key when signed is
// true. A signed return always wins over an unsigned one for the same jid
// and minion: it replaces it (an accepted minion may have returned for
// another id first); otherwise a second return is ErrDuplicate.
func (c *Cache) SaveReturnSigned(jid, minion string, ret *payload.Map, signed bool) error {
	if !saltjid.Is(jid) {
		return fmt.Errorf("%w: %q", ErrBadJID, jid)
	}
	fn, err := c.returnTx(jid, minion, ret, signed)
	if err != nil {
		return err
	}
	return c.update(fn)
}

// returnTx encodes a return and returns the transaction that saves it.
// Its ErrDuplicate comes before it changed anything (runBatch relies on
// it: the other writes of the batch are committed). A job written in the
// layout before the log (a returns bucket keyed by minion) keeps it.
func (c *Cache) returnTx(jid, minion string, ret *payload.Map, signed bool) (func(*bbolt.Tx) error, error) {
	kind := recUnsigned
	if signed {
		kind = recSigned
	}
	rec, body, err := newRecord(kind, minion, ret)
	if err != nil {
		return nil, fmt.Errorf("jobcache: encode return: %w", err)
	}
	key := []byte(jid)
	id := rec[body-len(minion) : body]
	return func(tx *bbolt.Tx) error {
		jb, err := c.jobBucket(tx, key)
		if err != nil {
			return err
		}
		if rb := jb.Bucket(keyReturns); rb != nil {
			return legacyReturn(jb, rb, jid, id, rec[body:], signed)
		}
		lb := jb.Bucket(keyLog)
		sj, err := c.seen.job(key, lb)
		if err != nil {
			return err
		}
		h := c.seen.sum(id)
		at, own := sj.ids[h]
		var old []byte
		oldKind := byte(0)
		if own && lb != nil {
			k := seqKey(at >> 1)
			if v := lb.Get(k); v != nil {
				if rk, rid, _, err := splitRecord(v); err == nil && bytes.Equal(rid, id) {
					old, oldKind = k, rk
				}
			}
		}
		if old == nil && own && lb != nil {
			// Another minion with the same hash: look for this one's
			// record the long way.
			var found bool
			if old, oldKind, found = findRecord(lb, id); !found {
				old = nil
			}
			own = false
		}
		if old != nil {
			if !signed || oldKind == recSigned {
				return fmt.Errorf("%w: %s from %s", ErrDuplicate, jid, minion)
			}
			// A signed return replaces the unsigned one, in its place.
			if err := lb.Put(old, rec); err != nil {
				return err
			}
			if own {
				c.seen.set(sj, h, seqOf(old), true)
			}
			return nil
		}
		if lb == nil {
			if lb, err = jb.CreateBucket(keyLog); err != nil {
				return err
			}
		}
		// Keys only grow: full pages (bbolt splits at half a page by
		// default).
		lb.FillPercent = 1.0
		seq, err := lb.NextSequence()
		if err != nil {
			return err
		}
		if err := lb.Put(seqKey(seq), rec); err != nil {
			return err
		}
		if _, taken := sj.ids[h]; !taken {
			c.seen.set(sj, h, seq, signed)
		}
		return nil
	}, nil
}

// legacyReturn stores a return in a job of the layout before the log: the
// bucket returns (minion -> return) and signed (minion -> 1).
func legacyReturn(jb, rb *bbolt.Bucket, jid string, id, enc []byte, signed bool) error {
	if rb.Get(id) != nil {
		sb := jb.Bucket(keySigned)
		wasSigned := sb != nil && sb.Get(id) != nil
		if !signed || wasSigned {
			return fmt.Errorf("%w: %s from %s", ErrDuplicate, jid, id)
		}
	}
	if signed {
		sb, err := childBucket(jb, keySigned)
		if err != nil {
			return err
		}
		if err := sb.Put(id, signedMark); err != nil {
			return err
		}
	}
	return rb.Put(id, enc)
}

// newRecord encodes a log record of minion id's return; body is where
// the msgpack return starts in it.
func newRecord(kind byte, id string, ret *payload.Map) (rec []byte, body int, err error) {
	rec = make([]byte, 0, 1+binary.MaxVarintLen64+len(id)+96)
	rec = append(rec, kind)
	rec = binary.AppendUvarint(rec, uint64(len(id)))
	rec = append(rec, id...)
	body = len(rec)
	rec, err = payload.AppendEncode(rec, ret, payload.Bin)
	return rec, body, err
}

// errRecord is a log value that is not a record.
var errRecord = errors.New("not a return record")

// splitRecord returns a log record's kind, minion id and msgpack return
// (slices of v).
func splitRecord(v []byte) (kind byte, id, ret []byte, err error) {
	if len(v) < 2 || v[0] > recSigned {
		return 0, nil, nil, errRecord
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || n > uint64(len(v)-1-w) {
		return 0, nil, nil, errRecord
	}
	start := 1 + w
	return v[0], v[start : start+int(n)], v[start+int(n):], nil
}

// signedMark is the value of a minion's key in a job's signed bucket.
var signedMark = []byte{1}

// childBucket returns b's child bucket name, creating it when missing
// (CreateBucketIfNotExists copies name first, for every return).
func childBucket(b *bbolt.Bucket, name []byte) (*bbolt.Bucket, error) {
	if cb := b.Bucket(name); cb != nil {
		return cb, nil
	}
	return b.CreateBucket(name)
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
func (c *Cache) Get(jid string) (job *Job, err error) {
	defer faultsPanic()()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: job %s: %v", ErrDamaged, jid, r)
		}
		if errors.Is(err, ErrDamaged) {
			c.noteDamaged(jid, err)
		}
	}()
	err = c.db.View(func(tx *bbolt.Tx) error {
		jb := tx.Bucket(bucketJobs).Bucket([]byte(jid))
		if jb == nil {
			return fmt.Errorf("%w: %s", ErrNoJob, jid)
		}
		j, err := readJobSafe(jid, tx.Bucket(bucketJobs), true)
		job = j
		return err
	})
	return job, err
}

// readJobSafe reads the job jid of bucket jobs, turning a panic on a
// damaged page and undecodable entries into ErrDamaged.
func readJobSafe(jid string, jobs *bbolt.Bucket, withReturns bool) (j *Job, err error) {
	defer func() {
		if r := recover(); r != nil {
			j, err = nil, fmt.Errorf("%w: job %s: %v", ErrDamaged, jid, r)
		}
	}()
	jb := jobs.Bucket([]byte(jid))
	if jb == nil {
		return nil, fmt.Errorf("%w: job %s is not a bucket", ErrDamaged, jid)
	}
	j, err = readJob(jid, jb, withReturns)
	if err != nil && !errors.Is(err, ErrDamaged) {
		err = fmt.Errorf("%w: %w", ErrDamaged, err)
	}
	return j, err
}

func readJob(jid string, jb *bbolt.Bucket, withReturns bool) (*Job, error) {
	j := &Job{JID: jid, Minions: decodeStrings(jobValue(jb, keyMinions))}
	if ts := jb.Get(keyStart); len(ts) == 8 {
		j.Saved = time.Unix(0, int64(binary.BigEndian.Uint64(ts)))
	}
	if lb := jobValue(jb, keyLoad); lb != nil {
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
	if lb := jb.Bucket(keyLog); lb != nil {
		err := lb.ForEach(func(k, v []byte) error {
			_, id, ret, err := splitRecord(v)
			if err != nil {
				return fmt.Errorf("jobcache: %s return %x: %w", jid, k, err)
			}
			return j.addReturn(id, ret)
		})
		if err != nil {
			return nil, err
		}
	}
	if rb := jb.Bucket(keyReturns); rb != nil {
		if err := rb.ForEach(j.addReturn); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// addReturn decodes minion id's return enc (mapped bytes) into j, unless
// j has one for id already.
func (j *Job) addReturn(id, enc []byte) error {
	if _, dup := j.Returns[string(id)]; dup {
		return nil
	}
	m, err := payload.UnmarshalMap(bytes.Clone(enc))
	if err != nil {
		return fmt.Errorf("jobcache: %s return of %s: %w", j.JID, id, err)
	}
	j.Returns[string(id)] = m
	return nil
}

// List returns every readable job (without returns), oldest first. A job
// on a damaged page is skipped and reported by Lost; when the damage stops
// the walk itself, the jobs read so far come back with an ErrDamaged error.
func (c *Cache) List() (out []*Job, err error) {
	defer faultsPanic()()
	defer c.guard(&err)
	err = c.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketJobs)
		cur := b.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if v != nil {
				continue
			}
			j, err := readJobSafe(string(k), b, false)
			if err != nil {
				c.noteDamaged(string(k), err)
				continue
			}
			out = append(out, j)
		}
		return nil
	})
	return out, err
}

// Prune removes jobs older than Keep (by their jid's time, or the time they
// were saved for jids that are not timestamps) and returns how many went.
func (c *Cache) Prune() (n int, err error) {
	if c.opts.Keep <= 0 {
		return 0, nil
	}
	defer faultsPanic()()
	defer c.guard(&err)
	cutoff := c.opts.Now().Add(-c.opts.Keep)
	var old [][]byte
	err = c.db.View(func(tx *bbolt.Tx) error {
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
	err = c.update(func(tx *bbolt.Tx) error {
		for _, k := range old {
			if err := tx.Bucket(bucketJobs).DeleteBucket(k); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
				return err
			}
			c.seen.drop(string(k))
		}
		return nil
	})
	return len(old), err
}

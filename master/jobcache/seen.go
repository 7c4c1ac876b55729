package jobcache

import (
	"bytes"
	"cmp"
	"hash/maphash"
	"slices"

	"go.etcd.io/bbolt"
)

// A job's returns, in the layout written since returns are kept in
// arrival order, are the bucket "log" of the job's bucket: its keys are
// the bucket's sequence numbers (8 bytes big-endian), so every commit
// appends to the last page instead of touching a page per return (with
// returns keyed by minion id and arriving in any order, a 10,000-minion
// ping changed ~60 pages a commit and allocated ~6.7 KB a return in
// bbolt; BenchmarkPing10k). A value is a record: its kind (recUnsigned or
// recSigned), the minion id's length as a uvarint, the id, then the
// msgpack return. A minion has one record a job: a signed return that
// replaces an unsigned one is written over it, under the same key.
//
// Finding a minion's record, to refuse a second return, would need a scan
// of the log: the writer keeps, for the jobs it wrote to last, a hash of
// each minion id that returned and the key of its record (seenIndex).
var keyLog = []byte("log")

// Record kinds, the first byte of a log value.
const (
	recUnsigned byte = 0
	recSigned   byte = 1
)

// maxSeen bounds the minions the index remembers over all its jobs
// (~24 bytes each: 12 MB); the jobs used least recently are forgotten
// first and scanned again from the log when a return for them arrives.
const maxSeen = 1 << 19

// maxSeenJobs bounds the jobs the index remembers (a reactor's jobs have
// a return or two each).
const maxSeenJobs = 4096

// seenIndex maps, for the jobs written to recently, the hash of each
// minion that returned to its record's key (seq<<1 | signed). It is used
// by the writer goroutine only, inside its transactions: each change is
// recorded in an undo list, applied when the transaction is rolled back
// (a write may run again in another transaction: the index must not hold
// returns that were never committed).
type seenIndex struct {
	seed  maphash.Seed
	hash  func(seed maphash.Seed, s string) uint64 // maphash.String; replaced by tests
	jobs  map[string]*seenJob
	total int
	tick  uint64
	undo  []seenUndo
	max   int
}

// seenJob is one job's part of the index.
type seenJob struct {
	jid  string
	ids  map[uint64]uint64
	used uint64
}

// seenUndo reverts one change of the index: a job added (job set, h 0,
// had false on a job entry) or removed, or an id's entry changed.
type seenUndo struct {
	jid     string
	job     *seenJob // the job's entry before the change (nil: none)
	jobLvl  bool     // the change replaced the job's entry itself
	h       uint64
	prev    uint64
	hadPrev bool
}

func newSeenIndex() *seenIndex {
	return &seenIndex{seed: maphash.MakeSeed(), hash: maphash.String, jobs: map[string]*seenJob{}, max: maxSeen}
}

// sum is the hash of a minion id.
func (s *seenIndex) sum(id []byte) uint64 { return s.hash(s.seed, string(id)) }

// job returns the index of job jid, reading it from the job's log lb
// (nil: none yet) when it is not remembered.
func (s *seenIndex) job(jid []byte, lb *bbolt.Bucket) (*seenJob, error) {
	s.tick++
	if j := s.jobs[string(jid)]; j != nil {
		j.used = s.tick
		return j, nil
	}
	j := &seenJob{jid: string(jid), ids: map[uint64]uint64{}, used: s.tick}
	if lb != nil {
		err := lb.ForEach(func(k, v []byte) error {
			kind, id, _, err := splitRecord(v)
			if err != nil || len(k) != 8 {
				return nil // reported by readers; a write still goes on
			}
			h := s.sum(id)
			if _, dup := j.ids[h]; !dup {
				j.ids[h] = seqOf(k)<<1 | uint64(kind&1)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	s.undo = append(s.undo, seenUndo{jid: j.jid, jobLvl: true})
	s.jobs[j.jid] = j
	s.total += len(j.ids)
	return j, nil
}

// set records that the minion with hash h has its record at seq.
func (s *seenIndex) set(j *seenJob, h, seq uint64, signed bool) {
	prev, had := j.ids[h]
	s.undo = append(s.undo, seenUndo{jid: j.jid, job: j, h: h, prev: prev, hadPrev: had})
	v := seq << 1
	if signed {
		v |= 1
	}
	j.ids[h] = v
	if !had {
		s.total++
	}
}

// drop forgets job jid (its bucket was deleted or rewritten).
func (s *seenIndex) drop(jid string) {
	if j := s.jobs[jid]; j != nil {
		s.undo = append(s.undo, seenUndo{jid: jid, job: j, jobLvl: true})
		delete(s.jobs, jid)
		s.total -= len(j.ids)
	}
}

// begin starts a transaction's changes.
func (s *seenIndex) begin() { s.undo = s.undo[:0] }

// commit keeps the transaction's changes. When the index holds more
// than its bounds, it forgets the half of its jobs used least recently
// (at once: a job at a time would look through all of them for each).
func (s *seenIndex) commit() {
	s.undo = s.undo[:0]
	if (s.total <= s.max && len(s.jobs) <= maxSeenJobs) || len(s.jobs) < 2 {
		return
	}
	jobs := make([]*seenJob, 0, len(s.jobs))
	for _, j := range s.jobs {
		jobs = append(jobs, j)
	}
	slices.SortFunc(jobs, func(a, b *seenJob) int { return cmp.Compare(a.used, b.used) })
	for _, j := range jobs[:len(jobs)/2] {
		delete(s.jobs, j.jid)
		s.total -= len(j.ids)
	}
}

// rollback reverts the transaction's changes, newest first.
func (s *seenIndex) rollback() {
	for i := len(s.undo) - 1; i >= 0; i-- {
		u := s.undo[i]
		if u.jobLvl {
			if cur := s.jobs[u.jid]; cur != nil {
				s.total -= len(cur.ids)
				delete(s.jobs, u.jid)
			}
			if u.job != nil {
				s.jobs[u.jid] = u.job
				s.total += len(u.job.ids)
			}
			continue
		}
		if u.hadPrev {
			u.job.ids[u.h] = u.prev
		} else {
			delete(u.job.ids, u.h)
			s.total--
		}
	}
	s.undo = s.undo[:0]
}

// seqKey is the log key of sequence number seq.
func seqKey(seq uint64) []byte {
	k := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		k[i] = byte(seq)
		seq >>= 8
	}
	return k
}

// seqOf is the sequence number of a log key.
func seqOf(k []byte) uint64 {
	var v uint64
	for _, b := range k[:8] {
		v = v<<8 | uint64(b)
	}
	return v
}

// findRecord returns the key and kind of minion id's record in the log
// lb (nil: none) by reading every record (after a hash collision).
func findRecord(lb *bbolt.Bucket, id []byte) (key []byte, kind byte, ok bool) {
	if lb == nil {
		return nil, 0, false
	}
	c := lb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if rk, rid, _, err := splitRecord(v); err == nil && bytes.Equal(rid, id) {
			// A key put must stay valid until the commit, which may remap
			// the file: a copy, not the mapped bytes.
			return bytes.Clone(k), rk, true
		}
	}
	return nil, 0, false
}

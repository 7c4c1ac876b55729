// Package spool is a bounded, ordered, durable queue of records on disk
// (one bbolt file): writes that could not reach their backend (a database
// that is down) wait here, oldest first, until they are replayed. It
// survives restarts; its bounds are a record count and a byte total.
package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/bbolt"
)

// ErrFull is returned by Append when a record would pass the bounds.
var ErrFull = errors.New("spool: full")

var bucket = []byte("spool")

// Spool is an ordered on-disk queue. It is safe for concurrent use.
type Spool struct {
	db       *bbolt.DB
	maxN     int
	maxBytes int64

	mu    sync.Mutex
	n     int
	bytes int64
}

// Record is one spooled record with its sequence number.
type Record struct {
	Seq  uint64
	Data []byte
}

// Open opens (creating) the spool file at path, bounded to maxRecords
// records and maxBytes bytes of record data (0: no bound of that kind).
func Open(path string, maxRecords int, maxBytes int64) (*Spool, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("spool: open %s: %w", path, err)
	}
	s := &Spool{db: db, maxN: maxRecords, maxBytes: maxBytes}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		return b.ForEach(func(_, v []byte) error {
			s.n++
			s.bytes += int64(len(v))
			return nil
		})
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("spool: open %s: %w", path, err)
	}
	return s, nil
}

// Len returns the number of records and their bytes.
func (s *Spool) Len() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.bytes
}

// Append adds records at the end, in order, in one transaction. It
// appends the leading records that fit and returns how many; when not all
// fit the error is ErrFull.
func (s *Spool) Append(recs ...[]byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fit := 0
	n, bytes := s.n, s.bytes
	for _, r := range recs {
		if (s.maxN > 0 && n+1 > s.maxN) || (s.maxBytes > 0 && bytes+int64(len(r)) > s.maxBytes) {
			break
		}
		n++
		bytes += int64(len(r))
		fit++
	}
	if fit > 0 {
		err := s.db.Update(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucket)
			for _, r := range recs[:fit] {
				seq, err := b.NextSequence()
				if err != nil {
					return err
				}
				var k [8]byte
				binary.BigEndian.PutUint64(k[:], seq)
				if err := b.Put(k[:], r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("spool: append: %w", err)
		}
		s.n, s.bytes = n, bytes
	}
	if fit < len(recs) {
		return fit, ErrFull
	}
	return fit, nil
}

// Peek returns up to max records from the front, oldest first.
func (s *Spool) Peek(max int) ([]Record, error) {
	var out []Record
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.First(); k != nil && len(out) < max; k, v = c.Next() {
			out = append(out, Record{Seq: binary.BigEndian.Uint64(k), Data: append([]byte(nil), v...)})
		}
		return nil
	})
	return out, err
}

// Remove deletes the records with sequence numbers up to and including
// seq (the ones a Peek returned and that were delivered).
func (s *Spool) Remove(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int
	var bytes int64
	err := s.db.Update(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.First(); k != nil && binary.BigEndian.Uint64(k) <= seq; k, v = c.First() {
			n++
			bytes += int64(len(v))
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("spool: remove: %w", err)
	}
	s.n -= n
	s.bytes -= bytes
	return nil
}

// Close closes the file.
func (s *Spool) Close() error { return s.db.Close() }

// Package spool is a bounded, ordered, durable queue of records on disk:
// writes that could not reach their backend (a database that is down) wait
// here, oldest first, until they are replayed. It survives restarts; its
// bounds are a record count and a byte total.
//
// The spool is one append-only file of records (length, CRC-32C, data),
// each append synced, and a small PATH.head file holding the offset of the
// first record not yet removed (replaced atomically). A record torn by a
// crash is cut off when the file is opened again. The file is emptied when
// every record was removed, and rewritten without the removed records once
// they take most of it.
package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrFull is returned by Append when a record would pass the bounds.
var ErrFull = errors.New("spool: full")

// maxRecord bounds one record (a corrupt length is not trusted past it).
const maxRecord = 256 << 20

// compactAt is the removed prefix size past which the file is rewritten.
const compactAt = 16 << 20

const headerLen = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Spool is an ordered on-disk queue. It is safe for concurrent use.
type Spool struct {
	path     string
	maxN     int
	maxBytes int64

	mu    sync.Mutex
	f     *os.File
	head  int64 // offset of the first record
	end   int64 // offset past the last record
	n     int
	bytes int64
}

// Record is one spooled record; Seq orders records and is what Remove
// takes.
type Record struct {
	Seq  uint64
	Data []byte
}

// Open opens (creating) the spool file at path, bounded to maxRecords
// records and maxBytes bytes of record data (0: no bound of that kind).
func Open(path string, maxRecords int, maxBytes int64) (*Spool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: open %s: %w", path, err)
	}
	s := &Spool{path: path, maxN: maxRecords, maxBytes: maxBytes, f: f}
	if b, err := os.ReadFile(path + ".head"); err == nil {
		if h, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && h >= 0 {
			s.head = h
		}
	}
	if err := s.scan(); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// scan counts the records from head and cuts a torn or corrupt tail.
func (s *Spool) scan() error {
	fi, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	size := fi.Size()
	if s.head > size {
		s.head = size
	}
	off := s.head
	for off < size {
		data, next, err := s.readAt(off, size)
		if err != nil {
			break
		}
		s.n++
		s.bytes += int64(len(data))
		off = next
	}
	if off < size {
		if err := s.f.Truncate(off); err != nil {
			return fmt.Errorf("spool: cut a torn record: %w", err)
		}
	}
	s.end = off
	return nil
}

// readAt reads the record at off (the file being size bytes long).
func (s *Spool) readAt(off, size int64) ([]byte, int64, error) {
	if size-off < headerLen {
		return nil, 0, io.ErrUnexpectedEOF
	}
	var h [headerLen]byte
	if _, err := s.f.ReadAt(h[:], off); err != nil {
		return nil, 0, err
	}
	n := int64(binary.BigEndian.Uint32(h[:4]))
	if n > maxRecord || off+headerLen+n > size {
		return nil, 0, io.ErrUnexpectedEOF
	}
	data := make([]byte, n)
	if _, err := s.f.ReadAt(data, off+headerLen); err != nil {
		return nil, 0, err
	}
	if crc32.Checksum(data, castagnoli) != binary.BigEndian.Uint32(h[4:]) {
		return nil, 0, errors.New("spool: bad checksum")
	}
	return data, off + headerLen + n, nil
}

// Len returns the number of records and their bytes.
func (s *Spool) Len() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.bytes
}

// Append adds records at the end, in order, synced once. It appends the
// leading records that fit and returns how many; when not all fit the
// error is ErrFull.
func (s *Spool) Append(recs ...[]byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	fit := 0
	n, total := s.n, s.bytes
	for _, r := range recs {
		if len(r) > maxRecord || (s.maxN > 0 && n+1 > s.maxN) || (s.maxBytes > 0 && total+int64(len(r)) > s.maxBytes) {
			break
		}
		var h [headerLen]byte
		binary.BigEndian.PutUint32(h[:4], uint32(len(r)))
		binary.BigEndian.PutUint32(h[4:], crc32.Checksum(r, castagnoli))
		buf.Write(h[:])
		buf.Write(r)
		n++
		total += int64(len(r))
		fit++
	}
	if fit > 0 {
		if _, err := s.f.WriteAt(buf.Bytes(), s.end); err != nil {
			_ = s.f.Truncate(s.end)
			return 0, fmt.Errorf("spool: append: %w", err)
		}
		if err := s.f.Sync(); err != nil {
			return 0, fmt.Errorf("spool: append: %w", err)
		}
		s.end += int64(buf.Len())
		s.n, s.bytes = n, total
	}
	if fit < len(recs) {
		return fit, ErrFull
	}
	return fit, nil
}

// Peek returns up to max records from the front, oldest first.
func (s *Spool) Peek(max int) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Record
	off := s.head
	for off < s.end && len(out) < max {
		data, next, err := s.readAt(off, s.end)
		if err != nil {
			return out, fmt.Errorf("spool: read: %w", err)
		}
		out = append(out, Record{Seq: uint64(next), Data: data})
		off = next
	}
	return out, nil
}

// Remove deletes the records up to and including the one with sequence
// number seq (records a Peek returned and that were delivered).
func (s *Spool) Remove(seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	upTo := int64(seq)
	if upTo > s.end {
		upTo = s.end
	}
	off := s.head
	for off < upTo {
		data, next, err := s.readAt(off, s.end)
		if err != nil {
			return fmt.Errorf("spool: remove: %w", err)
		}
		s.n--
		s.bytes -= int64(len(data))
		off = next
	}
	s.head = off
	switch {
	case s.head == s.end:
		// Empty: start the file over.
		if err := s.f.Truncate(0); err != nil {
			return fmt.Errorf("spool: remove: %w", err)
		}
		s.head, s.end = 0, 0
	case s.head > compactAt && s.head > (s.end-s.head):
		if err := s.compact(); err != nil {
			return err
		}
	}
	return s.writeHead()
}

// compact rewrites the file without the removed prefix.
func (s *Spool) compact() error {
	tmp := s.path + ".compact"
	nf, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("spool: compact: %w", err)
	}
	if _, err := io.Copy(nf, io.NewSectionReader(s.f, s.head, s.end-s.head)); err != nil {
		nf.Close()
		os.Remove(tmp)
		return fmt.Errorf("spool: compact: %w", err)
	}
	if err := nf.Sync(); err != nil {
		nf.Close()
		os.Remove(tmp)
		return fmt.Errorf("spool: compact: %w", err)
	}
	// The head file must never point past the new file's records: zero
	// it first (an old head over a new file would skip records).
	s.end -= s.head
	s.head = 0
	if err := s.writeHead(); err != nil {
		nf.Close()
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		nf.Close()
		return fmt.Errorf("spool: compact: %w", err)
	}
	s.f.Close()
	s.f = nf
	return nil
}

// writeHead saves the head offset atomically.
func (s *Spool) writeHead() error {
	tmp := s.path + ".head.tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(s.head, 10)+"\n"), 0o600); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(tmp, s.path+".head"); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// Close closes the file.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Close()
}

package spool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSpool(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	s, err := Open(path, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Append([]byte("aa"), []byte("bb")); n != 2 || err != nil {
		t.Fatalf("Append = %d, %v", n, err)
	}
	// The byte bound: 4 + 5 fits, 4 + 5 + 3 does not.
	if n, err := s.Append([]byte("ccccc"), []byte("ddd")); n != 1 || !errors.Is(err, ErrFull) {
		t.Fatalf("Append past the byte bound = %d, %v", n, err)
	}
	if n, b := s.Len(); n != 3 || b != 9 {
		t.Fatalf("Len = %d, %d", n, b)
	}
	recs, err := s.Peek(2)
	if err != nil || len(recs) != 2 || string(recs[0].Data) != "aa" || string(recs[1].Data) != "bb" {
		t.Fatalf("Peek = %v, %v", recs, err)
	}
	if err := s.Remove(recs[1].Seq); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened: what is left, in order, with its size counted.
	s, err = Open(path, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, b := s.Len(); n != 1 || b != 5 {
		t.Fatalf("Len after reopen = %d, %d", n, b)
	}
	if n, err := s.Append([]byte("e"), []byte("f")); n != 1 || !errors.Is(err, ErrFull) {
		t.Fatalf("Append past the record bound = %d, %v", n, err)
	}
	recs, _ = s.Peek(10)
	if len(recs) != 2 || string(recs[0].Data) != "ccccc" || string(recs[1].Data) != "e" || recs[0].Seq >= recs[1].Seq {
		t.Fatalf("Peek after reopen = %v", recs)
	}
}

// TestSpoolTornAndCompact: a torn record at the end (a crash mid-append)
// is cut at the next open; a large removed prefix is compacted away
// without losing or reordering what is left.
func TestSpoolTornAndCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.spool")
	s, err := Open(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 1<<20)
	for i := 0; i < 20; i++ {
		big[0] = byte(i)
		if _, err := s.Append(append([]byte(nil), big...)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 0, 9, 1, 2}) // a torn header
	f.Close()
	s, err = Open(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.Len(); n != 20 {
		t.Fatalf("records after a torn append: %d", n)
	}
	recs, err := s.Peek(18)
	if err != nil || len(recs) != 18 {
		t.Fatalf("Peek = %d, %v", len(recs), err)
	}
	if err := s.Remove(recs[17].Seq); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Size() > 3<<20 {
		t.Fatalf("not compacted: %d bytes", fi.Size())
	}
	if _, err := s.Append([]byte("tail")); err != nil {
		t.Fatal(err)
	}
	recs, err = s.Peek(10)
	if err != nil || len(recs) != 3 || recs[0].Data[0] != 18 || recs[1].Data[0] != 19 || string(recs[2].Data) != "tail" {
		t.Fatalf("after compaction: %d records, %v", len(recs), err)
	}
}

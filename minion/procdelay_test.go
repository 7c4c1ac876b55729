package minion

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestProcDelay: a job's proc file is written after Options.ProcDelay (the
// default 20 ms when unset), never before, and not at all for a job that
// ended sooner.
func TestProcDelay(t *testing.T) {
	cases := []struct {
		name  string
		delay time.Duration
		end   bool // the job ends before the delay
	}{
		{"default", 0, false},
		{"a proxy's longer delay", 400 * time.Millisecond, false},
		{"ended first", time.Hour, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &Minion{procDelay: tc.delay, log: slog.New(slog.DiscardHandler)}
			path := filepath.Join(t.TempDir(), "proc")
			start := time.Now()
			pf := m.writeProcLater(path, func() []byte { return []byte("data") })
			if tc.end {
				pf.done()
				if _, err := os.Stat(path); err == nil {
					t.Fatal("a proc file for a job that ended first")
				}
				return
			}
			testutil.Eventually(t, wait, func() bool { _, err := os.Stat(path); return err == nil }, "the proc file")
			want := tc.delay
			if want == 0 {
				want = procDelay
			}
			if el := time.Since(start); el < want {
				t.Fatalf("proc file written after %v, before the delay %v", el, want)
			}
			pf.done()
		})
	}
}

// TestProcFileDataNotKept: the proc file of a job with scalar arguments is
// encoded for the write and not kept by the job (a find_job naming 10,000
// minions made every device keep ~70 KB); a job encoded at its start
// (mutable arguments) writes that encoding; both decode to the proc data,
// and later readers (saltutil.running) still get it.
func TestProcFileDataNotKept(t *testing.T) {
	tgt := make([]any, 1000)
	for i := range tgt {
		tgt[i] = fmt.Sprintf("sw%d", i)
	}
	cases := []struct {
		name string
		arg  []any
		kept bool
	}{
		{"scalar arguments", []any{"20261128123343146227"}, false},
		{"a keyword map", []any{payload.NewMap("test", true, "__kwarg__", true)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proc := payload.NewMap("pid", int64(1), "fun", "saltutil.find_job", "arg", tc.arg, "tgt", tgt, "tgt_type", "list", "jid", "1")
			j := &job{jid: "1", proc: proc}
			j.encodeNowIfMutable(tc.arg)
			b := j.procFileData()
			got, err := payload.UnmarshalMap(b)
			if err != nil {
				t.Fatal(err)
			}
			if l, _ := got.Get("tgt"); len(l.([]any)) != len(tgt) {
				t.Fatalf("proc file tgt: %d ids", len(l.([]any)))
			}
			if kept := j.procEnc != nil; kept != tc.kept {
				t.Fatalf("encoding kept by the job: %v, want %v", kept, tc.kept)
			}
			if again := j.procData(); !bytes.Equal(again, b) {
				t.Fatal("procData differs from the proc file")
			}
		})
	}
}

// TestProcFilesShared: jobs of several identities with one jid and one
// cachedir (a proxy's devices) write the proc file once: the first job
// past the delay writes it, the others only hold it, and it is removed
// when the last of them ends, whatever the order; a different path is
// written on its own; without a shared table each job writes and
// removes its own.
func TestProcFilesShared(t *testing.T) {
	cases := []struct {
		name   string
		shared bool
		order  []int // the order the three jobs end
	}{
		{"shared, first writer ends first", true, []int{0, 1, 2}},
		{"shared, first writer ends last", true, []int{2, 1, 0}},
		{"not shared", false, []int{1, 0, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var table *ProcFiles
			if tc.shared {
				table = &ProcFiles{}
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "20261128000000000001")
			var writes atomic.Int64
			pfs := make([]*procFile, 3)
			for i := range pfs {
				m := &Minion{procDelay: time.Millisecond, procFiles: table, log: slog.New(slog.DiscardHandler)}
				pfs[i] = m.writeProcLater(path, func() []byte { writes.Add(1); return fmt.Appendf(nil, "job %d", i) })
			}
			other := (&Minion{procDelay: time.Millisecond, procFiles: table, log: slog.New(slog.DiscardHandler)}).
				writeProcLater(filepath.Join(dir, "20261128000000000002"), func() []byte { writes.Add(1); return []byte("other") })
			testutil.Eventually(t, wait, func() bool {
				for _, pf := range append(pfs, other) {
					pf.mu.Lock()
					w := pf.written
					pf.mu.Unlock()
					if !w {
						return false
					}
				}
				return true
			}, "every job past its proc delay")
			want := int64(4)
			if tc.shared {
				want = 2
			}
			if got := writes.Load(); got != want {
				t.Fatalf("%d proc files encoded and written, want %d", got, want)
			}
			for k, i := range tc.order {
				pfs[i].done()
				_, err := os.Stat(path)
				if last := k == len(tc.order)-1; tc.shared && (err == nil) == last {
					t.Fatalf("after %d of 3 jobs ended the shared proc file exists: %v", k+1, err == nil)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "20261128000000000002")); err != nil {
				t.Fatalf("the other jid's proc file: %v", err)
			}
			other.done()
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("proc files left: %v", ents)
			}
		})
	}
}

package minion

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
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

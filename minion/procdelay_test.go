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
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "proc"), 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "proc", "20261129180000000000")
			start := time.Now()
			pf := m.writeProcLater(dir, filepath.Base(path), func() []byte { return []byte("data") })
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

// TestProcFileDataNotKept: the proc file of a job is encoded for the
// write and not kept by the job (a find_job naming 10,000 minions made
// every device keep ~70 KB), also when its arguments hold a map: those
// are copied into the proc data at the start, so the binder taking
// __kwarg__ out of the job's own map does not change the proc file (nor
// race with its encoding); the proc file decodes to the proc data as the
// job started, and later readers (saltutil.running) still get it.
func TestProcFileDataNotKept(t *testing.T) {
	tgt := make([]any, 1000)
	for i := range tgt {
		tgt[i] = fmt.Sprintf("sw%d", i)
	}
	cases := []struct {
		name string
		arg  []any
	}{
		{"scalar arguments", []any{"20261128123343146227"}},
		{"a keyword map", []any{payload.NewMap("test", true, "__kwarg__", true)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proc := payload.NewMap("pid", int64(1), "fun", "saltutil.find_job", "arg", tc.arg, "tgt", tgt, "tgt_type", "list", "jid", "1")
			j := &job{jid: "1", proc: proc}
			j.isolateMutableArgs("arg", tc.arg)
			if j.procEnc != nil {
				t.Fatal("the proc data was encoded at the start")
			}
			if kw, ok := tc.arg[0].(*payload.Map); ok {
				kw.Delete("__kwarg__") // what the binder does to the job's own map
			}
			b := j.procFileData()
			got, err := payload.UnmarshalMap(b)
			if err != nil {
				t.Fatal(err)
			}
			if l, _ := got.Get("tgt"); len(l.([]any)) != len(tgt) {
				t.Fatalf("proc file tgt: %d ids", len(l.([]any)))
			}
			if j.procEnc != nil {
				t.Fatal("the proc file's encoding is kept by the job")
			}
			if a, _ := got.Get("arg"); len(a.([]any)) == 1 {
				if kw, ok := a.([]any)[0].(*payload.Map); ok && !kw.Has("__kwarg__") {
					t.Fatal("the proc file lost __kwarg__: it shares the map the binder changes")
				}
			}
			if again := j.procData(); !bytes.Equal(again, b) {
				t.Fatal("procData differs from the proc file")
			}
		})
	}
}

// TestSharedProcEncodedOnce: the identities of a swarm or fleet running
// the same publish share one proc data encoding (the same bytes, made
// once), equal to the job's own encoding; without a shared encoding each
// job encodes its own.
func TestSharedProcEncodedOnce(t *testing.T) {
	tgt := make([]any, 1000)
	for i := range tgt {
		tgt[i] = fmt.Sprintf("sw%d", i)
	}
	newJob := func(shared *sharedProc) *job {
		arg := []any{payload.NewMap("text", "ntp server 10.0.0.1", "__kwarg__", true)}
		proc := payload.NewMap("pid", int64(1), "fun", "net.load_config", "arg", arg, "tgt", tgt, "tgt_type", "list", "jid", "1")
		j := &job{jid: "1", proc: proc, shared: shared}
		j.isolateMutableArgs("arg", arg)
		return j
	}
	want, err := payload.Marshal(newJob(nil).proc)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		shared *sharedProc
		same   bool // the jobs return the very same bytes
	}{
		{"shared", &sharedProc{}, true},
		{"own", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newJob(tc.shared), newJob(tc.shared)
			fa, fb := a.procFileData(), b.procData()
			if !bytes.Equal(fa, want) || !bytes.Equal(fb, want) {
				t.Fatalf("proc data differ from the job's own encoding")
			}
			if same := &fa[0] == &fb[0]; same != tc.same {
				t.Fatalf("the two jobs share the encoding: %v, want %v", same, tc.same)
			}
		})
	}
}

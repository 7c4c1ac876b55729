package jobcache

import (
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/gsalt/gsalt/wire/payload"
)

// logEntry is one record of a job's log as the file holds it.
type logEntry struct {
	seq    uint64
	minion string
	kind   byte
	ret    string
}

// readLog returns the records of job jid's log in key order.
func readLog(t *testing.T, c *Cache, jid string) []logEntry {
	t.Helper()
	var out []logEntry
	err := c.db.View(func(tx *bbolt.Tx) error {
		jb := tx.Bucket(bucketJobs).Bucket([]byte(jid))
		if jb == nil {
			return fmt.Errorf("no job %s", jid)
		}
		if jb.Bucket(keyReturns) != nil {
			return fmt.Errorf("job %s has a returns bucket (the layout before the log)", jid)
		}
		lb := jb.Bucket(keyLog)
		if lb == nil {
			return nil
		}
		return lb.ForEach(func(k, v []byte) error {
			kind, id, ret, err := splitRecord(v)
			if err != nil {
				return err
			}
			m, err := payload.UnmarshalMap(append([]byte(nil), ret...))
			if err != nil {
				return err
			}
			out = append(out, logEntry{seq: seqOf(k), minion: string(id), kind: kind, ret: m.Str("return")})
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func openTemp(t *testing.T) (*Cache, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.db")
	c, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}

// TestReturnLog: returns are kept in the order they arrived, one record a
// minion; a signed return replaces an unsigned one in its place; a
// second return is refused, also after a reopen (the index of returns
// seen is rebuilt from the log) and when every minion's id has the same
// hash (the index then finds records by reading the log).
func TestReturnLog(t *testing.T) {
	for _, collide := range []bool{false, true} {
		t.Run(fmt.Sprintf("collide=%v", collide), func(t *testing.T) {
			c, path := openTemp(t)
			setHash := func(c *Cache) {
				if collide {
					c.seen.hash = func(maphash.Seed, string) uint64 { return 7 }
				}
			}
			setHash(c)
			const jid = "20261129000000000001"
			save := func(c *Cache, minion, ret string, signed bool) error {
				return c.SaveReturnSigned(jid, minion, payload.NewMap("return", ret), signed)
			}
			for _, w := range []struct {
				minion, ret string
				signed      bool
				want        error
			}{
				{"m3", "a", false, nil},
				{"m1", "b", true, nil},
				{"m2", "c", false, nil},
				{"m3", "d", false, ErrDuplicate},
				{"m1", "e", true, ErrDuplicate},
				{"m1", "f", false, ErrDuplicate},
				{"m3", "g", true, nil}, // signed over unsigned: replaces
				{"m3", "h", true, ErrDuplicate},
			} {
				if err := save(c, w.minion, w.ret, w.signed); !errors.Is(err, w.want) || (w.want == nil && err != nil) {
					t.Fatalf("return %s of %s (signed %v): %v, want %v", w.ret, w.minion, w.signed, err, w.want)
				}
			}
			want := []logEntry{{1, "m3", recSigned, "g"}, {2, "m1", recSigned, "b"}, {3, "m2", recUnsigned, "c"}}
			check := func(when string, c *Cache, want []logEntry) {
				t.Helper()
				got := readLog(t, c, jid)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s: log %v, want %v", when, got, want)
				}
				j, err := c.Get(jid)
				if err != nil {
					t.Fatal(err)
				}
				if len(j.Returns) != len(want) {
					t.Fatalf("%s: Get: %d returns, want %d", when, len(j.Returns), len(want))
				}
				for _, e := range want {
					if got := j.Returns[e.minion].Str("return"); got != e.ret {
						t.Fatalf("%s: Get: return of %s %q, want %q", when, e.minion, got, e.ret)
					}
				}
			}
			check("open", c, want)

			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c2, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			setHash(c2)
			for _, w := range []struct {
				minion string
				signed bool
				want   error
			}{{"m3", true, ErrDuplicate}, {"m1", false, ErrDuplicate}, {"m2", false, ErrDuplicate}, {"m2", true, nil}, {"m4", false, nil}} {
				if err := save(c2, w.minion, "x", w.signed); !errors.Is(err, w.want) || (w.want == nil && err != nil) {
					t.Fatalf("after reopen, return of %s (signed %v): %v, want %v", w.minion, w.signed, err, w.want)
				}
			}
			want[2] = logEntry{3, "m2", recSigned, "x"}
			check("reopened", c2, append(want, logEntry{4, "m4", recUnsigned, "x"}))
		})
	}
}

// TestSeenIndexBound: past its bound the index forgets the jobs used least
// recently; a return for a forgotten job is still refused as a duplicate
// (the job's log is read again).
func TestSeenIndexBound(t *testing.T) {
	c, _ := openTemp(t)
	c.seen.max = 10
	jids := make([]string, 8)
	for i := range jids {
		jids[i] = fmt.Sprintf("202611290000000000%02d", i)
		for m := range 4 {
			if err := c.SaveReturn(jids[i], fmt.Sprintf("m%d", m), payload.NewMap("return", true)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if c.seen.total > c.seen.max+4 || len(c.seen.jobs) >= len(jids) {
		t.Fatalf("index holds %d minions of %d jobs; bound %d", c.seen.total, len(c.seen.jobs), c.seen.max)
	}
	for _, jid := range jids {
		if err := c.SaveReturn(jid, "m2", payload.NewMap("return", false)); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("job %s: second return %v, want ErrDuplicate", jid, err)
		}
	}
}

// TestSeenIndexRollback: a transaction that is rolled back leaves the
// index as it was, and a batch in which a write fails saves the others
// once (rerun in another transaction) and still refuses their second
// returns.
func TestSeenIndexRollback(t *testing.T) {
	c, _ := openTemp(t)
	const jid = "20261129000000000001"
	if err := c.SaveReturn(jid, "m1", payload.NewMap("return", 1)); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string { return fmt.Sprint(c.seen.total, len(c.seen.jobs), c.seen.jobs[jid].ids) }
	before := snapshot()
	boom := errors.New("boom")
	op := func(minion string) writeOp {
		fn, err := c.returnTx(jid, minion, payload.NewMap("return", minion), false)
		if err != nil {
			t.Fatal(err)
		}
		return writeOp{fn: fn, err: make(chan error, 1)}
	}
	// A transaction that changes the index, then fails.
	other, _ := c.returnTx("20261129000000000002", "m9", payload.NewMap("return", 9), false)
	mine, _ := c.returnTx(jid, "m2", payload.NewMap("return", 2), false)
	err := c.safeUpdate(func(tx *bbolt.Tx) error {
		if err := other(tx); err != nil {
			return err
		}
		if err := mine(tx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if after := snapshot(); after != before {
		t.Fatalf("index after a rollback: %s, want %s", after, before)
	}

	fail := writeOp{fn: func(*bbolt.Tx) error { return boom }, err: make(chan error, 1)}
	ops := []writeOp{op("m2"), fail, op("m3")}
	c.runBatch(ops)
	for i, want := range []error{nil, boom, nil} {
		if err := <-ops[i].err; !errors.Is(err, want) || (want == nil && err != nil) {
			t.Fatalf("write %d: %v, want %v", i, err, want)
		}
	}
	for _, m := range []string{"m1", "m2", "m3"} {
		if err := c.SaveReturn(jid, m, payload.NewMap("return", "again")); !errors.Is(err, ErrDuplicate) {
			t.Fatalf("second return of %s: %v, want ErrDuplicate", m, err)
		}
	}
	if got := readLog(t, c, jid); len(got) != 3 {
		t.Fatalf("log %v, want m1, m2 and m3 once each", got)
	}
}

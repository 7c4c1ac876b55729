package jobcache

import (
	"errors"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestDuplicateInBatch: a duplicate return in a batch of the writer is
// refused alone: the first return of the minion is the one kept, the
// other writes of the batch are committed in the same transaction, each
// write runs once, and a batch of refused returns commits nothing.
func TestDuplicateInBatch(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "jobs.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const jid = "20261129000000000001"
	runs := map[string]int{}
	op := func(name, minion string) writeOp {
		fn, err := c.returnTx(jid, minion, payload.NewMap("return", name), false)
		if err != nil {
			t.Fatal(err)
		}
		return writeOp{fn: func(tx *bbolt.Tx) error { runs[name]++; return fn(tx) }, err: make(chan error, 1)}
	}
	// The writer goroutine is idle: runBatch is called here as it would
	// call it for three returns queued together.
	ops := []writeOp{op("first", "m1"), op("second", "m1"), op("other", "m2")}
	commits := c.commits.Load()
	c.runBatch(ops)
	for i, want := range []error{nil, ErrDuplicate, nil} {
		if err := <-ops[i].err; !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("write %d: %v, want %v", i, err, want)
		}
	}
	if n := c.commits.Load() - commits; n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	for name, n := range runs {
		if n != 1 {
			t.Errorf("write %q ran %d times, want once", name, n)
		}
	}
	j, err := c.Get(jid)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.Returns["m1"].Str("return"); got != "first" || j.Returns["m2"] == nil {
		t.Fatalf("returns %v: want m1's first and m2's", j.Returns)
	}

	ops = []writeOp{op("again1", "m1"), op("again2", "m2")}
	commits, before := c.commits.Load(), c.db.Stats().TxStats
	c.runBatch(ops)
	for i := range ops {
		if err := <-ops[i].err; !errors.Is(err, ErrDuplicate) {
			t.Errorf("refused batch, write %d: %v", i, err)
		}
	}
	after := c.db.Stats().TxStats
	if n, w := c.commits.Load()-commits, after.GetWrite()-before.GetWrite(); n != 0 || w != 0 {
		t.Errorf("a batch of refused writes: %d commits, %d pages written; want none", n, w)
	}
}

package jobcache_test

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestSaveLoadQueued: a queued load commits before the returns saved
// after the call (a reader that sees a return sees the load), its outcome
// reaches done once, and it is counted like a waited write.
func TestSaveLoadQueued(t *testing.T) {
	// Both ways of saving a load without waiting at once: SaveLoadQueued
	// (outcome to a callback) and SaveLoadStart (outcome from the wait
	// function, called after the job's return was sent).
	for _, mode := range []string{"queued", "start"} {
		t.Run(mode, func(t *testing.T) { testSaveLoadBeforeReturns(t, mode) })
	}
}

func testSaveLoadBeforeReturns(t *testing.T, mode string) {
	c, err := jobcache.Open(filepath.Join(t.TempDir(), "jobs.db"), jobcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 300
	before := c.Stats()
	var done atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		jid := c.NewJID()
		load := payload.NewMap("cmd", "publish", "tgt", "m1", "fun", "test.ping", "arg", []any{}, "jid", jid, "n", i)
		finished := func(err error) {
			if err != nil {
				t.Errorf("%s load %s: %v", mode, jid, err)
			}
			done.Add(1)
		}
		wait := func() {}
		if mode == "queued" {
			if err := c.SaveLoadQueued(jid, load, []string{"m1"}, finished); err != nil {
				t.Fatal(err)
			}
		} else {
			w := c.SaveLoadStart(jid, load, []string{"m1"})
			wait = func() { finished(w()) }
		}
		// The minion's return, as soon as the publish left.
		wg.Go(func() {
			if err := c.SaveReturn(jid, "m1", payload.NewMap("return", true)); err != nil {
				t.Error(err)
				return
			}
			job, err := c.Get(jid)
			if err != nil {
				t.Error(err)
				return
			}
			if job.Load == nil || job.Load.Str("fun") != "test.ping" || len(job.Minions) != 1 || len(job.Returns) != 1 {
				t.Errorf("job %s after its return: load %v, minions %v, %d returns", jid, job.Load, job.Minions, len(job.Returns))
			}
		})
		wait()
	}
	wg.Wait()
	if got := done.Load(); got != n {
		t.Errorf("%d loads finished, want %d (every load committed before its return)", got, n)
	}
	if w := c.Stats().Writes - before.Writes; w != 2*n {
		t.Errorf("%d writes counted, want %d", w, 2*n)
	}
}

func TestSaveLoadQueuedRefused(t *testing.T) {
	c, err := jobcache.Open(filepath.Join(t.TempDir(), "jobs.db"), jobcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	called := false
	if err := c.SaveLoadQueued("req", payload.NewMap(), nil, func(error) { called = true }); !errors.Is(err, jobcache.ErrBadJID) {
		t.Errorf("bad jid: %v", err)
	}
	jid := c.NewJID()
	c.Close()
	if err := c.SaveLoadQueued(jid, payload.NewMap(), nil, func(error) { called = true }); !errors.Is(err, jobcache.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if called {
		t.Error("done called for a refused write")
	}
}

func TestSaveLoadStartRefused(t *testing.T) {
	c, err := jobcache.Open(filepath.Join(t.TempDir(), "jobs.db"), jobcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SaveLoadStart("req", payload.NewMap(), nil)(); !errors.Is(err, jobcache.ErrBadJID) {
		t.Errorf("bad jid: %v", err)
	}
	jid := c.NewJID()
	c.Close()
	if err := c.SaveLoadStart(jid, payload.NewMap(), nil)(); !errors.Is(err, jobcache.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

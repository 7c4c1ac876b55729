package jobcache_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	saltjid "github.com/gsalt/gsalt/internal/jid"

	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestJIDs(t *testing.T) {
	ts := time.Date(2026, 11, 22, 3, 1, 18, 135185000, time.UTC)
	if got := saltjid.Format(ts); got != "20261122030118135185" {
		t.Fatalf("FormatJID %s", got)
	}
	back, err := saltjid.Parse("20261122030118135185")
	if err != nil || !back.Equal(ts) {
		t.Fatalf("ParseJID %v %v", back, err)
	}
	for s, want := range map[string]bool{"20261122030118135185": true, "20261122030118135185_123": true, "2026112203011813518": false, "20261122030118135185x": false, "2026112203011813518a": false, "req": false} {
		if saltjid.Is(s) != want {
			t.Errorf("IsJID(%q) != %v", s, want)
		}
	}
	frozen := func() time.Time { return ts }
	c, err := jobcache.Open(filepath.Join(t.TempDir(), "jobs.db"), jobcache.Options{Now: frozen})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := map[string]bool{}
	prev := ""
	for i := 0; i < 1000; i++ {
		j := c.NewJID()
		if seen[j] || j <= prev || !saltjid.Is(j) {
			t.Fatalf("jid %s after %s", j, prev)
		}
		seen[j], prev = true, j
	}
}

func TestReturnsAndPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	c, err := jobcache.Open(path, jobcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jid := c.NewJID()
	load := payload.NewMap("cmd", "publish", "tgt", "*", "fun", "test.ping", "arg", []any{}, "tgt_type", "glob", "jid", jid, "user", "root")
	if err := c.SaveLoad(jid, load, []string{"m2", "m1"}); err != nil {
		t.Fatal(err)
	}
	// Many minions return at once: nothing is lost.
	const n = 500
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- c.SaveReturn(jid, fmt.Sprintf("m%03d", i), payload.NewMap("return", true, "retcode", 0, "success", true))
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SaveReturn(jid, "m007", payload.NewMap("return", false)); !errors.Is(err, jobcache.ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := c.SaveReturn("req", "m1", payload.NewMap()); !errors.Is(err, jobcache.ErrBadJID) {
		t.Fatalf("bad jid: %v", err)
	}
	c.Close()

	c, err = jobcache.Open(path, jobcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	job, err := c.Get(jid)
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Returns) != n || job.Load.Str("fun") != "test.ping" || len(job.Minions) != 2 || job.Minions[0] != "m1" {
		t.Fatalf("job after reopen: %d returns, load %v, minions %v", len(job.Returns), job.Load.Keys(), job.Minions)
	}
	if !job.Returns["m007"].Bool("return") {
		t.Fatal("duplicate overwrote the first return")
	}
	if _, err := c.Get("20000101000000000000"); !errors.Is(err, jobcache.ErrNoJob) {
		t.Fatalf("missing job: %v", err)
	}
}

func TestPrune(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	c, err := jobcache.Open(filepath.Join(t.TempDir(), "jobs.db"), jobcache.Options{Keep: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	old := saltjid.Format(now.Add(-2 * time.Hour))
	fresh := saltjid.Format(now.Add(-time.Minute))
	for _, j := range []string{old, fresh} {
		if err := c.SaveLoad(j, payload.NewMap("fun", "test.ping"), []string{"m1"}); err != nil {
			t.Fatal(err)
		}
		if err := c.SaveReturn(j, "m1", payload.NewMap("return", true)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := c.Prune()
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	if _, err := c.Get(old); !errors.Is(err, jobcache.ErrNoJob) {
		t.Fatal("old job kept")
	}
	jobs, _ := c.List()
	if len(jobs) != 1 || jobs[0].JID != fresh {
		t.Fatalf("left %v", jobs)
	}
}

// TestGroupCommit: a burst of returns is committed in a few transactions
// (a batch that found writes waiting lingers for the rest of the burst),
// and every write of it is stored.
func TestGroupCommit(t *testing.T) {
	c, err := jobcache.Open(filepath.Join(t.TempDir(), "jobs.db"), jobcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	jid := c.NewJID()
	const n = 200
	before := c.Stats()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := c.SaveReturn(jid, fmt.Sprintf("m%03d", i), payload.NewMap("return", true)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := c.Stats()
	if w := st.Writes - before.Writes; w != n {
		t.Fatalf("%d writes counted, want %d", w, n)
	}
	if k := st.Commits - before.Commits; k > n/8 {
		t.Errorf("%d writes took %d commits: not grouped", n, k)
	}
	job, err := c.Get(jid)
	if err != nil || len(job.Returns) != n {
		t.Fatalf("stored %d of %d returns (%v)", len(job.Returns), n, err)
	}
}

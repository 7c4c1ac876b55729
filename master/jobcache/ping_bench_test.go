package jobcache

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

// BenchmarkPing10k stores what a `'*' test.ping` to 10,000 minions puts in
// the job cache: the job's load with its 10,000 expected minions, then one
// return per minion, saved by 80 goroutines (the master's request workers)
// through the real writer, so commits batch the returns as the master's
// do. The returns come in a shuffled order (each commit then changes a
// page of the returns bucket for nearly every return) or in the order of
// the minion ids (a few pages a commit). One op is one whole ping. It
// reports, per commit of the writer, the bytes of pages bbolt wrote
// (TxStats.PageAlloc, the meta page aside) and the pages and pwrites, and
// the process CPU per return. The pruned variants first store 24 pings
// of a day before and prune them (keep_jobs_seconds), as a master's
// Maintenance does: the file then has thousands of free pages.
func BenchmarkPing10k(b *testing.B) {
	for _, shuffled := range []bool{true, false} {
		for _, pruned := range []bool{false, true} {
			name := "sorted"
			if shuffled {
				name = "shuffled"
			}
			if pruned {
				name += "-pruned"
			}
			b.Run(name, func(b *testing.B) { benchPing(b, shuffled, pruned) })
		}
	}
}

func benchPing(b *testing.B, shuffled, pruned bool) {
	const minions, workers = 10000, 80
	now := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)
	c, err := Open(filepath.Join(b.TempDir(), "jobs.db"), Options{Keep: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ids := make([]string, minions)
	for i := range ids {
		ids[i] = fmt.Sprintf("sw-%05d", i)
	}
	load := payload.NewMap("fun", "test.ping", "arg", []any{}, "tgt", "*", "tgt_type", "glob", "user", "root", "ret", "")
	ret := payload.NewMap("return", true, "retcode", int64(0), "success", true, "fun", "test.ping", "fun_args", []any{})
	rng := rand.New(rand.NewPCG(1, 2))
	ping := func(jid string) {
		if err := c.SaveLoad(jid, load, ids); err != nil {
			b.Fatal(err)
		}
		order := rng.Perm(minions)
		if !shuffled {
			slices.Sort(order)
		}
		next := make(chan string, minions)
		for _, i := range order {
			next <- ids[i]
		}
		close(next)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for id := range next {
					if err := c.SaveReturnSigned(jid, id, ret, false); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	if pruned {
		for i := range 24 {
			ping(fmt.Sprintf("20251231000000%06d", i))
		}
		if n, err := c.Prune(); err != nil || n != 24 {
			b.Fatalf("Prune() = %d, %v", n, err)
		}
	}
	// One ping before timing: the file holds a job of this size already.
	ping("20260101000000000000")
	s0, tx0, cpu0 := c.Stats(), c.db.Stats().TxStats, testutil.ProcessCPU()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ping(fmt.Sprintf("2026010100000%07d", i+1))
	}
	b.StopTimer()
	s1, tx1 := c.Stats(), c.db.Stats().TxStats
	d := tx1.Sub(&tx0)
	commits := float64(max(s1.Commits-s0.Commits, 1))
	b.ReportMetric(float64(s1.Writes-s0.Writes)/commits, "writes/commit")
	b.ReportMetric(float64(d.GetPageAlloc())/commits/1024, "KiB/commit")
	b.ReportMetric(float64(d.GetPageCount())/commits, "pagealloc/commit")
	b.ReportMetric(float64(d.GetWrite())/commits, "pwrite/commit")
	b.ReportMetric(float64((testutil.ProcessCPU()-cpu0).Microseconds())/float64(b.N*minions), "cpu-µs/return")
}

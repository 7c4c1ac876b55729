package jobcache_test

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/master/jobcache"
	"github.com/gsalt/gsalt/wire/payload"
)

// BenchmarkReactorJobWrites writes what a reactor's local jobs put in the
// cache (each job's load, queued, and one return, waited for) from 64
// goroutines at once, as the master's request workers do under
// bench-reactor.sh. It reports the writes per commit (each commit costs
// two fdatasyncs) and the process CPU per job.
func BenchmarkReactorJobWrites(b *testing.B) {
	c, err := jobcache.Open(filepath.Join(b.TempDir(), "jobs.db"), jobcache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	load := payload.NewMap("fun", "test.ping", "arg", []any{}, "tgt", "sw-0000", "tgt_type", "glob", "user", "root")
	ret := payload.NewMap("return", true, "retcode", int64(0), "success", true, "fun", "test.ping", "fun_args", []any{})
	const workers = 64
	jobs := make(chan string, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for jid := range jobs {
				if err := c.SaveLoadQueued(jid, load, []string{"sw-0000"}, func(error) {}); err != nil {
					b.Error(err)
				}
				if err := c.SaveReturn(jid, "sw-0000", ret); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	s0, cpu0 := c.Stats(), testutil.ProcessCPU()
	b.ResetTimer()
	for i := range b.N {
		jobs <- fmt.Sprintf("2026010100000%07d", i)
	}
	close(jobs)
	wg.Wait()
	s1 := c.Stats()
	b.ReportMetric(float64(s1.Writes-s0.Writes)/float64(max(s1.Commits-s0.Commits, 1)), "writes/commit")
	b.ReportMetric(float64((testutil.ProcessCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/job")
}

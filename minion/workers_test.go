package minion

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// TestJobWorkers: jobs never wait for each other (all of a burst run at
// once, more than maxIdle of them), finished workers wait for the next
// jobs (at most maxIdle) and take them instead of new goroutines, and
// they leave after idleFor or when the context ends.
func TestJobWorkers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		idleFor time.Duration
		cancel  bool // end the context instead of waiting idleFor
	}{
		{"idle timeout", time.Second, false},
		{"context ends", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const burst, maxIdle = 20, 4
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := newJobWorkers(ctx, maxIdle, tc.idleFor)
			release := make(chan struct{})
			var running, ran atomic.Int32
			var wg sync.WaitGroup
			for range burst {
				wg.Add(1)
				w.run(func() {
					defer wg.Done()
					running.Add(1)
					<-release
					ran.Add(1)
				})
			}
			testutil.Eventually(t, 5*time.Second, func() bool { return running.Load() == burst },
				"all jobs of a burst running at once")
			close(release)
			wg.Wait()
			// Every worker of the burst either waits or has left: one still
			// between its job and the idle count would take a place among
			// the waiting ones after the jobs below were handed out.
			testutil.Eventually(t, 5*time.Second, func() bool { return w.waiting() == maxIdle && w.live.Load() == maxIdle },
				"maxIdle workers waiting, the rest of the burst's gone")
			// The next jobs go to the waiting workers: while they run, none
			// is left waiting (new goroutines would have left them there).
			hold := make(chan struct{})
			var held sync.WaitGroup
			for range maxIdle {
				held.Add(1)
				w.run(func() {
					defer held.Done()
					running.Add(1)
					<-hold
				})
			}
			testutil.Eventually(t, 5*time.Second, func() bool { return running.Load() == burst+maxIdle },
				"the jobs handed to the waiting workers running")
			if n, l := w.waiting(), w.live.Load(); n != 0 || l != maxIdle {
				t.Errorf("%d workers waiting and %d live while %d jobs run: the jobs went to new goroutines", n, l, maxIdle)
			}
			close(hold)
			held.Wait()
			testutil.Eventually(t, 5*time.Second, func() bool { return w.waiting() == maxIdle },
				"the same workers waiting again")
			if tc.cancel {
				cancel()
			}
			testutil.Eventually(t, 5*time.Second, func() bool { return w.waiting() == 0 && w.live.Load() == 0 },
				"idle workers gone")
			if ran.Load() != burst {
				t.Fatalf("%d of %d jobs ran", ran.Load(), burst)
			}
			// With no worker waiting a job still runs at once.
			ok := make(chan struct{})
			w.run(func() { close(ok) })
			select {
			case <-ok:
			case <-time.After(testutil.Scale(5 * time.Second)):
				t.Fatal("a job with no waiting worker did not run")
			}
		})
	}
}

// deepJob recurses n frames of ~200 bytes each, as a return's encoding
// runs deep inside a job.
//
//go:noinline
func deepJob(n int) int {
	var pad [24]int
	pad[n%24] = n
	if n == 0 {
		return pad[0]
	}
	return deepJob(n-1) + pad[(n+1)%24]
}

// BenchmarkJobWorkersStack: jobs needing ~12 KiB of stack, each on a new
// worker goroutine (the pool keeps none, as when a publish to a
// 5,000-identity swarm starts more jobs at once than it keeps), with
// stackpad.Grow8K ("grown") and without ("small"): cpu-ns/op is the process's
// CPU per job.
func BenchmarkJobWorkersStack(b *testing.B) {
	for _, small := range []bool{false, true} {
		name := "grown"
		if small {
			name = "small"
		}
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := newJobWorkers(ctx, 0, time.Second)
			w.smallStack = small
			var wg sync.WaitGroup
			c0 := testutil.ProcessCPU()
			for b.Loop() {
				wg.Add(1)
				w.run(func() { deepJob(60); wg.Done() })
			}
			wg.Wait()
			b.ReportMetric(float64(testutil.ProcessCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkJobWorkersBurst: bursts of 5,000 jobs that all run at once (each
// waits until the whole burst was handed out, as a swarm's returns wait for
// the master's replies) on a pool that keeps 5,000 waiting workers between
// bursts, as a 5,000-identity swarm process's does. cpu-ns/op is the
// process's CPU per job: handing it out and the worker's wait.
func BenchmarkJobWorkersBurst(b *testing.B) {
	const burst = 5000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newJobWorkers(ctx, burst, time.Hour)
	round := func() {
		gate := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(burst)
		for range burst {
			w.run(func() {
				<-gate
				wg.Done()
			})
		}
		close(gate)
		wg.Wait()
	}
	round() // the workers exist
	testutil.Eventually(b, 10*time.Second, func() bool { return w.waiting() == burst }, "the first burst's workers waiting")
	b.ReportAllocs()
	c0 := testutil.ProcessCPU()
	b.ResetTimer()
	rounds := (b.N + burst - 1) / burst
	for range rounds {
		round()
		testutil.Eventually(b, 10*time.Second, func() bool { return w.waiting() == burst }, "the burst's workers waiting again")
	}
	b.StopTimer()
	b.ReportMetric(float64((testutil.ProcessCPU()-c0).Nanoseconds())/float64(rounds*burst), "cpu-ns/op")
}

// waiting is how many of w's workers wait for a job.
func (w *jobWorkers) waiting() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.idle)
}

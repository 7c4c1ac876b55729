package minion

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/internal/stackpad"
)

// jobWorkers runs the jobs of a swarm's identities on goroutines that are
// kept between jobs instead of one new goroutine per identity per job: a
// new goroutine starts with a small stack that a job's return (encode,
// encrypt, send) outgrows, and copying it was ~5% of a swarm's CPU. A job
// goes to a waiting worker when there is one, else to a new goroutine
// (which then stays as a worker), so jobs never wait for each other: as
// many run at once as before. At most maxIdle workers wait, each on a
// channel of its own (thousands selecting on shared channels, with a
// timer each, were ~5% of a 10,000-identity swarm's CPU); one timer
// retires those that waited idleFor, and all leave when ctx ends.
type jobWorkers struct {
	mu      sync.Mutex
	idle    []*worker   // waiting workers, the longest waiting first
	reaper  *time.Timer // retires the workers idle for idleFor; nil when none wait
	stopped bool        // ctx ended

	live    atomic.Int32 // worker goroutines, running a job or waiting
	maxIdle int
	idleFor time.Duration
	// smallStack leaves out the stack growth (BenchmarkJobWorkersStack's
	// baseline).
	smallStack bool
}

// worker is what one waiting worker goroutine receives on.
type worker struct {
	fns   chan func() // one slot: the next job, or nil to leave
	since time.Time   // when it began waiting
}

// Worker pool defaults: the most waiting workers a pool keeps unless it
// is given more, and how long one waits before it leaves. A swarm keeps up to one per identity: a job sent to all
// of them runs on thousands of workers at once (each waits for the
// master's reply), and with 256 kept most of them were new goroutines
// on every publish, their stacks grown again (stackpad.Grow8K).
const (
	jobWorkersMaxIdle = 256
	jobWorkersIdleFor = 30 * time.Second
)

func newJobWorkers(ctx context.Context, maxIdle int, idleFor time.Duration) *jobWorkers {
	w := &jobWorkers{maxIdle: maxIdle, idleFor: idleFor}
	context.AfterFunc(ctx, w.stop)
	return w
}

// run runs fn on the worker that began waiting last (its stack and
// caches the warmest) or a new goroutine; it never blocks.
func (w *jobWorkers) run(fn func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		wk := w.idle[n-1]
		w.idle[n-1] = nil
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		wk.fns <- fn // its slot is empty: it took its last job
		return
	}
	w.mu.Unlock()
	go w.loop(&worker{fns: make(chan func(), 1)}, fn)
}

// loop runs fn, then the jobs handed to it while it waits.
func (w *jobWorkers) loop(wk *worker, fn func()) {
	w.live.Add(1)
	defer w.live.Add(-1)
	for i := 0; ; i++ {
		if !w.smallStack {
			// Grow the stack before the job, while only this frame
			// is on it, not in the middle of the job: a job's return
			// is encoded ~30 frames deep, where the runtime copying
			// the stack (adjusting every frame) was 5.6% of a
			// 10,000-identity swarm's CPU in the 10k bench's profile.
			// 8 KiB doubles a new goroutine's first 8 KiB to 16 KiB;
			// a stack already large enough (a worker between jobs,
			// until the GC shrinks it) only has the frame cleared.
			stackpad.Grow8K(i)
		}
		fn()
		if !w.wait(wk) {
			return
		}
		if fn = <-wk.fns; fn == nil {
			return
		}
	}
}

// wait puts wk among the waiting workers; false when it must leave
// instead (maxIdle wait already, or ctx ended).
func (w *jobWorkers) wait(wk *worker) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || len(w.idle) >= w.maxIdle {
		return false
	}
	wk.since = time.Now()
	w.idle = append(w.idle, wk)
	if w.reaper == nil {
		w.reaper = time.AfterFunc(w.idleFor, w.reap)
	}
	return true
}

// reap retires the workers that have waited idleFor (the first ones) and
// sets the timer for the next.
func (w *jobWorkers) reap() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reaper == nil {
		return // stopped
	}
	now := time.Now()
	k := 0
	for k < len(w.idle) && now.Sub(w.idle[k].since) >= w.idleFor {
		w.idle[k].fns <- nil
		k++
	}
	n := copy(w.idle, w.idle[k:])
	clear(w.idle[n:])
	w.idle = w.idle[:n]
	if n == 0 {
		w.reaper = nil
		return
	}
	w.reaper.Reset(w.idle[0].since.Add(w.idleFor).Sub(now))
}

// stop lets every waiting worker leave, and the others when their job
// ends.
func (w *jobWorkers) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for _, wk := range w.idle {
		wk.fns <- nil
	}
	w.idle = nil
	if w.reaper != nil {
		w.reaper.Stop()
		w.reaper = nil
	}
}

// goJob runs fn in its own goroutine, or on the swarm's workers.
func (m *Minion) goJob(fn func()) {
	if m.workers != nil {
		m.workers.run(fn)
		return
	}
	go fn()
}

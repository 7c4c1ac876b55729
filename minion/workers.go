package minion

import (
	"context"
	"sync/atomic"
	"time"
)

// jobWorkers runs the jobs of a swarm's identities on goroutines that are
// kept between jobs instead of one new goroutine per identity per job: a
// new goroutine starts with a small stack that a job's return (encode,
// encrypt, send) outgrows, and copying it was ~5% of a swarm's CPU. A job
// goes to an idle worker when one waits, else to a new goroutine (which
// then stays as a worker), so jobs never wait for each other: as many run
// at once as before. At most maxIdle workers wait; each leaves after
// idleFor without a job, or when ctx ends.
type jobWorkers struct {
	ctx     context.Context
	work    chan func() // unbuffered: a send succeeds only with a waiting worker
	idle    atomic.Int32
	live    atomic.Int32 // worker goroutines, running a job or waiting
	maxIdle int32
	idleFor time.Duration
	// smallStack leaves out growStack (BenchmarkJobWorkersStack's
	// baseline).
	smallStack bool
}

// Worker pool defaults: at least this many waiting workers, kept for a
// few publishes. A swarm keeps up to one per identity: a job sent to all
// of them runs on thousands of workers at once (each waits for the
// master's reply), and with 256 kept most of them were new goroutines
// on every publish, their stacks grown again (growStack).
const (
	jobWorkersMaxIdle = 256
	jobWorkersIdleFor = 30 * time.Second
)

func newJobWorkers(ctx context.Context, maxIdle int, idleFor time.Duration) *jobWorkers {
	return &jobWorkers{ctx: ctx, work: make(chan func()), maxIdle: int32(maxIdle), idleFor: idleFor}
}

// run runs fn on a waiting worker or a new goroutine; it never blocks.
func (w *jobWorkers) run(fn func()) {
	select {
	case w.work <- fn:
	default:
		go w.loop(fn)
	}
}

// loop runs fn, then the jobs handed to it while it waits.
func (w *jobWorkers) loop(fn func()) {
	w.live.Add(1)
	defer w.live.Add(-1)
	var t *time.Timer
	for i := 0; ; i++ {
		if !w.smallStack {
			growStack(i)
		}
		fn()
		if w.idle.Add(1) > w.maxIdle {
			w.idle.Add(-1)
			return
		}
		if t == nil {
			t = time.NewTimer(w.idleFor)
		} else {
			t.Reset(w.idleFor)
		}
		select {
		case fn = <-w.work:
			w.idle.Add(-1)
			t.Stop()
		case <-t.C:
			w.idle.Add(-1)
			return
		case <-w.ctx.Done():
			w.idle.Add(-1)
			t.Stop()
			return
		}
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

// jobStackPad is the stack frame growStack takes: a goroutine's stack
// then holds it plus what is already in use, which doubles a new
// goroutine's first 8 KiB to 16 KiB.
const jobStackPad = 8 << 10

// growStack takes a jobStackPad frame, so a worker's stack grows before a
// job runs, while only the worker's own frame is on it, instead of in
// the middle of the job: a job's return is encoded ~30 frames deep, where
// the runtime copying the stack (adjusting every frame) was 5.6% of a
// 10,000-identity swarm's CPU in the 10k bench's profile. A stack that
// is already large enough (a worker between jobs, until the GC shrinks
// it) only has the frame cleared.
//
//go:noinline
func growStack(i int) byte {
	var pad [jobStackPad]byte
	pad[i%jobStackPad] = 1
	return pad[(i+1)%jobStackPad]
}

package schedule

import (
	"context"
	"time"
)

// Start runs the schedule until ctx ends: every loop_interval while jobs
// are scheduled. No goroutine runs while the schedule is empty; the loop
// starts when ManageSchedule adds a job or Wake is called (after a pillar
// refresh), so an idle minion, or a proxy serving thousands of devices,
// pays nothing for its schedulers.
func (m *Manager) Start(ctx context.Context) {
	m.ctx.Store(&ctx)
	m.poke()
}

// Run is Start, then waits for ctx to end.
func (m *Manager) Run(ctx context.Context) {
	m.Start(ctx)
	<-ctx.Done()
}

// Wake makes the scheduler look at the schedule again.
func (m *Manager) Wake() { m.poke() }

// poke starts the loop when there are jobs and it is not running, or
// wakes it. It never blocks and may be called with m.mu held.
func (m *Manager) poke() {
	p := m.ctx.Load()
	if p == nil {
		return
	}
	if m.looping.CompareAndSwap(false, true) {
		go m.loop(*p)
		return
	}
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// loop evaluates the schedule every loop_interval until ctx ends or the
// schedule is empty.
func (m *Manager) loop(ctx context.Context) {
	tick := time.NewTicker(m.loopInterval)
	defer tick.Stop()
	for {
		if len(m.Jobs()) == 0 {
			m.looping.Store(false)
			// A job added between the check and the store would find
			// the loop still marked running: look once more.
			if len(m.Jobs()) == 0 || !m.looping.CompareAndSwap(false, true) {
				return
			}
		}
		m.Eval(ctx, m.now())
		select {
		case <-ctx.Done():
			m.looping.Store(false)
			return
		case <-tick.C:
		case <-m.wake:
		}
	}
}

package schedule

import (
	"context"
	"time"
)

// Run evaluates the schedule every loop_interval until ctx ends. While no
// job is scheduled it sleeps until ManageSchedule changes the schedule or
// Wake is called (a pillar refresh may bring jobs), so an idle minion —
// or a proxy serving thousands of devices — costs one parked goroutine.
func (m *Manager) Run(ctx context.Context) {
	tick := time.NewTicker(m.loopInterval)
	defer tick.Stop()
	for {
		if len(m.Jobs()) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-m.wake:
			}
			continue
		}
		m.Eval(ctx, m.now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-m.wake:
		}
	}
}

// Wake makes Run look at the schedule again (after a pillar refresh).
func (m *Manager) Wake() { m.poke() }

// poke wakes Run without blocking.
func (m *Manager) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

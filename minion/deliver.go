package minion

import (
	"context"
	"sync"
)

// maxDeliverBacklog bounds the publishes a deliverer holds while one of
// them waits for a re-authentication (transport.DefaultSubQueue, the
// queue it replaces); more are dropped, as a full queue drops them.
const maxDeliverBacklog = 1000

// pushPublishes reports whether the minion's publishes are handled on the
// subscriber's reading goroutine (transport.SubOptions.Deliver) instead of
// being queued for recvLoop: for a swarm's identities, whose jobs run on
// the shared workers, this saves a goroutine hand-off per identity and
// publish. Not with process_count_max, whose wait in startJob would stop
// the connection's reads.
func (m *Minion) pushPublishes() bool {
	return m.workers != nil && m.optInt("process_count_max", -1) <= 0
}

// deliverer hands one link's publishes to handlePublish on the
// subscriber's reading goroutine (one at a time, in order). A publish that
// needs a re-authentication, a request to the master, is handled on a
// goroutine of its own, and the publishes received after it wait behind it
// in order (the serial check accepts only increasing serials) until the
// backlog is empty again.
type deliverer struct {
	m   *Minion
	ctx context.Context // the jobs' context (serveLink's jobCtx)

	mu       sync.Mutex
	backlog  [][][]byte
	draining bool
}

// deliver is the subscription's Deliver function.
func (d *deliverer) deliver(frames [][]byte) {
	d.mu.Lock()
	if d.draining {
		if len(d.backlog) < maxDeliverBacklog {
			d.backlog = append(d.backlog, frames)
		} else {
			d.m.log.Warn("dropping a publish: too many wait for a re-authentication", "waiting", len(d.backlog))
		}
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	// Only deliver sets draining, so it is still false here.
	if d.m.handlePublish(d.ctx, frames, false) {
		return
	}
	d.mu.Lock()
	d.draining = true
	d.backlog = append(d.backlog, frames)
	d.mu.Unlock()
	// Like startJob's from recvLoop, this Add happens before serveLink
	// returns (its sub.Close waits for the reads that call deliver), so
	// before the minion's shutdown waits for the group.
	d.m.wg.Add(1)
	go d.drain()
}

// drain handles the backlog, re-authenticating where needed, until it is
// empty.
func (d *deliverer) drain() {
	defer d.m.wg.Done()
	for {
		d.mu.Lock()
		if len(d.backlog) == 0 {
			d.draining, d.backlog = false, nil
			d.mu.Unlock()
			return
		}
		frames := d.backlog[0]
		d.backlog[0] = nil
		d.backlog = d.backlog[1:]
		d.mu.Unlock()
		d.m.handlePublish(d.ctx, frames, true)
	}
}

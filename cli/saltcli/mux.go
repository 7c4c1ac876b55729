package saltcli

import (
	"context"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/event"
)

// muxEarlyMax bounds the events a jobMux keeps for jids nobody follows
// yet (a job's returns may arrive before its publish reply); beyond it
// the oldest jid's events are dropped.
const muxEarlyMax = 1 << 14

// jobMux shares one event-bus subscription between the jobs of a batch,
// as Salt's LocalClient shares its one event listener between the
// iterators of a batch: each salt/job/<jid>/... event goes to the route
// following that jid. A subscription per sub-job would cost the master a
// connection, a probe and a copy of every event per running sub-job.
type jobMux struct {
	mu     sync.Mutex
	routes map[string]*muxRoute
	early  map[string][]event.Event
	order  []string // jids in early, oldest first
	nEarly int
	closed map[string]bool // unfollowed jids: their late events are dropped
}

// muxRouteMax bounds the events queued for one route whose watcher
// lags; beyond it new events are dropped (a sub-job sees at most a few
// events per minion).
const muxRouteMax = 1 << 16

// muxRoute is one watcher's share: the events of the jids it follows,
// queued in arrival order and handed to ch by a forwarding goroutine so
// the mux never waits for a watcher.
type muxRoute struct {
	ch   chan event.Event
	gone chan struct{}
	wake chan struct{}
	mu   sync.Mutex
	q    []event.Event
	jids []string // guarded by the mux's mu
}

// newJobMux starts routing the events of ev; it stops when ev's channel
// closes or ctx ends.
func newJobMux(ctx context.Context, ev *Events) *jobMux {
	m := &jobMux{routes: map[string]*muxRoute{}, early: map[string][]event.Event{}, closed: map[string]bool{}}
	go m.loop(ctx, ev.C())
	return m
}

// jobOf is the jid of a salt/job/<jid>/... tag.
func jobOf(tag string) string {
	rest, ok := strings.CutPrefix(tag, "salt/job/")
	if !ok {
		return ""
	}
	jid, _, _ := strings.Cut(rest, "/")
	return jid
}

func (m *jobMux) loop(ctx context.Context, ch <-chan event.Event) {
	for {
		var e event.Event
		var ok bool
		select {
		case e, ok = <-ch:
		case <-ctx.Done():
			return
		}
		if !ok {
			m.mu.Lock()
			for _, r := range m.routes {
				r.close()
			}
			m.routes = map[string]*muxRoute{}
			m.mu.Unlock()
			return
		}
		jid := jobOf(e.Tag)
		if jid == "" {
			continue
		}
		m.mu.Lock()
		if r := m.routes[jid]; r != nil {
			r.push(e)
		} else if !m.closed[jid] {
			m.keep(jid, e)
		}
		m.mu.Unlock()
	}
}

// keep buffers e for jid until someone follows it (m.mu held).
func (m *jobMux) keep(jid string, e event.Event) {
	if _, ok := m.early[jid]; !ok {
		m.order = append(m.order, jid)
	}
	m.early[jid] = append(m.early[jid], e)
	m.nEarly++
	for m.nEarly > muxEarlyMax && len(m.order) > 0 {
		old := m.order[0]
		m.order = m.order[1:]
		m.nEarly -= len(m.early[old])
		delete(m.early, old)
	}
}

// route makes a new route; its channel delivers the events of the jids
// it follows until unfollow.
func (m *jobMux) route() *muxRoute {
	r := &muxRoute{ch: make(chan event.Event), gone: make(chan struct{}), wake: make(chan struct{}, 1)}
	go r.forward()
	return r
}

// follow sends jid's events (those kept so far first) to r.
func (m *jobMux) follow(r *muxRoute, jid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.jids = append(r.jids, jid)
	m.routes[jid] = r
	kept, ok := m.early[jid]
	if !ok {
		return
	}
	delete(m.early, jid)
	m.nEarly -= len(kept)
	for i, j := range m.order {
		if j == jid {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	for _, e := range kept {
		r.push(e)
	}
}

// push queues e for the watcher without waiting.
func (r *muxRoute) push(e event.Event) {
	r.mu.Lock()
	if len(r.q) < muxRouteMax {
		r.q = append(r.q, e)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// forward hands the queued events to ch in order until the route ends.
func (r *muxRoute) forward() {
	for {
		r.mu.Lock()
		if len(r.q) == 0 {
			r.q = nil
			r.mu.Unlock()
			select {
			case <-r.wake:
				continue
			case <-r.gone:
				return
			}
		}
		e := r.q[0]
		r.q = r.q[1:]
		r.mu.Unlock()
		select {
		case r.ch <- e:
		case <-r.gone:
			return
		}
	}
}

// unfollow ends r: its jids' later events are dropped.
func (m *jobMux) unfollow(r *muxRoute) {
	m.mu.Lock()
	for _, jid := range r.jids {
		if m.routes[jid] == r {
			delete(m.routes, jid)
		}
		m.closed[jid] = true
	}
	r.close()
	m.mu.Unlock()
}

func (r *muxRoute) close() {
	select {
	case <-r.gone:
	default:
		close(r.gone)
	}
}

package minion

import (
	"context"
	"sync"
	"time"

	"github.com/gsalt/gsalt/internal/health"
)

// Connection is the minion's link to its master, for readiness probes.
type Connection struct {
	// Master is the master's request address (host:port).
	Master string
	// Authenticated: the master accepted the minion's key and a session
	// key is in use.
	Authenticated bool
	// Connected: the publish subscription is connected now.
	Connected bool
}

// Connection returns the state of the minion's link to its current
// master (with several masters: the one jobs and requests use now).
func (m *Minion) Connection() Connection {
	c := Connection{Authenticated: m.current() != nil}
	if l := m.primary(); l != nil {
		_, c.Master = l.target()
		if c.Master == "" {
			c.Master = l.master
		}
		c.Connected = l.isUp()
	}
	return c
}

// RegisterHealth adds the minion's probes and metrics to h (nothing when
// h is nil): /healthz watches the minion's state lock every second (a
// minion stuck on it stops the heartbeat); /readyz holds once the master
// accepted the minion and its publish subscription is connected.
func (m *Minion) RegisterHealth(ctx context.Context, h *health.Server) {
	if h == nil {
		return
	}
	hb := health.NewHeartbeat()
	hb.Watch(ctx, time.Second, func() { _ = m.Connection() })
	h.Live("minion", hb.Check(h.Config().HeartbeatTimeout))
	h.Ready("master", func() (bool, string) {
		c := m.Connection()
		switch {
		case !c.Authenticated:
			return false, "not authenticated with " + c.Master
		case !c.Connected:
			return false, "authenticated, publish port of " + c.Master + " not connected"
		}
		return true, "authenticated and connected to " + c.Master
	})
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	h.MustRegister(
		health.CounterFunc("minion", "authentications_total", "Successful authentications with the master.",
			func() uint64 { return uint64(m.Authentications()) }),
		health.GaugeFunc("minion", "authenticated", "1 when the master accepted the minion.",
			func() float64 { return b2f(m.Connection().Authenticated) }),
		health.GaugeFunc("minion", "connected", "1 when the publish subscription is connected.",
			func() float64 { return b2f(m.Connection().Connected) }),
		health.CounterFunc("minion", "publish_dropped_total", "Publications dropped because the receive queue was full.",
			m.publishDropped),
	)
}

// publishDropped counts the publications the minion's subscriptions
// dropped because their receive queue was full.
func (m *Minion) publishDropped() uint64 {
	var n uint64
	m.mu.RLock()
	links := append([]*link(nil), m.links...)
	m.mu.RUnlock()
	for _, l := range links {
		if s := l.sub.Load(); s != nil {
			n += s.Dropped()
		}
	}
	return n
}

// SwarmHealth follows the identities of a swarm (RunSwarm) for the
// probes: /readyz holds while at least metrics_ready_share of the N
// identities are authenticated and connected. A nil *SwarmHealth ignores
// Add.
type SwarmHealth struct {
	n  int
	mu sync.Mutex
	ms []*Minion
}

// RegisterSwarmHealth adds the probes and metrics of a swarm of n
// identities to h and returns the tracker to pass as SwarmOptions.Started
// (its Add); nil when h is nil.
func RegisterSwarmHealth(ctx context.Context, h *health.Server, n int) *SwarmHealth {
	if h == nil {
		return nil
	}
	s := &SwarmHealth{n: n}
	hb := health.NewHeartbeat()
	hb.Watch(ctx, time.Second, func() { _, _ = s.counts() })
	h.Live("swarm", hb.Check(h.Config().HeartbeatTimeout))
	h.Ready("swarm", health.Share("minions", s.counts, h.Config().ReadyShare))
	h.MustRegister(
		health.GaugeFunc("minion", "swarm_connected", "Swarm identities authenticated and connected to the master.",
			func() float64 { c, _ := s.counts(); return float64(c) }),
		health.GaugeFunc("minion", "swarm_size", "Swarm identities configured (--swarm).",
			func() float64 { return float64(n) }),
		health.CounterFunc("minion", "swarm_publish_dropped_total", "Publications the swarm identities dropped because their receive queue was full.",
			s.publishDropped),
	)
	return s
}

// Add tracks one identity (SwarmOptions.Started).
func (s *SwarmHealth) Add(m *Minion) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.ms = append(s.ms, m)
	s.mu.Unlock()
}

// publishDropped sums the identities' dropped publications.
func (s *SwarmHealth) publishDropped() uint64 {
	s.mu.Lock()
	ms := append([]*Minion(nil), s.ms...)
	s.mu.Unlock()
	var n uint64
	for _, m := range ms {
		n += m.publishDropped()
	}
	return n
}

// counts returns the connected identities and the swarm size.
func (s *SwarmHealth) counts() (connected, total int) {
	s.mu.Lock()
	ms := append([]*Minion(nil), s.ms...)
	s.mu.Unlock()
	for _, m := range ms {
		if c := m.Connection(); c.Authenticated && c.Connected {
			connected++
		}
	}
	return connected, s.n
}

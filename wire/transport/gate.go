package transport

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ConnGate is a connection budget shared by several servers of one process
// (the master's publish and request ports): together they hold at most Max
// connections, so one descriptor limit covers both without a fixed split
// that refuses minions on one port while the other has room. When the
// budget is spent, a new connection on any server of the gate takes the
// place of the request connection idle the longest (sampled) on a server
// that allows eviction (ReqServer): its peer reconnects on its next request
// (a ReqPool resends a request that met a closed idle connection; a Salt
// minion connects per request). Publish connections are never evicted.
type ConnGate struct {
	max int64
	n   atomic.Int64

	mu        sync.Mutex
	evictable []*listener
	evicted   atomic.Uint64
	lastWarn  atomic.Int64 // unix nanoseconds of the last eviction warning
}

// warnEvery bounds the gate's warnings to one per interval.
const warnEvery = 10 * time.Second

// shouldWarn reports whether an eviction warning is due (one per
// warnEvery).
func (g *ConnGate) shouldWarn() bool {
	now := time.Now().UnixNano()
	last := g.lastWarn.Load()
	return now-last >= int64(warnEvery) && g.lastWarn.CompareAndSwap(last, now)
}

// NewConnGate returns a gate admitting at most max connections (max <= 0:
// unbounded).
func NewConnGate(max int) *ConnGate {
	return &ConnGate{max: int64(max)}
}

// Max returns the gate's budget (0: unbounded).
func (g *ConnGate) Max() int {
	if g == nil || g.max <= 0 {
		return 0
	}
	return int(g.max)
}

// Conns returns the connections the gate's servers hold.
func (g *ConnGate) Conns() int {
	if g == nil {
		return 0
	}
	return int(g.n.Load())
}

// Evicted returns how many idle request connections were closed to admit
// new ones.
func (g *ConnGate) Evicted() uint64 {
	if g == nil {
		return 0
	}
	return g.evicted.Load()
}

// acquire takes one connection from the budget, evicting an idle request
// connection when it is spent; false means nothing could be freed.
func (g *ConnGate) acquire() bool {
	if g == nil {
		return true
	}
	if g.n.Add(1) <= g.max || g.max <= 0 {
		return true
	}
	// Over budget: the slot is kept only when an idle connection gives its
	// own up (released when its handler ends, a moment later).
	g.mu.Lock()
	ls := g.evictable
	g.mu.Unlock()
	for _, l := range ls {
		if l.evictIdle() {
			if n := g.evicted.Add(1); g.shouldWarn() {
				l.log.Warn("transport: too many connections, closing an idle request connection to admit one",
					"max", g.max, "evicted_total", n)
			}
			return true
		}
	}
	g.n.Add(-1)
	return false
}

func (g *ConnGate) release() {
	if g != nil {
		g.n.Add(-1)
	}
}

func (g *ConnGate) addEvictable(l *listener) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.evictable = append(g.evictable, l)
	g.mu.Unlock()
}

func (g *ConnGate) removeEvictable(l *listener) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, x := range g.evictable {
		if x == l {
			g.evictable = append(g.evictable[:i:i], g.evictable[i+1:]...)
			return
		}
	}
}

// connSlot is a served connection's state for eviction: busy is the
// requests it has in flight (the handshake counts as one); -1 marks a
// connection evicted while idle, whose next request is not handled (its
// peer sees the connection closed before any reply and sends it again).
type connSlot struct {
	raw       net.Conn
	busy      atomic.Int64
	idleSince atomic.Int64 // unix nanoseconds
}

// begin marks a request in flight; false when the connection was evicted.
func (s *connSlot) begin() bool {
	for {
		v := s.busy.Load()
		if v < 0 {
			return false
		}
		if s.busy.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

// end marks a request done.
func (s *connSlot) end() {
	s.idleSince.Store(time.Now().UnixNano())
	s.busy.Add(-1)
}

// evictSample bounds the connections looked at to pick one to evict.
const evictSample = 64

// evictScanMax bounds the connections looked at when none of the first
// evictSample was idle.
const evictScanMax = 4 * evictSample

// recentCap bounds the request connections a listener remembers as the
// ones that finished a request last (eviction candidates).
const recentCap = 1024

// recentIdle remembers the request connections in the order they
// finished a request, newest last (a ring overwriting the oldest).
type recentIdle struct {
	mu    sync.Mutex
	ring  [recentCap]*connSlot
	top   int // ring index past the newest entry
	count int
}

// push records s as the connection that finished a request last.
func (r *recentIdle) push(s *connSlot) {
	r.mu.Lock()
	r.ring[r.top] = s
	r.top = (r.top + 1) % recentCap
	r.count = min(r.count+1, recentCap)
	r.mu.Unlock()
}

// pop removes and returns the newest entry, nil when there is none.
func (r *recentIdle) pop() *connSlot {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count == 0 {
		return nil
	}
	r.top = (r.top + recentCap - 1) % recentCap
	s := r.ring[r.top]
	r.ring[r.top] = nil
	r.count--
	return s
}

// requestDone marks s idle after a request and remembers it as an
// eviction candidate (on a server whose connections may be evicted).
func (l *listener) requestDone(s *connSlot) {
	s.end()
	if l.evictable && l.lim.Gate != nil {
		l.recent.push(s)
	}
}

// evictIdle closes an idle request connection of this server to make
// room; false when none is idle. It takes the idle connection that
// finished a request most recently: when every minion returns for every
// job (a request connection each, more minions than the budget holds)
// that one is done for this job, while the connection idle the longest
// belongs to a minion whose return is still to come, which then has to
// reconnect and evicts the next such minion (with 10,000 minions and
// 2,000 connections short, ~5,200 reconnections per job instead of
// 2,000). A connection that has served no request yet (a peer that has
// just connected to send one) is only taken when no other is idle: then
// the one idle the longest among a sample of the server's connections.
func (l *listener) evictIdle() bool {
	for {
		s := l.recent.pop()
		if s == nil {
			break
		}
		if s.busy.CompareAndSwap(0, -1) {
			_ = s.raw.Close()
			return true
		}
	}
	l.mu.Lock()
	var victim *connSlot
	seen := 0
	for _, s := range l.conns {
		if s.busy.Load() == 0 && (victim == nil || s.idleSince.Load() < victim.idleSince.Load()) {
			victim = s
		}
		// Bounded even when none is idle: with 10,000 busy connections a
		// full scan under the lock cost a fifth of the master's CPU. A
		// miss is retried by track with a new sample (map order is
		// random).
		if seen++; seen >= evictSample && victim != nil || seen >= evictScanMax {
			break
		}
	}
	l.mu.Unlock()
	if victim == nil || !victim.busy.CompareAndSwap(0, -1) {
		return false
	}
	_ = victim.raw.Close()
	return true
}

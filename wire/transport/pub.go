package transport

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultPubHWM is the default per-subscriber queue length (Salt's pub_hwm).
const DefaultPubHWM = 1000

// maxTopicsPerSubscriber bounds the subscriptions one peer can register.
const maxTopicsPerSubscriber = 1024

// PubOptions configures a PubServer.
type PubOptions struct {
	// HWM is the number of messages queued per subscriber before further
	// messages for it are dropped (libzmq SNDHWM semantics). Default DefaultPubHWM.
	HWM int
	// Limits bounds peers; zero fields take DefaultLimits values.
	Limits Limits
	// Logger receives connection-level logs; nil means slog.Default().
	Logger *slog.Logger
	// fresh replaces freshSubscriber when set (tests).
	fresh time.Duration
}

// PubServer is the master's PUB socket. Each subscriber has its own bounded
// queue and writer goroutine, so Publish never blocks and a subscriber that
// stops reading only loses its own messages. (zmq4's PUB writes to all
// subscribers serially from one goroutine without a write deadline, so one
// stalled subscriber stalls every other; see TestZmq4UpstreamPubStalledSubscriberBlocksOthers.)
type PubServer struct {
	l     *listener
	hwm   int
	log   *slog.Logger
	fresh time.Duration // freshSubscriber

	mu   sync.RWMutex
	subs map[*pubSub]struct{}
	// byID holds the subscribers that sent a ZMTP identity, by identity.
	byID map[string][]*pubSub
	// hs numbers the connections whose handshake started; pending (from
	// pendHead on) holds, in that order, those that may still be a
	// nameless peer's subscription (see WaitSubscribed), expiry fires when
	// the first of them stops being fresh. idWaiters holds the callers of
	// WaitSubscribed by id, anonWaiters (from anonHead on, anonGone of them
	// gone) those waiting for the pending connections up to their limit,
	// in the order of limits; waiting counts the callers.
	hs          uint64
	pending     []*pendConn
	pendHead    int
	expiry      *time.Timer
	expiryAt    time.Time
	expiryArmed bool
	idWaiters   map[string][]*subWaiter
	anonWaiters []*subWaiter
	anonHead    int
	anonGone    int
	waiting     atomic.Int32

	dropped atomic.Uint64
	stopMu  sync.Mutex
	stop    func() bool
}

// pubSub is one subscriber connection.
type pubSub struct {
	c   *zconn
	log *slog.Logger
	// q holds the messages waiting for the writer (at most the HWM); it
	// grows with use instead of a channel of HWM slots per subscriber.
	qmu sync.Mutex
	q   [][]byte // encoded messages (encodeMessage), shared by the subscribers
	// writing is set while a writer goroutine drains q: one is started
	// when a message finds q idle and ends when q is empty, so an idle
	// subscriber has no goroutine parked for writes (a master with
	// 10,000 subscribers kept 10,000 of them). dead is set once a write
	// failed or the subscriber left: nothing is queued after.
	writing, dead bool
	writers       sync.WaitGroup
	// batch is the writer's reusable slice of messages taken by next.
	batch [][]byte

	// id is the peer's ZMTP identity (a gsalt minion's id; libzmq sends
	// none from a SUB socket). since is when the handshake ended; pend is
	// its entry in PubServer.pending while it has neither an identity nor
	// a subscription (written under PubServer.mu).
	id    string
	since time.Time
	pend  *pendConn

	mu     sync.RWMutex
	topics map[string]int // subscription -> count (libzmq counts duplicates)
}

// ListenPub listens on addr ("host:port" or "tcp://host:port"; port 0 picks a
// free port) and serves subscribers until Close or until ctx is done.
func ListenPub(ctx context.Context, addr string, opts PubOptions) (*PubServer, error) {
	lim := opts.Limits.withDefaults()
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.HWM <= 0 {
		opts.HWM = DefaultPubHWM
	}
	l, err := newListener(ctx, addr, lim, log)
	if err != nil {
		return nil, fmt.Errorf("transport: pub listen %q: %w", addr, err)
	}
	if opts.fresh <= 0 {
		opts.fresh = freshSubscriber
	}
	p := &PubServer{l: l, hwm: opts.HWM, log: log, fresh: opts.fresh, subs: make(map[*pubSub]struct{}), byID: make(map[string][]*pubSub),
		idWaiters: make(map[string][]*subWaiter)}
	// The callback only shuts down; it never touches p.stop, which is set
	// under stopMu after registration (the callback may already be running).
	stop := context.AfterFunc(ctx, func() { _ = p.shutdown() })
	p.stopMu.Lock()
	p.stop = stop
	p.stopMu.Unlock()
	l.serve(p.handle)
	return p, nil
}

// Addr returns the address the server listens on.
func (p *PubServer) Addr() net.Addr { return p.l.ln.Addr() }

// Dropped returns how many (message, subscriber) deliveries were dropped
// because that subscriber's queue was full.
func (p *PubServer) Dropped() uint64 { return p.dropped.Load() }

// Subscribers returns the number of subscriber connections that completed
// their handshake.
func (p *PubServer) Subscribers() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.subs)
}

// Publish queues one message (one or more frames) for every subscriber whose
// subscription is a prefix of the first frame. It never blocks: a subscriber
// whose queue is full misses the message and Dropped is incremented. The
// frames are shared between subscribers and written later; the caller must
// not modify them after the call.
func (p *PubServer) Publish(frames ...[]byte) error {
	if len(frames) == 0 {
		return fmt.Errorf("%w: empty message", ErrInvalid)
	}
	if p.l.ctx.Err() != nil {
		return ErrClosed
	}
	// Encoded once: every subscriber writes the same bytes.
	msg := encodeMessage(frames)
	p.mu.RLock()
	defer p.mu.RUnlock()
	for s := range p.subs {
		if !s.matches(frames[0]) {
			continue
		}
		if !s.push(msg, p.hwm) {
			p.dropped.Add(1)
		}
	}
	return nil
}

// Close stops the server and disconnects every subscriber.
func (p *PubServer) Close() error {
	p.stopMu.Lock()
	if p.stop != nil {
		p.stop()
	}
	p.stopMu.Unlock()
	return p.shutdown()
}

func (p *PubServer) shutdown() error {
	p.mu.Lock()
	if p.expiry != nil {
		p.expiry.Stop()
		p.expiryArmed = false
	}
	p.mu.Unlock()
	return p.l.close()
}

func (p *PubServer) handle(raw net.Conn, _ *connSlot) connLoop {
	p.mu.Lock()
	pc := p.beginPendingLocked()
	p.mu.Unlock()
	c, err := openZMTPApart(p.l.ctx, raw, rolePub, nil, p.l.lim, p.l.budget, p.l.bufs)
	if err != nil {
		p.mu.Lock()
		p.endPendingLocked(pc)
		p.mu.Unlock()
		p.log.Debug("transport: pub handshake failed", "peer", raw.RemoteAddr(), "err", err)
		return nil
	}
	s := &pubSub{c: c, log: p.log, id: c.peerIdentity(), since: time.Now(), topics: make(map[string]int)}
	p.mu.Lock()
	p.subs[s] = struct{}{}
	if s.id != "" {
		p.byID[s.id] = append(p.byID[s.id], s)
		p.endPendingLocked(pc)
		p.wakeIDLocked(s.id)
	} else {
		s.pend, pc.expires = pc, s.since.Add(p.fresh)
		p.advanceLocked(s.since)
	}
	p.mu.Unlock()
	return &pubConn{p: p, s: s, bare: true}
}

// pubConn is a subscriber connection's loop (connLoop): each step reads
// one (un)subscription.
type pubConn struct {
	p    *PubServer
	s    *pubSub
	bare bool // no subscription received yet
}

func (pc *pubConn) conn() *zconn { return pc.s.c }

func (pc *pubConn) step() bool {
	p, s := pc.p, pc.s
	frames, err := s.c.recv()
	if err != nil {
		p.log.Debug("transport: subscriber gone", "peer", s.c.raw.RemoteAddr(), "err", err)
		return false
	}
	if s.subscription(frames) {
		if pc.bare {
			pc.bare = false
			p.subscribed(s)
		} else {
			p.resubscribed(s)
		}
	}
	return true
}

func (pc *pubConn) end() {
	p, s := pc.p, pc.s
	p.mu.Lock()
	delete(p.subs, s)
	p.endPendingLocked(s.pend)
	s.pend = nil
	if s.id != "" {
		if l := slices.DeleteFunc(p.byID[s.id], func(o *pubSub) bool { return o == s }); len(l) > 0 {
			p.byID[s.id] = l
		} else {
			delete(p.byID, s.id)
		}
		p.wakeIDLocked(s.id)
	}
	p.mu.Unlock()
	s.c.close()
	s.stop()
}

// push queues msg (encoded) for the writer, starting one when none runs;
// false when the queue is at hwm (or the subscriber is gone).
func (s *pubSub) push(msg []byte, hwm int) bool {
	s.qmu.Lock()
	if s.dead || len(s.q) >= hwm {
		s.qmu.Unlock()
		return false
	}
	s.q = append(s.q, msg)
	start := !s.writing
	if start {
		s.writing = true
		s.writers.Add(1)
	}
	s.qmu.Unlock()
	if start {
		go s.write()
	}
	return true
}

// write sends the queued messages until the queue is empty.
func (s *pubSub) write() {
	defer s.writers.Done()
	for {
		msgs := s.next()
		if msgs == nil {
			return
		}
		if err := s.c.sendEncoded(msgs); err != nil {
			s.log.Info("transport: subscriber write failed", "peer", s.c.raw.RemoteAddr(), "err", err)
			s.c.close()
			s.qmu.Lock()
			s.dead, s.writing = true, false
			clear(s.q)
			s.q = nil
			s.qmu.Unlock()
			return
		}
	}
}

// stop refuses new messages and waits for a running writer.
func (s *pubSub) stop() {
	s.qmu.Lock()
	s.dead = true
	s.qmu.Unlock()
	s.writers.Wait()
}

// next takes the queued messages (oldest first, at most maxWriteBatch
// bytes unless the first alone is larger), or nil when there are none, in
// which case the writer ends (writing is cleared under the same lock, so
// a message queued after it starts a new writer). The slice is reused by
// the next call (the writer's only).
func (s *pubSub) next() [][]byte {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if len(s.q) == 0 || s.dead {
		s.writing = false
		if s.dead {
			clear(s.q)
			s.q = nil
		}
		return nil
	}
	n, size := 1, len(s.q[0])
	for n < len(s.q) && n < maxBatchMsgs && size+len(s.q[n]) <= maxWriteBatch {
		size += len(s.q[n])
		n++
	}
	msgs := append(s.batch[:0], s.q[:n]...)
	s.batch = msgs
	if rest := len(s.q) - n; rest <= maxBatchMsgs {
		// A short queue keeps its array (no allocation per publish).
		copy(s.q, s.q[n:])
		clear(s.q[rest:])
		s.q = s.q[:rest]
		if cap(s.q) > 4*maxBatchMsgs {
			s.q = append([][]byte(nil), s.q...)
		}
	} else {
		clear(s.q[:n])
		s.q = s.q[n:]
	}
	return msgs
}

// maxBatchMsgs bounds the messages of one writev (IOV_MAX is 1024).
const maxBatchMsgs = 256

// subscription applies a ZMTP 3.0 subscription message (0x01/0x00 + topic)
// and reports whether it was one; anything else a subscriber sends is
// ignored, as libzmq does.
func (s *pubSub) subscription(frames [][]byte) bool {
	if len(frames) != 1 || len(frames[0]) == 0 {
		return false
	}
	topic := string(frames[0][1:])
	s.mu.Lock()
	defer s.mu.Unlock()
	switch frames[0][0] {
	case 1:
		if _, ok := s.topics[topic]; ok || len(s.topics) < maxTopicsPerSubscriber {
			s.topics[topic]++
		}
	case 0:
		if n := s.topics[topic]; n > 1 {
			s.topics[topic] = n - 1
		} else {
			delete(s.topics, topic)
		}
	}
	return true
}

func (s *pubSub) matches(first []byte) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, all := s.topics[""]; all {
		return true
	}
	for t := range s.topics {
		if bytes.HasPrefix(first, []byte(t)) {
			return true
		}
	}
	return false
}

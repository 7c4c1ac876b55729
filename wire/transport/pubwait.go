package transport

import (
	"context"
	"time"
)

// freshSubscriber is how long after its handshake a subscriber that has
// not subscribed to anything yet is waited for by WaitSubscribed (a peer
// sends its subscriptions right after the handshake).
const freshSubscriber = 10 * time.Second

// WaitSubscribed waits until the subscriptions of the peer id are
// applied, so that a message published afterwards reaches it. A
// subscriber sends its subscriptions right after the handshake, but the
// server reads them on the connection's own goroutine, which a busy
// machine may run later than a request the same peer sent afterwards on
// another connection (a minion's start event); a publish made in between
// is lost for that peer, as with libzmq.
//
// A peer that names itself in the handshake (the ZMTP identity: a gsalt
// minion's SUB socket sends its id) is waited for until one of its
// connections subscribed to a prefix of each of topics (with no topics:
// to anything); it returns true then. Peers that name no one (libzmq
// sends no identity from a SUB socket: a Salt minion) cannot be told
// apart, so it also waits for every connection from before the call that
// may be the peer's: still in its handshake, or through it less than
// freshSubscriber ago without any subscription yet. It returns false
// once none is left (also at once when there is none), or when ctx ends.
func (p *PubServer) WaitSubscribed(ctx context.Context, id string, topics ...[]byte) bool {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	p.mu.RLock()
	limit := p.hs
	p.mu.RUnlock()
	for {
		p.mu.RLock()
		ch := p.changed
		done, pending := p.subscriptionState(id, topics, limit)
		p.mu.RUnlock()
		switch {
		case done:
			return true
		case !pending:
			return false
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// subscriptionState reports whether peer id subscribed to topics, and
// else whether a connection numbered up to limit may still turn out to
// be its subscription. p.mu is held.
func (p *PubServer) subscriptionState(id string, topics [][]byte, limit uint64) (done, pending bool) {
	now := time.Now()
	for _, s := range p.byID[id] {
		if s.subscribed(topics) {
			return true, false
		}
		if now.Sub(s.since) < freshSubscriber {
			pending = true // still to send the topics asked for
		}
	}
	if pending {
		return false, true
	}
	for n := range p.handshaking {
		if n <= limit {
			return false, true
		}
	}
	for s := range p.bare {
		if s.seq <= limit && s.id == "" && now.Sub(s.since) < freshSubscriber {
			return false, true
		}
	}
	return false, false
}

// subscribed takes s off the bare subscribers after it applied a
// subscription and wakes the callers of WaitSubscribed, if any.
func (p *PubServer) subscribed(s *pubSub) {
	p.mu.Lock()
	delete(p.bare, s)
	p.notifyLocked()
	p.mu.Unlock()
}

// notify wakes the callers of WaitSubscribed, if any.
func (p *PubServer) notify() {
	if p.waiting.Load() == 0 {
		return
	}
	p.mu.Lock()
	p.notifyLocked()
	p.mu.Unlock()
}

// notifyLocked wakes the callers of WaitSubscribed, if any. p.mu is held.
func (p *PubServer) notifyLocked() {
	if p.waiting.Load() == 0 {
		return
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// subscribed reports whether s subscribed to a prefix of each of topics,
// or to anything when topics is empty.
func (s *pubSub) subscribed(topics [][]byte) bool {
	if len(topics) == 0 {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return len(s.topics) > 0
	}
	for _, t := range topics {
		if !s.matches(t) {
			return false
		}
	}
	return true
}

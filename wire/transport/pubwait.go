package transport

import (
	"context"
)

// WaitSubscribed waits until the subscriptions of the peer whose ZMTP
// identity is id (a Salt minion's SUB socket sends its minion id) are
// applied, so that a message published afterwards reaches it: until one
// of its connections subscribed to a prefix of each of topics (with no
// topics: to anything). A subscriber sends its subscriptions right after
// the handshake, but the server reads them on the connection's own
// goroutine, which a busy machine may run later than a request the same
// peer sent afterwards on another connection (a minion's start event);
// a publish made in between is lost for that peer, as with libzmq.
//
// While no connection of id has finished its handshake, it waits for the
// handshakes under way when it was called (the peer's may be one of them:
// its side of the handshake ends before the server's). It returns true
// when the subscription is in place, false when there is nothing to wait
// for (no connection of id, none in a handshake) or ctx ended first.
func (p *PubServer) WaitSubscribed(ctx context.Context, id string, topics ...[]byte) bool {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	p.mu.RLock()
	limit := p.hs
	p.mu.RUnlock()
	for {
		p.mu.RLock()
		ch := p.changed
		known, done := len(p.byID[id]) > 0, false
		for _, s := range p.byID[id] {
			if s.subscribed(topics) {
				done = true
				break
			}
		}
		pending := false
		if !known {
			for n := range p.handshaking {
				if n <= limit {
					pending = true
					break
				}
			}
		}
		p.mu.RUnlock()
		switch {
		case done:
			return true
		case !known && !pending:
			return false
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
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

// notifyLocked is notify with p.mu held.
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

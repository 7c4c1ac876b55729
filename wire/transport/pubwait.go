package transport

import (
	"context"
	"math"
	"slices"
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
//
// The cost does not grow with the number of connections: the
// connections that may still be a nameless peer's subscription are kept
// in the order of their numbers, so a call looks only at the lowest one
// still pending, and a caller is woken only by a change to its own id's
// connections, once when the last connection from before its call is
// through, and when a connection of its id stops being fresh.
func (p *PubServer) WaitSubscribed(ctx context.Context, id string, topics ...[]byte) bool {
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	w := &subWaiter{id: id, wake: make(chan struct{}, 1)}
	var fresh *time.Timer
	defer func() {
		if fresh != nil {
			fresh.Stop()
		}
	}()
	p.mu.Lock()
	w.limit = p.hs
	defer func() {
		p.mu.Lock()
		p.leaveLocked(w)
		p.mu.Unlock()
	}()
	for {
		now := time.Now()
		done, until := p.namedState(id, topics, now)
		if done {
			p.mu.Unlock()
			return true
		}
		p.advanceLocked(now)
		anon := p.lowestPending() <= w.limit
		if until.IsZero() && !anon {
			p.mu.Unlock()
			return false
		}
		p.joinLocked(w, anon)
		p.mu.Unlock()
		var expired <-chan time.Time
		if !until.IsZero() {
			if fresh == nil {
				fresh = time.NewTimer(until.Sub(now))
			} else {
				fresh.Reset(until.Sub(now))
			}
			expired = fresh.C
		}
		select {
		case <-w.wake:
		case <-expired:
		case <-ctx.Done():
			return false
		}
		p.mu.Lock()
	}
}

// subWaiter is one caller of WaitSubscribed.
type subWaiter struct {
	id string
	// limit is the number of the last connection from before the call.
	limit uint64
	// wake is signalled (without blocking) when the caller should look
	// again.
	wake chan struct{}
	// byID and queued are set while the waiter is in p.idWaiters and
	// p.anonWaiters; gone once it left (a queued waiter is skipped then).
	byID, queued, gone bool
}

// pendConn is a connection that may still turn out to be the
// subscription of a peer that names no one: in its handshake (expires is
// zero), or through it with no identity and no subscription until
// expires. done is set when it is neither any more.
type pendConn struct {
	seq     uint64
	expires time.Time
	done    bool
}

// namedState reports whether a connection of peer id subscribed to
// topics, and else until when one of its connections is fresh enough to
// still send them (zero: none is). p.mu is held.
func (p *PubServer) namedState(id string, topics [][]byte, now time.Time) (done bool, until time.Time) {
	for _, s := range p.byID[id] {
		if s.subscribed(topics) {
			return true, time.Time{}
		}
		if e := s.since.Add(p.fresh); now.Before(e) && e.After(until) {
			until = e // still to send the topics asked for
		}
	}
	return false, until
}

// joinLocked registers w for the wake-ups it needs: changes to its id's
// connections, and (anon) the end of the connections up to its limit.
// p.mu is held.
func (p *PubServer) joinLocked(w *subWaiter, anon bool) {
	if !w.byID {
		w.byID = true
		p.idWaiters[w.id] = append(p.idWaiters[w.id], w)
	}
	if anon && !w.queued {
		// Limits only grow (p.hs is read under p.mu), so the queue stays
		// in the order of limits.
		w.queued = true
		p.anonWaiters = append(p.anonWaiters, w)
	}
}

// leaveLocked takes w off the wake-up lists. p.mu is held.
func (p *PubServer) leaveLocked(w *subWaiter) {
	w.gone = true
	if w.byID {
		w.byID = false
		if l := slices.DeleteFunc(p.idWaiters[w.id], func(o *subWaiter) bool { return o == w }); len(l) > 0 {
			p.idWaiters[w.id] = l
		} else {
			delete(p.idWaiters, w.id)
		}
	}
	if w.queued {
		// Skipped when the queue reaches it; dropped now when the queue
		// is mostly such waiters (a connection stuck in its handshake
		// holds the queue until its handshake deadline).
		p.anonGone++
		if p.anonGone > 64 && 2*p.anonGone > len(p.anonWaiters)-p.anonHead {
			live := slices.DeleteFunc(p.anonWaiters[p.anonHead:], func(o *subWaiter) bool { return o.gone })
			n := copy(p.anonWaiters, live)
			clear(p.anonWaiters[n:])
			p.anonWaiters, p.anonHead, p.anonGone = p.anonWaiters[:n], 0, 0
		}
	}
}

// wakeIDLocked wakes the callers waiting for peer id. p.mu is held.
func (p *PubServer) wakeIDLocked(id string) {
	for _, w := range p.idWaiters[id] {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// lowestPending returns the number of the oldest connection that may
// still be a nameless peer's subscription, or the largest uint64 when
// there is none. p.mu is held; advanceLocked ran.
func (p *PubServer) lowestPending() uint64 {
	if p.pendHead == len(p.pending) {
		return math.MaxUint64
	}
	return p.pending[p.pendHead].seq
}

// beginPendingLocked numbers a connection whose handshake starts and
// records it as pending. p.mu is held.
func (p *PubServer) beginPendingLocked() *pendConn {
	p.hs++
	pc := &pendConn{seq: p.hs}
	p.pending = append(p.pending, pc)
	return pc
}

// endPendingLocked records that pc can no longer be a nameless peer's
// subscription. p.mu is held.
func (p *PubServer) endPendingLocked(pc *pendConn) {
	if pc != nil && !pc.done {
		pc.done = true
		p.advanceLocked(time.Now())
	}
}

// advanceLocked drops the pending connections at the front that are done
// or expired, wakes the callers whose connections are all through and
// sets the expiry timer for the new front. p.mu is held.
func (p *PubServer) advanceLocked(now time.Time) {
	for p.pendHead < len(p.pending) {
		pc := p.pending[p.pendHead]
		if !pc.done && (pc.expires.IsZero() || now.Before(pc.expires)) {
			break
		}
		p.pending[p.pendHead] = nil
		p.pendHead++
	}
	if p.pendHead == len(p.pending) {
		p.pending, p.pendHead = p.pending[:0], 0
	} else if p.pendHead > 64 && 2*p.pendHead > len(p.pending) {
		n := copy(p.pending, p.pending[p.pendHead:])
		clear(p.pending[n:])
		p.pending, p.pendHead = p.pending[:n], 0
	}
	low := p.lowestPending()
	for p.anonHead < len(p.anonWaiters) && p.anonWaiters[p.anonHead].limit < low {
		w := p.anonWaiters[p.anonHead]
		p.anonWaiters[p.anonHead] = nil
		p.anonHead++
		w.queued = false
		if w.gone {
			p.anonGone--
			continue
		}
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	if p.anonHead == len(p.anonWaiters) {
		p.anonWaiters, p.anonHead = p.anonWaiters[:0], 0
	}
	if low == math.MaxUint64 {
		return
	}
	// Only the front's expiry matters: a later connection that expires
	// first is dropped when it reaches the front.
	if e := p.pending[p.pendHead].expires; !e.IsZero() && (!p.expiryArmed || !p.expiryAt.Equal(e)) {
		p.expiryArmed, p.expiryAt = true, e
		if p.expiry == nil {
			p.expiry = time.AfterFunc(e.Sub(now), p.expire)
		} else {
			p.expiry.Reset(e.Sub(now))
		}
	}
}

// expire runs when the oldest pending connection stops being fresh.
func (p *PubServer) expire() {
	p.mu.Lock()
	p.expiryArmed = false
	p.advanceLocked(time.Now())
	p.mu.Unlock()
}

// subscribed records that s applied its first subscription and wakes the
// callers of WaitSubscribed it concerns.
func (p *PubServer) subscribed(s *pubSub) {
	p.mu.Lock()
	p.endPendingLocked(s.pend)
	if s.id != "" {
		p.wakeIDLocked(s.id)
	}
	p.mu.Unlock()
}

// resubscribed wakes the callers of WaitSubscribed for s's peer after s
// changed its subscriptions again (only a named peer's can matter).
func (p *PubServer) resubscribed(s *pubSub) {
	if s.id == "" || p.waiting.Load() == 0 {
		return
	}
	p.mu.Lock()
	p.wakeIDLocked(s.id)
	p.mu.Unlock()
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

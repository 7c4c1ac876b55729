package transport

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/internal/ctxsleep"
)

// Backoff bounds of a DialGate's probe (and of dialRetry without one).
const (
	dialBackoffMin = 50 * time.Millisecond
	dialBackoffMax = time.Second
)

// gateSpreadPerWaiter and gateSpreadMax spread the dials of the clients
// that waited on a DialGate once the server is back: each waits a random
// time below min(waiters*gateSpreadPerWaiter, gateSpreadMax), so 10,000
// clients reach the server's listen backlog over half a second instead of
// in one burst.
const (
	gateSpreadPerWaiter = 50 * time.Microsecond
	gateSpreadMax       = time.Second
)

// DialGate lets the clients of one process that connect to the same server
// share the wait while that server refuses connections (a master
// restarting): the first refused dial closes the gate, then one client at
// a time probes the server with exponential backoff (50 ms doubling to
// 1 s) while the others wait without dialing; the first successful dial
// opens the gate and the waiting clients dial again, spread over up to a
// second. Without a gate, thousands of clients with in-flight requests
// (a minion swarm's returns, its re-authentications) each redial every
// second and burn CPU on refused connections. Errors other than a refused
// connection do not close the gate. A DialGate is safe for concurrent use;
// the zero value is not usable, use NewDialGate. Share one gate per server
// address.
type DialGate struct {
	mu      sync.Mutex
	down    bool          // the last dial was refused
	probing bool          // a client is probing the server
	up      chan struct{} // closed when the gate opens again
	waiters int           // clients waiting on up
	woken   int           // clients waiting when the gate last opened
	// lastErr is the last refusal, returned to a waiter whose context
	// ends.
	lastErr error
	// dials counts every connection attempt through the gate, probes
	// those made by the prober while the gate was closed.
	dials, probes uint64
}

// NewDialGate returns an open gate.
func NewDialGate() *DialGate { return &DialGate{up: make(chan struct{})} }

// refused reports whether err means nothing listens at the address.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// Dials returns how many connection attempts were made through the gate,
// and how many of them were probes made while it was closed.
func (g *DialGate) Dials() (all, probes uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dials, g.probes
}

// dial connects to addr like dialRetry: while ctx has a deadline that has
// not passed it keeps trying; without one it dials once.
func (g *DialGate) dial(ctx context.Context, addr, source string) (net.Conn, error) {
	_, retry := ctx.Deadline()
	for {
		g.mu.Lock()
		switch {
		case !g.down:
			g.dials++
			g.mu.Unlock()
			raw, err := dialOnce(ctx, addr, source)
			if err == nil || !refused(err) {
				return raw, err
			}
			g.closeGate(err)
			if !retry || ctx.Err() != nil {
				return nil, err
			}
		case !g.probing:
			g.probing = true
			g.mu.Unlock()
			return g.probe(ctx, addr, source)
		default:
			if !retry {
				err := g.lastErr
				g.mu.Unlock()
				return nil, err
			}
			up := g.up
			g.waiters++
			g.mu.Unlock()
			// Wake up now and then: the prober's context may end before
			// the server is back, and then a waiter takes over.
			t := time.NewTimer(dialBackoffMax)
			select {
			case <-up:
				t.Stop()
				g.mu.Lock()
				n := g.woken
				g.mu.Unlock()
				if err := ctxsleep.Sleep(ctx, spread(n)); err != nil {
					return nil, g.waitErr()
				}
			case <-t.C:
				g.leave(up)
			case <-ctx.Done():
				t.Stop()
				g.leave(up)
				return nil, g.waitErr()
			}
		}
	}
}

// leave takes a waiter that stops waiting on up (its context ended, or it
// woke up to take over probing) off the count, unless the gate opened
// since: opening it hands the count over to woken and zeroes it, and a
// waiter that woke up at the same moment must not take itself off again.
func (g *DialGate) leave(up chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-up:
	default:
		g.waiters--
	}
}

// openLocked opens the gate after a successful probe: the waiting clients
// wake up and dial again. g.mu is held.
func (g *DialGate) openLocked() {
	g.down = false
	close(g.up)
	g.woken, g.waiters = g.waiters, 0
}

// spread is the random delay before a waiter dials once the gate opened
// with n clients waiting.
func spread(n int) time.Duration {
	w := min(time.Duration(n)*gateSpreadPerWaiter, gateSpreadMax)
	if w <= 0 {
		return 0
	}
	return rand.N(w)
}

func (g *DialGate) waitErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lastErr != nil {
		return g.lastErr
	}
	return syscall.ECONNREFUSED
}

// closeGate records a refusal.
func (g *DialGate) closeGate(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lastErr = err
	if !g.down {
		g.down = true
		g.up = make(chan struct{})
	}
}

// probe dials until the server accepts, ctx ends or its deadline would
// pass during the next wait; it holds the prober role until then.
func (g *DialGate) probe(ctx context.Context, addr, source string) (net.Conn, error) {
	backoff := dialBackoffMin
	for {
		g.mu.Lock()
		g.probes++
		g.dials++
		g.mu.Unlock()
		raw, err := dialOnce(ctx, addr, source)
		if err == nil || !refused(err) {
			g.mu.Lock()
			g.probing = false
			if err == nil && g.down {
				g.openLocked()
			}
			g.mu.Unlock()
			return raw, err
		}
		g.mu.Lock()
		g.lastErr = err
		g.mu.Unlock()
		dl, _ := ctx.Deadline()
		wait := min(backoff, time.Until(dl))
		if wait <= 0 || ctxsleep.Sleep(ctx, wait) != nil {
			g.mu.Lock()
			g.probing = false
			g.mu.Unlock()
			return nil, err
		}
		backoff = min(2*backoff, dialBackoffMax)
	}
}

// dialOnce makes one connection attempt.
func dialOnce(ctx context.Context, addr, source string) (net.Conn, error) {
	d, err := sourceDialer(source)
	if err != nil {
		return nil, err
	}
	nw, a := network(addr)
	if nw != "tcp" {
		d.LocalAddr = nil
	}
	return d.DialContext(ctx, nw, a)
}

// sourceDialer returns a dialer whose connections start from source (an
// IP address, Salt's source_address; "" lets the system choose).
func sourceDialer(source string) (net.Dialer, error) {
	if source == "" {
		return net.Dialer{}, nil
	}
	ip := net.ParseIP(strings.Trim(source, "[]"))
	if ip == nil {
		return net.Dialer{}, fmt.Errorf("%w: source address %q is not an IP address", ErrInvalid, source)
	}
	return net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}, nil
}

// maxDialGates bounds the addresses a DialGates keeps gates for.
const maxDialGates = 64

// DialGates hands out one DialGate per server address, for the clients of
// one process that share them (the identities of a minion swarm). The
// zero value is ready to use; a nil *DialGates hands out nil gates (no
// sharing). It is safe for concurrent use.
type DialGates struct {
	mu sync.Mutex
	m  map[string]*DialGate
}

// For returns the gate of addr ("host:port", "tcp://host:port" or
// "ipc://PATH"), or nil when g is nil or addr is not a valid address.
func (g *DialGates) For(addr string) *DialGate {
	if g == nil {
		return nil
	}
	a, err := normalizeAddr(addr)
	if err != nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gate, ok := g.m[a]; ok {
		return gate
	}
	if g.m == nil || len(g.m) >= maxDialGates {
		g.m = map[string]*DialGate{}
	}
	gate := NewDialGate()
	g.m[a] = gate
	return gate
}

package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/wire/transport"
)

// errSubClosed: Recv on a closed device subscription.
var errSubClosed = errors.New("proxy: subscription closed")

// pubHub shares one connection to each master publisher among the devices
// of a fleet. Every device minion gets every publish anyway (each decodes
// it with the master's session key, shared by all minions, and checks
// whether it is targeted), so one SUB connection per master replaces one
// per device: a TCP connection, its buffers and two goroutines less per
// device in the proxy and in the master. Devices that filter publishes by
// topic (zmq_filtering) keep their own connection.
type pubHub struct {
	ctx   context.Context
	log   *slog.Logger
	queue int // publishes waiting for one device

	mu   sync.Mutex
	subs map[string]*sharedSub // by publisher address
}

func newPubHub(ctx context.Context, log *slog.Logger, queue int) *pubHub {
	return &pubHub{ctx: ctx, log: log, queue: queue, subs: map[string]*sharedSub{}}
}

// sharedSub is one publisher connection and the devices reading it.
type sharedSub struct {
	hub     *pubHub
	addr    string
	sub     *transport.Subscriber
	cancel  context.CancelFunc
	members map[*hubMember]struct{} // guarded by hub.mu
}

// hubMember is one device's subscription (a minion.Subscription).
type hubMember struct {
	s           *sharedSub
	q           chan [][]byte
	reconnected chan struct{}
	closed      chan struct{}
	once        sync.Once
	dropped     atomic.Uint64
	onReconnect atomic.Pointer[func()] // set: called instead of signalling reconnected
}

// subscribe implements minion.Options.Subscribe.
func (h *pubHub) subscribe(ctx context.Context, addr string, o transport.SubOptions) (minion.Subscription, error) {
	if len(o.Topics) > 0 {
		return transport.DialSub(ctx, addr, o)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.ctx.Err(); err != nil {
		return nil, err
	}
	s := h.subs[addr]
	if s == nil {
		sctx, cancel := context.WithCancel(h.ctx)
		// The shared queue holds what arrives while the pump hands the
		// previous publish to every device.
		so := o
		so.QueueSize = transport.DefaultSubQueue
		sub, err := transport.DialSub(sctx, addr, so)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("proxy: %w", err)
		}
		s = &sharedSub{hub: h, addr: addr, sub: sub, cancel: cancel, members: map[*hubMember]struct{}{}}
		h.subs[addr] = s
		go s.pump(sctx)
		go s.watchReconnects(sctx)
	}
	m := &hubMember{s: s, q: make(chan [][]byte, h.queue), reconnected: make(chan struct{}, 1), closed: make(chan struct{})}
	s.members[m] = struct{}{}
	return m, nil
}

// pump hands every publish to every device; a device whose queue is full
// loses it (the high-water mark of its own SUB socket would drop it too).
func (s *sharedSub) pump(ctx context.Context) {
	for {
		frames, err := s.sub.Recv(ctx)
		if err != nil {
			return
		}
		s.hub.mu.Lock()
		for m := range s.members {
			select {
			case m.q <- frames:
			default:
				if m.dropped.Add(1) == 1 {
					s.hub.log.Warn("a device's publish queue is full; dropping publishes", "addr", s.addr)
				}
			}
		}
		s.hub.mu.Unlock()
	}
}

// watchReconnects tells every device about a re-connection (the master
// may have restarted with a new session key: each re-authenticates).
func (s *sharedSub) watchReconnects(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.sub.Reconnected():
			s.hub.mu.Lock()
			for m := range s.members {
				if fn := m.onReconnect.Load(); fn != nil {
					(*fn)()
					continue
				}
				select {
				case m.reconnected <- struct{}{}:
				default:
				}
			}
			s.hub.mu.Unlock()
		}
	}
}

// Recv implements minion.Subscription.
func (m *hubMember) Recv(ctx context.Context) ([][]byte, error) {
	select {
	case f := <-m.q:
		return f, nil
	case <-m.closed:
		return nil, errSubClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Connected implements minion.Subscription.
func (m *hubMember) Connected() <-chan struct{} { return m.s.sub.Connected() }

// Up implements minion.Subscription: the shared connection is up.
func (m *hubMember) Up() bool { return m.s.sub.Up() }

// Dropped implements minion.Subscription: this device's full-queue drops.
func (m *hubMember) Dropped() uint64 { return m.dropped.Load() }

// OnReconnect implements minion.ReconnectNotifier: fn is called after
// each re-connection of the shared connection (instead of a signal on
// Reconnected, for which each device would keep a goroutine waiting).
func (m *hubMember) OnReconnect(fn func()) { m.onReconnect.Store(&fn) }

// Reconnected implements minion.Subscription.
func (m *hubMember) Reconnected() <-chan struct{} { return m.reconnected }

// Close implements minion.Subscription: the last device to leave closes
// the shared connection.
func (m *hubMember) Close() error {
	m.once.Do(func() {
		close(m.closed)
		h := m.s.hub
		h.mu.Lock()
		delete(m.s.members, m)
		last := len(m.s.members) == 0
		if last && h.subs[m.s.addr] == m.s {
			delete(h.subs, m.s.addr)
		}
		h.mu.Unlock()
		if last {
			m.s.cancel()
			_ = m.s.sub.Close()
		}
	})
	return nil
}

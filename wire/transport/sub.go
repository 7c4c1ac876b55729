package transport

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for SubOptions (Salt's recon_default and recon_max, and rcvhwm).
const (
	// DefaultReconnectMin is the first (and smallest) reconnection delay.
	DefaultReconnectMin = time.Second
	// DefaultReconnectMax caps the exponential reconnection delay.
	DefaultReconnectMax = 10 * time.Second
	// DefaultSubQueue is the default receive queue length.
	DefaultSubQueue = 1000
)

// SubOptions configures a Subscriber.
type SubOptions struct {
	// Identity is sent as the ZMTP identity (Salt uses the minion id); at most
	// 255 bytes.
	Identity []byte
	// Topics are the subscriptions (prefix match on the first frame). Nil or
	// empty subscribes to everything, as Salt does with zmq_filtering off.
	Topics [][]byte
	// ReconnectMin and ReconnectMax bound the randomised exponential backoff
	// between connection attempts. Defaults DefaultReconnectMin/Max.
	ReconnectMin, ReconnectMax time.Duration
	// QueueSize bounds received messages not yet taken by Recv; when it is
	// full new messages are dropped (libzmq RCVHWM semantics). Default DefaultSubQueue.
	QueueSize int
	// Intern, when set, is applied to each received message before it is
	// queued; it may return frames with the same bytes held elsewhere
	// (subscribers of one process receiving the same publishes keep one
	// copy of each instead of one per subscriber while they wait).
	Intern func(frames [][]byte) [][]byte
	// Deliver, when set, is given each received message on the
	// subscriber's reading goroutine instead of the queue: Recv then only
	// returns when the subscription ends, and QueueSize is unused. The
	// connection is not read while Deliver runs, so it must return
	// quickly. A process with thousands of subscribers (a swarm's
	// identities) saves a goroutine hand-off per message and subscriber.
	Deliver func(frames [][]byte)
	// Heartbeat, if positive, sends a ZMTP PING that often and reconnects when
	// nothing (data or PONG) has arrived for three intervals. It detects a
	// publisher that vanished without closing TCP. Off by default, as in Salt.
	Heartbeat time.Duration
	// Limits bounds the publisher's messages; zero fields take DefaultLimits values.
	Limits Limits
	// Logger receives connection logs; nil means slog.Default().
	Logger *slog.Logger
	// Gate, when set, is shared with the other clients of the same
	// publisher: while it refuses connections one of them probes and the
	// others wait for it instead of each redialing with its own backoff
	// (see DialGate); a connection lost or refused is then retried after
	// ReconnectMin instead of a growing backoff.
	Gate *DialGate
	// Source is the IP address the connection starts from (Salt's
	// source_address); "" lets the system choose.
	Source string
}

// Subscriber is the minion's SUB socket. It connects in the background and
// owns reconnection: when the publisher goes away (for example a master
// restart) it dials again with backoff, re-subscribes and signals
// Reconnected, so the caller can re-authenticate.
type Subscriber struct {
	addr string
	opts SubOptions
	lim  Limits
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	q           chan [][]byte
	connected   chan struct{}
	reconnected chan struct{}

	dropped    atomic.Uint64
	reconnects atomic.Uint64
	up         atomic.Bool
}

// DialSub starts a subscriber for the publisher at addr ("host:port" or
// "tcp://host:port"). It returns at once; the connection is made in the
// background until Close or until ctx is done. Use Connected to wait for the
// first connection.
func DialSub(ctx context.Context, addr string, opts SubOptions) (*Subscriber, error) {
	a, err := normalizeAddr(addr)
	if err != nil {
		return nil, err
	}
	if len(opts.Identity) > maxIdentity {
		return nil, fmt.Errorf("%w: identity of %d bytes (max %d)", ErrInvalid, len(opts.Identity), maxIdentity)
	}
	if opts.ReconnectMin <= 0 {
		opts.ReconnectMin = DefaultReconnectMin
	}
	if opts.ReconnectMax < opts.ReconnectMin {
		opts.ReconnectMax = max(DefaultReconnectMax, opts.ReconnectMin)
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultSubQueue
	}
	if len(opts.Topics) == 0 {
		opts.Topics = [][]byte{{}}
	}
	s := &Subscriber{
		addr:        a,
		opts:        opts,
		lim:         opts.Limits.withDefaults(),
		log:         opts.Logger,
		connected:   make(chan struct{}),
		reconnected: make(chan struct{}, 1),
	}
	if opts.Deliver == nil {
		s.q = make(chan [][]byte, opts.QueueSize)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.wg.Add(1)
	go s.run()
	return s, nil
}

// Recv returns the next published message. It returns ErrClosed after Close
// (or once the DialSub context is done) and ctx.Err() when ctx is done.
// With SubOptions.Deliver it only waits for one of those.
func (s *Subscriber) Recv(ctx context.Context) ([][]byte, error) {
	select {
	case m := <-s.q:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.ctx.Done():
		return nil, ErrClosed
	}
}

// Connected is closed once the first connection is established and
// subscribed.
func (s *Subscriber) Connected() <-chan struct{} { return s.connected }

// Reconnected receives a value after every re-connection that follows a lost
// connection (not after the first one). It has a buffer of one, so several
// re-connections between two reads are reported once.
func (s *Subscriber) Reconnected() <-chan struct{} { return s.reconnected }

// Up reports whether the subscriber is connected to the publisher right
// now (Salt's status.master check of an established connection to the
// publish port).
func (s *Subscriber) Up() bool { return s.up.Load() }

// Reconnects returns how many re-connections have happened.
func (s *Subscriber) Reconnects() uint64 { return s.reconnects.Load() }

// Dropped returns how many messages were dropped because the receive queue
// was full.
func (s *Subscriber) Dropped() uint64 { return s.dropped.Load() }

// Close disconnects and stops reconnecting. It waits for the background
// goroutines.
func (s *Subscriber) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

func (s *Subscriber) run() {
	defer s.wg.Done()
	backoff := s.opts.ReconnectMin
	first := true
	for s.ctx.Err() == nil {
		c, err := s.connect()
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.log.Debug("transport: subscribe failed", "addr", s.addr, "err", err, "retry", backoff)
			s.sleep(backoff)
			if s.opts.Gate == nil {
				backoff = min(2*backoff, s.opts.ReconnectMax)
			}
			continue
		}
		backoff = s.opts.ReconnectMin
		s.up.Store(true)
		if first {
			first = false
			close(s.connected)
		} else {
			s.reconnects.Add(1)
			s.log.Info("transport: reconnected to publisher", "addr", s.addr)
			select {
			case s.reconnected <- struct{}{}:
			default:
			}
		}
		s.up.Store(true)
		err = s.serve(c)
		s.up.Store(false)
		if s.ctx.Err() != nil {
			return
		}
		s.log.Info("transport: publisher connection lost", "addr", s.addr, "err", err)
		s.sleep(backoff)
	}
}

// sleep waits a random duration in [d/2, d] or until Close.
func (s *Subscriber) sleep(d time.Duration) {
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctx.Done():
	}
}

func (s *Subscriber) connect() (*zconn, error) {
	var (
		raw net.Conn
		err error
	)
	if g := s.opts.Gate; g != nil {
		// One handshake timeout of waiting for the gate (or probing).
		ctx, cancel := context.WithTimeout(s.ctx, s.lim.HandshakeTimeout)
		raw, err = g.dial(ctx, s.addr, s.opts.Source)
		cancel()
	} else {
		ctx, cancel := context.WithTimeout(s.ctx, s.lim.HandshakeTimeout)
		raw, err = dialOnce(ctx, s.addr, s.opts.Source)
		cancel()
	}
	if err != nil {
		return nil, err
	}
	c, err := openZMTP(s.ctx, raw, roleSub, s.opts.Identity, s.lim, nil, nil)
	if err != nil {
		return nil, err
	}
	for _, t := range s.opts.Topics {
		msg := make([]byte, 1+len(t))
		msg[0] = 1
		copy(msg[1:], t)
		if err := c.send([][]byte{msg}); err != nil {
			c.close()
			return nil, fmt.Errorf("transport: subscribe: %w", err)
		}
	}
	return c, nil
}

// serve reads messages until the connection fails or Close.
func (s *Subscriber) serve(c *zconn) error {
	defer c.close()
	stop := context.AfterFunc(s.ctx, c.close)
	defer stop()
	if hb := s.opts.Heartbeat; hb > 0 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.heartbeat(c, hb)
		}()
	}
	for {
		frames, err := c.recvIdle()
		if err != nil {
			return err
		}
		if s.opts.Intern != nil {
			frames = s.opts.Intern(frames)
		}
		if s.opts.Deliver != nil {
			s.opts.Deliver(frames)
			continue
		}
		select {
		case s.q <- frames:
		default:
			s.dropped.Add(1)
		}
	}
}

func (s *Subscriber) heartbeat(c *zconn, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if time.Since(c.lastRead()) > 3*every {
				s.log.Warn("transport: publisher heartbeat lost", "addr", s.addr)
				c.close()
				return
			}
			if err := c.ping(3 * every); err != nil {
				return
			}
		}
	}
}

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/internal/ctxsleep"
)

// Defaults for ReqClient (Salt's AsyncReqChannel.send defaults).
const (
	// DefaultTries is the default number of attempts of ReqClient.Send.
	DefaultTries = 3
	// DefaultRequestTimeout is the default time limit of one attempt.
	DefaultRequestTimeout = 60 * time.Second
)

// Request sends one request body to the ROUTER (or REP) at addr over a new REQ
// connection, waits for the one-frame reply and closes the connection, as
// Salt's minion does for every request. While the server refuses connections
// it keeps dialing (like libzmq's background reconnect) until the timeout.
// timeout bounds the whole exchange; if it is zero or negative only ctx does.
// A request that runs out of time fails with an error matching ErrTimeout.
func Request(ctx context.Context, addr string, req []byte, timeout time.Duration) ([]byte, error) {
	return request(ctx, nil, addr, "", req, timeout, DefaultLimits(), nil)
}

// ReqClient sends requests with retries, like Salt's
// AsyncReqChannel.send(tries, timeout): every try uses a fresh connection
// (or, with Pool, an idle one of the pool) and any error is retried. A retried request may be processed twice by the
// server, so requests must be idempotent or carry their own nonce.
type ReqClient struct {
	// Addr is the server address, "host:port" or "tcp://host:port".
	Addr string
	// Tries is the number of attempts; default DefaultTries.
	Tries int
	// Timeout bounds each attempt; default DefaultRequestTimeout.
	Timeout time.Duration
	// Limits bounds replies; zero fields take DefaultLimits values.
	Limits Limits
	// Logger receives retry logs; nil means slog.Default().
	Logger *slog.Logger
	// KeepWaiting keeps waiting on a try's connection when its Timeout
	// runs out instead of closing it and sending the request again: the
	// request is already queued at the server, and a copy on a new
	// connection would only queue the same work once more (after a master
	// restart, 10,000 re-authenticating minions sending a copy every
	// auth_timeout held ~7 connections each and filled the master's
	// descriptors and listen backlog, so even the CLI could not connect).
	// A new try, on a new connection, starts only when the connection
	// fails (closed, reset, refused); a try that merely waits counts as
	// the tries its wait spans. The bytes sent are those of the default;
	// the whole exchange is bounded by Tries*Timeout, as Salt's minion
	// waits on its one REQ socket through its tries.
	KeepWaiting bool
	// Gate, when set, is shared with the other clients of the same
	// server: while it refuses connections one of them probes and the
	// others wait (see DialGate).
	Gate *DialGate
	// Pool, when set, is given the connection of the try that got its
	// reply, for the next requests to the same server, instead of that
	// connection being closed: a minion's sign-in is followed by its
	// returns and other requests, which then reuse it (see ReqPool; the
	// bytes are the same, only the connection lives longer). After a
	// master restart, 10,000 re-authenticating minions otherwise each
	// connected and handshook twice: for the _auth and again for their
	// first return.
	Pool *ReqPool
	// Source is the IP address the connections start from (Salt's
	// source_address); "" lets the system choose.
	Source string
}

// Send performs the request, retrying up to Tries times. It returns the last
// error when every try failed, or ctx.Err() (wrapped) when ctx is done.
func (c *ReqClient) Send(ctx context.Context, req []byte) ([]byte, error) {
	tries, timeout := c.Tries, c.Timeout
	if tries <= 0 {
		tries = DefaultTries
	}
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	lim := c.Limits.withDefaults()
	if c.KeepWaiting && tries > 1 {
		return c.sendKeepWaiting(ctx, req, tries, timeout, lim, log)
	}
	var err error
	for i := 1; i <= tries; i++ {
		var reply []byte
		reply, err = request(ctx, c.Gate, c.Addr, c.Source, req, timeout, lim, c.Pool)
		if err == nil {
			return reply, nil
		}
		if ctx.Err() != nil || errors.Is(err, ErrInvalid) {
			return nil, err
		}
		log.Debug("transport: request failed", "addr", c.Addr, "try", i, "of", tries, "err", err)
	}
	return nil, err
}

// sendKeepWaiting is Send with KeepWaiting: one connection at a time,
// waiting for its reply until Tries*Timeout has passed; a connection that
// fails before the reply is replaced by a new one (a new try) while tries
// remain.
func (c *ReqClient) sendKeepWaiting(ctx context.Context, req []byte, tries int, timeout time.Duration, lim Limits, log *slog.Logger) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(tries)*timeout)
	defer cancel()
	start := time.Now()
	var err error
	for try := 1; try <= tries; try++ {
		var reply []byte
		reply, err = request(ctx, c.Gate, c.Addr, c.Source, req, 0, lim, c.Pool)
		if err == nil {
			return reply, nil
		}
		if ctx.Err() != nil || errors.Is(err, ErrInvalid) {
			return nil, err
		}
		log.Debug("transport: request failed", "addr", c.Addr, "try", try, "of", tries, "err", err)
		// The tries a long wait used up count too: a connection that
		// failed after two timeouts' worth of waiting was three tries.
		try = max(try, int(time.Since(start)/timeout))
	}
	return nil, err
}

// request makes one exchange on a new connection. With keep, an idle
// connection of that pool is used first (a new one only when it turns out
// to be dead), and the connection is given back to the pool after a good
// reply instead of being closed.
func request(ctx context.Context, gate *DialGate, addr, source string, req []byte, timeout time.Duration, lim Limits, keep *ReqPool) (reply []byte, err error) {
	a, err := normalizeAddr(addr)
	if err != nil {
		return nil, err
	}
	if keep != nil {
		var deadline time.Time
		if timeout > 0 {
			deadline = time.Now().Add(timeout)
		}
		if reply, err, done := keep.reuse(ctx, a, req, deadline); done {
			return reply, err
		}
	}
	lim = lim.withDefaults()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	raw, err := dialRetry(ctx, gate, a, source)
	if err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	c, err := openZMTP(ctx, raw, roleReq, nil, lim, nil, nil)
	if err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	stop := context.AfterFunc(ctx, c.close)
	defer func() {
		// stop is false when ctx already closed c.
		if !stop() || err != nil || keep == nil {
			c.close()
			return
		}
		keep.put(c)
	}()
	if err := c.send([][]byte{{}, req}); err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	frames, err := c.recv()
	if err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	if len(frames) != 2 || len(frames[0]) != 0 {
		return nil, fmt.Errorf("%w: reply from %s has %d frames, want [\"\", body]", ErrProtocol, a, len(frames))
	}
	return frames[1], nil
}

// dialRetry dials addr, retrying refused connections with backoff while ctx
// has a deadline that has not passed. With a gate the clients sharing it
// wait for one probing dialer while the server refuses connections.
func dialRetry(ctx context.Context, gate *DialGate, addr, source string) (net.Conn, error) {
	if gate != nil {
		return gate.dial(ctx, addr, source)
	}
	backoff := dialBackoffMin
	for {
		raw, err := dialOnce(ctx, addr, source)
		if err == nil {
			return raw, nil
		}
		dl, ok := ctx.Deadline()
		if !ok || ctx.Err() != nil {
			return nil, err
		}
		wait := min(backoff, time.Until(dl))
		if wait <= 0 || ctxsleep.Sleep(ctx, wait) != nil {
			return nil, err
		}
		backoff = min(2*backoff, dialBackoffMax)
	}
}

// ctxErr explains a failure caused by ctx running out as ErrTimeout (or the
// cancellation), keeping the underlying error.
func ctxErr(ctx context.Context, addr string, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: request to %s: %w", ErrTimeout, addr, err)
	case ctx.Err() != nil:
		return fmt.Errorf("transport: request to %s: %w (%w)", addr, ctx.Err(), err)
	default:
		return fmt.Errorf("transport: request to %s: %w", addr, mapNetErr(err))
	}
}

// DefaultPoolIdle is the default number of idle connections a ReqPool keeps.
const DefaultPoolIdle = 1

// DefaultPoolIdleTimeout is how long a ReqPool keeps a connection unused
// before it closes it.
const DefaultPoolIdleTimeout = 5 * time.Minute

// ReqPool sends requests like ReqClient but keeps the REQ connection open
// between requests (up to MaxIdle idle ones), so a busy peer does not pay
// a TCP connect and ZMTP handshake per request. The bytes of every request
// and reply are the ones ReqClient sends; only the connection is reused. A
// connection that fails or times out is closed and never reused; a request
// that fails on a reused connection before any reply (the server closed it
// while idle, e.g. a restarted master) is sent once more on a fresh
// connection without counting as a try. It is safe for concurrent use:
// concurrent requests use separate connections.
type ReqPool struct {
	// Addr is the server address, "host:port" or "tcp://host:port".
	Addr string
	// MaxIdle bounds the idle connections kept; 0 means DefaultPoolIdle.
	MaxIdle int
	// IdleTimeout is how long a connection is kept unused: it is closed
	// then (one timer per pool, armed while connections are idle), so a
	// quiet peer holds no descriptor on the server, as a Salt minion that
	// opens a REQ connection per request does not; 0 means
	// DefaultPoolIdleTimeout.
	IdleTimeout time.Duration
	// Limits bounds replies; zero fields take DefaultLimits values.
	Limits Limits
	// Logger receives retry logs; nil means slog.Default().
	Logger *slog.Logger
	// MaxOpen, when > 0, bounds the requests (so the connections in use)
	// at once, besides the MaxIdle idle ones: a request beyond it waits,
	// for as long as its context allows (the wait is not part of an
	// attempt's timeout). A pool shared by thousands of identities (a
	// proxy's devices) sets it so that a burst of returns does not open a
	// connection for each.
	MaxOpen int
	// Gate, when set, is shared with the other clients of the same
	// server: while it refuses connections one of them probes and the
	// others wait (see DialGate).
	Gate *DialGate
	// Source is the IP address the connections start from (Salt's
	// source_address); "" lets the system choose.
	Source string

	mu     sync.Mutex
	idle   []pooledConn
	closed bool
	slots  chan struct{} // MaxOpen tokens, made on first use
	reaper *time.Timer   // closes connections idle for IdleTimeout; nil when none are
}

type pooledConn struct {
	c    *zconn
	used time.Time
}

// Send performs the request with up to tries attempts (default
// DefaultTries), each bounded by timeout (default DefaultRequestTimeout).
func (p *ReqPool) Send(ctx context.Context, req []byte, tries int, timeout time.Duration) ([]byte, error) {
	if len(req) == 0 {
		return nil, fmt.Errorf("%w: empty request", ErrInvalid)
	}
	if tries <= 0 {
		tries = DefaultTries
	}
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	a, err := normalizeAddr(p.Addr)
	if err != nil {
		return nil, err
	}
	lim := p.Limits.withDefaults()
	if slots := p.openSlots(); slots != nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctxErr(ctx, a, ctx.Err())
		}
		defer func() { <-slots }()
	}
	for i := 1; i <= tries; i++ {
		var reply []byte
		reply, err = p.attempt(ctx, a, req, timeout, lim)
		if err == nil {
			return reply, nil
		}
		if ctx.Err() != nil || errors.Is(err, ErrInvalid) {
			return nil, err
		}
		log := p.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Debug("transport: request failed", "addr", a, "try", i, "of", tries, "err", err)
	}
	return nil, err
}

// attempt is one try: on a reused connection first (redone once on a fresh
// one if that connection turns out to be dead), else on a new one. The
// try is bounded by timeout from its start: on a reused connection by
// the connection's read deadline (its reply must arrive by then; the
// write has the write timeout) instead of a derived context with its own
// timer, which was ~2.5% of a 10,000-identity swarm's CPU (a return per
// identity per job); on a new one by a context deadline, which the dial's
// retries also obey.
func (p *ReqPool) attempt(ctx context.Context, a string, req []byte, timeout time.Duration, lim Limits) ([]byte, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	if reply, err, done := p.reuse(ctx, a, req, deadline); done {
		return reply, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	raw, err := dialRetry(ctx, p.Gate, a, p.Source)
	if err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	c, err := openZMTP(ctx, raw, roleReq, nil, lim, nil, nil)
	if err != nil {
		return nil, ctxErr(ctx, a, err)
	}
	reply, err, _ := p.exchange(ctx, a, c, req, time.Time{})
	return reply, err
}

// reuse sends req on an idle connection of the pool, if there is one.
// done is false when there was none or it turned out to be dead before
// the request could have reached the server (the caller then dials a new
// one); otherwise reply and err are the attempt's.
func (p *ReqPool) reuse(ctx context.Context, a string, req []byte, deadline time.Time) (reply []byte, err error, done bool) {
	c := p.take()
	if c == nil {
		return nil, nil, false
	}
	reply, err, sent := p.exchange(ctx, a, c, req, deadline)
	if err == nil || ctx.Err() != nil || sent {
		return reply, err, true
	}
	return nil, nil, false
}

// exchange sends req on c and reads the reply; a non-zero deadline is
// the time the reply must have arrived by (c's read deadline). sent
// reports whether the failure may have happened after the server got the
// request (anything but a connection found closed or reset before a
// reply): a dead idle connection fails with sent false.
func (p *ReqPool) exchange(ctx context.Context, a string, c *zconn, req []byte, deadline time.Time) (reply []byte, err error, sent bool) {
	stop := context.AfterFunc(ctx, c.close)
	defer func() {
		if !stop() || err != nil {
			c.close()
			return
		}
		p.put(c)
	}()
	// A connection's read deadline is only ever set here: a reused one
	// still has its previous request's, which this one replaces.
	_ = c.raw.SetReadDeadline(deadline)
	if tried, err := c.sendAwait([][]byte{{}, req}); err != nil {
		return nil, ctxErr(ctx, a, mapNetErr(err)), tried && !deadConn(err)
	}
	frames, err := c.recv()
	if err != nil {
		return nil, ctxErr(ctx, a, err), !deadConn(err)
	}
	if len(frames) != 2 || len(frames[0]) != 0 {
		return nil, fmt.Errorf("%w: reply from %s has %d frames, want [\"\", body]", ErrProtocol, a, len(frames)), true
	}
	return frames[1], nil, true
}

// deadConn reports whether err means the connection was already closed by
// the peer (EOF, reset, broken pipe) rather than a timeout or a bad reply.
func deadConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// openSlots returns the MaxOpen tokens (nil when unbounded). A request
// holds one token from its first attempt to its end.
func (p *ReqPool) openSlots() chan struct{} {
	if p.MaxOpen <= 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.slots == nil {
		p.slots = make(chan struct{}, p.MaxOpen)
	}
	return p.slots
}

// idleTimeout returns IdleTimeout or its default.
func (p *ReqPool) idleTimeout() time.Duration {
	if p.IdleTimeout > 0 {
		return p.IdleTimeout
	}
	return DefaultPoolIdleTimeout
}

// take returns a reusable idle connection, or nil.
func (p *ReqPool) take() *zconn {
	p.mu.Lock()
	defer p.mu.Unlock()
	maxAge := p.idleTimeout()
	for len(p.idle) > 0 {
		pc := p.idle[len(p.idle)-1]
		p.idle[len(p.idle)-1] = pooledConn{}
		p.idle = p.idle[:len(p.idle)-1]
		if time.Since(pc.used) < maxAge {
			return pc.c
		}
		pc.c.close()
	}
	return nil
}

// put keeps c for the next request, or closes it when the pool is full or
// closed.
func (p *ReqPool) put(c *zconn) {
	maxIdle := p.MaxIdle
	if maxIdle <= 0 {
		maxIdle = DefaultPoolIdle
	}
	p.mu.Lock()
	if p.closed || len(p.idle) >= maxIdle {
		p.mu.Unlock()
		c.close()
		return
	}
	p.idle = append(p.idle, pooledConn{c: c, used: time.Now()})
	if p.reaper == nil {
		p.reaper = time.AfterFunc(p.idleTimeout(), p.reap)
	}
	p.mu.Unlock()
}

// reap closes the connections idle for IdleTimeout and re-arms the timer
// for the oldest one left (the idle list is oldest first).
func (p *ReqPool) reap() {
	maxAge := p.idleTimeout()
	var stale []*zconn
	p.mu.Lock()
	now := time.Now()
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].used) >= maxAge {
		stale = append(stale, p.idle[n].c)
		n++
	}
	if n > 0 {
		rest := copy(p.idle, p.idle[n:])
		clear(p.idle[rest:])
		p.idle = p.idle[:rest]
	}
	if len(p.idle) > 0 && !p.closed {
		p.reaper = time.AfterFunc(maxAge-now.Sub(p.idle[0].used), p.reap)
	} else {
		p.reaper = nil
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.close()
	}
}

// IdleConns returns the connections kept open between requests.
func (p *ReqPool) IdleConns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Close closes the idle connections; requests still running close theirs
// when they end. Send may still be used afterwards (without pooling).
func (p *ReqPool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	if p.reaper != nil {
		p.reaper.Stop()
		p.reaper = nil
	}
	p.mu.Unlock()
	for _, pc := range idle {
		pc.c.close()
	}
}

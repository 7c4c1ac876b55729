package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for ReqOptions.
const (
	// DefaultWorkers is the default number of concurrent handler calls. Salt
	// runs 5 worker processes; handlers here are cheaper goroutines.
	DefaultWorkers = 16
	// DefaultReqQueue is the default number of requests waiting for a worker.
	DefaultReqQueue = 1000
	// DefaultMaxInFlightPerConn bounds unanswered requests from one
	// connection (a REQ peer has at most one; a DEALER may pipeline).
	DefaultMaxInFlightPerConn = 32
)

// Handler answers one request body. It returns the reply body and ok=true,
// or ok=false to send no reply at all (the REQ peer then times out, as with
// Salt in a few error cases). ctx is cancelled when the server closes and
// carries the peer address (see PeerAddr).
type Handler func(ctx context.Context, req []byte) (reply []byte, ok bool)

// ReqOptions configures a ReqServer.
type ReqOptions struct {
	// Workers is the number of handler calls run concurrently. Default DefaultWorkers.
	Workers int
	// QueueSize bounds requests waiting for a worker; when it is full the
	// connections with a new request are not read until there is room
	// (back-pressure; logged and counted, nothing is dropped). Default DefaultReqQueue.
	QueueSize int
	// MaxInFlightPerConn bounds unanswered requests per connection; a
	// connection at the bound is not read until a reply goes out.
	// Default DefaultMaxInFlightPerConn.
	MaxInFlightPerConn int
	// Limits bounds peers; zero fields take DefaultLimits values.
	Limits Limits
	// Logger receives connection and drop logs; nil means slog.Default().
	Logger *slog.Logger
	// Slow, when set, classifies a request body: a request it reports
	// slow (a master's CPU-bound authentication: an RSA private-key
	// operation) waits in a second queue served by SlowWorkers workers of
	// its own, so that returns and publishes are not held behind
	// thousands of authentications after a master restart, and CPU-bound
	// work runs about one per core instead of hundreds at once. Each queue
	// has QueueSize places. It must be cheap and must not keep body.
	Slow func(body []byte) bool
	// SlowWorkers is the number of workers for slow requests; default
	// twice GOMAXPROCS.
	SlowWorkers int
	// Release, when set, is called with each reply the Handler returned
	// once it has been written to the connection (or could not be), so
	// the handler may reuse the reply's buffer.
	Release func(reply []byte)
}

// ReqServer is the master's ROUTER socket. It reads requests of the form
// [envelope..., "", body] from every connection (REQ peers send ["", body]),
// runs the Handler on a bounded worker pool and writes [envelope..., "", reply]
// back on the connection the request came from. Replies on a pipelining DEALER
// connection may be sent out of order.
type ReqServer struct {
	l    *listener
	h    Handler
	opts ReqOptions
	log  *slog.Logger

	jobs    chan reqJob
	slow    chan reqJob // requests Slow reported; taken when jobs is empty
	workers sync.WaitGroup
	stopMu  sync.Mutex
	stop    func() bool

	waited    atomic.Uint64
	shed      atomic.Uint64
	malformed atomic.Uint64
	lastWarn  atomic.Int64
	lastBusy  atomic.Int64
}

type reqJob struct {
	c     *zconn
	conn  *connSlot // marked idle again once the reply is written
	slots chan struct{}
	env   [][]byte // routing envelope including the empty delimiter
	body  []byte
	// reserved is the in-flight budget held until the request is handled.
	reserved int64
}

// reqKey is the context key of a request's reqInfo.
type reqKey struct{}

// reqInfo is what a Handler's context carries about its request: the
// peer's address and the means to answer later.
type reqInfo struct {
	peer    net.Addr
	s       *ReqServer
	j       reqJob
	claimed atomic.Bool
	once    sync.Once
}

// PeerAddr returns the remote address of the connection a request arrived on,
// from a Handler's context.
func PeerAddr(ctx context.Context) (net.Addr, bool) {
	ri, ok := ctx.Value(reqKey{}).(*reqInfo)
	if !ok || ri.peer == nil {
		return nil, false
	}
	return ri.peer, true
}

// Later lets a Handler answer its request after it has returned, without
// holding a worker meanwhile (the master holds a minion's start event
// until the minion's publish subscription is applied, so that the minion
// says it is ready only once a publish can reach it). The Handler calls
// Later, returns (its return values are then ignored) and calls answer
// exactly once, from any goroutine, with what it would have returned.
// Until then the request counts as in flight on its connection. ok is
// false when ctx is not the context of a ReqServer's request; the Handler
// then answers by returning, as usual.
func Later(ctx context.Context) (answer func(reply []byte, ok bool), ok bool) {
	ri, ok := ctx.Value(reqKey{}).(*reqInfo)
	if !ok || ri.s == nil || !ri.claimed.CompareAndSwap(false, true) {
		return nil, false
	}
	return ri.answer, true
}

// answer sends the reply of a request answered Later (once).
func (ri *reqInfo) answer(reply []byte, ok bool) {
	ri.once.Do(func() { ri.s.reply(ri.j, reply, ok) })
}

// ListenReq listens on addr ("host:port" or "tcp://host:port"; port 0 picks a
// free port; or "ipc://PATH", a unix socket of mode 0600 removed on Close)
// and serves requests with h until Close or until ctx is done.
func ListenReq(ctx context.Context, addr string, h Handler, opts ReqOptions) (*ReqServer, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: nil handler", ErrInvalid)
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultReqQueue
	}
	if opts.MaxInFlightPerConn <= 0 {
		opts.MaxInFlightPerConn = DefaultMaxInFlightPerConn
	}
	if opts.Slow != nil && opts.SlowWorkers <= 0 {
		opts.SlowWorkers = 2 * runtime.GOMAXPROCS(0)
	}
	opts.Limits = opts.Limits.withDefaults()
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	l, err := newListener(ctx, addr, opts.Limits, log)
	if err != nil {
		return nil, fmt.Errorf("transport: req listen %q: %w", addr, err)
	}
	s := &ReqServer{l: l, h: h, opts: opts, log: log, jobs: make(chan reqJob, opts.QueueSize)}
	if opts.Slow != nil {
		s.slow = make(chan reqJob, opts.QueueSize)
		for range opts.SlowWorkers {
			s.workers.Add(1)
			go s.worker(s.slow)
		}
	}
	for range opts.Workers {
		s.workers.Add(1)
		go s.worker(s.jobs)
	}
	// The callback only shuts down; it never touches s.stop, which is set
	// under stopMu after registration (the callback may already be running).
	stop := context.AfterFunc(ctx, func() { _ = s.shutdown() })
	s.stopMu.Lock()
	s.stop = stop
	s.stopMu.Unlock()
	l.evictable = true
	l.serve(s.handle)
	return s, nil
}

// Addr returns the address the server listens on.
func (s *ReqServer) Addr() net.Addr { return s.l.ln.Addr() }

// Dropped returns how many requests were dropped because the queue was
// full: always 0 since the queue applies back-pressure (see Waited); kept
// for callers that report it.
func (s *ReqServer) Dropped() uint64 { return 0 }

// QueueLen returns the number of requests waiting for a worker (both
// queues).
func (s *ReqServer) QueueLen() int { return len(s.jobs) + len(s.slow) }

// QueueCap is the bound of the request queues (see QueueLen).
func (s *ReqServer) QueueCap() int { return cap(s.jobs) + cap(s.slow) }

// Waited returns how many requests had to wait for room in a full queue.
func (s *ReqServer) Waited() uint64 { return s.waited.Load() }

// Shed returns how many queued requests were dropped unhandled because
// their connection had closed before a worker took them.
func (s *ReqServer) Shed() uint64 { return s.shed.Load() }

// Malformed returns how many messages were ignored because they were not
// [envelope..., "", body] with exactly one body frame.
func (s *ReqServer) Malformed() uint64 { return s.malformed.Load() }

// Close stops accepting, disconnects every peer, cancels the handlers'
// context and waits for running handlers to return.
func (s *ReqServer) Close() error {
	s.stopMu.Lock()
	if s.stop != nil {
		s.stop()
	}
	s.stopMu.Unlock()
	return s.shutdown()
}

func (s *ReqServer) shutdown() error {
	err := s.l.close()
	s.workers.Wait()
	return err
}

func (s *ReqServer) handle(raw net.Conn, slot *connSlot) connLoop {
	c, err := openZMTPApart(s.l.ctx, raw, roleRouter, nil, s.l.lim, s.l.budget, s.l.bufs)
	if err != nil {
		s.log.Debug("transport: req handshake failed", "peer", raw.RemoteAddr(), "err", err)
		return nil
	}
	slot.end() // the handshake is done: idle until a request arrives
	return &reqConn{s: s, raw: raw, c: c, slot: slot, slots: make(chan struct{}, s.opts.MaxInFlightPerConn)}
}

// reqConn is a request connection's loop (connLoop): each step reads one
// request and queues it for the workers.
type reqConn struct {
	s     *ReqServer
	raw   net.Conn
	c     *zconn
	slot  *connSlot
	slots chan struct{} // the connection's requests in flight
}

func (r *reqConn) conn() *zconn { return r.c }
func (r *reqConn) end()         { r.c.close() }

func (r *reqConn) step() bool {
	s, c, slot := r.s, r.c, r.slot
	frames, err := c.recv()
	if err != nil {
		if errors.Is(err, ErrBusy) {
			s.warnBusy(r.raw.RemoteAddr(), err)
		}
		s.log.Debug("transport: req connection closed", "peer", r.raw.RemoteAddr(), "err", err)
		return false
	}
	reserved := c.takeReserved()
	if !slot.begin() {
		// Evicted while idle (the gate needed its place): the peer
		// sees the connection closed before a reply and sends the
		// request again on a new one; it is not handled here.
		c.releaseReserved(reserved)
		return false
	}
	delim := -1
	for i, f := range frames {
		if len(f) == 0 {
			delim = i
			break
		}
	}
	if delim < 0 || len(frames) != delim+2 {
		slot.end()
		c.releaseReserved(reserved)
		s.malformed.Add(1)
		s.log.Debug("transport: ignoring malformed request", "peer", r.raw.RemoteAddr(), "frames", len(frames))
		return true
	}
	select {
	case r.slots <- struct{}{}:
	case <-c.done:
		c.releaseReserved(reserved)
		return false
	case <-s.l.ctx.Done():
		c.releaseReserved(reserved)
		return false
	}
	j := reqJob{c: c, conn: slot, slots: r.slots, env: frames[: delim+1 : delim+1], body: frames[delim+1], reserved: reserved}
	q := s.jobs
	if s.slow != nil && s.opts.Slow(j.body) {
		q = s.slow
	}
	select {
	case q <- j:
		return true
	default:
	}
	// The queue is full: back-pressure. This connection is not read
	// until a worker takes its request (its peer waits, as a REQ peer
	// does for any slow reply); nothing is dropped.
	n := s.waited.Add(1)
	s.warnFull(n)
	select {
	case q <- j:
		return true
	case <-c.done:
		<-r.slots
		c.releaseReserved(reserved)
		return false
	case <-s.l.ctx.Done():
		c.releaseReserved(reserved)
		return false
	}
}

// warnBusy logs a connection closed for the in-flight budget, at most
// once a second.
func (s *ReqServer) warnBusy(peer net.Addr, err error) {
	now := time.Now().UnixNano()
	last := s.lastBusy.Load()
	if now-last < int64(time.Second) || !s.lastBusy.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn("transport: in-flight request bytes over budget, closing a connection", "addr", s.Addr(), "peer", peer,
		"budget", s.opts.Limits.InFlightBytes, "refused_total", s.l.budget.refusedTotal(), "err", err)
}

// Refused returns how many large frames were refused for the in-flight budget.
func (s *ReqServer) Refused() uint64 { return s.l.budget.refusedTotal() }

// warnFull logs a full queue at most once a second.
func (s *ReqServer) warnFull(total uint64) {
	now := time.Now().UnixNano()
	last := s.lastWarn.Load()
	if now-last < int64(time.Second) || !s.lastWarn.CompareAndSwap(last, now) {
		return
	}
	s.log.Warn("transport: request queue full, holding requests back until workers catch up", "addr", s.Addr(), "queue", s.opts.QueueSize, "waited_total", total)
}

// worker runs the requests of queue q until the server closes.
func (s *ReqServer) worker(q chan reqJob) {
	defer s.workers.Done()
	for {
		select {
		case <-s.l.ctx.Done():
			return
		case j := <-q:
			s.run(j)
		}
	}
}

func (s *ReqServer) run(j reqJob) {
	select {
	case <-j.c.done:
		// The peer hung up while the request waited for a worker (a REQ
		// peer that timed out sends it again on a new connection): no
		// reply can reach it, so the request is shed instead of adding
		// stale work to an overloaded master (an auth storm).
		s.shed.Add(1)
		j.c.releaseReserved(j.reserved)
		s.reply(j, nil, false)
		return
	default:
	}
	ri := &reqInfo{peer: j.c.raw.RemoteAddr(), s: s, j: j}
	reply, ok := s.call(j, ri)
	j.c.releaseReserved(j.reserved)
	if ri.claimed.Load() {
		return // answered by the Handler through Later
	}
	s.reply(j, reply, ok)
}

// reply writes a request's reply (none when !ok) and frees its place on
// the connection.
func (s *ReqServer) reply(j reqJob, reply []byte, ok bool) {
	defer func() { <-j.slots; s.l.requestDone(j.conn) }()
	if !ok {
		return
	}
	if err := j.c.send(append(j.env, reply)); err != nil {
		s.log.Debug("transport: reply not delivered", "peer", j.c.raw.RemoteAddr(), "err", err)
	}
	if s.opts.Release != nil {
		s.opts.Release(reply)
	}
}

func (s *ReqServer) call(j reqJob, ri *reqInfo) (reply []byte, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("transport: request handler panicked", "peer", j.c.raw.RemoteAddr(), "panic", r, "stack", string(debug.Stack()))
			reply, ok = nil, false
			if ri.claimed.Load() {
				// It panicked after Later: its answer may never come.
				ri.answer(nil, false)
			}
		}
	}()
	ctx := context.WithValue(s.l.ctx, reqKey{}, ri)
	return s.h(ctx, j.body)
}

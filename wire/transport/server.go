package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsalt/gsalt/internal/stackpad"
)

// listener is the accept loop shared by PubServer and ReqServer. Every
// accepted connection is handled on its own goroutine (handshake included), so
// a silent or slow client never delays another one.
type listener struct {
	ln  net.Listener
	lim Limits
	log *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]*connSlot
	closed bool
	// evictable: idle connections may be closed to admit new ones when
	// the shared ConnGate (lim.Gate) is spent (request servers).
	evictable bool

	// recent: the request connections that finished a request last, the
	// first to be evicted (evictIdle).
	recent recentIdle

	rejected atomic.Uint64
	// budget bounds the bytes of large frames in flight on this server.
	budget *budget
	// bufs lends the connections their read buffers while they read.
	bufs *readBufs
}

func newListener(ctx context.Context, addr string, lim Limits, log *slog.Logger) (*listener, error) {
	a, err := normalizeAddr(addr)
	if err != nil {
		return nil, err
	}
	var ln net.Listener
	if nw, na := network(a); nw == "unix" {
		ln, err = listenUnix(na)
	} else {
		var lc net.ListenConfig
		ln, err = lc.Listen(ctx, nw, na)
	}
	if err != nil {
		return nil, err
	}
	l := &listener{ln: ln, lim: lim, log: log, conns: make(map[net.Conn]*connSlot), budget: newBudget(lim.InFlightBytes), bufs: newReadBufs(readBufsKept)}
	l.ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return l, nil
}

// connLoop is a server connection after its handshake, driven by
// listener.loop: loop waits on the guard of conn for the peer's next
// bytes, step handles one message and reports whether the connection goes
// on, and end releases the connection once step has reported its end.
type connLoop interface {
	conn() *zconn
	step() bool
	end()
}

// serve runs the accept loop until close; handle owns the connection: it
// returns the connection's loop, or nil when the connection ended (closed
// by handle) before one could start.
func (l *listener) serve(handle func(net.Conn, *connSlot) connLoop) {
	if l.evictable {
		l.lim.Gate.addEvictable(l)
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		var delay time.Duration
		for {
			raw, err := l.ln.Accept()
			if err != nil {
				if l.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
					return
				}
				// Transient (EMFILE and the like): back off, as net/http does.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				l.log.Warn("transport: accept failed", "addr", l.ln.Addr(), "err", err, "retry", delay)
				select {
				case <-time.After(delay):
				case <-l.ctx.Done():
					return
				}
				continue
			}
			delay = 0
			slot := l.track(raw)
			if slot == nil {
				l.rejected.Add(1)
				l.log.Warn("transport: too many connections, dropping one", "addr", l.ln.Addr(), "peer", raw.RemoteAddr(), "max", l.lim.MaxConns)
				_ = raw.Close()
				continue
			}
			l.wg.Add(1)
			go func() {
				h := handle(raw, slot)
				if h == nil {
					l.untrack(raw)
					l.wg.Done()
					return
				}
				l.loop(raw, h)
			}()
		}
	}()
}

// loop runs h until its step reports the end, then ends it, untracks raw
// and marks the connection's goroutine done. After a message, when nothing
// more is buffered, it continues on a new goroutine and this one returns,
// so that the wait for the next message holds a fresh, small stack. A
// goroutine keeps the stack its deepest call grew it to, and the collector
// shrinks a stack only while less than a quarter of it, plus 800 bytes of
// guard, is in use, which a goroutine parked in the poller never is at 4
// KiB: a master's 20,000 idle connections held 81-104 MiB of stacks after
// handling one message each. The runtime starts new goroutines with about
// the average stack in use at the last collection, rounded up to a power of
// two; loop's frame is small and the handlers' large frames are in step,
// so a parked connection uses ~0.6 KiB and the average stays under 2 KiB
// (BenchmarkGCIdleReqConns: 4,096 → 2,064 bytes of stack per idle
// connection). The hop costs a goroutine start per busy spell.
func (l *listener) loop(raw net.Conn, h connLoop) {
	g := h.conn().g
	for i := 0; ; i++ {
		g.waitData()
		// Grow the fresh 2 KiB stack to the 4 KiB a step needs here,
		// with only this frame on it, not inside zmq4's RecvMsg, where
		// the runtime also measured that function's frame and adjusted
		// ~6 frames (newstack and copystack were 3.3% of a
		// 10,000-minion master's CPU under a ping loop, 2.0% after).
		stackpad.Grow2K(i)
		if !h.step() {
			h.end()
			l.untrack(raw)
			l.wg.Done()
			return
		}
		if !g.pending() {
			go l.loop(raw, h)
			return
		}
	}
}

// track admits c within this server's MaxConns and the shared gate's
// budget. It returns c's slot (busy with its handshake), or nil when c
// must be refused. While the gate is spent and no idle request connection
// can give its place up, it waits (c stays unserved, and the connections
// behind it in the kernel's listen backlog with it) until a connection
// ends: a peer waits a moment for its handshake instead of being cut off,
// which would cost a minion its return or a CLI its request.
func (l *listener) track(c net.Conn) *connSlot {
	l.mu.Lock()
	full := l.closed || len(l.conns) >= l.lim.MaxConns
	l.mu.Unlock()
	if full {
		return nil
	}
	var wait time.Duration
	for !l.lim.Gate.acquire() {
		wait = min(max(2*wait, time.Millisecond), 50*time.Millisecond)
		select {
		case <-time.After(wait):
		case <-l.ctx.Done():
			return nil
		}
	}
	s := &connSlot{raw: c}
	s.busy.Store(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.lim.Gate.release()
		return nil
	}
	l.conns[c] = s
	return s
}

// connCount returns the connections being served.
func (l *listener) connCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

func (l *listener) untrack(c net.Conn) {
	_ = c.Close()
	l.mu.Lock()
	if s, ok := l.conns[c]; ok {
		delete(l.conns, c)
		// Gone: never an eviction candidate again (recent may hold it).
		s.busy.Store(-1)
		l.lim.Gate.release()
	}
	l.mu.Unlock()
}

// close stops accepting, closes every connection and waits for the handlers.
func (l *listener) close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.cancel()
	l.lim.Gate.removeEvictable(l)
	err := l.ln.Close()
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

// listenUnix binds a unix socket at path, mode 0600, with no moment at
// looser permissions: it binds in a private directory beside path, sets
// the mode and renames the socket into place (replacing a stale socket).
// Closing the listener removes the file.
func listenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket == 0 {
		return nil, fmt.Errorf("%w: %s exists and is not a socket", ErrInvalid, path)
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), ".req")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	if err = os.Chmod(tmp, 0o600); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	return &unixListener{UnixListener: ln, path: path}, nil
}

// unixListener removes its socket file when closed.
type unixListener struct {
	*net.UnixListener
	path string
}

func (u *unixListener) Close() error {
	err := u.UnixListener.Close()
	_ = os.Remove(u.path)
	return err
}

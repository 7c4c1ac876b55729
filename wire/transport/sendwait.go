package transport

import (
	"net"
	"syscall"
)

// sendWait is a client connection's request write followed by the wait
// for its reply without a read that can only fail: a plain send then
// recv reads the socket at once, gets EAGAIN (the peer has not answered
// yet), and only then waits in the poller. Here the write runs inside the
// raw connection's read call, which clears the socket's readiness before
// calling it: a reply can only come after the request, so the wake-up
// it brings is never missed, and the first read finds it. One system call
// less per request (a swarm identity's return and a minion's requests).
// Made once per connection; used by one exchange at a time.
type sendWait struct {
	c      *zconn
	rc     syscall.RawConn
	call   func(fd uintptr) bool // step, bound once
	frames [][]byte              // the request's frames (copied: see sendAwait)
	sent   bool
	err    error // the write's
}

// step writes the request on the first call and reports the socket
// readable on the next (the poller calls it again once it is).
func (w *sendWait) step(uintptr) bool {
	if w.sent {
		return true
	}
	w.sent = true
	w.err = w.c.send(w.frames)
	return w.err != nil
}

// sendAwait sends frames like send and returns once bytes can be read
// (or the read deadline passed, or the connection closed): recv then
// reads them. tried reports whether the write was attempted (not when
// the deadline had passed or the connection was closed before); err is
// the write's error, else the wait's. Without a raw socket, or with bytes
// already buffered, it is send alone.
func (c *zconn) sendAwait(frames [][]byte) (tried bool, err error) {
	g := c.g
	if g.ready > 0 || len(g.buf) > 0 || g.p.passLeft > 0 || g.err != nil {
		return true, c.send(frames)
	}
	w := c.sw
	if w == nil {
		rc, ok := socketRaw(c.raw)
		if !ok {
			return true, c.send(frames)
		}
		w = &sendWait{c: c, rc: rc}
		w.call = w.step
		c.sw = w
	}
	// Copied: holding the caller's slice would move it to the heap.
	w.frames, w.sent, w.err = append(w.frames[:0], frames...), false, nil
	rerr := w.rc.Read(w.call)
	tried, err = w.sent, w.err
	clear(w.frames)
	if err == nil && rerr != nil {
		err = rerr
	}
	return tried, err
}

// socketRaw is c's raw connection, false when c is not a socket with one
// (waitIdle and sendAwait wait in the poller through it).
func socketRaw(c net.Conn) (syscall.RawConn, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	return rc, err == nil
}

package transport

import (
	"io"
	"syscall"
	"time"
)

// readBufsKept bounds the read buffers a server keeps for its connections
// to borrow: a master's 20,000 connections each held a 2 KiB buffer while
// idle (46 MiB of live heap, which the collector's goal doubles), and
// only the ones reading at a time need one. With 512 kept, a ping's burst
// of 10,000 returns found the store empty often enough that new buffers
// were 3% of the master's allocated bytes; 2,048 of 2 KiB are at most
// 4 MiB.
const readBufsKept = 2048

// readBufs is a server's store of spare read buffers: an idle connection
// returns its buffer and borrows one again when bytes arrive. The store
// belongs to one listener; a buffer larger than readChunk is not kept.
type readBufs struct{ free chan []byte }

func newReadBufs(n int) *readBufs { return &readBufs{free: make(chan []byte, n)} }

// get returns a spare buffer (length 0) or a new one of minChunk bytes.
func (r *readBufs) get() []byte {
	select {
	case b := <-r.free:
		return b
	default:
		return make([]byte, 0, minChunk)
	}
}

// put keeps b for another connection (dropped when the store is full or
// b is large).
func (r *readBufs) put(b []byte) {
	if cap(b) == 0 || cap(b) > readChunk {
		return
	}
	select {
	case r.free <- b[:0]:
	default:
	}
}

// waitIdle is waitData for a connection with a buffer store: it returns
// its buffer while nothing is pending and waits for the socket to be
// readable with none, borrowing one only for the read that takes the
// bytes (no system call more than a plain read: the first try and the
// one after the wake-up are the reads). ok is false when the connection
// cannot be waited on that way (not a socket), and nothing was done. The
// raw connection and the read function are made once per connection (a
// new one per wait cost three allocations a message).
func (g *guard) waitIdle() (ok bool) {
	if g.idle == nil {
		rc, isSock := socketRaw(g.Conn)
		if !isSock {
			return false
		}
		g.idle = &idleRead{rc: rc, g: g}
		g.idle.read = g.idle.readFD
	}
	r := g.idle
	g.bufs.put(g.base)
	g.buf, g.base = nil, nil
	r.n, r.err = 0, nil
	err := r.rc.Read(r.read)
	switch {
	case err != nil:
		g.err = err
	case r.err != nil:
		g.err = r.err
	case r.n <= 0:
		g.err = io.EOF
	default:
		g.buf = g.buf[:r.n]
		g.lastRead.Store(time.Now().UnixNano())
	}
	return true
}

// idleRead is a connection's raw read for waitIdle.
type idleRead struct {
	rc   syscall.RawConn
	g    *guard
	read func(fd uintptr) bool // readFD, bound once
	n    int
	err  error
}

// readFD is called by the poller when the socket may be readable: it
// borrows a buffer and reads; on EAGAIN the buffer goes back and the
// poller waits again.
func (r *idleRead) readFD(fd uintptr) bool {
	b := r.g.bufs.get()
	for {
		r.n, r.err = syscall.Read(int(fd), b[:cap(b)])
		if r.err != syscall.EINTR {
			break
		}
	}
	if r.err == syscall.EAGAIN {
		r.g.bufs.put(b)
		return false
	}
	r.g.buf, r.g.base = b, b
	return true
}

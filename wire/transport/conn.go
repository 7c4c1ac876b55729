package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

// role describes one side of a ZMTP connection.
type role struct {
	own           zmq4.SocketType
	peers         []string
	server        bool
	translateSubs bool
	// keep, when set, is the largest idle read buffer the connection
	// keeps (else the server or client default).
	keep int
}

var (
	rolePub = role{own: zmq4.Pub, peers: []string{"SUB", "XSUB"}, server: true, translateSubs: true}
	// A subscriber only receives publishes: it keeps no more than one
	// read chunk between them (a swarm has thousands, and a publish to
	// a list of 10,000 ids is ~100 KiB).
	roleSub    = role{own: zmq4.Sub, peers: []string{"PUB", "XPUB"}, keep: readChunk}
	roleRouter = role{own: zmq4.Router, peers: []string{"REQ", "DEALER", "ROUTER"}, server: true}
	roleReq    = role{own: zmq4.Req, peers: []string{"ROUTER", "REP"}}
)

// zconn is one established ZMTP connection: a guarded net.Conn driven by a
// zmq4.Conn. recv must be called from one goroutine at a time; send, ping and
// close may be called from any goroutine.
type zconn struct {
	raw net.Conn
	g   *guard
	zc  atomic.Pointer[zmq4.Conn]

	writeTimeout time.Duration
	wmu          sync.Mutex
	// wdl is the write deadline in force (armWrite; under wmu).
	wdl       time.Time
	pongBusy  atomic.Bool
	closeOnce sync.Once
	done      chan struct{}
	budget    *budget // the server's in-flight budget, or nil
	reserved  atomic.Int64
	// sw is the request write and reply wait of sendAwait (made on first
	// use; a client's exchanges on a connection are one at a time).
	sw *sendWait
	// peerID is the Identity property of the peer's READY command.
	peerID string
}

// takeReserved hands over the in-flight bytes reserved by the frames
// received so far; the caller releases them (releaseReserved) once the
// message is handled.
func (c *zconn) takeReserved() int64 { return c.reserved.Swap(0) }

// releaseReserved gives reserved bytes back to the server's budget.
func (c *zconn) releaseReserved(n int64) { c.budget.release(n) }

// openZMTP performs the ZMTP handshake over raw as r, bounded by
// lim.HandshakeTimeout and ctx. On failure raw is closed. bufs, when set,
// lends the connection its read buffer only while bytes are being read
// (a server's idle connections then hold none).
func openZMTP(ctx context.Context, raw net.Conn, r role, id []byte, lim Limits, b *budget, bufs *readBufs) (zc *zconn, err error) {
	c := &zconn{raw: raw, writeTimeout: lim.WriteTimeout, done: make(chan struct{}), budget: b}
	c.g = newGuard(raw, parser{
		lim:           lim,
		peers:         r.peers,
		translateSubs: r.translateSubs,
		server:        r.server,
		onPing:        c.pong,
		budget:        b,
		reserved:      &c.reserved,
	})
	if r.keep > 0 {
		c.g.keep = r.keep
	}
	c.g.bufs = bufs
	deadline := time.Now().Add(lim.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = raw.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Now()) })
	var z *zmq4.Conn
	err = protect(func() error {
		var e error
		z, e = zmq4.Open(c.g, null.Security(), r.own, zmq4.SocketIdentity(id), r.server, nil)
		return e
	})
	if !stop() && err == nil {
		err = ctx.Err() // cancelled just as the handshake finished
	}
	if err != nil {
		_ = raw.Close()
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return nil, fmt.Errorf("transport: handshake with %s: %w", raw.RemoteAddr(), mapNetErr(err))
	}
	_ = raw.SetDeadline(time.Time{})
	// zmq4 keeps both sides' handshake properties in two maps for its own
	// sockets; gsalt reads only the peer's identity, once. Dropping the
	// maps saves ~0.6 KiB of live heap per connection (12 MiB for a
	// master's 20,000, which the collector's heap goal counts again).
	c.peerID = z.Peer.Meta["Identity"]
	z.Meta, z.Peer.Meta = nil, nil
	c.zc.Store(z)
	return c, nil
}

// openZMTPApart is openZMTP on a goroutine of its own, the caller waiting
// for it: a server connection's goroutine then never runs the handshake
// (zmq4's greeting and metadata parsing, the deepest code it would run)
// and keeps a smaller stack for the connection's life. A goroutine keeps
// the stack its deepest call grew it to, and the collector halves it only
// while less than a quarter is in use: with 20,000 connections the
// master's goroutine stacks were 155-176 MiB, about 8 KiB each, counted
// in its RSS and in the collector's heap goal.
func openZMTPApart(ctx context.Context, raw net.Conn, r role, id []byte, lim Limits, b *budget, bufs *readBufs) (*zconn, error) {
	type opened struct {
		c   *zconn
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		c, err := openZMTP(ctx, raw, r, id, lim, b, bufs)
		ch <- opened{c, err}
	}()
	o := <-ch
	return o.c, o.err
}

// protect runs f and turns a panic inside zmq4 into an error.
func protect(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: zmq4 panicked: %v", ErrProtocol, r)
		}
	}()
	return f()
}

// mapNetErr makes deadline errors match ErrTimeout, keeping the original.
func mapNetErr(err error) error {
	if err == nil {
		return nil
	}
	var ne net.Error
	timeout := errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
	if timeout && !errors.Is(err, ErrTimeout) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// peerIdentity is the Identity property of the peer's READY command (a
// Salt minion's SUB socket sends its id), "" when it sent none.
func (c *zconn) peerIdentity() string { return c.peerID }

// recvIdle is recv for a connection that mostly waits between messages
// (a minion's subscription; a server's connections do the same in
// listener.loop): it first waits for the peer's next bytes in the guard,
// with a short stack, and only then decodes them through zmq4. Every GC cycle scans the stack of each waiting goroutine;
// a wait inside zmq4's read is about twice as many frames deep, and a
// swarm of 10,000 identities has 10,000 such goroutines. The bytes read
// and their handling are those of recv.
func (c *zconn) recvIdle() ([][]byte, error) {
	c.g.waitData()
	return c.recv()
}

// recv returns the next data message.
func (c *zconn) recv() ([][]byte, error) {
	var msg zmq4.Msg
	err := protect(func() error {
		var e error
		msg, e = c.zc.Load().RecvMsg()
		return e
	})
	if err != nil {
		return nil, mapNetErr(err)
	}
	return msg.Frames, nil
}

// send writes one message under the write timeout, in one system call
// (writeMessage: the bytes zmq4's SendMsg writes). A failed write closes
// the connection, since a partial frame cannot be recovered.
func (c *zconn) send(frames [][]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.armWrite()
	if err := writeMessage(c.raw, frames); err != nil {
		c.close()
		return mapNetErr(err)
	}
	return nil
}

// rearmSlack is the part of the write timeout a write may find already
// spent of the deadline in force before armWrite moves it.
const rearmSlack = 8

// armWrite puts a write deadline of about writeTimeout from now in force
// (c.wmu is held): at least writeTimeout*(1-1/rearmSlack) and at most
// writeTimeout away. The deadline is moved only when less than that is
// left of the one in force, so a busy connection (a master's replies and
// publishes, ~10,000 writes a second at 10,000 minions) re-arms its
// netpoll deadline timer about once per writeTimeout/rearmSlack instead
// of on every write (SetWriteDeadline was ~2% of the master's CPU in the
// 10k swarm profile).
func (c *zconn) armWrite() {
	now := time.Now()
	if !c.wdl.IsZero() && c.wdl.Sub(now) >= c.writeTimeout-c.writeTimeout/rearmSlack {
		return
	}
	c.wdl = now.Add(c.writeTimeout)
	_ = c.raw.SetWriteDeadline(c.wdl)
}

// sendCmd writes one command under the write timeout.
func (c *zconn) sendCmd(name string, body []byte) error {
	z := c.zc.Load()
	if z == nil {
		return nil // still in the handshake
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.armWrite()
	err := protect(func() error { return z.SendCmd(name, body) })
	if err != nil {
		c.close()
		return mapNetErr(err)
	}
	return nil
}

// pong answers a PING seen by the guard. It runs from inside Read, so the
// write happens on another goroutine; at most one pong is in flight.
func (c *zconn) pong(pingCtx []byte) {
	if !c.pongBusy.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.pongBusy.Store(false)
		_ = c.sendCmd(zmq4.CmdPong, pingCtx)
	}()
}

// ping sends a ZMTP 3.1 PING with the given TTL and no context.
func (c *zconn) ping(ttl time.Duration) error {
	var body [2]byte
	binary.BigEndian.PutUint16(body[:], uint16(min(ttl/(100*time.Millisecond), 0xffff)))
	return c.sendCmd(zmq4.CmdPing, body[:])
}

// lastRead reports when bytes last arrived from the peer.
func (c *zconn) lastRead() time.Time { return time.Unix(0, c.g.lastRead.Load()) }

// close closes the connection once; it is safe from any goroutine.
func (c *zconn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		_ = c.raw.Close()
	})
	// A frame cut off half way keeps no reservation.
	c.budget.release(c.reserved.Swap(0))
}

// ipcScheme prefixes a unix socket address ("ipc://PATH", as ZeroMQ
// names them).
const ipcScheme = "ipc://"

// normalizeAddr accepts "host:port", "tcp://host:port" or "ipc://PATH" (a
// unix socket; kept with its prefix, see network).
func normalizeAddr(addr string) (string, error) {
	if path, ok := strings.CutPrefix(addr, ipcScheme); ok {
		if path == "" {
			return "", fmt.Errorf("%w: address %q: empty socket path", ErrInvalid, addr)
		}
		return addr, nil
	}
	addr = strings.TrimPrefix(addr, "tcp://")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("%w: address %q: %w", ErrInvalid, addr, err)
	}
	return addr, nil
}

// network splits a normalized address into net's network and address:
// ("unix", PATH) for "ipc://PATH", else ("tcp", addr).
func network(addr string) (string, string) {
	if path, ok := strings.CutPrefix(addr, ipcScheme); ok {
		return "unix", path
	}
	return "tcp", addr
}

// LocalReqSocket is the name, in the master's sock_dir, of the unix socket
// where a gsalt-master also serves its request port for local clients:
// the gsalt CLIs on the master host use it when they may, so an operator's
// command never queues behind thousands of minion connections in the TCP
// port's listen backlog (after a master restart). Salt's LocalClient uses
// the TCP port; the messages are the same on both.
const LocalReqSocket = "gsalt_req.ipc"

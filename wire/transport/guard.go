package transport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// ZMTP wire constants (RFC 23/ZMTP 3.0, 37/ZMTP 3.1).
const (
	greetingLen = 64
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04

	// maxCommandSize bounds one command frame (READY metadata, PING, SUBSCRIBE).
	// A READY carries Socket-Type and an Identity of at most 255 bytes.
	maxCommandSize = 64 << 10
	// maxPingContext is the largest PING context ZMTP 3.1 allows.
	maxPingContext = 16
	// maxIdentity is the largest ZMTP identity.
	maxIdentity = 255

	minChunk  = 2 << 10
	readChunk = 64 << 10
	// keepBuf is the largest idle guard buffer a server connection keeps
	// between frames (a master has thousands of connections).
	keepBuf = 256 << 10
	// clientKeepBuf is the same for a client connection: a minion
	// fetching a file gets one file_buffer_size chunk (1 MiB by default)
	// a reply, and reusing the buffer spares an allocation and the copies
	// of growing it for every chunk.
	clientKeepBuf = 2 << 20
	// shrinkAbove is the size above which a drained buffer is kept only
	// when the bytes read through it since it was last empty were at
	// least a quarter of it: a minion's request connection whose buffer
	// grew once (its pillar, a big reply) does not keep it for the small
	// replies after (a 10,000-identity swarm held ~51 KB of read buffers
	// an identity, 255 MB a process), while one fetching 1 MiB file
	// chunks keeps its buffer.
	shrinkAbove = 16 << 10
	// maxClientStream is the largest data frame a client streams to zmq4
	// instead of buffering it whole first (zmq4 allocates the announced
	// size when it reads the header).
	maxClientStream = 16 << 20
)

// verdict tells the guard what to do with the bytes at the head of its buffer.
type verdict uint8

const (
	vNeed    verdict = iota // n is the number of bytes needed to decide
	vPass                   // hand the first n bytes to zmq4 unchanged
	vDrop                   // discard the first n bytes (a swallowed command)
	vReplace                // replace the first n bytes with repl
)

// parser is the ZMTP stream state machine of the guard. It never reads from the
// network itself: step is given the buffered bytes and decides about the unit
// (greeting, frame or command) at their head. It is pure and fuzzable.
type parser struct {
	lim Limits
	// peers lists the socket types accepted from the peer's READY.
	peers []string
	// translateSubs turns SUBSCRIBE/CANCEL commands into 0x01/0x00 messages
	// (PUB side); otherwise they are swallowed.
	translateSubs bool
	// server is set on the accepting side (frame deadlines apply).
	server bool
	// onPing is called with the PING context (already copied) for every PING.
	onPing func(ctx []byte)

	// budget, when set, is the server's in-flight byte budget; reserved
	// is what this connection holds of it (see zconn.takeReserved).
	budget   *budget
	reserved *atomic.Int64
	// inFrame is set while the body of a data frame is awaited.
	inFrame bool
	// passLeft is what remains of a streamed large frame's body.
	passLeft uint64

	greeted bool
	ready   bool
	// peerType is the Socket-Type announced in the peer's READY.
	peerType string
	// frames and msgSize describe the multipart message in progress.
	frames  int
	msgSize int64
}

// step examines b, the unconsumed bytes of the stream, and returns what to do
// with its head. For vNeed, n is the total number of bytes of b required.
func (p *parser) step(b []byte) (v verdict, n int, repl []byte, err error) {
	if !p.greeted {
		if len(b) < greetingLen {
			return vNeed, greetingLen, nil, nil
		}
		if err := checkGreeting(b[:greetingLen]); err != nil {
			return 0, 0, nil, err
		}
		p.greeted = true
		return vPass, greetingLen, nil, nil
	}
	if p.passLeft > 0 {
		// The body of a large data frame, streamed to zmq4 as it arrives
		// (its size is reserved from the server's budget).
		if len(b) == 0 {
			return vNeed, 1, nil, nil
		}
		n := min(uint64(len(b)), p.passLeft)
		p.passed(n)
		return vPass, int(n), nil, nil
	}
	if len(b) < 2 {
		return vNeed, 2, nil, nil
	}
	flags := b[0]
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return 0, 0, nil, fmt.Errorf("%w: reserved frame flag bits 0x%02x", ErrProtocol, flags)
	}
	hdr := 2
	size := uint64(b[1])
	if flags&flagLong != 0 {
		hdr = 9
		if len(b) < hdr {
			return vNeed, hdr, nil, nil
		}
		size = binary.BigEndian.Uint64(b[1:9])
	}
	if flags&flagCommand != 0 {
		switch {
		case flags&flagMore != 0:
			return 0, 0, nil, fmt.Errorf("%w: command frame with MORE flag", ErrProtocol)
		case p.frames > 0:
			return 0, 0, nil, fmt.Errorf("%w: command inside a multipart message", ErrProtocol)
		case size > maxCommandSize:
			return 0, 0, nil, fmt.Errorf("%w: command of %d bytes", ErrTooLarge, size)
		}
		total := hdr + int(size)
		if len(b) < total {
			return vNeed, total, nil, nil
		}
		return p.command(b[hdr:total], total)
	}
	if !p.ready {
		return 0, 0, nil, fmt.Errorf("%w: data frame before READY", ErrProtocol)
	}
	max := uint64(p.lim.MaxMessageSize)
	if size > max || uint64(p.msgSize)+size > max {
		return 0, 0, nil, fmt.Errorf("%w: frame of %d bytes (message so far %d, limit %d)",
			ErrTooLarge, size, p.msgSize, max)
	}
	if p.frames+1 > p.lim.MaxFrames {
		return 0, 0, nil, fmt.Errorf("%w: more than %d frames in one message", ErrTooLarge, p.lim.MaxFrames)
	}
	total := hdr + int(size)
	if !p.inFrame && !p.server && size > readChunk && size <= maxClientStream {
		// A client streams a large reply (a file chunk) into zmq4's
		// buffer as it arrives: its peer is the master it chose, and
		// the size is bounded.
		if flags&flagMore != 0 {
			p.frames++
			p.msgSize += int64(size)
		} else {
			p.frames, p.msgSize = 0, 0
		}
		p.passLeft = size
		p.inFrame = true
		return vPass, hdr, nil, nil
	}
	if !p.inFrame && size > SmallFrame {
		if !p.budget.reserve(int64(size)) {
			return 0, 0, nil, fmt.Errorf("%w: frame of %d bytes refused", ErrBusy, size)
		}
		if p.reserved != nil {
			p.reserved.Add(int64(size))
		}
		if p.budget != nil {
			// Reserved: stream the body instead of holding a second copy
			// of it here while zmq4 reads it.
			if flags&flagMore != 0 {
				p.frames++
				p.msgSize += int64(size)
			} else {
				p.frames, p.msgSize = 0, 0
			}
			p.passLeft = size
			p.inFrame = true
			return vPass, hdr, nil, nil
		}
	}
	if len(b) < total {
		p.inFrame = true
		return vNeed, total, nil, nil
	}
	p.inFrame = false
	if flags&flagMore != 0 {
		p.frames++
		p.msgSize += int64(size)
	} else {
		p.frames, p.msgSize = 0, 0
	}
	return vPass, total, nil, nil
}

// passed accounts for n bytes of a streamed frame body handed to zmq4.
func (p *parser) passed(n uint64) {
	p.passLeft -= n
	if p.passLeft == 0 {
		p.inFrame = false
	}
}

// command decides about one complete command frame (body without header).
func (p *parser) command(body []byte, total int) (verdict, int, []byte, error) {
	if len(body) < 1 || int(body[0]) == 0 || 1+int(body[0]) > len(body) {
		return 0, 0, nil, fmt.Errorf("%w: malformed command name", ErrProtocol)
	}
	name := string(body[1 : 1+int(body[0])])
	data := body[1+int(body[0]):]
	if !p.ready {
		if name != "READY" {
			return 0, 0, nil, fmt.Errorf("%w: expected READY, got %q", ErrProtocol, name)
		}
		typ, err := checkReady(data, p.peers)
		if err != nil {
			return 0, 0, nil, err
		}
		p.ready = true
		p.peerType = typ
		return vPass, total, nil, nil
	}
	switch name {
	case "PING":
		if len(data) < 2 || len(data)-2 > maxPingContext {
			return 0, 0, nil, fmt.Errorf("%w: malformed PING", ErrProtocol)
		}
		if p.onPing != nil {
			p.onPing(bytes.Clone(data[2:]))
		}
		return vDrop, total, nil, nil
	case "SUBSCRIBE", "CANCEL":
		if !p.translateSubs {
			return vDrop, total, nil, nil
		}
		msg := make([]byte, 1+len(data))
		if name == "SUBSCRIBE" {
			msg[0] = 1
		}
		copy(msg[1:], data)
		return vReplace, total, encodeFrame(0, msg), nil
	case "READY":
		return 0, 0, nil, fmt.Errorf("%w: second READY", ErrProtocol)
	case "ERROR":
		reason := ""
		if len(data) > 0 && 1+int(data[0]) <= len(data) {
			reason = string(data[1 : 1+int(data[0])])
		}
		return 0, 0, nil, fmt.Errorf("%w: peer sent ERROR %q", ErrProtocol, reason)
	default: // PONG and unknown commands
		return vDrop, total, nil, nil
	}
}

// encodeFrame returns a ZMTP frame (header and body) with the given flags.
func encodeFrame(flags byte, body []byte) []byte {
	if len(body) <= 255 {
		return append([]byte{flags, byte(len(body))}, body...)
	}
	out := make([]byte, 9, 9+len(body))
	out[0] = flags | flagLong
	binary.BigEndian.PutUint64(out[1:], uint64(len(body)))
	return append(out, body...)
}

// checkGreeting validates a 64-byte ZMTP 3.x greeting for the NULL mechanism.
func checkGreeting(g []byte) error {
	if g[0] != 0xff || g[9] != 0x7f {
		return fmt.Errorf("%w: bad greeting signature", ErrProtocol)
	}
	if g[10] < 3 {
		return fmt.Errorf("%w: ZMTP version %d.%d not supported", ErrProtocol, g[10], g[11])
	}
	mech := g[12:32]
	if i := bytes.IndexByte(mech, 0); i >= 0 {
		mech = mech[:i]
	}
	if string(mech) != "NULL" {
		return fmt.Errorf("%w: security mechanism %q not supported", ErrProtocol, mech)
	}
	if g[32] > 1 {
		return fmt.Errorf("%w: bad as-server flag", ErrProtocol)
	}
	return nil
}

// zmq4Key normalises a property name exactly as zmq4 v0.17.0 does before
// looking it up (x/text Title casing without lowering), so that the guard and
// zmq4 agree on which property is the socket type.
func zmq4Key(name string) string {
	return cases.Title(language.Und, cases.NoLower).String(name)
}

// checkReady strictly validates READY metadata and returns the peer's socket
// type. zmq4 v0.17.0 panics on truncated properties and unknown or missing
// socket types, so nothing reaches it that is not well formed. A property
// that matches "Socket-Type" case-insensitively but that zmq4 would not
// recognise (e.g. "SOCKET-TYPE") is rejected rather than guessed at.
func checkReady(md []byte, peers []string) (string, error) {
	typ := ""
	seenType, seenID := false, false
	for len(md) > 0 {
		nl := int(md[0])
		if nl == 0 || 1+nl+4 > len(md) {
			return "", fmt.Errorf("%w: malformed READY property", ErrProtocol)
		}
		name := string(md[1 : 1+nl])
		vl := binary.BigEndian.Uint32(md[1+nl:])
		rest := md[1+nl+4:]
		if uint64(vl) > uint64(len(rest)) {
			return "", fmt.Errorf("%w: malformed READY property %q", ErrProtocol, name)
		}
		val := rest[:vl]
		md = rest[vl:]
		switch {
		case strings.EqualFold(name, "Socket-Type"):
			// libzmq and zmq4 send the name as spelt, which zmq4's
			// casing leaves as it is (TestZmq4KeyFastPath); only other
			// spellings pay for an x/text caser (~1.5 KiB a call, 8% of
			// a master's allocations in a 10,000-minion sign-in storm).
			if seenType || (name != "Socket-Type" && zmq4Key(name) != "Socket-Type") {
				return "", fmt.Errorf("%w: duplicate or odd Socket-Type property %q", ErrProtocol, name)
			}
			seenType, typ = true, string(val)
		case strings.EqualFold(name, "Identity"):
			if seenID || len(val) > maxIdentity {
				return "", fmt.Errorf("%w: bad Identity", ErrProtocol)
			}
			seenID = true
		}
	}
	for _, ok := range peers {
		if typ == ok {
			return typ, nil
		}
	}
	return "", fmt.Errorf("%w: incompatible peer socket type %q", ErrProtocol, typ)
}

// guard wraps a net.Conn and filters the byte stream zmq4 reads from it
// through a parser. It buffers every unit until it is complete, so zmq4's
// allocations never exceed what the peer actually sent. Read must not be
// called concurrently (one reader per connection); Write passes through.
type guard struct {
	net.Conn
	p     parser
	buf   []byte // buf[:ready] approved for zmq4, buf[ready:] pending
	base  []byte // the allocation buf lies in, reused once drained
	ready int
	err   error
	// lastRead is the UnixNano time of the last successful network read.
	lastRead atomic.Int64
	// deadlineSet is set while a frame read deadline is in force.
	deadlineSet bool
	// keep is the largest buffer kept once drained: a setting of the
	// connection (its role's keep), the server or client default unless
	// set.
	keep int
	// bufs, when set, is the server's store of spare read buffers: the
	// connection gives its buffer back while idle (waitIdle).
	bufs *readBufs
	// idle is the raw read waitIdle waits with (made on first use).
	idle *idleRead
	// used is the bytes Read handed out since the buffer was last empty.
	used int
}

// maxWriteBatch bounds the bytes of queued publishes written in one
// writev to a subscriber with a backlog.
const maxWriteBatch = 64 << 10

func newGuard(c net.Conn, p parser) *guard {
	g := &guard{Conn: c, p: p, keep: clientKeepBuf}
	if p.server {
		g.keep = keepBuf
	}
	g.lastRead.Store(time.Now().UnixNano())
	return g
}

// Read implements net.Conn for zmq4.
func (g *guard) Read(b []byte) (int, error) {
	for {
		if g.ready > 0 {
			n := copy(b, g.buf[:g.ready])
			g.buf = g.buf[n:]
			g.ready -= n
			g.used += n
			if len(g.buf) == 0 {
				if cap(g.base) > g.keep || (cap(g.base) > shrinkAbove && g.used < cap(g.base)/4) {
					g.buf, g.base = nil, nil
				} else {
					g.buf = g.base[:0]
				}
				g.used = 0
			}
			return n, nil
		}
		if g.err != nil {
			return 0, g.err
		}
		if g.p.passLeft > 0 && len(g.buf) == 0 && len(b) > 0 {
			// The body of a streamed frame with nothing buffered: read it
			// straight into zmq4's buffer (one copy less).
			return g.readThrough(b)
		}
		need, err := g.parse()
		if err != nil {
			g.err = err
			// The peer is hostile or broken: cut it off now.
			_ = g.Conn.Close()
			continue
		}
		if g.ready > 0 {
			continue
		}
		g.frameDeadline()
		if err := g.fill(need); err != nil {
			g.err = err
		}
	}
}

// pending reports whether waitData would return at once: bytes or a unit
// are buffered, or the read has failed.
func (g *guard) pending() bool {
	return g.ready > 0 || len(g.buf) > 0 || g.err != nil || g.p.passLeft > 0
}

// waitData blocks until bytes arrive from the peer (or the read fails)
// when nothing is buffered and no unit is under way, and buffers them for
// the next Read; otherwise it returns at once. A failed read is kept and
// returned by Read, as from Read's own fill.
func (g *guard) waitData() {
	if g.pending() {
		return
	}
	g.frameDeadline() // between units: a frame's read deadline no longer applies
	if g.bufs != nil && g.waitIdle() {
		return
	}
	if err := g.fill(1); err != nil {
		g.err = err
	}
}

// readThrough reads the rest of a streamed frame body from the network
// directly into b.
func (g *guard) readThrough(b []byte) (int, error) {
	g.frameDeadline()
	if uint64(len(b)) > g.p.passLeft {
		b = b[:g.p.passLeft]
	}
	n, err := g.Conn.Read(b)
	if n > 0 {
		g.lastRead.Store(time.Now().UnixNano())
		g.p.passed(uint64(n))
		if g.p.passLeft == 0 {
			g.frameDeadline()
		}
		return n, nil
	}
	if err != nil {
		g.err = err
		return 0, err
	}
	return 0, nil
}

// frameDeadline sets a read deadline (servers only) when the body of a
// data frame is awaited, and clears it once no frame is pending.
func (g *guard) frameDeadline() {
	if !g.p.server || g.p.lim.FrameTimeout <= 0 {
		return
	}
	switch {
	case g.p.inFrame && !g.deadlineSet:
		g.deadlineSet = true
		_ = g.Conn.SetReadDeadline(time.Now().Add(g.p.lim.FrameTimeout))
	case !g.p.inFrame && g.deadlineSet:
		g.deadlineSet = false
		_ = g.Conn.SetReadDeadline(time.Time{})
	}
}

// parse moves every complete unit of the pending bytes into the approved
// region and returns how many pending bytes the next decision needs. It makes
// one in-place compaction pass, so its cost is linear in the bytes received
// however many commands are swallowed (output never exceeds input: a
// translated SUBSCRIBE is shorter than the command it replaces).
func (g *guard) parse() (need int, err error) {
	w, r := g.ready, g.ready
	defer func() {
		// Keep the undecided tail right after the approved region (only
		// when something was dropped; otherwise it is already in place).
		if w != r {
			n := copy(g.buf[w:], g.buf[r:])
			g.buf = g.buf[:w+n]
		}
		g.ready = w
	}()
	for {
		v, n, repl, err := g.p.step(g.buf[r:])
		if err != nil {
			return 0, err
		}
		switch v {
		case vNeed:
			return n, nil
		case vPass:
			if w != r {
				copy(g.buf[w:], g.buf[r:r+n])
			}
			w += n
		case vReplace:
			if len(repl) > n {
				return 0, fmt.Errorf("%w: internal: replacement longer than input", ErrProtocol)
			}
			w += copy(g.buf[w:], repl)
		}
		r += n // vDrop: skip
	}
}

// fill reads from the network until at least one more byte is pending; need is
// the number of pending bytes the parser waits for. Buffers grow with the data
// received, never with the length announced. A read takes at most what the
// unit awaited needs (or readChunk, whichever is more), so a large frame
// usually ends the buffer and the next one starts at the front of the same
// allocation.
func (g *guard) fill(need int) error {
	spare := cap(g.buf) - len(g.buf)
	want := need - len(g.buf) // > 0: the parser waits for this many more bytes
	if spare < want && cap(g.buf) < cap(g.base) && len(g.buf)+want <= cap(g.base) {
		// The unit fits in the allocation once the pending bytes (what
		// the last read brought past the previous unit) are moved to
		// its front.
		n := copy(g.base[:cap(g.base)], g.buf)
		g.buf = g.base[:n]
		spare = cap(g.buf) - len(g.buf)
	}
	if spare == 0 || (spare < want && spare < readChunk) {
		grow := min(max(want, minChunk), readChunk)
		if cap(g.buf) < cap(g.base) && len(g.buf)+grow <= cap(g.base) {
			// The allocation has room before buf: move the pending
			// bytes to its front.
			n := copy(g.base[:cap(g.base)], g.buf)
			g.buf = g.base[:n]
		} else {
			target := max(len(g.buf)+grow, 2*cap(g.buf))
			target = min(target, len(g.buf)+max(want, grow))
			nb := make([]byte, len(g.buf), target)
			copy(nb, g.buf)
			g.buf, g.base = nb, nb
		}
	}
	end := cap(g.buf)
	if lim := len(g.buf) + max(want, readChunk); lim < end {
		end = lim
	}
	n, err := g.Conn.Read(g.buf[len(g.buf):end])
	if n > 0 {
		g.buf = g.buf[:len(g.buf)+n]
		g.lastRead.Store(time.Now().UnixNano())
	}
	if n == 0 && err == nil {
		return nil
	}
	if n > 0 {
		// Hand over what arrived; a pending error recurs on the next read.
		return nil
	}
	return err
}

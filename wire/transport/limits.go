package transport

import (
	"errors"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrClosed is returned by operations on a closed server, subscriber or client.
	ErrClosed = errors.New("transport: closed")
	// ErrTimeout is returned when a request, dial or handshake runs out of time.
	ErrTimeout = errors.New("transport: timeout")
	// ErrTooLarge is returned when a peer announces a frame or message above
	// Limits.MaxMessageSize or with more than Limits.MaxFrames frames; the
	// connection is dropped.
	ErrTooLarge = errors.New("transport: message too large")
	// ErrProtocol is returned when a peer violates ZMTP (bad greeting, bad or
	// incompatible READY, misplaced command, malformed reply, ...).
	ErrProtocol = errors.New("transport: ZMTP protocol violation")
	// ErrBusy fails a connection whose next frame would take the server's
	// in-flight request bytes over Limits.InFlightBytes.
	ErrBusy = errors.New("transport: in-flight request bytes over budget")
	// ErrInvalid is returned for invalid arguments (empty message, bad address,
	// identity longer than 255 bytes, nil handler).
	ErrInvalid = errors.New("transport: invalid argument")
)

// Default limit values used by DefaultLimits and for zero fields of Limits.
const (
	// DefaultMaxMessageSize is 100 MiB. Salt itself sets no ZeroMQ limit; its
	// largest ordinary messages (pillar, big returns) are far below this.
	DefaultMaxMessageSize = 100 << 20
	// DefaultMaxFrames bounds frames per message. Salt uses at most three
	// (routing envelope, delimiter, body).
	DefaultMaxFrames = 64
	// DefaultHandshakeTimeout bounds the greeting and READY exchange.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds one message write to a peer that does not read.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultMaxConns bounds simultaneous connections (including those still
	// in their handshake) per server.
	DefaultMaxConns = 65536
	// DefaultFrameTimeout bounds the time to receive the rest of a data
	// frame once its header arrived (servers only).
	DefaultFrameTimeout = 60 * time.Second
	// DefaultInFlightBytes is the per-server budget of bytes announced by
	// large frames still being received or handled.
	DefaultInFlightBytes = 128 << 20
	// SmallFrame is the largest frame received without a reservation from
	// the in-flight budget: ordinary requests and returns never wait for it.
	SmallFrame = 1 << 20
)

// Limits bounds what one peer can make this package do. Zero fields take the
// defaults from DefaultLimits.
type Limits struct {
	// MaxMessageSize is the largest frame, and the largest sum of the frames of
	// one multipart message, accepted from a peer. Larger announcements fail the
	// connection with ErrTooLarge before any buffer is allocated.
	MaxMessageSize int64
	// MaxFrames is the largest number of frames in one received message.
	MaxFrames int
	// HandshakeTimeout bounds the time from TCP connect until the peer's
	// greeting and READY command have been received.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds the time to write one message; a peer that stops
	// reading for longer is disconnected.
	WriteTimeout time.Duration
	// MaxConns bounds the connections a server holds at once, including
	// connections still in their handshake; further connections are closed
	// immediately. Ignored by clients.
	MaxConns int
	// FrameTimeout bounds, on servers, the time from a data frame's header
	// to its last byte: a peer stalled in the middle of a frame is cut off.
	FrameTimeout time.Duration
	// InFlightBytes is a server's budget for frames larger than SmallFrame:
	// each reserves its announced size from the time its header arrives
	// until the request was handled. A connection whose frame does not fit
	// is closed (ErrBusy); small frames are never refused, so minions keep
	// being served while large uploads are throttled. Negative: no budget.
	InFlightBytes int64
	// Gate, when set, is a connection budget shared with other servers
	// (the master's two ports); nil: only MaxConns bounds this server.
	Gate *ConnGate
}

// DefaultLimits returns the limits used when a Limits value is zero.
func DefaultLimits() Limits {
	return Limits{
		MaxMessageSize:   DefaultMaxMessageSize,
		MaxFrames:        DefaultMaxFrames,
		HandshakeTimeout: DefaultHandshakeTimeout,
		WriteTimeout:     DefaultWriteTimeout,
		MaxConns:         DefaultMaxConns,
		FrameTimeout:     DefaultFrameTimeout,
		InFlightBytes:    DefaultInFlightBytes,
	}
}

// withDefaults returns l with every zero or negative field replaced by its default.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxMessageSize <= 0 {
		l.MaxMessageSize = d.MaxMessageSize
	}
	if l.MaxFrames <= 0 {
		l.MaxFrames = d.MaxFrames
	}
	if l.HandshakeTimeout <= 0 {
		l.HandshakeTimeout = d.HandshakeTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	if l.FrameTimeout <= 0 {
		l.FrameTimeout = d.FrameTimeout
	}
	if l.InFlightBytes == 0 {
		l.InFlightBytes = d.InFlightBytes
	}
	return l
}

// budget is a server's in-flight byte budget for large frames.
type budget struct {
	max      int64
	used     atomic.Int64
	refused  atomic.Uint64
	freed    atomic.Int64 // large bytes released since the last FreeOSMemory
	lastFree atomic.Int64
}

func newBudget(max int64) *budget {
	if max <= 0 {
		return nil
	}
	return &budget{max: max}
}

// refusedTotal returns how many reservations were refused.
func (b *budget) refusedTotal() uint64 {
	if b == nil {
		return 0
	}
	return b.refused.Load()
}

// reserve takes n bytes, or reports false when they do not fit.
func (b *budget) reserve(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.max {
			b.refused.Add(1)
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// release gives n bytes back. Once nothing large is in flight and enough
// was released, the heap is returned to the operating system (at most
// every few seconds): buffers of large frames do not stay in the RSS.
func (b *budget) release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	left := b.used.Add(-n)
	freed := b.freed.Add(n)
	now := time.Now().UnixNano()
	if left == 0 && freed >= 32<<20 && now-b.lastFree.Load() > int64(2*time.Second) {
		b.freed.Store(0)
		b.lastFree.Store(now)
		go debug.FreeOSMemory()
	}
}

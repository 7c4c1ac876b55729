package transport

import (
	"errors"
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
}

// DefaultLimits returns the limits used when a Limits value is zero.
func DefaultLimits() Limits {
	return Limits{
		MaxMessageSize:   DefaultMaxMessageSize,
		MaxFrames:        DefaultMaxFrames,
		HandshakeTimeout: DefaultHandshakeTimeout,
		WriteTimeout:     DefaultWriteTimeout,
		MaxConns:         DefaultMaxConns,
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
	return l
}

package event

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Socket file names Salt uses in the master's sock_dir.
const (
	MasterPubSocket  = "master_event_pub.ipc"
	MasterPullSocket = "master_event_pull.ipc"
)

// IPC server defaults.
const (
	// DefaultMaxConns bounds connections per socket.
	DefaultMaxConns = 512
	// DefaultReaderQueue is how many frames may wait for one pub reader.
	DefaultReaderQueue = 1024
	// DefaultReaderQueueBytes bounds the bytes waiting for one pub reader.
	DefaultReaderQueueBytes = 64 << 20
	// DefaultWriteTimeout is how long a pub reader may stall a single
	// write before it is disconnected.
	DefaultWriteTimeout = time.Minute
)

// IPCConfig tunes an IPCServer. The zero value gives the defaults.
type IPCConfig struct {
	// MaxFrameSize bounds frames read from the pull socket
	// (0: DefaultMaxFrameSize).
	MaxFrameSize int
	// MaxConns bounds concurrent connections per socket (0: DefaultMaxConns).
	MaxConns int
	// ReaderQueue is the number of frames queued per pub reader before
	// events are dropped for it (0: DefaultReaderQueue).
	ReaderQueue int
	// ReaderQueueBytes bounds the total size of the frames queued for one
	// pub reader (0: DefaultReaderQueueBytes). Frames are shared between
	// readers, so this bounds memory per distinct event too.
	ReaderQueueBytes int64
	// WriteTimeout disconnects a pub reader that does not take a frame in
	// this time (0: DefaultWriteTimeout; negative: never).
	WriteTimeout time.Duration
	// PubMode is the pub socket's file mode (0: 0600; Salt uses 0660
	// when publisher_acl or external_auth is set). The pull socket is
	// always 0600.
	PubMode os.FileMode
}

// IPCServer serves a Bus on Salt's two master event sockets: every event
// published on the bus is written to every pub reader, and every frame
// pushed to the pull socket is published on the bus.
type IPCServer struct {
	bus  *Bus
	cfg  IPCConfig
	log  *slog.Logger
	pub  *unixSocket
	pull *unixSocket

	mu        sync.Mutex
	closed    bool
	readers   map[*pubConn]struct{}
	pullConns map[net.Conn]struct{}
	nReaders  atomic.Int32
	dropped   atomic.Uint64
	wg        sync.WaitGroup
	done      chan struct{}
	closeOnce sync.Once
}

// ServeIPC listens on pubPath and pullPath (normally sock_dir/
// MasterPubSocket and sock_dir/MasterPullSocket) with default settings.
// The server stops when ctx is cancelled, when Close is called or when the
// bus is closed.
func ServeIPC(ctx context.Context, bus *Bus, pubPath, pullPath string) (*IPCServer, error) {
	return ServeIPCConfig(ctx, bus, pubPath, pullPath, IPCConfig{})
}

// ServeIPCConfig is ServeIPC with explicit settings.
func ServeIPCConfig(ctx context.Context, bus *Bus, pubPath, pullPath string, cfg IPCConfig) (*IPCServer, error) {
	if cfg.MaxFrameSize <= 0 {
		cfg.MaxFrameSize = DefaultMaxFrameSize
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ReaderQueue <= 0 {
		cfg.ReaderQueue = DefaultReaderQueue
	}
	if cfg.ReaderQueueBytes <= 0 {
		cfg.ReaderQueueBytes = DefaultReaderQueueBytes
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.PubMode == 0 {
		cfg.PubMode = 0o600
	}
	if bus.closed.Load() {
		return nil, ErrClosed
	}
	pub, err := listenUnix(pubPath, cfg.PubMode)
	if err != nil {
		return nil, err
	}
	pull, err := listenUnix(pullPath, 0o600)
	if err != nil {
		pub.close()
		return nil, err
	}
	s := &IPCServer{
		bus:       bus,
		cfg:       cfg,
		log:       bus.log,
		pub:       pub,
		pull:      pull,
		readers:   make(map[*pubConn]struct{}),
		pullConns: make(map[net.Conn]struct{}),
		done:      make(chan struct{}),
	}
	if !bus.addSink(s) {
		pub.close()
		pull.close()
		return nil, ErrClosed
	}
	s.wg.Add(3)
	go s.acceptLoop(pub.ln, s.servePub)
	go s.acceptLoop(pull.ln, s.servePull)
	go func() {
		defer s.wg.Done()
		select {
		case <-ctx.Done():
			go s.Close()
		case <-s.done:
		}
	}()
	s.log.Info("event: serving IPC", "pub", pubPath, "pull", pullPath)
	return s, nil
}

// Readers returns the number of connected pub readers.
func (s *IPCServer) Readers() int { return int(s.nReaders.Load()) }

// Dropped returns how many frames were not queued for slow pub readers,
// summed over readers.
func (s *IPCServer) Dropped() uint64 { return s.dropped.Load() }

// Done is closed once the server has begun shutting down.
func (s *IPCServer) Done() <-chan struct{} { return s.done }

// Close stops listening, disconnects every client, removes the socket
// files and waits for the server's goroutines. It is idempotent.
func (s *IPCServer) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.done)
		readers := s.readers
		s.readers = map[*pubConn]struct{}{}
		pulls := s.pullConns
		s.pullConns = map[net.Conn]struct{}{}
		s.mu.Unlock()
		s.bus.removeSink(s)
		s.pub.close()
		s.pull.close()
		for pc := range readers {
			pc.shut()
		}
		for c := range pulls {
			_ = c.Close()
		}
	})
	s.wg.Wait()
	return nil
}

// closeSink is called when the bus closes.
func (s *IPCServer) closeSink() { go s.Close() }

// deliver fans one bus event out to the pub readers without blocking.
func (s *IPCServer) deliver(ev Event, packed []byte) {
	if s.nReaders.Load() == 0 {
		return
	}
	frame := AppendFrame(make([]byte, 0, len(frameHead)+5+len(ev.Tag)+len(TagEnd)+len(packed)), ev.Tag, packed)
	s.mu.Lock()
	defer s.mu.Unlock()
	size := int64(len(frame))
	for pc := range s.readers {
		queued := false
		// An idle reader always takes one frame, however large.
		if total := pc.bytes.Add(size); total == size || total <= s.cfg.ReaderQueueBytes {
			select {
			case pc.queue <- frame:
				queued = true
			default:
			}
		}
		if !queued {
			pc.bytes.Add(-size)
			n := pc.dropped.Add(1)
			s.dropped.Add(1)
			if n == 1 || n%s.bus.logEvery == 0 {
				s.log.Warn("event: slow IPC reader, events dropped",
					"dropped_total", n, "tag", ev.Tag)
			}
		}
	}
}

func (s *IPCServer) acceptLoop(ln *net.UnixListener, serve func(*net.UnixConn)) {
	defer s.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("event: IPC accept failed", "addr", ln.Addr().String(), "err", err)
			select {
			case <-time.After(backoff):
			case <-s.done:
				return
			}
			if backoff < time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = 5 * time.Millisecond
		serve(c)
	}
}

// pubConn is one reader of the pub socket.
type pubConn struct {
	c       *net.UnixConn
	queue   chan []byte
	quit    chan struct{}
	once    sync.Once
	dropped atomic.Uint64
	bytes   atomic.Int64 // size of the frames in queue
}

func (pc *pubConn) shut() {
	pc.once.Do(func() {
		close(pc.quit)
		_ = pc.c.Close()
	})
}

// maxWriteFrames and maxWriteBytes bound the queued frames a pub writer
// sends to its reader in one writev.
const (
	maxWriteFrames = 128
	maxWriteBytes  = 256 << 10
)

func (s *IPCServer) servePub(c *net.UnixConn) {
	pc := &pubConn{c: c, queue: make(chan []byte, s.cfg.ReaderQueue), quit: make(chan struct{})}
	s.mu.Lock()
	if s.closed || len(s.readers) >= s.cfg.MaxConns {
		full := !s.closed
		s.mu.Unlock()
		if full {
			s.log.Warn("event: too many IPC readers, refusing one", "max", s.cfg.MaxConns)
		}
		_ = c.Close()
		return
	}
	s.readers[pc] = struct{}{}
	s.nReaders.Add(1)
	s.mu.Unlock()

	remove := func() {
		s.mu.Lock()
		if _, ok := s.readers[pc]; ok {
			delete(s.readers, pc)
			s.nReaders.Add(-1)
		}
		s.mu.Unlock()
		pc.shut()
	}
	s.wg.Add(2)
	// Writer: drains the queue into the socket.
	go func() {
		defer s.wg.Done()
		defer remove()
		var bufs [][]byte
		for {
			select {
			case <-pc.quit:
				return
			case f := <-pc.queue:
				// Frames queued meanwhile go out in the same writev: a
				// reader that lags (a CLI collecting 10,000 returns) gets
				// them in fewer system calls and wake-ups, the same bytes.
				bufs = append(bufs[:0], f)
				size := len(f)
			more:
				for len(bufs) < maxWriteFrames && size < maxWriteBytes {
					select {
					case f := <-pc.queue:
						bufs = append(bufs, f)
						size += len(f)
					default:
						break more
					}
				}
				pc.bytes.Add(-int64(size))
				if s.cfg.WriteTimeout > 0 {
					_ = c.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
				}
				out := net.Buffers(bufs)
				_, err := out.WriteTo(c)
				clear(bufs)
				if err != nil {
					s.log.Debug("event: IPC reader gone", "err", err)
					return
				}
			}
		}
	}()
	// Reader: readers never send anything meaningful; discard input to
	// notice when they hang up.
	go func() {
		defer s.wg.Done()
		defer remove()
		var buf [512]byte
		for {
			if _, err := c.Read(buf[:]); err != nil {
				return
			}
		}
	}()
}

func (s *IPCServer) servePull(c *net.UnixConn) {
	s.mu.Lock()
	if s.closed || len(s.pullConns) >= s.cfg.MaxConns {
		full := !s.closed
		s.mu.Unlock()
		if full {
			s.log.Warn("event: too many IPC pushers, refusing one", "max", s.cfg.MaxConns)
		}
		_ = c.Close()
		return
	}
	s.pullConns[c] = struct{}{}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.pullConns, c)
			s.mu.Unlock()
			_ = c.Close()
		}()
		fr := NewFrameReader(c, s.cfg.MaxFrameSize)
		for {
			ev, err := fr.Next()
			if err != nil {
				if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
					return
				}
				s.log.Warn("event: dropping IPC pusher after bad input", "err", err)
				return
			}
			if err := s.bus.Fire(ev); err != nil {
				if errors.Is(err, ErrClosed) {
					return
				}
				s.log.Warn("event: pushed event not published", "tag", ev.Tag, "err", err)
			}
		}
	}()
}

// unixSocket is a listening socket file we created.
type unixSocket struct {
	ln   *net.UnixListener
	path string
	fi   os.FileInfo
	once sync.Once
}

// listenUnix binds a Unix stream socket at path with the given mode, with
// no window where the socket has looser permissions: it binds inside a
// private 0700 directory next to path, sets the mode, then renames the
// socket into place (replacing a stale socket, as Salt does).
func listenUnix(path string, mode os.FileMode) (*unixSocket, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotSocket, path)
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(path), ".ev")
	if err != nil {
		return nil, fmt.Errorf("event: listen %s: %w", path, err)
	}
	defer os.RemoveAll(tmpDir)
	tmp := filepath.Join(tmpDir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("event: listen %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	fail := func(err error) (*unixSocket, error) {
		_ = ln.Close()
		return nil, fmt.Errorf("event: listen %s: %w", path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(err)
	}
	return &unixSocket{ln: ln, path: path, fi: fi}, nil
}

// close stops listening and removes the socket file if it is still ours.
func (u *unixSocket) close() {
	u.once.Do(func() {
		_ = u.ln.Close()
		if fi, err := os.Lstat(u.path); err == nil && os.SameFile(fi, u.fi) {
			_ = os.Remove(u.path)
		}
	})
}

// deadlineOnCancel arranges for setDeadline(past) when ctx ends and
// returns a function that undoes it (waiting for a concurrent firing) and
// reports whether ctx ended.
func deadlineOnCancel(ctx context.Context, setDeadline func(time.Time) error) func() bool {
	if ctx.Done() == nil {
		return func() bool { return false }
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = setDeadline(time.Unix(1, 0))
		close(fired)
	})
	return func() bool {
		if stop() {
			return false
		}
		<-fired
		_ = setDeadline(time.Time{})
		return true
	}
}

// dialUnix connects to a Unix socket, honouring ctx.
func dialUnix(ctx context.Context, path string) (*net.UnixConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("event: dial %s: %w", path, err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		_ = c.Close()
		return nil, fmt.Errorf("event: dial %s: not a unix connection", path)
	}
	return uc, nil
}

// IPCReader reads events from a pub socket (a gsalt or Salt master's
// master_event_pub.ipc). It is not safe for concurrent Next calls.
type IPCReader struct {
	c  *net.UnixConn
	fr *FrameReader
}

// DialPub connects to a pub socket.
func DialPub(ctx context.Context, path string) (*IPCReader, error) {
	c, err := dialUnix(ctx, path)
	if err != nil {
		return nil, err
	}
	return &IPCReader{c: c, fr: NewFrameReader(c, DefaultMaxFrameSize)}, nil
}

// Next waits for the next event. When ctx ends it returns ctx.Err() and
// the reader stays usable (a partly received frame is kept). A frame with
// bad content returns an error wrapping ErrBadFrame; garbage that breaks
// the framing makes every later call fail.
func (r *IPCReader) Next(ctx context.Context) (Event, error) {
	if err := ctx.Err(); err != nil {
		return Event{}, err
	}
	// A frame already read (several arrive in one read from a busy bus)
	// needs no deadline watch on ctx.
	if frame, ok, err := r.fr.buffered(); err != nil {
		return Event{}, err
	} else if ok {
		return DecodeFrame(frame)
	}
	undo := deadlineOnCancel(ctx, r.c.SetReadDeadline)
	ev, err := r.fr.Next()
	if undo() && err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return Event{}, ctx.Err()
		}
	}
	if err != nil && errors.Is(err, net.ErrClosed) {
		return Event{}, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return ev, err
}

// Close disconnects.
func (r *IPCReader) Close() error { return r.c.Close() }

// Pusher writes events to a pull socket the way Salt's fire_event does: it
// adds _stamp when missing and trims data over DefaultMaxEventSize. It is
// safe for concurrent use.
type Pusher struct {
	mu     sync.Mutex
	c      *net.UnixConn
	broken error
}

// DialPush connects to a pull socket (master_event_pull.ipc).
func DialPush(ctx context.Context, path string) (*Pusher, error) {
	c, err := dialUnix(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Pusher{c: c}, nil
}

// Fire sends one event. After a failed or interrupted write the pusher is
// unusable (the stream may hold a partial frame) and returns that error.
func (p *Pusher) Fire(ctx context.Context, ev Event) error {
	ev, packed, err := prepare(ev, time.Now(), DefaultMaxEventSize)
	if err != nil {
		return err
	}
	frame := AppendFrame(nil, ev.Tag, packed)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken != nil {
		return p.broken
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	undo := deadlineOnCancel(ctx, p.c.SetWriteDeadline)
	_, err = p.c.Write(frame)
	cancelled := undo()
	if err != nil {
		if cancelled {
			err = fmt.Errorf("event: push %q: %w", ev.Tag, ctx.Err())
		} else {
			err = fmt.Errorf("event: push %q: %w", ev.Tag, err)
		}
		p.broken = err
		_ = p.c.Close()
		return err
	}
	return nil
}

// Close disconnects.
func (p *Pusher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken == nil {
		p.broken = ErrClosed
	}
	return p.c.Close()
}

// FirePull connects to a pull socket, sends one event and disconnects.
func FirePull(ctx context.Context, path string, ev Event) error {
	p, err := DialPush(ctx, path)
	if err != nil {
		return err
	}
	if err := p.Fire(ctx, ev); err != nil {
		_ = p.Close()
		return err
	}
	return p.Close()
}

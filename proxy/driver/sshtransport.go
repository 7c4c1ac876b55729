package driver

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/scrapli/scrapligo/transport"
	"golang.org/x/crypto/ssh"
)

// leanSSH is the SSH transport of the CLI sessions (scrapligo's
// transport.Implementation, set with options.WithCustomTransport in place
// of its "standard" transport). It says the same on the wire as
// scrapligo's standard transport (x/crypto/ssh client defaults, password
// then keyboard-interactive, host key not checked, one session channel
// with an xterm pty and a shell) and costs less for each open connection,
// which matters to a gsalt-proxy holding thousands of them:
//
//   - no read buffer while idle: scrapligo's read loop is always blocked in
//     Read, and the standard transport allocates its ReadSize (8 KiB) for
//     every Read. Here a Read waits with a small buffer inside the
//     connection (leanSmallRead bytes) and switches to a pooled buffer of
//     ReadSize, shared by all connections, only while output streams in
//     (the previous read filled its buffer); what it returns is a copy of
//     exactly the bytes read.
//   - one goroutine answers the server's global requests (keepalives),
//     channel opens and the session's channel requests, where x/crypto's
//     Client and Session start four (global requests, channel opens, the
//     client's Wait, the session's exit status), and none copies stderr
//     (the standard transport's session discards it with an io.Copy
//     goroutine holding an 8 KiB buffer): a shell on a pty has its
//     errors on the terminal, that is on stdout. Extended data a server
//     sends anyway stays unread in the channel, bounded by its window.
//
// What x/crypto/ssh keeps for each connection (a reader and a writer of
// 4 KiB, the cipher's packet buffer, its read, key-exchange and mux
// goroutines) cannot be configured from outside and stays.
type leanSSH struct {
	conn   ssh.Conn
	ch     ssh.Channel
	closed atomic.Bool

	// flowing: the last Read filled its buffer, so more output is likely
	// waiting and the next Read uses a pooled buffer of the full size.
	flowing bool
	small   [leanSmallRead]byte
}

// leanSmallRead is the buffer a Read waits with between outputs.
const leanSmallRead = 512

// leanTerm* are scrapligo's standard transport's pty settings.
const (
	leanTermType  = "xterm"
	leanTTYSpeed  = 115200
	leanReadSize  = 8192 // scrapligo's default transport ReadSize
	leanPoolLimit = 64 << 10
)

// leanBufs are the full-size read buffers, shared by every connection of
// the process (only the connections receiving output at this moment hold
// one).
var leanBufs = sync.Pool{New: func() any { b := make([]byte, leanReadSize); return &b }}

var errLeanNotOpen = errors.New("driver: ssh transport is not open")

// Open dials, authenticates and starts the shell; see
// transport.Implementation.
func (l *leanSSH) Open(a *transport.Args) error {
	auth := []ssh.AuthMethod{}
	if a.Password != "" {
		pw := a.Password
		auth = append(auth, ssh.Password(pw), ssh.KeyboardInteractive(
			func(_, _ string, questions []string, _ []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = pw
				}
				return answers, nil
			}))
	}
	cfg := &ssh.ClientConfig{
		User:            a.User,
		Auth:            auth,
		Timeout:         a.TimeoutSocket,
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), //nolint:gosec // as scrapligo's WithAuthNoStrictKey
	}
	addr := net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
	nc, err := net.DialTimeout("tcp", addr, cfg.Timeout)
	if err != nil {
		return err
	}
	conn, chans, reqs, err := ssh.NewClientConn(nc, addr, cfg)
	if err != nil {
		_ = nc.Close()
		return err
	}
	ch, chReqs, err := conn.OpenChannel("session", nil)
	if err != nil {
		_ = conn.Close()
		return err
	}
	go serveLean(reqs, chans, chReqs)
	if err := leanShell(ch, a.TermHeight, a.TermWidth); err != nil {
		_ = ch.Close()
		_ = conn.Close()
		return err
	}
	l.conn, l.ch = conn, ch
	return nil
}

// serveLean answers what the server sends besides the session's data
// until the connection closes: global requests (OpenSSH's keepalives) and
// the session's requests are refused as x/crypto's Client and Session
// refuse them, channel opens are rejected as an ssh.Client with no
// handler for their type rejects them.
func serveLean(reqs <-chan *ssh.Request, chans <-chan ssh.NewChannel, chReqs <-chan *ssh.Request) {
	for reqs != nil || chans != nil || chReqs != nil {
		select {
		case r, ok := <-reqs:
			if !ok {
				reqs = nil
				continue
			}
			_ = r.Reply(false, nil)
		case r, ok := <-chReqs:
			if !ok {
				chReqs = nil
				continue
			}
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
		case nc, ok := <-chans:
			if !ok {
				chans = nil
				continue
			}
			_ = nc.Reject(ssh.UnknownChannelType, fmt.Sprintf("unknown channel type: %v", nc.ChannelType()))
		}
	}
}

// leanShell requests the pty and the shell exactly as x/crypto's
// Session.RequestPty and Session.Shell do for scrapligo's standard
// transport (terminal modes ECHO and the two speeds, in map order there:
// any order is valid).
func leanShell(ch ssh.Channel, h, w int) error {
	var tm []byte
	for _, kv := range []struct {
		Key byte
		Val uint32
	}{{ssh.ECHO, 1}, {ssh.TTY_OP_ISPEED, leanTTYSpeed}, {ssh.TTY_OP_OSPEED, leanTTYSpeed}} {
		tm = append(tm, ssh.Marshal(&kv)...)
	}
	tm = append(tm, 0) // TTY_OP_END
	req := struct {
		Term     string
		Columns  uint32
		Rows     uint32
		Width    uint32
		Height   uint32
		Modelist string
	}{leanTermType, uint32(w), uint32(h), uint32(w * 8), uint32(h * 8), string(tm)}
	ok, err := ch.SendRequest("pty-req", true, ssh.Marshal(&req))
	if err == nil && !ok {
		err = errors.New("ssh: pty-req failed")
	}
	if err != nil {
		return err
	}
	ok, err = ch.SendRequest("shell", true, nil)
	if err == nil && !ok {
		err = errors.New("ssh: could not start shell")
	}
	return err
}

// Close closes the session channel and the connection.
func (l *leanSSH) Close() error {
	if l.ch == nil || !l.closed.CompareAndSwap(false, true) {
		return nil
	}
	_ = l.ch.Close()
	return l.conn.Close()
}

// IsAlive reports whether the transport is open.
func (l *leanSSH) IsAlive() bool { return l.ch != nil && !l.closed.Load() }

// Read returns the next output of the shell, at most n bytes (scrapligo's
// ReadSize), in a slice of its own.
func (l *leanSSH) Read(n int) ([]byte, error) {
	if l.ch == nil {
		return nil, errLeanNotOpen
	}
	if n <= 0 {
		n = leanReadSize
	}
	if !l.flowing || n <= len(l.small) {
		buf := l.small[:min(n, len(l.small))]
		k, err := l.ch.Read(buf)
		if err != nil {
			return nil, err
		}
		l.flowing = k == len(buf) && n > len(buf)
		return bytes.Clone(buf[:k]), nil
	}
	var bp *[]byte
	if n == leanReadSize {
		bp = leanBufs.Get().(*[]byte)
	} else {
		b := make([]byte, min(n, leanPoolLimit))
		bp = &b
	}
	buf := *bp
	k, err := l.ch.Read(buf)
	out := bytes.Clone(buf[:k])
	if len(buf) == leanReadSize {
		leanBufs.Put(bp)
	}
	if err != nil {
		return nil, err
	}
	l.flowing = k == len(buf)
	return out, nil
}

// Write sends b to the shell.
func (l *leanSSH) Write(b []byte) error {
	if l.ch == nil {
		return errLeanNotOpen
	}
	_, err := l.ch.Write(b)
	return err
}

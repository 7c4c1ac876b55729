package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// testLogger discards logs unless -v is given.
func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// --- an independent, minimal ZMTP encoder for raw (hostile) test peers ---

func zGreeting() []byte {
	g := make([]byte, greetingLen)
	g[0], g[9], g[10], g[11] = 0xff, 0x7f, 3, 1
	copy(g[12:], "NULL")
	return g
}

func zFrame(flags byte, body []byte) []byte {
	if len(body) > 255 {
		h := make([]byte, 9, 9+len(body))
		h[0] = flags | flagLong
		binary.BigEndian.PutUint64(h[1:], uint64(len(body)))
		return append(h, body...)
	}
	return append([]byte{flags, byte(len(body))}, body...)
}

// zProps encodes ZMTP metadata from key, value pairs.
func zProps(kv ...string) []byte {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, byte(len(kv[i])))
		b = append(b, kv[i]...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(kv[i+1])))
		b = append(b, kv[i+1]...)
	}
	return b
}

func zCommand(name string, data []byte) []byte {
	body := append([]byte{byte(len(name))}, name...)
	return zFrame(flagCommand, append(body, data...))
}

func zReady(sockType string) []byte {
	return zCommand("READY", zProps("Socket-Type", sockType, "Identity", ""))
}

// rawConn is a hand-driven ZMTP peer.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func rawDial(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, r: bufio.NewReader(c)}
}

// handshake sends greeting and READY and reads the server's greeting and READY.
func (c *rawConn) handshake(t testing.TB, sockType string) {
	t.Helper()
	if _, err := c.Write(append(zGreeting(), zReady(sockType)...)); err != nil {
		t.Fatalf("write handshake: %v", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	g := make([]byte, greetingLen)
	if _, err := io.ReadFull(c.r, g); err != nil {
		t.Fatalf("read greeting: %v", err)
	}
	flags, body, err := c.readFrame()
	if err != nil || flags&flagCommand == 0 || !strings.HasPrefix(string(body), "\x05READY") {
		t.Fatalf("read READY: flags=%x body=%q err=%v", flags, body, err)
	}
	_ = c.SetReadDeadline(time.Time{})
}

func (c *rawConn) readFrame() (byte, []byte, error) {
	h, err := c.r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	var size uint64
	if h&flagLong != 0 {
		var b [8]byte
		if _, err := io.ReadFull(c.r, b[:]); err != nil {
			return 0, nil, err
		}
		size = binary.BigEndian.Uint64(b[:])
	} else {
		s, err := c.r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		size = uint64(s)
	}
	if size > 1<<26 {
		return 0, nil, errors.New("test peer: frame too big")
	}
	body := make([]byte, size)
	_, err = io.ReadFull(c.r, body)
	return h, body, err
}

// readMsg reads one data message, skipping commands.
func (c *rawConn) readMsg() ([][]byte, error) {
	var msg [][]byte
	for {
		flags, body, err := c.readFrame()
		if err != nil {
			return nil, err
		}
		if flags&flagCommand != 0 {
			continue
		}
		msg = append(msg, body)
		if flags&flagMore == 0 {
			return msg, nil
		}
	}
}

// expectClosed fails unless the peer closes the connection within d.
func (c *rawConn) expectClosed(t testing.TB, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		_, err := c.r.Read(buf)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("connection still open after %v", d)
		}
		return // EOF or reset: closed by the server
	}
}

// --- python3 + pyzmq (libzmq 4.3) ---

const python = "/usr/bin/python3"

func needPython(t testing.TB) {
	t.Helper()
	if err := exec.Command(python, "-c", "import zmq").Run(); err != nil {
		t.Skip("interop with libzmq needs /usr/bin/python3 with python3-zmq (import zmq failed)")
	}
}

// pyProc is a running python script whose stdout lines arrive on lines.
type pyProc struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *strings.Builder
	done   chan error
}

func startPython(t testing.TB, ctx context.Context, script string, args ...string) *pyProc {
	t.Helper()
	cmd := exec.CommandContext(ctx, python, append([]string{"-c", script}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &pyProc{cmd: cmd, lines: make(chan string, 100), stderr: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// line returns the next stdout line or fails the test.
func (p *pyProc) line(t testing.TB, d time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatalf("python exited early; stderr:\n%s", p.stderr.String())
		}
		return l
	case <-time.After(d):
		t.Fatalf("no output from python within %v; stderr:\n%s", d, p.stderr.String())
	}
	return ""
}

// kill stops the script and waits for it.
func (p *pyProc) kill() {
	_ = p.cmd.Process.Kill()
	for range p.lines {
	}
}

// recvTimeout receives from s or fails.
func recvTimeout(t testing.TB, s *Subscriber, d time.Duration) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	m, err := s.Recv(ctx)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return m
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", proc.FreePort(t))
}

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

package transport

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

// streamConn is a net.Conn whose reads come from a fixed byte stream (in
// small, irregular pieces) and whose writes are discarded.
type streamConn struct {
	r     *bytes.Reader
	piece int
}

func (c *streamConn) Read(p []byte) (int, error) {
	if c.piece > 0 && len(p) > c.piece {
		p = p[:c.piece]
	}
	return c.r.Read(p)
}
func (c *streamConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *streamConn) Close() error                     { return nil }
func (c *streamConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *streamConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }

func testParser(peers ...string) parser {
	return parser{lim: Limits{MaxMessageSize: 1 << 20, MaxFrames: 4}.withDefaults(), peers: peers, translateSubs: true}
}

// readAll drains a guard over stream and returns what zmq4 would see.
func readAll(p parser, stream []byte, piece int) ([]byte, error) {
	g := newGuard(&streamConn{r: bytes.NewReader(stream), piece: piece}, p)
	var out bytes.Buffer
	buf := make([]byte, 7) // odd size to exercise partial copies
	for {
		n, err := g.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.Bytes(), err
		}
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestGuardStream(t *testing.T) {
	hs := cat(zGreeting(), zReady("REQ"))
	body300 := bytes.Repeat([]byte{'x'}, 300)
	tests := []struct {
		name    string
		peers   []string
		in      []byte
		want    []byte // nil: same as in
		wantErr error  // nil: clean EOF
		pings   int
	}{
		{name: "handshake and frames", peers: []string{"REQ"},
			in: cat(hs, zFrame(flagMore, nil), zFrame(0, []byte("hello")), zFrame(0, body300))},
		{name: "bad signature", peers: []string{"REQ"},
			in: append([]byte("GET / HTTP/1.1\r\n"), make([]byte, 60)...), want: []byte{}, wantErr: ErrProtocol},
		{name: "ZMTP 2", peers: []string{"REQ"},
			in: func() []byte { g := zGreeting(); g[10] = 2; return g }(), want: []byte{}, wantErr: ErrProtocol},
		{name: "CURVE mechanism", peers: []string{"REQ"},
			in: func() []byte { g := zGreeting(); copy(g[12:], "CURVE"); return g }(), want: []byte{}, wantErr: ErrProtocol},
		{name: "unknown socket type", peers: []string{"REQ"},
			in: cat(zGreeting(), zCommand("READY", zProps("Socket-Type", "FOO"))), want: zGreeting(), wantErr: ErrProtocol},
		{name: "missing socket type", peers: []string{"REQ"},
			in: cat(zGreeting(), zCommand("READY", nil)), want: zGreeting(), wantErr: ErrProtocol},
		{name: "incompatible socket type", peers: []string{"SUB"},
			in: hs, want: zGreeting(), wantErr: ErrProtocol},
		{name: "odd-case Socket-Type zmq4 would not find (fuzz find)", peers: []string{"REQ"},
			in: cat(zGreeting(), zCommand("READY", zProps("SoCket-TYpe", "REQ"))), want: zGreeting(), wantErr: ErrProtocol},
		{name: "duplicate Socket-Type", peers: []string{"REQ"},
			in: cat(zGreeting(), zCommand("READY", zProps("Socket-Type", "REQ", "socket-type", "FOO"))), want: zGreeting(), wantErr: ErrProtocol},
		{name: "truncated property", peers: []string{"REQ"},
			in: cat(zGreeting(), zCommand("READY", []byte{3, 'a', 'b', 'c'})), want: zGreeting(), wantErr: ErrProtocol},
		{name: "property value overruns", peers: []string{"REQ"},
			in: cat(zGreeting(), zCommand("READY", []byte{1, 'a', 0, 0, 0, 9, 'z'})), want: zGreeting(), wantErr: ErrProtocol},
		{name: "identity too long", peers: []string{"REQ"},
			in: cat(zGreeting(), zCommand("READY", zProps("Socket-Type", "REQ", "Identity", string(make([]byte, 256))))), want: zGreeting(), wantErr: ErrProtocol},
		{name: "data before READY", peers: []string{"REQ"},
			in: cat(zGreeting(), zFrame(0, []byte("x"))), want: zGreeting(), wantErr: ErrProtocol},
		{name: "huge frame announced", peers: []string{"REQ"},
			in: cat(hs, []byte{flagLong, 0, 0, 1, 0, 0, 0, 0, 0}), want: hs, wantErr: ErrTooLarge},
		{name: "max int64 frame", peers: []string{"REQ"},
			in: cat(hs, []byte{flagLong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), want: hs, wantErr: ErrTooLarge},
		{name: "multipart sum too large", peers: []string{"REQ"},
			in:   cat(hs, zFrame(flagMore, make([]byte, 600<<10)), []byte{flagLong, 0, 0, 0, 0, 0, 0x07, 0, 0}),
			want: cat(hs, zFrame(flagMore, make([]byte, 600<<10))), wantErr: ErrTooLarge},
		{name: "too many frames", peers: []string{"REQ"},
			in:   cat(hs, zFrame(flagMore, nil), zFrame(flagMore, nil), zFrame(flagMore, nil), zFrame(flagMore, nil), zFrame(0, nil)),
			want: cat(hs, zFrame(flagMore, nil), zFrame(flagMore, nil), zFrame(flagMore, nil), zFrame(flagMore, nil)), wantErr: ErrTooLarge},
		{name: "frame count resets per message", peers: []string{"REQ"},
			in: cat(hs, zFrame(flagMore, nil), zFrame(flagMore, nil), zFrame(0, nil), zFrame(flagMore, nil), zFrame(flagMore, nil), zFrame(0, nil))},
		{name: "reserved flag bits", peers: []string{"REQ"},
			in: cat(hs, []byte{0x10, 0}), want: hs, wantErr: ErrProtocol},
		{name: "command with MORE", peers: []string{"REQ"},
			in: cat(hs, []byte{flagCommand | flagMore, 0}), want: hs, wantErr: ErrProtocol},
		{name: "command inside multipart", peers: []string{"REQ"},
			in: cat(hs, zFrame(flagMore, nil), zCommand("PING", []byte{0, 1})), want: cat(hs, zFrame(flagMore, nil)), wantErr: ErrProtocol},
		{name: "oversized command", peers: []string{"REQ"},
			in: cat(hs, []byte{flagCommand | flagLong, 0, 0, 0, 0, 0, 1, 0, 1}), want: hs, wantErr: ErrTooLarge},
		{name: "empty command name", peers: []string{"REQ"},
			in: cat(hs, zFrame(flagCommand, []byte{0})), want: hs, wantErr: ErrProtocol},
		{name: "second READY", peers: []string{"REQ"},
			in: cat(hs, zReady("REQ")), want: hs, wantErr: ErrProtocol},
		{name: "peer ERROR", peers: []string{"REQ"},
			in: cat(hs, zCommand("ERROR", []byte("\x03bad"))), want: hs, wantErr: ErrProtocol},
		{name: "PING answered and swallowed, PONG and unknown swallowed", peers: []string{"REQ"},
			in:   cat(hs, zCommand("PING", []byte{0, 10, 'c', 't', 'x'}), zCommand("PONG", nil), zCommand("HELLO", nil), zFrame(0, []byte("a"))),
			want: cat(hs, zFrame(0, []byte("a"))), pings: 1},
		{name: "command flood interleaved with data", peers: []string{"SUB"}, pings: 1000,
			in: func() []byte {
				b := cat(zGreeting(), zReady("SUB"))
				for i := range 1000 {
					b = append(b, zCommand("PING", []byte("\x00\x01ctx"))...)
					if i%100 == 0 {
						b = append(b, zCommand("SUBSCRIBE", []byte{byte(i)})...)
						b = append(b, zFrame(0, bytes.Repeat([]byte{'d'}, i))...)
					}
				}
				return b
			}(),
			want: func() []byte {
				b := cat(zGreeting(), zReady("SUB"))
				for i := 0; i < 1000; i += 100 {
					b = append(b, zFrame(0, []byte{1, byte(i)})...)
					b = append(b, zFrame(0, bytes.Repeat([]byte{'d'}, i))...)
				}
				return b
			}()},
		{name: "malformed PING", peers: []string{"REQ"},
			in: cat(hs, zCommand("PING", []byte{0})), want: hs, wantErr: ErrProtocol},
		{name: "SUBSCRIBE and CANCEL become 3.0 messages", peers: []string{"SUB"},
			in:   cat(zGreeting(), zReady("SUB"), zCommand("SUBSCRIBE", []byte("topic")), zCommand("CANCEL", nil)),
			want: cat(zGreeting(), zReady("SUB"), zFrame(0, []byte("\x01topic")), zFrame(0, []byte{0}))},
		{name: "lower-case property names", peers: []string{"DEALER"},
			in: cat(zGreeting(), zCommand("READY", zProps("socket-type", "DEALER", "identity", "m1")), zFrame(0, []byte("x")))},
		{name: "truncated stream", peers: []string{"REQ"},
			in: cat(hs, zFrame(0, []byte("hello"))[:4]), want: hs, wantErr: io.EOF},
	}
	for _, tt := range tests {
		for _, piece := range []int{0, 1, 5} {
			p := testParser(tt.peers...)
			pings := 0
			p.onPing = func(ctx []byte) {
				pings++
				if string(ctx) != "ctx" {
					t.Errorf("%s: ping context %q", tt.name, ctx)
				}
			}
			got, err := readAll(p, tt.in, piece)
			want := tt.want
			if want == nil {
				want = tt.in
			}
			wantErr := tt.wantErr
			if wantErr == nil {
				wantErr = io.EOF
			}
			if !errors.Is(err, wantErr) {
				t.Errorf("%s (piece %d): err = %v, want %v", tt.name, piece, err, wantErr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s (piece %d): passed %d bytes, want %d", tt.name, piece, len(got), len(want))
			}
			if pings != tt.pings {
				t.Errorf("%s (piece %d): %d pings, want %d", tt.name, piece, pings, tt.pings)
			}
		}
	}
}

// TestGuardBuffersByReceivedBytes checks that the guard's buffer grows with
// the bytes that arrived, not with the length the peer announced.
func TestGuardBuffersByReceivedBytes(t *testing.T) {
	hs := cat(zGreeting(), zReady("REQ"))
	in := cat(hs, []byte{flagLong, 0, 0, 0, 0, 0x05, 0, 0, 0}, make([]byte, 1000)) // 80 MiB announced, 1000 sent
	p := parser{lim: DefaultLimits(), peers: []string{"REQ"}}
	g := newGuard(&streamConn{r: bytes.NewReader(in)}, p)
	buf := make([]byte, 4096)
	var err error
	for err == nil {
		_, err = g.Read(buf)
	}
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want EOF", err)
	}
	if c := cap(g.buf); c > 1<<20 {
		t.Fatalf("guard buffer capacity %d after 1000 received bytes of an 80 MiB frame", c)
	}
}

// FuzzGuard feeds arbitrary bytes, as a peer's stream, through the guard into
// zmq4's real handshake and decoder: nothing may panic (zmq4 alone panics on
// several such inputs; see TestZmq4UpstreamPanics).
func FuzzGuard(f *testing.F) {
	hs := cat(zGreeting(), zReady("REQ"))
	f.Add(hs)
	f.Add(cat(hs, zFrame(flagMore, nil), zFrame(0, []byte("body"))))
	f.Add(cat(hs, []byte{flagLong, 0, 0, 1, 0, 0, 0, 0, 0}))
	f.Add(cat(zGreeting(), zCommand("READY", zProps("Socket-Type", "FOO"))))
	f.Add(cat(zGreeting(), zCommand("READY", []byte{3, 'a', 'b', 'c'})))
	f.Add(cat(hs, zCommand("PING", []byte{0, 1, 'x'}), zCommand("SUBSCRIBE", []byte("t"))))
	f.Add(cat(zGreeting(), zCommand("READY", zProps("Socket-Type", "SUB")), zCommand("SUBSCRIBE", nil)))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, r := range []role{roleRouter, rolePub} {
			p := parser{lim: Limits{MaxMessageSize: 1 << 16, MaxFrames: 8}.withDefaults(), peers: r.peers, translateSubs: r.translateSubs, onPing: func([]byte) {}}
			g := newGuard(&streamConn{r: bytes.NewReader(in), piece: 3}, p)
			c, err := zmq4.Open(g, null.Security(), r.own, nil, r.server, nil)
			if err != nil {
				continue
			}
			for {
				if _, err := c.RecvMsg(); err != nil {
					break
				}
			}
		}
	})
}

// TestGuardReusesBuffer: a client guard receiving one large frame after
// another (a minion fetching file chunks) keeps the allocation it grew
// for the first and reads the next ones into it; a server guard drops a
// buffer over keepBuf once drained (a master has thousands of peers).
func TestGuardReusesBuffer(t *testing.T) {
	const body = 1 << 20
	frames := [][]byte{cat(zGreeting(), zReady("ROUTER"))}
	for i := range 6 {
		frames = append(frames, zFrame(flagMore, nil), zFrame(0, bytes.Repeat([]byte{byte('a' + i)}, body)))
	}
	in := cat(frames...)
	for _, server := range []bool{false, true} {
		p := parser{lim: DefaultLimits(), peers: []string{"ROUTER"}, server: server}
		if server {
			p.peers = []string{"REQ"}
			in = cat(zGreeting(), zReady("REQ"), in[len(cat(zGreeting(), zReady("ROUTER"))):])
		}
		g := newGuard(&streamConn{r: bytes.NewReader(in)}, p)
		firstEnd := len(frames[0]) + len(frames[1]) + len(frames[2])
		out, bases := readBuffers(g, firstEnd, 0, func() {
			if server && g.ready == 0 && len(g.buf) == 0 && cap(g.base) > keepBuf {
				t.Fatalf("server guard keeps a drained buffer of %d bytes", cap(g.base))
			}
		})
		if !bytes.Equal(out, in) {
			t.Fatalf("server=%v: the guard changed the stream", server)
		}
		if !server && len(bases) != 1 {
			t.Errorf("client guard used %d buffers after the first frame, want 1", len(bases))
		}
	}
}

// TestGuardClientStreamsLargeFrame: a client guard hands the body of a
// large frame (a file chunk, up to maxClientStream) to zmq4 as it arrives,
// reading it straight into zmq4's buffer, so its own buffer stays small;
// frames over maxClientStream are still buffered whole first. The bytes
// zmq4 sees are the stream's, whatever the read sizes.
func TestGuardClientStreamsLargeFrame(t *testing.T) {
	hs := cat(zGreeting(), zReady("ROUTER"))
	for _, tc := range []struct {
		name     string
		body     int
		piece    int
		maxGuard int // the largest guard buffer allowed
	}{
		{"1 MiB chunk, whole reads", 1<<20 + 100, 0, readChunk},
		{"1 MiB chunk, 1000-byte reads", 1<<20 + 100, 1000, readChunk},
		{"just over readChunk", readChunk + 1, 3, readChunk},
		{"over maxClientStream: buffered", maxClientStream + 1, 0, maxClientStream + 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var frames [][]byte
			frames = append(frames, hs)
			for i := range 3 {
				frames = append(frames, zFrame(flagMore, nil), zFrame(0, bytes.Repeat([]byte{byte('a' + i)}, tc.body)))
			}
			in := cat(frames...)
			p := parser{lim: Limits{MaxMessageSize: 64 << 20}.withDefaults(), peers: []string{"ROUTER"}}
			g := newGuard(&streamConn{r: bytes.NewReader(in), piece: tc.piece}, p)
			var out bytes.Buffer
			buf := make([]byte, tc.body) // zmq4 reads a body into a buffer of its size
			largest := 0
			for {
				n, err := g.Read(buf)
				out.Write(buf[:n])
				largest = max(largest, cap(g.base), cap(g.buf))
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("err = %v", err)
					}
					break
				}
			}
			if !bytes.Equal(out.Bytes(), in) {
				t.Fatalf("passed %d bytes, want the stream's %d", out.Len(), len(in))
			}
			if largest > tc.maxGuard {
				t.Errorf("guard buffer grew to %d bytes, want at most %d", largest, tc.maxGuard)
			}
		})
	}
}

// TestGuardClientDropsGrownBuffer: a client guard whose buffer grew for
// one large reply (a pillar) does not keep it once small replies follow,
// while one reading large frames one after another keeps a single buffer.
func TestGuardClientDropsGrownBuffer(t *testing.T) {
	hs := cat(zGreeting(), zReady("ROUTER"))
	big := bytes.Repeat([]byte{'b'}, 40<<10) // under readChunk: buffered whole
	for _, tc := range []struct {
		name      string
		bodies    [][]byte
		wantMax   int // the largest buffer left after the last frame
		wantBases int // buffers used after the first large frame (0: not checked)
	}{
		{"one large reply, then small ones", [][]byte{big, []byte("ok"), []byte("ok"), []byte("ok")}, shrinkAbove, 0},
		{"large replies in a row", [][]byte{big, big, big, big}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := [][]byte{hs}
			for _, b := range tc.bodies {
				frames = append(frames, zFrame(flagMore, nil), zFrame(0, b))
			}
			in := cat(frames...)
			p := parser{lim: DefaultLimits(), peers: []string{"ROUTER"}}
			g := newGuard(&streamConn{r: bytes.NewReader(in)}, p)
			out, bases := readBuffers(g, len(frames[0])+len(frames[1])+len(frames[2]), shrinkAbove, func() {})
			if !bytes.Equal(out, in) {
				t.Fatal("the guard changed the stream")
			}
			if tc.wantMax > 0 && cap(g.base) > tc.wantMax {
				t.Errorf("after the small replies the guard keeps %d bytes, want at most %d", cap(g.base), tc.wantMax)
			}
			if tc.wantBases > 0 && len(bases) != tc.wantBases {
				t.Errorf("large replies in a row used %d buffers, want %d", len(bases), tc.wantBases)
			}
		})
	}
}

// readBuffers reads g to its end in 64 KiB reads, calling each after every
// read that did not fail, and returns the bytes and the distinct buffers
// larger than minCap the guard held once more than firstEnd bytes were
// read.
func readBuffers(g *guard, firstEnd, minCap int, each func()) ([]byte, map[*byte]bool) {
	var out bytes.Buffer
	buf := make([]byte, 64<<10)
	bases := map[*byte]bool{}
	for {
		n, err := g.Read(buf)
		out.Write(buf[:n])
		if out.Len() > firstEnd && cap(g.base) > minCap {
			bases[unsafe.SliceData(g.base[:1])] = true
		}
		if err != nil {
			return out.Bytes(), bases
		}
		each()
	}
}

// TestZmq4KeyFastPath: checkReady takes "Socket-Type" as zmq4 would
// without calling zmq4Key; that holds only while zmq4's casing leaves the
// name as it is. Other spellings still go through zmq4Key.
func TestZmq4KeyFastPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool // zmq4 reads it as Socket-Type
	}{
		{"Socket-Type", true},
		{"socket-type", true},
		{"socket-Type", true},
		{"SOCKET-TYPE", false},
		{"Socket-type", true},
	} {
		if got := zmq4Key(tc.name) == "Socket-Type"; got != tc.want {
			t.Errorf("zmq4Key(%q) == Socket-Type: %v, want %v", tc.name, got, tc.want)
		}
		md := append([]byte{byte(len(tc.name))}, tc.name...)
		md = append(md, 0, 0, 0, 3)
		md = append(md, "REQ"...)
		typ, err := checkReady(md, []string{"REQ"})
		if tc.want && (err != nil || typ != "REQ") {
			t.Errorf("checkReady(%q): %q, %v; want REQ", tc.name, typ, err)
		}
		if !tc.want && err == nil {
			t.Errorf("checkReady(%q): accepted a name zmq4 does not read as Socket-Type", tc.name)
		}
	}
}

// FuzzReadySocketType: for any property name, checkReady takes it as the
// socket type exactly when zmq4's own casing (zmq4Key) reads it as
// "Socket-Type", whether or not the fast path answered.
func FuzzReadySocketType(f *testing.F) {
	for _, n := range []string{"Socket-Type", "socket-type", "SOCKET-TYPE", "Socket-type", "sOCKET-tYPE", "Identity", "Socket_Type"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) == 0 || len(name) > 255 {
			return
		}
		md := append([]byte{byte(len(name))}, name...)
		md = append(md, 0, 0, 0, 3)
		md = append(md, "REQ"...)
		typ, err := checkReady(md, []string{"REQ"})
		want := strings.EqualFold(name, "Socket-Type") && zmq4Key(name) == "Socket-Type"
		if got := err == nil && typ == "REQ"; got != want {
			t.Fatalf("checkReady(%q): type %q, err %v; zmq4 reads it as Socket-Type: %v", name, typ, err, want)
		}
	})
}

package transport

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// stillServes fails unless a normal request to srv succeeds quickly.
func stillServes(t *testing.T, srv *ReqServer) {
	t.Helper()
	got, err := Request(context.Background(), srv.Addr().String(), []byte("ok?"), 2*time.Second)
	if err != nil || string(got) != "re:ok?" {
		t.Fatalf("server no longer serving: %q, %v", got, err)
	}
}

// TestHostileClientsAreDropped sends malformed ZMTP to live servers. Each
// hostile connection must be closed and the server must keep serving; a
// panic in a server goroutine would abort the whole test binary.
func TestHostileClientsAreDropped(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{})
	pub := listenPub(t, "127.0.0.1:0", PubOptions{})
	hs := cat(zGreeting(), zReady("REQ"))
	tests := []struct {
		name string
		pub  bool
		in   []byte
	}{
		{name: "HTTP instead of ZMTP", in: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + string(make([]byte, 64)))},
		{name: "ZMTP 2 greeting", in: func() []byte { g := zGreeting(); g[10] = 1; return g }()},
		{name: "unknown socket type (zmq4 panics)", in: cat(zGreeting(), zCommand("READY", zProps("Socket-Type", "FOO")))},
		{name: "no socket type (zmq4 panics)", in: cat(zGreeting(), zCommand("READY", nil))},
		{name: "truncated property (zmq4 panics)", in: cat(zGreeting(), zCommand("READY", []byte{3, 'a', 'b', 'c'}))},
		{name: "PUB talking to ROUTER", in: cat(zGreeting(), zReady("PUB"))},
		{name: "2^40-byte frame", in: cat(hs, zFrame(flagMore, nil), []byte{flagLong, 0, 0, 1, 0, 0, 0, 0, 0})},
		{name: "2^40-byte frame to PUB", pub: true, in: cat(zGreeting(), zReady("SUB"), []byte{flagLong, 0, 0, 1, 0, 0, 0, 0, 0})},
		{name: "too many frames", in: cat(hs, func() []byte {
			var b []byte
			for range DefaultMaxFrames + 1 {
				b = append(b, zFrame(flagMore, nil)...)
			}
			return b
		}())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := srv.Addr().String()
			if tt.pub {
				addr = pub.Addr().String()
			}
			c := rawDial(t, addr)
			if _, err := c.Write(tt.in); err != nil {
				t.Fatal(err)
			}
			c.expectClosed(t, 5*time.Second)
			stillServes(t, srv)
		})
	}
}

// TestAnnouncedLengthIsNotAllocated announces a 64 MiB frame (under the
// limit) and sends a few bytes: memory must follow the bytes received. zmq4
// alone would allocate the 64 MiB at once, and N such clients N times that.
// TestAnnouncedLengthIsNotAllocated: announced frame sizes allocate at
// most the in-flight budget (the frames over it are refused), however many
// peers announce them.
func TestAnnouncedLengthIsNotAllocated(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: Limits{InFlightBytes: 64 << 20}})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const clients = 4
	for range clients {
		c := rawDial(t, srv.Addr().String())
		c.handshake(t, "REQ")
		if _, err := c.Write(cat(zFrame(flagMore, nil), []byte{flagLong, 0, 0, 0, 0, 0x04, 0, 0, 0}, []byte("partial"))); err != nil {
			t.Fatal(err)
		}
	}
	// The server has read every header once it refused the frames over
	// the budget.
	testutil.Poll(10*time.Second, func() bool { return srv.Refused() >= clients-1 })
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > (64+32)<<20 {
		t.Fatalf("server allocated %d MiB for %d announced 64 MiB frames with a 64 MiB budget", grown>>20, clients)
	}
	if srv.Refused() != clients-1 {
		t.Fatalf("%d frames refused, want %d", srv.Refused(), clients-1)
	}
	stillServes(t, srv)
}

func TestSilentClientDoesNotBlockOthers(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: Limits{HandshakeTimeout: 5 * time.Second}})
	for range 3 {
		rawDial(t, srv.Addr().String()) // connects and says nothing
	}
	half := rawDial(t, srv.Addr().String())
	_, _ = half.Write(zGreeting()[:20]) // half a greeting
	// Far less than the handshake timeout: the silent peers cannot be in the way.
	for range 5 {
		stillServes(t, srv)
	}

	short := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: Limits{HandshakeTimeout: 200 * time.Millisecond}})
	silent := rawDial(t, short.Addr().String())
	silent.expectClosed(t, 5*time.Second)
}

func TestMaxConns(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: Limits{MaxConns: 2}})
	a := rawDial(t, srv.Addr().String())
	b := rawDial(t, srv.Addr().String())
	a.handshake(t, "REQ")
	b.handshake(t, "REQ")
	third := rawDial(t, srv.Addr().String())
	third.expectClosed(t, 5*time.Second)
	a.Close()
	waitFor(t, func() bool {
		_, err := Request(context.Background(), srv.Addr().String(), []byte("x"), 200*time.Millisecond)
		return err == nil
	})
}

package transport

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// TestWaitIdleLendsTheBuffer checks that a server guard waiting for its
// peer's next bytes holds no read buffer (it is back in the listener's
// store), borrows one for the read that takes them, and reports the
// peer's close as io.EOF and a read deadline as a time-out.
func TestWaitIdleLendsTheBuffer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	store := newReadBufs(4)
	g := newGuard(server, parser{lim: DefaultLimits(), server: true})
	g.bufs = store
	g.base = make([]byte, 0, minChunk)
	g.buf = g.base
	for round := range 2 {
		done := make(chan struct{})
		go func() {
			g.waitData()
			close(done)
		}()
		// While it waits the buffer is in the store.
		testutil.Eventually(t, testutil.Scale(5*time.Second), func() bool { return len(store.free) == 1 }, "the idle guard's buffer back in the store")
		if _, err := client.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(testutil.Scale(10 * time.Second)):
			t.Fatalf("round %d: waitData did not return after the peer wrote", round)
		}
		if string(g.buf) != "hello" || g.err != nil || len(store.free) != 0 {
			t.Fatalf("round %d: buffered %q, err %v, %d spare buffers; want hello, nil, 0", round, g.buf, g.err, len(store.free))
		}
		g.buf = g.buf[:0] // consumed
	}
	_ = server.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	g.waitData()
	var ne net.Error
	if !errors.As(g.err, &ne) || !ne.Timeout() {
		t.Fatalf("after the read deadline: %v, want a time-out", g.err)
	}
	_ = server.SetReadDeadline(time.Time{})
	g.err = nil
	client.Close()
	g.waitData()
	if !errors.Is(g.err, io.EOF) {
		t.Fatalf("after the peer closed: %v, want io.EOF", g.err)
	}
}

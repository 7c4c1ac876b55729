package transport

import (
	"context"
	"encoding/binary"
	"testing"
	"time"
)

// longHeader is the header of a final data frame announcing size bytes.
func longHeader(size uint64) []byte {
	h := make([]byte, 9)
	h[0] = flagLong
	binary.BigEndian.PutUint64(h[1:], size)
	return h
}

// TestStalledFrameIsCutOff: a peer that sends a frame header and part of
// its body, then stalls, is disconnected after FrameTimeout; an idle
// connection between frames is not.
func TestStalledFrameIsCutOff(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: Limits{FrameTimeout: 300 * time.Millisecond}})
	idle := rawDial(t, srv.Addr().String())
	idle.handshake(t, "REQ")
	c := rawDial(t, srv.Addr().String())
	c.handshake(t, "REQ")
	if _, err := c.Write(append(zFrame(flagMore, nil), append(longHeader(8<<20), make([]byte, 1<<16)...)...)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.expectClosed(t, 10*time.Second)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("stalled connection closed after %s", took)
	}
	// The idle one still works.
	if _, err := idle.Write(append(zFrame(flagMore, nil), zFrame(0, []byte("hi"))...)); err != nil {
		t.Fatal(err)
	}
	_ = idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	msg, err := idle.readMsg()
	if err != nil || len(msg) != 2 || string(msg[1]) != "re:hi" {
		t.Fatalf("idle connection: %q %v", msg, err)
	}
}

// TestInFlightBudget: connections announcing large frames reserve their
// size from the server's budget when the header arrives; one that does not
// fit is closed, small requests keep being served, and the budget comes
// back when the stalled connections go away.
func TestInFlightBudget(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: Limits{InFlightBytes: 100 << 20, FrameTimeout: time.Minute}})
	addr := srv.Addr().String()
	var holders []*rawConn
	for range 2 {
		c := rawDial(t, addr)
		c.handshake(t, "REQ")
		if _, err := c.Write(append(zFrame(flagMore, nil), append(longHeader(45<<20), make([]byte, 4096)...)...)); err != nil {
			t.Fatal(err)
		}
		holders = append(holders, c)
	}
	waitFor(t, func() bool { return srv.l.budget.used.Load() == 90<<20 })
	over := rawDial(t, addr)
	over.handshake(t, "REQ")
	if _, err := over.Write(append(zFrame(flagMore, nil), longHeader(45<<20)...)); err != nil {
		t.Fatal(err)
	}
	over.expectClosed(t, 10*time.Second)
	if srv.Refused() == 0 {
		t.Fatal("no refusal counted")
	}
	// A small request is served meanwhile.
	got, err := Request(context.Background(), addr, []byte("small"), 10*time.Second)
	if err != nil || string(got) != "re:small" {
		t.Fatalf("small request: %q %v", got, err)
	}
	for _, c := range holders {
		c.Close()
	}
	waitFor(t, func() bool { return srv.l.budget.used.Load() == 0 })
	// A complete large request is served and its reservation returned.
	big := make([]byte, 3<<20)
	got, err = Request(context.Background(), addr, big, 30*time.Second)
	if err != nil || len(got) != len(big)+3 {
		t.Fatalf("large request: %d bytes, %v", len(got), err)
	}
	waitFor(t, func() bool { return srv.l.budget.used.Load() == 0 })
}

// TestIdleAfterSplitFrame: a request whose frame arrived in two pieces
// (the server set a frame read deadline while it waited for the rest)
// leaves no deadline behind: the connection, idle for longer than
// FrameTimeout after the reply, still serves the next request.
func TestIdleAfterSplitFrame(t *testing.T) {
	const frameTimeout = 300 * time.Millisecond
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{Limits: Limits{FrameTimeout: frameTimeout}})
	c := rawDial(t, srv.Addr().String())
	c.handshake(t, "REQ")
	body := make([]byte, 4<<10)
	msg := append(zFrame(flagMore, nil), zFrame(0, body)...)
	if _, err := c.Write(msg[:100]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(frameTimeout / 3) // the server reads the first piece alone (the behaviour under test)
	if _, err := c.Write(msg[100:]); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, err := c.readMsg(); err != nil || len(got) != 2 || len(got[1]) != len(body)+3 {
		t.Fatalf("split request: %d frames, %v", len(got), err)
	}
	time.Sleep(2 * frameTimeout) // idle past the frame timeout (the behaviour under test)
	if _, err := c.Write(append(zFrame(flagMore, nil), zFrame(0, []byte("hi"))...)); err != nil {
		t.Fatal(err)
	}
	got, err := c.readMsg()
	if err != nil || len(got) != 2 || string(got[1]) != "re:hi" {
		t.Fatalf("request after idling: %q %v", got, err)
	}
}

package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

func listenPub(t testing.TB, addr string, opts PubOptions) *PubServer {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	p, err := ListenPub(context.Background(), addr, opts)
	if err != nil {
		t.Fatalf("ListenPub: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dialSub(t testing.TB, addr string, opts SubOptions) *Subscriber {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	if opts.ReconnectMin == 0 {
		opts.ReconnectMin, opts.ReconnectMax = 20*time.Millisecond, 100*time.Millisecond
	}
	s, err := DialSub(context.Background(), addr, opts)
	if err != nil {
		t.Fatalf("DialSub: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// syncSub publishes probe until sub has received it, so that the
// subscription is known to be active, and drains the extra probes.
func syncSub(t testing.TB, publish func(frames ...[]byte), sub *Subscriber, probe [][]byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		publish(probe...)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		m, err := sub.Recv(ctx)
		cancel()
		if err == nil && equalFrames(m, probe) {
			drain(sub)
			return
		}
	}
	t.Fatal("subscriber never received the probe")
}

func drain(sub *Subscriber) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := sub.Recv(ctx)
		cancel()
		if err != nil {
			return
		}
	}
}

func equalFrames(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestPubSubTopics(t *testing.T) {
	pub := listenPub(t, "127.0.0.1:0", PubOptions{})
	addr := pub.Addr().String()
	all := dialSub(t, "tcp://"+addr, SubOptions{Identity: []byte("minion1")})
	filtered := dialSub(t, addr, SubOptions{Topics: [][]byte{[]byte("broadcast"), []byte("abc")}})
	publish := func(f ...[]byte) { _ = pub.Publish(f...) }
	syncSub(t, publish, all, [][]byte{[]byte("broadcast"), []byte("probe")})
	syncSub(t, publish, filtered, [][]byte{[]byte("broadcast"), []byte("probe")})
	drain(all)

	big := bytes.Repeat([]byte{0x83}, 1<<20)
	msgs := []struct {
		frames   [][]byte
		filtered bool // delivered to the filtered subscriber
	}{
		{frames: [][]byte{[]byte("\x83\xa3enc\xa3aes")}},
		{frames: [][]byte{[]byte("broadcast"), []byte("payload")}, filtered: true},
		{frames: [][]byte{[]byte("abcdef0123"), []byte("per-minion")}, filtered: true},
		{frames: [][]byte{[]byte("ab"), []byte("not a prefix match")}},
		{frames: [][]byte{big}},
		{frames: [][]byte{[]byte("broadcast"), {}, []byte("three frames")}, filtered: true},
	}
	for _, m := range msgs {
		if err := pub.Publish(m.frames...); err != nil {
			t.Fatalf("Publish: %v", err)
		}
	}
	for i, m := range msgs {
		if got := recvTimeout(t, all, 5*time.Second); !equalFrames(got, m.frames) {
			t.Errorf("all: message %d: got %d frames, want %d", i, len(got), len(m.frames))
		}
	}
	for i, m := range msgs {
		if !m.filtered {
			continue
		}
		if got := recvTimeout(t, filtered, 5*time.Second); !equalFrames(got, m.frames) {
			t.Errorf("filtered: message %d: got %q", i, got)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if m, err := filtered.Recv(ctx); err == nil {
		t.Errorf("filtered subscriber got unexpected %q", m)
	}
	if err := pub.Publish(); !errors.Is(err, ErrInvalid) {
		t.Errorf("Publish() = %v, want ErrInvalid", err)
	}
}

func TestSubscriberReconnectsToRestartedPubServer(t *testing.T) {
	pub := listenPub(t, "127.0.0.1:0", PubOptions{})
	addr := pub.Addr().String()
	sub := dialSub(t, addr, SubOptions{})
	probe := [][]byte{[]byte("probe")}
	syncSub(t, func(f ...[]byte) { _ = pub.Publish(f...) }, sub, probe)
	select {
	case <-sub.Reconnected():
		t.Fatal("Reconnected fired for the first connection")
	default:
	}

	if err := pub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(probe...); !errors.Is(err, ErrClosed) {
		t.Errorf("Publish after Close = %v, want ErrClosed", err)
	}
	pub2 := listenPub(t, addr, PubOptions{})
	syncSub(t, func(f ...[]byte) { _ = pub2.Publish(f...) }, sub, probe)
	select {
	case <-sub.Reconnected():
	case <-time.After(5 * time.Second):
		t.Fatal("Reconnected did not fire")
	}
	if n := sub.Reconnects(); n != 1 {
		t.Errorf("Reconnects() = %d, want 1", n)
	}

	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Recv(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close = %v, want ErrClosed", err)
	}
}

// stalledSubscriber connects, subscribes to everything, reads one message
// (so the subscription is known to be active) and then never reads again.
func stalledSubscriber(t testing.TB, addr string, publish func(...[]byte)) *rawConn {
	t.Helper()
	c := rawDial(t, addr)
	c.handshake(t, "SUB")
	if _, err := c.Write(zFrame(0, []byte{1})); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := c.readMsg()
		got <- err
	}()
	for {
		publish([]byte("probe"))
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("stalled subscriber: %v", err)
			}
			return c
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestPublishNeverBlocks(t *testing.T) {
	pub := listenPub(t, "127.0.0.1:0", PubOptions{HWM: 10})
	for range 100 { // no subscribers at all
		if err := pub.Publish([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if pub.Dropped() != 0 {
		t.Fatalf("Dropped() = %d with no subscribers", pub.Dropped())
	}
	stalledSubscriber(t, pub.Addr().String(), func(f ...[]byte) { _ = pub.Publish(f...) })
	dropped := pub.Dropped()
	msg := make([]byte, 64<<10)
	const n = 2000 // 125 MiB in total, far beyond socket buffers
	for range n {
		if err := pub.Publish([]byte{}, msg); err != nil {
			t.Fatal(err)
		}
	}
	// Up to HWM queued plus whatever the kernel buffers hold; the rest dropped.
	waitFor(t, func() bool { return pub.Dropped()-dropped > n/2 })
}

func TestSubscriberQueueBounded(t *testing.T) {
	pub := listenPub(t, "127.0.0.1:0", PubOptions{})
	sub := dialSub(t, pub.Addr().String(), SubOptions{QueueSize: 5})
	syncSub(t, func(f ...[]byte) { _ = pub.Publish(f...) }, sub, [][]byte{[]byte("probe")})
	for i := range 100 {
		_ = pub.Publish([]byte(fmt.Sprint(i)))
	}
	waitFor(t, func() bool { return sub.Dropped() == 95 })
	for i := range 5 {
		if m := recvTimeout(t, sub, time.Second); string(m[0]) != fmt.Sprint(i) {
			t.Fatalf("message %d = %q", i, m[0])
		}
	}
}

func TestPubStalledSubscriberDoesNotBlockOthers(t *testing.T) {
	pub := listenPub(t, "127.0.0.1:0", PubOptions{})
	addr := pub.Addr().String()
	stalledSubscriber(t, addr, func(f ...[]byte) { _ = pub.Publish(f...) })
	good := dialSub(t, addr, SubOptions{})
	syncSub(t, func(f ...[]byte) { _ = pub.Publish(f...) }, good, [][]byte{[]byte("probe")})
	waitFor(t, func() bool { return pub.Subscribers() == 2 })
	const n = 64
	big := make([]byte, 1<<20)
	for i := range n {
		if err := pub.Publish([]byte(fmt.Sprint(i)), big); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		m := recvTimeout(t, good, 10*time.Second)
		if string(m[0]) != fmt.Sprint(i) {
			t.Fatalf("good subscriber: message %d has topic %q", i, m[0])
		}
	}
}

// fakePub accepts connections as a hand-written PUB and runs serve on each.
func fakePub(t testing.TB, serve func(c *rawConn)) string {
	t.Helper()
	return testutil.ServeTCP(t, func(c net.Conn) { serve(&rawConn{Conn: c, r: newReader(c)}) }).Addr().String()
}

func TestSubscriberWireFormat(t *testing.T) {
	got := make(chan string, 10)
	addr := fakePub(t, func(c *rawConn) {
		_, _ = c.Write(append(zGreeting(), zReady("PUB")...))
		g := make([]byte, greetingLen)
		if _, err := io.ReadFull(c.r, g); err != nil {
			return
		}
		got <- fmt.Sprintf("greeting %x %x NULL=%v", g[0], g[9], strings.HasPrefix(string(g[12:]), "NULL"))
		for {
			flags, body, err := c.readFrame()
			if err != nil {
				return
			}
			got <- fmt.Sprintf("%x %q", flags, body)
		}
	})
	dialSub(t, addr, SubOptions{Identity: []byte("minion1"), Topics: [][]byte{[]byte("broadcast"), []byte("abc")}})
	want := []string{
		"greeting ff 7f NULL=true",
		"", // READY, checked below
		`0 "\x01broadcast"`,
		`0 "\x01abc"`,
	}
	for i, w := range want {
		var l string
		select {
		case l = <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("line %d: nothing received", i)
		}
		if i == 1 {
			if !strings.HasPrefix(l, "4 ") || !strings.Contains(l, `Socket-Type\x00\x00\x00\x03SUB`) || !strings.Contains(l, `Identity\x00\x00\x00\aminion1`) {
				t.Errorf("READY = %s", l)
			}
			continue
		}
		if l != w {
			t.Errorf("line %d = %s, want %s", i, l, w)
		}
	}
}

func TestSubscriberHeartbeat(t *testing.T) {
	t.Run("live publisher answers PING", func(t *testing.T) {
		pub := listenPub(t, "127.0.0.1:0", PubOptions{})
		sub := dialSub(t, pub.Addr().String(), SubOptions{Heartbeat: 50 * time.Millisecond})
		<-sub.Connected()
		time.Sleep(600 * time.Millisecond) // 12 intervals without data
		if n := sub.Reconnects(); n != 0 {
			t.Fatalf("Reconnects() = %d on an idle but live publisher", n)
		}
	})
	t.Run("silent publisher is dropped", func(t *testing.T) {
		conns := make(chan struct{}, 10)
		addr := fakePub(t, func(c *rawConn) {
			_, _ = c.Write(append(zGreeting(), zReady("PUB")...))
			conns <- struct{}{}
			_, _ = io.Copy(io.Discard, c) // read PINGs, never answer
		})
		sub := dialSub(t, addr, SubOptions{Heartbeat: 50 * time.Millisecond})
		for i := range 2 {
			select {
			case <-conns:
			case <-time.After(5 * time.Second):
				t.Fatalf("connection %d not made", i+1)
			}
		}
		waitFor(t, func() bool { return sub.Reconnects() >= 1 })
	})
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, cond)
}

// TestPubWaitSubscribed: a subscriber whose bytes reach the publisher
// late (a proxy delays them 300 ms) has finished its side of the
// handshake and sent its subscription before the publisher applied it;
// once WaitSubscribed returns, a message published reaches it: true for a
// subscriber that names itself (gsalt's SUB), false after waiting for one
// that names no one (libzmq's SUB, a Salt minion). An identity without
// any connection does not wait, and one whose subscriptions do not cover
// the topics waits until its context ends.
func TestPubWaitSubscribed(t *testing.T) {
	p := listenPub(t, "127.0.0.1:0", PubOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(30*time.Second))
	defer cancel()
	if p.WaitSubscribed(ctx, "nobody") || ctx.Err() != nil {
		t.Fatalf("WaitSubscribed for an identity without a connection: waited (ctx %v)", ctx.Err())
	}
	proxy := testutil.DelayProxy(t, p.Addr().String(), 300*time.Millisecond)
	for _, tc := range []struct {
		id       string
		identity []byte   // what the subscriber sends in its handshake
		topics   [][]byte // the subscriber's (nil: everything)
		want     [][]byte // the topics WaitSubscribed asks for
		msg      []byte
		named    bool // WaitSubscribed's result
	}{
		{"m1", []byte("m1"), nil, nil, []byte("job for m1"), true},
		{"m2", []byte("m2"), [][]byte{[]byte("broadcast"), []byte("m2hex")}, [][]byte{[]byte("broadcast"), []byte("m2hex")}, []byte("m2hex"), true},
		{"m3", nil, nil, nil, []byte("job for m3"), false},
	} {
		sub := dialSub(t, proxy, SubOptions{Identity: tc.identity, Topics: tc.topics})
		select {
		case <-sub.Connected():
		case <-ctx.Done():
			t.Fatalf("%s never connected", tc.id)
		}
		if got := p.WaitSubscribed(ctx, tc.id, tc.want...); got != tc.named || ctx.Err() != nil {
			t.Fatalf("WaitSubscribed(%s): %v, want %v (ctx %v)", tc.id, got, tc.named, ctx.Err())
		}
		if err := p.Publish(tc.msg); err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(ctx, testutil.Scale(10*time.Second))
		got, err := sub.Recv(rctx)
		rcancel()
		if err != nil || !equalFrames(got, [][]byte{tc.msg}) {
			t.Fatalf("%s: the message published after WaitSubscribed: %q %v", tc.id, got, err)
		}
	}
	short, scancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer scancel()
	if p.WaitSubscribed(short, "m2", []byte("other")) || short.Err() == nil {
		t.Fatal("WaitSubscribed for a topic m2 did not subscribe to returned before its context ended")
	}
}

// TestSubscriberDeliver checks SubOptions.Deliver: every message reaches
// Deliver in publish order, none through Recv, which waits for the
// subscription's end instead.
func TestSubscriberDeliver(t *testing.T) {
	pub := listenPub(t, "127.0.0.1:0", PubOptions{})
	got := make(chan [][]byte, 64)
	sub := dialSub(t, pub.Addr().String(), SubOptions{Deliver: func(f [][]byte) { got <- f }})
	probe := [][]byte{[]byte("probe")}
	if !testutil.Poll(10*time.Second, func() bool {
		_ = pub.Publish(probe...)
		select {
		case <-got:
			return true
		case <-time.After(20 * time.Millisecond):
			return false
		}
	}) {
		t.Fatal("the subscriber never delivered the probe")
	}
	// Later probes still on their way are skipped below.
	const n = 20
	for i := range n {
		if err := pub.Publish([]byte(fmt.Sprintf("m%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; {
		select {
		case f := <-got:
			if string(f[0]) == "probe" {
				continue
			}
			if want := fmt.Sprintf("m%02d", i); len(f) != 1 || string(f[0]) != want {
				t.Fatalf("delivery %d: %q, want [%s]", i, f, want)
			}
			i++
		case <-time.After(testutil.Scale(10 * time.Second)):
			t.Fatalf("%d of %d delivered", i, n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if m, err := sub.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Recv with Deliver = %q, %v; want the context's end", m, err)
	}
	if d := sub.Dropped(); d != 0 {
		t.Errorf("Dropped = %d with Deliver", d)
	}
	sub.Close()
	if _, err := sub.Recv(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close = %v, want ErrClosed", err)
	}
}

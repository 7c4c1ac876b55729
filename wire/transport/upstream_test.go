package transport

// Tests that pin down defects of github.com/go-zeromq/zmq4 v0.17.0 used on its
// own, which this package works around. If one of them starts failing after a
// zmq4 upgrade, the defect may be fixed upstream and the workaround can be
// reconsidered.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

func quietZmq4() zmq4.Option { return zmq4.WithLogger(log.New(io.Discard, "", 0)) }

// TestZmq4UpstreamPanics: one malformed handshake or frame header makes
// zmq4.Open / Conn.RecvMsg panic. Inside zmq4's own socket goroutines that
// would kill the process. (A 2^40-byte announcement is worse: make() then
// dies with the unrecoverable "fatal error: runtime: out of memory".) The
// same bytes through openZMTP fail cleanly.
func TestZmq4UpstreamPanics(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"unknown socket type", cat(zGreeting(), zCommand("READY", zProps("Socket-Type", "FOO")))},
		{"missing socket type", cat(zGreeting(), zCommand("READY", nil))},
		{"truncated property", cat(zGreeting(), zCommand("READY", []byte{3, 'a', 'b', 'c'}))},
		{"2^62-byte frame", cat(zGreeting(), zReady("REQ"), []byte{flagLong, 0x40, 0, 0, 0, 0, 0, 0, 0})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			panicked := func() (p any) {
				defer func() { p = recover() }()
				c, err := zmq4.Open(&streamConn{r: bytes.NewReader(tt.in)}, null.Security(), zmq4.Router, nil, true, nil)
				if err == nil {
					_, _ = c.RecvMsg()
				}
				return nil
			}()
			if panicked == nil {
				t.Errorf("zmq4 did not panic (fixed upstream?)")
			} else {
				t.Logf("zmq4 panics: %v", panicked)
			}
			c, err := openZMTP(context.Background(), &streamConn{r: bytes.NewReader(tt.in)}, roleRouter, nil, DefaultLimits(), nil, nil)
			if err == nil {
				_, err = c.recv()
			}
			if err == nil {
				t.Error("guarded connection accepted the input")
			}
		})
	}
}

// TestZmq4UpstreamAcceptBlockedBySilentClient: zmq4 sockets run the ZMTP
// handshake inside the accept loop without a deadline, so one TCP client that
// never sends a greeting blocks every later client. (Our servers:
// TestSilentClientDoesNotBlockOthers.)
func TestZmq4UpstreamAcceptBlockedBySilentClient(t *testing.T) {
	ctx := context.Background()
	router := zmq4.NewRouter(ctx, quietZmq4())
	defer router.Close()
	if err := router.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	addr := router.Addr().String()
	silent := rawDial(t, addr)

	req := zmq4.NewReq(ctx, quietZmq4())
	defer req.Close()
	dialed := make(chan error, 1)
	go func() { dialed <- req.Dial("tcp://" + addr) }()
	select {
	case err := <-dialed:
		t.Fatalf("zmq4 REQ completed its handshake while a silent client was pending (fixed upstream?): %v", err)
	case <-time.After(time.Second):
	}
	silent.Close() // unblocks zmq4's accept loop
	select {
	case err := <-dialed:
		if err != nil {
			t.Fatalf("dial after the silent client left: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("zmq4 accept loop still blocked")
	}
}

// TestZmq4UpstreamPubStalledSubscriberBlocksOthers: zmq4's PUB writes each
// message to every subscriber in turn from one goroutine with no write
// deadline, so a subscriber that stops reading stalls all the others. (Our
// PubServer: TestPubStalledSubscriberDoesNotBlockOthers.) The good subscriber
// here is ours, which also shows it interoperates with zmq4's PUB.
func TestZmq4UpstreamPubStalledSubscriberBlocksOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 2 s")
	}
	ctx := context.Background()
	pub := zmq4.NewPub(ctx, quietZmq4())
	defer pub.Close()
	if err := pub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	addr := pub.Addr().String()
	publish := func(f ...[]byte) { _ = pub.Send(zmq4.NewMsgFrom(f...)) }
	stalled := stalledSubscriber(t, addr, publish)
	defer stalled.Close()
	good := dialSub(t, addr, SubOptions{})
	syncSub(t, publish, good, [][]byte{[]byte("probe")})

	const n = 64
	big := make([]byte, 1<<20)
	for i := range n {
		publish([]byte(fmt.Sprint(i)), big)
	}
	got := 0
	for got < n {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := good.Recv(ctx)
		cancel()
		if err != nil {
			break
		}
		got++
	}
	if got == n {
		t.Fatal("good subscriber received everything (fixed upstream?)")
	}
	t.Logf("good subscriber received %d of %d messages, then zmq4's PUB stalled", got, n)
}

// TestZmq4UpstreamSubGivesUpAfterOutage: with WithAutomaticReconnect(true) a
// zmq4 SUB re-dials and re-subscribes only within its dial retry budget
// (10 tries, 250 ms apart by default); a publisher that is away for longer,
// as a restarting Salt master is, is never reached again. (Ours:
// TestSubscriberReconnectsToRestartedPubServer and the libzmq restart test.)
func TestZmq4UpstreamSubGivesUpAfterOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 5 s")
	}
	ctx := context.Background()
	p1 := listenPub(t, "127.0.0.1:0", PubOptions{})
	addr := p1.Addr().String()
	sub := zmq4.NewSub(ctx, zmq4.WithAutomaticReconnect(true), zmq4.WithDialerRetry(50*time.Millisecond), quietZmq4())
	defer sub.Close()
	if err := sub.Dial("tcp://" + addr); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1000)
	go func() {
		for {
			m, err := sub.Recv()
			if err != nil {
				if ctx.Err() != nil || err == context.Canceled {
					return
				}
				time.Sleep(10 * time.Millisecond) // back off before the next Recv while the publisher is away
				continue
			}
			got <- string(m.Frames[0])
		}
	}()
	waitRecv := func(p *PubServer, tag string, d time.Duration) bool {
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			_ = p.Publish([]byte(tag))
			select {
			case s := <-got:
				if s == tag {
					return true
				}
			case <-time.After(20 * time.Millisecond):
			}
		}
		return false
	}
	if !waitRecv(p1, "gen1", 5*time.Second) {
		t.Fatal("zmq4 SUB never received from the first publisher")
	}
	p1.Close()
	// The behaviour under test: an outage longer than zmq4's reconnect
	// budget (10 retries x 50 ms).
	time.Sleep(1500 * time.Millisecond)
	p2 := listenPub(t, addr, PubOptions{})
	if waitRecv(p2, "gen2", 2*time.Second) {
		t.Fatal("zmq4 SUB recovered after the outage (fixed upstream?)")
	}
}

var _ net.Conn = (*streamConn)(nil)

// loopConn serves head once and then body over and over (an endless
// stream of identical frames after a handshake).
type loopConn struct {
	streamConn
	head, body []byte
	off        int
}

func (c *loopConn) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	n := copy(p, c.body[c.off:])
	c.off = (c.off + n) % len(c.body)
	return n, nil
}

// BenchmarkZmq4RecvAlloc measures what zmq4 v0.17.0's Conn.RecvMsg
// allocates for one data frame of each size, read from memory (no guard,
// no network): a new buffer of exactly the frame's size for every frame
// (make([]byte, size) in Conn.read), never reused and never a fixed
// 1 MiB one, plus a few small objects (B/op ≈ size + ~100).
func BenchmarkZmq4RecvAlloc(b *testing.B) {
	for _, size := range []int{440, 80 << 10, 1 << 20} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			c, err := zmq4.Open(&loopConn{head: cat(zGreeting(), zReady("PUB")), body: zFrame(0, make([]byte, size))},
				null.Security(), zmq4.Sub, nil, false, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				m, err := c.RecvMsg()
				if err != nil || len(m.Frames) != 1 || len(m.Frames[0]) != size {
					b.Fatalf("got %d frames, err %v", len(m.Frames), err)
				}
			}
		})
	}
}

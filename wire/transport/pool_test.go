package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

// TestReqPoolReusesConnection checks that requests through a ReqPool share
// one connection (one peer address seen by the server), that the replies
// are the handler's, and that after the server restarts on the same
// address the dead idle connection is replaced without failing the request.
func TestReqPoolReusesConnection(t *testing.T) {
	var pc peerCount
	srv := listenReq(t, "127.0.0.1:0", pc.handler(echo), ReqOptions{})
	addr := srv.Addr().String()
	p := &ReqPool{Addr: addr, Logger: testLogger(t)}
	defer p.Close()
	ctx := context.Background()
	for i := range 20 {
		reply, err := p.Send(ctx, []byte("hello"), 1, 5*time.Second)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if string(reply) != "re:hello" {
			t.Fatalf("request %d: reply %q", i, reply)
		}
	}
	if peers := pc.seen(); len(peers) != 1 {
		t.Errorf("20 sequential requests came over %d connections, want 1: %v", len(peers), peers)
	}

	// Restart the server: the pooled connection is now dead.
	srv.Close()
	srv2 := listenReq(t, addr, pc.handler(echo), ReqOptions{})
	defer srv2.Close()
	reply, err := p.Send(ctx, []byte("again"), 1, 5*time.Second)
	if err != nil {
		t.Fatalf("request after a server restart (one try): %v", err)
	}
	if string(reply) != "re:again" {
		t.Fatalf("reply after restart %q", reply)
	}
}

// TestReqPoolConcurrent checks that concurrent requests each get their own
// reply (a REQ connection carries one request at a time).
func TestReqPoolConcurrent(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		time.Sleep(time.Millisecond) // each request keeps a worker busy a moment, so the pool's workers overlap
		return echo(ctx, req)
	}, ReqOptions{})
	p := &ReqPool{Addr: srv.Addr().String(), MaxIdle: 2, Logger: testLogger(t)}
	defer p.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := []byte{byte('a' + i%26), byte(i)}
			reply, err := p.Send(context.Background(), msg, 2, 10*time.Second)
			if err == nil && string(reply) != "re:"+string(msg) {
				t.Errorf("request %d: reply %q", i, reply)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestReqServerShedsClosedConnections checks that a request whose
// connection closed while it waited for a worker is not handled.
func TestReqServerShedsClosedConnections(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var handled []string
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		mu.Lock()
		handled = append(handled, string(req))
		mu.Unlock()
		if string(req) == "block" {
			<-release
		}
		return echo(ctx, req)
	}, ReqOptions{Workers: 1})
	addr := srv.Addr().String()
	blocked := make(chan error, 1)
	go func() {
		_, err := Request(context.Background(), addr, []byte("block"), 10*time.Second)
		blocked <- err
	}()
	testutil.Eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled) == 1
	}, "the blocking request to reach the handler")
	// This one waits behind "block", then its client gives up.
	if _, err := Request(context.Background(), addr, []byte("stale"), 200*time.Millisecond); err == nil {
		t.Fatal("the stale request got a reply while the only worker was busy")
	}
	// Let the server's reader see the hang-up before the worker is free.
	testutil.Poll(10*time.Second, func() bool { return srv.l.connCount() <= 1 })
	close(release)
	if err := <-blocked; err != nil {
		t.Fatalf("blocking request: %v", err)
	}
	reply, err := Request(context.Background(), addr, []byte("fresh"), 5*time.Second)
	if err != nil || string(reply) != "re:fresh" {
		t.Fatalf("fresh request: %q, %v", reply, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range handled {
		if h == "stale" {
			t.Errorf("the request of a closed connection was handled: %v", handled)
		}
	}
	if srv.Shed() != 1 {
		t.Errorf("Shed() = %d, want 1", srv.Shed())
	}
}

// TestReqPoolMaxOpen checks that a pool with MaxOpen never has more
// requests at the server at once than MaxOpen, that every request still
// gets its own reply, and that a request waiting for a slot gives up when
// its context ends.
func TestReqPoolMaxOpen(t *testing.T) {
	var mu sync.Mutex
	inFlight, peak := 0, 0
	release := make(chan struct{})
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		if string(req) == "hold" {
			<-release
		} else {
			time.Sleep(2 * time.Millisecond)
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		return echo(ctx, req)
	}, ReqOptions{Workers: 16})
	p := &ReqPool{Addr: srv.Addr().String(), MaxIdle: 2, MaxOpen: 3, Logger: testLogger(t)}
	defer p.Close()

	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := []byte{byte('a' + i%26), byte(i)}
			reply, err := p.Send(context.Background(), msg, 1, 10*time.Second)
			switch {
			case err != nil:
				errs <- err
			case string(reply) != "re:"+string(msg):
				errs <- fmt.Errorf("request %d: reply %q", i, reply)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if peak > 3 {
		t.Errorf("%d requests at the server at once, MaxOpen 3", peak)
	}

	// Three requests hold every slot: a fourth waits and gives up with
	// its context, without reaching the server.
	held := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := p.Send(context.Background(), []byte("hold"), 1, 10*time.Second)
			held <- err
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := inFlight
		mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 holding requests reached the server", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := p.Send(ctx, []byte("late"), 1, 10*time.Second)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
		t.Errorf("waiting request: err %v, want a timeout", err)
	}
	close(release)
	for range 3 {
		if err := <-held; err != nil {
			t.Error(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > 3 {
		t.Errorf("%d requests at the server at once, MaxOpen 3", peak)
	}
}

// TestReqPoolClosesIdle checks that a pool closes its connections once
// they have been idle for IdleTimeout, so the server holds none for a
// quiet peer, and that the next request opens a new one.
func TestReqPoolClosesIdle(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{})
	p := &ReqPool{Addr: srv.Addr().String(), MaxIdle: 2, IdleTimeout: testutil.Scale(200 * time.Millisecond), Logger: testLogger(t)}
	defer p.Close()
	ctx := context.Background()
	for round := range 2 {
		if _, err := p.Send(ctx, []byte("x"), 1, 5*time.Second); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if n := p.IdleConns(); n != 1 {
			t.Fatalf("round %d: %d idle connections after a request, want 1", round, n)
		}
		deadline := time.Now().Add(testutil.Scale(10 * time.Second))
		for (p.IdleConns() > 0 || srv.l.connCount() > 0) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n, s := p.IdleConns(), srv.l.connCount(); n != 0 || s != 0 {
			t.Fatalf("round %d: after the idle timeout the pool keeps %d connections and the server %d, want 0 and 0", round, n, s)
		}
	}
}

// TestReqClientGivesItsConnectionToAPool checks that a ReqClient with a
// Pool leaves the connection that got its reply in the pool, where the
// next requests, the pool's and the client's, reuse it (the server sees
// one peer address), with and without KeepWaiting, and that a failed
// exchange closes the connection it used.
func TestReqClientGivesItsConnectionToAPool(t *testing.T) {
	var pc peerCount
	srv := listenReq(t, "127.0.0.1:0", pc.handler(func(ctx context.Context, req []byte) ([]byte, bool) {
		if string(req) == "noreply" {
			return nil, false
		}
		return echo(ctx, req)
	}), ReqOptions{})
	ctx := context.Background()
	for _, keep := range []bool{false, true} {
		pc.reset()
		p := &ReqPool{Addr: srv.Addr().String(), MaxIdle: 2, Logger: testLogger(t)}
		c := ReqClient{Addr: srv.Addr().String(), Tries: 2, Timeout: testutil.Scale(5 * time.Second), KeepWaiting: keep, Pool: p, Logger: testLogger(t)}
		if got, err := c.Send(ctx, []byte("auth")); err != nil || string(got) != "re:auth" {
			t.Fatalf("keep waiting %v: %q, %v", keep, got, err)
		}
		if n := p.IdleConns(); n != 1 {
			t.Fatalf("keep waiting %v: the pool holds %d connections after the client's request, want 1", keep, n)
		}
		if got, err := p.Send(ctx, []byte("ret"), 1, testutil.Scale(5*time.Second)); err != nil || string(got) != "re:ret" {
			t.Fatalf("keep waiting %v: pooled request: %q, %v", keep, got, err)
		}
		// The client takes the pooled connection too.
		if got, err := c.Send(ctx, []byte("again")); err != nil || string(got) != "re:again" {
			t.Fatalf("keep waiting %v: second client request: %q, %v", keep, got, err)
		}
		if n := p.IdleConns(); n != 1 {
			t.Errorf("keep waiting %v: the pool holds %d connections, want the one both used", keep, n)
		}
		if peers := pc.seen(); len(peers) != 1 {
			t.Errorf("keep waiting %v: the server saw peers %v, want one connection for the three requests", keep, peers)
		}
		short := ReqClient{Addr: srv.Addr().String(), Tries: 1, Timeout: testutil.Scale(200 * time.Millisecond), Pool: p, Logger: testLogger(t)}
		if _, err := short.Send(ctx, []byte("noreply")); !errors.Is(err, ErrTimeout) {
			t.Fatalf("keep waiting %v: a request without reply: %v, want a time-out", keep, err)
		}
		if n := p.IdleConns(); n != 0 {
			t.Errorf("keep waiting %v: the pool holds %d connections after a request timed out on its one, want 0 (closed, not kept)", keep, n)
		}
		p.Close()
	}
}

// TestRequestSourceAddress checks that ReqClient and ReqPool connect from
// their Source address (Salt's source_address), as the server sees it,
// and that a Source that is not an IP address fails without a request.
func TestRequestSourceAddress(t *testing.T) {
	seen := make(chan string, 4)
	h := func(ctx context.Context, req []byte) ([]byte, bool) {
		if a, ok := PeerAddr(ctx); ok {
			if ta, ok := a.(*net.TCPAddr); ok {
				seen <- ta.IP.String()
			}
		}
		return echo(ctx, req)
	}
	srv := listenReq(t, "127.0.0.1:0", h, ReqOptions{})
	ctx := context.Background()
	c := ReqClient{Addr: srv.Addr().String(), Tries: 1, Timeout: testutil.Scale(5 * time.Second), Source: "127.0.0.7", Logger: testLogger(t)}
	if _, err := c.Send(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if ip := <-seen; ip != "127.0.0.7" {
		t.Errorf("ReqClient came from %s, want 127.0.0.7", ip)
	}
	p := &ReqPool{Addr: srv.Addr().String(), Source: "127.0.0.8", Logger: testLogger(t)}
	defer p.Close()
	if _, err := p.Send(ctx, []byte("b"), 1, testutil.Scale(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if ip := <-seen; ip != "127.0.0.8" {
		t.Errorf("ReqPool came from %s, want 127.0.0.8", ip)
	}
	bad := ReqClient{Addr: srv.Addr().String(), Tries: 1, Timeout: testutil.Scale(5 * time.Second), Source: "not-an-ip", Logger: testLogger(t)}
	if _, err := bad.Send(ctx, []byte("c")); !errors.Is(err, ErrInvalid) {
		t.Errorf("a source that is not an IP address: %v, want ErrInvalid", err)
	}
	select {
	case ip := <-seen:
		t.Errorf("the bad source's request reached the server from %s", ip)
	default:
	}
}

// peerCount counts the requests a server handler got from each peer
// address (one address is one connection).
type peerCount struct {
	mu    sync.Mutex
	peers map[string]int
}

// handler wraps next, counting each request's peer.
func (pc *peerCount) handler(next func(context.Context, []byte) ([]byte, bool)) func(context.Context, []byte) ([]byte, bool) {
	return func(ctx context.Context, req []byte) ([]byte, bool) {
		if a, ok := PeerAddr(ctx); ok {
			pc.mu.Lock()
			if pc.peers == nil {
				pc.peers = map[string]int{}
			}
			pc.peers[a.String()]++
			pc.mu.Unlock()
		}
		return next(ctx, req)
	}
}

// seen returns a copy of the counts.
func (pc *peerCount) seen() map[string]int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	out := make(map[string]int, len(pc.peers))
	for k, v := range pc.peers {
		out[k] = v
	}
	return out
}

// reset forgets the counts.
func (pc *peerCount) reset() {
	pc.mu.Lock()
	clear(pc.peers)
	pc.mu.Unlock()
}

// TestSendAwaitEveryReply runs many back-to-back exchanges with an
// echoing server from pools at once: a request's reply can come before
// its sender waits for it (the server is fast, the client preempted), and
// sendAwait must still see it, since it clears the socket's readiness
// before writing; a missed wake-up would end an exchange at its deadline.
func TestSendAwaitEveryReply(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{})
	const pools, each = 16, 200
	errs := make(chan error, pools)
	for i := range pools {
		p := &ReqPool{Addr: srv.Addr().String()}
		t.Cleanup(func() { p.Close() })
		go func() {
			for j := range each {
				req := []byte(fmt.Sprintf("pool %d request %d", i, j))
				rep, err := p.Send(context.Background(), req, 1, testutil.Scale(20*time.Second))
				if err != nil {
					errs <- fmt.Errorf("pool %d request %d: %w", i, j, err)
					return
				}
				if !bytes.Equal(rep, append([]byte("re:"), req...)) {
					errs <- fmt.Errorf("pool %d request %d: reply %q", i, j, rep)
					return
				}
			}
			errs <- nil
		}()
	}
	for range pools {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

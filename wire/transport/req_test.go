package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
)

func listenReq(t testing.TB, addr string, h Handler, opts ReqOptions) *ReqServer {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	s, err := ListenReq(context.Background(), addr, h, opts)
	if err != nil {
		t.Fatalf("ListenReq: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func echo(_ context.Context, req []byte) ([]byte, bool) {
	return append([]byte("re:"), req...), true
}

func TestReqServerHandlerResults(t *testing.T) {
	var peers sync.Map
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		if a, ok := PeerAddr(ctx); ok {
			peers.Store(a.String(), true)
		}
		switch string(req) {
		case "noreply":
			return nil, false
		case "panic":
			panic("handler bug")
		case "empty":
			return []byte{}, true
		}
		return echo(ctx, req)
	}, ReqOptions{})
	addr := srv.Addr().String()
	ctx := context.Background()
	tests := []struct {
		req     string
		want    string
		wantErr error
	}{
		{req: "hello", want: "re:hello"},
		{req: "", want: "re:"},
		{req: "empty", want: ""},
		{req: "noreply", wantErr: ErrTimeout},
		{req: "panic", wantErr: ErrTimeout},
		{req: "after panic", want: "re:after panic"},
	}
	for _, tt := range tests {
		got, err := Request(ctx, addr, []byte(tt.req), 300*time.Millisecond)
		if !errors.Is(err, tt.wantErr) || string(got) != tt.want {
			t.Errorf("Request(%q) = %q, %v; want %q, %v", tt.req, got, err, tt.want, tt.wantErr)
		}
	}
	n := 0
	peers.Range(func(any, any) bool { n++; return true })
	if n != len(tests) {
		t.Errorf("handler saw %d distinct peer addresses, want %d (one connection per request)", n, len(tests))
	}
}

func TestReqServerConcurrentClients(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond) // shuffle completion order
		return echo(ctx, req)
	}, ReqOptions{Workers: 8})
	addr := srv.Addr().String()
	const clients = 200
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := fmt.Sprintf("client-%d", i)
			got, err := Request(context.Background(), addr, []byte(req), 20*time.Second)
			if err != nil {
				errs <- fmt.Errorf("%s: %w", req, err)
				return
			}
			if string(got) != "re:"+req {
				errs <- fmt.Errorf("%s got %q", req, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if d := srv.Dropped(); d != 0 {
		t.Errorf("Dropped() = %d", d)
	}
}

func TestReqServerDealerEnvelopes(t *testing.T) {
	srv := listenReq(t, "127.0.0.1:0", echo, ReqOptions{})
	c := rawDial(t, srv.Addr().String())
	c.handshake(t, "DEALER")
	send := func(frames ...string) {
		var b []byte
		for i, f := range frames {
			flags := byte(0)
			if i < len(frames)-1 {
				flags = flagMore
			}
			b = append(b, zFrame(flags, []byte(f))...)
		}
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	send("no delimiter")                  // ignored
	send("", "a", "b")                    // two body frames: ignored
	send("hop1", "hop2", "", "pipelined") // envelope echoed
	for i := range 5 {
		send("", fmt.Sprint(i))
	}
	want := map[string]bool{"hop1|hop2||re:pipelined": true}
	for i := range 5 {
		want["|re:"+fmt.Sprint(i)] = true
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for range want {
		m, err := c.readMsg()
		if err != nil {
			t.Fatal(err)
		}
		key := ""
		for i, f := range m {
			if i > 0 {
				key += "|"
			}
			key += string(f)
		}
		if !want[key] {
			t.Errorf("unexpected reply %q", key)
		}
		delete(want, key)
	}
	if n := srv.Malformed(); n != 2 {
		t.Errorf("Malformed() = %d, want 2", n)
	}
}

func TestRequestErrors(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		<-release
		return nil, false
	}, ReqOptions{})
	nobody := freeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := Request(ctx, slow.Addr().String(), []byte("x"), 10*time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
	if _, err := Request(context.Background(), slow.Addr().String(), []byte("x"), 100*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Errorf("slow server: %v, want ErrTimeout", err)
	}
	if _, err := Request(context.Background(), nobody, []byte("x"), 200*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Errorf("no server: %v, want ErrTimeout", err)
	}
	if _, err := Request(context.Background(), "not an address", []byte("x"), time.Second); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad address: %v, want ErrInvalid", err)
	}
}

func TestReqClientRetries(t *testing.T) {
	t.Run("server starts late", func(t *testing.T) {
		addr := freeAddr(t)
		time.AfterFunc(300*time.Millisecond, func() { listenReq(t, addr, echo, ReqOptions{}) })
		c := &ReqClient{Addr: addr, Tries: 1, Timeout: 5 * time.Second, Logger: testLogger(t)}
		if got, err := c.Send(context.Background(), []byte("late")); err != nil || string(got) != "re:late" {
			t.Fatalf("Send = %q, %v", got, err)
		}
	})
	t.Run("retries until a reply", func(t *testing.T) {
		var calls atomic.Int32
		srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
			if calls.Add(1) < 3 {
				return nil, false
			}
			return echo(ctx, req)
		}, ReqOptions{})
		c := &ReqClient{Addr: srv.Addr().String(), Tries: 3, Timeout: 200 * time.Millisecond, Logger: testLogger(t)}
		if got, err := c.Send(context.Background(), []byte("x")); err != nil || string(got) != "re:x" {
			t.Fatalf("Send = %q, %v", got, err)
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("handler called %d times, want 3", n)
		}
		calls.Store(-10)
		if _, err := c.Send(context.Background(), []byte("x")); !errors.Is(err, ErrTimeout) {
			t.Errorf("all tries lost: %v, want ErrTimeout", err)
		}
	})
}

func TestReqServerClose(t *testing.T) {
	entered := make(chan struct{}, 1)
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-ctx.Done() // Close cancels handlers
		return nil, false
	}, ReqOptions{})
	addr := srv.Addr().String()
	done := make(chan error, 1)
	go func() {
		_, err := Request(context.Background(), addr, []byte("x"), 5*time.Second)
		done <- err
	}()
	select {
	case <-entered: // the request is in the handler when the server closes
	case <-time.After(testutil.Scale(5 * time.Second)):
		t.Fatal("the request never reached the handler")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("request succeeded against a closed server")
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("server still accepting after Close")
	}
}

// TestReqQueueFullBackPressure: with every worker busy and the queue full,
// further requests wait (their connections are not read) instead of being
// dropped, and all of them are answered once the workers catch up. Before,
// the overflow was dropped ("request queue full, dropping requests") and
// those peers timed out: lost returns under a restart storm.
func TestReqQueueFullBackPressure(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int64
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		started.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return echo(ctx, req)
	}, ReqOptions{Workers: 2, QueueSize: 2})
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("ret-%d", i)
			got, err := Request(context.Background(), srv.Addr().String(), []byte(want), 30*time.Second)
			if err != nil {
				errs <- fmt.Errorf("%s: %w", want, err)
				return
			}
			if string(got) != "re:"+want {
				errs <- fmt.Errorf("%s: reply %q", want, got)
			}
		}()
	}
	waitFor(t, func() bool { return srv.Waited() > 0 }) // workers busy, queue full
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := started.Load(); got != n {
		t.Errorf("handler ran %d times, want %d", got, n)
	}
}

// TestReqClientKeepWaiting: a server answers a request only after three
// of the client's per-try timeouts (a master busy with a crowd of
// re-authenticating minions). With KeepWaiting the late reply is the
// answer and the request went out once, on one connection; without it
// every try was cut off at its timeout (each a new connection and a new
// copy of the request) and the request failed.
func TestReqClientKeepWaiting(t *testing.T) {
	timeout := testutil.Scale(300 * time.Millisecond)
	for _, tc := range []struct {
		keep      bool
		want      string // reply, or "" for ErrTimeout
		wantCalls int32
	}{
		{true, "re:late", 1},
		{false, "", 4},
	} {
		t.Run(fmt.Sprintf("keep_waiting=%v", tc.keep), func(t *testing.T) {
			var calls atomic.Int32
			srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
				calls.Add(1)
				select {
				case <-time.After(3 * timeout):
					return []byte("re:late"), true
				case <-ctx.Done():
					return nil, false
				}
			}, ReqOptions{Workers: 8})
			c := &ReqClient{Addr: srv.Addr().String(), Tries: 6, Timeout: timeout, Logger: testLogger(t), KeepWaiting: tc.keep}
			if !tc.keep {
				c.Tries = 4
			}
			got, err := c.Send(context.Background(), []byte("x"))
			switch {
			case tc.want != "" && (err != nil || string(got) != tc.want):
				t.Fatalf("Send = %q, %v; want %q", got, err, tc.want)
			case tc.want == "" && !errors.Is(err, ErrTimeout):
				t.Fatalf("Send = %q, %v; want ErrTimeout", got, err)
			}
			deadline := time.Now().Add(testutil.Scale(5 * time.Second))
			for calls.Load() < tc.wantCalls && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := calls.Load(); n != tc.wantCalls {
				t.Errorf("the server got the request %d times, want %d", n, tc.wantCalls)
			}
		})
	}
}

// TestReqClientKeepWaitingReconnects: with KeepWaiting a connection
// closed before the reply (a restarted master) is replaced by a new one
// carrying the same request, which is answered. The first connection
// through the front listener is closed after its first bytes; the next
// ones are relayed to the server.
func TestReqClientKeepWaitingReconnects(t *testing.T) {
	var calls atomic.Int32
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		calls.Add(1)
		return append([]byte("re:"), req...), true
	}, ReqOptions{Workers: 8})
	var accepted atomic.Int32
	front := testutil.ServeTCP(t, func(c net.Conn) {
		if accepted.Add(1) == 1 {
			_, _ = c.Read(make([]byte, 16))
			return
		}
		back, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			return
		}
		defer back.Close()
		go func() { _, _ = io.Copy(back, c); _ = back.Close() }()
		_, _ = io.Copy(c, back)
	})
	c := &ReqClient{Addr: front.Addr().String(), Tries: 3, Timeout: testutil.Scale(10 * time.Second), Logger: testLogger(t), KeepWaiting: true}
	got, err := c.Send(context.Background(), []byte("x"))
	if err != nil || string(got) != "re:x" {
		t.Fatalf("Send = %q, %v; want %q", got, err, "re:x")
	}
	if n, a := calls.Load(), accepted.Load(); n != 1 || a != 2 {
		t.Errorf("the server answered %d requests over %d connections, want 1 over 2", n, a)
	}
}

// TestReqSlowLane: slow requests (Slow reports them) fill their own
// workers and queue, blocked; an ordinary request is still answered at
// once, and the slow ones complete once released.
func TestReqSlowLane(t *testing.T) {
	release := make(chan struct{})
	var slowStarted atomic.Int64
	isSlow := func(b []byte) bool { return strings.HasPrefix(string(b), "slow") }
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		if isSlow(req) {
			slowStarted.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return echo(ctx, req)
	}, ReqOptions{Workers: 4, QueueSize: 4, Slow: isSlow, SlowWorkers: 2})
	const n = 12 // more than the slow workers and queue hold
	var wg sync.WaitGroup
	errs := make(chan error, n+1)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("slow-%d", i)
			got, err := Request(context.Background(), srv.Addr().String(), []byte(want), 60*time.Second)
			if err == nil && string(got) != "re:"+want {
				err = fmt.Errorf("reply %q", got)
			}
			if err != nil {
				errs <- fmt.Errorf("%s: %w", want, err)
			}
		}()
	}
	waitFor(t, func() bool { return slowStarted.Load() == 2 && srv.QueueLen() == 4 }) // slow lane full
	got, err := Request(context.Background(), srv.Addr().String(), []byte("fast"), 10*time.Second)
	if err != nil || string(got) != "re:fast" {
		t.Fatalf("ordinary request behind a full slow lane: %q, %v", got, err)
	}
	if s := slowStarted.Load(); s != 2 {
		t.Errorf("%d slow requests running, want the 2 slow workers' worth", s)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := slowStarted.Load(); s != n {
		t.Errorf("handler ran %d slow requests, want %d", s, n)
	}
}

// TestReqServerUnixSocket: a request server on "ipc://PATH" answers
// requests over the unix socket with the same bytes as over TCP, its
// socket file has mode 0600 (a stale socket at PATH is replaced), and
// Close removes the file. A path holding a regular file is refused.
func TestReqServerUnixSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LocalReqSocket)
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = stale.Close()
	srv, err := ListenReq(context.Background(), "ipc://"+path, echo, ReqOptions{Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("ListenReq over a stale socket: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket file %s: %v, %v; want a socket of mode 0600", path, fi.Mode(), err)
	}
	for _, c := range []interface {
		Send(context.Context, []byte) ([]byte, error)
	}{
		&ReqClient{Addr: "ipc://" + path, Tries: 1, Timeout: testutil.Scale(10 * time.Second), Logger: testLogger(t)},
		&ReqClient{Addr: "ipc://" + path, Tries: 3, Timeout: testutil.Scale(10 * time.Second), Logger: testLogger(t), KeepWaiting: true},
	} {
		got, err := c.Send(context.Background(), []byte("local"))
		if err != nil || string(got) != "re:local" {
			t.Fatalf("Send over the unix socket = %q, %v", got, err)
		}
	}
	p := &ReqPool{Addr: "ipc://" + path, Logger: testLogger(t)}
	if got, err := p.Send(context.Background(), []byte("pooled"), 1, testutil.Scale(10*time.Second)); err != nil || string(got) != "re:pooled" {
		t.Fatalf("ReqPool over the unix socket = %q, %v", got, err)
	}
	p.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close the socket file is still there: %v", err)
	}
	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := ListenReq(context.Background(), "ipc://"+regular, echo, ReqOptions{Logger: testLogger(t)}); err == nil {
		s.Close()
		t.Fatal("ListenReq replaced a regular file with its socket")
	}
}

// TestReqLater: a Handler that answers through Later frees its worker at
// once (with one worker, other requests are answered while the late one
// waits), its reply reaches the peer when answer is called, the peer
// address is still known, a panic after Later frees the request, and
// Later outside a request's context says no.
func TestReqLater(t *testing.T) {
	if _, ok := Later(context.Background()); ok {
		t.Fatal("Later outside a request's context said yes")
	}
	release := make(chan struct{})
	lateTaken := make(chan struct{}, 2)
	srv := listenReq(t, "127.0.0.1:0", func(ctx context.Context, req []byte) ([]byte, bool) {
		switch string(req) {
		case "late", "late-noreply":
			answer, ok := Later(ctx)
			if !ok {
				return []byte("Later refused"), true
			}
			if _, again := Later(ctx); again {
				return []byte("Later twice"), true
			}
			peer, _ := PeerAddr(ctx)
			lateTaken <- struct{}{}
			go func() {
				<-release
				answer([]byte("re:"+string(req)+" from "+peer.String()), string(req) == "late")
			}()
			return []byte("ignored"), true
		case "panic-after-later":
			if _, ok := Later(ctx); ok {
				panic("handler bug after Later")
			}
		}
		return echo(ctx, req)
	}, ReqOptions{Workers: 1, MaxInFlightPerConn: 1})
	addr := srv.Addr().String()
	ctx := context.Background()

	type result struct {
		b   []byte
		err error
	}
	late := make(chan result, 1)
	// One kept connection: its next request needs the late one's place.
	c := &ReqPool{Addr: addr, MaxIdle: 1}
	defer c.Close()
	go func() {
		b, err := c.Send(ctx, []byte("late"), 1, testutil.Scale(30*time.Second))
		late <- result{b, err}
	}()
	// The one worker is free while "late" waits: other requests, a panic
	// after Later among them, are answered (or time out) meanwhile.
	select {
	case <-lateTaken:
	case r := <-late:
		t.Fatalf("the late request failed: %q, %v", r.b, r.err)
	}
	for _, tt := range []struct {
		req, want string
		wantErr   error
	}{
		{req: "one", want: "re:one"},
		{req: "panic-after-later", wantErr: ErrTimeout},
		{req: "two", want: "re:two"},
	} {
		got, err := Request(ctx, addr, []byte(tt.req), testutil.Scale(2*time.Second))
		if !errors.Is(err, tt.wantErr) || string(got) != tt.want {
			t.Errorf("Request(%q) while a reply is late = %q, %v; want %q, %v", tt.req, got, err, tt.want, tt.wantErr)
		}
	}
	select {
	case r := <-late:
		t.Fatalf("the late request was answered before answer was called: %q, %v", r.b, r.err)
	default:
	}
	close(release)
	r := <-late
	if r.err != nil || !strings.HasPrefix(string(r.b), "re:late from 127.0.0.1:") {
		t.Fatalf("late reply = %q, %v; want re:late from the peer's address", r.b, r.err)
	}
	// The connection's place was freed: it carries the next request, and
	// a Later answered with ok=false sends nothing.
	if got, err := c.Send(ctx, []byte("three"), 1, testutil.Scale(5*time.Second)); err != nil || string(got) != "re:three" {
		t.Fatalf("after the late reply: %q, %v", got, err)
	}
	if n := c.IdleConns(); n != 1 {
		t.Errorf("the pool holds %d idle connections, want its one reused connection", n)
	}
	if got, err := Request(ctx, addr, []byte("late-noreply"), 300*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a Later answered with ok=false: %q, %v; want a time-out", got, err)
	}
}

package event

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/wire/payload"
)

// sockDir returns a short temporary directory (sun_path is limited to 108
// bytes, which t.TempDir can exceed).
func sockDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "ev")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type ipcEnv struct {
	bus  *Bus
	srv  *IPCServer
	dir  string
	pub  string
	pull string
}

func startIPC(t *testing.T, opts Options, cfg IPCConfig) *ipcEnv {
	t.Helper()
	dir := sockDir(t)
	e := &ipcEnv{
		bus:  newTestBus(opts),
		dir:  dir,
		pub:  filepath.Join(dir, MasterPubSocket),
		pull: filepath.Join(dir, MasterPullSocket),
	}
	srv, err := ServeIPCConfig(context.Background(), e.bus, e.pub, e.pull, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	t.Cleanup(func() {
		srv.Close()
		e.bus.Close()
	})
	return e
}

// waitFor polls cond until it holds or a generous safety limit passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, cond, what)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestIPCRoundTrip(t *testing.T) {
	e := startIPC(t, Options{}, IPCConfig{})
	ctx := testCtx(t)

	for _, p := range []string{e.pub, e.pull} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want socket 0600", p, fi.Mode())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(e.dir, ".ev*")); len(left) != 0 {
		t.Errorf("temporary bind directories left: %v", left)
	}

	r1, err := DialPub(ctx, e.pub)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := DialPub(ctx, e.pub)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	waitFor(t, "two readers", func() bool { return e.srv.Readers() == 2 })

	sub := e.bus.Subscribe(Prefix("from/"), 100)
	data := payload.NewMap("s", "héllo", "b", []byte{0, 0xff}, "n", int64(-3), "l", []any{int64(1), "x"}, "m", payload.NewMap("k", nil))
	e.bus.Publish(Event{Tag: "to/readers", Data: data})
	if err := FirePull(ctx, e.pull, Event{Tag: "from/pusher", Data: payload.NewMap("x", int64(1))}); err != nil {
		t.Fatal(err)
	}

	// The pushed event reaches bus subscribers with a stamp...
	ev := recv(t, sub)
	if ev.Tag != "from/pusher" || ev.Data.Str("x") != "1" || ev.Data.Str("_stamp") == "" {
		t.Errorf("pushed event on bus: %q %s", ev.Tag, mapJSON(ev.Data))
	}
	// ...and every pub reader sees both events, in order.
	want, _ := payload.MarshalBin(payload.NewMap("s", "héllo", "b", []byte{0, 0xff}, "n", int64(-3), "l", []any{int64(1), "x"}, "m", payload.NewMap("k", nil), "_stamp", Stamp(fixedNow)))
	for i, r := range []*IPCReader{r1, r2} {
		ev, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		got, _ := payload.MarshalBin(ev.Data)
		if ev.Tag != "to/readers" || string(got) != string(want) {
			t.Errorf("reader %d: %q %s", i, ev.Tag, mapJSON(ev.Data))
		}
		ev, err = r.Next(ctx)
		if err != nil || ev.Tag != "from/pusher" {
			t.Errorf("reader %d second event: %q %v", i, ev.Tag, err)
		}
	}

	// A persistent pusher can send many events on one connection.
	p, err := DialPush(ctx, e.pull)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if err := p.Fire(ctx, Event{Tag: fmt.Sprintf("from/p/%d", i), Data: payload.NewMap("i", i)}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	if err := p.Fire(ctx, Event{Tag: "from/closed"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Fire after Close: %v", err)
	}
	for i := 0; i < 50; i++ {
		if ev := recv(t, sub); ev.Tag != fmt.Sprintf("from/p/%d", i) {
			t.Fatalf("event %d: %q", i, ev.Tag)
		}
	}

	// Readers leaving are noticed.
	r1.Close()
	waitFor(t, "reader removal", func() bool { return e.srv.Readers() == 1 })

	// Close removes the socket files.
	e.srv.Close()
	for _, p := range []string{e.pub, e.pull} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still exists after Close: %v", p, err)
		}
	}
	// r2 still has the 50 pushed events buffered, then sees the hang-up.
	var err2 error
	for i := 0; i < 51 && err2 == nil; i++ {
		_, err2 = r2.Next(ctx)
	}
	if err2 == nil {
		t.Error("reader still reading after server Close")
	}
}

func TestIPCGarbageOnPull(t *testing.T) {
	e := startIPC(t, Options{}, IPCConfig{MaxFrameSize: 4096})
	ctx := testCtx(t)
	sub := e.bus.Subscribe(nil, 10)

	good, err := DialPush(ctx, e.pull)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()

	oversize, _ := EncodeFrame(Event{Tag: "big", Data: payload.NewMap("s", strings.Repeat("x", 5000))})
	badContent, _ := payload.MarshalBin(payload.NewMap("head", payload.NewMap(), "body", []byte("no separator")))
	for name, junk := range map[string][]byte{
		"text":        []byte("GET / HTTP/1.0\r\n\r\n"),
		"reserved":    {0x82, 0xc1},
		"oversize":    oversize,
		"bad content": badContent,
		"half frame":  oversize[:100],
	} {
		c, err := net.Dial("unix", e.pull)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(junk); err != nil {
			t.Fatal(err)
		}
		if name == "half frame" {
			c.(*net.UnixConn).CloseWrite()
		}
		// The server hangs up on the bad connection.
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("%s: read after garbage = %d, %v; want EOF", name, n, err)
		}
		c.Close()
	}
	// The other connection and the bus are unaffected.
	if err := good.Fire(ctx, Event{Tag: "still/ok"}); err != nil {
		t.Fatal(err)
	}
	if ev := recv(t, sub); ev.Tag != "still/ok" {
		t.Errorf("got %q", ev.Tag)
	}
}

func TestIPCSlowReader(t *testing.T) {
	for name, cfg := range map[string]IPCConfig{
		"frame limit": {ReaderQueue: 4},
		"byte limit":  {ReaderQueueBytes: 256 << 10},
	} {
		t.Run(name, func(t *testing.T) { testIPCSlowReader(t, cfg) })
	}
}

func testIPCSlowReader(t *testing.T, cfg IPCConfig) {
	e := startIPC(t, Options{}, cfg)
	ctx := testCtx(t)
	stuck, err := DialPub(ctx, e.pub) // never reads
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	fast, err := DialPub(ctx, e.pub)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	waitFor(t, "two readers", func() bool { return e.srv.Readers() == 2 })

	// 100 × 64 KiB is far more than the stuck reader's socket buffers and
	// queue can hold. Publishing in lock step with the fast reader makes
	// its result deterministic.
	big := strings.Repeat("z", 64<<10)
	const n = 100
	for i := 0; i < n; i++ {
		e.bus.Publish(Event{Tag: fmt.Sprintf("slow/%d", i), Data: payload.NewMap("pad", big)})
		ev, err := fast.Next(ctx)
		if err != nil {
			t.Fatalf("fast reader, event %d: %v", i, err)
		}
		if ev.Tag != fmt.Sprintf("slow/%d", i) || len(ev.Data.Str("pad")) != len(big) {
			t.Fatalf("fast reader, event %d: %q", i, ev.Tag)
		}
	}
	if e.srv.Dropped() == 0 {
		t.Error("no frames dropped for the stuck reader")
	}
	if e.srv.Readers() != 2 {
		t.Errorf("readers = %d, want 2 (a slow reader loses events, not its connection)", e.srv.Readers())
	}
	// The stuck reader still gets a consistent stream of whole frames.
	ev, err := stuck.Next(ctx)
	if err != nil || ev.Tag != "slow/0" {
		t.Errorf("stuck reader: %q %v", ev.Tag, err)
	}
}

func TestIPCReaderNextContext(t *testing.T) {
	e := startIPC(t, Options{}, IPCConfig{})
	r, err := DialPub(testCtx(t), e.pub)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	waitFor(t, "reader", func() bool { return e.srv.Readers() == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with expiring ctx: %v", err)
	}
	// The reader is still usable.
	e.bus.Publish(Event{Tag: "after/timeout"})
	if ev, err := r.Next(testCtx(t)); err != nil || ev.Tag != "after/timeout" {
		t.Errorf("after timeout: %q %v", ev.Tag, err)
	}
}

func TestIPCLifecycle(t *testing.T) {
	t.Run("not a socket", func(t *testing.T) {
		dir := sockDir(t)
		pub := filepath.Join(dir, MasterPubSocket)
		os.WriteFile(pub, []byte("x"), 0o600)
		b := newTestBus(Options{})
		defer b.Close()
		if _, err := ServeIPC(context.Background(), b, pub, filepath.Join(dir, MasterPullSocket)); !errors.Is(err, ErrNotSocket) {
			t.Errorf("err = %v, want ErrNotSocket", err)
		}
	})
	t.Run("stale socket replaced", func(t *testing.T) {
		dir := sockDir(t)
		pub := filepath.Join(dir, MasterPubSocket)
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: pub, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close()
		b := newTestBus(Options{})
		defer b.Close()
		srv, err := ServeIPC(context.Background(), b, pub, filepath.Join(dir, MasterPullSocket))
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		r, err := DialPub(testCtx(t), pub)
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	})
	t.Run("context cancel", func(t *testing.T) {
		dir := sockDir(t)
		b := newTestBus(Options{})
		defer b.Close()
		ctx, cancel := context.WithCancel(context.Background())
		srv, err := ServeIPC(ctx, b, filepath.Join(dir, "p"), filepath.Join(dir, "q"))
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		<-srv.Done()
		srv.Close()
		if _, err := os.Lstat(filepath.Join(dir, "p")); !os.IsNotExist(err) {
			t.Errorf("socket left after cancel: %v", err)
		}
		if b.Subscribers() != 0 {
			t.Errorf("server still subscribed: %d", b.Subscribers())
		}
	})
	t.Run("bus close stops server", func(t *testing.T) {
		dir := sockDir(t)
		b := newTestBus(Options{})
		srv, err := ServeIPC(context.Background(), b, filepath.Join(dir, "p"), filepath.Join(dir, "q"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := DialPub(testCtx(t), filepath.Join(dir, "p"))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b.Close()
		<-srv.Done()
		srv.Close()
		if _, err := r.Next(testCtx(t)); err == nil {
			t.Error("reader not disconnected")
		}
		if _, err := ServeIPC(context.Background(), b, filepath.Join(dir, "p"), filepath.Join(dir, "q")); !errors.Is(err, ErrClosed) {
			t.Errorf("ServeIPC on closed bus: %v", err)
		}
	})
	t.Run("connection limit", func(t *testing.T) {
		e := startIPC(t, Options{}, IPCConfig{MaxConns: 1})
		r1, err := DialPub(testCtx(t), e.pub)
		if err != nil {
			t.Fatal(err)
		}
		defer r1.Close()
		waitFor(t, "reader", func() bool { return e.srv.Readers() == 1 })
		r2, err := DialPub(testCtx(t), e.pub)
		if err != nil {
			t.Fatal(err)
		}
		defer r2.Close()
		if _, err := r2.Next(testCtx(t)); err == nil {
			t.Error("connection over the limit was served")
		}
	})
}

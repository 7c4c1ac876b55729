package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/event"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/masterd"
	"github.com/gsalt/gsalt/minion"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

func testLogger() *slog.Logger {
	if os.Getenv("GSALT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// shortDir is a temporary directory with a short path (unix socket paths
// are limited to 108 bytes).
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "gp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// probe is a proxytype for tests: its Init fails while failInits is
// positive, its Alive reports false once when dropOnce is set, and its
// execution function probe.hold occupies the device until released.
type probe struct {
	st  *probeState
	cfg *proxymod.Config
}

type probeState struct {
	failInits atomic.Int64
	inits     atomic.Int64
	shutdowns atomic.Int64
	dropOnce  atomic.Bool
}

func (p *probe) Init(_ context.Context, cfg *proxymod.Config) error {
	p.st.inits.Add(1)
	if p.st.failInits.Add(-1) >= 0 {
		return errors.New("probe: device unreachable")
	}
	p.cfg = cfg
	return nil
}
func (p *probe) Ping(context.Context) (bool, error) { return true, nil }
func (p *probe) Grains(context.Context) (*payload.Map, error) {
	return payload.NewMap("probe_host", p.cfg.Proxy.Str("host")), nil
}
func (p *probe) Shutdown(context.Context) error { p.st.shutdowns.Add(1); return nil }
func (p *probe) Alive(context.Context) (bool, error) {
	return !p.st.dropOnce.CompareAndSwap(true, false), nil
}

func probeType(st *probeState) proxymod.Type {
	return proxymod.Type{
		Name: "probe",
		New:  func() proxymod.Module { return &probe{st: st} },
		Functions: func() []modules.Function {
			return []modules.Function{{Name: "probe.host", Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return proxymod.With(ctx, c, func(_ context.Context, p *probe) (string, error) { return p.cfg.Proxy.Str("host"), nil })
			}}}
		},
	}
}

// testMaster starts an in-process gsalt-master with auto_accept and the
// given pillar function.
func testMaster(t testing.TB, dir string, pillar master.PillarFunc) *masterd.Daemon {
	t.Helper()
	etc := filepath.Join(dir, "metc")
	writeFile(t, filepath.Join(etc, "master"), fmt.Sprintf("interface: 127.0.0.1\npublish_port: 0\nret_port: 0\nroot_dir: %[1]s\n"+
		"pki_dir: %[1]s/mpki\ncachedir: %[1]s/mcache\nsock_dir: %[1]s/ms\nlog_file: %[1]s/master.log\nuser: root\nauto_accept: True\n", dir))
	cfg, err := config.LoadMaster(etc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := masterd.Start(context.Background(), cfg, masterd.Options{Logger: testLogger(), Pillar: pillar})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// proxyConf writes DIR/etc/proxy pointing at the daemon and returns the
// configuration directory.
func proxyConf(t testing.TB, dir string, d *masterd.Daemon, extra string) string {
	t.Helper()
	etc := filepath.Join(dir, "etc")
	port := strings.TrimPrefix(d.ReqAddr().String(), "127.0.0.1:")
	writeFile(t, filepath.Join(etc, "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %[2]s\nroot_dir: %[1]s/p\n"+
		"pki_dir: %[1]s/p/pki\ncachedir: %[1]s/p/cache\nsock_dir: %[1]s/p/sock\nlog_file: %[1]s/p/log\n"+
		"enable_fqdns_grains: False\nacceptance_wait_time: 0.2\n", dir, port)+extra)
	return etc
}

func runJob(t testing.TB, d *masterd.Daemon, tgt any, tgtType, fun string, arg ...any) map[string]any {
	t.Helper()
	if arg == nil {
		arg = []any{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scale(120*time.Second))
	defer cancel()
	res, err := d.Master().RunJob(ctx, master.PublishRequest{Tgt: tgt, TgtType: tgtType, Fun: fun, Arg: arg}, testutil.Scale(60*time.Second), testutil.Scale(20*time.Second))
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	out := map[string]any{}
	for id, ev := range res.Returns {
		v, _ := ev.Get("return")
		out[id] = v
	}
	return out
}

// runFleet starts a fleet until the test ends: the cleanup cancels ctx
// and waits for Run to return.
func runFleet(t *testing.T, ctx context.Context, cancel context.CancelFunc, o proxy.Options) *proxy.Fleet {
	t.Helper()
	f, err := proxy.New(o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the fleet did not stop")
		}
	})
	return f
}

func waitReady(t *testing.T, dev *proxy.Device) {
	t.Helper()
	select {
	case <-dev.Ready():
	case <-time.After(testutil.Scale(90 * time.Second)):
		t.Fatalf("%s never became ready (err %v)", dev.ID(), dev.Err())
	}
}

// waitServing waits until dev is ready and the master has applied its
// publish subscription (its start event, package started): a job
// published then reaches the device.
func waitServing(t *testing.T, st *started.Watcher, dev *proxy.Device) {
	t.Helper()
	waitReady(t, dev)
	st.Wait(t, dev.ID())
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 60*time.Second, cond, what)
}

func waitBus(t *testing.T, sub *event.Subscription, tag string) event.Event {
	t.Helper()
	deadline := time.After(testutil.Scale(60 * time.Second))
	for {
		select {
		case ev := <-sub.C():
			if ev.Tag == tag {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event %s", tag)
		}
	}
}

// TestFleetAgainstGsaltMaster serves dummy, deltaproxy and probe devices
// from one Fleet against an in-process gsalt-master.
func TestFleetAgainstGsaltMaster(t *testing.T) {
	dir := shortDir(t)
	var noneReady atomic.Bool
	var nonePillars atomic.Int64
	pillar := func(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
		dummy := payload.NewMap("proxy", payload.NewMap("proxytype", "dummy"), "role", "switch")
		switch {
		case req.ID == "ctl":
			return payload.NewMap("proxy", payload.NewMap("proxytype", "deltaproxy", "ids", []any{"s1", "s2"})), nil
		case req.ID == "bad":
			return payload.NewMap("proxy", payload.NewMap("proxytype", "dummy", "raise_minion_error", true)), nil
		case req.ID == "flaky":
			return payload.NewMap("proxy", payload.NewMap("proxytype", "probe", "host", "10.0.0.7")), nil
		case req.ID == "none":
			nonePillars.Add(1)
			if noneReady.Load() {
				return dummy, nil
			}
			return &payload.Map{}, nil
		}
		return dummy, nil
	}
	d := testMaster(t, dir, pillar)
	bus := d.Bus().Subscribe(nil, 4096)
	defer bus.Close()
	boot := started.Watch(t, d.Bus())
	etc := proxyConf(t, dir, d, "")
	writeFile(t, filepath.Join(etc, "proxy.d", "ctl", "meta.conf"), "metaproxy: deltaproxy\n")
	writeFile(t, filepath.Join(etc, "proxy.d", "p2", "grains"), "rack: r7\n")

	st := &probeState{}
	st.failInits.Store(2)
	st.dropOnce.Store(true)
	types := proxymod.Default()
	if err := types.Register(probeType(st)); err != nil {
		t.Fatal(err)
	}
	ids := []string{"p1", "p2", "p3", "bad", "none", "ctl", "flaky"}
	f, err := proxy.New(proxy.Options{
		ConfigDir: etc, IDs: ids, Types: types, Logger: testLogger(),
		MaxConns: 3, QueueDepth: 2,
		RestartMin: 100 * time.Millisecond, RestartMax: 300 * time.Millisecond,
		KeepAliveInterval: 100 * time.Millisecond, RetryMin: 50 * time.Millisecond, RetryMax: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the fleet did not stop")
		}
	})
	waitFor(t, "all devices", func() bool { return len(f.Devices()) == len(ids)+2 })
	for _, id := range []string{"p1", "p2", "p3", "bad", "ctl", "s1", "s2", "flaky"} {
		dev, ok := f.Device(id)
		if !ok {
			t.Fatalf("no device %s", id)
		}
		waitServing(t, boot, dev)
		if _, err := os.Stat(filepath.Join(dir, "p", "pki", id, "minion.pem")); err != nil {
			t.Errorf("%s key pair: %v", id, err)
		}
	}
	if s1, _ := f.Device("s1"); s1.Parent() != "ctl" {
		t.Errorf("s1 parent %q", s1.Parent())
	}
	if ev := waitBus(t, bus, "salt/deltaproxy/start"); ev.Data.Str("id") != "ctl" {
		t.Errorf("deltaproxy start event from %v", ev.Data.Str("id"))
	}

	// test.ping asks each device; the device whose init failed says false.
	want := map[string]any{"p1": true, "p2": true, "p3": true, "bad": false, "ctl": true, "s1": true, "s2": true}
	got := runJob(t, d, []any{"p1", "p2", "p3", "bad", "ctl", "s1", "s2"}, "list", "test.ping")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("test.ping: %v", got)
	}
	if bad, _ := f.Device("bad"); bad.Initialized() {
		t.Error("bad initialized")
	}

	// Grains: proxy core grains, the static grains file, the module's.
	g, _ := runJob(t, d, "p2", "", "grains.items")["p2"].(*payload.Map)
	for k, v := range map[string]any{"id": "p2", "kernel": "proxy", "os": "proxy", "os_family": "proxy", "osfinger": "proxy-proxy",
		"master": "127.0.0.1", "mem_total": int64(0), "dummy_grain_1": "one", "dummy_grain_3": "three", "rack": "r7"} {
		if got, _ := g.Get(k); !reflect.DeepEqual(got, v) {
			t.Errorf("p2 grain %s = %#v, want %#v", k, got, v)
		}
	}
	for _, k := range []string{"ipv4", "fqdn", "host", "pid", "num_cpus"} {
		if g.Has(k) {
			t.Errorf("p2 has grain %s, which a Salt proxy does not report", k)
		}
	}
	if got := runJob(t, d, "role:switch", "pillar", "test.ping"); len(got) != 5 {
		t.Errorf("pillar-targeted test.ping: %v", got)
	}
	if got := runJob(t, d, "dummy_grain_2:two", "grain", "test.ping"); len(got) < 6 {
		t.Errorf("grain-targeted test.ping: %v", got)
	}

	// Dummy device state is per device.
	if got := runJob(t, d, "p1", "", "service.start", "samba"); got["p1"] != "running" {
		t.Errorf("service.start: %v", got)
	}
	st1 := runJob(t, d, []any{"p1", "p3"}, "list", "service.status", "samba")
	if st1["p1"] != true || st1["p3"] != false {
		t.Errorf("service.status per device: %v", st1)
	}
	pk := runJob(t, d, "s1", "", "pkg.list_pkgs")["s1"].(*payload.Map)
	if pk.Str("apache") != "2.4" || pk.Len() != 4 {
		t.Errorf("pkg.list_pkgs on a sub-proxy: %v", pk)
	}
	if _, err := os.Stat(filepath.Join(dir, "p", "cache", "s1", "dummy-proxy-s1.cache")); err != nil {
		t.Errorf("dummy state file: %v", err)
	}

	// A device whose init fails at first is retried; its grains then
	// include the module's, and its functions reach the device.
	fl, _ := f.Device("flaky")
	waitFor(t, "flaky to initialize", fl.Initialized)
	if got := runJob(t, d, "flaky", "", "probe.host"); got["flaky"] != "10.0.0.7" {
		t.Errorf("probe.host: %v", got)
	}
	waitFor(t, "flaky grains", func() bool {
		return fl.Minion().Grains().Str("probe_host") == "10.0.0.7"
	})
	// Alive reported false once: the module was shut down and re-initialised.
	waitFor(t, "keepalive reconnect", func() bool { return st.shutdowns.Load() >= 1 && st.inits.Load() >= 4 })
	if got := runJob(t, d, "p1", "", "probe.host"); got["p1"] != "'probe.host' is not available." {
		t.Errorf("probe.host on a dummy device: %v", got)
	}

	// A device without proxy configuration is retried until it has one.
	waitFor(t, "retries of none", func() bool { return nonePillars.Load() >= 2 })
	none, _ := f.Device("none")
	select {
	case <-none.Ready():
		t.Fatal("none became ready without proxy configuration")
	default:
	}
	noneReady.Store(true)
	waitServing(t, boot, none)
	if got := runJob(t, d, "none", "", "test.ping"); got["none"] != true {
		t.Errorf("none test.ping: %v", got)
	}

	// Per-device serialisation, queue bound and the global limit.
	p1, _ := f.Device("p1")
	var cur, peak atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				err := p1.Do(context.Background(), func(context.Context, proxymod.Module) error {
					if n := cur.Add(1); n > peak.Load() {
						peak.Store(n)
					}
					time.Sleep(time.Millisecond) // hold the session a moment so callers overlap
					cur.Add(-1)
					return nil
				})
				if err != nil && !errors.Is(err, proxymod.ErrBusy) {
					t.Errorf("Do: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if peak.Load() != 1 {
		t.Errorf("commands ran %d at a time on one device", peak.Load())
	}
	hold := func(dev *proxy.Device) (started, release chan struct{}) {
		started, release = make(chan struct{}), make(chan struct{})
		go dev.Do(context.Background(), func(context.Context, proxymod.Module) error {
			close(started)
			<-release
			return nil
		})
		<-started
		return started, release
	}
	_, rel1 := hold(p1)
	// While p1 is busy, other devices answer.
	if got := runJob(t, d, []any{"p2", "p3"}, "list", "test.ping"); !reflect.DeepEqual(got, map[string]any{"p2": true, "p3": true}) {
		t.Errorf("test.ping while p1 is busy: %v", got)
	}
	// Queue depth 2: two commands wait, the third is refused.
	waiting := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			waiting <- p1.Do(context.Background(), func(context.Context, proxymod.Module) error { return nil })
		}()
	}
	waitFor(t, "two waiting commands", func() bool { return p1.Waiting() == 2 })
	if err := p1.Do(context.Background(), func(context.Context, proxymod.Module) error { return nil }); !errors.Is(err, proxymod.ErrBusy) {
		t.Errorf("a third waiting command: %v", err)
	}
	// MaxConns 3: with p1 and p2 held, p3 gets the last slot and s1 waits.
	p2, _ := f.Device("p2")
	p3, _ := f.Device("p3")
	s1, _ := f.Device("s1")
	_, rel2 := hold(p2)
	_, rel3 := hold(p3)
	short, cancelShort := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err = s1.Do(short, func(context.Context, proxymod.Module) error { return nil })
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("s1 beyond the connection limit: %v", err)
	}
	close(rel3)
	if err := s1.Do(context.Background(), func(context.Context, proxymod.Module) error { return nil }); err != nil {
		t.Errorf("s1 after a slot freed: %v", err)
	}
	close(rel2)
	close(rel1)
	for i := 0; i < 2; i++ {
		if err := <-waiting; err != nil {
			t.Errorf("queued command: %v", err)
		}
	}
}

// TestFleetFatal: a device whose key the master rejects stops for good,
// and Run returns once every device stopped.
func TestFleetFatal(t *testing.T) {
	dir := shortDir(t)
	d := testMaster(t, dir, nil)
	etc := proxyConf(t, dir, d, "")
	// r1's key pair exists already and the master has it rejected.
	pkiDir := filepath.Join(dir, "p", "pki", "r1")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := crypt.WriteKeyPair(pkiDir, "minion", 2048); err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(pkiDir, "minion.pub"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "mpki", "minions_rejected", "r1"), string(pub))
	f, err := proxy.New(proxy.Options{ConfigDir: etc, IDs: []string{"r1"}, Logger: testLogger(), RejectedDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = f.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("Run did not return after the rejection")
	}
	if !errors.Is(err, minion.ErrRejected) || !strings.Contains(err.Error(), "r1") {
		t.Errorf("Run: %v", err)
	}
}

func TestOptionsAndIDs(t *testing.T) {
	for _, tc := range []struct {
		ids  []string
		want error
	}{
		{nil, proxy.ErrNoIDs},
		{[]string{"a", "a"}, proxy.ErrBadID},
		{[]string{"a/b"}, proxy.ErrBadID},
		{[]string{".."}, proxy.ErrBadID},
		{[]string{"a\x00"}, proxy.ErrBadID},
		{[]string{""}, proxy.ErrBadID},
		{[]string{"a", "b.c-d_e"}, nil},
	} {
		_, err := proxy.New(proxy.Options{IDs: tc.ids})
		if !errors.Is(err, tc.want) {
			t.Errorf("New(%q): %v, want %v", tc.ids, err, tc.want)
		}
	}
	ids, err := proxy.ReadIDs(strings.NewReader("# devices\nsw1\n\n  sw2  \n#sw3\nrouter-9\n"))
	if err != nil || !reflect.DeepEqual(ids, []string{"sw1", "sw2", "router-9"}) {
		t.Errorf("ReadIDs: %v %v", ids, err)
	}
	if _, err := proxy.ReadIDs(strings.NewReader("ok\nbad/id\n")); !errors.Is(err, proxy.ErrBadID) {
		t.Errorf("ReadIDs with a bad id: %v", err)
	}
}

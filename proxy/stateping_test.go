package proxy_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// statePingModule is a proxy module whose ping only reports its own
// state (proxymod.StatePinger), like napalm's.
type statePingModule struct {
	up        *atomic.Bool
	pingCalls *atomic.Int64
}

func (s *statePingModule) Init(context.Context, *proxymod.Config) error { return nil }
func (s *statePingModule) Ping(context.Context) (bool, error) {
	s.pingCalls.Add(1)
	return s.up.Load(), nil
}
func (s *statePingModule) PingState() bool { return s.up.Load() }
func (s *statePingModule) Grains(context.Context) (*payload.Map, error) {
	return payload.NewMap(), nil
}
func (s *statePingModule) Shutdown(context.Context) error { return nil }

// TestStatePingWhileBusy: test.ping on a device whose module is a
// proxymod.StatePinger answers from the module's state while a command
// occupies the device and the fleet's only connection slot (a gated ping
// would wait for both), without calling the module's Ping.
func TestStatePingWhileBusy(t *testing.T) {
	dir := shortDir(t)
	d := testMaster(t, dir, func(context.Context, master.PillarRequest) (*payload.Map, error) {
		return payload.NewMap("proxy", payload.NewMap("proxytype", "stateping")), nil
	})
	boot := started.Watch(t, d.Bus())
	etc := proxyConf(t, dir, d, "")
	var up atomic.Bool
	var pingCalls atomic.Int64
	up.Store(true)
	types := proxymod.Default()
	if err := types.Register(proxymod.Type{Name: "stateping", New: func() proxymod.Module {
		return &statePingModule{up: &up, pingCalls: &pingCalls}
	}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: etc, IDs: []string{"sp1"}, Types: types, Logger: testLogger(), MaxConns: 1})
	waitFor(t, "the device", func() bool { _, ok := f.Device("sp1"); return ok })
	dev, _ := f.Device("sp1")
	waitServing(t, boot, dev)
	waitFor(t, "sp1 initialised", dev.Initialized)

	started, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- dev.Do(context.Background(), func(context.Context, proxymod.Module) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	defer func() {
		close(release)
		if err := <-held; err != nil {
			t.Errorf("the held command: %v", err)
		}
	}()
	for _, c := range []struct {
		up   bool
		want any
	}{{true, true}, {false, false}} {
		up.Store(c.up)
		got := runJob(t, d, "sp1", "", "test.ping")
		if got["sp1"] != c.want {
			t.Errorf("test.ping with the device busy and state %v: %v, want %v", c.up, got, c.want)
		}
	}
	if n := pingCalls.Load(); n != 0 {
		t.Errorf("the module's Ping was called %d times; PingState answers", n)
	}
}

package proxymod_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// napalmProxy is a device's proxy: configuration pointing at a devsim
// device.
func napalmProxy(plat string, port int, kv ...any) *proxymod.Config {
	px := payload.NewMap("proxytype", "napalm", "driver", plat, "host", "127.0.0.1", "username", "admin",
		"password", "admin", "timeout", int64(10),
		"optional_args", payload.NewMap("port", int64(port), "secret", "en", "enable_password", "x"))
	for i := 0; i+1 < len(kv); i += 2 {
		px.Set(kv[i].(string), kv[i+1])
	}
	return &proxymod.Config{ID: "n1", ProxyType: "napalm", Proxy: px, Log: slog.New(slog.DiscardHandler)}
}

// waitSessions waits (bounded) until the device has n SSH sessions.
func waitSessions(t *testing.T, d *devsim.Device, n int) {
	t.Helper()
	if !testutil.Poll(5*time.Second, func() bool { return d.ActiveSessions() == n }) {
		t.Fatalf("device has %d sessions, want %d", d.ActiveSessions(), n)
	}
}

func TestNapalmType(t *testing.T) {
	typ := proxymod.NapalmType()
	if typ.Name != "napalm" || typ.New == nil {
		t.Fatalf("%+v", typ)
	}
	if _, ok := typ.New().(proxymod.Aliver); !ok {
		t.Fatal("napalm module has no Alive")
	}
}

func TestNapalmLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		plat, model string
		alwaysAlive bool
	}{
		{"ios", "CSR1000V", true},
		{"eos", "DCS-7050TX-64-R", true},
		{"eos", "DCS-7050TX-64-R", false},
	} {
		name := tc.plat
		if !tc.alwaysAlive {
			name += "-per-call"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := devsim.Start(ctx, devsim.Options{Platform: tc.plat, Devices: 1, Secret: "en"})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			dev := f.Device(0)
			m := proxymod.NewNapalm(nil)
			if err := m.Init(ctx, napalmProxy(tc.plat, f.Port(0), "always_alive", tc.alwaysAlive, "napalm_host_dns_grain", !tc.alwaysAlive)); err != nil {
				t.Fatal(err)
			}
			open := 0
			if tc.alwaysAlive {
				open = 1
			}
			waitSessions(t, dev, open)
			if ok, err := m.Ping(ctx); !ok || err != nil {
				t.Errorf("ping %v %v", ok, err)
			}
			g, err := m.Grains(ctx)
			if err != nil {
				t.Fatal(err)
			}
			oa := g.Map("optional_args")
			if g.Str("model") != tc.model || g.Str("os") != tc.plat || g.Str("vendor") == "" || g.Str("hostname") != "sw1" ||
				oa.Has("secret") || oa.Has("enable_password") || oa.Has("keepalive") != tc.alwaysAlive || g.Has("host_dns") == tc.alwaysAlive {
				t.Errorf("grains %v", g)
			}
			if hd := g.Map("host_dns"); hd != nil && (len(hd.List("A")) != 1 || hd.List("A")[0] != "127.0.0.1") {
				t.Errorf("host_dns %v", hd)
			}
			if port, _ := oa.Int("port"); port != int64(f.Port(0)) || oa.Bool("config_lock") {
				t.Errorf("optional_args %v", oa)
			}
			if !strings.Contains(strings.Join(g.Keys(), ","), "interfaces") || len(g.List("interfaces")) == 0 {
				t.Errorf("interfaces grain %v", g)
			}
			waitSessions(t, dev, open)

			r := m.Call(ctx, "get_facts", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetFacts(ctx) })
			if tc.alwaysAlive {
				if !r.Bool("result") || r.Map("out").Str("model") != tc.model {
					t.Errorf("call %v", r)
				}
			} else if r.Bool("result") || r.Str("comment") == "" {
				// Without Connect a per-call device is not connected.
				t.Errorf("call without Connect %v", r)
			}
			release, err := m.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			r = m.Call(ctx, "cli", func(ctx context.Context, d driver.Driver) (any, error) {
				return d.Cli(ctx, []string{"show version"})
			})
			release(ctx)
			if !r.Bool("result") || !strings.Contains(r.Map("out").Str("show version"), tc.model) {
				t.Errorf("cli %v", r)
			}
			waitSessions(t, dev, open)
			if ok, _ := m.Alive(ctx); !ok {
				t.Error("not alive")
			}
			if err := m.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			waitSessions(t, dev, 0)
			if ok, _ := m.Ping(ctx); ok {
				t.Error("ping after shutdown")
			}
			if ok, _ := m.Alive(ctx); ok == tc.alwaysAlive {
				t.Errorf("alive after shutdown: %v", ok)
			}
		})
	}
}

func TestNapalmConnectMessage(t *testing.T) {
	ctx := context.Background()
	f, err := devsim.Start(ctx, devsim.Options{Platform: "ios", Devices: 1, Faults: map[int]devsim.Fault{0: devsim.FaultBadAuth}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	err = proxymod.NewNapalm(nil).Init(ctx, napalmProxy("ios", f.Port(0)))
	want := "Cannot connect to 127.0.0.1:" + itoa(f.Port(0)) + " as admin.. See log for details."
	if got := proxymod.ConnectMessage(err); got != want {
		t.Errorf("got %q want %q (%v)", got, want, err)
	}
}

func itoa(n int) string { return payload.Text(int64(n)) }

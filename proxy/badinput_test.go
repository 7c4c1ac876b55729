package proxy_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/wire/payload"
)

// closedPort returns a loopback port that refuses connections for the
// whole test: a TCP socket is bound to it but never listens, so no other
// process can take the port (a port merely closed again was reused by a
// parallel test in CI and answered with a reset instead of a refusal).
func closedPort(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*syscall.SockaddrInet4).Port
}

// TestBadDevices serves four napalm devices from one gsalt-proxy: sw1 is
// healthy, sw2 refuses the password, sw3 hangs in the middle of its show
// output and sw4 is a closed port. One publish to all four returns sw1's
// output and a clear, distinct error for each of the others; sw2 comes up
// by itself (backoff) once its password is accepted; a malformed template
// fails that job only; and an always_alive session the device drops is
// reconnected by the keepalive before any job needs it.
func TestBadDevices(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim, err := devsim.Start(ctx, devsim.Options{Platform: devsim.PlatformIOS, Devices: 3, User: "admin", Password: "admin",
		Faults: map[int]devsim.Fault{1: devsim.FaultBadAuth, 2: devsim.FaultHang}})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	ports := map[string]int{"sw1": sim.Port(0), "sw2": sim.Port(1), "sw3": sim.Port(2), "sw4": closedPort(t)}
	pillar := func(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
		return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", "ios", "host", "127.0.0.1",
			"username", "admin", "password", "admin", "timeout", int64(2),
			"optional_args", payload.NewMap("port", int64(ports[req.ID]), "keepalive", int64(1)))), nil
	}
	dir := shortDir(t)
	d := testMaster(t, dir, pillar)
	boot := started.Watch(t, d.Bus())
	bus := d.Bus().Subscribe(nil, 4096)
	defer bus.Close()
	etc := proxyConf(t, dir, d, "")
	ids := []string{"sw1", "sw2", "sw3", "sw4"}
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: etc, IDs: ids, Logger: testLogger(),
		RetryMin: 200 * time.Millisecond, RetryMax: time.Second})
	dev := map[string]*proxy.Device{}
	for _, id := range ids {
		waitFor(t, id+" in the fleet", func() bool { _, ok := f.Device(id); return ok })
		dev[id], _ = f.Device(id)
		waitServing(t, boot, dev[id])
	}
	waitFor(t, "sw1 and sw3 up", func() bool { return dev["sw1"].Initialized() && dev["sw3"].Initialized() })
	for _, id := range []string{"sw2", "sw4"} {
		waitFor(t, id+" down", func() bool { return dev[id].Status().State == proxy.StateDown })
	}

	got := runJob(t, d, "sw*", "", "net.cli", "show version")
	if len(got) != 4 {
		t.Fatalf("net.cli returned for %d devices: %v", len(got), got)
	}
	if r, ok := got["sw1"].(*payload.Map); !ok || r.Bool("result") != true ||
		!strings.Contains(r.Map("out").Str("show version"), "Cisco IOS XE Software") {
		t.Errorf("sw1: %v", got["sw1"])
	}
	cases := []struct {
		id   string
		want []string
	}{
		{"sw2", []string{"not initialized", "Cannot connect to 127.0.0.1", "authentication failed"}},
		{"sw3", []string{"Cannot execute \"cli\"", "timed out"}},
		{"sw4", []string{"not initialized", "Cannot connect to 127.0.0.1", "connection refused"}},
	}
	for _, c := range cases {
		text := fmt.Sprint(got[c.id])
		if r, ok := got[c.id].(*payload.Map); ok {
			if r.Bool("result") {
				t.Errorf("%s: result True: %v", c.id, r)
			}
			text = r.Str("comment")
		}
		t.Logf("%s: %s", c.id, text)
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q lacks %q", c.id, text, w)
			}
		}
	}
	if st := dev["sw4"].Status(); st.Attempts < 1 || st.NextRetry.IsZero() || !strings.Contains(st.LastError, "refused") {
		t.Errorf("sw4 status: %+v", st)
	}

	// sw2's password is accepted again: the backoff brings it up.
	sim.Device(1).SetFault(devsim.FaultNone)
	waitFor(t, "sw2 up", func() bool { return dev["sw2"].Status().State == proxy.StateUp })
	up := waitBus(t, bus, "gsalt/proxy/sw2/up")
	if n, _ := payload.AsInt(func() any { v, _ := up.Data.Map("data").Get("attempts"); return v }()); n < 1 {
		t.Errorf("up event: %v", up.Data)
	}
	if r, ok := runJob(t, d, "sw2", "", "net.cli", "show version")["sw2"].(*payload.Map); !ok || !r.Bool("result") {
		t.Errorf("sw2 after recovery: %v", r)
	}

	// A malformed template fails that job with the renderer's message;
	// the device stays up and serves the next job.
	bad := runJob(t, d, "sw1", "", "net.load_template", "template_source={% if %}ntp server 10.0.0.9", "test=True")["sw1"]
	if r, ok := bad.(*payload.Map); !ok || r.Bool("result") || !strings.Contains(strings.ToLower(r.Str("comment")), "render") {
		t.Errorf("malformed template: %v", bad)
	}
	if !dev["sw1"].Initialized() || sim.Device(0).RunningConfig() == "" ||
		strings.Contains(sim.Device(0).RunningConfig(), "10.0.0.9") {
		t.Errorf("sw1 after the malformed template: initialized %v", dev["sw1"].Initialized())
	}

	// The device drops sw1's session: the keepalive notices and reconnects.
	before := dev["sw1"].Status().Reconnects
	waitFor(t, "sw1's session", func() bool { return sim.Device(0).ActiveSessions() > 0 })
	if n := sim.Device(0).DropSessions(); n == 0 {
		t.Fatal("no session to drop")
	}
	waitFor(t, "sw1 reconnected", func() bool {
		st := dev["sw1"].Status()
		return st.Reconnects > before && st.State == proxy.StateUp && dev["sw1"].Initialized()
	})
	if r, ok := runJob(t, d, "sw1", "", "net.cli", "show version")["sw1"].(*payload.Map); !ok || !r.Bool("result") {
		t.Errorf("sw1 after reconnect: %v", r)
	}
}

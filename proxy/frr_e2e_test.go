package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/testlab"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestFRRThroughMaster runs the net.*, bgp.* and route.* functions of a
// gsalt master on a real FRR router (testlab.StartFRR: zebra, staticd and
// bgpd in a network namespace, vtysh over SSH) through gsalt-proxy's
// napalm proxytype with the frr driver: configuration changes made with
// net.load_config show up in the router's own running configuration and
// kernel, the getters the frr driver has return the router's data, and
// the ones it lacks (arp, route_to) NAPALM's "not implemented" comment.
// Gated as the driver's FRR tests: root, Debian's frr and openssh-server,
// not -short.
func TestFRRThroughMaster(t *testing.T) {
	lab := testlab.StartFRR(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pillar := func(_ context.Context, _ master.PillarRequest) (*payload.Map, error) {
		return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", "frr", "host", "127.0.0.1",
			"username", lab.VtyshUser.Name, "password", lab.VtyshUser.Password, "timeout", int64(20),
			"optional_args", payload.NewMap("port", int64(lab.Port)))), nil
	}
	dir := shortDir(t)
	d := testMaster(t, dir, pillar)
	boot := started.Watch(t, d.Bus())
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: proxyConf(t, dir, d, ""), IDs: []string{"r1"}, Logger: testLogger()})
	waitFor(t, "r1 in the fleet", func() bool { _, ok := f.Device("r1"); return ok })
	dev, _ := f.Device("r1")
	waitServing(t, boot, dev)
	waitFor(t, "r1 up", dev.Initialized)

	call := func(fun string, args ...any) any { t.Helper(); return runJob(t, d, "r1", "", fun, args...)["r1"] }
	check := func(fun string, args []any, wants ...string) {
		t.Helper()
		ret := plainJSON(t, call(fun, args...))
		for _, w := range wants {
			if err := checkWant(ret, w); err != nil {
				b, _ := json.MarshalIndent(ret, "", " ")
				t.Errorf("%s %v: %v\n%s", fun, args, err, b)
				return
			}
		}
	}
	if v := call("test.ping"); v != true {
		t.Fatalf("test.ping: %v", v)
	}

	const change = `hostname gsalt-e2e
ip route 10.77.0.0/24 Null0
interface lo
 description e2e loopback
 ip address 10.255.0.1/32
exit
router bgp 65010
 bgp router-id 10.255.0.1
 neighbor 192.0.2.2 remote-as 65011
 neighbor 192.0.2.2 description e2e peer
exit
`
	// test=True: a diff, nothing applied.
	// The change has newlines, so it travels as a keyword argument dict
	// (Salt's key=value parsing stops at a newline).
	check("net.load_config", []any{payload.NewMap("__kwarg__", true, "text", change, "test", true)}, "diff")
	if conf := lab.Vtysh(t, "show running-config"); strings.Contains(conf, "65011") || lab.KernelRoute(t, "10.77.0.0/24", false) != "" {
		t.Fatalf("test=True applied the change:\n%s", conf)
	}
	check("net.load_config", []any{payload.NewMap("__kwarg__", true, "text", change)}, "diff")
	conf := lab.Vtysh(t, "show running-config")
	// (The hostname is each vtysh session's own: a local vtysh shows its
	// host's; net.facts below reads the one the driver's session set.)
	for _, want := range []string{"neighbor 192.0.2.2 remote-as 65011", "ip route 10.77.0.0/24 Null0", " description e2e loopback"} {
		if !strings.Contains(conf, want) {
			t.Fatalf("commit: running configuration lacks %q:\n%s", want, conf)
		}
	}
	if r := lab.KernelRoute(t, "10.77.0.0/24", true); !strings.Contains(r, "blackhole") {
		t.Errorf("kernel route %q", r)
	}

	for _, c := range []struct {
		fun   string
		args  []any
		wants []string
	}{
		{"net.facts", nil, []string{"out/vendor=FRRouting", "out/hostname=gsalt-e2e", "out/os_version", "out/uptime=-1"}},
		{"net.interfaces", nil, []string{"out/lo/is_up=true", "out/lo/is_enabled=true", "out/lo/description=e2e loopback"}},
		{"net.ipaddrs", nil, []string{"out/lo/ipv4/10.255.0.1/prefix_length=32"}},
		{"net.config", []any{"source=running"}, []string{"out/running", "out/candidate=", "out/startup="}},
		{"net.cli", []any{"show version"}, []string{"out/show version"}},
		{"bgp.config", nil, []string{"out/_/local_as=65010", "out/_/neighbors/192.0.2.2/remote_as=65011",
			"out/_/neighbors/192.0.2.2/description=e2e peer"}},
		{"bgp.neighbors", nil, []string{"out/global/65011/0/remote_address=192.0.2.2", "out/global/65011/0/up=false",
			"out/global/65011/0/local_as=65010"}},
		{"net.arp", nil, []string{"!get_arp_table is not implemented for the NAPALM frr driver!"}},
		{"route.show", []any{"10.77.0.0/24"}, []string{"!get_route_to is not implemented for the NAPALM frr driver!"}},
		{"route.show", []any{"not-a-prefix"}, []string{"!get_route_to is not implemented for the NAPALM frr driver!"}},
	} {
		check(c.fun, c.args, c.wants...)
	}
	if out, ok := plainJSON(t, call("net.cli", "show version")).(map[string]any); ok {
		if v := fmt.Sprint(out["out"].(map[string]any)["show version"]); !strings.HasPrefix(v, "FRRouting ") {
			t.Errorf("net.cli show version: %q", v)
		}
	}
	if out, ok := plainJSON(t, call("net.config", "source=running")).(map[string]any); ok {
		if v := fmt.Sprint(out["out"].(map[string]any)["running"]); !strings.Contains(v, "neighbor 192.0.2.2 description e2e peer") {
			t.Errorf("net.config running:\n%s", v)
		}
	}

	// net.rollback: the router is back to its configuration before.
	check("net.rollback", nil)
	conf = lab.Vtysh(t, "show running-config")
	if strings.Contains(conf, "65011") || strings.Contains(conf, "e2e loopback") || lab.KernelRoute(t, "10.77.0.0/24", false) != "" {
		t.Errorf("rollback left the change:\n%s", conf)
	}
	check("bgp.neighbors", nil, "#out=0")
}

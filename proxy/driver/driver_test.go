package driver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testlab"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/wire/payload"
)

const secret = "s3cret"

// bootAge is how long ago device index 1 of a fleet pretends to have
// booted (devsim: 3 days, 2 hours, plus 7 minutes per index).
const bootAge = 3*86400 + 2*3600 + 7*60

func startFleet(t *testing.T, plat string, n int, faults map[int]devsim.Fault) *devsim.Fleet {
	t.Helper()
	f, err := devsim.Start(context.Background(), devsim.Options{Platform: plat, Devices: n, Secret: secret, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func newDriver(t *testing.T, f *devsim.Fleet, i int, mod func(*driver.Options)) driver.Driver {
	t.Helper()
	o := driver.Options{Host: "127.0.0.1", Port: f.Port(i), Username: "admin", Password: "admin",
		Secret: secret, Timeout: 10 * time.Second}
	if mod != nil {
		mod(&o)
	}
	d, err := driver.Default().New(f.Options().Platform, o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func openDriver(t *testing.T, f *devsim.Fleet, i int) driver.Driver {
	t.Helper()
	d := newDriver(t, f, i, nil)
	if err := d.Open(context.Background()); err != nil {
		t.Fatalf("open %s: %v", f.Addr(i), err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

var platforms = []string{devsim.PlatformIOS, devsim.PlatformEOS}

func TestRegistry(t *testing.T) {
	r := driver.Default()
	if got := r.Names(); !reflect.DeepEqual(got, []string{"eos", "frr", "ios", "iosxe", "iosxr", "junos", "nxos", "nxos_ssh"}) {
		t.Fatalf("names %v", got)
	}
	cases := []struct {
		name, plat string
		err        error
	}{
		{"ios", "ios", nil}, {"IOSXE", "ios", nil}, {"eos", "eos", nil}, {"junos", "junos", nil}, {"bogus", "", driver.ErrUnknownDriver},
	}
	for _, tc := range cases {
		d, err := r.New(tc.name, driver.Options{Host: "192.0.2.1"})
		if !errors.Is(err, tc.err) || (err == nil && d.Platform() != tc.plat) {
			t.Errorf("%s: %v %v", tc.name, d, err)
		}
	}
	if err := r.Register("ios", driver.NewIOS); err == nil {
		t.Error("duplicate registration accepted")
	}
	if err := r.Register("", driver.NewIOS); err == nil {
		t.Error("empty name accepted")
	}
	if _, err := r.New("eos", driver.Options{}); !errors.Is(err, driver.ErrInvalidArgument) {
		t.Errorf("empty host: %v", err)
	}
	if _, err := r.New("eos", driver.Options{Host: "h", Transport: "carrier-pigeon"}); !errors.Is(err, driver.ErrInvalidArgument) {
		t.Errorf("bad transport: %v", err)
	}
	d, _ := r.New("ios", driver.Options{Host: "h"})
	if _, err := d.GetFacts(context.Background()); !errors.Is(err, driver.ErrNotOpen) || !errors.Is(err, driver.ErrConnect) {
		t.Errorf("unopened: %v", err)
	}
	if d.IsAlive(context.Background()) {
		t.Error("unopened driver alive")
	}
}

func TestFacts(t *testing.T) {
	t.Parallel()
	want := map[string]driver.Facts{
		"ios": {Vendor: "Cisco", Model: "CSR1000V", SerialNumber: "9ESG0000002", Hostname: "sw2", FQDN: "sw2.example.net",
			OSVersion:     "Virtual XE Software (X86_64_LINUX_IOSD-UNIVERSALK9-M), Version 17.3.4a, RELEASE SOFTWARE (fc3)",
			InterfaceList: []string{"GigabitEthernet1", "GigabitEthernet2", "GigabitEthernet3", "GigabitEthernet4", "Loopback0"}},
		"eos": {Vendor: "Arista", Model: "DCS-7050TX-64-R", SerialNumber: "JPE00000002", Hostname: "sw2", FQDN: "sw2.example.net",
			OSVersion:     "4.27.3F-26379303.4273F",
			InterfaceList: []string{"Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4", "Loopback0", "Management1"}},
	}
	for _, plat := range platforms {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, plat, 3, nil)
			d := openDriver(t, f, 1)
			if !d.IsAlive(context.Background()) {
				t.Fatal("not alive after open")
			}
			got, err := d.GetFacts(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got.Uptime < bootAge || got.Uptime > bootAge+60 {
				t.Errorf("uptime %v", got.Uptime)
			}
			got.Uptime = 0
			if !reflect.DeepEqual(got, want[plat]) {
				t.Errorf("facts\n got %#v\nwant %#v", got, want[plat])
			}
			m := driver.ToPayload(got).(*payload.Map)
			if keys := strings.Join(m.Keys(), ","); keys != "uptime,vendor,os_version,serial_number,model,hostname,fqdn,interface_list" {
				t.Errorf("keys %s", keys)
			}
			if v, _ := m.Get("interface_list"); len(v.([]any)) != len(want[plat].InterfaceList) {
				t.Errorf("interface_list payload %v", v)
			}
		})
	}
}

func TestGetters(t *testing.T) {
	t.Parallel()
	type expect struct {
		ifaces   map[string]driver.Interface
		ips      map[string]driver.InterfaceIP
		arp      []driver.ARPEntry
		lldp     map[string][]driver.LLDPNeighbor
		detail   driver.LLDPNeighborDetail // first neighbor of the first port
		detailIf string
		ntpType  string
		bgpAF    string
		bgpUp    int
	}
	v4 := func(kv ...any) map[string]driver.IPPrefix {
		m := map[string]driver.IPPrefix{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = driver.IPPrefix{PrefixLength: kv[i+1].(int)}
		}
		return m
	}
	empty := map[string]driver.IPPrefix{}
	cases := map[string]expect{
		"ios": {
			ifaces: map[string]driver.Interface{
				"GigabitEthernet2": {IsEnabled: true, IsUp: true, Description: "to sw3 GigabitEthernet3", MACAddress: "52:54:00:00:01:02", LastFlapped: -1, MTU: 1500, Speed: 1000},
				"GigabitEthernet4": {MACAddress: "52:54:00:00:01:04", LastFlapped: -1, MTU: 1500, Speed: 1000},
				"Loopback0":        {IsEnabled: true, IsUp: true, LastFlapped: -1, MTU: 1514, Speed: 8000},
			},
			ips: map[string]driver.InterfaceIP{
				"GigabitEthernet1": {IPv4: v4("172.16.0.2", 16)}, "GigabitEthernet2": {IPv4: v4("10.0.0.2", 31)},
				"GigabitEthernet3": {IPv4: v4("10.0.0.1", 31)}, "Loopback0": {IPv4: v4("10.255.0.2", 32)},
			},
			arp: []driver.ARPEntry{
				{Interface: "GigabitEthernet3", MAC: "52:54:00:00:00:02", IP: "10.0.0.0", Age: 0},
				{Interface: "GigabitEthernet3", MAC: "52:54:00:00:01:03", IP: "10.0.0.1", Age: -1},
				{Interface: "GigabitEthernet2", MAC: "52:54:00:00:01:02", IP: "10.0.0.2", Age: -1},
				{Interface: "GigabitEthernet2", MAC: "52:54:00:00:02:03", IP: "10.0.0.3", Age: 0},
				{Interface: "GigabitEthernet1", MAC: "52:54:00:00:01:01", IP: "172.16.0.2", Age: -1},
				{Interface: "GigabitEthernet1", MAC: "52:54:00:FF:FF:FE", IP: "172.16.255.254", Age: 1},
			},
			lldp: map[string][]driver.LLDPNeighbor{"GigabitEthernet2": {{Hostname: "sw3", Port: "Gi3"}}, "GigabitEthernet3": {{Hostname: "sw1", Port: "Gi2"}}},
			detail: driver.LLDPNeighborDetail{RemotePort: "Gi3", RemotePortDescription: "to sw2 GigabitEthernet2",
				RemoteChassisID: "52:54:00:00:02:00", RemoteSystemName: "sw3",
				RemoteSystemDescription: "Cisco IOS Software [Amsterdam], Virtual XE Software (X86_64_LINUX_IOSD-UNIVERSALK9-M), Version 17.3.4a, RELEASE SOFTWARE (fc3)",
				RemoteSystemCapab:       []string{"bridge", "router"}, RemoteSystemEnableCapab: []string{"router"}},
			detailIf: "GigabitEthernet2", ntpType: "-", bgpAF: "ipv4 unicast", bgpUp: 3*86400 + 2*3600,
		},
		"eos": {
			ifaces: map[string]driver.Interface{
				"Ethernet2": {IsEnabled: true, IsUp: true, Description: "to sw3 Ethernet3", MACAddress: "00:1C:73:00:01:02", MTU: 1500, Speed: 10000},
				"Ethernet4": {MACAddress: "00:1C:73:00:01:04", MTU: 1500, Speed: 10000},
				"Loopback0": {IsEnabled: true, IsUp: true, MTU: 65535},
			},
			ips: map[string]driver.InterfaceIP{
				"Ethernet2": {IPv4: v4("10.0.0.2", 31), IPv6: empty}, "Ethernet3": {IPv4: v4("10.0.0.1", 31), IPv6: empty},
				"Loopback0": {IPv4: v4("10.255.0.2", 32), IPv6: empty}, "Management1": {IPv4: v4("172.16.0.2", 16), IPv6: empty},
			},
			arp: []driver.ARPEntry{
				{Interface: "Ethernet3", MAC: "00:1C:73:00:00:02", IP: "10.0.0.0", Age: 42},
				{Interface: "Ethernet2", MAC: "00:1C:73:00:02:03", IP: "10.0.0.3", Age: 44},
				{Interface: "Management1", MAC: "00:1C:73:FF:FF:FE", IP: "172.16.255.254", Age: 70},
			},
			lldp: map[string][]driver.LLDPNeighbor{"Ethernet2": {{Hostname: "sw3", Port: "Ethernet3"}}, "Ethernet3": {{Hostname: "sw1", Port: "Ethernet2"}}},
			detail: driver.LLDPNeighborDetail{ParentInterface: "Ethernet2", RemotePort: "Ethernet3", RemotePortDescription: "to sw2 Ethernet2",
				RemoteChassisID: "00:1C:73:00:02:00", RemoteSystemName: "sw3",
				RemoteSystemDescription: "Arista Networks EOS version 4.27.3F running on an Arista Networks DCS-7050TX-64",
				RemoteSystemCapab:       []string{"bridge", "router"}, RemoteSystemEnableCapab: []string{"bridge", "router"}},
			detailIf: "Ethernet2", ntpType: "u", bgpAF: "ipv4", bgpUp: bootAge,
		},
	}
	for _, plat := range platforms {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			w := cases[plat]
			f := startFleet(t, plat, 3, nil)
			d := openDriver(t, f, 1)
			ctx := context.Background()

			ifs, err := d.GetInterfaces(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for name, wi := range w.ifaces {
				gi := ifs[name]
				if plat == "eos" && wi.IsUp {
					if gi.LastFlapped < 1e9 {
						t.Errorf("%s last_flapped %v", name, gi.LastFlapped)
					}
					gi.LastFlapped = 0
				} else if plat == "eos" {
					gi.LastFlapped = 0
				}
				if gi != wi {
					t.Errorf("interface %s\n got %+v\nwant %+v", name, gi, wi)
				}
			}

			ips, err := d.GetInterfacesIP(ctx)
			if err != nil || !reflect.DeepEqual(ips, w.ips) {
				t.Errorf("interfaces ip %v\n got %v\nwant %v", err, ips, w.ips)
			}
			arp, err := d.GetArpTable(ctx, "")
			if err != nil || !reflect.DeepEqual(arp, w.arp) {
				t.Errorf("arp %v\n got %+v\nwant %+v", err, arp, w.arp)
			}
			lldp, err := d.GetLLDPNeighbors(ctx)
			if err != nil || !reflect.DeepEqual(lldp, w.lldp) {
				t.Errorf("lldp %v\n got %+v\nwant %+v", err, lldp, w.lldp)
			}
			det, err := d.GetLLDPNeighborsDetail(ctx, "")
			if err != nil || len(det) != 2 || len(det[w.detailIf]) != 1 || !reflect.DeepEqual(det[w.detailIf][0], w.detail) {
				t.Errorf("lldp detail %v\n got %+v\nwant %+v", err, det, w.detail)
			}
			one, err := d.GetLLDPNeighborsDetail(ctx, w.detailIf)
			if err != nil || len(one) != 1 || len(one[w.detailIf]) != 1 {
				t.Errorf("lldp detail of %s: %v %+v", w.detailIf, err, one)
			}

			srv, err := d.GetNTPServers(ctx)
			wantSrv := map[string]driver.NTPServer{"172.16.255.254": {}}
			if plat == "eos" {
				// NAPALM eos reports each server's details.
				wantSrv["172.16.255.254"] = driver.NTPServer{NTPServerDetails: &driver.NTPServerDetails{Address: "172.16.255.254",
					Port: 123, Version: 4, AssociationType: "SERVER", NetworkInstance: "default", KeyID: -1}}
			}
			if err != nil || !reflect.DeepEqual(srv, wantSrv) {
				t.Errorf("ntp servers %v %v", err, srv)
			}
			stats, err := d.GetNTPStats(ctx)
			wantStats := []driver.NTPStats{{Remote: "172.16.255.254", ReferenceID: ".GPS.", Synchronized: true, Stratum: 1,
				Type: w.ntpType, When: "33", HostPoll: 64, Reachability: 377, Delay: 0.512, Offset: -0.021, Jitter: 1.938}}
			if err != nil || !reflect.DeepEqual(stats, wantStats) {
				t.Errorf("ntp stats %v\n got %+v\nwant %+v", err, stats, wantStats)
			}
			if _, err := d.GetNTPPeers(ctx); err != nil {
				t.Errorf("ntp peers: %v", err)
			}

			bgp, err := d.GetBGPNeighbors(ctx)
			if err != nil {
				t.Fatal(err)
			}
			g, ok := bgp["global"]
			if !ok || g.RouterID != "10.255.0.2" || len(g.Peers) != 2 {
				t.Fatalf("bgp %+v", bgp)
			}
			for addr, as := range map[string]int64{"10.0.0.3": 65003, "10.0.0.0": 65001} {
				p := g.Peers[addr]
				af := p.AddressFamily[w.bgpAF]
				if p.LocalAS != 65002 || p.RemoteAS != as || !p.IsUp || !p.IsEnabled || af.ReceivedPrefixes != 1 ||
					af.AcceptedPrefixes != 1 || p.Uptime < w.bgpUp || p.Uptime > w.bgpUp+60 {
					t.Errorf("bgp peer %s: %+v", addr, p)
				}
			}

			env, err := d.GetEnvironment(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if plat == "eos" && (env.Memory != driver.Memory{AvailableRAM: 8099732, UsedRAM: 8099732 - 5991204}) {
				t.Errorf("eos memory %+v", env.Memory)
			}
			if _, ok := env.CPU[driver.CPUIndex(0)]; !ok || env.Fans == nil || env.Power == nil || env.Temperature == nil {
				t.Errorf("environment %+v", env)
			}

			mac, err := d.GetMACAddressTable(ctx)
			if plat == "ios" {
				if !errors.Is(err, driver.ErrCommand) {
					t.Errorf("ios mac table on a router: %v %v", mac, err)
				}
			} else if err != nil || len(mac) != 1 || mac[0].MAC != "00:1C:56:00:01:A1" || mac[0].VLAN != 10 ||
				mac[0].Interface != "Ethernet1" || mac[0].Moves != 1 || mac[0].Static || !mac[0].Active ||
				time.Since(time.Unix(int64(mac[0].LastMove), 0)) < 3*24*time.Hour {
				t.Errorf("eos mac table %v %+v", err, mac)
			}

			cfg, err := d.GetConfig(ctx, "all")
			if err != nil || !strings.Contains(cfg.Running, "hostname sw2") || !strings.Contains(cfg.Startup, "hostname sw2") ||
				cfg.Candidate != "" || strings.Contains(cfg.Running, "Building configuration") {
				t.Errorf("get_config %v %+v", err, cfg)
			}
			if _, err := d.GetConfig(ctx, "bogus"); !errors.Is(err, driver.ErrInvalidArgument) {
				t.Errorf("bad retrieve: %v", err)
			}

			out, err := d.Cli(ctx, []string{"show clock", "show version"})
			if err != nil || len(out) != 2 || !strings.Contains(out["show version"], "sw2") && plat == "ios" {
				t.Errorf("cli %v %v", err, out)
			}
			out, err = d.Cli(ctx, []string{"show bogus"})
			if plat == "ios" && (err != nil || !strings.Contains(out["show bogus"], "% Invalid input")) {
				t.Errorf("ios cli invalid: %v %q", err, out)
			}
			if plat == "eos" && !errors.Is(err, driver.ErrCommand) {
				t.Errorf("eos cli invalid: %v %q", err, out)
			}

			ping, err := d.Ping(ctx, driver.PingOptions{Destination: "10.0.0.3"})
			if err != nil || ping.Success != nil || ping.Error == "" {
				t.Errorf("ping on a device without ping: %v %+v", err, ping)
			}
			if m := driver.ToPayload(ping).(*payload.Map); strings.Join(m.Keys(), ",") != "error" {
				t.Errorf("ping payload keys %v", m.Keys())
			}
			tr, err := d.Traceroute(ctx, driver.TracerouteOptions{Destination: "10.0.0.3"})
			if err != nil || tr.Error == "" {
				t.Errorf("traceroute: %v %+v", err, tr)
			}
			if _, err := d.Ping(ctx, driver.PingOptions{Destination: "10.0.0.3; reload"}); !errors.Is(err, driver.ErrInvalidArgument) {
				t.Errorf("ping injection: %v", err)
			}
			if !d.IsAlive(ctx) {
				t.Error("not alive after getters")
			}
		})
	}
}

func TestConfigFlow(t *testing.T) {
	t.Parallel()
	for _, plat := range platforms {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, plat, 1, nil)
			dev := f.Device(0)
			d := openDriver(t, f, 0)
			ctx := context.Background()
			before := dev.RunningConfig()
			const line = "ntp server 10.0.0.1"

			if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
				t.Fatalf("compare without candidate: %q %v", diff, err)
			}
			if err := d.CommitConfig(ctx, "", 0); !errors.Is(err, driver.ErrCommand) {
				t.Fatalf("commit without candidate: %v", err)
			}
			if err := d.CommitConfig(ctx, "msg", 0); !errors.Is(err, driver.ErrNotSupported) {
				t.Fatalf("commit message: %v", err)
			}
			if err := d.CommitConfig(ctx, "", 60); !errors.Is(err, driver.ErrNotSupported) || d.Capabilities().HasConfirmedCommit {
				t.Fatalf("commit confirmed: %v", err)
			}

			// merge, compare, discard: the running configuration is untouched.
			if err := d.LoadMergeCandidate(ctx, line+"\n"); err != nil {
				t.Fatal(err)
			}
			diff, err := d.CompareConfig(ctx)
			if err != nil || !strings.Contains(diff, "+"+line) || strings.Contains(diff, "172.16.255.254") && plat == "ios" {
				t.Fatalf("merge diff %v:\n%s", err, diff)
			}
			if plat == "ios" && diff != "+"+line {
				t.Errorf("ios merge diff %q", diff)
			}
			if plat == "eos" {
				if c, err := d.GetConfig(ctx, "candidate"); err != nil || !strings.Contains(c.Candidate, line) || c.Running != "" {
					t.Errorf("eos candidate %v %+v", err, c)
				}
			}
			if err := d.DiscardConfig(ctx); err != nil {
				t.Fatal(err)
			}
			if after := dev.RunningConfig(); after != before {
				t.Fatalf("discard changed the running config:\n%s", after)
			}
			if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
				t.Fatalf("compare after discard: %q %v", diff, err)
			}

			// merge and commit.
			if err := d.LoadMergeCandidate(ctx, line); err != nil {
				t.Fatal(err)
			}
			if err := d.CommitConfig(ctx, "", 0); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(dev.RunningConfig(), line) || !strings.Contains(dev.StartupConfig(), line) {
				t.Fatalf("commit not applied/saved:\n%s", dev.RunningConfig())
			}
			if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
				t.Fatalf("compare after commit: %q %v", diff, err)
			}

			// rollback restores the configuration before the commit.
			if err := d.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if run := dev.RunningConfig(); strings.Contains(run, line) || !strings.Contains(run, "ntp server 172.16.255.254") {
				t.Fatalf("rollback not applied:\n%s", run)
			}

			// replace with a full configuration.
			cfg, err := d.GetConfig(ctx, "running")
			if err != nil {
				t.Fatal(err)
			}
			full := strings.Replace(cfg.Running, "ntp server 172.16.255.254", "ntp server 192.0.2.99", 1)
			if full == cfg.Running {
				t.Fatalf("running config lacks the ntp server:\n%s", cfg.Running)
			}
			if err := d.LoadReplaceCandidate(ctx, full); err != nil {
				t.Fatal(err)
			}
			diff, err = d.CompareConfig(ctx)
			if err != nil || !strings.Contains(diff, "+ntp server 192.0.2.99") || !strings.Contains(diff, "-ntp server 172.16.255.254") {
				t.Fatalf("replace diff %v:\n%s", err, diff)
			}
			if n := strings.Count(diff, "\n-"); n > 3 {
				t.Errorf("replace diff removes too much (%d):\n%s", n, diff)
			}
			if err := d.CommitConfig(ctx, "", 0); err != nil {
				t.Fatal(err)
			}
			run := dev.RunningConfig()
			if !strings.Contains(run, "ntp server 192.0.2.99") || strings.Contains(run, "ntp server 172.16.255.254") ||
				!strings.Contains(run, "hostname sw1") || !strings.Contains(run, "router bgp 65001") {
				t.Fatalf("replace not applied:\n%s", run)
			}
			if !d.IsAlive(ctx) {
				t.Fatal("not alive after the flow")
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, plat := range platforms {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, plat, 1, nil)
			dev := f.Device(0)
			d := openDriver(t, f, 0)
			ctx := context.Background()
			before := dev.RunningConfig()
			bad := "ntp server 10.9.9.9\nthis is not a command\n"
			switch plat {
			case "eos":
				// EOS rejects the line while loading; the session is aborted.
				if err := d.LoadMergeCandidate(ctx, bad); !errors.Is(err, driver.ErrCommand) || !strings.Contains(err.Error(), "this is not a command") {
					t.Fatalf("load: %v", err)
				}
				if s := dev.ConfigSessions(); len(s) != 0 {
					t.Fatalf("sessions left: %v", s)
				}
			case "ios":
				// IOS accepts any file; configure replace with revert refuses it.
				if err := d.LoadReplaceCandidate(ctx, bad); err != nil {
					t.Fatal(err)
				}
				if err := d.CommitConfig(ctx, "", 0); !errors.Is(err, driver.ErrCommand) {
					t.Fatalf("commit of a bad replace: %v", err)
				}
				if err := d.LoadMergeCandidate(ctx, "banner motd {unbalanced\n"); !errors.Is(err, driver.ErrInvalidArgument) {
					t.Fatalf("tcl-unsafe candidate: %v", err)
				}
			}
			if after := dev.RunningConfig(); after != before {
				t.Fatalf("running config changed:\n%s", after)
			}
			if !d.IsAlive(ctx) {
				t.Fatal("not alive")
			}
		})
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformIOS, 4, map[int]devsim.Fault{
		0: devsim.FaultHang, 1: devsim.FaultBadAuth, 2: devsim.FaultDrop, 3: devsim.FaultRefuse})
	e := startFleet(t, devsim.PlatformEOS, 1, nil)
	dead := testlab.FreePort(t)
	// silent accepts TCP connections and never says a word.
	silent := testutil.ServeTCP(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })

	t.Run("open", func(t *testing.T) {
		wrongSecret := func(o *driver.Options) { o.Secret = "wrong" }
		cases := []struct {
			name, plat string
			port       int
			mod        func(*driver.Options)
			want       error
		}{
			{"badauth", "ios", f.Port(1), nil, driver.ErrAuth},
			{"refuse", "ios", f.Port(3), nil, driver.ErrConnect},
			{"unreachable", "ios", dead, nil, driver.ErrConnect},
			{"ios bad secret", "ios", f.Port(2), wrongSecret, driver.ErrAuth},
			{"eos bad secret", "eos", e.Port(0), wrongSecret, driver.ErrAuth},
			{"eos wrong password", "eos", e.Port(0), func(o *driver.Options) { o.Password = "nope" }, driver.ErrAuth},
			{"silent server", "ios", silent.Addr().(*net.TCPAddr).Port, func(o *driver.Options) { o.Timeout = time.Second }, driver.ErrTimeout},
		}
		for _, tc := range cases {
			o := driver.Options{Host: "127.0.0.1", Port: tc.port, Username: "admin", Password: "admin", Secret: secret, Timeout: 10 * time.Second}
			if tc.mod != nil {
				tc.mod(&o)
			}
			d, err := driver.Default().New(tc.plat, o)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = d.Open(context.Background())
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
			}
			if time.Since(start) > 9*time.Second {
				t.Errorf("%s: open waited for the whole timeout", tc.name)
			}
			_ = d.Close(context.Background())
		}
	})

	t.Run("hang", func(t *testing.T) {
		cases := []struct {
			name string
			mod  func(*driver.Options)
			ctx  func() (context.Context, context.CancelFunc)
			want error
		}{
			{"ctx deadline", nil, func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Second)
			}, driver.ErrTimeout},
			{"op timeout", func(o *driver.Options) { o.Timeout = 1500 * time.Millisecond }, func() (context.Context, context.CancelFunc) {
				return context.WithCancel(context.Background())
			}, driver.ErrTimeout},
			{"cancel", nil, func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(500*time.Millisecond, cancel)
				return ctx, cancel
			}, context.Canceled},
		}
		for _, tc := range cases {
			d := newDriver(t, f, 0, tc.mod)
			if err := d.Open(context.Background()); err != nil {
				t.Fatalf("%s: open: %v", tc.name, err)
			}
			ctx, cancel := tc.ctx()
			start := time.Now()
			_, err := d.GetFacts(ctx)
			took := time.Since(start)
			cancel()
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
			}
			if took < 400*time.Millisecond || took > 8*time.Second {
				t.Errorf("%s: returned after %v", tc.name, took)
			}
			if d.IsAlive(context.Background()) {
				t.Errorf("%s: alive after a hang", tc.name)
			}
			if _, err := d.Cli(context.Background(), []string{"show clock"}); !errors.Is(err, driver.ErrNotOpen) || !errors.Is(err, driver.ErrConnect) {
				t.Errorf("%s: after hang: %v", tc.name, err)
			}
			if err := d.Close(context.Background()); err != nil {
				t.Errorf("%s: close: %v", tc.name, err)
			}
		}
	})

	t.Run("drop", func(t *testing.T) {
		d := newDriver(t, f, 2, nil)
		if err := d.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := d.GetFacts(context.Background()); !errors.Is(err, driver.ErrConnect) {
			t.Errorf("drop: %v", err)
		}
		// The driver can be reopened (the drop device drops again on show).
		if err := d.Open(context.Background()); err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if _, err := d.Cli(context.Background(), []string{"terminal length 0"}); err != nil {
			t.Errorf("non-show command after reopen: %v", err)
		}
		_ = d.Close(context.Background())
	})
}

// TestSequentialGoroutines drives one driver from several goroutines; the
// driver serialises them (run with -race).
func TestSequentialGoroutines(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformEOS, 2, nil)
	d := openDriver(t, f, 0)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = d.GetFacts(context.Background())
			} else {
				_, err = d.GetLLDPNeighbors(context.Background())
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// A caller whose context ends while waiting for the connection gets
	// its context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 5 {
		if _, err := d.GetFacts(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled before start: %v", err)
		}
	}
	// ... and the connection stays usable.
	if !d.IsAlive(context.Background()) {
		t.Error("a cancelled caller closed the connection")
	}
}

func TestToPayload(t *testing.T) {
	v := map[string]driver.InterfaceIP{
		"Ethernet10": {IPv4: map[string]driver.IPPrefix{"10.0.0.1": {PrefixLength: 31}}},
		"Ethernet2":  {IPv4: map[string]driver.IPPrefix{}, IPv6: map[string]driver.IPPrefix{}},
	}
	m := driver.ToPayload(v).(*payload.Map)
	if strings.Join(m.Keys(), ",") != "Ethernet2,Ethernet10" {
		t.Fatalf("order %v", m.Keys())
	}
	e10 := m.Map("Ethernet10")
	if strings.Join(e10.Keys(), ",") != "ipv4" {
		t.Errorf("nil ipv6 kept: %v", e10.Keys())
	}
	if n, _ := e10.Map("ipv4").Map("10.0.0.1").Int("prefix_length"); n != 31 {
		t.Errorf("prefix_length %v", n)
	}
	if strings.Join(m.Map("Ethernet2").Keys(), ",") != "ipv4,ipv6" {
		t.Errorf("empty maps dropped: %v", m.Map("Ethernet2").Keys())
	}
	env := driver.ToPayload(driver.Environment{CPU: map[driver.CPUKey]driver.CPU{driver.CPUIndex(0): {Usage: 1.5}}}).(*payload.Map)
	cpu := env.Map("cpu")
	if k := cpu.Items()[0].Key; k != int64(0) {
		t.Errorf("cpu key %T %v", k, k)
	}
	if u, _ := cpu.Items()[0].Value.(*payload.Map).Get("%usage"); u != 1.5 {
		t.Errorf("%%usage %v", u)
	}
	// junos keys CPUs by text as NAPALM's junos driver ("0", "node1").
	named := driver.ToPayload(driver.Environment{CPU: map[driver.CPUKey]driver.CPU{
		driver.CPUName("node10"): {}, driver.CPUName("node2"): {}, driver.CPUName("0"): {}}}).(*payload.Map).Map("cpu")
	var keys []any
	for _, it := range named.Items() {
		keys = append(keys, it.Key)
	}
	if !reflect.DeepEqual(keys, []any{"0", "node2", "node10"}) {
		t.Errorf("named cpu keys %#v", keys)
	}
	if b, err := json.Marshal(map[driver.CPUKey]int{driver.CPUIndex(3): 1, driver.CPUName("node0"): 2}); err != nil || string(b) != `{"3":1,"node0":2}` {
		t.Errorf("cpu keys as JSON %s %v", b, err)
	}
	tr := driver.ToPayload(driver.TracerouteResult{Success: map[int]driver.TracerouteHop{}}).(*payload.Map)
	if strings.Join(tr.Keys(), ",") != "success" {
		t.Errorf("traceroute keys %v", tr.Keys())
	}
	if l := driver.ToPayload([]driver.ARPEntry(nil)); len(l.([]any)) != 0 || l == nil {
		t.Errorf("nil slice %#v", l)
	}
}

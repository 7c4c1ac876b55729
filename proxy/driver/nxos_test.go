package driver_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/wire/payload"
)

// configBody drops the comment header ("!Command: ...", "!Running configuration last done
// at: ...") of an NX-OS configuration file.
func configBody(s string) string {
	_, body, _ := strings.Cut(s, "\n\n")
	return body
}

func TestNXOSRegistryAndOptions(t *testing.T) {
	r := driver.Default()
	for _, name := range []string{"nxos_ssh", "nxos", "NXOS"} {
		d, err := r.New(name, driver.Options{Host: "192.0.2.1"})
		if err != nil || d.Platform() != "nxos_ssh" || d.Capabilities() != (driver.Capabilities{}) {
			t.Errorf("%s: %v %v", name, d, err)
		}
	}
	for _, args := range []map[string]any{
		{"dest_file_system": "bootflash"}, {"candidate_cfg": "a b"}, {"rollback_cfg": "x/y"}, {"scp_port": 70000},
	} {
		if _, err := r.New("nxos_ssh", driver.Options{Host: "h", OptionalArgs: args}); !errors.Is(err, driver.ErrInvalidArgument) {
			t.Errorf("%v: %v", args, err)
		}
	}
	d, _ := r.New("nxos", driver.Options{Host: "h"})
	if err := d.LoadMergeCandidate(context.Background(), "hostname x"); !errors.Is(err, driver.ErrNotOpen) {
		t.Errorf("unopened load: %v", err)
	}
	if _, err := d.GetNTPStats(context.Background()); !errors.Is(err, driver.ErrNotSupported) {
		t.Errorf("ntp stats: %v", err)
	}
}

func TestNXOSFactsAndGetters(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformNXOS, 3, nil)
	d := openDriver(t, f, 1)
	ctx := context.Background()
	if !d.IsAlive(ctx) {
		t.Fatal("not alive after open")
	}

	facts, err := d.GetFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Uptime < bootAge || facts.Uptime > bootAge+60 {
		t.Errorf("uptime %v", facts.Uptime)
	}
	facts.Uptime = 0
	wantFacts := driver.Facts{Vendor: "Cisco", OSVersion: "9.3(8)", SerialNumber: "9N3K0000002", Model: "Nexus9000 C9300v Chassis",
		Hostname: "sw2", FQDN: "sw2.example.net",
		InterfaceList: []string{"Management0", "Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4", "Loopback0"}}
	if !reflect.DeepEqual(facts, wantFacts) {
		t.Errorf("facts\n got %#v\nwant %#v", facts, wantFacts)
	}
	if keys := strings.Join(driver.ToPayload(facts).(*payload.Map).Keys(), ","); keys != "uptime,vendor,os_version,serial_number,model,hostname,fqdn,interface_list" {
		t.Errorf("facts keys %s", keys)
	}

	ifs, err := d.GetInterfaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantIfs := map[string]driver.Interface{
		"Management0": {IsEnabled: true, IsUp: true, MACAddress: "52:54:00:00:01:C8", LastFlapped: -1, MTU: 1500, Speed: 1000},
		"Ethernet1/1": {IsEnabled: true, IsUp: true, Description: "hosts", MACAddress: "52:54:00:00:01:01", LastFlapped: -1, MTU: 1500, Speed: 10000},
		"Ethernet1/2": {IsEnabled: true, IsUp: true, Description: "to sw3 Ethernet1/3", MACAddress: "52:54:00:00:01:02", LastFlapped: -1, MTU: 1500, Speed: 10000},
		"Ethernet1/3": {IsEnabled: true, IsUp: true, Description: "to sw1 Ethernet1/2", MACAddress: "52:54:00:00:01:03", LastFlapped: -1, MTU: 1500, Speed: 10000},
		"Ethernet1/4": {MACAddress: "52:54:00:00:01:04", LastFlapped: -1, MTU: 1500, Speed: 10000},
		"Loopback0":   {IsEnabled: true, IsUp: true, LastFlapped: -1, MTU: 1500, Speed: 8000},
	}
	if !reflect.DeepEqual(ifs, wantIfs) {
		t.Errorf("interfaces\n got %+v\nwant %+v", ifs, wantIfs)
	}

	v4 := func(a string, n int) driver.InterfaceIP {
		return driver.InterfaceIP{IPv4: map[string]driver.IPPrefix{a: {PrefixLength: n}}}
	}
	wantIPs := map[string]driver.InterfaceIP{"Ethernet1/2": v4("10.0.0.2", 31), "Ethernet1/3": v4("10.0.0.1", 31),
		"loopback0": v4("10.255.0.2", 32), "mgmt0": v4("172.16.0.2", 16)}
	if ips, err := d.GetInterfacesIP(ctx); err != nil || !reflect.DeepEqual(ips, wantIPs) {
		t.Errorf("interfaces ip %v\n got %+v\nwant %+v", err, ips, wantIPs)
	}

	gw := driver.ARPEntry{Interface: "mgmt0", MAC: "52:54:00:FF:FF:FE", IP: "172.16.255.254", Age: 70}
	arpCases := []struct {
		vrf  string
		want []driver.ARPEntry
	}{
		{"", []driver.ARPEntry{
			{Interface: "Ethernet1/3", MAC: "52:54:00:00:00:02", IP: "10.0.0.0", Age: 42},
			{Interface: "Ethernet1/2", MAC: "52:54:00:00:02:03", IP: "10.0.0.3", Age: 44}, gw}},
		{"management", []driver.ARPEntry{gw}},
		{"default", []driver.ARPEntry{
			{Interface: "Ethernet1/3", MAC: "52:54:00:00:00:02", IP: "10.0.0.0", Age: 42},
			{Interface: "Ethernet1/2", MAC: "52:54:00:00:02:03", IP: "10.0.0.3", Age: 44}}},
	}
	for _, tc := range arpCases {
		if arp, err := d.GetArpTable(ctx, tc.vrf); err != nil || !reflect.DeepEqual(arp, tc.want) {
			t.Errorf("arp vrf %q: %v\n got %+v\nwant %+v", tc.vrf, err, arp, tc.want)
		}
	}
	if _, err := d.GetArpTable(ctx, "nope"); !errors.Is(err, driver.ErrCommand) {
		t.Errorf("arp of an unknown vrf: %v", err)
	}

	wantLLDP := map[string][]driver.LLDPNeighbor{"Ethernet1/2": {{Hostname: "sw3", Port: "Ethernet1/3"}},
		"Ethernet1/3": {{Hostname: "sw1", Port: "Ethernet1/2"}}}
	if lldp, err := d.GetLLDPNeighbors(ctx); err != nil || !reflect.DeepEqual(lldp, wantLLDP) {
		t.Errorf("lldp %v %+v", err, lldp)
	}
	wantDetail := driver.LLDPNeighborDetail{RemotePort: "Ethernet1/3", RemotePortDescription: "to sw2 Ethernet1/2",
		RemoteChassisID: "5254.0000.0200", RemoteSystemName: "sw3",
		RemoteSystemDescription: "Cisco Nexus Operating System (NX-OS) Software 9.3(8)",
		RemoteSystemCapab:       []string{"bridge", "router"}, RemoteSystemEnableCapab: []string{"bridge", "router"}}
	for _, iface := range []string{"", "Eth1/2"} {
		det, err := d.GetLLDPNeighborsDetail(ctx, iface)
		if err != nil || len(det["Ethernet1/2"]) != 1 || !reflect.DeepEqual(det["Ethernet1/2"][0], wantDetail) ||
			(iface != "" && len(det) != 1) || (iface == "" && len(det) != 2) {
			t.Errorf("lldp detail %q: %v\n got %+v\nwant %+v", iface, err, det, wantDetail)
		}
	}

	wantMAC := []driver.MACEntry{{MAC: "52:54:56:00:01:A1", Interface: "Ethernet1/1", VLAN: 10, Active: true, Moves: -1, LastMove: -1}}
	if mac, err := d.GetMACAddressTable(ctx); err != nil || !reflect.DeepEqual(mac, wantMAC) {
		t.Errorf("mac %v %+v", err, mac)
	}

	env, err := d.GetEnvironment(ctx)
	wantEnv := driver.Environment{
		Fans:  map[string]driver.Fan{"invalid": {Status: true}},
		Power: map[string]driver.Power{"invalid": {Status: true, Output: -1, Capacity: -1}},
		CPU:   map[driver.CPUKey]driver.CPU{driver.CPUIndex(0): {Usage: 7}, driver.CPUIndex(1): {Usage: 4.5}}, Memory: driver.Memory{AvailableRAM: 16409064, UsedRAM: 5877036},
		Temperature: map[string]driver.Temperature{"FRONT-1": {Temperature: 29}, "BACK-1": {Temperature: 26}, "CPU-1": {Temperature: 37}},
	}
	if err != nil || !reflect.DeepEqual(env, wantEnv) {
		t.Errorf("environment %v\n got %+v\nwant %+v", err, env, wantEnv)
	}

	if srv, err := d.GetNTPServers(ctx); err != nil || !reflect.DeepEqual(srv, map[string]driver.NTPServer{"172.16.255.254": {}}) {
		t.Errorf("ntp servers %v %v", err, srv)
	}
	// NAPALM nxos_ssh lists every association for both getters.
	if peers, err := d.GetNTPPeers(ctx); err != nil || !reflect.DeepEqual(peers, map[string]driver.NTPPeer{"172.16.255.254": {}}) {
		t.Errorf("ntp peers %v %v", err, peers)
	}

	bgp, err := d.GetBGPNeighbors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	up := 3*86400 + 2*3600
	af := map[string]driver.BGPAFStats{"ipv4": {ReceivedPrefixes: 1, AcceptedPrefixes: -1, SentPrefixes: -1}}
	wantBGP := map[string]driver.BGPVRF{"global": {RouterID: "10.255.0.2", Peers: map[string]driver.BGPPeer{
		"10.0.0.0": {LocalAS: 65002, RemoteAS: 65001, RemoteID: "0.0.0.0", IsUp: true, IsEnabled: true, Uptime: up, AddressFamily: af},
		"10.0.0.3": {LocalAS: 65002, RemoteAS: 65003, RemoteID: "0.0.0.0", IsUp: true, IsEnabled: true, Uptime: up, AddressFamily: af},
	}}}
	if !reflect.DeepEqual(bgp, wantBGP) {
		t.Errorf("bgp\n got %+v\nwant %+v", bgp, wantBGP)
	}

	cfg, err := d.GetConfig(ctx, "all")
	if err != nil || !strings.HasPrefix(cfg.Running, "!Running configuration last done at:") ||
		!strings.Contains(cfg.Running, "\nhostname sw2\n") || !strings.Contains(cfg.Startup, "hostname sw2") ||
		strings.Contains(cfg.Running, "!Command") || strings.Contains(cfg.Running, "!Time") || cfg.Candidate != "" {
		t.Errorf("get_config %v %+v", err, cfg)
	}

	out, err := d.Cli(ctx, []string{"show hostname", "show bogus"})
	if err != nil || out["show hostname"] != "sw2" || !strings.Contains(out["show bogus"], "% Invalid command at '^' marker.") {
		t.Errorf("cli %v %q", err, out)
	}

	pingCases := []struct {
		o       driver.PingOptions
		replies int
		errPart string
	}{
		{driver.PingOptions{Destination: "10.0.0.3"}, 5, ""},
		{driver.PingOptions{Destination: "172.16.255.254", VRF: "management", Count: 2}, 2, ""},
		{driver.PingOptions{Destination: "10.0.0.3", Count: 3, Source: "10.0.0.2"}, 3, ""},
		{driver.PingOptions{Destination: "10.9.9.9"}, 0, "connect: Network is unreachable"},
	}
	for _, tc := range pingCases {
		res, err := d.Ping(ctx, tc.o)
		switch {
		case err != nil:
			t.Errorf("ping %+v: %v", tc.o, err)
		case tc.errPart != "":
			if res.Success != nil || !strings.Contains(res.Error, tc.errPart) {
				t.Errorf("ping %+v: %+v", tc.o, res)
			}
		case res.Success == nil || len(res.Success.Results) != tc.replies || res.Success.ProbesSent != tc.replies ||
			res.Success.PacketLoss != 0 || res.Success.RTTMin <= 0 || res.Success.Results[0].IPAddress != tc.o.Destination:
			t.Errorf("ping %+v: %+v %+v", tc.o, res, res.Success)
		}
	}
	tr, err := d.Traceroute(ctx, driver.TracerouteOptions{Destination: "10.0.0.3"})
	if err != nil || len(tr.Success) != 1 || len(tr.Success[1].Probes) != 3 || tr.Success[1].Probes[2].IPAddress != "10.0.0.3" {
		t.Errorf("traceroute %v %+v", err, tr)
	}
	if tr, err := d.Traceroute(ctx, driver.TracerouteOptions{Destination: "10.9.9.9"}); err != nil || tr.Error == "" {
		t.Errorf("traceroute to nowhere %v %+v", err, tr)
	}
	if _, err := d.Ping(ctx, driver.PingOptions{Destination: "10.0.0.3; reload"}); !errors.Is(err, driver.ErrInvalidArgument) {
		t.Errorf("ping injection: %v", err)
	}
}

func TestNXOSConfigFlow(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformNXOS, 1, nil)
	dev := f.Device(0)
	d := openDriver(t, f, 0)
	ctx := context.Background()
	before := configBody(dev.RunningConfig())
	const ntp = "ntp server 10.0.0.1 use-vrf management"

	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("compare without candidate: %q %v", diff, err)
	}
	argCases := []struct {
		msg    string
		revert int
		want   error
	}{{"", 0, driver.ErrCommand}, {"msg", 0, driver.ErrNotSupported}, {"", 60, driver.ErrNotSupported}, {"", -1, driver.ErrInvalidArgument}}
	for _, tc := range argCases {
		if err := d.CommitConfig(ctx, tc.msg, tc.revert); !errors.Is(err, tc.want) {
			t.Errorf("commit %q %d: %v", tc.msg, tc.revert, err)
		}
	}
	if err := d.Rollback(ctx); !errors.Is(err, driver.ErrCommand) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("rollback without a checkpoint: %v", err)
	}
	if err := d.LoadMergeCandidate(ctx, " \n"); !errors.Is(err, driver.ErrInvalidArgument) {
		t.Errorf("empty merge: %v", err)
	}

	// merge, compare, discard: the running configuration is untouched.
	if err := d.LoadMergeCandidate(ctx, ntp+"\nhostname sw1\n"); err != nil {
		t.Fatal(err)
	}
	if diff, err := d.CompareConfig(ctx); err != nil || diff != ntp {
		t.Fatalf("merge diff %v: %q", err, diff)
	}
	if err := d.DiscardConfig(ctx); err != nil {
		t.Fatal(err)
	}
	if after := configBody(dev.RunningConfig()); after != before {
		t.Fatalf("discard changed the running config:\n%s", after)
	}
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("compare after discard: %q %v", diff, err)
	}

	// two merge loads accumulate; commit applies and saves them.
	if err := d.LoadMergeCandidate(ctx, ntp); err != nil {
		t.Fatal(err)
	}
	const more = "interface loopback5\n  description five\n  ip address 10.5.5.5/32\n" +
		"router bgp 65001\n  neighbor 10.9.9.9\n    remote-as 65999\n    address-family ipv4 unicast"
	if err := d.LoadMergeCandidate(ctx, more); err != nil {
		t.Fatal(err)
	}
	if diff, err := d.CompareConfig(ctx); err != nil || diff != ntp+"\n"+more {
		t.Fatalf("accumulated merge diff %v: %q", err, diff)
	}
	if err := d.CommitConfig(ctx, "", 0); err != nil {
		t.Fatal(err)
	}
	run := dev.RunningConfig()
	if !strings.Contains(run, ntp) || !strings.Contains(run, "interface loopback5\n  description five\n") ||
		!strings.Contains(run, "  neighbor 10.9.9.9\n    remote-as 65999\n    address-family ipv4 unicast\n") ||
		!strings.Contains(dev.StartupConfig(), "interface loopback5") {
		t.Fatalf("merge not applied/saved:\n%s", run)
	}
	if _, ok := dev.File("rollback_config.txt"); !ok {
		t.Fatalf("no rollback checkpoint: %v", dev.Files())
	}
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("compare after commit: %q %v", diff, err)
	}

	// rollback restores the configuration before the commit (and saves it).
	if err := d.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := configBody(dev.RunningConfig()); got != before || strings.Contains(dev.StartupConfig(), "loopback5") {
		t.Fatalf("rollback not applied:\n%s", got)
	}

	// replace: the candidate travels over SCP, the diff is the rollback patch.
	cfg, err := d.GetConfig(ctx, "running")
	if err != nil {
		t.Fatal(err)
	}
	full := strings.Replace(cfg.Running, "ntp server 172.16.255.254 use-vrf management", "ntp server 192.0.2.99 use-vrf management", 1)
	if full == cfg.Running {
		t.Fatalf("running config lacks the ntp server:\n%s", cfg.Running)
	}
	if err := d.LoadReplaceCandidate(ctx, full); err != nil {
		t.Fatal(err)
	}
	if got, ok := dev.File("candidate_config.txt"); !ok || got != full {
		t.Fatalf("candidate file %v:\n%s", ok, got)
	}
	diff, err := d.CompareConfig(ctx)
	if err != nil || diff != "no ntp server 172.16.255.254 use-vrf management\nntp server 192.0.2.99 use-vrf management" {
		t.Fatalf("replace diff %v:\n%s", err, diff)
	}
	if c, err := d.GetConfig(ctx, "candidate"); err != nil || c != (driver.Config{}) {
		t.Errorf("candidate %v %+v", err, c)
	}
	if err := d.CommitConfig(ctx, "", 0); err != nil {
		t.Fatal(err)
	}
	run = dev.RunningConfig()
	if !strings.Contains(run, "ntp server 192.0.2.99") || strings.Contains(run, "172.16.255.254 use-vrf") ||
		!strings.Contains(run, "hostname sw1") || !strings.Contains(dev.StartupConfig(), "192.0.2.99") {
		t.Fatalf("replace not applied:\n%s", run)
	}

	// a replace load followed by a discard deletes the candidate file.
	if err := d.LoadReplaceCandidate(ctx, full); err != nil {
		t.Fatal(err)
	}
	if err := d.DiscardConfig(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := dev.File("candidate_config.txt"); ok {
		t.Error("discard kept the candidate file")
	}
	if !d.IsAlive(ctx) {
		t.Fatal("not alive after the flow")
	}
}

func TestNXOSConfigErrors(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformNXOS, 1, nil)
	dev := f.Device(0)
	d := openDriver(t, f, 0)
	ctx := context.Background()
	before := configBody(dev.RunningConfig())
	cfg, err := d.GetConfig(ctx, "running")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		load    func() error
		loadErr error
		parts   []string // in the commit error
	}{
		{"merge with a bad line", func() error {
			return d.LoadMergeCandidate(ctx, "ntp server 10.9.9.9 use-vrf management\nthis is not a command\nhostname never\n")
		}, nil, []string{"this is not a command", "% Invalid command at '^' marker.", "automatic rollback attempted"}},
		{"replace with a bad line", func() error {
			return d.LoadReplaceCandidate(ctx, cfg.Running+"\nthis is not a command\n")
		}, nil, []string{"Rollback failed.", "Syntax error while parsing 'this is not a command'"}},
	}
	for _, tc := range cases {
		if err := tc.load(); err != nil {
			t.Fatalf("%s: load: %v", tc.name, err)
		}
		err := d.CommitConfig(ctx, "", 0)
		if !errors.Is(err, driver.ErrCommand) {
			t.Fatalf("%s: commit: %v", tc.name, err)
		}
		for _, p := range tc.parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s: error lacks %q: %v", tc.name, p, err)
			}
		}
		if after := configBody(dev.RunningConfig()); after != before {
			t.Errorf("%s: running config changed:\n%s", tc.name, after)
		}
		if err := d.DiscardConfig(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Without "feature scp-server" the SCP transfer is refused by the CLI.
	if err := dev.SetRunningConfig(strings.Replace(dev.RunningConfig(), "feature scp-server\n", "", 1)); err != nil {
		t.Fatal(err)
	}
	err = d.LoadReplaceCandidate(ctx, cfg.Running)
	if !errors.Is(err, driver.ErrCommand) || !strings.Contains(err.Error(), "Invalid command") {
		t.Errorf("scp without scp-server: %v", err)
	}
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Errorf("a failed load left a candidate: %q %v", diff, err)
	}
	if !d.IsAlive(ctx) {
		t.Fatal("not alive")
	}
}

func TestNXOSFaults(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformNXOS, 3, map[int]devsim.Fault{0: devsim.FaultHang, 1: devsim.FaultBadAuth, 2: devsim.FaultDrop})
	if err := newDriver(t, f, 1, nil).Open(context.Background()); !errors.Is(err, driver.ErrAuth) {
		t.Errorf("badauth: %v", err)
	}
	cases := []struct {
		name string
		dev  int
		op   func(d driver.Driver, ctx context.Context) error
		want error
	}{
		{"hang facts", 0, func(d driver.Driver, ctx context.Context) error { _, err := d.GetFacts(ctx); return err }, driver.ErrTimeout},
		{"hang compare", 0, func(d driver.Driver, ctx context.Context) error {
			if err := d.LoadMergeCandidate(ctx, "hostname x"); err != nil {
				return err
			}
			_, err := d.CompareConfig(ctx)
			return err
		}, driver.ErrTimeout},
		{"drop interfaces", 2, func(d driver.Driver, ctx context.Context) error { _, err := d.GetInterfaces(ctx); return err }, driver.ErrConnect},
	}
	for _, tc := range cases {
		d := newDriver(t, f, tc.dev, nil)
		if err := d.Open(context.Background()); err != nil {
			t.Fatalf("%s: open: %v", tc.name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := tc.op(d, ctx)
		cancel()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if d.IsAlive(context.Background()) {
			t.Errorf("%s: alive after the fault", tc.name)
		}
		_ = d.Close(context.Background())
	}
}

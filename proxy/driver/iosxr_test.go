package driver_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/wire/payload"
)

func TestIOSXRFactsAndGetters(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformIOSXR, 3, nil)
	d := openDriver(t, f, 1)
	ctx := context.Background()
	if d.Platform() != "iosxr" || !d.IsAlive(ctx) {
		t.Fatalf("platform %q alive %v", d.Platform(), d.IsAlive(ctx))
	}

	facts, err := d.GetFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Uptime < bootAge || facts.Uptime > bootAge+60 {
		t.Errorf("uptime %v", facts.Uptime)
	}
	facts.Uptime = 0
	want := driver.Facts{Vendor: "Cisco", OSVersion: "7.3.2", SerialNumber: "XRV90000002", Model: "IOS-XRv 9000",
		Hostname: "sw2", FQDN: "sw2.example.net", InterfaceList: []string{"GigabitEthernet0/0/0/0",
			"GigabitEthernet0/0/0/1", "GigabitEthernet0/0/0/2", "Loopback0", "MgmtEth0/RP0/CPU0/0"}}
	if !reflect.DeepEqual(facts, want) {
		t.Errorf("facts\n got %#v\nwant %#v", facts, want)
	}
	if keys := strings.Join(driver.ToPayload(facts).(*payload.Map).Keys(), ","); keys != "uptime,vendor,os_version,serial_number,model,hostname,fqdn,interface_list" {
		t.Errorf("facts keys %s", keys)
	}

	ifs, err := d.GetInterfaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const flapped = 3*86400 + 2*3600 // "3d02h"
	wantIfs := map[string]driver.Interface{
		"GigabitEthernet0/0/0/0": {IsEnabled: true, IsUp: true, Description: "to sw3 GigabitEthernet0/0/0/1",
			MACAddress: "52:54:00:00:01:01", LastFlapped: flapped, MTU: 1514, Speed: 1000},
		"GigabitEthernet0/0/0/2": {MACAddress: "52:54:00:00:01:03", LastFlapped: -1, MTU: 1514, Speed: 1000},
		"Loopback0":              {IsEnabled: true, IsUp: true, LastFlapped: flapped, MTU: 1500},
		"MgmtEth0/RP0/CPU0/0": {IsEnabled: true, IsUp: true, Description: "management", MACAddress: "52:54:00:00:01:30",
			LastFlapped: flapped, MTU: 1514, Speed: 1000},
	}
	if len(ifs) != 5 {
		t.Errorf("%d interfaces: %v", len(ifs), ifs)
	}
	for name, w := range wantIfs {
		if ifs[name] != w {
			t.Errorf("interface %s\n got %+v\nwant %+v", name, ifs[name], w)
		}
	}

	ips, err := d.GetInterfacesIP(ctx)
	v4 := func(a string, n int) driver.InterfaceIP {
		return driver.InterfaceIP{IPv4: map[string]driver.IPPrefix{a: {PrefixLength: n}}}
	}
	wantIPs := map[string]driver.InterfaceIP{"Loopback0": v4("10.255.0.2", 32), "MgmtEth0/RP0/CPU0/0": v4("172.16.0.2", 16),
		"GigabitEthernet0/0/0/0": v4("10.0.0.2", 31), "GigabitEthernet0/0/0/1": v4("10.0.0.1", 31)}
	if err != nil || !reflect.DeepEqual(ips, wantIPs) {
		t.Errorf("interfaces ip %v\n got %v\nwant %v", err, ips, wantIPs)
	}

	arp, err := d.GetArpTable(ctx, "")
	wantARP := []driver.ARPEntry{
		{Interface: "GigabitEthernet0/0/0/1", MAC: "52:54:00:00:00:01", IP: "10.0.0.0", Age: 42},
		{Interface: "GigabitEthernet0/0/0/1", MAC: "52:54:00:00:01:02", IP: "10.0.0.1", Age: -1},
		{Interface: "GigabitEthernet0/0/0/0", MAC: "52:54:00:00:01:01", IP: "10.0.0.2", Age: -1},
		{Interface: "GigabitEthernet0/0/0/0", MAC: "52:54:00:00:02:02", IP: "10.0.0.3", Age: 44},
		{Interface: "MgmtEth0/RP0/CPU0/0", MAC: "52:54:00:00:01:30", IP: "172.16.0.2", Age: -1},
		{Interface: "MgmtEth0/RP0/CPU0/0", MAC: "52:54:00:FF:FF:FE", IP: "172.16.255.254", Age: 70},
	}
	if err != nil || !reflect.DeepEqual(arp, wantARP) {
		t.Errorf("arp %v\n got %+v\nwant %+v", err, arp, wantARP)
	}

	lldp, err := d.GetLLDPNeighbors(ctx)
	wantLLDP := map[string][]driver.LLDPNeighbor{
		"GigabitEthernet0/0/0/0": {{Hostname: "sw3", Port: "GigabitEthernet0/0/0/1"}},
		"GigabitEthernet0/0/0/1": {{Hostname: "sw1", Port: "GigabitEthernet0/0/0/0"}},
	}
	if err != nil || !reflect.DeepEqual(lldp, wantLLDP) {
		t.Errorf("lldp %v\n got %+v\nwant %+v", err, lldp, wantLLDP)
	}
	det, err := d.GetLLDPNeighborsDetail(ctx, "GigabitEthernet0/0/0/0")
	wantDet := map[string][]driver.LLDPNeighborDetail{"GigabitEthernet0/0/0/0": {{RemotePort: "GigabitEthernet0/0/0/1",
		RemotePortDescription: "to sw2 GigabitEthernet0/0/0/0", RemoteChassisID: "52:54:00:00:02:00", RemoteSystemName: "sw3",
		RemoteSystemDescription: "7.3.2, IOS-XRv 9000", RemoteSystemCapab: []string{"router"}, RemoteSystemEnableCapab: []string{"router"}}}}
	if err != nil || !reflect.DeepEqual(det, wantDet) {
		t.Errorf("lldp detail %v\n got %+v\nwant %+v", err, det, wantDet)
	}

	srv, err := d.GetNTPServers(ctx)
	if err != nil || !reflect.DeepEqual(srv, map[string]driver.NTPServer{"172.16.255.254": {}}) {
		t.Errorf("ntp servers %v %v", err, srv)
	}
	if peers, err := d.GetNTPPeers(ctx); err != nil || len(peers) != 0 {
		t.Errorf("ntp peers %v %v", err, peers)
	}
	stats, err := d.GetNTPStats(ctx)
	wantStats := []driver.NTPStats{{Remote: "172.16.255.254", ReferenceID: ".GPS.", Synchronized: true, Stratum: 1,
		Type: "-", When: "33", HostPoll: 64, Reachability: 377, Delay: 0.51, Offset: -0.021, Jitter: 1.938}}
	if err != nil || !reflect.DeepEqual(stats, wantStats) {
		t.Errorf("ntp stats %v\n got %+v\nwant %+v", err, stats, wantStats)
	}

	bgp, err := d.GetBGPNeighbors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := bgp["global"]
	if len(bgp) != 1 || g.RouterID != "10.255.0.2" || len(g.Peers) != 2 {
		t.Fatalf("bgp %+v", bgp)
	}
	for addr, as := range map[string]int64{"10.0.0.3": 65003, "10.0.0.0": 65001} {
		p := g.Peers[addr]
		af := p.AddressFamily["ipv4"]
		if p.LocalAS != 65002 || p.RemoteAS != as || !p.IsUp || !p.IsEnabled || p.Uptime != flapped ||
			af != (driver.BGPAFStats{ReceivedPrefixes: 1, AcceptedPrefixes: 1, SentPrefixes: -1}) {
			t.Errorf("bgp peer %s: %+v", addr, p)
		}
	}

	// Getters without a CLI parser go through the XML agent.
	if mac, err := d.GetMACAddressTable(ctx); err != nil || len(mac) != 0 {
		t.Errorf("mac table: %v %v", mac, err)
	}
	if env, err := d.GetEnvironment(ctx); err != nil || env.Power["PM0"] != (driver.Power{Status: true, Capacity: 3000, Output: 180}) {
		t.Errorf("environment: %+v %v", env, err)
	}
	if cli, err := d.Cli(ctx, []string{"show clock"}); err != nil || !strings.Contains(cli["show clock"], "UTC") {
		t.Errorf("cli after the XML agent: %v %v", cli, err)
	}
	if ping, err := d.Ping(ctx, driver.PingOptions{Destination: "10.0.0.3"}); err != nil || ping.Success != nil || ping.Error == "" {
		t.Errorf("ping on a simulator without ping: %v %+v", err, ping)
	}

	cfg, err := d.GetConfig(ctx, "all")
	if err != nil || !strings.HasPrefix(cfg.Running, "!! IOS XR Configuration 7.3.2") || !strings.Contains(cfg.Running, "\nhostname sw2\n") ||
		strings.Contains(cfg.Running, "Building configuration") || cfg.Candidate != "" || cfg.Startup != "" {
		t.Errorf("get_config %v %+v", err, cfg)
	}
	out, err := d.Cli(ctx, []string{"show clock", "show running-config hostname"})
	if err != nil || out["show running-config hostname"] != "hostname sw2" || strings.Contains(out["show clock"], "\n") {
		t.Errorf("cli %v %q", err, out)
	}
	if _, err := d.Cli(ctx, []string{"show bogus"}); !errors.Is(err, driver.ErrCommand) || !strings.Contains(err.Error(), "Invalid input") {
		t.Errorf("cli invalid: %v", err)
	}
}

func TestIOSXRConfigFlow(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformIOSXR, 1, nil)
	dev := f.Device(0)
	d := openDriver(t, f, 0)
	ctx := context.Background()
	before := dev.RunningConfig()
	if c := d.Capabilities(); !c.HasConfirmedCommit || !c.CommitMessage || !c.CandidateConfig {
		t.Fatalf("capabilities %+v", c)
	}

	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("compare without candidate: %q %v", diff, err)
	}
	if err := d.CommitConfig(ctx, "", 0); !errors.Is(err, driver.ErrCommand) {
		t.Fatalf("commit without candidate: %v", err)
	}
	if err := d.ConfirmCommit(ctx); !errors.Is(err, driver.ErrCommand) {
		t.Fatalf("confirm without a pending commit: %v", err)
	}
	if err := d.Rollback(ctx); !errors.Is(err, driver.ErrCommand) {
		t.Fatalf("rollback without history: %v", err)
	}

	// merge, compare, discard: the running configuration is untouched.
	if err := d.LoadMergeCandidate(ctx, "ntp\n server 10.0.0.1\n!\n"); err != nil {
		t.Fatal(err)
	}
	diff, err := d.CompareConfig(ctx)
	if err != nil || !strings.Contains(diff, "\n+ server 10.0.0.1\n") || strings.Count(diff, "\n+") != 2 || strings.Count(diff, "\n-") != 0 {
		t.Fatalf("merge diff %v:\n%s", err, diff)
	}
	if c, err := d.GetConfig(ctx, "candidate"); err != nil || !strings.Contains(c.Candidate, " server 10.0.0.1\n") ||
		!strings.Contains(c.Candidate, "router bgp 65001") || c.Running != "" {
		t.Errorf("candidate %v %+v", err, c)
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

	// Two merge loads add up; the commit carries its comment.
	if err := d.LoadMergeCandidate(ctx, "ntp server 192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if err := d.LoadMergeCandidate(ctx, "interface Loopback5\n description five\n ipv4 address 10.5.5.5 255.255.255.255\nhostname r1\n"); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitConfig(ctx, "gsalt test", 0); err != nil {
		t.Fatal(err)
	}
	run := dev.RunningConfig()
	for _, w := range []string{" server 192.0.2.1\n", "interface Loopback5\n description five\n ipv4 address 10.5.5.5 255.255.255.255\n!", "hostname r1\n"} {
		if !strings.Contains(run, w) {
			t.Fatalf("commit lacks %q:\n%s", w, run)
		}
	}
	if out, err := d.Cli(ctx, []string{"show configuration commit list detail"}); err != nil ||
		!strings.Contains(out["show configuration commit list detail"], "Comment:  gsalt test") {
		t.Errorf("commit comment: %v %q", err, out)
	}
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("compare after commit: %q %v", diff, err)
	}

	// rollback restores the configuration before the commit.
	if err := d.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if run := dev.RunningConfig(); strings.Contains(run, "192.0.2.1") || strings.Contains(run, "Loopback5") || !strings.Contains(run, "hostname sw1") {
		t.Fatalf("rollback not applied:\n%s", run)
	}

	// replace with a full configuration.
	cfg, err := d.GetConfig(ctx, "running")
	if err != nil {
		t.Fatal(err)
	}
	full := strings.Replace(cfg.Running, "server 172.16.255.254", "server 192.0.2.99", 1)
	if full == cfg.Running {
		t.Fatalf("running config lacks the ntp server:\n%s", cfg.Running)
	}
	if err := d.LoadReplaceCandidate(ctx, full); err != nil {
		t.Fatal(err)
	}
	diff, err = d.CompareConfig(ctx)
	if err != nil || !strings.Contains(diff, "\n+ server 192.0.2.99") || !strings.Contains(diff, "\n- server 172.16.255.254") ||
		strings.Count(diff, "\n-") != 1 || strings.Count(diff, "\n+") != 2 {
		t.Fatalf("replace diff %v:\n%s", err, diff)
	}
	if err := d.CommitConfig(ctx, "", 0); err != nil {
		t.Fatal(err)
	}
	run = dev.RunningConfig()
	if !strings.Contains(run, "server 192.0.2.99") || strings.Contains(run, "172.16.255.254\n!\nssh") ||
		!strings.Contains(run, "router bgp 65001") || !strings.Contains(run, "0.0.0.0/0 172.16.255.254") {
		t.Fatalf("replace not applied:\n%s", run)
	}

	// A replace with a partial configuration removes the rest, keeping the physical interfaces.
	if err := d.LoadReplaceCandidate(ctx, "hostname tiny\n"); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitConfig(ctx, "", 0); err != nil {
		t.Fatal(err)
	}
	if run := dev.RunningConfig(); strings.Contains(run, "router bgp") || !strings.Contains(run, "hostname tiny\ninterface MgmtEth0/RP0/CPU0/0\n!\ninterface GigabitEthernet0/0/0/0\n!") {
		t.Fatalf("partial replace:\n%s", run)
	}
	if err := d.Rollback(ctx); err != nil || !strings.Contains(dev.RunningConfig(), "router bgp 65001") {
		t.Fatalf("rollback of the replace: %v", err)
	}
	if !d.IsAlive(ctx) {
		t.Fatal("not alive after the flow")
	}
}

func TestIOSXRConfirmedCommit(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformIOSXR, 1, nil)
	dev := f.Device(0)
	d := openDriver(t, f, 0)
	ctx := context.Background()
	pending := func() bool {
		t.Helper()
		p, err := d.HasPendingCommit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	// Confirmed in time: the change stays.
	if err := d.LoadMergeCandidate(ctx, "hostname kept"); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitConfig(ctx, "trial", 60); err != nil {
		t.Fatal(err)
	}
	if !pending() || !strings.Contains(dev.RunningConfig(), "hostname kept") {
		t.Fatal("no pending commit after commit confirmed")
	}
	if err := d.LoadMergeCandidate(ctx, "hostname other"); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitConfig(ctx, "", 30); !errors.Is(err, driver.ErrCommand) || !strings.Contains(err.Error(), "already pending") {
		t.Fatalf("second commit confirmed: %v", err)
	}
	if err := d.DiscardConfig(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.ConfirmCommit(ctx); err != nil {
		t.Fatal(err)
	}
	if pending() || !strings.Contains(dev.RunningConfig(), "hostname kept") {
		t.Fatal("confirm_commit did not keep the change")
	}

	// Not confirmed: the device reverts after the timer.
	if err := d.LoadMergeCandidate(ctx, "hostname reverted"); err != nil {
		t.Fatal(err)
	}
	if err := d.CommitConfig(ctx, "", 1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dev.RunningConfig(), "hostname reverted") {
		t.Fatal("trial commit not applied")
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return !pending() }, "the trial commit to end")
	if run := dev.RunningConfig(); !strings.Contains(run, "hostname kept") || strings.Contains(run, "reverted") {
		t.Fatalf("not reverted:\n%s", run)
	}
	if err := d.ConfirmCommit(ctx); !errors.Is(err, driver.ErrCommand) {
		t.Fatalf("confirm after the revert: %v", err)
	}
}

// holdLock opens an interactive session on device i that keeps the
// exclusive configuration lock until the test ends.
func holdLock(t *testing.T, f *devsim.Fleet, i int) {
	t.Helper()
	c, err := ssh.Dial("tcp", f.Addr(i), &ssh.ClientConfig{User: "admin", Auth: []ssh.AuthMethod{ssh.Password("admin")},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &testutil.Buffer{}
	s.Stdout = out
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Write([]byte("configure exclusive\r")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool { return strings.Contains(out.String(), "(config)#") }, "the configuration prompt")
}

func TestIOSXRConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		load   string
		commit bool   // the load succeeds; the commit fails
		want   string // in the error
		lock   bool   // another session holds the configuration lock
	}{
		{name: "syntax", load: "ntp server 10.9.9.9\nthis is not a command\n", want: `"this is not a command": % Invalid input detected`},
		{name: "IOS syntax", load: "interface GigabitEthernet0/0/0/0\n ip address 10.1.1.1 255.255.255.0\n", want: `"ip address 10.1.1.1`},
		{name: "unknown interface", load: "interface GigabitEthernet0/0/0/9\n shutdown\n", want: "Invalid input"},
		{name: "semantic", load: "interface Loopback9\n ipv4 address 10.9.9.9 255.0.255.0\n", commit: true,
			want: `"ipv4 address 10.9.9.9 255.0.255.0": % Invalid argument or parameter: netmask 255.0.255.0 is not contiguous`},
		{name: "locked", load: "hostname locked", lock: true, want: "locked exclusively by another session"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, devsim.PlatformIOSXR, 1, nil)
			dev := f.Device(0)
			before := dev.RunningConfig()
			d := openDriver(t, f, 0)
			ctx := context.Background()
			if tc.lock {
				holdLock(t, f, 0)
			}
			err := d.LoadMergeCandidate(ctx, tc.load)
			if tc.commit {
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				err = d.CommitConfig(ctx, "", 0)
			}
			if !errors.Is(err, driver.ErrCommand) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrCommand with %q", err, tc.want)
			}
			if after := dev.RunningConfig(); after != before {
				t.Fatalf("running config changed:\n%s", after)
			}
			if diff, err := d.CompareConfig(ctx); !tc.commit && (err != nil || diff != "") {
				t.Errorf("a refused load left a candidate: %q %v", diff, err)
			}
			if !d.IsAlive(ctx) {
				t.Fatal("not alive")
			}
			if !tc.lock {
				// The driver left no configuration session: a new one can lock.
				if _, err := d.Cli(ctx, []string{"show configuration commit list"}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	d, err := driver.Default().New("iosxr", driver.Options{Host: "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CommitConfig(context.Background(), "a\nb", 0); !errors.Is(err, driver.ErrInvalidArgument) {
		t.Errorf("multi-line message: %v", err)
	}
	if err := d.CommitConfig(context.Background(), "", -1); !errors.Is(err, driver.ErrInvalidArgument) {
		t.Errorf("negative revert_in: %v", err)
	}
}

func TestIOSXRFaults(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformIOSXR, 2, map[int]devsim.Fault{0: devsim.FaultHang, 1: devsim.FaultBadAuth})
	d := newDriver(t, f, 1, nil)
	if err := d.Open(context.Background()); !errors.Is(err, driver.ErrAuth) {
		t.Errorf("bad auth: %v", err)
	}
	d = newDriver(t, f, 0, nil)
	if err := d.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := d.GetFacts(ctx); !errors.Is(err, driver.ErrTimeout) {
		t.Errorf("hang: %v", err)
	}
	if d.IsAlive(context.Background()) {
		t.Error("alive after a hang")
	}
}

// TestIOSXRXMLAgent: with optional_args xml_agent every getter goes through
// the simulator's XML agent (NAPALM iosxr's requests) and gives the CLI
// path's data where both have it, plus the getters only the agent serves.
func TestIOSXRXMLAgent(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformIOSXR, 3, nil)
	cli := openDriver(t, f, 1)
	x := newDriver(t, f, 1, func(o *driver.Options) { o.OptionalArgs = map[string]any{"xml_agent": true} })
	ctx := context.Background()
	if err := x.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close(context.Background()) })

	facts, err := x.GetFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := cli.GetFacts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Uptime < bootAge || facts.Uptime > bootAge+60 {
		t.Errorf("uptime %v", facts.Uptime)
	}
	// NAPALM iosxr: the PID as model, the hostname as FQDN.
	want := driver.Facts{Vendor: "Cisco", OSVersion: "7.3.2", SerialNumber: cf.SerialNumber, Model: "R-IOSXRV9000-CC",
		Hostname: "sw2", FQDN: "sw2", InterfaceList: cf.InterfaceList, Uptime: facts.Uptime}
	if !reflect.DeepEqual(facts, want) {
		t.Errorf("facts\n got %#v\nwant %#v", facts, want)
	}
	same := func(what string, a, b any, err1, err2 error) {
		t.Helper()
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %v / %v", what, err1, err2)
			return
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s\n xml %#v\n cli %#v", what, a, b)
		}
	}
	xi, e1 := x.GetInterfaces(ctx)
	ci, e2 := cli.GetInterfaces(ctx)
	for n, in := range xi { // NAPALM iosxr reports the change as an epoch time
		if in.LastFlapped != -1 && ci[n].LastFlapped != -1 {
			in.LastFlapped = ci[n].LastFlapped
		}
		xi[n] = in
	}
	same("interfaces", xi, ci, e1, e2)
	xip, e1 := x.GetInterfacesIP(ctx)
	cip, e2 := cli.GetInterfacesIP(ctx)
	same("interfaces_ip", xip, cip, e1, e2)
	xa, e1 := x.GetArpTable(ctx, "")
	ca, e2 := cli.GetArpTable(ctx, "")
	same("arp", xa, ca, e1, e2)
	xl, e1 := x.GetLLDPNeighborsDetail(ctx, "")
	if e1 != nil || xl["GigabitEthernet0/0/0/0"][0].RemoteSystemName != "sw3" || len(xl) != 2 {
		t.Errorf("lldp detail %+v %v", xl, e1)
	}
	xn, e1 := x.GetLLDPNeighbors(ctx)
	if e1 != nil || len(xn) != 2 {
		t.Errorf("lldp %+v %v", xn, e1)
	}
	xs, e1 := x.GetNTPServers(ctx)
	cs, e2 := cli.GetNTPServers(ctx)
	same("ntp servers", xs, cs, e1, e2)
	xst, e1 := x.GetNTPStats(ctx)
	if e1 != nil || len(xst) != 1 || !xst[0].Synchronized || xst[0].Stratum != 1 || xst[0].Remote != "172.16.255.254" {
		t.Errorf("ntp stats %+v %v", xst, e1)
	}
	xb, e1 := x.GetBGPNeighbors(ctx)
	if g := xb["global"]; e1 != nil || g.RouterID != "10.255.0.2" || len(g.Peers) != 2 || !g.Peers["10.0.0.3"].IsUp ||
		g.Peers["10.0.0.3"].RemoteAS != 65003 || g.Peers["10.0.0.0"].AddressFamily["ipv4"].AcceptedPrefixes != 1 {
		t.Errorf("bgp %+v %v", xb, e1)
	}
	cfg, err := x.GetConfig(ctx, "all")
	if err != nil || !strings.Contains(cfg.Running, "\nhostname sw2\n") || strings.Contains(cfg.Running, "!! IOS XR Configuration") ||
		cfg.Candidate != cfg.Running || cfg.Startup != "" {
		t.Errorf("config %+v %v", cfg, err)
	}
	full, err := driver.GetConfigWith(ctx, x, driver.ConfigOptions{Retrieve: "running", Full: true, Sanitized: true})
	if err != nil || !strings.Contains(full.Running, "\nhostname sw2\n") || full.Candidate != "" {
		t.Errorf("config full %+v %v", full, err)
	}
	cnt, err := x.(driver.CountersGetter).GetInterfacesCounters(ctx)
	if err != nil || len(cnt) != 5 || cnt["GigabitEthernet0/0/0/2"].TxOctets != 0 {
		t.Errorf("counters %+v %v", cnt, err)
	}
	users, err := x.(driver.UsersGetter).GetUsers(ctx)
	if err != nil || !reflect.DeepEqual(users, map[string]driver.User{"admin": {Level: 15, SSHKeys: []string{}}}) {
		t.Errorf("users %+v %v", users, err)
	}
	snmp, err := x.(driver.SNMPGetter).GetSNMPInformation(ctx)
	if err != nil || len(snmp.Community) != 0 {
		t.Errorf("snmp %+v %v", snmp, err)
	}
	bc, err := x.(driver.BGPConfigGetter).GetBGPConfig(ctx, "", "")
	if err != nil || bc["_"]["local_as"] != int64(65002) || len(bc["_"]["neighbors"].(map[string]any)) != 2 {
		t.Errorf("bgp config %+v %v", bc, err)
	}
	bd, err := x.(driver.BGPNeighborsDetailGetter).GetBGPNeighborsDetail(ctx, "10.0.0.3")
	if err != nil || len(bd["global"][65003]) != 1 || bd["global"][65003][0]["local_address"] != "10.0.0.2" ||
		bd["global"][65003][0]["connection_state"] != "Established" {
		t.Errorf("bgp detail %+v %v", bd, err)
	}
	env, err := x.GetEnvironment(ctx)
	if err != nil || env.CPU[driver.CPUName("0/RP0/CPU0")].Usage != 3 || !env.Fans["FT0"].Status || env.Temperature["RSP0"].Temperature != 31 ||
		env.Memory != (driver.Memory{AvailableRAM: 8589934592, UsedRAM: 8589934592 - 5368709120}) {
		t.Errorf("environment %+v %v", env, err)
	}
	if b, err := json.Marshal(env); err != nil || !strings.Contains(string(b), `"cpu":{"0/RP0/CPU0":{"%usage":3}}`) {
		t.Errorf("environment JSON %s %v", b, err)
	}
	pc, err := x.(driver.ProbesConfigGetter).GetProbesConfig(ctx)
	if err != nil || len(pc) != 0 {
		t.Errorf("probes %+v %v", pc, err)
	}
	if _, err := x.GetArpTable(ctx, "mgmt"); !errors.Is(err, driver.ErrNotSupported) {
		t.Errorf("arp with a vrf: %v", err)
	}
	out, err := x.Cli(ctx, []string{"show clock"})
	if err != nil || !strings.Contains(out["show clock"], "UTC") {
		t.Errorf("cli %v %v", out, err)
	}
	tr, err := x.Traceroute(ctx, driver.TracerouteOptions{Destination: "10.0.0.3"})
	if p := tr.Success[1].Probes; err != nil || len(tr.Success) != 1 || len(p) != 3 || p[1].IPAddress != "10.0.0.3" || p[3].HostName != "sw3" {
		t.Errorf("traceroute %+v %v", tr, err)
	}
	if tr, err := x.Traceroute(ctx, driver.TracerouteOptions{Destination: "192.0.2.9"}); err != nil || tr.Error != "% Destination unreachable" {
		t.Errorf("traceroute unreachable %+v %v", tr, err)
	}
	if tr, err := x.Traceroute(ctx, driver.TracerouteOptions{Destination: "nowhere"}); err != nil || tr.Error != "Wrong destination IP Address!" {
		t.Errorf("traceroute bad address %+v %v", tr, err)
	}
	// The connection stays usable by the CLI after the agent.
	if !x.IsAlive(ctx) {
		t.Error("not alive after the XML agent")
	}
}

// TestIOSXRXMLRouteTo: get_route_to through the simulator's RIB reply
// (its BGP routes to the neighbours' loopbacks).
func TestIOSXRXMLRouteTo(t *testing.T) {
	t.Parallel()
	f := startFleet(t, devsim.PlatformIOSXR, 3, nil)
	d := openDriver(t, f, 1)
	ctx := context.Background()
	g := d.(driver.RouteGetter)
	for _, c := range []struct {
		dest, proto, hop, iface, gotProto string
		n                                 int
	}{
		{"10.255.0.3/32", "", "10.0.0.3", "GigabitEthernet0/0/0/0", "bgp", 1},
		{"10.255.0.3/32", "bgp", "10.0.0.3", "GigabitEthernet0/0/0/0", "bgp", 1},
		{"10.255.0.3/32", "static", "", "", "", 0},
		{"192.0.2.0/24", "", "", "", "", 0},
	} {
		r, err := g.GetRouteTo(ctx, driver.RouteOptions{Destination: c.dest, Protocol: c.proto})
		if err != nil || len(r) != c.n {
			t.Errorf("%s %s: %v %v", c.dest, c.proto, r, err)
			continue
		}
		if c.n == 0 {
			continue
		}
		e := r[c.dest]
		if len(e) != 1 || e[0].NextHop != c.hop || e[0].OutgoingInterface != c.iface || e[0].Protocol != c.gotProto || !e[0].CurrentActive {
			t.Errorf("%s %s: %+v", c.dest, c.proto, r)
		}
	}
	if _, err := g.GetRouteTo(ctx, driver.RouteOptions{Destination: "not-a-prefix"}); !errors.Is(err, driver.ErrInvalidArgument) {
		t.Errorf("bad destination: %v", err)
	}
}

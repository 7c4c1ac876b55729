package driver

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/testlab"
)

// frrUpdate rewrites testdata/frr/ from the lab router:
// go test -run TestFRRRouter ./proxy/driver -frr-update (as root, with FRR).
var frrUpdate = flag.Bool("frr-update", false, "rewrite testdata/frr from a real FRR router")

// frrCaptured are the commands whose outputs testdata/frr holds (file
// name: the command with spaces as "_").
var frrCaptured = []string{
	"show version", "show running-config", "show interface vrf all brief",
	"show interface vrf all json", "show bgp vrf all summary json",
}

func frrCapture(t *testing.T, ctx context.Context, d Driver) {
	t.Helper()
	out, err := d.Cli(ctx, frrCaptured)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range frrCaptured {
		p := filepath.Join("testdata", "frr", strings.ReplaceAll(c, " ", "_")+".txt")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(out[c]+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func frrTestdata(t *testing.T, cmd string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "frr", strings.ReplaceAll(cmd, " ", "_")+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ---- a real FRR router in a network namespace (internal/testlab) ----

// frrLab is testlab's FRR router as the driver tests use it.
type frrLab struct{ *testlab.FRR }

func startFRRLab(t *testing.T) *frrLab { return &frrLab{testlab.StartFRR(t)} }

func (l *frrLab) options(u testlab.User) Options {
	return Options{
		Host: "127.0.0.1", Port: l.Port, Username: u.Name, Password: u.Password,
		Timeout: 20 * time.Second,
	}
}

func openFRR(t *testing.T, o Options) Driver {
	t.Helper()
	d, err := NewFRR(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.Open(ctx); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	return d
}

func TestFRRRouter(t *testing.T) {
	l := startFRRLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	d := openFRR(t, l.options(l.VtyshUser))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if d.Platform() != "frr" || !d.IsAlive(ctx) {
		t.Fatalf("platform %q alive %v", d.Platform(), d.IsAlive(ctx))
	}

	// cli
	out, err := d.Cli(ctx, []string{"show version", "show running-config"})
	must(err)
	if !strings.HasPrefix(out["show version"], "FRRouting ") || !strings.Contains(out["show running-config"], "frr version") {
		t.Fatalf("cli: %q", out)
	}
	if _, err := d.Cli(ctx, []string{"show no-such-thing"}); !errors.Is(err, ErrCommand) {
		t.Fatalf("unknown command: %v", err)
	}

	// merge: compare changes nothing, commit applies
	const route = "10.9.9.0/24"
	must(d.LoadMergeCandidate(ctx, "hostname gsalt-r1\nip route "+route+" Null0\n"))
	diff, err := d.CompareConfig(ctx)
	must(err)
	if want := "-hostname "; !strings.Contains(diff, "+ip route "+route+" Null0\n") ||
		!strings.Contains(diff, "+hostname gsalt-r1\n") || strings.Contains(diff, want) {
		t.Fatalf("merge diff:\n%s", diff)
	}
	if strings.Contains(l.Vtysh(t, "show running-config"), route) || l.KernelRoute(t, route, false) != "" {
		t.Fatal("compare_config changed the router")
	}
	must(d.CommitConfig(ctx, "", 0))
	if !strings.Contains(l.Vtysh(t, "show running-config"), "ip route "+route+" Null0") ||
		!strings.Contains(l.KernelRoute(t, route, true), "blackhole") {
		t.Fatalf("route not committed: %q", l.KernelRoute(t, route, true))
	}
	if b, _ := os.ReadFile(filepath.Join(l.Dir, "staticd.conf")); !strings.Contains(string(b), route) {
		t.Fatalf("commit did not write memory: staticd.conf %q", b)
	}
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("compare after commit: %q %v", diff, err)
	}
	must(d.LoadMergeCandidate(ctx, "ip route "+route+" Null0\n"))
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("merging what is there: %q %v", diff, err)
	}
	must(d.DiscardConfig(ctx))

	facts, err := d.GetFacts(ctx)
	must(err)
	if facts.Vendor != "FRRouting" || facts.Hostname != "gsalt-r1" || facts.OSVersion == "" ||
		!slices.Contains(facts.InterfaceList, "lo") || facts.Uptime != -1 {
		t.Fatalf("facts: %+v", facts)
	}

	// replace: the running configuration with BGP, an interface and no route
	cfg, err := d.GetConfig(ctx, "running")
	must(err)
	before := cfg.Running
	replacement := strings.Replace(before, "ip route "+route+" Null0\n", "", 1) + `interface lo
 description gsalt loopback
 ip address 192.0.2.1/32
exit
router bgp 65000
 bgp router-id 192.0.2.1
 neighbor 10.0.0.9 remote-as 65009
 neighbor 10.0.0.9 description peer nine
 address-family ipv4 unicast
  network 10.50.0.0/16
 exit-address-family
exit
`
	must(d.LoadReplaceCandidate(ctx, replacement))
	diff, err = d.CompareConfig(ctx)
	must(err)
	for _, want := range []string{"-ip route " + route + " Null0\n", "+router bgp 65000\n", "+ neighbor 10.0.0.9 remote-as 65009\n",
		"+ address-family ipv4 unicast\n", "+  network 10.50.0.0/16\n", "+interface lo\n"} {
		if !strings.Contains(diff, want) {
			t.Fatalf("replace diff lacks %q:\n%s", want, diff)
		}
	}
	cfg, err = d.GetConfig(ctx, "all")
	must(err)
	if cfg.Candidate != replacement || !strings.Contains(cfg.Running, route) {
		t.Fatalf("get_config: %+v", cfg)
	}
	must(d.CommitConfig(ctx, "", 0))
	conf := l.Vtysh(t, "show running-config")
	if strings.Contains(conf, route) || l.KernelRoute(t, route, false) != "" || !strings.Contains(conf, "network 10.50.0.0/16") {
		t.Fatalf("replace not applied:\n%s", conf)
	}
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("compare after replace: %q %v", diff, err)
	}
	must(d.LoadReplaceCandidate(ctx, replacement))
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("replace with the running configuration: %q %v", diff, err)
	}
	must(d.DiscardConfig(ctx))

	if *frrUpdate {
		frrCapture(t, ctx, d)
	}
	ifs, err := d.GetInterfaces(ctx)
	must(err)
	if lo := ifs["lo"]; !lo.IsEnabled || !lo.IsUp || lo.Description != "gsalt loopback" || lo.MTU == 0 {
		t.Fatalf("interfaces: %+v", ifs)
	}
	ips, err := d.GetInterfacesIP(ctx)
	must(err)
	if ips["lo"].IPv4["192.0.2.1"].PrefixLength != 32 {
		t.Fatalf("interfaces ip: %+v", ips)
	}
	bgp, err := d.GetBGPNeighbors(ctx)
	must(err)
	if p, ok := bgp["global"].Peers["10.0.0.9"]; !ok || p.RemoteAS != 65009 || p.LocalAS != 65000 ||
		p.IsUp || !p.IsEnabled || p.Description != "peer nine" || bgp["global"].RouterID != "192.0.2.1" {
		t.Fatalf("bgp neighbors: %+v", bgp)
	}

	bc, err := d.(BGPConfigGetter).GetBGPConfig(ctx, "", "")
	must(err)
	if g := bc["_"]; g == nil || g["local_as"] != int64(65000) {
		t.Fatalf("bgp config: %v", bc)
	} else if n, _ := g["neighbors"].(map[string]any); n == nil || fmt.Sprint(n["10.0.0.9"]) !=
		"map[authentication_key: description:peer nine export_policy: import_policy: local_address: local_as:65000 nhs:false prefix_limit:map[] remote_as:65009 route_reflector_client:false]" {
		t.Fatalf("bgp config neighbors: %#v", g["neighbors"])
	}

	// rollback: back to the configuration before the replace
	must(d.Rollback(ctx))
	conf = l.Vtysh(t, "show running-config")
	if !strings.Contains(l.KernelRoute(t, route, true), "blackhole") || strings.Contains(conf, "router bgp") ||
		strings.Contains(conf, "gsalt loopback") {
		t.Fatalf("rollback:\n%s", conf)
	}
	must(d.LoadReplaceCandidate(ctx, before))
	if diff, err := d.CompareConfig(ctx); err != nil || diff != "" {
		t.Fatalf("after rollback the configuration differs from the one before the replace:\n%s%v", diff, err)
	}

	// a commit the router rejects half-way is undone
	must(d.LoadMergeCandidate(ctx, "ip route 10.8.8.0/24 Null0\nip route 10.7.7.0/33 Null0\n"))
	err = d.CommitConfig(ctx, "", 0)
	if !errors.Is(err, ErrCommand) || !strings.Contains(err.Error(), "10.7.7.0/33") {
		t.Fatalf("bad commit: %v", err)
	}
	if l.KernelRoute(t, "10.8.8.0/24", false) != "" || strings.Contains(l.Vtysh(t, "show running-config"), "10.8.8.0") {
		t.Fatalf("failed commit not undone: %v\n%s", err, l.Vtysh(t, "show running-config"))
	}
	if err := d.CommitConfig(ctx, "a message", 0); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("commit message: %v", err)
	}
	if _, err := d.GetArpTable(ctx, ""); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("arp: %v", err)
	}

	// a cancelled operation closes the connection
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if _, err := d.Cli(cctx, []string{"show version"}); err == nil {
		t.Fatal("cli with a cancelled context succeeded")
	}
	must(d.Close(ctx))
	if d.IsAlive(ctx) {
		t.Fatal("alive after close")
	}
	if _, err := d.Cli(ctx, []string{"show version"}); !errors.Is(err, ErrNotOpen) || !errors.Is(err, ErrConnect) {
		t.Fatalf("cli after close: %v", err)
	}
}

// TestFRRLoginShell logs in to a bash shell and has the driver start vtysh.
func TestFRRLoginShell(t *testing.T) {
	l := startFRRLab(t)
	o := l.options(l.ShellUser)
	o.OptionalArgs = map[string]any{"vtysh_command": "vtysh " + strings.Join(l.VtyshFlags, " ")}
	d := openFRR(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := d.Cli(ctx, []string{"show version"})
	if err != nil || !strings.HasPrefix(out["show version"], "FRRouting ") {
		t.Fatalf("cli through a login shell: %q %v", out, err)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}

	o.Password = "wrong"
	bad, err := NewFRR(o)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := bad.Open(ctx); !errors.Is(err, ErrAuth) {
		t.Fatalf("open with a wrong password: %v", err)
	}
	t.Logf("refused login took %v", time.Since(start))
}

// ---- configuration model and plans (no router needed) ----

// dumpFRR renders a parsed configuration one item a line: "line" for a
// top-level line, "ctx > sub: a | b" for a context and its lines.
func dumpFRR(c *frrConfig) string {
	var sb strings.Builder
	for _, b := range c.blocks {
		sb.WriteString(strings.Join(b.path, " > "))
		if b.ctx {
			sb.WriteString(": " + strings.Join(b.lines, " | "))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func TestParseFRRConfig(t *testing.T) {
	cases := []struct{ name, in, want string }{{
		name: "vtysh running-config",
		in: `Building configuration...

Current configuration:
!
frr version 8.4.4
frr defaults traditional
hostname r1
no ip forwarding
!
ip route 10.9.9.0/24 Null0
!
interface lo
 description loop  back
 ip address 192.0.2.1/32
exit
!
router bgp 65000
 bgp router-id 1.1.1.1
 neighbor 10.0.0.2 remote-as 65001
 !
 address-family ipv4 unicast
  network 10.50.0.0/16
 exit-address-family
 !
 address-family ipv6 unicast
  network 2001:db8::/32
 exit-address-family
exit
!
route-map RM permit 10
 set metric 5
exit
!
end
`,
		want: `hostname r1
no ip forwarding
ip route 10.9.9.0/24 Null0
interface lo: description loop back | ip address 192.0.2.1/32
router bgp 65000: bgp router-id 1.1.1.1 | neighbor 10.0.0.2 remote-as 65001
router bgp 65000 > address-family ipv4 unicast: network 10.50.0.0/16
router bgp 65000 > address-family ipv6 unicast: network 2001:db8::/32
route-map RM permit 10: set metric 5
`,
	}, {
		name: "frr.conf without indentation, closed by ! and keywords",
		in: `hostname r1
router bgp 1
bgp router-id 1.1.1.1
address-family ipv4 unicast
network 10.0.0.0/8
exit-address-family
neighbor 10.0.0.2 remote-as 2
!
ip route 10.1.0.0/16 Null0
interface eth0
description up
route-map A permit 10
set metric 1
`,
		want: `hostname r1
router bgp 1: bgp router-id 1.1.1.1 | neighbor 10.0.0.2 remote-as 2
router bgp 1 > address-family ipv4 unicast: network 10.0.0.0/8
ip route 10.1.0.0/16 Null0
interface eth0: description up
route-map A permit 10: set metric 1
`,
	}, {
		name: "two-space indentation without exit lines, repeated contexts merged",
		in: `interface eth0
  description one
router bgp 1
  neighbor x peer-group
  address-family ipv4 unicast
    neighbor x activate
  neighbor y remote-as 5
ip route 1.0.0.0/8 Null0
interface eth0
  ip address 10.0.0.1/24
  description one
`,
		want: `interface eth0: description one | ip address 10.0.0.1/24
router bgp 1: neighbor x peer-group | neighbor y remote-as 5
router bgp 1 > address-family ipv4 unicast: neighbor x activate
ip route 1.0.0.0/8 Null0
`,
	}, {
		name: "empty context, comments, end",
		in:   "! comment\n# other\nrouter ospf\nexit\nend\nline vty\n",
		want: "router ospf: \nline vty: \n",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := dumpFRR(parseFRRConfig(c.in)); got != c.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

const frrPlanRunning = `hostname r1
no ip forwarding
ip route 10.9.9.0/24 Null0
!
interface lo
 description loop
 ip address 192.0.2.1/32
exit
!
router bgp 65000
 bgp router-id 1.1.1.1
 neighbor 10.0.0.2 remote-as 65001
 neighbor 10.0.0.2 description two
 !
 address-family ipv4 unicast
  network 10.50.0.0/16
  neighbor 10.0.0.2 activate
 exit-address-family
exit
!
route-map RM permit 10
 set metric 5
exit
`

func TestFRRPlans(t *testing.T) {
	cases := []struct {
		name     string
		replace  bool
		cand     string
		diff     string
		commands string
	}{{
		name: "merge adds what is missing",
		cand: "ip route 10.9.9.0/24 Null0\nip route 10.8.8.0/24 Null0\nrouter bgp 65000\n neighbor 10.0.0.3 remote-as 65003\n address-family ipv4 unicast\n  network 10.50.0.0/16\n  network 10.60.0.0/16\n",
		diff: `+ip route 10.8.8.0/24 Null0
 router bgp 65000
+ neighbor 10.0.0.3 remote-as 65003
  address-family ipv4 unicast
+  network 10.60.0.0/16
`,
		commands: "ip route 10.8.8.0/24 Null0|router bgp 65000|neighbor 10.0.0.3 remote-as 65003|address-family ipv4 unicast|network 10.60.0.0/16",
	}, {
		name: "merge of present lines is empty",
		cand: "hostname r1\ninterface lo\n description loop\n",
	}, {
		name: "merge with no lines",
		cand: "no ip route 10.9.9.0/24 Null0\nno ip route 10.1.1.0/24 Null0\nno route-map RM permit 10\nno bgp default ipv4-unicast\ninterface lo\n no description loop\n no ip address 192.0.2.9/32\n",
		diff: `-ip route 10.9.9.0/24 Null0
-route-map RM permit 10
- set metric 5
+no bgp default ipv4-unicast
 interface lo
- description loop
`,
		commands: "no ip route 10.9.9.0/24 Null0|no route-map RM permit 10|no bgp default ipv4-unicast|interface lo|no description",
	}, {
		name: "merge of a new context",
		cand: "router ospf\n ospf router-id 1.1.1.1\n",
		diff: `+router ospf
+ ospf router-id 1.1.1.1
`,
		commands: "router ospf|ospf router-id 1.1.1.1",
	}, {
		name:    "replace with itself is empty",
		replace: true,
		cand:    frrPlanRunning,
	}, {
		name:    "replace removes, adds and overwrites",
		replace: true,
		cand: `hostname r2
no ip forwarding
ip route 10.8.8.0/24 Null0
interface lo
 ip address 192.0.2.1/32
router bgp 65000
 bgp router-id 1.1.1.1
 neighbor 10.0.0.2 remote-as 65009
 neighbor 10.0.0.2 description two
 address-family ipv6 unicast
  neighbor 10.0.0.2 activate
`,
		diff: `-route-map RM permit 10
- set metric 5
 router bgp 65000
  address-family ipv4 unicast
-  neighbor 10.0.0.2 activate
-  network 10.50.0.0/16
 interface lo
- description loop
-ip route 10.9.9.0/24 Null0
+hostname r2
+ip route 10.8.8.0/24 Null0
 router bgp 65000
+ neighbor 10.0.0.2 remote-as 65009
+ address-family ipv6 unicast
+  neighbor 10.0.0.2 activate
`,
		commands: "no route-map RM permit 10|router bgp 65000|address-family ipv4 unicast|no neighbor 10.0.0.2 activate|no network 10.50.0.0/16|exit|exit|" +
			"interface lo|no description|exit|no ip route 10.9.9.0/24 Null0|hostname r2|ip route 10.8.8.0/24 Null0|" +
			"router bgp 65000|neighbor 10.0.0.2 remote-as 65009|address-family ipv6 unicast|neighbor 10.0.0.2 activate",
	}, {
		name:    "replace with an empty configuration",
		replace: true,
		cand:    "",
		diff: `-route-map RM permit 10
- set metric 5
-router bgp 65000
- bgp router-id 1.1.1.1
- neighbor 10.0.0.2 remote-as 65001
- neighbor 10.0.0.2 description two
 interface lo
- ip address 192.0.2.1/32
- description loop
-ip route 10.9.9.0/24 Null0
-no ip forwarding
-hostname r1
`,
		commands: "no route-map RM permit 10|no router bgp 65000|interface lo|no ip address 192.0.2.1/32|no description|exit|" +
			"no ip route 10.9.9.0/24 Null0|ip forwarding|no hostname r1",
	}}
	running := parseFRRConfig(frrPlanRunning)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p *frrPlan
			if c.replace {
				p = planFRRReplace(running, parseFRRConfig(c.cand))
			} else {
				p = planFRRMerge(running, parseFRRConfig(c.cand))
			}
			if got := p.diff(); got != c.diff {
				t.Errorf("diff:\n%s\nwant:\n%s", got, c.diff)
			}
			if got := strings.Join(p.commands(), "|"); got != c.commands {
				t.Errorf("commands:\n%s\nwant:\n%s", got, c.commands)
			}
		})
	}
}

func TestFRRConfigFailure(t *testing.T) {
	for in, want := range map[string]string{
		"": "",
		"Note: this version of vtysh never writes vtysh.conf\nConfiguration saved to /etc/frr/zebra.conf": "",
		"% Malformed address\n":                             "% Malformed address",
		"bgpd is not running":                               "bgpd is not running",
		"% Configuration failed.\n\nError type: validation": "% Configuration failed.",
	} {
		if got := frrConfigFailure(in); got != want {
			t.Errorf("frrConfigFailure(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFRRParsers reads outputs captured from FRR 8.4 (testdata/frr, see
// frrUpdate) taken after TestFRRRouter's replace commit.
func TestFRRParsers(t *testing.T) {
	fa := parseFRRFacts(frrTestdata(t, "show version"), stripFRRPreamble(frrTestdata(t, "show running-config")),
		frrTestdata(t, "show interface vrf all brief"))
	if fa.Vendor != "FRRouting" || fa.Model != "FRRouting" || fa.Hostname != "gsalt-r1" || fa.FQDN != "gsalt-r1" ||
		fa.Uptime != -1 || fa.SerialNumber != "" || !regexp.MustCompile(`^\d+\.\d+`).MatchString(fa.OSVersion) ||
		!slices.Equal(fa.InterfaceList, []string{"lo"}) {
		t.Errorf("facts: %+v", fa)
	}
	if fa := parseFRRFacts("FRRouting 9.1 (box) on Linux(6.1).\n", "hostname r9\ndomainname example.net\n",
		"Interface Status VRF Addresses\n--------- ------ --- ---------\neth0 up default\n\nInterface Status VRF Addresses\neth1 up red\n"); fa.OSVersion != "9.1" ||
		fa.Hostname != "r9" || fa.FQDN != "r9.example.net" || !slices.Equal(fa.InterfaceList, []string{"eth0", "eth1"}) {
		t.Errorf("facts: %+v", fa)
	}

	ifs, err := parseFRRInterfaces(frrTestdata(t, "show interface vrf all json"))
	if err != nil {
		t.Fatal(err)
	}
	if lo := ifs["lo"]; len(ifs) != 1 || lo.AdministrativeStatus != "up" || lo.OperationalStatus != "up" ||
		lo.Description != "gsalt loopback" || lo.MTU != 65536 || len(lo.IPAddresses) != 1 || lo.IPAddresses[0].Address != "192.0.2.1/32" {
		t.Errorf("interfaces: %+v", ifs)
	}
	nested, err := parseFRRInterfaces(`{"red":{"eth1":{"administrativeStatus":"up","hardwareAddress":"62:3e:f7:2d:f1:15"}},"eth0":{"administrativeStatus":"down"}}`)
	if err != nil || len(nested) != 2 || nested["eth1"].HardwareAddress != "62:3e:f7:2d:f1:15" || nested["eth0"].AdministrativeStatus != "down" {
		t.Errorf("interfaces grouped by VRF: %+v %v", nested, err)
	}
	if _, err := parseFRRInterfaces("% Unknown command"); !errors.Is(err, ErrCommand) {
		t.Errorf("interfaces from garbage: %v", err)
	}

	bgp, err := parseFRRBGPSummary(frrTestdata(t, "show bgp vrf all summary json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]BGPVRF{"global": {RouterID: "192.0.2.1", Peers: map[string]BGPPeer{"10.0.0.9": {
		LocalAS: 65000, RemoteAS: 65009, IsEnabled: true, Description: "peer nine", Uptime: -1,
		AddressFamily: map[string]BGPAFStats{"ipv4": {}},
	}}}}
	if !reflect.DeepEqual(bgp, want) {
		t.Errorf("bgp:\n%+v\nwant\n%+v", bgp, want)
	}
	up, err := parseFRRBGPSummary(`{"default":{"ipv6Unicast":{"routerId":"1.1.1.1","as":1,"peers":{"fe80::1":{"remoteAs":2,"state":"Established","peerUptimeMsec":61500,"pfxRcd":3,"pfxSnt":4}}}},
"red":{"ipv4Unicast":{"routerId":"2.2.2.2","as":1,"peers":{"10.1.1.1":{"remoteAs":3,"state":"Idle (Admin)","pfxRcd":0,"pfxSnt":0}}}}}`)
	want = map[string]BGPVRF{
		"global": {RouterID: "1.1.1.1", Peers: map[string]BGPPeer{"fe80::1": {LocalAS: 1, RemoteAS: 2, IsUp: true, IsEnabled: true, Uptime: 61,
			AddressFamily: map[string]BGPAFStats{"ipv6": {ReceivedPrefixes: 3, AcceptedPrefixes: 3, SentPrefixes: 4}}}}},
		"red": {RouterID: "2.2.2.2", Peers: map[string]BGPPeer{"10.1.1.1": {LocalAS: 1, RemoteAS: 3, Uptime: -1,
			AddressFamily: map[string]BGPAFStats{"ipv4": {}}}}},
	}
	if err != nil || !reflect.DeepEqual(up, want) {
		t.Errorf("bgp:\n%+v %v\nwant\n%+v", up, err, want)
	}
	if none, err := parseFRRBGPSummary("bgpd is not running"); err != nil || len(none) != 0 {
		t.Errorf("bgp without bgpd: %v %v", none, err)
	}
}

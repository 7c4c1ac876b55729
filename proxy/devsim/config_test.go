package devsim

import (
	"context"
	"strings"
	"testing"
)

func testFleet(t *testing.T, plat string, n int) *Fleet {
	t.Helper()
	f, err := Start(context.Background(), Options{Platform: plat, Devices: n})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// TestTemplatesRoundTrip checks that every template line is accepted and that rendering a parsed
// configuration and parsing it again is the identity.
func TestTemplatesRoundTrip(t *testing.T) {
	for _, plat := range []string{PlatformIOS, PlatformEOS} {
		f := testFleet(t, plat, 5)
		for _, i := range []int{0, 2, 4} {
			c, errs := f.plat.d.parseConfig(f.plat.startupText(f, i), nil)
			if len(errs) > 0 {
				t.Errorf("%s template %d rejected %q", plat, i, errs)
			}
			text := f.plat.d.renderBody(c)
			again, errs := f.plat.d.parseConfig(text, nil)
			if len(errs) > 0 || f.plat.d.renderBody(again) != text {
				t.Errorf("%s device %d does not round-trip (%q):\n%s\n----\n%s", plat, i, errs, text, f.plat.d.renderBody(again))
			}
			if d := f.plat.d.contextualDiff(c, again); d != "!No changes were found\n" {
				t.Errorf("%s self diff:\n%s", plat, d)
			}
		}
	}
}

func TestApplyLines(t *testing.T) {
	cases := []struct {
		plat  string
		lines []string
		want  []string // substrings of the rendered body
		gone  []string // substrings that must be absent
		errs  int      // rejected lines
	}{
		{PlatformIOS, []string{"interface Gi2", "desc new", "no desc", "description final", "shut", "no shutdown"},
			[]string{"interface GigabitEthernet2\n description final\n ip address 10.0.0.0 255.255.255.254\n negotiation auto\n!"}, nil, 0},
		{PlatformIOS, []string{"interface Gi2", "ip address 192.0.2.1 255.255.255.0", "ip address 192.0.2.9 255.255.255.0 secondary"},
			[]string{" ip address 192.0.2.1 255.255.255.0\n ip address 192.0.2.9 255.255.255.0 secondary\n"}, []string{"10.0.0.0 255.255.255.254"}, 0},
		{PlatformIOS, []string{"interface Loopback3", "exit", "no interface Loopback3", "no interface GigabitEthernet2"},
			nil, []string{"Loopback3"}, 1},
		{PlatformIOS, []string{"ntp server 192.0.2.5", "ntp server 192.0.2.5", "no ntp server 172.16.255.254", "hostname r9"},
			[]string{"ntp server 192.0.2.5\n", "hostname r9\n"}, []string{"172.16.255.254\n!", "hostname sw1"}, 0},
		{PlatformIOS, []string{"router bgp 65001", "neighbor 10.0.0.1 remote-as 65009", "no neighbor 10.0.0.1"},
			nil, []string{"10.0.0.1 remote-as"}, 0},
		{PlatformIOS, []string{"interface Gi2", "ip route 0.0.0.0 0.0.0.0 192.0.2.1", "description x"},
			[]string{"ip route 0.0.0.0 0.0.0.0 192.0.2.1\n"}, []string{"description x"}, 1},
		{PlatformIOS, []string{"line vty 0 4", "logging synchronous", "exec-timeout 0 0"},
			[]string{"line vty 0 4\n login local\n transport input ssh\n logging synchronous\n exec-timeout 0 0\n"}, nil, 0},
		{PlatformEOS, []string{"interface Et1", "no switchport", "ip address 192.0.2.1/24", "switchport"},
			[]string{"interface Ethernet1\n   description hosts\n   switchport access vlan 10\n   ip address 192.0.2.1/24\n!"}, []string{"no switchport\n   ip address 192.0.2.1"}, 0},
		{PlatformEOS, []string{"no ip routing"}, []string{"no ip routing\n"}, []string{"\nip routing\n"}, 0},
		{PlatformEOS, []string{"management api http-commands", "shutdown"},
			[]string{"management api http-commands\n   shutdown\n"}, []string{"no shutdown"}, 0},
		{PlatformEOS, []string{"router bgp 65001", "vrf red", "rd 1:1", "exit", "neighbor 192.0.2.2 remote-as 1"},
			[]string{"   neighbor 192.0.2.2 remote-as 1\n   !\n   vrf red\n      rd 1:1\n"}, nil, 0},
		{PlatformEOS, []string{"interface Ethernet9", "interface Vlan10", "ip address 10.10.0.1/24"},
			[]string{"interface Vlan10\n   ip address 10.10.0.1/24\n"}, []string{"Ethernet9"}, 1},
	}
	for i, tc := range cases {
		f := testFleet(t, tc.plat, 2)
		c, _ := f.plat.d.parseConfig(f.plat.startupText(f, 0), nil)
		var path []string
		errs := 0
		for _, l := range tc.lines {
			r := f.plat.d.apply(c, path, l)
			if r.errMsg != "" {
				errs++
				continue
			}
			path = r.path
		}
		body := f.plat.d.renderBody(c)
		if errs != tc.errs {
			t.Errorf("case %d: %d rejected lines, want %d", i, errs, tc.errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("case %d: missing %q in\n%s", i, w, body)
			}
		}
		for _, g := range tc.gone {
			if strings.Contains(body, g) {
				t.Errorf("case %d: unexpected %q in\n%s", i, g, body)
			}
		}
	}
}

func TestCanonIf(t *testing.T) {
	ios, eos := mustPlatform(t, PlatformIOS).d, mustPlatform(t, PlatformEOS).d
	cases := []struct {
		d        *dialect
		in, want string
		ok       bool
	}{
		{ios, "gi2", "GigabitEthernet2", true},
		{ios, "G0/0/1", "GigabitEthernet0/0/1", true},
		{ios, "lo0", "Loopback0", true},
		{ios, "po10", "Port-channel10", true},
		{ios, "Gi2.100", "GigabitEthernet2.100", true},
		{ios, "foo1", "", false},
		{ios, "Gi", "", false},
		{eos, "et1", "Ethernet1", true},
		{eos, "Ma1", "Management1", true},
		{eos, "Port-Channel5", "Port-Channel5", true},
		{eos, "vl10", "Vlan10", true},
	}
	for _, tc := range cases {
		got, ok := tc.d.canonIf(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("canonIf(%q) = %q %v", tc.in, got, ok)
		}
	}
	if ios.shortIf("GigabitEthernet2") != "Gi2" || eos.shortIf("Management1") != "Ma1" {
		t.Error("shortIf")
	}
	if !ios.creatableIf("Loopback9") || ios.creatableIf("GigabitEthernet9") || !ios.creatableIf("GigabitEthernet9.1") {
		t.Error("creatableIf")
	}
}

func TestMatchCommand(t *testing.T) {
	specs := mustPlatform(t, PlatformIOS).exec
	cases := []struct {
		line  string
		priv  bool
		words string
		args  string
		fail  failKind
		bad   int
	}{
		{"sh ver", false, "show version", "", failNone, 0},
		{"show running-config", false, "", "", failInvalid, 1},
		{"sh run interface gi1", true, "show running-config <args?>", "interface gi1", failNone, 0},
		{"show ip int br", false, "show ip interface brief", "", failNone, 0},
		{"show ip interface", false, "show ip interface <args?>", "", failNone, 0},
		{"show ip", false, "", "", failIncomplete, 2},
		{"show i", false, "", "", failAmbiguous, 1},
		{"term len 0", false, "terminal length <arg>", "0", failNone, 0},
		{"term len", false, "", "", failIncomplete, 2},
		{"copy run start extra", true, "", "", failInvalid, 3},
		{"conf t", true, "configure terminal", "", failNone, 0},
		{"conf", true, "configure", "", failNone, 0},
		{"wr", true, "write", "", failNone, 0},
		{"frobnicate", true, "", "", failInvalid, 0},
	}
	for _, tc := range cases {
		sp, args, fail, bad := matchCommand(specs, tokenize(tc.line), tc.priv)
		if fail != tc.fail || (fail != failNone && bad != tc.bad) {
			t.Errorf("%q: fail %v at %d, want %v at %d", tc.line, fail, bad, tc.fail, tc.bad)
			continue
		}
		if fail == failNone && (strings.Join(sp.words, " ") != tc.words || strings.Join(args, " ") != tc.args) {
			t.Errorf("%q: matched %q args %q", tc.line, sp.words, args)
		}
	}
}

func TestFilters(t *testing.T) {
	p := mustPlatform(t, PlatformEOS)
	text := "hostname a\ninterface X\n   description d\ninterface Y\n   shutdown\nend\n"
	cases := []struct{ filters, want string }{
		{" include host|desc", "hostname a\n   description d\n"},
		{" exclude interface", "hostname a\n   description d\n   shutdown\nend\n"},
		{" begin interface Y", "interface Y\n   shutdown\nend\n"},
		{" section interface Y", "interface Y\n   shutdown\n"},
		{" count interface", "Number of lines which match regexp = 2\n"},
		{" inc interface | exc Y", "interface X\n"},
	}
	for _, tc := range cases {
		chain, ok, _ := parseFilters(p, tc.filters)
		if !ok {
			t.Errorf("%q rejected", tc.filters)
			continue
		}
		if got := applyFilters(chain, text); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.filters, got, tc.want)
		}
	}
	for _, bad := range []string{" frob x", " include", " include [", ""} {
		if _, ok, _ := parseFilters(p, bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, ok, json := parseFilters(p, " json"); !ok || !json {
		t.Error("json filter")
	}
	if _, ok, _ := parseFilters(mustPlatform(t, PlatformIOS), " json"); ok {
		t.Error("IOS accepted | json")
	}
}

func TestDiffs(t *testing.T) {
	f := testFleet(t, PlatformIOS, 2)
	d := f.plat.d
	a, _ := d.parseConfig("hostname a\ninterface Loopback1\n description x\nntp server 1.1.1.1\n", nil)
	b, _ := d.parseConfig("hostname a\ninterface Loopback1\n description y\ninterface Loopback2\n ip address 1.2.3.4 255.255.255.255\n", nil)
	want := "!Contextual Config Diffs:\ninterface Loopback1\n +description y\n -description x\n+interface Loopback2\n +ip address 1.2.3.4 255.255.255.255\n-ntp server 1.1.1.1\n"
	if got := d.contextualDiff(a, b); got != want {
		t.Errorf("contextual diff:\n%s\nwant:\n%s", got, want)
	}
	got := d.incrementalDiff(a, "interface Loopback1\n description x\n shutdown\nntp server 1.1.1.1\nntp server 2.2.2.2\n")
	if got != "!List of Commands:\ninterface Loopback1\n shutdown\nntp server 2.2.2.2\nend\n" {
		t.Errorf("incremental diff:\n%s", got)
	}
	if got := d.incrementalDiff(a, "ntp server 1.1.1.1\n"); !strings.Contains(got, "!No changes were found") {
		t.Errorf("empty incremental diff:\n%s", got)
	}
}

// mustPlatform loads a built-in platform definition.
func mustPlatform(t *testing.T, name string) *platform {
	t.Helper()
	p, err := loadPlatform(builtinPlatforms, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

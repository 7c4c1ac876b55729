package driver

import (
	"reflect"
	"testing"
)

func TestIOSXRCandidateLines(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"flat", "hostname r1\nntp server 192.0.2.1\n", []string{"hostname r1", "ntp server 192.0.2.1"}},
		{"show run", "Fri Mar  1 12:00:00.000 UTC\nBuilding configuration...\n!! IOS XR Configuration 7.3.2\n!\nhostname r1\n" +
			"router bgp 1\n neighbor 10.0.0.1\n  remote-as 2\n !\n neighbor 10.0.0.3\n  remote-as 3\n !\n!\nntp\n server 1.2.3.4\n!\nend\n",
			[]string{"hostname r1", "router bgp 1", "neighbor 10.0.0.1", "remote-as 2", "exit", "neighbor 10.0.0.3", "remote-as 3",
				"exit", "exit", "ntp", "server 1.2.3.4"}},
		{"explicit exit", "interface Loopback1\n description x\n exit\nhostname y\nexit\n",
			[]string{"interface Loopback1", "description x", "exit", "hostname y"}},
		{"crlf and tabs", "interface Loopback1\r\n\tshutdown\r\nlldp\r\n", []string{"interface Loopback1", "shutdown", "exit", "lldp"}},
	}
	for _, tc := range cases {
		if got := candidateLines(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestIOSXRParsers(t *testing.T) {
	if got := xrClean("Fri Mar  1 12:00:00.000 UTC\nhostname r1\n"); got != "hostname r1\n" {
		t.Errorf("clean %q", got)
	}
	if got := xrClean("hostname r1\n"); got != "hostname r1\n" {
		t.Errorf("clean without stamp %q", got)
	}
	for in, want := range map[string]float64{
		"3 days 2 hours 7 minutes": 3*86400 + 2*3600 + 7*60, "1 year 2 weeks 1 minute": 365*86400 + 14*86400 + 60,
		"5 minutes": 300, "bogus words": -1,
	} {
		if got := xrUptimeSeconds(in); got != want {
			t.Errorf("uptime %q = %v, want %v", in, got, want)
		}
	}
	report := "Fri Mar  1 12:00:00.000 UTC\n!! SEMANTIC ERRORS: blah\n\ninterface Loopback6\n ipv4 address 10.6.6.6 255.0.255.0\n" +
		"!!% Invalid argument: netmask\n!\nend\n"
	if got := xrFailedReport(report); got != `"ipv4 address 10.6.6.6 255.0.255.0": % Invalid argument: netmask` {
		t.Errorf("failed report %q", got)
	}
	for in, want := range map[string]float64{"-": -1, "00:00:42": 42, "1d02h": 93600, "junk": -1} {
		if got := xrAge(in); got != want {
			t.Errorf("age %q = %v", in, got)
		}
	}
	c := xrBGPNeighborConfig("router bgp 1\n neighbor 10.0.0.1\n  description up link\n  shutdown\n !\n neighbor 10.0.0.3\n  remote-as 3\n!\n")
	if c.descriptions["10.0.0.1"] != "up link" || !c.shutdown["10.0.0.1"] || c.shutdown["10.0.0.3"] {
		t.Errorf("bgp config %+v", c)
	}
}

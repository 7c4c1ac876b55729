package driver

import (
	"reflect"
	"strings"
	"testing"
)

func TestNXOSCanonical(t *testing.T) {
	cases := map[string]string{
		"Eth1/2": "Ethernet1/2", "Ethernet1/2": "Ethernet1/2", "eth1/10": "Ethernet1/10", "mgmt0": "Management0",
		"Lo0": "Loopback0", "loopback7": "Loopback7", "Po10": "Port-channel10", "port-channel1": "Port-channel1",
		"Vlan10": "Vlan10", "nve1": "nve1", "sup-eth1(R)": "sup-eth1(R)", "": "", "Eth": "Eth",
	}
	for in, want := range cases {
		if got := nxosCanonical(in); got != want {
			t.Errorf("nxosCanonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMissingConfigLines(t *testing.T) {
	running := "hostname sw1\nntp server 10.0.0.1\n\ninterface loopback0\n  description mgmt\n  ip address 10.0.0.1/32\n" +
		"router bgp 1\n  neighbor 10.0.0.2\n    remote-as 2\n"
	cases := []struct{ name, cand, want string }{
		{"nothing new", "hostname sw1\n! comment\n\ninterface loopback0\n  description mgmt\n", ""},
		{"top-level line", "ntp server 10.0.0.1\nntp server 10.0.0.9\n", "ntp server 10.0.0.9"},
		{"child keeps its parent", "interface loopback0\n  description new\n  ip address 10.0.0.1/32\n",
			"interface loopback0\n  description new"},
		{"new block", "interface loopback5\n  ip address 10.5.5.5/32\n", "interface loopback5\n  ip address 10.5.5.5/32"},
		{"nested", "router bgp 1\n  neighbor 10.0.0.2\n    remote-as 2\n    description peer\n",
			"router bgp 1\n  neighbor 10.0.0.2\n    description peer"},
		{"same line under another parent", "interface loopback1\n  description mgmt\n", "interface loopback1\n  description mgmt"},
	}
	for _, tc := range cases {
		if got := missingConfigLines(tc.cand, running); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestNXOSInterfaceSections(t *testing.T) {
	cases := []struct {
		name, sec, ifName string
		want              Interface
		ok                bool
	}{
		{"ethernet admin down", "Ethernet1/4 is down (Administratively down)\nadmin state is down, Dedicated Interface\n" +
			"  Hardware: 100/1000/10000/25000 Ethernet, address: 5254.0001.0104 (bia 5254.0001.0104)\n" +
			"  MTU 9216 bytes, BW 10000000 Kbit, DLY 10 usec\n", "Ethernet1/4",
			Interface{MACAddress: "52:54:00:01:01:04", LastFlapped: -1, MTU: 9216, Speed: 10000}, true},
		{"mgmt canonical", "mgmt0 is up\nadmin state is up,\n  Hardware: Ethernet, address: 5254.0001.01c8 (bia 5254.0001.01c8)\n" +
			"  Description: oob\n  MTU 1500 bytes, BW 1000000 Kbit, DLY 10 usec\n", "Management0",
			Interface{IsEnabled: true, IsUp: true, Description: "oob", MACAddress: "52:54:00:01:01:C8", LastFlapped: -1, MTU: 1500, Speed: 1000}, true},
		{"svi with description and address on one line", "Vlan10 is down (Administratively down), line protocol is down, autostate enabled\n" +
			"  Hardware is EtherSVI, address is  5254.0001.0000\n  Description: users  Internet Address is 10.1.1.1/24\n" +
			"  MTU 1500 bytes, BW 1000000 Kbit, DLY 10 usec,\n", "Vlan10",
			Interface{Description: "users", LastFlapped: -1, MTU: 1500, Speed: 1000}, true},
		{"nve", "nve1 is up\nadmin state is up,  Hardware: NVE\n  MTU 9216 bytes\n", "nve1",
			Interface{IsEnabled: true, IsUp: true, LastFlapped: -1, MTU: 9216, Speed: -1}, true},
		{"unknown speed unit", "Ethernet1/1 is up\nadmin state is up,\n  MTU 1500 bytes, BW 10 Gbit, DLY 10 usec\n", "", Interface{}, false},
	}
	for _, tc := range cases {
		name, got, ok := nxosInterface(tc.sec)
		if ok != tc.ok || (ok && (name != tc.ifName || got != tc.want)) {
			t.Errorf("%s: %q %+v %v", tc.name, name, got, ok)
		}
	}
}

func TestNXOSBGPRowsAndPing(t *testing.T) {
	table := "\n10.0.0.1        4 65001  100  90  4  0  0 3d02h    1\n" +
		"2001:db8:4:701::2\n                4 65535  163664  163693      145    0    0     3w2d 3\n" +
		"10.0.0.9        4 65009  0  0  4  0  0 never    Shut (Admin)\n"
	rows := nxosBGPRows(table)
	if len(rows) != 3 || rows[1][0] != "2001:db8:4:701::2" || rows[1][9] != "3" || strings.Join(rows[2][9:], " ") != "Shut (Admin)" {
		t.Fatalf("rows %q", rows)
	}
	ok := "PING 10.0.0.3 (10.0.0.3): 56 data bytes\n64 bytes from 10.0.0.3: icmp_seq=0 ttl=254 time=1.200 ms\n" +
		"Request 1 timed out\n\n--- 10.0.0.3 ping statistics ---\n2 packets transmitted, 1 packets received, 50.00% packet loss\n" +
		"round-trip min/avg/max = 1.200/1.200/1.200 ms\n"
	want := PingResult{Success: &PingSuccess{ProbesSent: 2, PacketLoss: 1, RTTMin: 1.2, RTTAvg: 1.2, RTTMax: 1.2,
		Results: []PingProbeRT{{IPAddress: "10.0.0.3", RTT: 1.2}}}}
	if got := parseNXOSPing(ok, false); !reflect.DeepEqual(got, want) {
		t.Errorf("ping %+v", got.Success)
	}
	if got := parseNXOSPing("PING x\nconnect: Network is unreachable\n", false); got.Success != nil || got.Error == "" {
		t.Errorf("unreachable %+v", got)
	}
	if got := parseNXOSPing("% Invalid command at '^' marker.", false); got.Error != "% Invalid command at '^' marker." {
		t.Errorf("invalid %+v", got)
	}
}

func TestNXOSInventorySerial(t *testing.T) {
	cases := []struct {
		in, sn string
		ok     bool
	}{
		{`{"TABLE_inv":{"ROW_inv":[{"name":"Chassis","serialnum":"SN1"},{"name":"Slot 1","serialnum":"SN2"}]}}`, "SN1", true},
		{`{"TABLE_inv":{"ROW_inv":{"name":"\"Chassis\"","serialnum":"SN3"}}}`, "SN3", true},
		{`{"TABLE_inv":{"ROW_inv":[{"name":"Slot 1","serialnum":"SN2"}]}}`, "", true},
		{`% Invalid command at '^' marker.`, "", false},
	}
	for _, tc := range cases {
		if sn, ok := nxosInventorySerial(tc.in); sn != tc.sn || ok != tc.ok {
			t.Errorf("%s: %q %v", tc.in, sn, ok)
		}
	}
}

package driver

import (
	"encoding/json"
	"regexp"
	"testing"
)

// Table tests of the NAPALM-port parsers on small inputs (the fixture test
// covers NAPALM's own cases when GSALT_NAPALM_TESTS is set).

func TestFindTxt(t *testing.T) {
	lines := []string{"router bgp 65001", " neighbor 10.0.0.1 remote-as 65002", " neighbor 10.0.0.1 description it's up", " neighbor 10.0.0.2 remote-as 65003"}
	cases := []struct {
		re   string
		def  any
		want any
	}{
		{`router bgp (\d+)`, int64(0), int64(65001)},
		{`remote-as (\d+)`, int64(0), int64(0)},            // two matches: int() of a list fails
		{`remote-as (\d+)`, "", "['65002', '65003']"},      // two matches: str() of the list
		{` description ([^']+)'`, "", "it"},                // the repr quotes this line with ", so the ' of it's ends the match
		{` description ([^"]+)"`, "", "it's up"},           // ... so a " closes it
		{`local-as (\d+)`, int64(7), int64(7)},             // no match: the default
		{`(neighbor) 10\.0\.0\.1 remote`, "x", "neighbor"}, // one group
		{`nope`, "", ""},
	}
	for _, c := range cases {
		if got := findTxt(regexp.MustCompile(c.re), lines, c.def); got != c.want {
			t.Errorf("%s: got %#v want %#v", c.re, got, c.want)
		}
	}
}

func TestConfigTree(t *testing.T) {
	cfg := "!\nrouter bgp 1\n neighbor G peer-group\n address-family ipv4\n  neighbor 10.0.0.1 activate\n  neighbor G activate\n exit-address-family\nline vty 0 4\n"
	tree := configTree(cfg)
	obj := parseObjects("router bgp", tree)
	want := []string{"router bgp 1", " neighbor G peer-group", " address-family ipv4", "  neighbor 10.0.0.1 activate", "  neighbor G activate", " exit-address-family"}
	if b, w := mustJSON(obj), mustJSON(want); b != w {
		t.Errorf("parseObjects\n got %s\nwant %s", b, w)
	}
	par := parseParents(regexp.MustCompile(`\s+address-family.*`), "10.0.0.1", linesTree(obj))
	if len(par) != 1 || par[0] != " address-family ipv4" {
		t.Errorf("parseParents: %q", par)
	}
}

func TestParseIOSBGPConfig(t *testing.T) {
	cfg := "router bgp 65001\n neighbor RR peer-group\n neighbor RR remote-as 65001\n neighbor RR description [rr]\n neighbor 10.0.0.3 peer-group RR\n neighbor 10.0.0.9 remote-as 65009\n address-family ipv4\n  neighbor RR activate\n  neighbor 10.0.0.3 activate\n  neighbor 10.0.0.9 activate\n"
	got := parseIOSBGPConfig(cfg, "", "")
	if g := got["RR"]; g == nil || g["type"] != "internal" || g["description"] != "[rr]" || g["remote_as"] != int64(65001) {
		t.Errorf("group RR: %v", g)
	}
	nb := got["_"]["neighbors"].(map[string]any)
	if n, ok := nb["10.0.0.9"].(map[string]any); !ok || n["remote_as"] != int64(65009) || n["local_as"] != int64(65001) {
		t.Errorf("neighbor 10.0.0.9: %v", nb)
	}
	if len(parseIOSBGPConfig("hostname x\n", "", "")) != 0 {
		t.Error("no bgp: want {}")
	}
}

func TestParseEOSBGPConfig(t *testing.T) {
	cfg := "router bgp 65534\n   neighbor G peer group\n   neighbor G remote-as 65534\n   neighbor G next-hop-self\n   neighbor 192.0.2.2 peer group G\n   no neighbor 192.0.2.2 next-hop-self\n   neighbor 192.0.2.3 route-map IN in\n"
	got := parseEOSBGPConfig(cfg, "")
	g := got["G"]
	n := g["neighbors"].(map[string]any)["192.0.2.2"].(map[string]any)
	if n["nhs"] != false || n["remote_as"] != int64(65534) || g["remote_as"] != int64(65534) {
		t.Errorf("group copy-down: %v", g)
	}
	if _, ok := g["nhs"]; ok {
		t.Error("nhs left on the group")
	}
	if n := got["_"]["neighbors"].(map[string]any)["192.0.2.3"].(map[string]any); n["import_policy"] != "IN" {
		t.Errorf("route-map in: %v", n)
	}
	if len(parseEOSBGPConfig("", "")) != 0 {
		t.Error("no bgp: want {}")
	}
}

func TestParseIOSProbes(t *testing.T) {
	out := "ip sla 1\n icmp-echo 8.8.8.8 source-interface Loopback0\n tag g8\n history buckets-kept 20\n frequency 3\nip sla 2\n udp-jitter 1.1.1.1 5000\n tag j\n frequency 5\n history buckets-kept 2\n"
	got := parseIOSProbes(out)
	want := map[string]map[string]ProbeTest{"1": {"g8": {ProbeType: "icmp-ping", Target: "8.8.8.8", Source: "Loopback0", ProbeCount: 20, TestInterval: 3}}}
	if mustJSON(got) != mustJSON(want) {
		t.Errorf("got %s", mustJSON(got))
	}
}

func TestParseIOSNetworkInstances(t *testing.T) {
	brief := "Interface  IP-Address OK? Method Status Protocol\nGi1 10.0.0.1 YES manual up up\nVlan2 unassigned YES unset up up\n"
	det := "VRF A (VRF Id = 1); default RD 1:1; default VPNID <not set>\n  Interfaces:\n    Vl2\nAddress family ipv4 unicast\n\nVRF B (VRF Id = 2); default RD <not set>; default VPNID <not set>\n  No interfaces\n"
	got, err := parseIOSNetworkInstances(det, brief)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["default"].Interfaces.Interface["Vlan2"]; ok || len(got["default"].Interfaces.Interface) != 1 {
		t.Errorf("default: %+v", got["default"])
	}
	if got["A"].State.RouteDistinguisher != "1:1" || got["B"].State.RouteDistinguisher != "" || got["A"].Type != "L3VRF" {
		t.Errorf("vrfs: %+v", got)
	}
	if _, err := parseIOSNetworkInstances("garbage", brief); err == nil {
		t.Error("bad section: want an error")
	}
}

func TestParseNXOSOptics(t *testing.T) {
	out := "Ethernet1/1\n    transceiver is present\n    type is 10Gbase-SR\n    name is CISCO\n    part number is P1\n    revision is A\n    serial number is S1\n    Rx Power  -2.10 dBm\n    Tx Power  N/A\n    Current  6.50 mA\nEthernet1/2\n    transceiver is not present\n"
	got := parseNXOSOptics(out)
	o, ok := got["Ethernet1/1"]
	if !ok || len(got) != 1 || o.State.ConnectorType != "LC_CONNECTOR" || o.State.SerialNo != "S1" {
		t.Fatalf("got %s", mustJSON(got))
	}
	st := o.PhysicalChannels.Channel[0].State
	if st.InputPower.Instant != -2.1 || st.OutputPower.Instant != -100 || st.LaserBiasCurrent.Instant != 6.5 {
		t.Errorf("readings %+v", st)
	}
}

func TestParseIOSBGPAllSummary(t *testing.T) {
	out := "For address family: IPv4 Unicast\nBGP router identifier 1.1.1.1, local AS number 1\n\nNeighbor V AS MsgRcvd MsgSent TblVer InQ OutQ Up/Down State/PfxRcd\n2.2.2.2 4 2 10 11 5 0 3 1w2d 10\n2001:db8::100:1\n                4 7 1 1 1 0 0 never Idle\n\nFor address family: IPv6 Unicast\n"
	rows := parseIOSBGPAllSummary(out)
	if len(rows) != 2 || rows[0].neighbor != "2.2.2.2" || rows[0].outQ != "3" || rows[1].neighbor != "2001:db8::100:1" || rows[1].up != "never" || rows[1].localAS != "1" {
		t.Errorf("rows %+v", rows)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

package driver

import (
	"encoding/json"
	"reflect"
	"testing"
)

// junosReply parses an rpc-reply body as the driver receives it.
func junosReply(t *testing.T, body string) *xnode {
	t.Helper()
	n, err := parseXML(`<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">` + body + `</rpc-reply>`)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// asJSON renders v the way the fixture test compares it.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestJunosXPath(t *testing.T) {
	r := junosReply(t, `<a><b><c>1</c><d x="7"/></b><b><d>2</d><c>3</c></b><e/></a>`)
	top := replyTop(r)
	if top.local != "a" {
		t.Fatalf("top %q", top.local)
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{"b/c", []string{"1", "3"}},
		{"b/d/@x", []string{"7"}},
		{"b/c/../d", []string{"d", "2"}},            // an empty element reads as its name
		{"b/d | b/c", []string{"1", "d", "2", "3"}}, // a union is in document order
		{"e", []string{"e"}},
		{"missing/x", nil},
	} {
		if got := fvals(top, c.path); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
	// A reply wrapped in a second rpc-reply (PyEZ's raw command replies).
	if n := replyTop(junosReply(t, `<rpc-reply><x/></rpc-reply>`)); n.local != "x" {
		t.Errorf("nested reply top %q", n.local)
	}
}

func TestJunosFactsStyle(t *testing.T) {
	for _, c := range []struct{ model, personality, style string }{
		{"MX480", "MX", "BRIDGE_DOMAIN"},
		{"EX4300-48T", "SWITCH", "VLAN_L2NG"},
		{"EX2200-24T-4G", "SWITCH", "VLAN"},
		{"QFX5110-48S-4C", "SWITCH", "VLAN_L2NG"},
		{"SRX5800", "SRX_HIGHEND", "BRIDGE_DOMAIN"},
		{"SRX4100", "SRX_MIDRANGE", "NONE"},
		{"SRX345", "SRX_BRANCH", "VLAN"},
		{"FIREFLY-PERIMETER", "SRX_BRANCH", "NONE"},
		{"PTX1000", "PTX", "NONE"},
	} {
		p := junosPersonality(c.model)
		if s := junosSwitchStyle(p, c.model); p != c.personality || s != c.style {
			t.Errorf("%s: %s %s, want %s %s", c.model, p, s, c.personality, c.style)
		}
	}
}

func TestJunosEnvironmentParse(t *testing.T) {
	env := junosReply(t, `<environment-information>
<environment-item><name>PEM 0</name><class>Power</class><status>OK</status></environment-item>
<environment-item><name>PEM 1</name><status>Absent</status></environment-item>
<environment-item><name>CPU</name><class>Temp</class><status>OK</status><temperature celsius="72">72 degrees C / 161 degrees F</temperature></environment-item>
<environment-item><name>Board</name><status>OK</status><temperature celsius="40">40 degrees C</temperature></environment-item>
<environment-item><name>Fan 0</name><class>Fans</class><status>Failed</status></environment-item>
</environment-information>`)
	re := junosReply(t, `<route-engine-information><route-engine><slot>0</slot><memory-dram-size>2048 MB</memory-dram-size><memory-buffer-utilization>33</memory-buffer-utilization><cpu-idle>93</cpu-idle></route-engine></route-engine-information>`)
	th := junosReply(t, `<temperature-threshold-information><temperature-threshold><name>Routing Engine</name><yellow-alarm>70</yellow-alarm><red-alarm>80</red-alarm></temperature-threshold></temperature-threshold-information>`)
	pem := junosReply(t, `<power-usage-information><power-usage-item><name>PEM 0</name><state>Online</state><pem-capacity-detail><capacity-actual>2050</capacity-actual></pem-capacity-detail><dc-output-detail><dc-power>399</dc-power></dc-output-detail></power-usage-item><power-usage-item/></power-usage-information>`)
	got := asJSON(t, parseJunosEnvironment(junosEnvTables{env: env, re: re, thresholds: th, pem: pem}))
	want := `{"fans":{"Fan 0":{"status":false}},"temperature":{"Board":{"temperature":40,"is_alert":false,"is_critical":false},"CPU":{"temperature":72,"is_alert":true,"is_critical":false}},"power":{"Power Supply 0":{"status":true,"capacity":2050,"output":399},"Power Supply 1":{"status":false,"capacity":-1,"output":-1}},"cpu":{"0":{"%usage":7}},"memory":{"available_ram":2048,"used_ram":676}}`
	if got != want {
		t.Errorf("environment\n got %s\nwant %s", got, want)
	}
}

func TestJunosMACAndVLANParse(t *testing.T) {
	for _, c := range []struct{ style, body, want string }{
		{"BRIDGE_DOMAIN", `<l2ald-rtb-macdb><l2ald-mac-entry><l2-bridge-vlan>100</l2-bridge-vlan><l2-mac-address>00:1f:12:aa:bb:cc</l2-mac-address><l2-mac-logical-interface>ae1.100</l2-mac-logical-interface></l2ald-mac-entry></l2ald-rtb-macdb>`,
			`[{"mac":"00:1F:12:AA:BB:CC","interface":"ae1.100","vlan":100,"static":false,"active":true,"moves":0,"last_move":0}]`},
		{"VLAN", `<ethernet-switching-table-information><ethernet-switching-table><mac-table-entry><mac-vlan-tag>5</mac-vlan-tag><mac-address>*</mac-address></mac-table-entry><mac-table-entry><mac-vlan-tag>5</mac-vlan-tag><mac-address>00:1f:12:aa:bb:cd</mac-address><mac-type>Static</mac-type><mac-interface>ge-0/0/1.0</mac-interface></mac-table-entry></ethernet-switching-table></ethernet-switching-table-information>`,
			`[{"mac":"00:1F:12:AA:BB:CD","interface":"ge-0/0/1.0","vlan":5,"static":true,"active":true,"moves":0,"last_move":0}]`},
		{"VLAN_L2NG", `<l2ng-l2ald-rtb-macdb><l2ng-l2ald-mac-entry-vlan><l2ng-l2-vlan-id>7</l2ng-l2-vlan-id><l2ng-l2-mac-address>00:1f:12:aa:bb:ce</l2ng-l2-mac-address><l2ng-l2-mac-logical-interface>xe-0/0/2.0</l2ng-l2-mac-logical-interface></l2ng-l2ald-mac-entry-vlan></l2ng-l2ald-rtb-macdb>`,
			`[{"mac":"00:1F:12:AA:BB:CE","interface":"xe-0/0/2.0","vlan":7,"static":false,"active":true,"moves":0,"last_move":0}]`},
	} {
		if got := asJSON(t, parseJunosMACTable(junosReply(t, c.body), c.style)); got != c.want {
			t.Errorf("%s mac\n got %s\nwant %s", c.style, got, c.want)
		}
	}
	v := parseJunosVLANs(junosReply(t, `<vlan-information><vlan><vlan-name>default</vlan-name><vlan-tag>1</vlan-tag><vlan-detail><vlan-member-list><vlan-member><vlan-member-interface>ge-0/0/1.0*</vlan-member-interface></vlan-member><vlan-member><vlan-member-interface>ge-0/0/2.0</vlan-member-interface></vlan-member></vlan-member-list></vlan-detail></vlan><vlan><vlan-name>empty</vlan-name><vlan-tag>2</vlan-tag><vlan-detail><vlan-member-list><vlan-member><vlan-member-interface>None</vlan-member-interface></vlan-member></vlan-member-list></vlan-detail></vlan></vlan-information>`), "VLAN")
	if got, want := asJSON(t, v), `{"1":{"name":"default","interfaces":["ge-0/0/1.0","ge-0/0/2.0"]},"2":{"name":"empty","interfaces":[]}}`; got != want {
		t.Errorf("vlans\n got %s\nwant %s", got, want)
	}
}

func TestJunosBGPParse(t *testing.T) {
	neigh := junosReply(t, `<bgp-information>
<bgp-peer><peer-address>192.0.2.1+179</peer-address><peer-as>65001</peer-as><local-as>65000</local-as><peer-state>Established</peer-state><peer-id>192.0.2.1</peer-id><local-id>10.0.0.1</local-id><description>up</description>
<bgp-rib><name>inet.0</name><send-state>in sync</send-state><received-prefix-count>3</received-prefix-count><accepted-prefix-count>2</accepted-prefix-count><advertised-prefix-count>6</advertised-prefix-count></bgp-rib>
<bgp-rib><name>bgp.evpn.0</name><send-state>in sync</send-state><received-prefix-count>5</received-prefix-count><accepted-prefix-count>5</accepted-prefix-count><advertised-prefix-count>9</advertised-prefix-count></bgp-rib>
<bgp-rib><name>inet6.0</name><send-state>not advertising</send-state><received-prefix-count>1</received-prefix-count><accepted-prefix-count>1</accepted-prefix-count></bgp-rib></bgp-peer>
<bgp-peer><peer-address>2001:DB8::2</peer-address><peer-as>65002</peer-as><local-as>65000</local-as><peer-state>Active</peer-state><bgp-option-information><bgp-options-extended>Shutdown</bgp-options-extended></bgp-option-information></bgp-peer>
</bgp-information>`)
	sum := junosReply(t, `<bgp-information><bgp-peer><peer-address>192.0.2.1</peer-address><elapsed-time seconds="3600">1:00:00</elapsed-time></bgp-peer></bgp-information>`)
	res := map[string]BGPVRF{}
	parseJunosBGPNeighbors(res, "master", neigh, sum)
	want := `{"global":{"router_id":"10.0.0.1","peers":{"192.0.2.1":{"local_as":65000,"remote_as":65001,"remote_id":"192.0.2.1","is_up":true,"is_enabled":true,"description":"up","uptime":3600,"address_family":{"ipv4":{"received_prefixes":3,"accepted_prefixes":2,"sent_prefixes":6},"ipv6":{"received_prefixes":1,"accepted_prefixes":1,"sent_prefixes":0}}},` +
		`"2001:db8::2":{"local_as":65000,"remote_as":65002,"remote_id":"","is_up":false,"is_enabled":false,"description":"","uptime":0,"address_family":{"ipv4":{"received_prefixes":-1,"accepted_prefixes":-1,"sent_prefixes":-1},"ipv6":{"received_prefixes":-1,"accepted_prefixes":-1,"sent_prefixes":-1}}}}}}`
	if got := asJSON(t, res); got != want {
		t.Errorf("bgp neighbors\n got %s\nwant %s", got, want)
	}
	det := map[string]map[int64][]map[string]any{}
	parseJunosBGPDetail(det, "blue", neigh)
	p := det["blue"][65001][0]
	if p["local_port"] != 179 || p["remote_port"] != 179 || p["remote_address"] != "192.0.2.1" || p["received_prefix_count"] != int64(9) ||
		p["advertised_prefix_count"] != int64(15) || p["routing_table"] != "blue" || p["suppress_4byte_as"] != true {
		t.Errorf("bgp detail %v", p)
	}
	if junosAddressFamily("blue.inet6.0", "blue") != "ipv6" || junosAddressFamily("inetflow.0", "master") != "flow" || junosAddressFamily("bgp.l3vpn.0", "master") != "" {
		t.Error("address families")
	}
}

func TestJunosBGPConfigParse(t *testing.T) {
	routing := junosReply(t, `<configuration><routing-options><autonomous-system><as-number>65000</as-number></autonomous-system></routing-options></configuration>`)
	bgp := junosReply(t, `<configuration><protocols><bgp><group><name>ext</name><type>external</type><multihop/><peer-as>65100</peer-as><cluster>10.0.0.1</cluster>
<neighbor><name>192.0.2.9</name><export>nhs</export><export>deny</export><family><inet><unicast><prefix-limit><maximum>500</maximum><teardown><limit-threshold>90</limit-threshold></teardown></prefix-limit></unicast></inet></family></neighbor>
</group></bgp></protocols></configuration>`)
	pol := junosReply(t, `<configuration><policy-options><policy-statement><name>nhs</name><term><name>a</name><then><next-hop><self/></next-hop></then></term></policy-statement><policy-statement><name>deny</name><then><reject/></then></policy-statement></policy-options></configuration>`)
	got := asJSON(t, parseJunosBGPConfig(routing, bgp, pol, "", ""))
	want := `{"_":{"apply_groups":[],"description":"","export_policy":"","import_policy":"","local_address":"","local_as":65000,"multihop_ttl":0,"multipath":false,"neighbors":{},"prefix_limit":{},"remote_as":0,"remove_private_as":false,"type":""},` +
		`"ext":{"apply_groups":[],"description":"","export_policy":"","import_policy":"","local_address":"","local_as":65000,"multihop_ttl":64,"multipath":false,"neighbors":{"192.0.2.9":{"authentication_key":"","description":"","export_policy":"nhs deny","import_policy":"","local_address":"","local_as":65000,"nhs":true,"prefix_limit":{"inet":{"unicast":{"limit":500,"teardown":{"threshold":90}}}},"remote_as":65100,"route_reflector_client":true}},"prefix_limit":{},"remote_as":65100,"remove_private_as":false,"type":"external"}}`
	if got != want {
		t.Errorf("bgp config\n got %s\nwant %s", got, want)
	}
	if got := parseJunosBGPConfig(junosReply(t, `<configuration/>`), junosReply(t, `<configuration/>`), pol, "", ""); len(got) != 0 {
		t.Errorf("no bgp: %v", got)
	}
}

func TestJunosRouteAndCommandsParse(t *testing.T) {
	routes := parseJunosRoutes(junosReply(t, `<route-information><route-table><table-name>inet.0</table-name><rt><rt-destination>1.0.4.0</rt-destination><rt-prefix-length>24</rt-prefix-length>
<rt-entry><current-active/><protocol-name>BGP</protocol-name><preference>170</preference><age seconds="100">1:40</age><local-as>65000</local-as><peer-as>65001</peer-as><as-path>AS path: 65001 I</as-path><communities><community>65001:1</community></communities><peer-id>192.0.2.1</peer-id>
<nh><selected-next-hop/><to>192.0.2.1</to><via>ge-0/0/0.0</via></nh></rt-entry>
<rt-entry><protocol-name>Static</protocol-name><nh><to>192.0.2.2</to></nh></rt-entry></rt></route-table></route-information>`), "bgp")
	want := `{"1.0.4.0/24":[{"protocol":"BGP","current_active":true,"last_active":false,"age":100,"next_hop":"192.0.2.1","outgoing_interface":"ge-0/0/0.0","selected_next_hop":true,"preference":170,"inactive_reason":"","routing_table":"inet.0","protocol_attributes":{"as_path":"65001","communities":["65001:1"],"local_as":65000,"local_preference":null,"metric":null,"metric2":null,"preference2":null,"remote_address":"192.0.2.1","remote_as":65001}}]}`
	if got := asJSON(t, routes); got != want {
		t.Errorf("routes\n got %s\nwant %s", got, want)
	}
	stats := parseJunosNTPStats("     remote           refid      st t when poll reach   delay   offset  jitter\n=====\n 192.0.2.1 .INIT. 16 - - 64 0 0.000 0.000 4000.00\n*192.0.2.2   192.0.2.9  2 u  12  64  377  1.5  -0.2  0.3\n 2400:cb00:4:102 .INIT. 16 u - 1024 0 0.000 0.000 4000.00\n")
	if got, want := asJSON(t, stats), `[{"remote":"192.0.2.2","referenceid":"192.0.2.9","synchronized":true,"stratum":2,"type":"u","when":"12","hostpoll":64,"reachability":377,"delay":1.5,"offset":-0.2,"jitter":0.3}]`; got != want {
		t.Errorf("ntp stats\n got %s\nwant %s", got, want)
	}
	ping := parseJunosPing(junosReply(t, `<ping-results><probe-results-summary><probes-sent>2</probes-sent><packet-loss>50</packet-loss><rtt-minimum>1234</rtt-minimum><rtt-maximum>1234</rtt-maximum><rtt-average>1234</rtt-average><rtt-stddev>0</rtt-stddev></probe-results-summary><probe-result><ip-address>192.0.2.1</ip-address><rtt>1234</rtt></probe-result><probe-result/></ping-results>`))
	if got, want := asJSON(t, ping), `{"success":{"probes_sent":2,"packet_loss":50,"rtt_min":1.234,"rtt_max":1.234,"rtt_avg":1.234,"rtt_stddev":0,"results":[{"ip_address":"192.0.2.1","rtt":1.234},{"ip_address":"*","rtt":-0.001}]}}`; got != want {
		t.Errorf("ping\n got %s\nwant %s", got, want)
	}
	if got := parseJunosPing(junosReply(t, `<ping-results><probe-results-summary><probes-sent>5</probes-sent><packet-loss>100</packet-loss></probe-results-summary></ping-results>`)); got.Error != "Packet loss 100" {
		t.Errorf("ping loss %+v", got)
	}
	tr := parseJunosTraceroute(junosReply(t, `<traceroute-results><hop><ttl-value>1</ttl-value><probe-result><probe-index>1</probe-index><ip-address>192.0.2.1</ip-address><host-name>gw</host-name><rtt>500</rtt></probe-result><probe-result><probe-index>2</probe-index></probe-result></hop></traceroute-results>`))
	if got, want := asJSON(t, tr), `{"success":{"1":{"probes":{"1":{"rtt":0.5,"ip_address":"192.0.2.1","host_name":"gw"},"2":{"rtt":0,"ip_address":"*","host_name":"*"}}}}}`; got != want {
		t.Errorf("traceroute\n got %s\nwant %s", got, want)
	}
}

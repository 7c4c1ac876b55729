package driver

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestCanonicalXML(t *testing.T) {
	cases := []struct {
		name, in, want string
		bad            bool
	}{
		{name: "prolog, comments and blank text dropped",
			in:   "<?xml version=\"1.0\"?>\n<!-- c -->\n<a xmlns=\"urn:x\">\n  <b>1</b>\n  <c>\n  </c>\n</a>\n",
			want: "<a xmlns=\"urn:x\">\n  <b>1</b>\n  <c/>\n</a>\n"},
		{name: "attributes sorted, declarations first, prefixes kept",
			in:   `<t:if z="1" xmlns:t="urn:t" a="2" xmlns="urn:d"><t:type xmlns:ianaift="urn:iana">ianaift:ethernetCsmacd</t:type></t:if>`,
			want: "<t:if xmlns=\"urn:d\" xmlns:t=\"urn:t\" a=\"2\" z=\"1\">\n  <t:type xmlns:ianaift=\"urn:iana\">ianaift:ethernetCsmacd</t:type>\n</t:if>\n"},
		{name: "escaping",
			in:   `<d q="a&quot;b&#10;c">x &amp; y &lt; z</d>`,
			want: "<d q=\"a&#34;b&#xA;c\">x &amp; y &lt; z</d>\n"},
		{name: "several top-level elements, text kept as is",
			in:   "<a> spaced </a><b>multi\nline</b>",
			want: "<a> spaced </a>\n<b>multi\nline</b>\n"},
		{name: "mixed content",
			in:   "<a>text<b/></a>",
			want: "<a>\n  text\n  <b/>\n</a>\n"},
		{name: "empty", in: "  \n", want: ""},
		{name: "mismatched end", in: "<a><b></a></b>", bad: true},
		{name: "unclosed", in: "<a><b></b>", bad: true},
		{name: "text outside", in: "junk<a/>", bad: true},
		{name: "not XML", in: "set system host-name x", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := canonicalXML(tc.in)
			if tc.bad {
				if !errors.Is(err, errXML) {
					t.Fatalf("want errXML, got %q %v", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q %v\nwant %q", got, err, tc.want)
			}
		})
	}
}

func TestParseXMLLimits(t *testing.T) {
	deep := ""
	for range maxXMLDepth + 2 {
		deep += "<a>"
	}
	if _, err := parseXML(deep); !errors.Is(err, errXML) {
		t.Errorf("deep document: %v", err)
	}
}

func TestReplyData(t *testing.T) {
	cases := []struct {
		name, reply, want string
	}{
		{name: "netconfd style",
			reply: `<rpc-reply message-id="1" xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0" last-modified="x" xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">
  <data>
    <system xmlns="urn:ietf:params:xml:ns:yang:ietf-system">
      <hostname>r1</hostname>
    </system>
    <nacm xmlns="urn:ietf:params:xml:ns:yang:ietf-netconf-acm">
    </nacm>
  </data>
</rpc-reply>`,
			want: "<system xmlns=\"urn:ietf:params:xml:ns:yang:ietf-system\">\n  <hostname>r1</hostname>\n</system>\n<nacm xmlns=\"urn:ietf:params:xml:ns:yang:ietf-netconf-acm\"/>\n"},
		{name: "inherited declarations are copied onto the detached elements",
			reply: `<nc:rpc-reply xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0" xmlns:if="urn:if" xmlns:ianaift="urn:iana" xmlns:unused="urn:u">
<nc:data xmlns="urn:dflt"><if:interfaces><if:interface nc:operation="merge"><if:type>ianaift:ethernetCsmacd</if:type></if:interface></if:interfaces><plain/></nc:data></nc:rpc-reply>`,
			want: "<if:interfaces xmlns:ianaift=\"urn:iana\" xmlns:if=\"urn:if\" xmlns:nc=\"urn:ietf:params:xml:ns:netconf:base:1.0\">\n" +
				"  <if:interface nc:operation=\"merge\">\n    <if:type>ianaift:ethernetCsmacd</if:type>\n  </if:interface>\n</if:interfaces>\n" +
				"<plain xmlns=\"urn:dflt\"/>\n"},
		{name: "no data", reply: `<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><ok/></rpc-reply>`, want: ""},
		{name: "empty data", reply: `<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><data/></rpc-reply>`, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, err := parseXML(tc.reply)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderXML(replyData(root)...); got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
			// The detached rendering is itself well-formed XML.
			if _, err := parseXML(renderXML(replyData(root)...)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestConfigElement(t *testing.T) {
	cases := []struct {
		name, in, want string
		bad            bool
	}{
		{name: "bare data is wrapped",
			in:   `<system xmlns="urn:s"><contact>x</contact></system>`,
			want: "<config xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">\n<system xmlns=\"urn:s\">\n  <contact>x</contact>\n</system>\n</config>"},
		{name: "several elements are wrapped",
			in:   `<a xmlns="urn:a"/><b xmlns="urn:b"/>`,
			want: "<config xmlns=\"urn:ietf:params:xml:ns:netconf:base:1.0\">\n<a xmlns=\"urn:a\"/>\n<b xmlns=\"urn:b\"/>\n</config>"},
		{name: "a config element is kept",
			in:   `<nc:config xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0"><s xmlns="urn:s" nc:operation="delete"/></nc:config>`,
			want: "<nc:config xmlns:nc=\"urn:ietf:params:xml:ns:netconf:base:1.0\">\n  <s xmlns=\"urn:s\" nc:operation=\"delete\"/>\n</nc:config>\n"},
		{name: "malformed", in: `<system><contact></system>`, bad: true},
		{name: "no element", in: `<!-- nothing -->`, bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := configElement(tc.in)
			if tc.bad {
				if !errors.Is(err, errXML) {
					t.Fatalf("want errXML, got %q %v", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q %v\nwant %q", got, err, tc.want)
			}
		})
	}
}

func TestUnifiedDiff(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{"<a/>\n", "<a/>\n", ""},
		{"", "", ""},
		{"<s>\n  <h>r1</h>\n</s>\n", "<s>\n  <c>x</c>\n  <h>r1</h>\n</s>\n",
			"--- running\n+++ candidate\n@@ -1,3 +1,4 @@\n <s>\n+  <c>x</c>\n   <h>r1</h>\n </s>"},
		{"<s/>\n", "", "--- running\n+++ candidate\n@@ -1 +0,0 @@\n-<s/>"},
	}
	for _, tc := range cases {
		if got := unifiedDiff(tc.a, tc.b, "running", "candidate"); got != tc.want {
			t.Errorf("diff(%q, %q)\n got %q\nwant %q", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestJunosFormat(t *testing.T) {
	cases := map[string]string{
		"<configuration/>":                         "xml",
		"  \n<config/>":                            "xml",
		"set system host-name r1":                  "set",
		"delete interfaces ge-0/0/0\nset system x": "set",
		"deactivate\nprotocols":                    "set",
		"system {\n  host-name r1;\n}":             "text",
		"settings {}":                              "text",
		`{"configuration": {}}`:                    "json",
		"{ not json":                               "text",
	}
	for in, want := range cases {
		if got := junosFormat(in); got != want {
			t.Errorf("junosFormat(%q) = %s, want %s", in, got, want)
		}
	}
}

// netconfdUnknown is netconfd's reply to an RPC it does not know.
const netconfdUnknown = `<rpc-reply message-id="6" xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0"
  xmlns:ncx="http://netconfcentral.org/ns/yuma-ncx"
  xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">
  <rpc-error>
    <error-type>rpc</error-type>
    <error-tag>unknown-element</error-tag>
    <error-severity>error</error-severity>
    <error-app-tag>data-incomplete</error-app-tag>
    <error-path>/nc:rpc/command</error-path>
    <error-message xml:lang="en">definition not found</error-message>
    <error-info>
      <bad-element
        xmlns:nc="urn:ietf:params:xml:ns:netconf:base:1.0">nc:command</bad-element>
      <error-number xmlns="http://netconfcentral.org/ns/yuma-ncx">250</error-number>
    </error-info>
  </rpc-error>
</rpc-reply>`

func TestRPCErrors(t *testing.T) {
	cases := []struct {
		name, op, reply string
		unsupported     bool
		msg             string
	}{
		{"netconfd unknown rpc", "command", netconfdUnknown, true,
			"definition not found (unknown-element, bad element nc:command, path /nc:rpc/command)"},
		{"unknown element inside a known rpc", "edit-config",
			`<rpc-reply><rpc-error><error-tag>unknown-element</error-tag><error-severity>error</error-severity><error-path>/nc:rpc/nc:edit-config/nc:config/sys:system</error-path><error-info><bad-element>bogus</bad-element></error-info></rpc-error></rpc-reply>`,
			false, "unknown-element (bad element bogus, path /nc:rpc/nc:edit-config/nc:config/sys:system)"},
		{"operation not supported", "get-software-information",
			`<rpc-reply><rpc-error><error-tag>operation-not-supported</error-tag><error-severity>error</error-severity><error-message>no</error-message></rpc-error></rpc-reply>`,
			true, "no (operation-not-supported)"},
		{"junos load error", "load-configuration",
			`<rpc-reply><load-configuration-results><rpc-error><error-severity>error</error-severity><error-message>syntax error</error-message></rpc-error></load-configuration-results></rpc-reply>`,
			false, "syntax error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, err := parseXML(tc.reply)
			if err != nil {
				t.Fatal(err)
			}
			errs := parseRPCErrors(root)
			if len(errs) != 1 {
				t.Fatalf("errors %+v", errs)
			}
			if got := unsupportedRPC(tc.op, errs); got != tc.unsupported {
				t.Errorf("unsupported %v", got)
			}
			if got := (&RPCError{RPC: tc.op, errors: errs}).Error(); got != tc.msg {
				t.Errorf("message %q", got)
			}
		})
	}
	for in, want := range map[string]string{
		"<commit/>": "commit", "<get-config><source/></get-config>": "get-config",
		`<command format="text">x</command>`: "command", "<nc:lock>": "lock",
	} {
		if got := rpcName(in); got != want {
			t.Errorf("rpcName(%q) = %q", in, got)
		}
	}
}

func junosTestdata(t *testing.T, name string) *xnode {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "junos", name+".xml"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := parseXML(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestJunosParsers(t *testing.T) {
	for _, tc := range []struct{ file, host, model, version string }{
		{"get-software-information", "vsrx1", "VSRX", "20.4R3.8"},
		{"get-software-information-multi-re", "mx1-re0", "MX480", "15.1R7.9"},
	} {
		h, m, v := junosSoftware(junosTestdata(t, tc.file))
		if h != tc.host || m != tc.model || v != tc.version {
			t.Errorf("%s: %q %q %q", tc.file, h, m, v)
		}
	}
	if up := junosUptime(junosTestdata(t, "get-system-uptime-information")); up != 259200 {
		t.Errorf("uptime %v", up)
	}
	if up := junosUptime(&xnode{}); up != -1 {
		t.Errorf("uptime without data %v", up)
	}

	ifs := parseJunosInterfaces(junosTestdata(t, "get-interface-information"))
	wantIfs := map[string]Interface{
		"ge-0/0/0":   {IsUp: true, IsEnabled: true, Description: "uplink to core", MACAddress: "52:54:00:AA:BB:01", LastFlapped: 3600, MTU: 1514, Speed: 1000},
		"ge-0/0/0.0": {IsUp: true, IsEnabled: true, Description: "core v4", MACAddress: "52:54:00:AA:BB:01", LastFlapped: 3600, MTU: 1514, Speed: 1000},
		"xe-0/0/1":   {MACAddress: "52:54:00:AA:BB:02", LastFlapped: -1, MTU: 9192, Speed: 10000},
		"xe-0/0/1.0": {MACAddress: "52:54:00:AA:BB:02", LastFlapped: -1, MTU: 9192, Speed: 10000},
		"lo0":        {IsUp: true, IsEnabled: true, LastFlapped: -1, Speed: -1, MACAddress: "None"}, // NAPALM: str(None)
	}
	if !reflect.DeepEqual(ifs, wantIfs) {
		t.Errorf("interfaces\n got %+v\nwant %+v", ifs, wantIfs)
	}

	ips := parseJunosInterfacesIP(junosTestdata(t, "get-interface-information-terse"))
	wantIPs := map[string]InterfaceIP{
		"ge-0/0/0.0": {
			IPv4: map[string]IPPrefix{"10.0.0.1": {30}, "10.0.0.5": {30}},
			IPv6: map[string]IPPrefix{"2001:db8:0:1::1": {64}, "fe80::5054:ff:feaa:bb01": {64}},
		},
		"lo0.0": {IPv4: map[string]IPPrefix{"192.0.2.255": {32}}},
	}
	if !reflect.DeepEqual(ips, wantIPs) {
		t.Errorf("interfaces ip\n got %+v\nwant %+v", ips, wantIPs)
	}

	arp := parseJunosARP(junosTestdata(t, "get-arp-table-information"))
	wantARP := []ARPEntry{
		{Interface: "ge-0/0/0.0", MAC: "52:54:00:CC:DD:01", IP: "10.0.0.2", Age: 1187},
		{Interface: "ge-0/0/0.0", MAC: "52:54:00:CC:DD:02", IP: "10.0.0.6", Age: -1},
	}
	if !reflect.DeepEqual(arp, wantARP) {
		t.Errorf("arp %+v", arp)
	}
	lldp := parseJunosLLDP(junosTestdata(t, "get-lldp-neighbors-information"))
	if want := map[string][]LLDPNeighbor{"ge-0/0/0": {{"core1", "xe-1/0/0"}}, "ge-0/0/2": {{"leaf2", "Ethernet1"}}}; !reflect.DeepEqual(lldp, want) {
		t.Errorf("lldp %+v", lldp)
	}

	for in, want := range map[string]float64{
		"1000mbps": 1000, "10Gbps": 10000, "100Gbps": 100000, "2.5Gbps": 2500, "Unlimited": -1, "Auto": -1, "": -1,
	} {
		if got := junosSpeed(in); got != want {
			t.Errorf("junosSpeed(%q) = %v", in, got)
		}
	}
	for in, want := range map[string]int{"255.255.255.0": 24, "255.255.255.255": 32, "0.0.0.0": 0, "255.255.0.255": 16, "x": -1, "::": -1} {
		if got := netmaskLen(in); got != want {
			t.Errorf("netmaskLen(%q) = %d", in, got)
		}
	}
}

// ietfStateReply is an RFC 8343 appendix-style <get> reply: config in
// /interfaces, state in /interfaces-state (ietf-ip addresses and
// neighbors), plus ietf-system with platform and clock.
const ietfStateReply = `<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><data>
<system xmlns="urn:ietf:params:xml:ns:yang:ietf-system"><hostname>r9</hostname>
 <ntp><server><name>a</name><udp><address>192.0.2.1</address></udp></server><server><name>peer.example</name><association-type>peer</association-type></server></ntp></system>
<system-state xmlns="urn:ietf:params:xml:ns:yang:ietf-system">
 <platform><os-name>Linux</os-name><os-release>6.1.0</os-release><machine>x86_64</machine></platform>
 <clock><current-datetime>2024-01-02T00:00:00Z</current-datetime><boot-datetime>2024-01-01T00:00:00Z</boot-datetime></clock></system-state>
<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">
 <interface><name>eth0</name><description>wan</description><enabled>true</enabled>
  <ipv4 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip"><mtu>1500</mtu><address><ip>192.0.2.9</ip><netmask>255.255.255.0</netmask></address></ipv4></interface>
 <interface><name>eth1</name><enabled>false</enabled></interface>
 <interface><name>eth2</name><ipv4 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip"><address><ip>198.51.100.1</ip><prefix-length>25</prefix-length></address></ipv4></interface>
</interfaces>
<interfaces-state xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">
 <interface><name>eth0</name><admin-status>up</admin-status><oper-status>up</oper-status><last-change>2024-01-01T23:00:00Z</last-change>
  <phys-address>00:0c:29:01:02:03</phys-address><speed>1000000000</speed>
  <ipv4 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip"><address><ip>192.0.2.9</ip><prefix-length>24</prefix-length></address><address><ip>192.0.2.10</ip><prefix-length>24</prefix-length></address>
   <neighbor><ip>192.0.2.254</ip><link-layer-address>00:00:5e:00:01:01</link-layer-address></neighbor></ipv4>
  <ipv6 xmlns="urn:ietf:params:xml:ns:yang:ietf-ip"><address><ip>2001:db8::9</ip><prefix-length>64</prefix-length></address></ipv6></interface>
 <interface><name>eth1</name><admin-status>down</admin-status><oper-status>down</oper-status></interface>
</interfaces-state>
</data></rpc-reply>`

func ietfTestData(t *testing.T) *ietfData {
	t.Helper()
	root, err := parseXML(ietfStateReply)
	if err != nil {
		t.Fatal(err)
	}
	d := &ietfData{}
	for _, n := range replyData(root) {
		switch n.local {
		case "system":
			d.system = append(d.system, n)
		case "system-state":
			d.systemState = append(d.systemState, n)
		case "interfaces":
			d.interfaces = append(d.interfaces, n.children("interface")...)
		case "interfaces-state":
			d.ifState = append(d.ifState, n.children("interface")...)
		}
	}
	return d
}

func TestIETFParsers(t *testing.T) {
	d := ietfTestData(t)
	now := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	ifs, ok := ietfInterfaces(d, now)
	want := map[string]Interface{
		"eth0": {IsUp: true, IsEnabled: true, Description: "wan", MACAddress: "00:0C:29:01:02:03", LastFlapped: 3600, MTU: 1500, Speed: 1000},
		"eth1": {LastFlapped: -1, Speed: -1},
	}
	if !ok || !reflect.DeepEqual(ifs, want) {
		t.Errorf("interfaces %v\n got %+v\nwant %+v", ok, ifs, want)
	}
	ips := ietfInterfacesIP(d)
	wantIPs := map[string]InterfaceIP{
		"eth0": {IPv4: map[string]IPPrefix{"192.0.2.9": {24}, "192.0.2.10": {24}}, IPv6: map[string]IPPrefix{"2001:db8::9": {64}}},
		"eth2": {IPv4: map[string]IPPrefix{"198.51.100.1": {25}}}, // configured only
	}
	if !reflect.DeepEqual(ips, wantIPs) {
		t.Errorf("interfaces ip\n got %+v\nwant %+v", ips, wantIPs)
	}
	arp, ok := ietfARP(d)
	if !ok || !reflect.DeepEqual(arp, []ARPEntry{{Interface: "eth0", MAC: "00:00:5E:00:01:01", IP: "192.0.2.254", Age: -1}}) {
		t.Errorf("arp %v %+v", ok, arp)
	}
	servers, peers := ietfNTP(d)
	if !reflect.DeepEqual(servers, []string{"192.0.2.1"}) || !reflect.DeepEqual(peers, []string{"peer.example"}) {
		t.Errorf("ntp %v %v", servers, peers)
	}
	// Without operational state nothing is reported as up or down.
	d.ifState = nil
	if _, ok := ietfInterfaces(d, now); ok {
		t.Error("interfaces without state")
	}
	if _, ok := ietfARP(d); ok {
		t.Error("arp without state")
	}
	if ips := ietfInterfacesIP(d); len(ips) != 2 || ips["eth0"].IPv4["192.0.2.9"].PrefixLength != 24 {
		t.Errorf("configured addresses %+v", ips)
	}
}

func TestNewJunosOptions(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		port int
		wait time.Duration
		err  error
	}{
		{"defaults", Options{Host: "r1"}, 830, defaultHelloDelay, nil},
		{"port option", Options{Host: "r1", Port: 2830}, 2830, defaultHelloDelay, nil},
		{"port optional arg", Options{Host: "r1", OptionalArgs: map[string]any{"port": int64(22)}}, 22, defaultHelloDelay, nil},
		{"hello delay", Options{Host: "r1", OptionalArgs: map[string]any{"hello_delay": 0.5}}, 830, 500 * time.Millisecond, nil},
		{"hello delay off", Options{Host: "r1", OptionalArgs: map[string]any{"hello_delay": "0"}}, 830, 0, nil},
		{"bad hello delay", Options{Host: "r1", OptionalArgs: map[string]any{"hello_delay": "soon"}}, 0, 0, ErrInvalidArgument},
		{"system transport", Options{Host: "r1", Transport: "system"}, 0, 0, ErrInvalidArgument},
		{"telnet", Options{Host: "r1", OptionalArgs: map[string]any{"transport": "telnet"}}, 0, 0, ErrInvalidArgument},
		{"no host", Options{}, 0, 0, ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Default().New("junos", tc.o)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("want %v, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			j := d.(*junos)
			if j.n.o.Port != tc.port || j.n.helloDelay != tc.wait || d.Platform() != "junos" {
				t.Errorf("port %d, delay %v", j.n.o.Port, j.n.helloDelay)
			}
			if c := d.Capabilities(); !c.HasConfirmedCommit || !c.CommitMessage || !c.CandidateConfig {
				t.Errorf("capabilities before open %+v", c)
			}
			if _, err := d.GetFacts(t.Context()); !errors.Is(err, ErrNotOpen) || !errors.Is(err, ErrConnect) {
				t.Errorf("unopened: %v", err)
			}
			if d.IsAlive(t.Context()) {
				t.Error("unopened driver alive")
			}
			if err := d.Close(t.Context()); err != nil {
				t.Errorf("close unopened: %v", err)
			}
		})
	}
}

func TestJunosLoadPayloadGeneric(t *testing.T) {
	j := &junos{n: &ncSession{caps: []string{capCandidate, capRollbackOnError}}}
	root, _, err := configBody(`<system xmlns="urn:s"><contact>x</contact></system>`)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		format, config string
		root           *xnode
		replace        bool
		want           string
	}{
		{"xml", "", root, false, fakeCompact("<edit-config><target><candidate/></target><default-operation>merge</default-operation>" +
			"<error-option>rollback-on-error</error-option><config>\n<system xmlns=\"urn:s\">\n  <contact>x</contact>\n</system>\n</config></edit-config>")},
		{"xml", "", root, true, fakeCompact("<copy-config><target><candidate/></target><source><config>\n<system xmlns=\"urn:s\">\n  <contact>x</contact>\n</system>\n</config></source></copy-config>")},
		{"text", "a < b & c\nd", nil, true, `<load-configuration action="override" format="text"><configuration-text>a &lt; b &amp; c` + "\n" + `d</configuration-text></load-configuration>`},
	}
	for _, tc := range cases {
		got := j.loadPayload(tc.format, tc.config, tc.root, tc.replace)
		if tc.format == "xml" {
			got = fakeCompact(got)
		}
		if got != tc.want {
			t.Errorf("%s replace=%v\n got %q\nwant %q", tc.format, tc.replace, got, tc.want)
		}
	}
}

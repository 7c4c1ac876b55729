package driver

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
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

// TestEnvironmentCPUByName: CPUs keyed by name (NAPALM iosxr) keep their
// names in the payload and in JSON, in NAPALM's key order.
func TestEnvironmentCPUByName(t *testing.T) {
	env := Environment{CPU: map[CPUKey]CPU{CPUName("0/RP0/CPU0"): {Usage: 3}}}
	m := ToPayload(env).(*payload.Map)
	cpu, _ := m.Get("cpu")
	if keys := strings.Join(m.Keys(), ","); keys != "fans,temperature,power,cpu,memory" {
		t.Errorf("keys %s", keys)
	}
	if c, ok := cpu.(*payload.Map); !ok || strings.Join(c.Keys(), ",") != "0/RP0/CPU0" {
		t.Errorf("cpu %v", cpu)
	}
	b, err := json.Marshal(env)
	if err != nil || !strings.Contains(string(b), `"cpu":{"0/RP0/CPU0":{"%usage":3}}`) {
		t.Errorf("json %s %v", b, err)
	}
	if b, _ := json.Marshal(Environment{CPU: map[CPUKey]CPU{CPUIndex(0): {Usage: 1}}}); !strings.Contains(string(b), `"cpu":{"0":{"%usage":1}}`) {
		t.Errorf("indexed json %s", b)
	}
}

// TestXRPath: the XPath subset of NAPALM's iosxr driver and find_txt's
// defaults.
func TestXRPath(t *testing.T) {
	doc, err := parseXML(`<Response><Get><A><B>1</B><B> 2 </B><C><B>3</B></C><E></E></A><A><B>4</B></A></Get></Response>`)
	if err != nil {
		t.Fatal(err)
	}
	root := doc.kids[0]
	texts := func(path string) string {
		var out []string
		for _, n := range root.all(path) {
			out = append(out, strings.TrimSpace(n.text))
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct{ path, want string }{
		{".//B", "1,2,3,4"},
		{"Get/A/B", "1,2,4"},
		{"Get/A[1]/B", "1,2"},
		{"Get/A[last()]/B", "4"},
		{"Get/A/B[0]", ""},
		{"Get/A/B[2]", "2"},
		{".//C/B", "3"},
		{".//A/*/B", "3"},
		{"Get / A / C / B", "3"},
		{"Missing", ""},
	} {
		if got := texts(c.path); got != c.want {
			t.Errorf("%s: %q, want %q", c.path, got, c.want)
		}
	}
	if v := root.txt("Get/A/B[2]"); v != "2" {
		t.Errorf("txt strips: %q", v)
	}
	if v := root.txtOr("Get/A/E", "0"); v != "0" {
		t.Errorf("empty element takes the default: %q", v)
	}
	if v := root.txtOr("Get/A/Nope", "0"); v != "" {
		t.Errorf("no match is \"\" as in find_txt: %q", v)
	}
	var nilNode *xnode
	if v := nilNode.txt("A"); v != "" {
		t.Errorf("nil node: %q", v)
	}
}

// TestXRCheckReply: the agent's errors become ErrXMLAgent with its message.
func TestXRCheckReply(t *testing.T) {
	for _, c := range []struct{ reply, want string }{
		{`<?xml version="1.0"?><Response MajorVersion="1" MinorVersion="0"><Get><Operational/></Get><ResultSummary ErrorCount="0"/></Response>` + "\nXML> ", ""},
		{`<Response ErrorCode="0x4368" ErrorMsg="not a valid object"><ResultSummary ErrorCount="1"/></Response>`, "not a valid object"},
		{`<Response><CLI ErrorMsg="bad cli"><Exec/></CLI><ResultSummary ErrorCount="1"/></Response>`, "bad cli"},
		{`<Response><CLI><Exec>% Invalid input detected at '^' marker.</Exec></CLI></Response>`, "Invalid input entered"},
		{`ERROR: 0x24319600 'XML-TTY' detected the 'informational' condition`, "0x24319600"},
		{`<Response><Get>`, "unable to process"},
	} {
		_, err := xrCheckReply("<Get/>", c.reply)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.reply, err)
			}
			continue
		}
		if !errors.Is(err, ErrXMLAgent) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrXMLAgent with %q", c.reply, err, c.want)
		}
	}
}

// TestParseXRLLDP: the rows between the header and the total, whether the
// text ends with NAPALM's three trailer lines or was stripped.
func TestParseXRLLDP(t *testing.T) {
	text := "Capability codes:\n\t(R) Router, (B) Bridge\n\t(W) WLAN Access Point\n\n" +
		"Device ID       Local Intf          Hold-time  Capability     Port ID\n" +
		"r1              Gi0/0/0/0           120        R               Gi0/0/0/1\n" +
		"r2              Gi0/0/0/0           120        R               Gi0/0/0/3\n\nTotal entries displayed: 2\n\n"
	want := map[string][]LLDPNeighbor{"Gi0/0/0/0": {{Hostname: "r1", Port: "Gi0/0/0/1"}, {Hostname: "r2", Port: "Gi0/0/0/3"}}}
	for _, in := range []string{text, strings.TrimSpace(text)} {
		if got := parseXRLLDP(in); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v", in, got)
		}
	}
}

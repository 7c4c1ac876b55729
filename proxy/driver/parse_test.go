package driver

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestNormalizeMAC(t *testing.T) {
	cases := map[string]string{
		"5254.0000.0102":    "52:54:00:00:01:02",
		"001c.73ff.fffe":    "00:1C:73:FF:FF:FE",
		"123.4567.89ab":     "01:23:45:67:89:AB",
		"00:1c:73:00:01:00": "00:1C:73:00:01:00",
		"0-1c-73-0-1-0":     "00:1C:73:00:01:00",
		"001C73000100":      "00:1C:73:00:01:00",
		"":                  "",
		"Gi3":               "",
		"zzzz.0000.0000":    "",
	}
	for in, want := range cases {
		if got := normalizeMAC(in); got != want {
			t.Errorf("normalizeMAC(%q) = %q, want %q", in, got, want)
		}
	}
	if macOr("Gi3") != "Gi3" {
		t.Error("macOr")
	}
}

func TestCanonicalInterface(t *testing.T) {
	cases := []struct {
		in   string
		eos  bool
		want string
	}{
		{"Gi2", false, "GigabitEthernet2"}, {"Te1/0/1", false, "TenGigabitEthernet1/0/1"},
		{"Lo0", false, "Loopback0"}, {"Po10", false, "Port-channel10"}, {"Po10", true, "Port-Channel10"},
		{"Et1", true, "Ethernet1"}, {"Ma1", true, "Management1"}, {"Ethernet3", true, "Ethernet3"},
		{"GigabitEthernet1", false, "GigabitEthernet1"}, {"mgmt0", false, "mgmt0"}, {"Xy1", false, "Xy1"},
	}
	for _, tc := range cases {
		if got := canonicalInterface(tc.in, tc.eos); got != tc.want {
			t.Errorf("canonicalInterface(%q, %v) = %q, want %q", tc.in, tc.eos, got, tc.want)
		}
	}
}

func TestSortNicely(t *testing.T) {
	s := []string{"Ethernet10", "Ethernet2", "Loopback0", "Ethernet1/10", "Ethernet1/2", "Management1"}
	sortNicely(s)
	want := []string{"Ethernet1/2", "Ethernet1/10", "Ethernet2", "Ethernet10", "Loopback0", "Management1"}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %v", s)
	}
}

func TestUptimes(t *testing.T) {
	words := map[string]int64{
		"3 days, 2 hours, 7 minutes":               3*daySecs + 2*hourSecs + 7*60,
		"1 year, 2 weeks, 1 day, 1 hour, 1 minute": yearSecs + 2*weekSecs + daySecs + hourSecs + 60,
		"3 days, 2 hours and 7 minutes":            3*daySecs + 2*hourSecs + 7*60,
		"12 minutes":                               12 * 60,
		"":                                         0,
		"2 weeks, 3 days, 4 hours and 5 minutes, crazy": 2*weekSecs + 3*daySecs + 4*hourSecs + 5*60,
	}
	for in, want := range words {
		if got := parseUptimeWords(in); got != want {
			t.Errorf("parseUptimeWords(%q) = %d, want %d", in, got, want)
		}
	}
	bgp := map[string]int{
		"00:14:23": 14*60 + 23, "1d17h": daySecs + 17*hourSecs, "8w5d": 8*weekSecs + 5*daySecs,
		"1y28w": yearSecs + 28*weekSecs, "never": -1, "3d02h": 3*daySecs + 2*hourSecs, "junk": -1,
	}
	for in, want := range bgp {
		if got := bgpUptime(in); got != want {
			t.Errorf("bgpUptime(%q) = %d, want %d", in, got, want)
		}
	}
	ago := map[string]time.Duration{
		"3 days, 2:00:00 ago": 74 * time.Hour, "0:10:22 ago": 10*time.Minute + 22*time.Second,
	}
	for in, want := range ago {
		if got, ok := durationAgo(in); !ok || got != want {
			t.Errorf("durationAgo(%q) = %v %v", in, got, ok)
		}
	}
	if _, ok := durationAgo("yesterday ago"); ok {
		t.Error("durationAgo accepted junk")
	}
}

func TestLLDPCapab(t *testing.T) {
	if got := lldpCapab("B,R", lldpCapabCodes); !reflect.DeepEqual(got, []string{"bridge", "router"}) {
		t.Errorf("ios %v", got)
	}
	if got := lldpCapab("Router, Bridge, WLAN Access Point", lldpCapabNames); !reflect.DeepEqual(got, []string{"bridge", "router", "wlan-access-point"}) {
		t.Errorf("eos %v", got)
	}
	if got := lldpCapab("", lldpCapabCodes); got == nil || len(got) != 0 {
		t.Errorf("empty %#v", got)
	}
}

func TestASNumber(t *testing.T) {
	for in, want := range map[string]int64{"65001": 65001, "1.10": 65546, "4200000000": 4200000000} {
		if got, err := asNumber(in); err != nil || got != want {
			t.Errorf("asNumber(%q) = %d %v", in, got, err)
		}
	}
	if _, err := asNumber("x"); !errors.Is(err, ErrCommand) {
		t.Errorf("asNumber junk: %v", err)
	}
}

func TestIOSDiffNormalization(t *testing.T) {
	incr := "!List of Commands:\ninterface Loopback9\n ip address 10.9.9.9 255.255.255.255\nno ntp server 10.1.1.1\nend\n"
	if got := iosNormalizeMergeIncr(incr); got != "+interface Loopback9\n+ ip address 10.9.9.9 255.255.255.255\n-no ntp server 10.1.1.1" {
		t.Errorf("incremental %q", got)
	}
	if got := iosNormalizeMergeIncr("!List of Commands:\nend\n!No changes were found\n"); got != "" {
		t.Errorf("no changes %q", got)
	}
	ctx := "\n!Contextual Config Diffs:\n+ntp server 1.2.3.4\n-ntp server 5.6.7.8\n"
	if got := iosNormalizeCompare(ctx); got != "\n+ntp server 1.2.3.4\n-ntp server 5.6.7.8\n" {
		t.Errorf("contextual %q", got)
	}
	if got := iosNormalizeMerge("ntp server 1.1.1.1\n\n"); got != "! incremental-diff failed; falling back to echo of merge file\n+ntp server 1.1.1.1" {
		t.Errorf("echo %q", got)
	}
}

func TestCheckTcl(t *testing.T) {
	cases := map[string]bool{
		"hostname r1\nbanner motd ^C hi ^C\n":                       true,
		"event manager applet x\n action 1.0 cli command \"{a}\"\n": true,
		"banner motd {oops\n":                                       false,
		"line }\n":                                                  false,
		"description a \\\n":                                        false,
		"description a \\} b\n":                                     true,
	}
	for in, ok := range cases {
		if err := checkTcl(in); (err == nil) != ok {
			t.Errorf("checkTcl(%q) = %v", in, err)
		}
	}
}

func TestParsePing(t *testing.T) {
	ios := "Type escape sequence to abort.\nSending 5, 100-byte ICMP Echos to 10.0.0.3, timeout is 2 seconds:\n!!!!.\n" +
		"Success rate is 80 percent (4/5), round-trip min/avg/max = 1/2/4 ms"
	got := parseIOSPing(ios, "10.0.0.3")
	want := &PingSuccess{ProbesSent: 5, PacketLoss: 1, RTTMin: 1, RTTAvg: 2, RTTMax: 4,
		Results: []PingProbeRT{{"10.0.0.3", 0}, {"10.0.0.3", 0}, {"10.0.0.3", 0}, {"10.0.0.3", 0}}}
	if got.Error != "" || !reflect.DeepEqual(got.Success, want) {
		t.Errorf("ios ping %+v", got)
	}
	if r := parseIOSPing("% Unrecognized host or address", "x"); r.Error == "" || r.Success != nil {
		t.Errorf("ios ping error %+v", r)
	}
	linux := "PING 10.0.0.3 (10.0.0.3) 72(100) bytes of data.\n" +
		"80 bytes from 10.0.0.3: icmp_seq=1 ttl=64 time=0.101 ms\n" +
		"80 bytes from 10.0.0.3: icmp_seq=2 ttl=64 time=0.202 ms\n\n" +
		"--- 10.0.0.3 ping statistics ---\n3 packets transmitted, 2 received, 33% packet loss, time 2ms\n" +
		"rtt min/avg/max/mdev = 0.101/0.151/0.202/0.050 ms, ipg/ewma 1/0.1 ms"
	ls := parseLinuxPing(linux)
	wantL := &PingSuccess{ProbesSent: 3, PacketLoss: 1, RTTMin: 0.101, RTTAvg: 0.151, RTTMax: 0.202, RTTStddev: 0.05,
		Results: []PingProbeRT{{"10.0.0.3", 0.101}, {"10.0.0.3", 0.202}}}
	if !reflect.DeepEqual(ls, wantL) {
		t.Errorf("linux ping %+v", ls)
	}
}

func TestParseTraceroute(t *testing.T) {
	ios := "Type escape sequence to abort.\nTracing the route to 10.0.0.9\n" +
		"  1 10.0.0.1 1 msec 0 msec 1 msec\n  2 core.example.net (10.1.1.1) [AS 65001] 2 msec *  3 msec\n  3  *  *  *\n"
	got := parseTraceroute(ios, "", "", 0)
	want := map[int]TracerouteHop{
		1: {Probes: map[int]TracerouteProbe{1: {1, "10.0.0.1", "10.0.0.1"}, 2: {0, "10.0.0.1", "10.0.0.1"}, 3: {1, "10.0.0.1", "10.0.0.1"}}},
		2: {Probes: map[int]TracerouteProbe{1: {2, "10.1.1.1", "core.example.net"}, 2: {0, "", ""}, 3: {3, "10.1.1.1", "core.example.net"}}},
		3: {Probes: map[int]TracerouteProbe{1: {}, 2: {}, 3: {}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ios traceroute\n got %+v\nwant %+v", got, want)
	}
	linux := "traceroute to 10.0.0.9 (10.0.0.9), 30 hops max, 60 byte packets\n" +
		" 1  gw (10.0.0.1)  0.310 ms  0.290 ms  0.280 ms\n 2  * * *\n"
	lt := parseTraceroute(linux, "*", "*", 2000)
	if len(lt) != 2 || lt[1].Probes[2] != (TracerouteProbe{0.29, "10.0.0.1", "gw"}) ||
		lt[2].Probes[3] != (TracerouteProbe{2000, "*", "*"}) {
		t.Errorf("linux traceroute %+v", lt)
	}
}

func TestParseBGPConfig(t *testing.T) {
	c := parseBGPConfig("router bgp 65001\n neighbor 10.0.0.1 remote-as 65002\n neighbor 10.0.0.1 description to core 1\n" +
		" neighbor 10.0.0.2 shutdown\n neighbor 10.0.0.3 description\n")
	if c.descriptions["10.0.0.1"] != "to core 1" || !c.shutdown["10.0.0.2"] || c.shutdown["10.0.0.1"] || c.descriptions["10.0.0.3"] != "" {
		t.Errorf("%+v", c)
	}
}

func TestOptionalArgs(t *testing.T) {
	m := map[string]any{"port": int64(2222), "secret": "x", "flag": "false", "n": "7", "f": 3.0}
	if optInt(m, "port", 0) != 2222 || optInt(m, "n", 0) != 7 || optInt(m, "f", 0) != 3 || optInt(m, "none", 9) != 9 {
		t.Error("optInt")
	}
	if optString(m, "secret", "") != "x" || optString(m, "none", "d") != "d" {
		t.Error("optString")
	}
	if optBool(m, "flag", true) || !optBool(m, "none", true) {
		t.Error("optBool")
	}
	d, err := NewIOS(Options{Host: "h", OptionalArgs: map[string]any{"port": "2201", "dest_file_system": "bootflash:"}})
	if err != nil {
		t.Fatal(err)
	}
	if i := d.(*iosDriver); i.s.o.Port != 2201 || i.path("x.txt") != "bootflash:/x.txt" {
		t.Errorf("optional args not applied: %d %s", i.s.o.Port, i.path("x.txt"))
	}
	if _, err := NewIOS(Options{Host: "h", OptionalArgs: map[string]any{"merge_cfg": "a b"}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("bad file name: %v", err)
	}
}

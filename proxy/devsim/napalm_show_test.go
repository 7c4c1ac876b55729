package devsim

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// runOn types lines into a fresh privileged shell of device i and returns each command's output
// (the text between its echo and the next prompt).
func runOn(t *testing.T, f *Fleet, i int, lines ...string) []string {
	t.Helper()
	var out bytes.Buffer
	sh := newShell(f.Device(i), "admin", &out, make(chan struct{}), func() {})
	sh.mode, sh.termLen = modeEnable, 0
	var res []string
	for _, l := range lines {
		out.Reset()
		sh.feed([]byte(l + "\r"))
		text := strings.ReplaceAll(out.String(), "\r", "")
		text = strings.TrimPrefix(text, l+"\n")
		if k := strings.LastIndex(text, "\n"); k >= 0 {
			text = text[:k+1]
		} else {
			text = ""
		}
		res = append(res, text)
	}
	return res
}

// TestNapalmShowsPerDevice: the outputs added for NAPALM's get_bgp_neighbors_detail,
// get_route_to and get_network_instances come from each device's own data (neighbors, AS
// numbers, addresses), and the "| json" forms are JSON.
func TestNapalmShowsPerDevice(t *testing.T) {
	cases := []struct {
		plat, bgp, route string
		jsons            []string
	}{
		{PlatformIOS, "show ip bgp all summary", "show ip route 10.255.0.3", nil},
		{PlatformIOS, "show ip bgp ipv4 unicast neighbors", "show ip route 10.255.0.3 255.255.255.255", nil},
		{PlatformEOS, "show ip bgp neighbors vrf all", "show ip route vrf default 10.255.0.3 detail | json",
			[]string{"show ip route vrf default 10.255.0.3 detail | json", "show vrf | json", "show ip bgp 10.255.0.3/32 vrf default | json",
				"show ip bgp summary vrf all | json", "show ip bgp neighbors vrf all | json", "show ipv6 bgp summary vrf all | json", "show vlan | json"}},
		{PlatformNXOS, "show bgp all summary vrf all", "show ip route vrf all 10.255.0.3",
			[]string{"show vrf detail | json", "show vrf interface | json", "show vlan brief | json",
				"show interface | json", "show interface counters detailed | json"}},
	}
	for _, c := range cases {
		t.Run(c.plat, func(t *testing.T) {
			f, err := Start(context.Background(), Options{Platform: c.plat, Devices: 4, Now: func() time.Time { return goldenNow }})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmds := append([]string{c.bgp, c.route}, c.jsons...)
			d1, d2 := runOn(t, f, 1, cmds...), runOn(t, f, 2, cmds...)
			// device 1 (sw2) peers with 10.0.0.0 (sw1) and 10.0.0.3 (sw3): it has a BGP route to
			// sw3's loopback 10.255.0.3; device 2 (sw3) owns that loopback.
			if !strings.Contains(d1[0], "10.0.0.3") || !strings.Contains(d1[0], "10.0.0.0") || strings.Contains(d2[0], " 10.0.0.0 ") {
				t.Errorf("device 1 BGP output:\n%s\ndevice 2:\n%s", d1[0], d2[0])
			}
			if !strings.Contains(d1[1], "10.255.0.3/32") || !strings.Contains(d1[1], "10.0.0.3") {
				t.Errorf("device 1 route to 10.255.0.3:\n%s", d1[1])
			}
			if d1[1] == d2[1] {
				t.Errorf("devices 1 and 2 answer alike:\n%s", d1[1])
			}
			for k, cmd := range c.jsons {
				if out := d1[2+k]; !json.Valid([]byte(out)) {
					t.Errorf("%q is not JSON:\n%s", cmd, out)
				}
			}
		})
	}
}

// TestVLANShows: EOS "show vlan" and NX-OS "show vlan brief" (text and
// JSON, the formats of NAPALM's get_vlans fixtures) list VLAN 1 and the
// configured VLANs with the switched ports in them, following the running
// configuration.
func TestVLANShows(t *testing.T) {
	cases := []struct {
		plat, cmd, text string
		want            map[string]string // JSON fragments
		conf            []string
	}{
		{PlatformEOS, "show vlan", "10    hosts                            active    Et1",
			map[string]string{"10": `"10":{"dynamic":false,"interfaces":{"Ethernet1":{"privatePromoted":false}},"name":"hosts","status":"active"}`,
				"20": `"20":{"dynamic":false,"interfaces":{"Ethernet4":{"privatePromoted":false}},"name":"VLAN0020","status":"active"}`},
			[]string{"vlan 20", "interface Ethernet4", "switchport access vlan 20"}},
		{PlatformNXOS, "show vlan brief", "10   hosts                            active    Eth1/1",
			map[string]string{"10": `"vlanshowplist-ifidx":"Ethernet1/1"`, "20": `"vlanshowbr-vlanname":"VLAN0020"`},
			[]string{"vlan 20", "interface Ethernet1/4", "switchport access vlan 20"}},
	}
	for _, c := range cases {
		t.Run(c.plat, func(t *testing.T) {
			f, err := Start(context.Background(), Options{Platform: c.plat, Devices: 1, Now: func() time.Time { return goldenNow }})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lines := append([]string{"configure terminal"}, c.conf...)
			lines = append(lines, "end", c.cmd, c.cmd+" | json")
			out := runOn(t, f, 0, lines...)
			text, js := out[len(out)-2], out[len(out)-1]
			if !strings.Contains(text, c.text) || !strings.Contains(text, "default") {
				t.Errorf("%s:\n%s", c.cmd, text)
			}
			var v any
			if err := json.Unmarshal([]byte(js), &v); err != nil {
				t.Fatalf("%s | json: %v\n%s", c.cmd, err, js)
			}
			compact, _ := json.Marshal(v)
			for id, frag := range c.want {
				if !strings.Contains(string(compact), frag) {
					t.Errorf("VLAN %s: %s lacks %s", id, compact, frag)
				}
			}
		})
	}
}

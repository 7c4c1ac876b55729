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
				"show ip bgp summary vrf all | json", "show ip bgp neighbors vrf all | json", "show ipv6 bgp summary vrf all | json"}},
		{PlatformNXOS, "show bgp all summary vrf all", "show ip route vrf all 10.255.0.3",
			[]string{"show vrf detail | json", "show vrf interface | json"}},
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

package driver

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Route is one entry of NAPALM get_route_to. Age is a number of seconds,
// or "" where NAPALM's driver has none (ios routes without an age).
type Route struct {
	Protocol           string         `json:"protocol"`
	CurrentActive      bool           `json:"current_active"`
	LastActive         bool           `json:"last_active"`
	Age                any            `json:"age"`
	NextHop            string         `json:"next_hop"`
	OutgoingInterface  string         `json:"outgoing_interface"`
	SelectedNextHop    bool           `json:"selected_next_hop"`
	Preference         int            `json:"preference"`
	InactiveReason     string         `json:"inactive_reason"`
	RoutingTable       string         `json:"routing_table"`
	ProtocolAttributes map[string]any `json:"protocol_attributes"`
}

// RouteOptions are get_route_to's arguments.
type RouteOptions struct {
	Destination string
	Protocol    string
	Longer      bool
}

// RouteGetter is implemented by drivers with get_route_to.
type RouteGetter interface {
	GetRouteTo(ctx context.Context, o RouteOptions) (map[string][]Route, error)
}

// ErrBadDestination is get_route_to's answer to a destination that is not
// an IP network (NAPALM ios: "Please specify a valid destination!").
var ErrBadDestination = errors.New("Please specify a valid destination!")

// parseDestination is Python's ipaddress.ip_network(destination) (strict:
// host bits must be zero).
func parseDestination(dest string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(dest); err == nil {
		if p.Masked() != p {
			return netip.Prefix{}, fmt.Errorf("%w: %s has host bits set", ErrBadDestination, dest)
		}
		return p, nil
	}
	a, err := netip.ParseAddr(dest)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%w: %q", ErrBadDestination, dest)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func maskString(bits int) string {
	m := uint32(0)
	if bits > 0 {
		m = ^uint32(0) << (32 - bits)
	}
	return fmt.Sprintf("%d.%d.%d.%d", m>>24, m>>16&255, m>>8&255, m&255)
}

const ipAddrRe = `\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}`

var (
	iosRouteViaRe  = regexp.MustCompile(`^[ ]{2}([*| ])[ ](?P<ip>` + ipAddrRe + `)( [\(\)a-z\d\.]+)?(, from ` + ipAddrRe + `, (?P<age>[\ddhwy:]+) ago)?(, via (?P<via>\S+))?`)
	iosVRFSimpleRe = regexp.MustCompile(`^[ ]{2}(\S+)`)
	iosVRFAdvanRe  = regexp.MustCompile(`^[ ]{2}(\S+)[ ]+[<> a-z:\d]+[ ]+([a-z\d,]+)`)
	iosRemoteASRe  = regexp.MustCompile(`remote AS ([\d\.]+)`)
	iosASPathRe    = regexp.MustCompile(`^[ ]{2}([\d\(]([\d\) ]+)|Local)`)
	iosRPRouteRe   = regexp.MustCompile(`Routing entry for (` + ipAddrRe + `\/\d+)`)
	iosRPFromRe    = regexp.MustCompile(`Known via "([a-z]+)[ "]`)
	iosRPViaRe     = regexp.MustCompile(`via (\S+)`)
	iosRPMetricRe  = regexp.MustCompile(`^[ ]+Route metric is (\d+)`)
	iosBGPASRe     = regexp.MustCompile(`Routing Protocol is "bgp (\d+)`)
	iosBGPAttrRes  = []struct {
		key, re, def string
	}{
		{"aspath", `[^|\\n][ ]{2}([\d\(\)]([\d\(\) ])*|Local)`, ""},
		{"bgpnh", `[^|\\n][ ]{4}(` + ipAddrRe + `)`, ""},
		{"bgpfrom", `from (` + ipAddrRe + `)`, ""},
		{"bgpcomm", `  Community: ([\w\d\-\: ]+)`, ""},
		{"bgpexcomm", `Extended Community: ([\w\d\-\: ]+)`, ""},
		{"bgplp", `localpref (\d+)`, ""},
		{"bgpie", `(external)`, "internal"},
	}
	iosBGPAttrCompiled = func() []*regexp.Regexp {
		var r []*regexp.Regexp
		for _, a := range iosBGPAttrRes {
			r = append(r, regexp.MustCompile(a.re))
		}
		return r
	}()
)

// iosVRFs is NAPALM ios's _get_vrfs(ip_version): show vrf (or show ip vrf
// on older IOS).
func iosVRFs(o runner, version int) ([]string, error) {
	out, _, err := o.send("show vrf")
	if err != nil {
		return nil, err
	}
	out = iosPostprocess(out)
	var vrfs []string
	if strings.Contains(out, "% Invalid input detected") {
		if out, _, err = o.send("show ip vrf"); err != nil {
			return nil, err
		}
		lines := strings.Split(iosPostprocess(out), "\n")
		for _, l := range lines[1:] {
			if m := iosVRFSimpleRe.FindStringSubmatch(l); m != nil {
				vrfs = append(vrfs, m[1])
			}
		}
		return vrfs, nil
	}
	lines := strings.Split(out, "\n")
	for _, l := range lines[1:] {
		if m := iosVRFAdvanRe.FindStringSubmatch(l); m != nil && (version == 0 || strings.Contains(m[2], strconv.Itoa(version))) {
			vrfs = append(vrfs, m[1])
		}
	}
	return vrfs, nil
}

// GetRouteTo implements RouteGetter like NAPALM ios: IPv4 only, every VRF
// with IPv4 then the global table, BGP attributes of the best path.
func (d *iosDriver) GetRouteTo(ctx context.Context, ro RouteOptions) (map[string][]Route, error) {
	if ro.Longer {
		return nil, fmt.Errorf("%w: Longer prefixes not yet supported for IOS", ErrNotSupported)
	}
	dest, err := parseDestination(ro.Destination)
	if err != nil {
		return nil, err
	}
	if !dest.Addr().Is4() {
		return nil, fmt.Errorf("%w: get_route_to: only IPv4 destinations on IOS", ErrNotSupported)
	}
	routes := map[string][]Route{}
	err = d.s.query(ctx, func(o runner) error {
		vrfs, err := iosVRFs(o, 4)
		if err != nil {
			return err
		}
		slices.Sort(vrfs)
		vrfs = append(vrfs, "default")
		prefix, netmask := dest.Addr().String(), ""
		if strings.Contains(ro.Destination, "/") {
			netmask = maskString(dest.Bits())
			routes[ro.Destination] = []Route{}
		}
		for _, vrf := range vrfs {
			cmd := fmt.Sprintf("show ip route %s %s", prefix, netmask)
			if vrf != "default" {
				cmd = fmt.Sprintf("show ip route vrf %s %s %s", vrf, prefix, netmask)
			}
			out, _, err := o.send(cmd)
			if err != nil {
				return err
			}
			out = iosPostprocess(out)
			pm := iosRPFromRe.FindStringSubmatch(out)
			if pm == nil {
				continue
			}
			match := ro.Destination
			if netmask == "" {
				if m := iosRPRouteRe.FindStringSubmatch(out); m != nil {
					match = m[1]
					if _, ok := routes[match]; !ok {
						routes[match] = []Route{}
					}
				}
			}
			proto := pm[1]
			_, rdb, _ := strings.Cut(out, "Routing Descriptor Blocks:")
			found := false
			var nh, age, via string
			for _, l := range strings.Split(rdb, "\n") {
				if m := iosRouteViaRe.FindStringSubmatch(l); m != nil {
					nh, age, via = m[iosRouteViaRe.SubexpIndex("ip")], m[iosRouteViaRe.SubexpIndex("age")], m[iosRouteViaRe.SubexpIndex("via")]
					found = true
					continue
				} else if proto == "connected" {
					if m := iosRPViaRe.FindStringSubmatch(l); m != nil {
						via, age, nh = m[1], "", ""
						found = true
					}
				}
				m := iosRPMetricRe.FindStringSubmatch(l)
				if m == nil || !found {
					continue
				}
				r := Route{Protocol: proto, OutgoingInterface: canonicalInterface(via, false), Age: "", CurrentActive: true,
					RoutingTable: vrf, LastActive: true, ProtocolAttributes: map[string]any{}, NextHop: nh,
					SelectedNextHop: true, Preference: atoi(m[1], 0)}
				if age != "" {
					r.Age = bgpUptime(age)
				}
				if ro.Protocol == "" || ro.Protocol == proto {
					if proto == "bgp" {
						if r.ProtocolAttributes, err = iosBGPRouteAttr(o, ro.Destination, vrf); err != nil {
							return err
						}
					}
					found = false
					routes[match] = append(routes[match], r)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return routes, nil
}

// iosBGPRouteAttr is NAPALM ios's _get_bgp_route_attr: the attributes of
// the best path of destination in vrf.
func iosBGPRouteAttr(o runner, dest, vrf string) (map[string]any, error) {
	attr := map[string]any{}
	out, _, err := o.send("show ip protocols | include bgp")
	if err != nil {
		return nil, err
	}
	localAS := ""
	if m := iosBGPASRe.FindStringSubmatch(iosPostprocess(out)); m != nil {
		localAS = m[1]
	}
	cmd := "show ip bgp " + dest
	if vrf != "default" {
		cmd = fmt.Sprintf("show ip bgp vpnv4 vrf %s %s", vrf, dest)
	}
	out, _, err = o.send(cmd)
	if err != nil {
		return nil, err
	}
	out = iosPostprocess(out)
	var secs []string
	if strings.Contains(out, "Refresh Epoch") {
		secs = strings.Split(out, "Refresh Epoch")
	} else {
		lines := strings.Split(out, "\n")
		bord := []int{0}
		for i, l := range lines {
			if iosASPathRe.MatchString(l) {
				bord = append(bord, i)
			}
		}
		for i := range bord {
			var block string
			if i == len(bord)-1 {
				block = strings.Join(lines[bord[i]:], "\n")
			} else {
				end := max(bord[i+1]-1, bord[i])
				block = strings.Join(lines[bord[i]:end], "\n")
			}
			secs = append(secs, "\n"+block)
		}
	}
	for _, path := range secs[1:] {
		if !strings.Contains(path, "best") {
			continue
		}
		res := map[string]string{}
		for i, a := range iosBGPAttrRes {
			res[a.key] = a.def
			if m := iosBGPAttrCompiled[i].FindStringSubmatch(path); m != nil {
				res[a.key] = m[1]
			}
		}
		ncmd := "show ip bgp neighbors | include is " + res["bgpnh"]
		if vrf != "default" {
			ncmd = fmt.Sprintf("show ip bgp vpnv4 vrf %s neighbors | include is %s", vrf, res["bgpnh"])
		}
		nout, _, err := o.send(ncmd)
		if err != nil {
			return nil, err
		}
		remoteAS := ""
		if m := iosRemoteASRe.FindStringSubmatch(iosPostprocess(nout)); m != nil {
			remoteAS = m[1]
		} else if res["bgpie"] == "external" {
			first, _, _ := strings.Cut(res["aspath"], " ")
			remoteAS = strings.ReplaceAll(first, "(", "")
		} else {
			remoteAS = localAS
		}
		lp, err := strconv.Atoi(res["bgplp"])
		if err != nil {
			return nil, o.errf(ErrCommand, cmd, fmt.Errorf("no localpref in the best path"))
		}
		las, _ := asNumber(localAS)
		attr = map[string]any{
			"as_path":          res["aspath"],
			"remote_address":   res["bgpfrom"],
			"communities":      append([]string{}, strings.Fields(res["bgpcomm"]+" "+res["bgpexcomm"])...),
			"local_preference": lp,
			"local_as":         las,
		}
		if remoteAS != "" {
			attr["remote_as"], _ = asNumber(remoteAS)
		}
	}
	return attr, nil
}

package driver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	nxosRouteViaRe  = regexp.MustCompile(`^    (?P<used>[\*| ])via ((?P<ip>` + ipAddrRe + `)(%(?P<vrf>\S+))?, )?((?P<int>[\w./:]+), )?\[(\d+)/(?P<metric>\d+)\], (?P<age>[\d\w:]+), (?P<source>[\w]+)(-(?P<procnr>\d+))?(?P<rest>.*)`)
	nxosRTVRFRe     = regexp.MustCompile(`VRF "(\S+)"`)
	nxosRTPrefRe    = regexp.MustCompile(`^(` + ipAddrRe + `/\d{1,2}), ubest.*`)
	nxosBGPTagRe    = regexp.MustCompile(`^BGP Protocol Tag\s+: (\d+)`)
	nxosBGPCommunRe = regexp.MustCompile(`^[ ]{10}([\S ]+)`)
	nxosBGPAttrRes  = []struct{ key, re, def string }{
		{"aspath", `AS-Path: ([\d\(\)]([\d\(\) ])*)`, ""},
		{"bgpnh", `[^|\\n][ ]{4}(` + ipAddrRe + `)`, ""},
		{"bgpfrom", `from (` + ipAddrRe + `)`, ""},
		{"bgpcomm", `  Community: ([\w\d\-\: ]+)`, ""},
		{"bgplp", `localpref (\d+)`, ""},
		{"bgpie", `^: (\w+),`, ""},
		{"vrfimp", `Imported from [\S]+ \(VRF (\S+)\)`, ""},
	}
	nxosBGPAttrCompiled = func() []*regexp.Regexp {
		var r []*regexp.Regexp
		for _, a := range nxosBGPAttrRes {
			r = append(r, regexp.MustCompile(a.re))
		}
		return r
	}()
)

// GetRouteTo implements RouteGetter like NAPALM nxos_ssh: IPv4 only, show
// ip route vrf all DEST, BGP attributes of the best path from show ip bgp
// vrf V DEST.
func (d *nxosDriver) GetRouteTo(ctx context.Context, ro RouteOptions) (map[string][]Route, error) {
	if ro.Longer {
		return nil, fmt.Errorf("%w: Longer prefixes not yet supported for NXOS", ErrNotSupported)
	}
	dest, err := parseDestination(ro.Destination)
	if err != nil {
		return nil, err
	}
	if !dest.Addr().Is4() {
		return nil, fmt.Errorf("%w: get_route_to: only IPv4 destinations on NX-OS", ErrNotSupported)
	}
	routes := map[string][]Route{}
	err = d.s.query(ctx, func(o runner) error {
		out, err := o.show("show ip route vrf all " + ro.Destination)
		if err != nil {
			return err
		}
		secs := strings.Split(out, "IP Route Table for ")
		for _, sec := range secs[1:] {
			if strings.Contains(sec, "Route not found") {
				continue
			}
			vrfFound, prefFound := false, false
			var nhs []Route
			curPrefix, curVRF := "", ""
			flush := func() {
				if _, ok := routes[curPrefix]; !ok {
					routes[curPrefix] = []Route{}
				}
				routes[curPrefix] = append(routes[curPrefix], nhs...)
				nhs = nil
			}
			for _, l := range strings.Split(sec, "\n") {
				l = strings.TrimRight(l, "\r")
				if !vrfFound {
					if m := nxosRTVRFRe.FindStringSubmatch(l); m != nil {
						curVRF, vrfFound = m[1], true
					}
					continue
				}
				if m := nxosRTPrefRe.FindStringSubmatch(l); m != nil {
					if prefFound {
						flush()
					} else {
						prefFound = true
					}
					curPrefix = m[1]
					continue
				}
				m := nxosRouteViaRe.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				g := func(n string) string { return m[nxosRouteViaRe.SubexpIndex(n)] }
				used := g("used") == "*"
				src := g("source")
				if ro.Protocol != "" && ro.Protocol != src {
					continue
				}
				metric, _ := strconv.Atoi(g("metric"))
				r := Route{Protocol: src, OutgoingInterface: canonicalInterface(g("int"), false), Age: bgpUptime(g("age")),
					CurrentActive: used, RoutingTable: curVRF, LastActive: used, NextHop: g("ip"), SelectedNextHop: used,
					Preference: metric, ProtocolAttributes: map[string]any{}}
				if src == "bgp" {
					if r.ProtocolAttributes, err = nxosBGPRouteAttr(o, curPrefix, curVRF, g("ip")); err != nil {
						return err
					}
				}
				nhs = append(nhs, r)
			}
			if prefFound {
				flush()
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return routes, nil
}

// nxosBGPRouteAttr is NAPALM nxos_ssh's _get_bgp_route_attr.
func nxosBGPRouteAttr(o runner, dest, vrf, nextHop string) (map[string]any, error) {
	attr := map[string]any{}
	out, _, err := o.send(`show bgp process | include "BGP Protocol Tag"`)
	if err != nil {
		return nil, err
	}
	tm := nxosBGPTagRe.FindStringSubmatch(strings.TrimSpace(out))
	if tm == nil {
		return attr, nil
	}
	localAS := tm[1]
	cmd := fmt.Sprintf("show ip bgp vrf %s %s", vrf, dest)
	out, _, err = o.send(cmd)
	if err != nil {
		return nil, err
	}
	paths := strings.Split(out, "Path type")
	for _, path := range paths[1:] {
		if !strings.Contains(path, "is best path") {
			continue
		}
		res := map[string]string{}
		for i, a := range nxosBGPAttrRes {
			res[a.key] = a.def
			if m := nxosBGPAttrCompiled[i].FindStringSubmatch(path); m != nil {
				res[a.key] = m[1]
			}
		}
		ie := res["bgpie"]
		if ie != "redist" && ie != "local" && res["bgpnh"] != nextHop {
			continue
		}
		nout, _, err := o.send(fmt.Sprintf(`show ip bgp neighbors vrf %s | include "is %s"`, vrf, res["bgpnh"]))
		if err != nil {
			return nil, err
		}
		remoteAS := ""
		if m := iosRemoteASRe.FindStringSubmatch(nout); m != nil {
			remoteAS = m[1]
		} else if ie == "external" {
			// NAPALM takes the first word of "external" here (an AS
			// number it cannot be); kept as NAPALM computes it.
			remoteAS = "external"
		} else if ie == "internal" {
			remoteAS = localAS
		}
		comms := strings.Fields(res["bgpcomm"])
		if _, ext, ok := strings.Cut(path, "Extcommunity:"); ok && strings.Count(path, "Extcommunity:") == 1 {
			lines := strings.Split(ext, "\n")
			for _, l := range lines[1:] {
				m := nxosBGPCommunRe.FindStringSubmatch(strings.TrimRight(l, "\r"))
				if m == nil {
					break
				}
				comms = append(comms, m[1])
			}
		}
		lp, err := strconv.Atoi(res["bgplp"])
		if err != nil {
			return nil, o.errf(ErrCommand, cmd, fmt.Errorf("no localpref in the best path"))
		}
		las, _ := asNumber(localAS)
		attr = map[string]any{"as_path": strings.TrimSpace(res["aspath"]), "remote_address": res["bgpfrom"],
			"local_preference": lp, "communities": comms, "local_as": las, "remote_as": 0}
		if remoteAS != "" {
			n, err := asNumber(remoteAS)
			if err != nil {
				return nil, o.errf(ErrCommand, cmd, err)
			}
			attr["remote_as"] = n
		}
	}
	return attr, nil
}

package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// jsonIP is napalm.base.helpers.ip: an address in its canonical text
// ("" when it is not one, where NAPALM would raise).
func jsonIP(v any) string {
	s, _ := v.(string)
	a, err := netip.ParseAddr(s)
	if err != nil {
		return ""
	}
	return a.String()
}

// jsonAS is napalm.base.helpers.as_number of a JSON value.
func jsonAS(v any) any {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		if n, err := asNumber(x); err == nil {
			return n
		}
		return x
	}
	return v
}

func jmap(v any, keys ...string) map[string]any {
	m, _ := v.(map[string]any)
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	if m == nil {
		return map[string]any{}
	}
	return m
}

// eosVRFNames lists the VRFs of show vrf (JSON), sorted.
func eosVRFNames(o runner) ([]string, error) {
	var v struct {
		VRFs map[string]json.RawMessage `json:"vrfs"`
	}
	if err := showJSON(o, "show vrf", &v); err != nil {
		return nil, err
	}
	var names []string
	for n := range v.VRFs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// GetRouteTo implements RouteGetter like NAPALM eos: show ip[v6] route vrf
// V DEST [longer-prefixes] [PROTOCOL] detail for every VRF, BGP paths from
// show ip[v6] bgp DEST [longer-prefixes] vrf V (JSON).
func (d *eosDriver) GetRouteTo(ctx context.Context, ro RouteOptions) (map[string][]Route, error) {
	dest, err := parseDestination(ro.Destination)
	if err != nil {
		return nil, err
	}
	for what, v := range map[string]string{"destination": ro.Destination, "protocol": ro.Protocol} {
		if err := safeArg(d.s, what, v); err != nil {
			return nil, err
		}
	}
	protocol := ro.Protocol
	if strings.ToLower(protocol) == "direct" {
		protocol = "connected"
	}
	ipv := ""
	if dest.Addr().Is6() {
		ipv = "v6"
	}
	longer := ""
	if ro.Longer {
		longer = "longer-prefixes"
	}
	routes := map[string][]Route{}
	err = d.s.query(ctx, func(o runner) error {
		vrfs, err := eosVRFNames(o)
		if err != nil {
			return err
		}
		cache := map[string]map[string]any{}
		for _, vrf := range vrfs {
			var out map[string]any
			if err := showJSON(o, fmt.Sprintf("show ip%s route vrf %s %s %s %s detail", ipv, vrf, ro.Destination, longer, protocol), &out); err != nil {
				return err
			}
			rs := jmap(out, "vrfs", vrf, "routes")
			if ipv == "v6" {
				rs = jmap(out, "routes")
			}
			for prefix, rv := range rs {
				det := jmap(rv)
				if _, ok := routes[prefix]; !ok {
					routes[prefix] = []Route{}
				}
				rtype, _ := det["routeType"].(string)
				pref := 0
				if p, ok := det["preference"].(float64); ok {
					pref = int(p)
				}
				base := Route{CurrentActive: true, LastActive: true, Age: 0, Protocol: rtype, Preference: pref,
					RoutingTable: vrf, SelectedNextHop: true, ProtocolAttributes: map[string]any{}}
				vias, _ := det["vias"].([]any)
				if protocol == "bgp" || strings.EqualFold(rtype, "ebgp") || strings.EqualFold(rtype, "ibgp") {
					nhIf := map[string]any{}
					for _, nv := range vias {
						nh := jmap(nv)
						if vt, ok := nh["vtepAddr"]; ok {
							nh["nexthopAddr"], nh["interface"] = vt, "vxlan1"
						}
						nhIf[jsonIP(nh["nexthopAddr"])] = nh["interface"]
					}
					if _, ok := cache[vrf]; !ok {
						var b map[string]any
						if err := showJSON(o, fmt.Sprintf("show ip%s bgp %s %s vrf %s", ipv, ro.Destination, longer, vrf), &b); err != nil {
							return err
						}
						cache[vrf] = jmap(b, "vrfs", vrf)
					}
					vd := cache[vrf]
					localAS := jsonAS(vd["asn"])
					paths, _ := jmap(vd, "bgpRouteEntries", prefix)["bgpRoutePaths"].([]any)
					for _, pv := range paths {
						p := jmap(pv)
						ape := jmap(p, "asPathEntry")
						asPath, _ := ape["asPath"].(string)
						apType, _ := ape["asPathType"].(string)
						var remoteAS any = localAS
						if apType != "Internal" && apType != "Local" {
							f := strings.Fields(strings.TrimRight(strings.Trim(asPath, "()"), "ie?"))
							if len(f) > 0 {
								remoteAS = jsonAS(f[len(f)-1])
							}
						}
						remote := jsonIP(jmap(p, "routeDetail", "peerEntry")["peerAddr"])
						if remote == "" {
							remote = jsonIP(jmap(p, "peerEntry")["peerAddr"])
						}
						active, _ := jmap(p, "routeType")["active"].(bool)
						comms, ok := jmap(p, "routeDetail")["communityList"].([]any)
						if !ok {
							comms = []any{}
						}
						reason, _ := p["reasonNotBestpath"].(string)
						nh := jsonIP(p["nextHop"])
						r := base
						r.CurrentActive, r.LastActive, r.SelectedNextHop = active, active, active
						r.NextHop = nh
						r.InactiveReason = reason
						r.OutgoingInterface, _ = nhIf[nh].(string)
						r.ProtocolAttributes = map[string]any{
							"metric": det["metric"], "as_path": asPath, "local_preference": p["localPreference"],
							"local_as": localAS, "remote_as": remoteAS, "remote_address": remote,
							"preference2": p["weight"], "communities": comms,
						}
						routes[prefix] = append(routes[prefix], r)
					}
					continue
				}
				if det["routeAction"] == "drop" {
					base.NextHop = "NULL"
				}
				if det["routingDisabled"] == true {
					base.LastActive, base.CurrentActive = false, false
				}
				for _, nv := range vias {
					nh := jmap(nv)
					r := base
					r.ProtocolAttributes = map[string]any{}
					r.NextHop = ""
					if nh["nexthopAddr"] != nil {
						r.NextHop = jsonIP(nh["nexthopAddr"])
					}
					r.OutgoingInterface, _ = nh["interface"].(string)
					routes[prefix] = append(routes[prefix], r)
				}
				if v, ok := det["vias"].([]any); ok && len(v) == 0 {
					routes[prefix] = append(routes[prefix], base)
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

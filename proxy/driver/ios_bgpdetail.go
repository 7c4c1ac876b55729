package driver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// iosAFICommand is NAPALM ios's AFI_COMMAND_MAP: the "show ip bgp" words of
// an address family of show ip bgp all summary.
var iosAFICommand = map[string]string{
	"IPv4 Unicast": "ipv4 unicast", "IPv6 Unicast": "ipv6 unicast", "VPNv4 Unicast": "vpnv4 all",
	"VPNv6 Unicast": "vpnv6 unicast all", "IPv4 Multicast": "ipv4 multicast", "IPv6 Multicast": "ipv6 multicast",
	"L2VPN E-VPN": "l2vpn evpn", "MVPNv4 Unicast": "ipv4 mvpn all", "MVPNv6 Unicast": "ipv6 mvpn all",
	"VPNv4 Flowspec": "ipv4 flowspec", "VPNv6 Flowspec": "ipv6 flowspec",
}

var (
	iosSumAFIRe    = regexp.MustCompile(`^For address family: (.*)`)
	iosSumRIDRe    = regexp.MustCompile(`^BGP router identifier (\S+), local AS number (\d+)`)
	iosSumHeadRe   = regexp.MustCompile(`^Neighbor\s+V`)
	iosSumNameRe   = regexp.MustCompile(`^(\S+)`)
	iosSumWrapRe   = regexp.MustCompile(`^\s+(\d)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)`)
	iosSumRowRe    = regexp.MustCompile(`^(\S+)\s+(\d)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)`)
	iosNeighborsRe = rules(
		`BGP neighbor is (?P<neighbor>\S+),(?:\s+vrf (?P<vrf>\w+),)?\s+remote AS\s+(?P<remote_as>\d+),\s+(?P<bgp_type>\w+) link`,
		`\s+Administratively shut (?P<up>\w+)`,
		`\s+Description:\s+(?P<description>.*)`,
		`\s+BGP version 4, remote router ID (?P<router_id>\S+)`,
		`\s+BGP state = (?P<bgp_state>\w+)(?:, (?P<up>\w+) for (?P<uptime>\S+))?`,
		`\s+Last read (?P<last_read>.*), last write (?P<last_write>.*), hold time is (?P<holdtime>\d+), keepalive interval is (?P<keepalive>\d+) seconds`,
		`\s+Four-octets ASN Capability:\s+(?P<four_byte_as>.*)`,
		`\s+Opens:\s+(?P<open_out>\d+)\s+(?P<open_in>\d+)`,
		`\s+Notifications:\s+(?P<noti_out>\d+)\s+(?P<noti_in>\d+)`,
		`\s+Updates:\s+(?P<msg_update_out>\d+)\s+(?P<msg_update_in>\d+)`,
		`\s+Keepalives:\s+(?P<ka_out>\d+)\s+(?P<ka_in>\d+)`,
		`\s+Route Refresh:\s+(?P<rr_out>\d+)\s+(?P<rr_in>\d+)`,
		`\s+Total:\s+(?P<msg_total_out>\d+)\s+(?P<msg_total_in>\d+)`,
		`\s*Connection state is (?P<conn_state>\w+),`,
		`\s*For address family`, // enters the address family part (see iosNeighbor)
		`Local host: (?P<local_address>.*), Local port: (?P<local_port>\d+)`,
		`Foreign host: (?P<remote_address>.*), Foreign port: (?P<remote_port>\d+)`,
		`Connection tableid \(VRF\): (?P<routing_table>\d+)`,
	)
	iosNeighborAFIRe = regexp.MustCompile(`^\s*For address family`)
	iosNeighborAFI   = rules(
		`\s*For address family: =>cont =>record`,
		`\s*For address family: (?P<afi>.*)`,
		`\s+Session: (?P<session>\S+)`,
		`\s+Route map for incoming advertisements is (?P<policy_in>\S+)`,
		`\s+Route map for outgoing advertisements is (?P<policy_out>\S+)`,
		`\s+Prefixes Current:\s+(?P<prefix_curr_out>\d+)\s+(?P<prefix_curr_in>\d+)`,
		`\s+Prefixes Total:\s+(?P<prefix_total_out>\d+)\s+(?P<prefix_total_in>\d+)`,
		`\s+Implicit Withdraw:\s+(?P<wi_out>\d+)\s+(?P<wi_in>\d+)`,
		`\s+Explicit Withdraw:\s+(?P<we_out>\d+)\s+(?P<we_in>\d+)`,
		`\s+Used as bestpath:\s+\S+\s+(?P<bestpaths>\d+)`,
		`\s+Used as multipath:\s+\S+\s+(?P<multipaths>\d+)`,
		`\s+Used as secondary:\s+\S+\s+(?P<secondaries>\d+)`,
		`\s+Total:\s+(?P<rejected_prefix_out>\d+)\s+(?P<rejected_prefix_in>\d+)`,
		`\s+Connections established\s+\d+;\s+dropped\s+(?P<flap_count>\d+)`,
		`\s+Last reset (?P<last_event>.*)`,
		`\s+Interface associated: \S+ \((?P<local_addr_conf>peering address in same link)\)`,
		`Connection state is =>record`,
	)
)

// iosBGPSummaryRow is one neighbor of show ip bgp all summary.
type iosBGPSummaryRow struct {
	afi, localAS, neighbor, remoteAS, outQ, up string
}

// parseIOSBGPAllSummary reads the neighbor tables of show ip bgp all sum,
// each under its "For address family" heading; a neighbor whose address
// fills its column continues on the next line.
func parseIOSBGPAllSummary(text string) []iosBGPSummaryRow {
	var rows []iosBGPSummaryRow
	var afi, localAS, name string
	table := false
	for l := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if !table {
			if m := iosSumAFIRe.FindStringSubmatch(l); m != nil {
				afi = m[1]
			} else if m := iosSumRIDRe.FindStringSubmatch(l); m != nil {
				localAS = m[2]
			} else if iosSumHeadRe.MatchString(l) {
				table = true
			}
			continue
		}
		if m := iosSumNameRe.FindStringSubmatch(l); m != nil {
			name = m[1]
		}
		if m := iosSumWrapRe.FindStringSubmatch(l); m != nil {
			rows = append(rows, iosBGPSummaryRow{afi: afi, localAS: localAS, neighbor: name, remoteAS: m[2], outQ: m[7], up: m[8]})
			name = ""
		} else if m := iosSumRowRe.FindStringSubmatch(l); m != nil {
			rows = append(rows, iosBGPSummaryRow{afi: afi, localAS: localAS, neighbor: m[1], remoteAS: m[3], outQ: m[8], up: m[9]})
			name = ""
		} else if l == "" {
			afi, localAS, name, table = "", "", "", false
		}
	}
	return rows
}

// iosNeighbor reads show ip bgp <afi> neigh <addr>: the session part, and
// the rows of its address family part (a row per "For address family"
// heading, the text before the first one included when it has a value).
func iosNeighbor(text string) (map[string]string, []map[string]string) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	sess := map[string]string{}
	inAFI := false
	for _, l := range lines {
		if inAFI {
			if l == "" || l[0] == ' ' || l[0] == '\t' {
				continue
			}
			inAFI = false // the first unindented line ends it (and is not read)
			continue
		}
		for _, r := range iosNeighborsRe {
			m := r.re.FindStringSubmatchIndex(l)
			if m == nil {
				continue
			}
			if iosNeighborAFIRe.MatchString(l) {
				inAFI = true
				break
			}
			for i, n := range r.re.SubexpNames() {
				if n != "" && m[2*i] >= 0 {
					sess[n] = l[m[2*i]:m[2*i+1]]
				}
			}
			break
		}
	}
	return sess, runFSMRules(iosNeighborAFI, text)
}

// GetBGPNeighborsDetail implements BGPNeighborsDetailGetter like NAPALM
// ios: the neighbors of show ip bgp all sum, each read from show ip bgp
// <afi> neigh <address>.
func (d *iosDriver) GetBGPNeighborsDetail(ctx context.Context, address string) (map[string]map[int64][]map[string]any, error) {
	res := map[string]map[int64][]map[string]any{}
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send("show ip bgp all sum")
		if err != nil {
			return err
		}
		out = iosPostprocess(out)
		if strings.Contains(out, "Invalid input detected") {
			return fmt.Errorf("%w: BGP is not running on this device", ErrCommand)
		}
		for _, n := range parseIOSBGPAllSummary(out) {
			if address != "" && address != n.neighbor {
				continue
			}
			words, ok := iosAFICommand[n.afi]
			if !ok {
				return o.errf(ErrCommand, "show ip bgp all sum", fmt.Errorf("unknown address family %q", n.afi))
			}
			cmd := fmt.Sprintf("show ip bgp %s neigh %s", words, n.neighbor)
			text, _, err := o.send(cmd)
			if err != nil {
				return err
			}
			s, afis := iosNeighbor(iosPostprocess(text))
			num := func(v string) int64 {
				if v == "" {
					return 0
				}
				n, _ := asNumber(v)
				return n
			}
			localAS, _ := asNumber(n.localAS)
			remoteAS, _ := asNumber(n.remoteAS)
			p := map[string]any{
				"up": n.up != "never", "local_as": localAS, "remote_as": remoteAS,
				"router_id": "", "local_address": "", "local_address_configured": false,
				"local_port": num(s["local_port"]), "routing_table": "global",
				"remote_address": napalmIP(s["neighbor"]), "remote_port": num(s["remote_port"]),
				"multihop": false, "multipath": false, "remove_private_as": false,
				"import_policy": "", "export_policy": "",
				"input_messages": num(s["msg_total_in"]), "output_messages": num(s["msg_total_out"]),
				"input_updates": num(s["msg_update_in"]), "output_updates": num(s["msg_update_out"]),
				"messages_queued_out": num(n.outQ), "connection_state": s["bgp_state"],
				"previous_connection_state": "", "last_event": "",
				"suppress_4byte_as": s["four_byte_as"] != "" && s["four_byte_as"] != "advertised and received",
				"local_as_prepend":  false, "holdtime": num(s["holdtime"]), "configured_holdtime": 0,
				"keepalive": num(s["keepalive"]), "configured_keepalive": 0,
				"active_prefix_count": 0, "received_prefix_count": 0, "accepted_prefix_count": 0,
				"suppressed_prefix_count": 0, "advertised_prefix_count": 0, "flap_count": 0,
			}
			if s["router_id"] != "" {
				p["router_id"] = napalmIP(s["router_id"])
			}
			if s["local_address"] != "" {
				p["local_address"] = napalmIP(s["local_address"])
			}
			if s["vrf"] != "" {
				p["routing_table"] = s["vrf"]
			}
			switch {
			case len(afis) > 1:
				a := afis[1]
				ev := a["last_event"]
				if ev == "never" {
					ev = ""
				}
				p["local_address_configured"] = a["local_addr_conf"] != ""
				p["multipath"] = a["multipaths"] != "0"
				p["import_policy"], p["export_policy"], p["last_event"] = a["policy_in"], a["policy_out"], ev
				p["active_prefix_count"] = num(a["bestpaths"])
				p["received_prefix_count"] = num(a["prefix_curr_in"]) + num(a["rejected_prefix_in"])
				p["accepted_prefix_count"] = num(a["prefix_curr_in"])
				p["suppressed_prefix_count"] = num(a["rejected_prefix_in"])
				p["advertised_prefix_count"] = num(a["prefix_curr_out"])
				p["flap_count"] = num(a["flap_count"])
			case len(afis) == 1:
				p["import_policy"], p["export_policy"] = afis[0]["policy_in"], afis[0]["policy_out"]
			}
			appendPeer(res, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

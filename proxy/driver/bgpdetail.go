package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// BGPNeighborsDetailGetter is implemented by drivers with
// get_bgp_neighbors_detail: by routing table, then remote AS, the peers as
// NAPALM's PeerDetailsDict. address narrows it to one neighbor.
type BGPNeighborsDetailGetter interface {
	GetBGPNeighborsDetail(ctx context.Context, address string) (map[string]map[int64][]map[string]any, error)
}

// fsmRule is one rule of a line parser: a line matching re (from its
// start) sets the fields named by re's groups; record closes the current
// row; cont lets the next rules see the line too.
type fsmRule struct {
	re           *regexp.Regexp
	cont, record bool
}

// runFSMRules parses text line by line: the first matching rule applies
// (and the ones after it while cont is set); a row is kept when one of
// its fields is set, also at the end of the text.
func runFSMRules(rules []fsmRule, text string) []map[string]string {
	var rows []map[string]string
	cur := map[string]string{}
	flush := func() {
		for _, v := range cur {
			if v != "" {
				rows = append(rows, cur)
				break
			}
		}
		cur = map[string]string{}
	}
	for l := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		for _, r := range rules {
			m := r.re.FindStringSubmatchIndex(l)
			if m == nil {
				continue
			}
			for i, n := range r.re.SubexpNames() {
				if n != "" && m[2*i] >= 0 {
					cur[n] = l[m[2*i]:m[2*i+1]]
				}
			}
			if r.record {
				flush()
			}
			if !r.cont {
				break
			}
		}
	}
	flush()
	return rows
}

func rules(specs ...string) []fsmRule {
	var res []fsmRule
	for _, s := range specs {
		r := fsmRule{}
		if x, ok := strings.CutSuffix(s, " =>record"); ok {
			s, r.record = x, true
		}
		if x, ok := strings.CutSuffix(s, " =>cont"); ok {
			s, r.cont = x, true
		}
		r.re = regexp.MustCompile("^(?:" + s + ")")
		res = append(res, r)
	}
	return res
}

// eosPeerRules read "show ip bgp neighbors vrf all" / "show ipv6 bgp peers
// vrf all": one row per peer, closed by its "Auto-Local-Addr" line; with
// EOS's multi-agent routing model (no such line) a peer ends at the blank
// line after its Send-Q.
var eosPeerRules, eosPeerRulesMulti = func() ([]fsmRule, []fsmRule) {
	head := []string{
		`BGP neighbor is (?P<remote_address>\S+), remote AS (?P<remote_as>\d+), .*`,
		`.* remote router ID (?P<router_id>\S+), VRF (?P<routing_table>\S+)`,
		`\s+Hold time is (?P<holdtime>\d+), keepalive interval is (?P<keepalive>\d+) seconds`,
		`\s+Configured hold time is (?P<configured_holdtime>\d+), keepalive interval is (?P<configured_keepalive>\d+) seconds`,
	}
	state := []string{
		`\s+BGP state is (?P<connection_state>\S+), (?P<up>\S+) .*`,
		`\s+Last state was (?P<previous_connection_state>\S+)`,
		`\s+Last event was (?P<last_event>\S+)`,
	}
	counters := []string{
		`\s+Updates:\s+(?P<output_updates>\d+)\s+(?P<input_updates>\d+)`,
		`\s+Total messages:\s+(?P<output_messages>\d+)\s+(?P<input_messages>\d+)`,
		`\s+IPv4 Unicast:\s+(?P<advertised_prefix_count>\d+)\s+(?P<received_prefix_count>\d+)`,
		`\s+IPv6 Unicast:\s+(?P<advertised_ipv6_prefix_count>\d+)\s+(?P<received_ipv6_prefix_count>\d+)`,
		`\s+Inbound route map is (?P<import_policy>\S+)`,
		`\s+Outbound route map is (?P<export_policy>\S+)`,
		`\s+Nexthop matches local IP address: (?P<multihop>\d+)`,
		`Local AS is (?P<local_as>\d+).*`,
	}
	local := []string{
		`Local TCP address is (?P<local_address>\S+), local port is (?P<local_port>\d+)`,
		`.*, remote port is (?P<remote_port>\d+)`,
	}
	var one, multi []string
	one = append(append(append(append(append(one, head...), state...), `\s+OutQ depth is (?P<messages_queued_out>\d+)`), counters...), local...)
	one = append(one, `Auto-Local-Addr .* =>record`)
	multi = append(append(multi, head...), `\s+BGP state is (?P<connection_state>\S+)$ =>cont`)
	multi = append(append(append(multi, state...), counters...), `Local TCP address is (?P<local_address>\S+)$ =>cont`)
	multi = append(append(multi, local...), `\s+Send-Q:\s+(?P<messages_queued_out>\d+)/.*`, `$ =>record`)
	return rules(one...), rules(multi...)
}()

func toInt(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// eosPeerDetails is NAPALM eos's _parse_per_peer_bgp_detail.
func eosPeerDetails(text string, multi bool) []map[string]any {
	rs := eosPeerRules
	if multi {
		rs = eosPeerRulesMulti
	}
	rows := runFSMRules(rs, text)
	ints := []string{"local_as", "remote_as", "local_port", "remote_port", "input_messages", "output_messages",
		"input_updates", "output_updates", "messages_queued_out", "holdtime", "configured_holdtime", "keepalive",
		"configured_keepalive", "advertised_prefix_count", "received_prefix_count"}
	var res []map[string]any
	for _, r := range rows {
		p := map[string]any{}
		for _, k := range ints {
			p[k] = toInt(r[k])
		}
		p["advertised_prefix_count"] = p["advertised_prefix_count"].(int64) + toInt(r["advertised_ipv6_prefix_count"])
		p["received_prefix_count"] = p["received_prefix_count"].(int64) + toInt(r["received_ipv6_prefix_count"])
		p["up"] = r["up"] == "up"
		p["local_address_configured"] = r["local_address"] != ""
		p["multihop"] = r["multihop"] != "0" && r["multihop"] != ""
		for _, k := range []string{"multipath", "remove_private_as", "suppress_4byte_as", "local_as_prepend"} {
			p[k] = false
		}
		for _, k := range []string{"flap_count", "active_prefix_count", "suppressed_prefix_count"} {
			p[k] = 0
		}
		for _, k := range []string{"export_policy", "last_event", "previous_connection_state", "import_policy", "connection_state", "routing_table"} {
			p[k] = r[k]
		}
		p["remote_address"] = napalmIP(r["remote_address"])
		p["router_id"] = napalmIP(r["router_id"])
		p["local_address"] = jsonIP(r["local_address"])
		res = append(res, p)
	}
	return res
}

func appendPeer(res map[string]map[int64][]map[string]any, p map[string]any) {
	vrf, _ := p["routing_table"].(string)
	as, _ := p["remote_as"].(int64)
	if res[vrf] == nil {
		res[vrf] = map[int64][]map[string]any{}
	}
	res[vrf][as] = append(res[vrf][as], p)
}

// GetBGPNeighborsDetail implements BGPNeighborsDetailGetter like NAPALM
// eos: the text of show ip bgp neighbors / show ipv6 bgp peers (vrf all),
// accepted prefixes from the summaries in JSON.
func (d *eosDriver) GetBGPNeighborsDetail(ctx context.Context, address string) (map[string]map[int64][]map[string]any, error) {
	if err := safeArg(d.s, "neighbor_address", address); err != nil {
		return nil, err
	}
	res := map[string]map[int64][]map[string]any{}
	err := d.s.query(ctx, func(o runner) error {
		ma, _, err := o.send("show running-config | include service routing protocols model multi-agent")
		if err != nil {
			return err
		}
		multi := strings.TrimSpace(ma) != ""
		type fam struct{ detail, summary string }
		fams := []fam{{"show ip bgp neighbors vrf all", "show ip bgp summary vrf all"}, {"show ipv6 bgp peers vrf all", "show ipv6 bgp summary vrf all"}}
		if address != "" {
			a, err := parseDestination(address)
			if err != nil || !a.IsSingleIP() {
				return fmt.Errorf("%w: %q does not appear to be an IPv4 or IPv6 address", ErrBadDestination, address)
			}
			if a.Addr().Is4() {
				fams = []fam{{"show ip bgp neighbors " + address + " vrf all", "show ip bgp summary vrf all"}}
			} else {
				fams = []fam{{"show ipv6 bgp peers " + address + " vrf all", "show ipv6 bgp summary vrf all"}}
			}
		}
		for _, f := range fams {
			text, err := o.show(f.detail)
			if err != nil {
				return err
			}
			peers := eosPeerDetails(text, multi)
			if address != "" && len(peers) > 1 {
				peers = peers[:1]
			}
			var sum struct {
				VRFs map[string]struct {
					Peers map[string]map[string]json.RawMessage `json:"peers"`
				} `json:"vrfs"`
			}
			if err := showJSON(o, f.summary, &sum); err != nil {
				return err
			}
			for _, p := range peers {
				var acc any = 0
				if pe, ok := sum.VRFs[p["routing_table"].(string)].Peers[p["remote_address"].(string)]; ok {
					var n any
					_ = json.Unmarshal(pe["prefixAccepted"], &n)
					acc = n
				}
				p["accepted_prefix_count"] = acc
				appendPeer(res, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

package driver

// BGP getters of the junos driver, as NAPALM's junos driver computes them:
// per routing instance of <get-instance-information> (Junos's internal
// "__" instances aside), <get-bgp-neighbor-information> and
// <get-bgp-summary-information> with <instance>; the configuration tables
// of [protocols bgp], [policy-options] and [routing-options].

import (
	"context"
	"errors"
	"strconv"
	"strings"
)

// junosInstances lists the routing instances of <get-instance-information>.
func junosInstances(reply *xnode) []string {
	var out []string
	for _, it := range xpathAll(replyTop(reply), "instance-core") {
		if n, ok := fstr(it, "instance-name"); ok && !strings.HasPrefix(n, "__") {
			out = append(out, n)
		}
	}
	return out
}

// junosAddressFamily is NAPALM junos's _get_address_family: the family of
// a RIB name ("inet.0", "vrf.inet6.0"), "" when it is none of inet, inet6,
// inetflow.
func junosAddressFamily(table, instance string) string {
	var fam string
	if instance == "master" {
		i := strings.LastIndex(table, ".")
		if i < 0 {
			return ""
		}
		fam = table[:i]
	} else {
		parts := strings.Split(table, ".")
		if len(parts) < 2 {
			return ""
		}
		fam = parts[len(parts)-2]
	}
	switch fam {
	case "inet":
		return "ipv4"
	case "inet6":
		return "ipv6"
	case "inetflow":
		return "flow"
	}
	return ""
}

// intsAt returns the int values at path (PyEZ int fields; non-numbers 0).
func intsAt(n *xnode, path string) []int {
	var out []int
	for _, v := range fvals(n, path) {
		out = append(out, atoi(v, 0))
	}
	return out
}

// junosRouteStats is NAPALM junos's _parse_route_stats for one peer.
func junosRouteStats(peer *xnode, up bool, instance string) map[string]BGPAFStats {
	data := map[string]BGPAFStats{
		"ipv4": {ReceivedPrefixes: -1, AcceptedPrefixes: -1, SentPrefixes: -1},
		"ipv6": {ReceivedPrefixes: -1, AcceptedPrefixes: -1, SentPrefixes: -1},
	}
	if !up {
		return data
	}
	tables := fvals(peer, "bgp-rib/name")
	recv, acc, sent := intsAt(peer, "bgp-rib/received-prefix-count"), intsAt(peer, "bgp-rib/accepted-prefix-count"), intsAt(peer, "bgp-rib/advertised-prefix-count")
	state := fvals(peer, "bgp-rib/send-state")
	at := func(l []int, i int) int {
		if i < len(l) {
			return l[i]
		}
		return 0
	}
	if len(tables) == 1 {
		if fam := junosAddressFamily(tables[0], instance); fam != "" {
			data[fam] = BGPAFStats{ReceivedPrefixes: at(recv, 0), AcceptedPrefixes: at(acc, 0), SentPrefixes: at(sent, 0)}
		}
		return data
	}
	inSync := func(i int) bool { return i < len(state) && strings.Contains(state[i], "in sync") }
	pop := func() int {
		if len(sent) == 0 {
			return 0
		}
		v := sent[0]
		sent = sent[1:]
		return v
	}
	for i, table := range tables {
		fam := junosAddressFamily(table, instance)
		if fam == "" {
			if inSync(i) {
				pop()
			}
			continue
		}
		e := BGPAFStats{ReceivedPrefixes: at(recv, i), AcceptedPrefixes: at(acc, i)}
		if inSync(i) {
			e.SentPrefixes = pop()
		}
		data[fam] = e
	}
	return data
}

// junosPeerIP is the peer address of "addr+port" in NAPALM's form.
func junosPeerIP(s string) string {
	a, _, _ := strings.Cut(s, "+")
	return napalmIP(a)
}

// parseJunosBGPNeighbors adds one instance's peers (neighbor and summary
// replies) to res.
func parseJunosBGPNeighbors(res map[string]BGPVRF, instance string, neigh, summary *xnode) {
	name := instance
	if name == "master" {
		name = "global"
	}
	vrf, ok := res[name]
	if !ok {
		vrf = BGPVRF{Peers: map[string]BGPPeer{}}
	}
	haveRID := ok && vrf.RouterID != ""
	for _, p := range xpathAll(replyTop(neigh), "bgp-peer") {
		addr, _ := fstr(p, "peer-address")
		if !haveRID {
			vrf.RouterID = fstrOr(p, "local-id", "")
			haveRID = true
		}
		peer := BGPPeer{IsEnabled: true}
		if v, ok := fstr(p, "peer-as"); ok {
			peer.RemoteAS, _ = asNumber(v)
		}
		if v, ok := fstr(p, "local-as"); ok {
			peer.LocalAS, _ = asNumber(v)
		}
		peer.RemoteID = fstrOr(p, "peer-id", "")
		peer.Description = fstrOr(p, "description", "")
		st, _ := fstr(p, "peer-state")
		peer.IsUp = st == "Established"
		opts, _ := fstr(p, "bgp-option-information/bgp-options-extended")
		for _, o := range strings.Fields(strings.ToLower(opts)) {
			if o == "shutdown" {
				peer.IsEnabled = false
			}
		}
		peer.AddressFamily = junosRouteStats(p, peer.IsUp, instance)
		vrf.Peers[junosPeerIP(addr)] = peer
	}
	for _, p := range xpathAll(replyTop(summary), "bgp-peer") {
		addr, _ := fstr(p, "peer-address")
		ip := napalmIP(addr)
		peer := vrf.Peers[ip]
		if up, ok := fint(p, "elapsed-time/@seconds"); ok {
			peer.Uptime = int(up)
		}
		vrf.Peers[ip] = peer
	}
	res[name] = vrf
}

// GetBGPNeighbors implements Driver as NAPALM junos.
func (j *junos) GetBGPNeighbors(ctx context.Context) (map[string]BGPVRF, error) {
	res := map[string]BGPVRF{}
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_bgp_neighbors", func() error {
			inst, err := o.rpc("<get-instance-information/>")
			if err != nil {
				return err
			}
			for _, name := range junosInstances(inst) {
				arg := "<instance>" + escapeXML(name) + "</instance>"
				neigh, err := o.rpc("<get-bgp-neighbor-information>" + arg + "</get-bgp-neighbor-information>")
				if err != nil {
					return err
				}
				sum, err := o.rpc("<get-bgp-summary-information>" + arg + "</get-bgp-summary-information>")
				if err != nil {
					return err
				}
				parseJunosBGPNeighbors(res, name, neigh, sum)
			}
			return nil
		})
	})
	for k, v := range res {
		if len(v.Peers) == 0 {
			delete(res, k)
		}
	}
	return res, err
}

// junosBGPOptionKeys maps Junos BGP options to NAPALM's detail flags.
var junosBGPOptionKeys = map[string]string{
	"RemovePrivateAS": "remove_private_as", "Multipath": "multipath", "Multihop": "multihop", "AddressFamily": "local_address_configured",
}

// parseJunosBGPDetail adds one instance's peers to res (NAPALM junos's
// get_bgp_neighbors_detail).
func parseJunosBGPDetail(res map[string]map[int64][]map[string]any, instance string, neigh *xnode) {
	name := instance
	if name == "master" {
		name = "global"
	}
	for _, p := range xpathAll(replyTop(neigh), "bgp-peer") {
		ras, _ := fint(p, "peer-as")
		d := map[string]any{
			"up": false, "local_as": int64(0), "remote_as": int64(0), "router_id": "", "local_address": "", "routing_table": "",
			"local_address_configured": false, "local_port": 0, "remote_address": "", "remote_port": 0, "multihop": false,
			"multipath": false, "remove_private_as": false, "import_policy": "", "export_policy": "", "input_messages": -1,
			"output_messages": -1, "input_updates": -1, "output_updates": -1, "messages_queued_out": -1, "connection_state": "",
			"previous_connection_state": "", "last_event": "", "suppress_4byte_as": false, "local_as_prepend": false,
			"holdtime": 0, "configured_holdtime": 0, "keepalive": 0, "configured_keepalive": 0, "active_prefix_count": -1,
			"received_prefix_count": -1, "accepted_prefix_count": -1, "suppressed_prefix_count": -1,
			"advertised_prefix_count": -1, "flap_count": 0,
		}
		if st, ok := fstr(p, "peer-state"); ok {
			d["up"] = st == "Established"
			d["connection_state"] = st
		}
		for _, f := range []struct{ key, path string }{
			{"router_id", "peer-id"}, {"import_policy", "bgp-option-information/import-policy"},
			{"export_policy", "bgp-option-information/export-policy"}, {"previous_connection_state", "last-state"},
			{"last_event", "last-event"},
		} {
			if v, ok := fstr(p, f.path); ok {
				d[f.key] = v
			}
		}
		for _, f := range []struct{ key, path string }{
			{"input_messages", "input-messages"}, {"output_messages", "output-messages"}, {"input_updates", "input-updates"},
			{"output_updates", "output-updates"}, {"holdtime", "active-holdtime"}, {"configured_holdtime", "bgp-option-information/holdtime"},
			{"keepalive", "keepalive-interval"}, {"configured_keepalive", "keepalive-interval"}, {"flap_count", "flap-count"},
		} {
			if v, ok := fint(p, f.path); ok {
				d[f.key] = v
			}
		}
		if v, ok := fstr(p, "local-as"); ok {
			d["local_as"], _ = asNumber(v)
		}
		if v, ok := fstr(p, "peer-as"); ok {
			d["remote_as"], _ = asNumber(v)
		}
		if _, ok := fstr(p, "peer-addpath-not-supported"); ok {
			d["local_as_prepend"] = true // PyEZ's False=None: a present flag is not "None"
		}
		if opts := fvals(p, "bgp-option-information/bgp-options"); len(opts) == 1 {
			for _, o := range strings.Fields(opts[0]) {
				if k, ok := junosBGPOptionKeys[o]; ok {
					d[k] = true
				}
			}
		}
		four, _ := fint(p, "peer-4byte-as-capability-advertised")
		local := fstrOr(p, "local-address", "")
		la, lp, hasLP := strings.Cut(local, "+")
		d["local_address"] = napalmIP(la)
		d["local_port"] = 179
		if hasLP {
			d["local_port"] = atoi(lp, 0)
		}
		d["suppress_4byte_as"] = ras != four
		remote := fstrOr(p, "peer-address", "")
		ra, rp, hasRP := strings.Cut(remote, "+")
		d["remote_address"] = napalmIP(ra)
		d["remote_port"] = 179
		if hasRP {
			d["remote_port"] = atoi(rp, 0)
		}
		d["routing_table"] = name
		queued := 0
		for _, q := range xpathAll(p, "bgp-output-queue") {
			if _, ok := fstr(q, "table-name"); ok {
				c, _ := fint(q, "count")
				queued += int(c)
			}
		}
		d["messages_queued_out"] = queued
		if res[name] == nil {
			res[name] = map[int64][]map[string]any{}
		}
		var ribs []*xnode
		for _, r := range xpathAll(p, "bgp-rib") {
			if _, ok := fstr(r, "name"); ok {
				ribs = append(ribs, r)
			}
		}
		if len(ribs) > 0 {
			for _, k := range []struct{ key, path string }{
				{"active_prefix_count", "active-prefix-count"}, {"received_prefix_count", "received-prefix-count"},
				{"accepted_prefix_count", "accepted-prefix-count"}, {"suppressed_prefix_count", "suppressed-prefix-count"},
				{"advertised_prefix_count", "advertised-prefix-count"},
			} {
				sum := int64(0)
				for _, r := range ribs {
					v, _ := fint(r, k.path)
					sum += v
				}
				d[k.key] = sum
			}
		}
		res[name][ras] = append(res[name][ras], d)
	}
}

// GetBGPNeighborsDetail implements BGPNeighborsDetailGetter as NAPALM
// junos.
func (j *junos) GetBGPNeighborsDetail(ctx context.Context, address string) (map[string]map[int64][]map[string]any, error) {
	res := map[string]map[int64][]map[string]any{}
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_bgp_neighbors_detail", func() error {
			inst, err := o.rpc("<get-instance-information/>")
			if err != nil {
				return err
			}
			for _, name := range junosInstances(inst) {
				arg := "<instance>" + escapeXML(name) + "</instance>"
				if address != "" {
					arg += "<neighbor-address>" + escapeXML(address) + "</neighbor-address>"
				}
				neigh, err := o.rpc("<get-bgp-neighbor-information>" + arg + "</get-bgp-neighbor-information>")
				if err != nil {
					return err
				}
				parseJunosBGPDetail(res, name, neigh)
			}
			return nil
		})
	})
	return res, err
}

// junosPrefixLimitFields are NAPALM junos's prefix-limit view fields: the
// nested key path in the result and the path in the configuration.
var junosPrefixLimitFields = func() []struct {
	keys []string
	path string
	str  bool
} {
	var out []struct {
		keys []string
		path string
		str  bool
	}
	for _, fam := range []string{"inet", "inet6"} {
		for _, saf := range []string{"unicast", "flow"} {
			base := "family/" + fam + "/" + saf + "/prefix-limit/"
			out = append(out,
				struct {
					keys []string
					path string
					str  bool
				}{[]string{fam, saf, "limit"}, base + "maximum", false},
				struct {
					keys []string
					path string
					str  bool
				}{[]string{fam, saf, "teardown", "threshold"}, base + "teardown/limit-threshold", false},
				struct {
					keys []string
					path string
					str  bool
				}{[]string{fam, saf, "teardown", "timeout"}, base + "teardown/idle-timeout/timeout", false},
				struct {
					keys []string
					path string
					str  bool
				}{[]string{fam, saf, "novalidate"}, base + "no-validate", saf == "flow"})
		}
	}
	return out
}()

// junosPrefixLimit builds NAPALM's nested prefix_limit dict of a group or
// neighbor.
func junosPrefixLimit(n *xnode) map[string]any {
	res := map[string]any{}
	for _, f := range junosPrefixLimitFields {
		v, ok := fstr(n, f.path)
		if !ok {
			continue
		}
		var val any = v
		if !f.str {
			i, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue // PyEZ's int field fails on such a value
			}
			val = i
		}
		m := res
		for _, k := range f.keys[:len(f.keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[f.keys[len(f.keys)-1]] = val
	}
	return res
}

// junosPolicies joins the values of an import/export field as NAPALM.
func junosPolicies(n *xnode, path string) (string, bool) {
	v := fvals(n, path)
	if len(v) == 0 {
		return "", false
	}
	return strings.Join(v, " "), true
}

// parseJunosBGPConfig is NAPALM junos's get_bgp_config over the
// [routing-options autonomous-system], [protocols bgp group] and
// [policy-options policy-statement] replies; group narrows it to one
// group ("_" or "" for all), neighbor to one neighbor of that group.
func parseJunosBGPConfig(routing, bgp, policies *xnode, group, neighbor string) map[string]map[string]any {
	res := map[string]map[string]any{}
	asn := int64(0)
	if v, ok := fint(replyTop(routing), "routing-options/autonomous-system/as-number"); ok {
		asn = v
	}
	groups := xpathAll(replyTop(bgp), "protocols/bgp/group")
	if group != "" && group != "_" {
		var sel []*xnode
		for _, g := range groups {
			if n, _ := fstr(g, "name"); n == group {
				sel = append(sel, g)
			}
		}
		groups = sel
	} else {
		neighbor = ""
		if len(groups) > 0 || asn != 0 {
			res["_"] = map[string]any{
				"apply_groups": []string{}, "description": "", "local_as": asn, "type": "", "import_policy": "",
				"export_policy": "", "local_address": "", "multipath": false, "multihop_ttl": int64(0), "remote_as": int64(0),
				"remove_private_as": false, "prefix_limit": map[string]any{}, "neighbors": map[string]any{},
			}
		}
	}
	nhs := map[string]bool{}
	for _, p := range xpathAll(replyTop(policies), "policy-options/policy-statement") {
		name, _ := fstr(p, "name")
		v := fvals(p, "term/then/next-hop/self | then/next-hop/self")
		nhs[name] = len(v) > 1 || (len(v) == 1 && v[0] == "self")
	}
	want := ""
	if neighbor != "" {
		want = napalmIP(neighbor)
	}
	for _, g := range groups {
		name, _ := fstr(g, "name")
		e := map[string]any{
			"type": fstrOr(g, "type", ""), "apply_groups": []string{}, "remove_private_as": false, "multipath": false,
			"multihop_ttl": int64(0), "description": fstrOr(g, "description", ""), "local_address": "", "local_as": asn,
			"remote_as": int64(0), "import_policy": "", "export_policy": "",
		}
		if v := fvals(g, "apply-groups"); len(v) > 0 {
			e["apply_groups"] = v
		}
		if v, ok := fstr(g, "local-address"); ok {
			e["local_address"] = napalmIP(v)
		}
		if v, ok := fint(g, "multihop/ttl"); ok {
			e["multihop_ttl"] = v
		}
		if v, ok := fint(g, "local-as/as-number"); ok {
			e["local_as"] = v
		}
		if v, ok := fint(g, "peer-as"); ok {
			e["remote_as"] = v
		}
		if _, ok := fstr(g, "multipath"); ok {
			e["multipath"] = true
		}
		if _, ok := fstr(g, "remove-private"); ok {
			e["remove_private_as"] = true
		}
		if v, ok := junosPolicies(g, "import"); ok {
			e["import_policy"] = v
		}
		if v, ok := junosPolicies(g, "export"); ok {
			e["export_policy"] = v
		}
		e["prefix_limit"] = junosPrefixLimit(g)
		if _, ok := fstr(g, "multihop"); ok && e["multihop_ttl"] == int64(0) {
			e["multihop_ttl"] = int64(64)
		}
		_, groupCluster := fstr(g, "cluster")
		neighbors := map[string]any{}
		for _, nb := range xpathAll(g, "neighbor") {
			nname, _ := fstr(nb, "name")
			addr := napalmIP(nname)
			if neighbor != "" && addr != neighbor {
				continue
			}
			p := map[string]any{
				"authentication_key": fstrOr(nb, "authentication-key", ""), "route_reflector_client": groupCluster, "nhs": false,
				"description": fstrOr(nb, "description", ""), "local_address": "", "local_as": asn, "remote_as": e["remote_as"],
				"import_policy": "", "export_policy": "",
			}
			if v, ok := fstr(nb, "local-address"); ok {
				p["local_address"] = napalmIP(v)
			}
			if v, ok := fint(nb, "local-as/as-number"); ok {
				p["local_as"] = v
			}
			if v, ok := fint(nb, "peer-as"); ok {
				p["remote_as"] = v
			}
			if v, ok := junosPolicies(nb, "import"); ok {
				p["import_policy"] = v
			}
			if vals := fvals(nb, "export"); len(vals) > 0 {
				p["export_policy"] = strings.Join(vals, " ")
				for _, pol := range vals {
					if nhs[pol] {
						p["nhs"] = true
					}
				}
			}
			if _, ok := fstr(nb, "cluster"); ok {
				p["route_reflector_client"] = true
			}
			p["prefix_limit"] = junosPrefixLimit(nb)
			neighbors[addr] = p
			if want != "" && addr == want {
				break
			}
		}
		e["neighbors"] = neighbors
		res[name] = e
	}
	return res
}

// GetBGPConfig implements BGPConfigGetter as NAPALM junos.
func (j *junos) GetBGPConfig(ctx context.Context, group, neighbor string) (map[string]map[string]any, error) {
	var res map[string]map[string]any
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_bgp_config", func() error {
			routing, err := junosConfigGet(o, "<configuration><routing-options><autonomous-system/></routing-options></configuration>")
			if err != nil {
				return err
			}
			bgp, err := junosConfigGet(o, "<configuration><protocols><bgp><group/></bgp></protocols></configuration>")
			if err != nil {
				return err
			}
			pol, err := junosConfigGet(o, "<configuration><policy-options><policy-statement/></policy-options></configuration>")
			if err != nil {
				return err
			}
			res = parseJunosBGPConfig(routing, bgp, pol, group, neighbor)
			return nil
		})
	})
	return res, err
}

var (
	_ BGPConfigGetter          = (*junos)(nil)
	_ BGPNeighborsDetailGetter = (*junos)(nil)
)

// junosRouteAttrs are the protocol-specific fields of NAPALM junos's route
// view, by protocol.
var junosRouteAttrs = map[string][]struct{ key, path string }{
	"bgp": {
		{"local_as", "../local-as"}, {"remote_as", "../peer-as"}, {"as_path", "../as-path"}, {"communities", "../communities/community"},
		{"local_preference", "../local-preference"}, {"preference2", "../preference2"}, {"remote_address", "../peer-id"},
		{"metric", "../metric"}, {"metric2", "../metric2"},
	},
	"isis": {{"level", "../rt-isis-level"}, {"metric", "../metric"}, {"local_as", "../local-as"}},
}

// junosRouteIntFields are the int fields of the route view.
var junosRouteIntFields = map[string]bool{"local_as": true, "remote_as": true, "local_preference": true, "preference2": true, "metric": true, "metric2": true, "level": true}

// parseJunosRoutes is NAPALM junos's get_route_to over
// <get-route-information extensive>: one entry per next hop; protocol
// ("" for any) filters by the route's protocol.
func parseJunosRoutes(reply *xnode, protocol string) map[string][]Route {
	res := map[string][]Route{}
	for _, nh := range xpathAll(replyTop(reply), "route-table/rt/rt-entry/nh") {
		dest := fstrOr(nh, "../../rt-destination", "None")
		plen := fstrOr(nh, "../../rt-prefix-length", "None")
		if v, ok := fint(nh, "../../rt-prefix-length"); ok {
			plen = strconv.FormatInt(v, 10)
		}
		flag := func(path, want string) bool {
			v, ok := fstr(nh, path)
			return ok && v == want
		}
		r := Route{
			Protocol:          fstrOr(nh, "../protocol-name", ""),
			CurrentActive:     flag("../current-active", "current-active"),
			LastActive:        flag("../last-active", "last-active"),
			NextHop:           fstrOr(nh, "to", ""),
			OutgoingInterface: fstrOr(nh, "via", ""),
			SelectedNextHop:   flag("selected-next-hop", "selected-next-hop"),
			InactiveReason:    fstrOr(nh, "../inactive-reason", ""),
			RoutingTable:      fstrOr(nh, "../../../table-name", ""),
		}
		if v, ok := fint(nh, "../age/@seconds"); ok {
			r.Age = v
		}
		if v, ok := fint(nh, "../preference"); ok {
			r.Preference = int(v)
		}
		rp := strings.ToLower(r.Protocol)
		if protocol != "" && protocol != rp {
			continue
		}
		r.ProtocolAttributes = map[string]any{}
		for _, f := range junosRouteAttrs[rp] {
			vals := fvals(nh, f.path)
			var v any
			switch {
			case len(vals) == 0:
				v = nil
			case f.key == "communities":
				v = vals
			case junosRouteIntFields[f.key]:
				n, err := strconv.ParseInt(vals[0], 10, 64)
				if err != nil {
					v = nil
				} else {
					v = n
				}
			case f.key == "as_path":
				a, _, _ := strings.Cut(vals[0], " I ")
				v = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(a, "AS path:", ""), "I", ""))
			default:
				v = vals[0]
			}
			r.ProtocolAttributes[f.key] = v
		}
		key := dest + "/" + plen
		res[key] = append(res[key], r)
	}
	return res
}

// GetRouteTo implements RouteGetter as NAPALM junos (longer prefixes are
// not supported on Junos, as in NAPALM).
func (j *junos) GetRouteTo(ctx context.Context, ro RouteOptions) (map[string][]Route, error) {
	if ro.Longer {
		return nil, j.n.errf(ErrNotSupported, "get_route_to", errors.New("Longer prefixes not yet supported on JunOS"))
	}
	protocol := strings.ToLower(ro.Protocol)
	if protocol == "connected" {
		protocol = "direct"
	}
	var res map[string][]Route
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_route_to", func() error {
			rpc := "<get-route-information><extensive/><destination>" + escapeXML(ro.Destination) + "</destination>"
			if protocol != "" {
				rpc += "<protocol>" + escapeXML(protocol) + "</protocol>"
			}
			reply, err := o.rpc(rpc + "</get-route-information>")
			if err != nil {
				if isRPCError(err) {
					return j.n.errf(ErrCommand, "get_route_to", err)
				}
				return err
			}
			res = parseJunosRoutes(reply, protocol)
			return nil
		})
	})
	return res, err
}

var _ RouteGetter = (*junos)(nil)

package driver

// The junos getters beyond the base set, each as NAPALM's junos driver
// computes it: the same RPCs, the items and fields of its PyEZ tables
// (junos_views.yml) and its post-processing. Parsing is in pure functions
// from the reply to NAPALM's structure; generic NETCONF servers get
// ErrNotSupported.

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// junosLLDPCapab is NAPALM junos's LLDP capability table (substring of
// the lower-cased capability text → NAPALM name).
var junosLLDPCapab = []struct{ entry, name string }{
	{"other", "other"}, {"repeater", "repeater"}, {"bridge", "bridge"},
	{"wlan access point", "wlan-access-point"}, {"router", "router"},
	{"telephone", "telephone"}, {"docsis cable device", "docsis-cable-device"},
	{"station only", "station"},
}

func junosCapab(s string, ok bool) []string {
	out := []string{}
	if !ok || s == "" {
		return out
	}
	s = strings.ToLower(s)
	for _, c := range junosLLDPCapab {
		if strings.Contains(s, c.entry) {
			out = append(out, c.name)
		}
	}
	slices.Sort(out)
	return out
}

// parseJunosLLDPDetail reads the items of an LLDP neighbors detail reply.
func parseJunosLLDPDetail(reply *xnode) []LLDPNeighborDetail {
	var out []LLDPNeighborDetail
	for _, it := range xpathAll(replyTop(reply), "lldp-neighbor-information") {
		chassis, _ := fstr(it, "lldp-remote-chassis-id")
		capab, cok := fstr(it, "lldp-remote-system-capabilities-supported")
		enab, eok := fstr(it, "lldp-remote-system-capabilities-enabled")
		out = append(out, LLDPNeighborDetail{
			ParentInterface:         fstrOr(it, "lldp-local-parent-interface-name", ""),
			RemotePort:              fstrOr(it, "lldp-remote-port-id", ""),
			RemoteChassisID:         macOr(chassis),
			RemotePortDescription:   fstrOr(it, "lldp-remote-port-description", ""),
			RemoteSystemName:        fstrOr(it, "lldp-remote-system-name", ""),
			RemoteSystemDescription: fstrOr(it, "lldp-system-description/lldp-remote-system-description", ""),
			RemoteSystemCapab:       junosCapab(capab, cok),
			RemoteSystemEnableCapab: junosCapab(enab, eok),
		})
	}
	return out
}

// junosLLDPInterfaces are the local interfaces of an LLDP neighbors reply
// (NAPALM's table key: lldp-local-interface | lldp-local-port-id).
func junosLLDPInterfaces(reply *xnode) []string {
	var out []string
	for _, it := range xpathAll(replyTop(reply), "lldp-neighbor-information") {
		if k, ok := fstr(it, "lldp-local-interface | lldp-local-port-id"); ok && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// GetLLDPNeighborsDetail implements Driver as NAPALM junos: the local
// interfaces of <get-lldp-neighbors-information>, then per interface
// <get-lldp-interface-neighbors> (<get-lldp-interface-neighbors-information>
// on switch_style VLAN devices, the other one when the device answers
// "syntax error").
func (j *junos) GetLLDPNeighborsDetail(ctx context.Context, iface string) (map[string][]LLDPNeighborDetail, error) {
	res := map[string][]LLDPNeighborDetail{}
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_lldp_neighbors_detail", func() error {
			var ifaces []string
			if iface == "" {
				reply, err := o.rpc("<get-lldp-neighbors-information/>")
				if err != nil {
					if isRPCError(err) {
						return nil // NAPALM logs the error and returns {}
					}
					return err
				}
				ifaces = junosLLDPInterfaces(reply)
			} else {
				ifaces = []string{iface}
			}
			pf, err := j.pyFacts(o)
			if err != nil {
				return err
			}
			rpcName, arg := "get-lldp-interface-neighbors", "interface-device"
			altName, altArg := "get-lldp-interface-neighbors-information", "interface-name"
			if pf.SwitchStyle == "VLAN" {
				rpcName, arg, altName, altArg = altName, altArg, rpcName, arg
			}
			for _, ifc := range ifaces {
				call := func() (*xnode, error) {
					return o.rpc("<" + rpcName + "><" + arg + ">" + escapeXML(ifc) + "</" + arg + "></" + rpcName + ">")
				}
				reply, err := call()
				if err != nil && isRPCError(err) && strings.Contains(err.Error(), "syntax error") {
					rpcName, arg = altName, altArg
					reply, err = call()
				}
				if err != nil {
					return err
				}
				res[ifc] = append(res[ifc], parseJunosLLDPDetail(reply)...)
			}
			return nil
		})
	})
	return res, err
}

// junosEnvTables are the replies get_environment reads.
type junosEnvTables struct {
	env, re, thresholds, pem *xnode // pem nil when the RPC failed
	cluster                  bool
}

// parseJunosEnvironment is NAPALM junos's get_environment over the four
// replies.
func parseJunosEnvironment(t junosEnvTables) Environment {
	env := Environment{Fans: map[string]Fan{}, Temperature: map[string]Temperature{}, Power: map[string]Power{}, CPU: map[CPUKey]CPU{}}
	envItem, reItem, thItem := "environment-item", "route-engine", "temperature-threshold"
	if t.cluster {
		envItem = "multi-routing-engine-item/environment-information/environment-item"
		reItem = "multi-routing-engine-item/route-engine-information/route-engine"
		thItem = "multi-routing-engine-item/temperature-threshold-information/temperature-threshold"
	}
	thresholds := xpathAll(replyTop(t.thresholds), thItem)
	havePower := false
	class := ""
	for _, it := range xpathAll(replyTop(t.env), envItem) {
		name, _ := fstr(it, "name")
		if c, ok := fstr(it, "class"); ok && c != "" {
			class = c
		}
		status, _ := fstr(it, "status")
		switch class {
		case "Power":
			havePower = true
			name = strings.ReplaceAll(name, "PEM", "Power Supply")
			env.Power[name] = Power{Capacity: -1, Output: -1, Status: status == "OK"}
		case "Fans":
			env.Fans[name] = Fan{Status: status == "OK"}
		case "Temp":
			temp, hasTemp := fint(it, "temperature/@celsius")
			for _, th := range thresholds {
				e := Temperature{}
				if hasTemp {
					e.Temperature = float64(temp)
					red, rok := fint(th, "red-alarm")
					yellow, yok := fint(th, "yellow-alarm")
					if rok && red <= temp {
						e.IsCritical, e.IsAlert = true, true
					} else if yok && yellow <= temp {
						e.IsAlert = true
					}
				}
				env.Temperature[name] = e
			}
		}
	}
	if t.pem != nil {
		// PyEZ lists a table's keys from the items' key elements, so an
		// item without a name is no item.
		var items []*xnode
		for _, p := range xpathAll(replyTop(t.pem), "power-usage-item") {
			if _, ok := fstr(p, "name"); ok {
				items = append(items, p)
			}
		}
		if !havePower {
			for _, p := range items {
				n, _ := fstr(p, "name")
				env.Power[strings.ReplaceAll(n, "PEM", "Power Supply")] = Power{Capacity: -1, Output: -1}
			}
		}
		for _, p := range items {
			n, _ := fstr(p, "name")
			n = strings.ReplaceAll(n, "PEM", "Power Supply")
			e, ok := env.Power[n]
			if !ok {
				e = Power{Capacity: -1, Output: -1}
			}
			if c, ok := ffloat(p, "pem-capacity-detail/capacity-actual"); ok {
				e.Capacity = c
			}
			if o, ok := ffloat(p, "dc-output-detail/dc-power"); ok {
				e.Output = o
			}
			st, _ := fstr(p, "state")
			e.Status = st == "Online"
			env.Power[n] = e
		}
	}
	for _, r := range xpathAll(replyTop(t.re), reItem) {
		// NAPALM keys the CPUs by the slot as text ("0") or, on an SRX
		// cluster, by node name ("node0").
		key, _ := fstr(r, "slot")
		if t.cluster {
			key, _ = fstr(r, "../../re-name")
		}
		idle, _ := fint(r, "cpu-idle")
		env.CPU[CPUName(key)] = CPU{Usage: 100 - float64(idle)}
		dram, _ := fstr(r, "memory-dram-size | memory-system-total")
		avail, err := strconv.ParseInt(dram, 10, 64)
		if err != nil {
			avail, _ = strconv.ParseInt(strings.Map(func(c rune) rune {
				if c >= '0' && c <= '9' {
					return c
				}
				return -1
			}, dram), 10, 64)
		}
		env.Memory = Memory{AvailableRAM: avail}
		if used, ok := fint(r, "memory-system-total-used"); ok && used != 0 {
			env.Memory.UsedRAM = used
		} else {
			buf, _ := fint(r, "memory-buffer-utilization")
			env.Memory.UsedRAM = int64(math.RoundToEven(float64(avail) / 100.0 * float64(buf)))
		}
	}
	return env
}

// GetEnvironment implements Driver as NAPALM junos:
// <get-environment-information>, <get-route-engine-information>,
// <get-temperature-threshold-information> (with <node>primary</node> on an
// SRX cluster) and, where the platform has it,
// <get-power-usage-information-detail>.
func (j *junos) GetEnvironment(ctx context.Context) (Environment, error) {
	var env Environment
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_environment", func() error {
			pf, err := j.pyFacts(o)
			if err != nil {
				return err
			}
			t := junosEnvTables{cluster: pf.SRXCluster}
			node := ""
			if t.cluster {
				node = "<node>primary</node>"
			}
			for _, x := range []struct {
				rpc string
				dst **xnode
			}{{"get-environment-information", &t.env}, {"get-route-engine-information", &t.re}, {"get-temperature-threshold-information", &t.thresholds}} {
				if *x.dst, err = o.rpc("<" + x.rpc + ">" + node + "</" + x.rpc + ">"); err != nil {
					return err
				}
			}
			if t.pem, err = o.rpc("<get-power-usage-information-detail/>"); err != nil {
				if !isRPCError(err) {
					return err
				}
				t.pem = nil // not all platforms have it
			}
			env = parseJunosEnvironment(t)
			return nil
		})
	})
	return env, err
}

// parseJunosMACTable reads a MAC table reply by switch_style (NAPALM's
// three tables); entries with MAC "*" (flood) are skipped.
func parseJunosMACTable(reply *xnode, style string) []MACEntry {
	item, ifPath, macPath, vlanPath, staticPath := "l2ald-mac-entry", "l2-mac-logical-interface", "l2-mac-address", "l2-bridge-vlan", ""
	switch style {
	case "VLAN_L2NG":
		item, ifPath, macPath, vlanPath = "l2ng-l2ald-mac-entry-vlan", "l2ng-l2-mac-logical-interface", "l2ng-l2-mac-address", "l2ng-l2-vlan-id"
	case "BRIDGE_DOMAIN":
	default:
		item, ifPath, macPath, vlanPath, staticPath = "ethernet-switching-table/mac-table-entry", "mac-interface", "mac-address", "mac-vlan-tag", "mac-type"
	}
	out := []MACEntry{}
	for _, it := range xpathAll(replyTop(reply), item) {
		e := MACEntry{Active: true}
		e.Interface, _ = fstr(it, ifPath)
		mac, _ := fstr(it, macPath)
		if mac == "*" {
			continue
		}
		e.MAC = normalizeMAC(mac)
		if v, ok := fint(it, vlanPath); ok {
			e.VLAN = int(v)
		}
		if staticPath != "" {
			if t, ok := fstr(it, staticPath); ok {
				e.Static = t == "Static"
			}
		}
		out = append(out, e)
	}
	return out
}

// GetMACAddressTable implements Driver as NAPALM junos:
// <get-ethernet-switching-table-information> on switches,
// <get-bridge-mac-table> on bridge-domain platforms (MX); an idle l2
// learning subsystem gives an empty table.
func (j *junos) GetMACAddressTable(ctx context.Context) ([]MACEntry, error) {
	var res []MACEntry
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_mac_address_table", func() error {
			pf, err := j.pyFacts(o)
			if err != nil {
				return err
			}
			rpc := "<get-ethernet-switching-table-information><extensive/></get-ethernet-switching-table-information>"
			if pf.SwitchStyle == "BRIDGE_DOMAIN" {
				rpc = "<get-bridge-mac-table><extensive/></get-bridge-mac-table>"
			}
			reply, err := o.rpc(rpc)
			if err != nil {
				if isRPCError(err) && strings.Contains(err.Error(), "l2-learning subsystem") {
					res = []MACEntry{}
					return nil
				}
				return err
			}
			res = parseJunosMACTable(reply, pf.SwitchStyle)
			return nil
		})
	})
	return res, err
}

var junosVLANNoIface = regexp.MustCompile(`^(l2rtb-interface-name|None|l2ng-l2rtb-vlan-member-interface)`)

// parseJunosVLANs reads a VLAN reply by switch_style.
func parseJunosVLANs(reply *xnode, style string) map[string]VLAN {
	item, key, name, ifs := "l2ald-bridge-instance-group", "l2rtb-bridge-vlan", "l2rtb-bridging-domain", "l2rtb-interface-name"
	switch style {
	case "VLAN_L2NG":
		item, key, name, ifs = "l2ng-l2ald-vlan-instance-group", "l2ng-l2rtb-vlan-tag", "l2ng-l2rtb-vlan-name", "l2ng-l2rtb-vlan-member/l2ng-l2rtb-vlan-member-interface"
	case "VLAN":
		item, key, name, ifs = "vlan", "vlan-tag", "vlan-name", "vlan-detail/vlan-member-list/vlan-member/vlan-member-interface"
	}
	res := map[string]VLAN{}
	for _, it := range xpathAll(replyTop(reply), item) {
		k, ok := fstr(it, key)
		if !ok {
			k = "None"
		}
		v := VLAN{Interfaces: []string{}}
		v.Name, _ = fstr(it, name)
		vals := fvals(it, ifs)
		switch {
		case len(vals) == 1 && junosVLANNoIface.MatchString(vals[0]):
		default:
			for _, x := range vals {
				v.Interfaces = append(v.Interfaces, strings.ReplaceAll(x, "*", ""))
			}
		}
		res[k] = v
	}
	return res
}

// GetVLANs implements VLANsGetter as NAPALM junos: <get-vlan-information>
// on switches, <get-bridge-instance-information> on bridge-domain
// platforms, nothing where the device has no switching (style NONE).
func (j *junos) GetVLANs(ctx context.Context) (map[string]VLAN, error) {
	res := map[string]VLAN{}
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_vlans", func() error {
			pf, err := j.pyFacts(o)
			if err != nil {
				return err
			}
			rpc := "<get-vlan-information/>"
			switch pf.SwitchStyle {
			case "BRIDGE_DOMAIN":
				rpc = "<get-bridge-instance-information/>"
			case "VLAN", "VLAN_L2NG":
			default:
				return nil
			}
			reply, err := o.rpc(rpc)
			if err != nil {
				return err
			}
			res = parseJunosVLANs(reply, pf.SwitchStyle)
			return nil
		})
	})
	return res, err
}

// parseJunosIPv6ND reads <get-ipv6-nd-information>.
func parseJunosIPv6ND(reply *xnode) []IPv6Neighbor {
	out := []IPv6Neighbor{}
	for _, it := range xpathAll(replyTop(reply), "ipv6-nd-entry") {
		e := IPv6Neighbor{}
		e.Interface, _ = fstr(it, "ipv6-nd-interface-name")
		mac, _ := fstr(it, "ipv6-nd-neighbor-l2-address")
		if mac != "none" {
			e.MAC = normalizeMAC(mac)
		}
		ip, _ := fstr(it, "ipv6-nd-neighbor-address")
		e.IP = napalmIP(ip)
		e.Age, _ = ffloat(it, "ipv6-nd-expire")
		e.State, _ = fstr(it, "ipv6-nd-state")
		out = append(out, e)
	}
	return out
}

// GetIPv6NeighborsTable implements IPv6NeighborsGetter
// (<get-ipv6-nd-information>).
func (j *junos) GetIPv6NeighborsTable(ctx context.Context) ([]IPv6Neighbor, error) {
	var res []IPv6Neighbor
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_ipv6_neighbors_table", func() error {
			reply, err := o.rpc("<get-ipv6-nd-information/>")
			if err != nil {
				return err
			}
			res = parseJunosIPv6ND(reply)
			return nil
		})
	})
	return res, err
}

// junosConfigGet reads a part of the committed configuration (NAPALM's
// config tables: database committed, inheritance and groups applied).
func junosConfigGet(o *ncOp, filter string) (*xnode, error) {
	return o.rpc(`<get-configuration database="committed" inherit="inherit" groups="groups">` + filter + `</get-configuration>`)
}

// junosUserLevel maps Junos login classes to NAPALM's privilege levels.
var junosUserLevel = map[string]int{"super-user": 15, "superuser": 15, "operator": 5, "read-only": 1, "unauthorized": 0}

func junosSSHKeys(n *xnode, base string) []string {
	keys := []string{}
	for _, k := range []string{"ssh-rsa", "ssh-dsa", "ssh-ecdsa"} {
		vals := fvals(n, base+"/"+k+"/name")
		switch len(vals) {
		case 0:
		case 1:
			keys = append(keys, vals[0])
		default:
			keys = append(keys, pyListStr(vals))
		}
	}
	return keys
}

// pyListStr is Python's str() of a list of strings.
func pyListStr(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "'" + strings.ReplaceAll(v, "'", `\'`) + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// parseJunosUsers reads [system login user] and [system root-authentication].
func parseJunosUsers(users, system *xnode) map[string]User {
	res := map[string]User{}
	for _, u := range xpathAll(replyTop(users), "system/login/user") {
		name, _ := fstr(u, "name")
		cls, _ := fstr(u, "class")
		e := User{Level: junosUserLevel[cls], SSHKeys: junosSSHKeys(u, "authentication")}
		e.Password, _ = fstr(u, "authentication/encrypted-password")
		res[name] = e
	}
	for _, s := range xpathAll(replyTop(system), "system") {
		pw, ok := fstr(s, "root-authentication/encrypted-password")
		if !ok {
			continue // the table's key: no root password, no root entry
		}
		res["root"] = User{Level: 20, Password: pw, SSHKeys: junosSSHKeys(s, "root-authentication")}
	}
	return res
}

// GetUsers implements UsersGetter as NAPALM junos: [system login user] and
// root's [system root-authentication] (level 20).
func (j *junos) GetUsers(ctx context.Context) (map[string]User, error) {
	var res map[string]User
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_users", func() error {
			users, err := junosConfigGet(o, "<configuration><system><login><user/></login></system></configuration>")
			if err != nil {
				return err
			}
			system, err := junosConfigGet(o, "<configuration><system/></configuration>")
			if err != nil {
				return err
			}
			res = parseJunosUsers(users, system)
			return nil
		})
	})
	return res, err
}

// parseJunosSNMP reads the [snmp] configuration.
func parseJunosSNMP(reply *xnode) (SNMPInformation, bool) {
	items := xpathAll(replyTop(reply), "snmp")
	if len(items) == 0 {
		return SNMPInformation{}, false
	}
	s := items[0]
	info := SNMPInformation{Community: map[string]SNMPCommunity{}}
	info.Location = fstrOr(s, "location", "")
	info.Contact = fstrOr(s, "contact", "")
	info.ChassisID = fstrOr(s, "system-name", "")
	for _, c := range xpathAll(s, "community") {
		name, _ := fstr(c, "name")
		mode := "None"
		if a, ok := fstr(c, "authorization"); ok {
			switch a {
			case "read-only":
				mode = "ro"
			case "read-write":
				mode = "rw"
			}
		}
		info.Community[name] = SNMPCommunity{Mode: mode}
	}
	return info, true
}

// GetSNMPInformation implements SNMPGetter ([snmp] configuration).
func (j *junos) GetSNMPInformation(ctx context.Context) (SNMPInformation, error) {
	var res SNMPInformation
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_snmp_information", func() error {
			reply, err := junosConfigGet(o, "<configuration><snmp/></configuration>")
			if err != nil {
				return err
			}
			res, _ = parseJunosSNMP(reply)
			return nil
		})
	})
	return res, err
}

// parseJunosProbesConfig reads [services rpm probe test].
func parseJunosProbesConfig(reply *xnode) map[string]map[string]ProbeTest {
	res := map[string]map[string]ProbeTest{}
	for _, t := range xpathAll(replyTop(reply), "services/rpm/probe/test") {
		name, _ := fstr(t, "name")
		probe, _ := fstr(t, "../name")
		p := ProbeTest{}
		p.ProbeType, _ = fstr(t, "probe-type")
		p.Target, _ = fstr(t, "target/address")
		p.Source, _ = fstr(t, "source-address")
		if v, ok := fint(t, "probe-count"); ok {
			p.ProbeCount = int(v)
		}
		if v, ok := fint(t, "test-interval"); ok {
			p.TestInterval = int(v)
		}
		if res[probe] == nil {
			res[probe] = map[string]ProbeTest{}
		}
		res[probe][name] = p
	}
	return res
}

// GetProbesConfig implements ProbesConfigGetter ([services rpm]).
func (j *junos) GetProbesConfig(ctx context.Context) (map[string]map[string]ProbeTest, error) {
	var res map[string]map[string]ProbeTest
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_probes_config", func() error {
			reply, err := junosConfigGet(o, "<configuration><services><rpm><probe><test/></probe></rpm></services></configuration>")
			if err != nil {
				return err
			}
			res = parseJunosProbesConfig(reply)
			return nil
		})
	})
	return res, err
}

// junosProbeFloats are the float fields of NAPALM's probe results view
// (microseconds, turned into milliseconds).
var junosProbeFloats = []struct{ key, path string }{
	{"rtt", "probe-single-results/rtt"},
	{"round_trip_jitter", "probe-single-results/round-trip-jitter"},
	{"current_test_min_delay", "probe-test-current-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/min-delay"},
	{"current_test_max_delay", "probe-test-current-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/max-delay"},
	{"current_test_avg_delay", "probe-test-current-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/avg-delay"},
	{"last_test_min_delay", "probe-last-test-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/min-delay"},
	{"last_test_max_delay", "probe-last-test-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/max-delay"},
	{"last_test_avg_delay", "probe-last-test-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/avg-delay"},
	{"global_test_min_delay", "probe-test-global-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/min-delay"},
	{"global_test_max_delay", "probe-test-global-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/max-delay"},
	{"global_test_avg_delay", "probe-test-global-results/probe-test-generic-results/probe-test-rtt/probe-summary-results/avg-delay"},
}

// parseJunosProbesResults reads <get-probe-results>.
func parseJunosProbesResults(reply *xnode) map[string]map[string]map[string]any {
	res := map[string]map[string]map[string]any{}
	for _, it := range xpathAll(replyTop(reply), "probe-test-results") {
		owner, _ := fstr(it, "owner")
		r := map[string]any{}
		optStr := func(path string) any {
			if v, ok := fstr(it, path); ok {
				return v
			}
			return nil
		}
		r["target"] = optStr("target-address")
		r["source"] = optStr("source-address")
		if r["source"] == nil {
			r["source"] = ""
		}
		r["probe_type"] = optStr("probe-type")
		if v, ok := fint(it, "test-size"); ok {
			r["probe_count"] = v
		} else {
			r["probe_count"] = nil
		}
		for _, f := range junosProbeFloats {
			if v, ok := ffloat(it, f.path); ok {
				r[f.key] = v * 1e-3
			} else {
				r[f.key] = nil
			}
		}
		loss := int64(0)
		if v, ok := ffloat(it, "probe-last-test-results/probe-test-generic-results/loss-percentage"); ok {
			loss = int64(v)
		}
		r["last_test_loss"] = loss
		test, _ := fstr(it, "test-name")
		if res[owner] == nil {
			res[owner] = map[string]map[string]any{}
		}
		res[owner][test] = r
	}
	return res
}

// GetProbesResults implements ProbesResultsGetter (<get-probe-results>).
func (j *junos) GetProbesResults(ctx context.Context) (map[string]map[string]map[string]any, error) {
	var res map[string]map[string]map[string]any
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_probes_results", func() error {
			reply, err := o.rpc("<get-probe-results/>")
			if err != nil {
				return err
			}
			res = parseJunosProbesResults(reply)
			return nil
		})
	})
	return res, err
}

// junosLightLevel reads an optics value: 0 where Junos shows no light.
func junosLightLevel(v string, ok bool) float64 {
	if !ok || v == "-Inf" || v == "- Inf" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return f
}

func junosOpticsChannel(index int, n *xnode, input string) OpticsChannel {
	st := func(path string) OpticsStat {
		v, ok := fstr(n, path)
		return OpticsStat{Instant: junosLightLevel(v, ok)}
	}
	return OpticsChannel{Index: index, State: OpticsState{
		InputPower: st(input), OutputPower: st("laser-output-power-dbm"), LaserBiasCurrent: st("laser-bias-current"),
	}}
}

// parseJunosOptics reads <get-interface-optics-diagnostics-information>:
// one channel per lane on multi-lane optics, lane 0 otherwise.
func parseJunosOptics(reply *xnode) map[string]Optics {
	res := map[string]Optics{}
	top := replyTop(reply)
	var order []string
	lanes := map[string][]OpticsChannel{}
	for _, l := range xpathAll(top, "physical-interface/optics-diagnostics/optics-diagnostics-lane-values") {
		name, _ := fstr(l, "../../name")
		idx, _ := fint(l, "lane-index")
		if _, ok := lanes[name]; !ok {
			order = append(order, name)
		}
		lanes[name] = append(lanes[name], junosOpticsChannel(int(idx), l, "laser-rx-optical-power-dbm"))
	}
	for _, name := range order {
		o := res[name]
		o.PhysicalChannels.Channel = append(o.PhysicalChannels.Channel, lanes[name]...)
		res[name] = o
	}
	for _, p := range xpathAll(top, "physical-interface") {
		name, _ := fstr(p, "name")
		if _, ok := lanes[name]; ok {
			continue
		}
		od := p.child("optics-diagnostics")
		ch := OpticsChannel{Index: 0}
		if od != nil {
			ch = junosOpticsChannel(0, od, "rx-signal-avg-optical-power-dbm")
		}
		o := res[name]
		o.PhysicalChannels.Channel = append(o.PhysicalChannels.Channel, ch)
		res[name] = o
	}
	return res
}

// GetOptics implements OpticsGetter
// (<get-interface-optics-diagnostics-information>).
func (j *junos) GetOptics(ctx context.Context) (map[string]Optics, error) {
	var res map[string]Optics
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_optics", func() error {
			reply, err := o.rpc("<get-interface-optics-diagnostics-information/>")
			if err != nil {
				return err
			}
			res = parseJunosOptics(reply)
			return nil
		})
	})
	return res, err
}

// junosCounters reads one interface's counters (NAPALM's counter view:
// -1 for a counter the device does not report).
func junosCounters(n *xnode) InterfaceCounters {
	get := func(group, field string) int64 {
		g := n.child(group)
		if g == nil {
			return -1
		}
		if v, ok := fint(g, field); ok {
			return v
		}
		return -1
	}
	return InterfaceCounters{
		RxBroadcastPackets: get("ethernet-mac-statistics", "input-broadcasts"),
		TxBroadcastPackets: get("ethernet-mac-statistics", "output-broadcasts"),
		RxUnicastPackets:   get("ethernet-mac-statistics", "input-unicasts"),
		TxUnicastPackets:   get("ethernet-mac-statistics", "output-unicasts"),
		RxMulticastPackets: get("ethernet-mac-statistics", "input-multicasts"),
		TxMulticastPackets: get("ethernet-mac-statistics", "output-multicasts"),
		RxOctets:           get("traffic-statistics", "input-bytes"),
		TxOctets:           get("traffic-statistics", "output-bytes"),
		RxErrors:           get("input-error-list", "input-errors"),
		RxDiscards:         get("input-error-list", "input-discards"),
		TxErrors:           get("output-error-list", "output-errors"),
		TxDiscards:         get("output-error-list", "output-drops"),
	}
}

// parseJunosCounters reads <get-interface-information extensive>:
// physical interfaces and their logical units.
func parseJunosCounters(reply *xnode) map[string]InterfaceCounters {
	res := map[string]InterfaceCounters{}
	for _, p := range xpathAll(replyTop(reply), "physical-interface") {
		for _, l := range xpathAll(p, "logical-interface") {
			name, _ := fstr(l, "name")
			res[name] = junosCounters(l)
		}
		name, _ := fstr(p, "name")
		res[name] = junosCounters(p)
	}
	return res
}

// GetInterfacesCounters implements CountersGetter as NAPALM junos: the
// extensive interface information of the Ethernet-like interfaces.
func (j *junos) GetInterfacesCounters(ctx context.Context) (map[string]InterfaceCounters, error) {
	var res map[string]InterfaceCounters
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_interfaces_counters", func() error {
			reply, err := o.rpc("<get-interface-information><extensive/><interface-name>[vmfgxe][mlet]*</interface-name></get-interface-information>")
			if err != nil {
				return err
			}
			res = parseJunosCounters(reply)
			return nil
		})
	})
	return res, err
}

// junosInstanceTypes is NAPALM's OpenConfig network instance type map.
var junosInstanceTypes = map[string]string{
	"default": "DEFAULT_INSTANCE", "l2vpn": "L2VPN", "vrf": "L3VRF", "evpn": "BGP_EVPN", "vpls": "BGP_VPLS", "forwarding": "L2P2P",
}

// parseJunosInstances reads [routing-instances]; the default instance
// holds every interface of allIfaces no instance claims.
func parseJunosInstances(reply *xnode, allIfaces []string) map[string]NetworkInstance {
	res := map[string]NetworkInstance{}
	claimed := map[string]bool{}
	for _, ri := range xpathAll(replyTop(reply), "routing-instances/instance") {
		name, _ := fstr(ri, "name")
		typ, ok := fstr(ri, "instance-type")
		if !ok {
			typ = "default"
		}
		if t, ok := junosInstanceTypes[typ]; ok {
			typ = t
		}
		ni := NetworkInstance{Name: name, Type: typ, Interfaces: NetworkInstanceIfaces{Interface: map[string]struct{}{}}}
		ni.State.RouteDistinguisher, _ = fstr(ri, "route-distinguisher/rd-type")
		for _, i := range fvals(ri, "interface/name | bridge-domains/domain/interface/name") {
			if i != "" {
				ni.Interfaces.Interface[i] = struct{}{}
				claimed[i] = true
			}
		}
		res[name] = ni
	}
	if _, ok := res["default"]; !ok {
		d := NetworkInstance{Name: "default", Type: "DEFAULT_INSTANCE", Interfaces: NetworkInstanceIfaces{Interface: map[string]struct{}{}}}
		for _, i := range allIfaces {
			if !claimed[i] {
				d.Interfaces.Interface[i] = struct{}{}
			}
		}
		res["default"] = d
	}
	return res
}

// GetNetworkInstances implements NetworkInstancesGetter as NAPALM junos:
// [routing-instances instance] and the interfaces of get_interfaces.
func (j *junos) GetNetworkInstances(ctx context.Context, name string) (map[string]NetworkInstance, error) {
	var res map[string]NetworkInstance
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_network_instances", func() error {
			reply, err := junosConfigGet(o, "<configuration><routing-instances><instance/></routing-instances></configuration>")
			if err != nil {
				return err
			}
			ifs, err := o.rpc("<get-interface-information/>")
			if err != nil {
				return err
			}
			var all []string
			for n := range parseJunosInterfaces(ifs) {
				all = append(all, n)
			}
			res = parseJunosInstances(reply, all)
			return nil
		})
	})
	if err != nil || name == "" {
		return res, err
	}
	if ni, ok := res[name]; ok {
		return map[string]NetworkInstance{name: ni}, nil
	}
	return map[string]NetworkInstance{}, nil
}

var junosNTPAssocRe = regexp.MustCompile(`(?i)^\s?(\+|\*|x|-)?([a-zA-Z0-9\.+-:]+)\s+([a-zA-Z0-9\.]+)\s+([0-9]{1,2})\s+(-|u)\s+([0-9h-]+)\s+([0-9]+)\s+([0-9]+)\s+([0-9\.]+)\s+([0-9\.-]+)\s+([0-9\.]+)\s?$`)

// parseJunosNTPStats reads "show ntp associations no-resolve" (lines
// after the three header lines).
func parseJunosNTPStats(text string) []NTPStats {
	out := []NTPStats{}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) < 3 {
		return out
	}
	for _, l := range lines[3:] {
		m := junosNTPAssocRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		st, err1 := strconv.Atoi(m[4])
		poll, err2 := strconv.Atoi(m[7])
		reach, err3 := strconv.Atoi(m[8])
		delay, err4 := strconv.ParseFloat(m[9], 64)
		off, err5 := strconv.ParseFloat(m[10], 64)
		jit, err6 := strconv.ParseFloat(m[11], 64)
		remote, err7 := netip.ParseAddr(m[2]) // NAPALM skips a line whose remote is no address
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || err6 != nil || err7 != nil {
			continue
		}
		out = append(out, NTPStats{
			Remote: remote.String(), Synchronized: m[1] == "*", ReferenceID: m[3], Stratum: st, Type: m[5],
			When: m[6], HostPoll: poll, Reachability: reach, Delay: delay, Offset: off, Jitter: jit,
		})
	}
	return out
}

// GetNTPStats implements Driver as NAPALM junos: the text of "show ntp
// associations no-resolve" (Junos has no RPC for it).
func (j *junos) GetNTPStats(ctx context.Context) ([]NTPStats, error) {
	var res []NTPStats
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "get_ntp_stats", func() error {
			reply, err := o.rpc(`<command format="text">show ntp associations no-resolve</command>`)
			if err != nil {
				return err
			}
			res = parseJunosNTPStats(commandOutput(reply))
			return nil
		})
	})
	return res, err
}

// junosFindTxt is napalm.base.helpers.find_txt: the text at path, def
// when absent.
func junosFindTxt(n *xnode, path, def string) string {
	if n == nil {
		return def
	}
	x := n.child(strings.Split(path, "/")...)
	if x == nil {
		return def
	}
	return strings.TrimSpace(x.text)
}

func round3(f float64) float64 { return math.RoundToEven(f*1000) / 1000 }

// parseJunosPing reads the reply of a ping <command>.
func parseJunosPing(reply *xnode) PingResult {
	sum := reply.find("probe-results-summary")
	if sum == nil {
		return PingResult{Error: junosFindTxt(reply.find("rpc-error"), "error-message", "")}
	}
	loss := atoi(junosFindTxt(sum, "packet-loss", ""), 100)
	if loss == 100 {
		return PingResult{Error: fmt.Sprintf("Packet loss %d", loss)}
	}
	rtt := func(n *xnode, f string) float64 { return round3(atof(junosFindTxt(n, f, ""), -1) * 1e-3) }
	s := &PingSuccess{
		ProbesSent: atoi(junosFindTxt(sum, "probes-sent", ""), 0), PacketLoss: loss,
		RTTMin: rtt(sum, "rtt-minimum"), RTTMax: rtt(sum, "rtt-maximum"), RTTAvg: rtt(sum, "rtt-average"), RTTStddev: rtt(sum, "rtt-stddev"),
		Results: []PingProbeRT{},
	}
	for _, p := range reply.find("ping-results").children("probe-result") {
		ip := junosFindTxt(p, "ip-address", "")
		if ip == "" {
			ip = "*"
		} else {
			ip = napalmIP(ip)
		}
		s.Results = append(s.Results, PingProbeRT{IPAddress: ip, RTT: rtt(p, "rtt")})
	}
	return PingResult{Success: s}
}

// Ping implements Driver as NAPALM junos: the ping <command> RPC.
func (j *junos) Ping(ctx context.Context, p PingOptions) (PingResult, error) {
	pingDefaults(&p)
	cmd := "ping " + p.Destination
	if p.Source != "" {
		cmd += " source " + p.Source
	}
	if p.TTL != 0 {
		cmd += " ttl " + strconv.Itoa(p.TTL)
	}
	if p.Timeout != 0 {
		cmd += " wait " + strconv.Itoa(p.Timeout)
	}
	if p.Size != 0 {
		cmd += " size " + strconv.Itoa(p.Size)
	}
	if p.Count != 0 {
		cmd += " count " + strconv.Itoa(p.Count)
	}
	if p.VRF != "" {
		cmd += " routing-instance " + p.VRF
	}
	var res PingResult
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "ping", func() error {
			reply, err := o.rpc("<command>" + escapeXML(cmd) + "</command>")
			if err != nil {
				return err
			}
			res = parseJunosPing(reply)
			return nil
		})
	})
	return res, err
}

// parseJunosTraceroute reads the reply of a traceroute <command>.
func parseJunosTraceroute(reply *xnode) TracerouteResult {
	tr := reply.find("traceroute-results")
	fail := junosFindTxt(tr, "traceroute-failure", "")
	msg := junosFindTxt(tr, "rpc-error/error-message", "")
	if fail != "" && msg != "" {
		return TracerouteResult{Error: fail + ": " + msg}
	}
	res := TracerouteResult{Success: map[int]TracerouteHop{}}
	for _, hop := range tr.children("hop") {
		ttl := atoi(junosFindTxt(hop, "ttl-value", ""), 1)
		h, ok := res.Success[ttl]
		if !ok {
			h = TracerouteHop{Probes: map[int]TracerouteProbe{}}
		}
		for _, p := range hop.children("probe-result") {
			idx := atoi(junosFindTxt(p, "probe-index", ""), 0)
			ip := junosFindTxt(p, "ip-address", "")
			if ip == "" {
				ip = "*"
			} else {
				ip = napalmIP(ip)
			}
			h.Probes[idx] = TracerouteProbe{IPAddress: ip, HostName: junosFindTxt(p, "host-name", "*"), RTT: atof(junosFindTxt(p, "rtt", ""), 0) * 1e-3}
		}
		res.Success[ttl] = h
	}
	return res
}

// Traceroute implements Driver as NAPALM junos: the traceroute <command>
// RPC.
func (j *junos) Traceroute(ctx context.Context, t TracerouteOptions) (TracerouteResult, error) {
	traceDefaults(&t)
	cmd := "traceroute " + t.Destination
	if t.Source != "" {
		cmd += " source " + t.Source
	}
	if t.TTL != 0 {
		cmd += " ttl " + strconv.Itoa(t.TTL)
	}
	if t.Timeout != 0 {
		cmd += " wait " + strconv.Itoa(t.Timeout)
	}
	if t.VRF != "" {
		cmd += " routing-instance " + t.VRF
	}
	var res TracerouteResult
	err := j.n.run(ctx, func(o *ncOp) error {
		return j.junosOnly(o, "traceroute", func() error {
			reply, err := o.rpc("<command>" + escapeXML(cmd) + "</command>")
			if err != nil {
				return err
			}
			res = parseJunosTraceroute(reply)
			return nil
		})
	})
	return res, err
}

var (
	_ VLANsGetter            = (*junos)(nil)
	_ IPv6NeighborsGetter    = (*junos)(nil)
	_ UsersGetter            = (*junos)(nil)
	_ SNMPGetter             = (*junos)(nil)
	_ ProbesConfigGetter     = (*junos)(nil)
	_ ProbesResultsGetter    = (*junos)(nil)
	_ OpticsGetter           = (*junos)(nil)
	_ CountersGetter         = (*junos)(nil)
	_ NetworkInstancesGetter = (*junos)(nil)
)

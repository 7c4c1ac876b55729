package driver

// Getters of the junos driver: Junos's operational RPCs, and the standard
// YANG modules (ietf-system, ietf-interfaces, ietf-ip) on other NETCONF
// servers.

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// genericUnsupported is the error of a getter that needs Junos or data
// the NETCONF server does not provide.
func (j *junos) genericUnsupported(what, why string) error {
	return j.n.errf(ErrNotSupported, what, errors.New(why))
}

// hasModule reports whether the server may implement the YANG module of
// namespace ns: it announces it, or it announces no module at all (YANG
// library 1.1 servers list modules in the library only).
func (n *ncSession) hasModule(ns string) bool {
	if n.hasCap(ns) {
		return true
	}
	for _, c := range n.caps {
		if strings.Contains(c, "?module=") {
			return false
		}
	}
	return true
}

// getModule runs <get> with filter; a server that rejects the filter (an
// unknown namespace) gives no data rather than an error.
func getModule(o *ncOp, filter string) ([]*xnode, error) {
	nodes, err := o.get(filter)
	var re *RPCError
	if errors.As(err, &re) {
		return nil, nil
	}
	return nodes, err
}

// GetFacts implements Driver. On Junos as NAPALM: the PyEZ facts (model,
// serial number, version, hostname, fqdn; see pyFacts), the uptime of
// <get-system-uptime-information> and the physical interfaces of
// <get-interface-information>; elsewhere ietf-system (hostname, platform,
// clock) and ietf-interfaces (names).
func (j *junos) GetFacts(ctx context.Context) (Facts, error) {
	var f Facts
	err := j.n.run(ctx, func(o *ncOp) error {
		var err error
		if j.n.isJunos() {
			f, err = j.junosFacts(o)
			return err
		}
		f, err = genericFacts(o)
		return err
	})
	return f, err
}

func (j *junos) junosFacts(o *ncOp) (Facts, error) {
	f := Facts{Vendor: "Juniper", Uptime: -1, InterfaceList: []string{}}
	pf, err := j.pyFacts(o)
	if err != nil {
		return f, err
	}
	f.Hostname, f.FQDN, f.Model, f.SerialNumber, f.OSVersion = pf.Hostname, pf.FQDN, pf.Model, pf.Serial, pf.Version
	if pf.Uptime != nil {
		f.Uptime = *pf.Uptime
	} else if up, err := o.rpc("<get-system-uptime-information/>"); err == nil {
		f.Uptime = junosUptime(up)
	} else if !isRPCError(err) {
		return f, err
	}
	ifs, err := o.rpc("<get-interface-information/>")
	if err != nil {
		return f, err
	}
	for _, p := range xpathAll(replyTop(ifs), "physical-interface") {
		if name := p.value("name"); name != "" {
			f.InterfaceList = append(f.InterfaceList, name)
		}
	}
	return f, nil
}

var junosReleaseRe = regexp.MustCompile(`\[([^\]]+)\]`)

// junosSoftware reads hostname, model (upper case, as PyEZ's facts) and
// version from <get-software-information> (the first routing engine's
// on multi-RE systems; "JUNOS ... [version]" package comments on releases
// without <junos-version>).
func junosSoftware(reply *xnode) (host, model, version string) {
	si := reply.find("software-information")
	if si == nil {
		si = reply
	}
	host = si.value("host-name")
	model = strings.ToUpper(si.value("product-model"))
	version = si.value("junos-version")
	if version == "" {
		for _, p := range si.findAll("package-information") {
			if m := junosReleaseRe.FindStringSubmatch(p.value("comment")); m != nil {
				version = m[1]
				break
			}
		}
	}
	return host, model, version
}

// junosUptime is current time minus boot time of
// <system-uptime-information> (junos:seconds attributes), -1 when absent.
func junosUptime(reply *xnode) float64 {
	cur := reply.find("current-time").child("date-time").attr("seconds")
	boot := reply.find("system-booted-time").child("date-time").attr("seconds")
	c, err1 := strconv.ParseInt(cur, 10, 64)
	b, err2 := strconv.ParseInt(boot, 10, 64)
	if err1 != nil || err2 != nil || c < b {
		return -1
	}
	return float64(c - b)
}

// ietfData is what the standard modules tell about a server.
type ietfData struct {
	system, systemState []*xnode
	interfaces          []*xnode // /interfaces/interface (config, or NMDA with state)
	ifState             []*xnode // /interfaces-state/interface
}

// readIETF reads ietf-system and ietf-interfaces (with ietf-ip) through
// <get>; modules the server lacks give no data.
func readIETF(o *ncOp, system, interfaces bool) (*ietfData, error) {
	d := &ietfData{}
	if system && o.n.hasModule(nsSystem) {
		nodes, err := getModule(o, `<system xmlns="`+nsSystem+`"/><system-state xmlns="`+nsSystem+`"/>`)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			switch n.local {
			case "system":
				d.system = append(d.system, n)
			case "system-state":
				d.systemState = append(d.systemState, n)
			}
		}
	}
	if interfaces && o.n.hasModule(nsInterfaces) {
		nodes, err := getModule(o, `<interfaces xmlns="`+nsInterfaces+`"/><interfaces-state xmlns="`+nsInterfaces+`"/>`)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			switch n.local {
			case "interfaces":
				d.interfaces = append(d.interfaces, n.children("interface")...)
			case "interfaces-state":
				d.ifState = append(d.ifState, n.children("interface")...)
			}
		}
	}
	return d, nil
}

// genericFacts builds Facts from ietf-system and ietf-interfaces.
func genericFacts(o *ncOp) (Facts, error) {
	f := Facts{Vendor: "Juniper", Uptime: -1, InterfaceList: []string{}}
	d, err := readIETF(o, true, true)
	if err != nil {
		return f, err
	}
	for _, s := range d.system {
		if h := s.value("hostname"); h != "" {
			f.Hostname = h
		}
	}
	f.FQDN = f.Hostname
	for _, s := range d.systemState {
		if v := s.value("platform", "os-release"); v != "" {
			f.OSVersion = v
		}
		cur, err1 := time.Parse(time.RFC3339, s.value("clock", "current-datetime"))
		boot, err2 := time.Parse(time.RFC3339, s.value("clock", "boot-datetime"))
		if err1 == nil && err2 == nil && !cur.Before(boot) {
			f.Uptime = cur.Sub(boot).Seconds()
		}
	}
	seen := map[string]bool{}
	for _, i := range append(append([]*xnode{}, d.interfaces...), d.ifState...) {
		if n := i.value("name"); n != "" && !seen[n] {
			seen[n] = true
			f.InterfaceList = append(f.InterfaceList, n)
		}
	}
	sortNicely(f.InterfaceList)
	return f, nil
}

// ---- interfaces ----

var junosSpeedRe = regexp.MustCompile(`(?i)^(\d+(?:\.\d+)?)\s*([gmk]?)bps`)

// junosSpeed converts Junos's speed ("1000mbps", "10Gbps") to Mbit/s, -1
// when unknown ("Unlimited", "Auto").
func junosSpeed(s string) float64 {
	m := junosSpeedRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	switch strings.ToLower(m[2]) {
	case "g":
		v *= 1000
	case "k":
		v /= 1000
	case "":
		v /= 1e6
	}
	return v
}

// parseJunosInterfaces reads <get-interface-information> as NAPALM's
// junos driver: physical interfaces (admin/oper status, description,
// flap seconds, MAC, MTU, speed) and their logical units (up when the
// physical one is, enabled unless iff-down is flagged).
func parseJunosInterfaces(reply *xnode) map[string]Interface {
	res := map[string]Interface{}
	for _, p := range reply.findAll("physical-interface") {
		name := p.value("name")
		if name == "" {
			continue
		}
		phys := Interface{
			IsUp:        p.value("oper-status") == "up",
			IsEnabled:   p.value("admin-status") == "up",
			Description: p.value("description"),
			MACAddress:  macOr(p.value("current-physical-address")),
			LastFlapped: -1,
			MTU:         atoi(p.value("mtu"), 0),
			Speed:       junosSpeed(p.value("speed")),
		}
		// NAPALM: str(None) without the element; "Auto" is the
		// autonegotiated link-partner speed ("1000 Mbps").
		if p.child("current-physical-address") == nil {
			phys.MACAddress = "None"
		}
		if strings.EqualFold(strings.TrimSpace(p.value("speed")), "auto") {
			if an := p.child("ethernet-autonegotiation"); an != nil {
				phys.Speed = junosSpeed(strings.ReplaceAll(an.value("link-partner-speed"), " ", ""))
			}
		}
		// NAPALM's "seconds or -1": "Never" flapped is junos:seconds="0".
		if s, err := strconv.ParseFloat(p.child("interface-flapped").attr("seconds"), 64); err == nil && s != 0 {
			phys.LastFlapped = s
		}
		res[name] = phys
		for _, l := range p.children("logical-interface") {
			ln := l.value("name")
			if ln == "" {
				continue
			}
			li := phys
			li.Description = l.value("description")
			li.IsEnabled = l.child("if-config-flags", "iff-down") == nil
			res[ln] = li
		}
	}
	return res
}

// ifState returns the operational entry of interface name: its
// interfaces-state entry, or (NMDA) the interfaces entry itself when it
// carries oper-status; nil when the server reports no state for it.
func (d *ietfData) ifStateOf(name string) *xnode {
	for _, s := range d.ifState {
		if s.value("name") == name {
			return s
		}
	}
	for _, i := range d.interfaces {
		if i.value("name") == name && i.child("oper-status") != nil {
			return i
		}
	}
	return nil
}

func (d *ietfData) ifConfigOf(name string) *xnode {
	for _, i := range d.interfaces {
		if i.value("name") == name {
			return i
		}
	}
	return nil
}

// ifNames returns every interface name of d, configured ones first.
func (d *ietfData) ifNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, i := range append(append([]*xnode{}, d.interfaces...), d.ifState...) {
		if n := i.value("name"); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// ietfInterfaces builds get_interfaces from ietf-interfaces operational
// data (+ configuration for description and enabled); ok is false when
// the server reports no operational data at all.
func ietfInterfaces(d *ietfData, now time.Time) (map[string]Interface, bool) {
	res := map[string]Interface{}
	haveState := false
	for _, name := range d.ifNames() {
		st := d.ifStateOf(name)
		if st == nil {
			continue
		}
		haveState = true
		cfg := d.ifConfigOf(name)
		i := Interface{IsUp: st.value("oper-status") == "up", LastFlapped: -1,
			MACAddress: macOr(st.value("phys-address")), Speed: -1}
		switch {
		case st.value("admin-status") != "":
			i.IsEnabled = st.value("admin-status") == "up"
		case cfg != nil:
			i.IsEnabled = cfg.value("enabled") != "false"
		}
		if cfg != nil {
			i.Description = cfg.value("description")
		}
		if i.Description == "" {
			i.Description = st.value("description")
		}
		if t, err := time.Parse(time.RFC3339, st.value("last-change")); err == nil && !now.Before(t) {
			i.LastFlapped = math.Round(now.Sub(t).Seconds())
		}
		if bps, err := strconv.ParseFloat(st.value("speed"), 64); err == nil {
			i.Speed = bps / 1e6
		}
		i.MTU = atoi(st.value("ipv4", "mtu"), 0)
		if i.MTU == 0 && cfg != nil {
			i.MTU = atoi(cfg.value("ipv4", "mtu"), 0)
		}
		res[name] = i
	}
	return res, haveState
}

// GetInterfaces implements Driver.
func (j *junos) GetInterfaces(ctx context.Context) (map[string]Interface, error) {
	var res map[string]Interface
	err := j.n.run(ctx, func(o *ncOp) error {
		if j.n.isJunos() {
			reply, err := o.rpc("<get-interface-information/>")
			if err != nil {
				return err
			}
			res = parseJunosInterfaces(reply)
			return nil
		}
		d, err := readIETF(o, false, true)
		if err != nil {
			return err
		}
		var ok bool
		if res, ok = ietfInterfaces(d, time.Now()); !ok {
			return j.genericUnsupported("get_interfaces", "the NETCONF server reports no ietf-interfaces operational state")
		}
		return nil
	})
	return res, err
}

// addPrefix records address ip/plen in the ipv4 or ipv6 map of ifc.
func addPrefix(ifc InterfaceIP, addr string, plen int) InterfaceIP {
	a, err := netip.ParseAddr(strings.TrimSpace(addr))
	if err != nil {
		return ifc
	}
	if a.Is4() {
		if ifc.IPv4 == nil {
			ifc.IPv4 = map[string]IPPrefix{}
		}
		ifc.IPv4[a.String()] = IPPrefix{PrefixLength: plen}
	} else {
		if ifc.IPv6 == nil {
			ifc.IPv6 = map[string]IPPrefix{}
		}
		ifc.IPv6[a.String()] = IPPrefix{PrefixLength: plen}
	}
	return ifc
}

// parseJunosInterfacesIP reads <get-interface-information><terse/>: the
// inet and inet6 addresses (ifa-local "a.b.c.d/len") of logical units.
func parseJunosInterfacesIP(reply *xnode) map[string]InterfaceIP {
	res := map[string]InterfaceIP{}
	for _, l := range reply.findAll("logical-interface") {
		name := l.value("name")
		for _, af := range l.children("address-family") {
			fam := af.value("address-family-name")
			if fam != "inet" && fam != "inet6" {
				continue
			}
			for _, a := range af.children("interface-address") {
				local := a.value("ifa-local")
				if local == "" {
					continue
				}
				addr, plen := local, -1
				if p, err := netip.ParsePrefix(local); err == nil {
					addr, plen = p.Addr().String(), p.Bits()
				} else if pa, err := netip.ParseAddr(local); err == nil {
					plen = pa.BitLen()
				}
				if plen < 0 {
					continue
				}
				res[name] = addPrefix(res[name], addr, plen)
			}
		}
	}
	return res
}

// netmaskLen converts a dotted netmask to a prefix length (-1 if invalid).
func netmaskLen(mask string) int {
	a, err := netip.ParseAddr(mask)
	if err != nil || !a.Is4() {
		return -1
	}
	b := a.As4()
	n := 0
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			if x&(1<<i) == 0 {
				return n
			}
			n++
		}
	}
	return n
}

// ietfAddresses adds the ietf-ip addresses of interface entry e.
func ietfAddresses(e *xnode, ifc InterfaceIP) InterfaceIP {
	for _, fam := range []string{"ipv4", "ipv6"} {
		for _, a := range e.child(fam).children("address") {
			plen := atoi(a.value("prefix-length"), -1)
			if plen < 0 {
				plen = netmaskLen(a.value("netmask"))
			}
			if plen >= 0 {
				ifc = addPrefix(ifc, a.value("ip"), plen)
			}
		}
	}
	return ifc
}

// ietfInterfacesIP builds get_interfaces_ip from ietf-ip: operational
// addresses where the server reports them, configured ones otherwise.
func ietfInterfacesIP(d *ietfData) map[string]InterfaceIP {
	res := map[string]InterfaceIP{}
	for _, name := range d.ifNames() {
		var ifc InterfaceIP
		if st := d.ifStateOf(name); st != nil && (st.child("ipv4") != nil || st.child("ipv6") != nil) {
			ifc = ietfAddresses(st, ifc)
		} else if cfg := d.ifConfigOf(name); cfg != nil {
			ifc = ietfAddresses(cfg, ifc)
		}
		if ifc.IPv4 != nil || ifc.IPv6 != nil {
			res[name] = ifc
		}
	}
	return res
}

// GetInterfacesIP implements Driver.
func (j *junos) GetInterfacesIP(ctx context.Context) (map[string]InterfaceIP, error) {
	var res map[string]InterfaceIP
	err := j.n.run(ctx, func(o *ncOp) error {
		if j.n.isJunos() {
			reply, err := o.rpc("<get-interface-information><terse/></get-interface-information>")
			if err != nil {
				return err
			}
			res = parseJunosInterfacesIP(reply)
			return nil
		}
		if !j.n.hasModule(nsIP) {
			return j.genericUnsupported("get_interfaces_ip", "the NETCONF server has no ietf-ip module")
		}
		d, err := readIETF(o, false, true)
		if err != nil {
			return err
		}
		res = ietfInterfacesIP(d)
		return nil
	})
	return res, err
}

// parseJunosARP reads <get-arp-table-information>.
func parseJunosARP(reply *xnode) []ARPEntry {
	out := []ARPEntry{}
	for _, e := range reply.findAll("arp-table-entry") {
		a := ARPEntry{Interface: e.value("interface-name"), MAC: macOr(e.value("mac-address")),
			IP: e.value("ip-address"), Age: -1}
		if v, err := strconv.ParseFloat(e.value("time-to-expire"), 64); err == nil {
			a.Age = v
		}
		out = append(out, a)
	}
	return out
}

// ietfARP reads the ietf-ip IPv4 neighbors of the interfaces' operational
// data (age unknown: -1); ok is false without operational data.
func ietfARP(d *ietfData) ([]ARPEntry, bool) {
	out := []ARPEntry{}
	haveState := false
	for _, name := range d.ifNames() {
		st := d.ifStateOf(name)
		if st == nil {
			continue
		}
		haveState = true
		for _, n := range st.child("ipv4").children("neighbor") {
			out = append(out, ARPEntry{Interface: name, IP: n.value("ip"),
				MAC: macOr(n.value("link-layer-address")), Age: -1})
		}
	}
	return out, haveState
}

// GetArpTable implements Driver (vrf must be "", as in NAPALM's junos).
func (j *junos) GetArpTable(ctx context.Context, vrf string) ([]ARPEntry, error) {
	if vrf != "" {
		return nil, j.n.errf(ErrNotSupported, "get_arp_table", errors.New("VRF support has not been added for this getter on this platform"))
	}
	var res []ARPEntry
	err := j.n.run(ctx, func(o *ncOp) error {
		if j.n.isJunos() {
			reply, err := o.rpc("<get-arp-table-information><no-resolve/><expiration-time/></get-arp-table-information>")
			if err != nil {
				return err
			}
			res = parseJunosARP(reply)
			return nil
		}
		if !j.n.hasModule(nsIP) {
			return j.genericUnsupported("get_arp_table", "the NETCONF server has no ietf-ip module")
		}
		d, err := readIETF(o, false, true)
		if err != nil {
			return err
		}
		var ok bool
		if res, ok = ietfARP(d); !ok {
			return j.genericUnsupported("get_arp_table", "the NETCONF server reports no ietf-interfaces operational state")
		}
		return nil
	})
	return res, err
}

// parseJunosLLDP reads <get-lldp-neighbors-information>.
func parseJunosLLDP(reply *xnode) map[string][]LLDPNeighbor {
	res := map[string][]LLDPNeighbor{}
	for _, n := range reply.findAll("lldp-neighbor-information") {
		local := n.value("lldp-local-port-id")
		if local == "" {
			local = n.value("lldp-local-interface")
		}
		if local == "" {
			continue
		}
		// NAPALM's junos_lldp_view: port is lldp-remote-port-id |
		// lldp-remote-port-description (the id first).
		port := n.value("lldp-remote-port-id")
		if port == "" {
			port = n.value("lldp-remote-port-description")
		}
		res[local] = append(res[local], LLDPNeighbor{Hostname: n.value("lldp-remote-system-name"), Port: port})
	}
	return res
}

// GetLLDPNeighbors implements Driver (Junos only).
func (j *junos) GetLLDPNeighbors(ctx context.Context) (map[string][]LLDPNeighbor, error) {
	var res map[string][]LLDPNeighbor
	err := j.n.run(ctx, func(o *ncOp) error {
		if !j.n.isJunos() {
			return j.genericUnsupported("get_lldp_neighbors", "LLDP needs Junos's <get-lldp-neighbors-information>")
		}
		reply, err := o.rpc("<get-lldp-neighbors-information/>")
		if err != nil {
			return err
		}
		res = parseJunosLLDP(reply)
		return nil
	})
	return res, err
}

// ntpConfig returns the configured NTP servers and peers: Junos's
// [system ntp server|peer] names, or ietf-system's /system/ntp/server
// entries (udp/address, else name) split by association-type.
func (j *junos) ntpConfig(ctx context.Context, what string) (servers, peers []string, err error) {
	err = j.n.run(ctx, func(o *ncOp) error {
		if j.n.isJunos() {
			// NAPALM's filter: only the servers, or only the peers.
			elem := "server"
			if what == "get_ntp_peers" {
				elem = "peer"
			}
			reply, err := o.rpc("<get-configuration><configuration><system><ntp><" + elem + "/></ntp></system></configuration></get-configuration>")
			if err != nil {
				return err
			}
			ntp := reply.find("ntp")
			for _, s := range ntp.children("server") {
				servers = append(servers, s.value("name"))
			}
			for _, p := range ntp.children("peer") {
				peers = append(peers, p.value("name"))
			}
			return nil
		}
		if !j.n.hasModule(nsSystem) {
			return j.genericUnsupported(what, "the NETCONF server has no ietf-system module")
		}
		d, err := readIETF(o, true, false)
		if err != nil {
			return err
		}
		servers, peers = ietfNTP(d)
		return nil
	})
	return servers, peers, err
}

func ietfNTP(d *ietfData) (servers, peers []string) {
	for _, s := range d.system {
		for _, srv := range s.child("ntp").children("server") {
			addr := srv.value("udp", "address")
			if addr == "" {
				addr = srv.value("name")
			}
			if addr == "" {
				continue
			}
			if srv.value("association-type") == "peer" {
				peers = append(peers, addr)
			} else {
				servers = append(servers, addr)
			}
		}
	}
	return servers, peers
}

// GetNTPServers implements Driver.
func (j *junos) GetNTPServers(ctx context.Context) (map[string]NTPServer, error) {
	servers, _, err := j.ntpConfig(ctx, "get_ntp_servers")
	if err != nil {
		return nil, err
	}
	return addrSet[NTPServer](servers), nil
}

// GetNTPPeers implements Driver.
func (j *junos) GetNTPPeers(ctx context.Context) (map[string]NTPPeer, error) {
	_, peers, err := j.ntpConfig(ctx, "get_ntp_peers")
	if err != nil {
		return nil, err
	}
	return addrSet[NTPPeer](peers), nil
}

// addrSet maps each non-empty address to a zero T, NAPALM's shape for
// NTP servers and peers.
func addrSet[T any](addrs []string) map[string]T {
	res := map[string]T{}
	for _, a := range addrs {
		if a != "" {
			var zero T
			res[a] = zero
		}
	}
	return res
}

var _ Driver = (*junos)(nil)

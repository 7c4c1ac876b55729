package devsim

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// NX-OS show commands, derived from the running configuration and the fleet's cabling.

func nxosShowVersion(s *shell, _ []string) string {
	f := s.dev.fleet
	s.dev.mu.Lock()
	host := s.dev.hostname()
	s.dev.mu.Unlock()
	up := f.opts.Now().Sub(f.bootTime(s.dev.index))
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("Cisco Nexus Operating System (NX-OS) Software")
	w("TAC support: http://www.cisco.com/tac")
	w("Copyright (C) 2002-2021, Cisco and/or its affiliates.")
	w("All rights reserved.")
	w("")
	w("Nexus 9000v is a demo version of the Nexus Operating System")
	w("")
	w("Software")
	w("  BIOS: version ")
	w(" NXOS: version %s", nxosVersion)
	w("  BIOS compile time:  ")
	w("  NXOS image file is: bootflash:///nxos.9.3.8.bin")
	w("  NXOS compile time:  4/18/2021 12:00:00 [04/18/2021 21:33:34]")
	w("")
	w("")
	w("Hardware")
	w("  cisco %s ", nxosModel)
	w("  Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz with 16409064 kB of memory.")
	w("  Processor Board ID %s", nxosSerial(s.dev.index))
	w("")
	w("  Device name: %s", host)
	w("  bootflash:    4287040 kB")
	w("Kernel uptime is %s", nxosUptime(up))
	w("")
	w("Last reset ")
	w("  Reason: Unknown")
	w("  System version: ")
	w("  Service: ")
	w("")
	w("plugin")
	w("  Core Plugin, Ethernet Plugin")
	w("")
	w("Active Package(s):")
	return b.String()
}

func nxosShowHostname(s *shell, _ []string) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	return s.dev.hostname()
}

// nxosDomain returns the configured domain name or "". d.mu must be held.
func nxosDomain(s *shell) string {
	if l := s.dev.state().running.top("ip", "domain-name"); l != "" {
		return strings.Fields(l)[2]
	}
	return ""
}

func nxosShowHosts(s *shell, _ []string) string {
	s.dev.mu.Lock()
	dom := nxosDomain(s)
	lookup := s.dev.state().running.top("ip", "domain-lookup") != ""
	s.dev.mu.Unlock()
	var b strings.Builder
	if lookup {
		b.WriteString("DNS lookup enabled\n")
	} else {
		b.WriteString("DNS lookup disabled\n")
	}
	if dom != "" {
		b.WriteString("Default domain for vrf:default is " + dom + "\n")
	}
	b.WriteString("Name/address lookup uses domain service\nName servers are 255.255.255.255\n\n")
	fmt.Fprintf(&b, "%-12s %-10s %-10s %-8s %-15s %s\n", "Vrf", "Use-vrf", "Token", "Config", "Host", "Address")
	return b.String()
}

func nxosShowClock(s *shell, _ []string) string {
	t := s.dev.fleet.opts.Now().UTC()
	return t.Format("15:04:05.000 MST Mon Jan 02 2006") + "\nTime source is NTP"
}

// nxosInvRow is one row of "show inventory | json".
type nxosInvRow struct {
	Name      string `json:"name"`
	Desc      string `json:"desc"`
	ProductID string `json:"productid"`
	VendorID  string `json:"vendorid"`
	Serial    string `json:"serialnum"`
}

func nxosInventory(s *shell) []nxosInvRow {
	sn := nxosSerial(s.dev.index)
	return []nxosInvRow{
		{Name: "Chassis", Desc: nxosModel, ProductID: nxosPID, VendorID: "V02", Serial: sn},
		{Name: "Slot 1", Desc: "Nexus 9000v 64 port Ethernet Module", ProductID: "N9K-X9364v", VendorID: "V02", Serial: sn},
	}
}

func nxosShowInventory(s *shell, _ []string) string {
	var b strings.Builder
	for _, r := range nxosInventory(s) {
		fmt.Fprintf(&b, "NAME: \"%s\",  DESCR: \"%s\"\nPID: %-20s,  VID: %-4s,  SN: %s\n\n", r.Name, r.Desc, r.ProductID, r.VendorID, r.Serial)
	}
	return b.String()
}

func nxosInventoryJSON(s *shell, _ []string) string {
	v := map[string]any{"TABLE_inv": map[string]any{"ROW_inv": nxosInventory(s)}}
	out, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(out)
}

func nxosShowRunning(s *shell, args []string) string {
	now := s.dev.fleet.opts.Now().UTC().Format(nxosTimeFmt)
	s.dev.mu.Lock()
	st := s.dev.state()
	head := "\n!Command: show running-config\n!Running configuration last done at: " +
		st.lastChange.UTC().Format(nxosTimeFmt) + "\n!Time: " + now + "\n\n"
	switch {
	case len(args) == 0 || (len(args) == 1 && strings.EqualFold(args[0], "all")):
		body := s.p.renderBody(st.running)
		s.dev.mu.Unlock()
		return head + body
	case len(args) >= 2 && strings.HasPrefix("interface", strings.ToLower(args[0])) && len(args[0]) >= 3:
		name, ok := s.p.d.canonIf(strings.Join(args[1:], ""))
		blk, found := st.running.block("interface " + name)
		if !ok || !found {
			s.dev.mu.Unlock()
			return s.invalidLast()
		}
		body := s.p.renderBody(&config{items: []*stanza{blk}})
		s.dev.mu.Unlock()
		return strings.Replace(head, "show running-config", "show running-config interface "+name, 1) + body
	}
	s.dev.mu.Unlock()
	return s.invalidArg(args[0])
}

func nxosShowStartup(s *shell, _ []string) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	return "\n!Command: show startup-config\n!Running configuration last done at: " + st.lastChange.UTC().Format(nxosTimeFmt) +
		"\n!Startup config saved at: " + st.startupTime.UTC().Format(nxosTimeFmt) + "\n\n" + s.p.renderBody(st.startup)
}

// ---- interfaces ----

// nxosIfState is ifState with NX-OS's host port (up) and port-channels (no members: down).
func (s *shell) nxosIfState(in ifaceInfo) (admin, up bool) {
	admin, up = s.ifState(in)
	switch {
	case !admin:
	case in.name == nxosHostPort:
		up = true
	case strings.HasPrefix(in.name, "port-channel"):
		up = false
	}
	return admin, up
}

// nxosIfVRF returns the VRF of an interface ("default" without "vrf member"). d.mu must be held.
func nxosIfVRF(run *config, name string) string {
	if blk, ok := run.block("interface " + name); ok {
		for _, c := range blk.children {
			if v, ok := strings.CutPrefix(c.line, "vrf member "); ok {
				return v
			}
		}
	}
	return "default"
}

// nxosIPv6 returns the "ipv6 address" prefixes of an interface. d.mu must be held.
func nxosIPv6(run *config, name string) []string {
	var out []string
	if blk, ok := run.block("interface " + name); ok {
		for _, c := range blk.children {
			if v, ok := strings.CutPrefix(c.line, "ipv6 address "); ok {
				out = append(out, strings.Fields(v)[0])
			}
		}
	}
	return out
}

// nxosIfVlan returns the Vlan column of "show interface status". d.mu must be held.
func nxosIfVlan(run *config, in ifaceInfo) string {
	if !in.switchport {
		return "routed"
	}
	vlan := "1"
	if blk, ok := run.block("interface " + in.name); ok {
		for _, c := range blk.children {
			switch {
			case c.line == "switchport mode trunk":
				return "trunk"
			case strings.HasPrefix(c.line, "switchport access vlan "):
				vlan = strings.Fields(c.line)[3]
			}
		}
	}
	return vlan
}

func nxosShowInterface(s *shell, args []string) string {
	if len(args) > 0 {
		if w, ok := expandWord(args[0], []string{"status", "brief", "description"}); ok && len(args) == 1 {
			switch w {
			case "status":
				return nxosShowIfStatus(s)
			case "description":
				return nxosShowIfDescription(s)
			}
			return s.invalidArg(args[0])
		}
	}
	ifs, only, ok := s.runningIfs(args)
	if !ok {
		return s.invalidArg(args[0])
	}
	var b strings.Builder
	for _, in := range ifs {
		if only != "" && in.name != only {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		nxosInterfaceDetail(s, &b, in)
	}
	if only != "" && b.Len() == 0 {
		return s.invalidArg(args[0])
	}
	return b.String()
}

func nxosInterfaceDetail(s *shell, b *strings.Builder, in ifaceInfo) {
	f := s.dev.fleet
	admin, up := s.nxosIfState(in)
	w := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	mac := f.macOf(s.dev.index, nxosPortNumber(in.name))
	state, adminState := "up", "up"
	switch {
	case !admin:
		state, adminState = "down (Administratively down)", "down"
	case !up && strings.HasPrefix(in.name, "port-channel"):
		state = "down (No operational members)"
	case !up:
		state = "down (Link not connected)"
	}
	if strings.HasPrefix(in.name, "Vlan") {
		proto := "up"
		if !admin || !up {
			proto = "down"
		}
		w("%s is %s, line protocol is %s, autostate enabled", in.name, state, proto)
		w("  Hardware is EtherSVI, address is  %s", mac)
		if in.description != "" {
			w("  Description: %s", in.description)
		}
		if in.addr != "" {
			w("  Internet Address is %s/%d", in.addr, in.plen)
		}
		w("  MTU %d bytes, BW 1000000 Kbit, DLY 10 usec,", in.mtu)
		w("   reliability 255/255, txload 1/255, rxload 1/255")
		w("  Encapsulation ARPA, loopback not set")
		w("  Keepalive not supported")
		w("  ARP type: ARPA")
		w("  Last clearing of \"show interface\" counters never")
		return
	}
	w("%s is %s", in.name, state)
	switch {
	case strings.HasPrefix(in.name, "Ethernet"):
		w("admin state is %s, Dedicated Interface", adminState)
		w("  Hardware: 100/1000/10000/25000 Ethernet, address: %s (bia %s)", mac, mac)
	case strings.HasPrefix(in.name, "loopback"):
		w("admin state is %s,", adminState)
		w("  Hardware: Loopback")
	case strings.HasPrefix(in.name, "port-channel"):
		w("admin state is %s,", adminState)
		w("  Hardware: Port-Channel, address: %s (bia %s)", mac, mac)
	case strings.HasPrefix(in.name, "nve"), strings.HasPrefix(in.name, "Tunnel"):
		w("admin state is %s,", adminState)
		w("  Hardware: %s", strings.TrimRight(in.name, "0123456789"))
	default: // mgmt0
		w("admin state is %s,", adminState)
		w("  Hardware: Ethernet, address: %s (bia %s)", mac, mac)
	}
	if in.description != "" {
		w("  Description: %s", in.description)
	}
	if in.addr != "" {
		w("  Internet Address is %s/%d", in.addr, in.plen)
	}
	loop := strings.HasPrefix(in.name, "loopback")
	switch {
	case loop:
		w("  MTU %d bytes, BW 8000000 Kbit, DLY 5000 usec", in.mtu)
	case in.name == s.p.mgmtPort:
		w("  MTU %d bytes, BW 1000000 Kbit, DLY 10 usec", in.mtu)
	case strings.HasPrefix(in.name, "port-channel"):
		w("  MTU %d bytes, BW 100000 Kbit, DLY 10 usec", in.mtu)
	default:
		w("  MTU %d bytes, BW 10000000 Kbit, DLY 10 usec", in.mtu)
	}
	w("  reliability 255/255, txload 1/255, rxload 1/255")
	if loop {
		w("  Encapsulation LOOPBACK, medium is broadcast")
		w("  Auto-mdix is turned off")
		w("    0 packets input 0 bytes")
		w("    0 multicast frames 0 compressed")
		w("    0 input errors 0 frame 0 overrun 0 fifo")
		w("    0 packets output 0 bytes 0 underruns")
		w("    0 output errors 0 collisions 0 fifo")
		w("    0 out_carrier_errors")
		return
	}
	w("  Encapsulation ARPA, medium is broadcast")
	if strings.HasPrefix(in.name, "Ethernet") || strings.HasPrefix(in.name, "port-channel") {
		mode := "routed"
		if in.switchport {
			mode = "access"
			s.dev.mu.Lock()
			if nxosIfVlan(s.dev.state().running, in) == "trunk" {
				mode = "trunk"
			}
			s.dev.mu.Unlock()
		}
		w("  Port mode is %s", mode)
	}
	switch {
	case !admin || !up:
		w("  auto-duplex, auto-speed")
	case in.name == s.p.mgmtPort:
		w("  full-duplex, 1000 Mb/s")
	default:
		w("  full-duplex, 10 Gb/s")
	}
	w("  Auto-Negotiation is turned on")
	w("  Auto-mdix is turned off")
	if in.name != s.p.mgmtPort {
		w("  Switchport monitor is off ")
		w("  EtherType is 0x8100 ")
		if admin && up {
			w("  Last link flapped %s", uptimeSince(f.opts.Now().Sub(f.bootTime(s.dev.index))))
		} else {
			w("  Last link flapped never")
		}
		w("  Last clearing of \"show interface\" counters never")
	}
	ip, ib, op, ob := s.liveCounters("Ethernet"+strconv.Itoa(nxosPortNumber(in.name)), admin && up)
	w("  30 seconds input rate %d bits/sec, %d packets/sec", ib/100000, ip/100000)
	w("  30 seconds output rate %d bits/sec, %d packets/sec", ob/100000, op/100000)
	w("  RX")
	w("    %d unicast packets  0 multicast packets  0 broadcast packets", ip)
	w("    %d input packets  %d bytes", ip, ib)
	w("    0 input error  0 short frame  0 overrun   0 underrun  0 ignored")
	w("  TX")
	w("    %d unicast packets  0 multicast packets  0 broadcast packets", op)
	w("    %d output packets  %d bytes", op, ob)
	w("    0 output error  0 collision  0 deferred  0 late collision")
}

const nxosRule = "--------------------------------------------------------------------------------"

func nxosShowIfStatus(s *shell) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	run := s.dev.state().running
	ifs := s.p.d.interfaces(run)
	var b strings.Builder
	b.WriteString("\n" + nxosRule + "\n")
	fmt.Fprintf(&b, "%-13s %-18s %-9s %-9s %-7s %-7s %s\n", "Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type")
	b.WriteString(nxosRule + "\n")
	for _, in := range ifs {
		admin, up := s.nxosIfState(in)
		status := "connected"
		switch {
		case !admin:
			status = "disabled"
		case !up:
			status = "notconnec"
		}
		name := in.description
		if name == "" {
			name = "--"
		}
		if len(name) > 18 {
			name = name[:18]
		}
		dup, speed, typ := "full", "10G", "10Gbase-SR"
		switch {
		case in.name == s.p.mgmtPort:
			speed, typ = "1000", "--"
		case !strings.HasPrefix(in.name, "Ethernet"):
			dup, speed, typ = "auto", "auto", "--"
		case !admin || !up:
			dup, speed = "auto", "auto"
		}
		fmt.Fprintf(&b, "%-13s %-18s %-9s %-9s %-7s %-7s %s\n", s.p.d.shortIf(in.name), name, status, nxosIfVlan(run, in), dup, speed, typ)
	}
	return b.String()
}

func nxosShowIfDescription(s *shell) string {
	s.dev.mu.Lock()
	ifs := s.p.d.interfaces(s.dev.state().running)
	s.dev.mu.Unlock()
	var b strings.Builder
	b.WriteString("\n" + nxosRule + "\n")
	fmt.Fprintf(&b, "%-17s %-6s %-5s %s\n", "Port", "Type", "Speed", "Description")
	b.WriteString(nxosRule + "\n")
	for _, in := range ifs {
		d := in.description
		if d == "" {
			d = "--"
		}
		fmt.Fprintf(&b, "%-17s %-6s %-5s %s\n", s.p.d.shortIf(in.name), "eth", "10G", d)
	}
	return b.String()
}

// nxosVRFArg parses an optional "vrf NAME|all" argument pair ("" means the default VRF).
func nxosVRFArg(args []string) (vrf string, rest []string, ok bool) {
	vrf = "default"
	for i := 0; i < len(args); i++ {
		if w, _ := expandWord(args[i], []string{"vrf"}); w == "vrf" {
			if i+1 >= len(args) {
				return "", nil, false
			}
			vrf = args[i+1]
			i++
			continue
		}
		rest = append(rest, args[i])
	}
	return vrf, rest, true
}

// nxosVRFs lists VRF names in NX-OS order (default, management, then the others). d.mu held.
func nxosVRFs(run *config) []string {
	out := []string{"default", "management"}
	for _, it := range run.items {
		if v, ok := strings.CutPrefix(it.line, "vrf context "); ok && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func nxosIfStatusWords(admin, up bool) string {
	switch {
	case !admin:
		return "protocol-down/link-down/admin-down"
	case !up:
		return "protocol-down/link-down/admin-up"
	}
	return "protocol-up/link-up/admin-up"
}

func nxosShowIPInterface(s *shell, args []string) string {
	vrf, rest, ok := nxosVRFArg(args)
	if !ok || len(rest) > 0 {
		return s.invalidLast()
	}
	s.dev.mu.Lock()
	run := s.dev.state().running
	ifs := s.p.d.interfaces(run)
	vrfs := nxosVRFs(run)
	ifVRF := map[string]string{}
	for _, in := range ifs {
		ifVRF[in.name] = nxosIfVRF(run, in.name)
	}
	s.dev.mu.Unlock()
	var b strings.Builder
	for vi, v := range vrfs {
		if vrf != "all" && vrf != v {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "IP Interface Status for VRF \"%s\"(%d)\n", v, vi+1)
		for i, in := range ifs {
			if ifVRF[in.name] != v || in.addr == "" || in.switchport {
				continue
			}
			admin, up := s.nxosIfState(in)
			fmt.Fprintf(&b, "%s, Interface status: %s, iod: %d,\n", in.name, nxosIfStatusWords(admin, up), 5+i)
			fmt.Fprintf(&b, "  IP address: %s, IP subnet: %s/%d route-preference: 0, tag: 0 \n", in.addr, networkOf(in.addr, in.plen), in.plen)
			b.WriteString("  IP broadcast address: 255.255.255.255\n  IP multicast groups locally joined: none\n")
			fmt.Fprintf(&b, "  IP MTU: %d bytes (using link MTU)\n", in.mtu)
			b.WriteString("  IP primary address route-preference: 0, tag: 0\n  IP proxy ARP : disabled\n")
			b.WriteString("  IP Local Proxy ARP : disabled\n  IP multicast routing: disabled\n  IP icmp redirects: enabled\n")
			b.WriteString("  IP directed-broadcast: disabled \n  IP Forwarding: disabled \n")
			b.WriteString("  IP icmp unreachables (except port): disabled\n  IP icmp port-unreachable: enabled\n")
			b.WriteString("  IP unicast reverse path forwarding: none\n  IP load sharing: none \n")
			b.WriteString("  IP interface statistics last reset: never\n")
		}
	}
	if b.Len() == 0 {
		return "% VRF " + vrf + " not found"
	}
	return b.String()
}

func nxosShowIPv6Interface(s *shell, args []string) string {
	vrf, rest, ok := nxosVRFArg(args)
	if !ok || len(rest) > 0 {
		return s.invalidLast()
	}
	s.dev.mu.Lock()
	run := s.dev.state().running
	ifs := s.p.d.interfaces(run)
	vrfs := nxosVRFs(run)
	type v6if struct {
		in       ifaceInfo
		vrf      string
		prefixes []string
	}
	var list []v6if
	for _, in := range ifs {
		if p := nxosIPv6(run, in.name); len(p) > 0 {
			list = append(list, v6if{in: in, vrf: nxosIfVRF(run, in.name), prefixes: p})
		}
	}
	s.dev.mu.Unlock()
	var b strings.Builder
	for vi, v := range vrfs {
		if vrf != "all" && vrf != v {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "IPv6 Interface Status for VRF \"%s\"(%d)\n", v, vi+1)
		for i, e := range list {
			if e.vrf != v {
				continue
			}
			admin, up := s.nxosIfState(e.in)
			fmt.Fprintf(&b, "%s, Interface status: %s, iod: %d\n", e.in.name, nxosIfStatusWords(admin, up), 40+i)
			b.WriteString("  IPv6 address: \n")
			for _, p := range e.prefixes {
				fmt.Fprintf(&b, "    %s [VALID]\n", p)
			}
			if pfx, err := netip.ParsePrefix(e.prefixes[0]); err == nil {
				fmt.Fprintf(&b, "  IPv6 subnet:  %s\n", pfx.Masked())
			}
			b.WriteString("  IPv6 link-local address: none\n  IPv6 virtual addresses configured: none\n")
			fmt.Fprintf(&b, "  IPv6 MTU: %d (using link MTU)\n", e.in.mtu)
		}
	}
	if b.Len() == 0 {
		return "% VRF " + vrf + " not found"
	}
	return b.String()
}

// ---- neighbors and tables ----

// nxosPortNumber maps an interface to the number in its hardware address: EthernetS/N is N,
// mgmt0 200, port-channelN 128+N; other interfaces (SVIs) use the chassis address (0).
func nxosPortNumber(name string) int {
	num := func(s string) int {
		s, _, _ = strings.Cut(s, ".")
		n, _ := strconv.Atoi(s)
		return n
	}
	switch {
	case strings.HasPrefix(name, "Ethernet"):
		return num(name[strings.LastIndexByte(name, '/')+1:])
	case name == "mgmt0":
		return 200
	case strings.HasPrefix(name, "port-channel"):
		return 128 + num(strings.TrimPrefix(name, "port-channel"))
	}
	return 0
}

// nxosARP derives the ARP table (neighbors on up links and the management gateway; NX-OS
// does not list its own addresses). d.mu must be held.
func (s *shell) nxosARP() []arpEntry {
	f := s.dev.fleet
	var out []arpEntry
	for _, in := range s.p.d.interfaces(s.dev.state().running) {
		admin, up := s.nxosIfState(in)
		if !admin || !up || in.addr == "" || !s.p.d.hasMAC(in.name) {
			continue
		}
		same := func(ip string) bool { return networkOf(ip, in.plen) == networkOf(in.addr, in.plen) && ip != in.addr }
		if in.name == s.p.mgmtPort && same(mgmtGateway) {
			out = append(out, arpEntry{ip: mgmtGateway, mac: f.macOf(0xffff, 0xfe), iface: in.name, age: 70})
		}
		for _, n := range f.neighbors(s.dev.index) {
			if n.localPort == in.name && same(n.remoteIP) {
				out = append(out, arpEntry{ip: n.remoteIP, mac: f.macOf(n.index, nxosPortNumber(n.remotePort)),
					iface: in.name, age: 42 + n.index%60})
			}
		}
	}
	slices.SortFunc(out, func(a, b arpEntry) int { return ipCompare(a.ip, b.ip) })
	return out
}

func nxosShowLLDP(s *shell, args []string) string {
	detail := false
	only := ""
	for i := 0; i < len(args); i++ {
		w, _ := expandWord(args[i], []string{"detail", "interface"})
		switch {
		case w == "detail":
			detail = true
		case w == "interface" && i+1 < len(args):
			j := i + 1
			name := args[j]
			if j+1 < len(args) && !strings.EqualFold(args[j+1], "detail") && !strings.ContainsAny(args[j], "0123456789") {
				name += args[j+1] // "ethernet 1/2"
				j++
			}
			canon, ok := s.p.d.canonIf(name)
			if !ok {
				return s.invalidArg(args[i+1])
			}
			only = canon
			i = j
		default:
			return s.invalidArg(args[i])
		}
	}
	s.dev.mu.Lock()
	tab := s.lldpTable()
	s.dev.mu.Unlock()
	var sel []lldpEntry
	for _, e := range tab {
		if only == "" || e.local == only {
			sel = append(sel, e)
		}
	}
	var b strings.Builder
	b.WriteString("Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n")
	b.WriteString("  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\n")
	fmt.Fprintf(&b, "%-20s %-15s %-10s %-11s %s  \n", "Device ID", "Local Intf", "Hold-time", "Capability", "Port ID")
	if !detail {
		for _, e := range sel {
			fmt.Fprintf(&b, "%-20s %-15s %-10d %-11s %s\n", e.system, s.p.d.shortIf(e.local), 120, "BR", e.remote)
		}
		fmt.Fprintf(&b, "\nTotal entries displayed: %d\n", len(sel))
		return b.String()
	}
	b.WriteString("\n")
	for _, e := range sel {
		fmt.Fprintf(&b, "Chassis id: %s\nPort id: %s\nLocal Port id: %s\nPort Description: %s\nSystem Name: %s\n",
			e.chassis, e.remote, s.p.d.shortIf(e.local), e.remoteDescr, e.system)
		fmt.Fprintf(&b, "System Description: Cisco Nexus Operating System (NX-OS) Software %s\n", nxosVersion)
		b.WriteString("TAC support: http://www.cisco.com/tac\nCopyright (c) 2002-2021, Cisco Systems, Inc. All rights reserved.\n")
		b.WriteString("Time remaining: 104 seconds\nSystem Capabilities: B, R\nEnabled Capabilities: B, R\n")
		fmt.Fprintf(&b, "Management Address: %s\nManagement Address IPV6: not advertised\nVlan ID: not advertised\n\n\n", e.mgmt)
	}
	fmt.Fprintf(&b, "Total entries displayed: %d\n", len(sel))
	return b.String()
}

func nxosShowARP(s *shell, args []string) string {
	vrf, rest, ok := nxosVRFArg(args)
	if !ok || len(rest) > 0 {
		return s.invalidLast()
	}
	s.dev.mu.Lock()
	run := s.dev.state().running
	var sel []arpEntry
	for _, e := range s.nxosARP() {
		if vrf == "all" || nxosIfVRF(run, e.iface) == vrf {
			sel = append(sel, e)
		}
	}
	known := slices.Contains(nxosVRFs(run), vrf) || vrf == "all"
	s.dev.mu.Unlock()
	if !known {
		return "% VRF " + vrf + " not found"
	}
	var b strings.Builder
	b.WriteString("\nFlags: * - Adjacencies learnt on non-active FHRP router\n")
	b.WriteString("       + - Adjacencies synced via CFSoE\n       # - Adjacencies Throttled for Glean\n")
	b.WriteString("       CP - Added via L2RIB, Control plane Adjacencies\n")
	b.WriteString("       D - Static Adjacencies attached to down interface\n\n")
	if vrf == "all" {
		b.WriteString("IP ARP Table for all contexts\n")
	} else {
		b.WriteString("IP ARP Table for context " + vrf + "\n")
	}
	fmt.Fprintf(&b, "Total number of entries: %d\n", len(sel))
	fmt.Fprintf(&b, "%-15s %-9s %-15s %-15s %s\n", "Address", "Age", "MAC Address", "Interface", "Flags")
	for _, e := range sel {
		age := fmt.Sprintf("%02d:%02d:%02d", e.age/3600, e.age/60%60, e.age%60)
		fmt.Fprintf(&b, "%-15s %-9s %-15s %-15s\n", e.ip, age, e.mac, e.iface)
	}
	return b.String()
}

func nxosShowMAC(s *shell, args []string) string {
	if len(args) > 0 {
		return s.invalidArg(args[0])
	}
	s.dev.mu.Lock()
	run := s.dev.state().running
	var host *ifaceInfo
	for _, in := range s.p.d.interfaces(run) {
		if in.name == nxosHostPort {
			host = &in
			break
		}
	}
	vlan := ""
	if host != nil && !host.shutdown {
		vlan = nxosIfVlan(run, *host)
	}
	s.dev.mu.Unlock()
	var b strings.Builder
	b.WriteString("Legend: \n        * - primary entry, G - Gateway MAC, (R) - Routed MAC, O - Overlay MAC\n")
	b.WriteString("        age - seconds since last seen,+ - primary entry using vPC Peer-Link,\n")
	b.WriteString("        (T) - True, (F) - False, C - ControlPlane MAC, ~ - vsan\n")
	b.WriteString("   VLAN     MAC Address      Type      age     Secure NTFY Ports\n")
	b.WriteString("---------+-----------------+--------+---------+------+----+------------------\n")
	if vlan != "" && vlan != "routed" && vlan != "trunk" {
		m := s.dev.fleet.macOf(s.dev.index, 0xa1)
		fmt.Fprintf(&b, "*   %-5s    %s   dynamic  0         F      F    %s\n", vlan, m[:4]+".56"+m[7:], s.p.d.shortIf(nxosHostPort))
	}
	return b.String()
}

func nxosShowNTPPeers(s *shell, _ []string) string {
	s.dev.mu.Lock()
	var b strings.Builder
	b.WriteString("--------------------------------------------------\n  Peer IP Address               Serv/Peer          \n")
	b.WriteString("--------------------------------------------------\n")
	for _, it := range s.dev.state().running.items {
		f := strings.Fields(it.line)
		if len(f) < 3 || f[0] != "ntp" || (f[1] != "server" && f[1] != "peer") {
			continue
		}
		kind := "Server"
		if f[1] == "peer" {
			kind = "Peer"
		}
		fmt.Fprintf(&b, "  %-30s%s (configured)\n", f[2], kind)
	}
	s.dev.mu.Unlock()
	return b.String()
}

func nxosShowResources(s *shell, _ []string) string {
	i := s.dev.index
	idle0 := 94.0 - float64(i%5)
	idle1 := 96.5 - float64(i%3)
	used := 5876012 + (i%1000)*1024
	var b strings.Builder
	b.WriteString("Load average:   1 minute: 0.42   5 minutes: 0.38   15 minutes: 0.35\n")
	b.WriteString("Processes   :   687 total, 1 running\n")
	fmt.Fprintf(&b, "CPU states  :   %.2f%% user,   %.2f%% kernel,   %.2f%% idle\n", 2.0, 1.5, (idle0+idle1)/2)
	fmt.Fprintf(&b, "        CPU0 states  :   %.2f%% user,   %.2f%% kernel,   %.2f%% idle\n", (100-idle0)*2/3, (100-idle0)/3, idle0)
	fmt.Fprintf(&b, "        CPU1 states  :   %.2f%% user,   %.2f%% kernel,   %.2f%% idle\n", (100-idle1)*2/3, (100-idle1)/3, idle1)
	fmt.Fprintf(&b, "Memory usage:   16409064K total,   %dK used,   %dK free\n", used, 16409064-used)
	b.WriteString("Kernel vmalloc:   0K total,   0K free\nKernel buffers:   208504K Used\nKernel cached :   5287320K Used\n\n")
	b.WriteString("Current memory status: OK\n")
	return b.String()
}

func nxosShowTemperature(s *shell, _ []string) string {
	i := s.dev.index
	var b strings.Builder
	b.WriteString("Temperature:\n--------------------------------------------------------------------\n")
	b.WriteString("Module   Sensor        MajorThresh   MinorThres   CurTemp     Status\n")
	b.WriteString("                       (Celsius)     (Celsius)    (Celsius)         \n")
	b.WriteString("--------------------------------------------------------------------\n")
	for _, r := range []struct {
		name             string
		major, minor, at int
	}{{"FRONT", 80, 70, 28 + i%5}, {"BACK", 70, 42, 25 + i%3}, {"CPU", 90, 80, 36 + i%7}} {
		fmt.Fprintf(&b, "1        %-15s %-15d %-11d %-11d %s\n", r.name, r.major, r.minor, r.at, "Ok")
	}
	return b.String()
}

// ---- BGP ----

// nxosBGPPeer is one neighbor of the NX-OS "router bgp" block.
type nxosBGPPeer struct {
	addr, asn        string
	shut, up         bool
	rcvd, sent, pfxs int
}

// nxosBGP reads the hierarchical NX-OS BGP configuration. d.mu must be held.
func (s *shell) nxosBGP() (asn, rid string, peers []nxosBGPPeer, ok bool) {
	f := s.dev.fleet
	blk, asn, rid, up := s.bgpProcess(s.nxosIfState)
	if blk == nil {
		return "", "", nil, false
	}
	for _, ch := range blk.children {
		w := strings.Fields(ch.line)
		switch {
		case len(w) == 2 && w[0] == "router-id":
			rid = w[1]
		case len(w) == 2 && w[0] == "neighbor":
			p := nxosBGPPeer{addr: w[1]}
			hasAF := false
			for _, c := range ch.children {
				cw := strings.Fields(c.line)
				switch {
				case len(cw) == 2 && cw[0] == "remote-as":
					p.asn = cw[1]
				case c.line == "shutdown":
					p.shut = true
				case c.line == "address-family ipv4 unicast":
					hasAF = true
				}
			}
			if p.asn == "" || !hasAF {
				continue
			}
			for _, n := range f.neighbors(s.dev.index) {
				if n.remoteIP == p.addr && up[n.localPort] && asnOf(n.index) == p.asn && !p.shut {
					p.up = true
					p.rcvd, p.sent, p.pfxs = 1000+n.index%500, 990+n.index%500, 1
				}
			}
			peers = append(peers, p)
		}
	}
	slices.SortFunc(peers, func(a, b nxosBGPPeer) int { return ipCompare(a.addr, b.addr) })
	return asn, rid, peers, true
}

func nxosShowBGP(s *shell, args []string) string {
	vrf, rest, ok := nxosVRFArg(args)
	if !ok || len(rest) > 0 {
		return s.invalidLast()
	}
	s.dev.mu.Lock()
	asn, rid, peers, ok := s.nxosBGP()
	s.dev.mu.Unlock()
	if !ok {
		return "% BGP process not running (feature bgp / router bgp)"
	}
	if vrf != "all" && vrf != "default" {
		return ""
	}
	upFor := uptimeSince(s.dev.fleet.opts.Now().Sub(s.dev.fleet.bootTime(s.dev.index)))
	est := 0
	for _, p := range peers {
		if p.up {
			est++
		}
	}
	var b strings.Builder
	b.WriteString("BGP summary information for VRF default, address family IPv4 Unicast\n")
	fmt.Fprintf(&b, "BGP router identifier %s, local AS number %s\n", rid, asn)
	fmt.Fprintf(&b, "BGP table version is %d, IPv4 Unicast config peers %d, capable peers %d\n", 2+est, len(peers), est)
	fmt.Fprintf(&b, "%d network entries and %d paths using %d bytes of memory\n", 1+est, 1+est, (1+est)*264)
	b.WriteString("BGP attribute entries [2/328], BGP AS path entries [1/6]\n")
	b.WriteString("BGP community entries [0/0], BGP clusterlist entries [0/0]\n\n")
	b.WriteString("Neighbor        V    AS    MsgRcvd    MsgSent   TblVer  InQ OutQ Up/Down  State/PfxRcd\n")
	for _, p := range peers {
		state, updown, rcvd, sent := "Idle", "never", 0, 0
		switch {
		case p.shut:
			state = "Shut (Admin)"
		case p.up:
			state, updown, rcvd, sent = strconv.Itoa(p.pfxs), upFor, p.rcvd, p.sent
		}
		fmt.Fprintf(&b, "%-15s 4 %5s %10d %10d %8d %4d %4d %8s %s\n", p.addr, p.asn, rcvd, sent, 2+est, 0, 0, updown, state)
	}
	return b.String()
}

// ---- ping and traceroute ----

// nxosTarget is what a ping destination is to the device.
type nxosTarget int

const (
	nxosNoRoute nxosTarget = iota // no connected subnet in the VRF
	nxosSilent                    // in a connected subnet, nobody answers
	nxosAnswers                   // a cabled neighbor, the gateway or the device itself
	nxosOwnAddr                   // one of the device's own addresses
)

// nxosReach classifies dest in vrf. d.mu must be held.
func (s *shell) nxosReach(dest, vrf string) nxosTarget {
	run := s.dev.state().running
	res := nxosNoRoute
	for _, in := range s.p.d.interfaces(run) {
		admin, up := s.nxosIfState(in)
		if in.addr == "" || !admin || !up || nxosIfVRF(run, in.name) != vrf {
			continue
		}
		switch {
		case in.addr == dest:
			return nxosOwnAddr
		case networkOf(dest, in.plen) != networkOf(in.addr, in.plen):
			continue
		case in.name == s.p.mgmtPort && dest == mgmtGateway:
			return nxosAnswers
		}
		for _, n := range s.dev.fleet.neighbors(s.dev.index) {
			if n.localPort == in.name && n.remoteIP == dest {
				return nxosAnswers
			}
		}
		res = nxosSilent
	}
	return res
}

// nxosProbeArgs parses the options of ping and traceroute.
func nxosProbeArgs(s *shell, args []string, allowed []string) (dest string, opts map[string]string, bad string) {
	opts = map[string]string{"vrf": "default", "count": "5", "packet-size": "56", "timeout": "2"}
	if len(args) == 0 || ipv4(args[0]) == nil {
		if len(args) == 0 {
			return "", nil, s.p.errIncomplete
		}
		return "", nil, s.invalidArg(args[0])
	}
	dest = args[0]
	for i := 1; i < len(args); i++ {
		w, ok := expandWord(args[i], allowed)
		if !ok || i+1 >= len(args) {
			return "", nil, s.invalidArg(args[i])
		}
		v := args[i+1]
		if w != "vrf" && w != "source" {
			n, err := strconv.Atoi(v)
			limit := map[string]int{"count": 100, "packet-size": 65468, "timeout": 60}[w]
			if err != nil || n < 1 || n > limit {
				return "", nil, s.invalidArg(v)
			}
		}
		opts[w] = v
		i++
	}
	return dest, opts, ""
}

func nxosPing(s *shell, args []string) string {
	dest, opts, bad := nxosProbeArgs(s, args, []string{"count", "packet-size", "timeout", "source", "vrf", "interval"})
	if bad != "" {
		return bad
	}
	s.dev.mu.Lock()
	known := slices.Contains(nxosVRFs(s.dev.state().running), opts["vrf"])
	t := s.nxosReach(dest, opts["vrf"])
	s.dev.mu.Unlock()
	if !known {
		return "% VRF " + opts["vrf"] + " not found"
	}
	count, _ := strconv.Atoi(opts["count"])
	size, _ := strconv.Atoi(opts["packet-size"])
	var b strings.Builder
	fmt.Fprintf(&b, "PING %s (%s): %d data bytes\n", dest, dest, size)
	if t == nxosNoRoute {
		for range count {
			b.WriteString("ping: sendto " + dest + " 64 chars, No route to host\n")
		}
		b.WriteString("connect: Network is unreachable\n")
		return b.String()
	}
	got := 0
	var rtts []float64
	for seq := range count {
		if t == nxosSilent {
			fmt.Fprintf(&b, "Request %d timed out\n", seq)
			continue
		}
		rtt := 0.041
		if t == nxosAnswers {
			rtt = 0.5 + float64((s.dev.index*7+seq*3)%10)/10
		}
		got++
		rtts = append(rtts, rtt)
		fmt.Fprintf(&b, "%d bytes from %s: icmp_seq=%d ttl=254 time=%.3f ms\n", size+8, dest, seq, rtt)
	}
	fmt.Fprintf(&b, "\n--- %s ping statistics ---\n", dest)
	fmt.Fprintf(&b, "%d packets transmitted, %d packets received, %.2f%% packet loss\n", count, got, float64(count-got)*100/float64(count))
	if got > 0 {
		lo, hi, sum := rtts[0], rtts[0], 0.0
		for _, r := range rtts {
			lo, hi, sum = min(lo, r), max(hi, r), sum+r
		}
		fmt.Fprintf(&b, "round-trip min/avg/max = %.3f/%.3f/%.3f ms\n", lo, sum/float64(got), hi)
	}
	return b.String()
}

func nxosTraceroute(s *shell, args []string) string {
	dest, opts, bad := nxosProbeArgs(s, args, []string{"source", "vrf"})
	if bad != "" {
		return bad
	}
	s.dev.mu.Lock()
	known := slices.Contains(nxosVRFs(s.dev.state().running), opts["vrf"])
	t := s.nxosReach(dest, opts["vrf"])
	s.dev.mu.Unlock()
	if !known {
		return "% VRF " + opts["vrf"] + " not found"
	}
	if t == nxosNoRoute {
		return "traceroute: connect: Network is unreachable"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "traceroute to %s (%s), 30 hops max, 40 byte packets\n", dest, dest)
	if t == nxosSilent {
		for hop := 1; hop <= 30; hop++ {
			fmt.Fprintf(&b, "%2d  * * *\n", hop)
		}
		return b.String()
	}
	base := 0.5 + float64(s.dev.index%10)/10
	fmt.Fprintf(&b, " 1  %s (%s)  %.3f ms  %.3f ms  %.3f ms\n", dest, dest, base+0.4, base+0.1, base)
	return b.String()
}

// nxosMTime formats a file time for dir.
func nxosMTime(t time.Time) string { return t.UTC().Format("Jan 02 15:04:05 2006") }

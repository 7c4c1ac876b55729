package devsim

import (
	"fmt"
	"strconv"
	"strings"
)

// Cisco IOS XR (XRv 9000-like router) platform: the exec prompt
// "RP/0/RP0/CPU0:host#" (there is no user exec and no enable), XR configuration syntax
// ("ipv4 address", "router bgp N" / "neighbor X" / "remote-as", blocks closed by "!"), and the
// two-stage configuration model: configuration mode edits a per-session target
// configuration that "commit" applies (see iosxr_config.go). Show commands print IOS XR's
// timestamp line first unless "terminal exec prompt no-timestamp" turned it off.

const (
	xrVersion      = "7.3.2"
	xrModel        = "IOS-XRv 9000"
	xrPID          = "R-IOSXRV9000-CC"
	xrPromptPrefix = "RP/0/RP0/CPU0:"
	xrMgmtPort     = "MgmtEth0/RP0/CPU0/0"
	xrTTY          = "vty0:node0_RP0_CPU0"
)

func xrDialect() *dialect {
	top := []string{"aaa", "banner", "call-home", "cdp", "clock", "control-plane", "domain", "grpc",
		"hostname", "http", "interface", "ipv4", "ipv6", "l2vpn", "line", "lldp", "logging", "mpls",
		"multicast-routing", "netconf-yang", "ntp", "radius-server", "router", "snmp-server", "ssh",
		"tacacs-server", "telnet", "username", "vrf", "xml"}
	return &dialect{
		indent:   " ",
		topWords: top,
		topOnly:  top,
		ifWords: []string{"bandwidth", "bfd", "bundle", "carrier-delay", "cdp", "dampening", "description",
			"duplex", "encapsulation", "flow", "ipv4", "ipv6", "l2transport", "lldp", "load-interval",
			"mac-address", "mtu", "negotiation", "service-policy", "shutdown", "speed", "vrf"},
		ifIPv6Words: []string{"access-group", "address", "enable", "link-local", "mtu", "nd"},
		lineWords: []string{"absolute-timeout", "access-class", "accounting", "authorization",
			"escape-character", "exec-timeout", "length", "login", "session-limit", "session-timeout",
			"timestamp", "transport", "users", "width"},
		shared: map[string][]string{},
		singles: map[string][][]string{
			"": {{"hostname"}, {"domain", "name"}, {"clock", "timezone"}},
			"interface": {{"description"}, {"ipv4", "address"}, {"shutdown"}, {"mtu"}, {"speed"}, {"duplex"},
				{"load-interval"}, {"vrf"}, {"encapsulation"}, {"bandwidth"}},
			"bgp":      {{"bgp", "router-id"}},
			"ospf":     {{"router-id"}},
			"bgp-nbr":  {{"remote-as"}, {"description"}, {"update-source"}},
			"line":     {{"exec-timeout"}, {"transport", "input"}, {"session-timeout"}},
			"ntp":      {{"source"}},
			"vrf":      {{"description"}},
			"username": {{"secret"}, {"password"}},
		},
		opener:   xrOpener,
		ifNumber: xrRPNumber,
	}
}

// xrRPNumber accepts route-processor interface numbers such as "0/RP0/CPU0/0".
func xrRPNumber(n string) bool {
	parts := strings.Split(n, "/")
	if len(parts) != 4 || len(n) > 24 {
		return false
	}
	digits := func(s string) bool {
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	}
	rp, okRP := strings.CutPrefix(parts[1], "RP")
	if !okRP {
		rp, okRP = strings.CutPrefix(parts[1], "RSP")
	}
	cpu, okCPU := strings.CutPrefix(parts[2], "CPU")
	return digits(parts[0]) && okRP && digits(rp) && okCPU && digits(cpu) && digits(parts[3])
}

// xrOpener returns the mode a line opens. Word counts are exact so that one-line hierarchical
// commands ("ntp server X", "router bgp 1 neighbor X remote-as 2") can be split at the
// longest block prefix (see xrSplit).
func xrOpener(kind string, b []string) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	switch kind {
	case "":
		switch b[0] {
		case "interface":
			if n == 2 {
				return "interface"
			}
		case "router":
			switch {
			case n == 2 && b[1] == "static":
				return "static"
			case n == 3 && (b[1] == "bgp" || b[1] == "ospf" || b[1] == "isis"):
				return b[1]
			}
		case "ntp", "lldp", "control-plane", "call-home", "grpc":
			if n == 1 {
				return b[0]
			}
		case "line":
			if (n == 2 && (b[1] == "default" || b[1] == "console")) || (n == 3 && b[1] == "template") {
				return "line"
			}
		case "vrf", "username":
			if n == 2 {
				return b[0]
			}
		case "ipv4", "ipv6":
			if n == 3 && b[1] == "access-list" {
				return b[0] + "-acl"
			}
		}
	case "bgp", "bgp-vrf":
		switch {
		case b[0] == "neighbor" && n == 2:
			return "bgp-nbr"
		case b[0] == "address-family" && n == 3:
			return "bgp-af"
		case kind == "bgp" && b[0] == "vrf" && n == 2:
			return "bgp-vrf"
		}
	case "bgp-nbr":
		if b[0] == "address-family" && n == 3 {
			return "bgp-nbr-af"
		}
	case "static", "static-vrf":
		switch {
		case b[0] == "address-family" && n == 3:
			return "static-afi"
		case kind == "static" && b[0] == "vrf" && n == 2:
			return "static-vrf"
		}
	case "ospf":
		if b[0] == "area" && n == 2 {
			return "ospf-ar"
		}
	case "ospf-ar":
		if b[0] == "interface" && n == 2 {
			return "ospf-ar-if"
		}
	case "isis":
		switch {
		case b[0] == "interface" && n == 2:
			return "isis-if"
		case b[0] == "address-family" && n == 3:
			return "isis-af"
		}
	case "vrf":
		if b[0] == "address-family" && n == 3 {
			return "vrf-af"
		}
	}
	return ""
}

func xrConfigPrompt(s *shell) string {
	if len(s.path) == 0 {
		return "config"
	}
	switch kind := s.p.d.kindAt(s.path); kind {
	case "interface":
		if strings.Contains(s.path[len(s.path)-1], ".") {
			return "config-subif"
		}
		return "config-if"
	case "username":
		return "config-un"
	case "generic":
		return "config"
	default:
		return "config-" + kind
	}
}

// xrShell is the IOS XR state of one CLI session.
type xrShell struct {
	noStamp bool      // "terminal exec prompt no-timestamp"
	cfg     *xrTarget // open configuration session, nil outside configuration mode
	failed  string    // "show configuration failed" report of the last failed commit
}

// xrs returns the shell's IOS XR state, allocating it on first use.
func (s *shell) xrs() *xrShell {
	if s.xr == nil {
		s.xr = &xrShell{}
	}
	return s.xr
}

// xrStamped wraps a show command so that its output starts with the session's timestamp line.
func xrStamped(run handler) handler {
	return func(s *shell, args []string) string {
		xrSync(s)
		out := run(s, args)
		if t := strings.TrimLeft(out, " "); strings.HasPrefix(t, "^") || out == s.p.errIncomplete {
			return out // a parse error: IOS XR prints no timestamp
		}
		return xrStamp(s) + out
	}
}

// xrStamp is the timestamp line IOS XR prints before show output.
func xrStamp(s *shell) string {
	if s.xrs().noStamp {
		return ""
	}
	return s.dev.fleet.opts.Now().UTC().Format("Mon Jan _2 15:04:05.000 MST") + "\n"
}

// ---- interfaces ----

// xrIface is what the show commands need to know about one interface.
type xrIface struct {
	ifaceInfo
	secondaries []string // "A.B.C.D/N"
	hasBW       bool
}

// xrInterfaces extracts the interfaces of a configuration ("ipv4 address" lines). d.mu held.
func xrInterfaces(d *dialect, c *config) []xrIface {
	base := d.interfaces(c) // name, description, shutdown, mtu, in platform order
	out := make([]xrIface, 0, len(base))
	for _, in := range base {
		x := xrIface{ifaceInfo: in}
		t, _, _ := d.ifTypeOf(in.name)
		x.hasBW = t.mac
		if t.mac && in.mtu == 1500 {
			x.mtu = 1514
		}
		if blk, ok := c.block("interface " + in.name); ok {
			for _, ch := range blk.children {
				f := strings.Fields(ch.line)
				if len(f) < 3 || f[0] != "ipv4" || f[1] != "address" {
					continue
				}
				addr, plen := parseAddr(f[2:])
				if addr == "" || ipv4(addr) == nil {
					continue
				}
				if f[len(f)-1] == "secondary" {
					x.secondaries = append(x.secondaries, addr+"/"+strconv.Itoa(plen))
				} else {
					x.addr, x.plen = addr, plen
				}
			}
		}
		out = append(out, x)
	}
	return out
}

// xrPort numbers an interface for its MAC address.
func xrPort(name string) int {
	alpha, num := splitIf(name)
	last := num
	if i := strings.LastIndexByte(num, '/'); i >= 0 {
		last = num[i+1:]
	}
	last, _, _ = strings.Cut(last, ".")
	n, _ := strconv.Atoi(last)
	switch alpha {
	case "MgmtEth":
		return 0x30 + n
	case "TenGigE":
		return 0x40 + n
	case "HundredGigE":
		return 0x80 + n
	case "Bundle-Ether":
		return 0xc0 + n
	case "BVI":
		return 0xe0 + n
	}
	return 1 + n
}

// xrSpeed is an interface's bandwidth in kbit/s.
func xrSpeed(name string) int {
	switch alpha, _ := splitIf(name); alpha {
	case "TenGigE":
		return 10000000
	case "HundredGigE":
		return 100000000
	case "GigabitEthernet", "MgmtEth":
		return 1000000
	}
	return 0
}

func (s *shell) xrIfaces() []xrIface {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	return xrInterfaces(s.p.d, s.dev.state().running)
}

// xrSelect filters interfaces by a name argument ("" keeps all); ok false for a bad name.
func (s *shell) xrSelect(ifs []xrIface, args []string) ([]xrIface, bool) {
	if len(args) == 0 {
		return ifs, true
	}
	name, ok := s.p.d.canonIf(strings.Join(args, ""))
	if !ok {
		return nil, false
	}
	for _, in := range ifs {
		if in.name == name {
			return []xrIface{in}, true
		}
	}
	return nil, false
}

func xrShowInterfaces(s *shell, args []string) string {
	ifs := s.xrIfaces()
	if len(args) == 1 {
		if w, ok := expandWord(args[0], []string{"brief", "description"}); ok {
			if w == "brief" {
				return xrIfBrief(s, ifs)
			}
			return xrIfDescription(s, ifs)
		}
	}
	sel, ok := s.xrSelect(ifs, args)
	if !ok {
		return s.invalidArg(args[0])
	}
	f := s.dev.fleet
	up := f.opts.Now().Sub(f.bootTime(s.dev.index))
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	for _, in := range sel {
		admin, oper := s.ifState(in.ifaceInfo)
		switch {
		case !admin:
			w("%s is administratively down, line protocol is administratively down ", in.name)
		case !oper:
			w("%s is down, line protocol is down ", in.name)
		default:
			w("%s is up, line protocol is up ", in.name)
		}
		w("  Interface state transitions: %d", map[bool]int{true: 1, false: 0}[admin && oper])
		if in.hasBW {
			mac := f.macOf(s.dev.index, xrPort(in.name))
			hw := "GigabitEthernet"
			if strings.HasPrefix(in.name, "MgmtEth") {
				hw = "Management Ethernet"
			} else if strings.HasPrefix(in.name, "Bundle-Ether") {
				hw = "Aggregated Ethernet interface(s)"
			}
			w("  Hardware is %s, address is %s (bia %s)", hw, mac, mac)
		} else {
			w("  Hardware is Loopback interface(s)")
		}
		if in.description != "" {
			w("  Description: %s", in.description)
		}
		if in.addr != "" {
			w("  Internet address is %s/%d", in.addr, in.plen)
		} else {
			w("  Internet address is Unknown")
		}
		bw := xrSpeed(in.name)
		w("  MTU %d bytes, BW %d Kbit (Max: %d Kbit)", in.mtu, bw, bw)
		w("     reliability 255/255, txload 0/255, rxload 0/255")
		if !in.hasBW {
			w("  Encapsulation Loopback,  loopback not set,")
			w("  Last link flapped %s", uptimeSince(up))
			w("  Last input Unknown, output Unknown")
			w("  Last clearing of \"show interface\" counters Unknown")
			w("  Input/output data rate is disabled.")
			b.WriteString("\n")
			continue
		}
		w("  Encapsulation ARPA,")
		w("  Full-duplex, %dMb/s, link type is force-up", bw/1000)
		w("  output flow control is off, input flow control is off")
		w("  Carrier delay (up) is 10 msec")
		w("  loopback not set,")
		if admin && oper {
			w("  Last link flapped %s", uptimeSince(up))
		} else {
			w("  Last link flapped never")
		}
		w("  ARP type ARPA, ARP timeout 04:00:00")
		w("  Last input 00:00:00, output 00:00:00")
		w("  Last clearing of \"show interface\" counters never")
		ip, ib, op, ob := s.liveCounters(in.name, admin && oper)
		w("  5 minute input rate %d bits/sec, %d packets/sec", ib/100000, ip/100000)
		w("  5 minute output rate %d bits/sec, %d packets/sec", ob/100000, op/100000)
		w("     %d packets input, %d bytes, 0 total input drops", ip, ib)
		w("     0 drops for unrecognized upper-level protocol")
		w("     Received 0 broadcast packets, 0 multicast packets")
		w("              0 runts, 0 giants, 0 throttles, 0 parity")
		w("     0 input errors, 0 CRC, 0 frame, 0 overrun, 0 ignored, 0 abort")
		w("     %d packets output, %d bytes, 0 total output drops", op, ob)
		w("     Output 0 broadcast packets, 0 multicast packets")
		w("     0 output errors, 0 underruns, 0 applique, 0 resets")
		w("     0 output buffer failures, 0 output buffers swapped out")
		w("     0 carrier transitions")
		b.WriteString("\n")
	}
	return b.String()
}

// xrState returns IOS XR's (interface state, line protocol state) words.
func xrStateWords(admin, oper bool) (string, string) {
	switch {
	case !admin:
		return "admin-down", "admin-down"
	case !oper:
		return "down", "down"
	}
	return "up", "up"
}

func xrIfBrief(s *shell, ifs []xrIface) string {
	var b strings.Builder
	b.WriteString("\n               Intf       Intf        LineP              Encap  MTU        BW\n")
	b.WriteString("               Name       State       State               Type (byte)    (Kbps)\n")
	b.WriteString(strings.Repeat("-", 80) + "\n")
	for _, in := range ifs {
		admin, oper := s.ifState(in.ifaceInfo)
		st, lp := xrStateWords(admin, oper)
		encap := "ARPA"
		if !in.hasBW {
			encap = "Loopback"
		}
		fmt.Fprintf(&b, "%19s %11s %11s %18s %5d %10d\n", s.p.d.shortIf(in.name), st, lp, encap, in.mtu, xrSpeed(in.name))
	}
	b.WriteString("\n")
	return b.String()
}

func xrIfDescription(s *shell, ifs []xrIface) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-30s %-14s %-10s %s\n", "Interface", "Status", "Protocol", "Description")
	b.WriteString(strings.Repeat("-", 80) + "\n")
	for _, in := range ifs {
		admin, oper := s.ifState(in.ifaceInfo)
		st, lp := xrStateWords(admin, oper)
		fmt.Fprintf(&b, "%-30s %-14s %-10s %s\n", s.p.d.shortIf(in.name), st, lp, in.description)
	}
	return b.String()
}

// xrIPStatus returns the "show ipv4 interface" status words.
func xrIPStatus(admin, oper bool) (string, string) {
	switch {
	case !admin:
		return "Shutdown", "Down"
	case !oper:
		return "Down", "Down"
	}
	return "Up", "Up"
}

func xrShowIPv4Interface(s *shell, args []string) string {
	ifs := s.xrIfaces()
	if len(args) == 1 {
		if w, ok := expandWord(args[0], []string{"brief"}); ok && w == "brief" {
			var b strings.Builder
			b.WriteString("\n")
			fmt.Fprintf(&b, "%-30s %-15s %-15s %-8s %s\n", "Interface", "IP-Address", "Status", "Protocol", "Vrf-Name")
			for _, in := range ifs {
				admin, oper := s.ifState(in.ifaceInfo)
				st, pr := xrIPStatus(admin, oper)
				addr := in.addr
				if addr == "" {
					addr = "unassigned"
				}
				fmt.Fprintf(&b, "%-30s %-15s %-15s %-8s %s\n", in.name, addr, st, pr, "default")
			}
			return b.String()
		}
	}
	sel, ok := s.xrSelect(ifs, args)
	if !ok {
		return s.invalidArg(args[0])
	}
	var b strings.Builder
	for _, in := range sel {
		admin, oper := s.ifState(in.ifaceInfo)
		st, pr := xrIPStatus(admin, oper)
		fmt.Fprintf(&b, "%s is %s, ipv4 protocol is %s \n", in.name, st, pr)
		b.WriteString("  Vrf is default (vrfid 0x60000000)\n")
		if in.addr == "" {
			b.WriteString("  Internet protocol processing disabled\n")
			continue
		}
		fmt.Fprintf(&b, "  Internet address is %s/%d\n", in.addr, in.plen)
		for _, sec := range in.secondaries {
			fmt.Fprintf(&b, "  Secondary address %s\n", sec)
		}
		fmt.Fprintf(&b, "  MTU is %d (%d is available to IP)\n", in.mtu, in.mtu-14*btoi(in.hasBW))
		b.WriteString("  Helper address is not set\n  Directed broadcast forwarding is disabled\n")
		b.WriteString("  Outgoing access list is not set\n  Inbound  common access list is not set, access list is not set\n")
		b.WriteString("  Proxy ARP is disabled\n  ICMP redirects are never sent\n  ICMP unreachables are always sent\n")
		b.WriteString("  ICMP mask replies are never sent\n  Table Id is 0xe0000000\n")
	}
	return b.String()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ---- ARP, LLDP, NTP, BGP ----

// xrARPTable derives the ARP table from interfaces and neighbors.
func (s *shell) xrARPTable() []arpEntry {
	f := s.dev.fleet
	var out []arpEntry
	for _, in := range s.xrIfaces() {
		admin, up := s.ifState(in.ifaceInfo)
		if !admin || !up || in.addr == "" || !in.hasBW {
			continue
		}
		out = append(out, arpEntry{ip: in.addr, mac: f.macOf(s.dev.index, xrPort(in.name)), iface: in.name, own: true})
		if in.name == xrMgmtPort && networkOf(mgmtGateway, in.plen) == networkOf(in.addr, in.plen) {
			out = append(out, arpEntry{ip: mgmtGateway, mac: f.macOf(0xffff, 0xfe), iface: in.name, age: 70})
		}
		for _, n := range f.neighbors(s.dev.index) {
			if n.localPort == in.name && networkOf(n.remoteIP, in.plen) == networkOf(in.addr, in.plen) && n.remoteIP != in.addr {
				out = append(out, arpEntry{ip: n.remoteIP, mac: f.macOf(n.index, xrPort(n.remotePort)), iface: in.name, age: 42 + n.index%60})
			}
		}
	}
	sortARP(out)
	return out
}

func sortARP(out []arpEntry) {
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && ipCompare(out[j-1].ip, out[j].ip) > 0; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
}

func xrShowARP(s *shell, args []string) string {
	if len(args) > 0 {
		if w, ok := expandWord(args[0], []string{"vrf"}); !ok || w != "vrf" || len(args) != 2 {
			return s.invalidArg(args[0])
		}
		if args[1] != "default" {
			return ""
		}
	}
	var b strings.Builder
	sep := strings.Repeat("-", 79) + "\n"
	b.WriteString("\n" + sep + "0/0/CPU0\n" + sep)
	fmt.Fprintf(&b, "%-15s %-10s %-15s %-10s %-5s %s\n", "Address", "Age", "Hardware Addr", "State", "Type", "Interface")
	for _, e := range s.xrARPTable() {
		age, state := "-", "Interface"
		if !e.own {
			age = fmt.Sprintf("%02d:%02d:%02d", e.age/3600, e.age/60%60, e.age%60)
			state = "Dynamic"
		}
		fmt.Fprintf(&b, "%-15s %-10s %-15s %-10s %-5s %s\n", e.ip, age, e.mac, state, "ARPA", e.iface)
	}
	return b.String()
}

const xrLLDPLegend = "Capability codes:\n        (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n" +
	"        (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\n\n"

func xrShowLLDP(s *shell, args []string) string {
	sel, detail, bad, ok := s.lldpSelect(args, "detail", "interface")
	if !ok {
		return s.invalidArg(bad)
	}
	f := s.dev.fleet
	var b strings.Builder
	b.WriteString(xrLLDPLegend)
	if !detail {
		fmt.Fprintf(&b, "%-16s%-25s%-11s%-15s%s\n", "Device ID", "Local Intf", "Hold-time", "Capability", "Port ID")
		for _, e := range sel {
			id := e.system
			if len(id) > 15 {
				id = id[:15]
			}
			fmt.Fprintf(&b, "%-16s%-25s%-11d%-15s%s\n", id, e.local, 120, "R", e.remote)
		}
		fmt.Fprintf(&b, "\nTotal entries displayed: %d\n\n", len(sel))
		return b.String()
	}
	for _, e := range sel {
		b.WriteString("------------------------------------------------\n")
		fmt.Fprintf(&b, "Local Interface: %s\nChassis id: %s\nPort id: %s\nPort Description: %s\nSystem Name: %s\n\n",
			e.local, e.chassis, e.remote, e.remoteDescr, e.system)
		fmt.Fprintf(&b, "System Description: \n%s, %s\n\n", xrVersion, xrModel)
		b.WriteString("Time remaining: 95 seconds\nHold Time: 120 seconds\nSystem Capabilities: R\nEnabled Capabilities: R\n")
		fmt.Fprintf(&b, "Management Addresses:\n  IPv4 address: %s\n\n", e.mgmt)
		fmt.Fprintf(&b, "Peer MAC Address: %s\n\n", colonMAC(f.macOf(e.remoteIndex, xrPort(e.remote))))
	}
	fmt.Fprintf(&b, "\nTotal entries displayed: %d\n\n", len(sel))
	return b.String()
}

// xrNTPPeers lists the servers of the "ntp" block. d.mu must be held.
func (s *shell) xrNTPPeers() []ntpPeer {
	var out []ntpPeer
	blk, ok := s.dev.state().running.block("ntp")
	if !ok {
		return nil
	}
	for _, ch := range blk.children {
		f := strings.Fields(ch.line)
		if len(f) >= 2 && f[0] == "server" {
			addr := f[1]
			if addr == "vrf" && len(f) >= 4 {
				addr = f[3]
			}
			out = append(out, ntpPeer{addr: addr, synced: addr == mgmtGateway})
		}
	}
	return out
}

func xrShowNTP(s *shell, args []string) string {
	if len(args) > 0 && !strings.EqualFold(args[0], "detail") {
		return s.invalidArg(args[0])
	}
	s.dev.mu.Lock()
	peers := s.xrNTPPeers()
	s.dev.mu.Unlock()
	var b strings.Builder
	b.WriteString("\n      address         ref clock     st  when  poll reach  delay  offset    disp\n")
	for _, p := range peers {
		if p.synced {
			fmt.Fprintf(&b, "*~%-15s %-15s %3d %5d %5d %5d %6.2f %7.3f %7.3f\n", p.addr, ".GPS.", 1, 33, 64, 377, 0.51, -0.021, 1.938)
		} else {
			fmt.Fprintf(&b, " ~%-15s %-15s %3d %5s %5d %5d %6.2f %7.3f %7.3f\n", p.addr, ".INIT.", 16, "-", 64, 0, 0.0, 0.0, 15937.0)
		}
	}
	b.WriteString(" * sys.peer, # selected, + candidate, - outlayer, x falseticker, ~ configured\n")
	return b.String()
}

// xrBGPState reads the BGP process of the running configuration. d.mu must be held.
func (s *shell) xrBGPState() (asn, rid string, peers []bgpPeer, ok bool) {
	f := s.dev.fleet
	blk, asn, rid, up := s.bgpProcess(s.ifState)
	if blk == nil {
		return "", "", nil, false
	}
	for _, ch := range blk.children {
		w := strings.Fields(ch.line)
		switch {
		case len(w) == 3 && w[0] == "bgp" && w[1] == "router-id":
			rid = w[2]
		case len(w) == 2 && w[0] == "neighbor":
			p := bgpPeer{addr: w[1]}
			shut := false
			for _, nc := range ch.children {
				nw := strings.Fields(nc.line)
				if len(nw) == 2 && nw[0] == "remote-as" {
					p.asn = nw[1]
				}
				shut = shut || nc.line == "shutdown"
			}
			for _, n := range f.neighbors(s.dev.index) {
				if !shut && n.remoteIP == p.addr && up[n.localPort] && asnOf(n.index) == p.asn {
					p.established = true
					p.rcvd, p.sent = 1000+n.index%500, 990+n.index%500
				}
			}
			peers = append(peers, p)
		}
	}
	return asn, rid, peers, true
}

func xrShowBGP(s *shell, _ []string) string {
	s.dev.mu.Lock()
	asn, rid, peers, ok := s.xrBGPState()
	s.dev.mu.Unlock()
	if !ok {
		return "% BGP instance 'default' not active\n"
	}
	up := uptimeSince(s.dev.fleet.opts.Now().Sub(s.dev.fleet.bootTime(s.dev.index)))
	est := 0
	for _, p := range peers {
		if p.established {
			est++
		}
	}
	ver := 2 + est
	var b strings.Builder
	fmt.Fprintf(&b, "BGP router identifier %s, local AS number %s\n", rid, asn)
	b.WriteString("BGP generic scan interval 60 secs\nNon-stop routing is enabled\nBGP table state: Active\n")
	fmt.Fprintf(&b, "Table ID: 0xe0000000   RD version: %d\nBGP main routing table version %d\n", ver, ver)
	b.WriteString("BGP NSR Initial initsync version 2 (Reached)\nBGP NSR/ISSU Sync-Group versions 0/0\n")
	b.WriteString("BGP scan interval 60 secs\n\nBGP is operating in STANDALONE mode.\n\n\n")
	b.WriteString("Process       RcvTblVer   bRIB/RIB   LabelVer  ImportVer  SendTblVer  StandbyVer\n")
	fmt.Fprintf(&b, "Speaker       %9d  %9d  %9d  %9d   %9d   %9d\n\n", ver, ver, ver, ver, ver, 0)
	b.WriteString("Neighbor        Spk    AS MsgRcvd MsgSent   TblVer  InQ OutQ  Up/Down  St/PfxRcd\n")
	for _, p := range peers {
		state, updown := "Idle", "00:00:00"
		if p.established {
			state, updown = "1", up
		}
		fmt.Fprintf(&b, "%-15s %3d %5s %7d %7d %8d %4d %4d %8s %10s\n", p.addr, 0, p.asn, p.rcvd, p.sent, ver, 0, 0, updown, state)
	}
	return b.String()
}

// ---- version, inventory, clock ----

func xrShowVersion(s *shell, _ []string) string {
	f := s.dev.fleet
	up := f.opts.Now().Sub(f.bootTime(s.dev.index))
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("Cisco IOS XR Software, Version %s", xrVersion)
	w("Copyright (c) 2013-2021 by Cisco Systems, Inc.")
	w("")
	w("Build Information:")
	w(" Built By     : devsim")
	w(" Built On     : Wed Oct 13 20:00:27 UTC 2021")
	w(" Built Host   : devsim-build")
	w(" Workspace    : /builds/%s/xrv9k/ws", xrVersion)
	w(" Version      : %s", xrVersion)
	w(" Location     : /opt/cisco/XR/packages/")
	w(" Label        : %s", xrVersion)
	w("")
	w("cisco %s () processor", xrModel)
	w("System uptime is %s", uptimeWords(up, " ", ""))
	return b.String()
}

func xrSerial(i int) string { return fmt.Sprintf("XRV9%07X", i+1) }

func xrShowInventory(s *shell, args []string) string {
	if len(args) > 0 {
		return s.invalidArg(args[0])
	}
	sn := xrSerial(s.dev.index)
	var b strings.Builder
	fmt.Fprintf(&b, "NAME: \"0/0\", DESCR: \"Cisco IOS-XRv 9000 Centralized Line Card\"\nPID: R-IOSXRV9000-LC-C , VID: V01, SN: %s1\n\n", sn)
	fmt.Fprintf(&b, "NAME: \"0/RP0\", DESCR: \"Cisco IOS-XRv 9000 Centralized Virtual Router\"\nPID: R-IOSXRV9000-RP-C , VID: V01, SN: %s2\n\n", sn)
	fmt.Fprintf(&b, "NAME: \"Rack 0\", DESCR: \"Cisco IOS-XRv 9000 Centralized Virtual Router\"\nPID: %s   , VID: V01, SN: %s\n\n", xrPID, sn)
	return b.String()
}

func xrShowClock(s *shell, _ []string) string {
	return s.dev.fleet.opts.Now().UTC().Format("15:04:05.000 MST Mon Jan 2 2006") + "\n"
}

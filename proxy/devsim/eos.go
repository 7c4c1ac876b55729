package devsim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Arista EOS (DCS-7050TX-like switch) platform.

const (
	eosVersion = "4.27.3F"
	eosModel   = "DCS-7050TX-64"
)

func eosDialect() *dialect {
	top := []string{"aaa", "alias", "banner", "boot", "class-map", "clock", "daemon", "dns", "enable",
		"errdisable", "event-handler", "hardware", "hostname", "interface", "ip", "ipv6", "lldp",
		"load-interval", "logging", "mac", "management", "mlag", "monitor", "ntp", "peer-filter", "platform",
		"policy-map", "prompt", "queue-monitor", "radius-server", "route-map", "router", "service", "sflow",
		"snmp-server", "spanning-tree", "system", "tacacs-server", "transceiver", "username", "vlan", "vrf"}
	return &dialect{
		indent:   "   ",
		topWords: top,
		topOnly:  top,
		ifWords: []string{"bfd", "channel-group", "description", "encapsulation", "error-correction",
			"flowcontrol", "ip", "ipv6", "isis", "lacp", "link-debounce", "lldp", "load-interval", "logging",
			"mac-address", "mlag", "mtu", "ptp", "qos", "service-policy", "sflow", "shutdown", "snmp",
			"spanning-tree", "speed", "storm-control", "switchport", "vrf", "vrrp"},
		ifIPWords: []string{"access-group", "address", "attached-host", "dhcp", "helper-address", "igmp",
			"local-proxy-arp", "ospf", "pim", "proxy-arp", "verify", "virtual", "virtual-router"},
		ifIPv6Words: []string{"access-group", "address", "dhcp", "enable", "nd", "ospf"},
		shared:      map[string][]string{},
		singles: map[string][][]string{
			"": {{"hostname"}, {"dns", "domain"}, {"ip", "domain-name"}, {"spanning-tree", "mode"},
				{"clock", "timezone"}, {"enable", "secret"}, {"enable", "password"}, {"ntp", "source"}},
			"interface": {{"description"}, {"ip", "address"}, {"speed"}, {"mtu"}, {"switchport", "mode"},
				{"switchport", "access", "vlan"}, {"switchport", "trunk", "allowed", "vlan"},
				{"switchport", "trunk", "native", "vlan"}, {"channel-group"}, {"load-interval"}, {"vrf"}},
			"router": {{"router-id"}, {"maximum-paths"}, {"neighbor", "*", "remote-as"},
				{"neighbor", "*", "description"}, {"neighbor", "*", "update-source"}},
			"vlan": {{"name"}},
		},
		negLines: map[string][]negLine{
			"":          {{text: "ip routing", positiveShown: true}},
			"interface": {{text: "switchport"}},
			"mgmt":      {{text: "shutdown", positiveShown: true}},
		},
		switchports: true,
		opener:      eosOpener,
	}
}

func eosOpener(kind string, b []string) string {
	if len(b) == 0 {
		return ""
	}
	switch kind {
	case "":
		switch b[0] {
		case "interface", "router", "route-map", "class-map", "policy-map":
			if len(b) >= 2 {
				return b[0]
			}
		case "vlan":
			if len(b) == 2 && b[1] != "" && b[1][0] >= '0' && b[1][0] <= '9' {
				return "vlan"
			}
		case "ip", "ipv6", "mac":
			if len(b) >= 3 && b[1] == "access-list" {
				return "acl"
			}
		case "vrf":
			if len(b) == 3 && b[1] == "instance" {
				return "vrf"
			}
		case "management":
			if len(b) >= 2 {
				return "mgmt"
			}
		case "daemon", "event-handler":
			if len(b) == 2 {
				return b[0]
			}
		case "mlag":
			if len(b) == 2 && b[1] == "configuration" {
				return "mlag"
			}
		case "spanning-tree":
			if len(b) == 3 && b[1] == "mst" && b[2] == "configuration" {
				return "mst"
			}
		}
	case "router", "router-vrf":
		if b[0] == "address-family" {
			return "router-af"
		}
		if kind == "router" && b[0] == "vrf" && len(b) == 2 {
			return "router-vrf"
		}
	case "mgmt":
		if b[0] == "vrf" && len(b) == 2 {
			return "mgmt-vrf"
		}
	case "policy-map":
		if b[0] == "class" {
			return "pmap-c"
		}
	}
	return ""
}

func eosConfigPrompt(s *shell) string {
	base := "config"
	if s.sess != "" {
		base = "config-s-" + s.sess[:min(6, len(s.sess))]
	}
	if len(s.path) == 0 {
		return base
	}
	last := strings.Fields(s.path[len(s.path)-1])
	arg := func(i int) string {
		if i < len(last) {
			return last[i]
		}
		return ""
	}
	var suffix string
	switch kind := s.p.d.kindAt(s.path); kind {
	case "interface":
		suffix = "if-" + s.p.d.shortIf(arg(1))
	case "router":
		suffix = "router-" + arg(1)
	case "router-af":
		suffix = "router-bgp-af"
	case "router-vrf":
		suffix = "router-bgp-vrf-" + arg(1)
	case "vlan":
		suffix = "vlan-" + arg(1)
	case "acl":
		suffix = "acl-" + arg(2)
	case "route-map", "daemon":
		suffix = kind + "-" + arg(1)
	case "vrf":
		suffix = "vrf-" + arg(2)
	case "mgmt":
		if arg(1) == "api" {
			suffix = "mgmt-api-http-cmds"
		} else {
			suffix = "mgmt-" + arg(1)
		}
	case "mgmt-vrf":
		suffix = "mgmt-api-http-cmds-vrf-" + arg(1)
	case "generic":
		return base
	default:
		suffix = kind
	}
	return base + "-" + suffix
}

// eosConfigSpecial handles session commands typed in configuration mode.
func eosConfigSpecial(s *shell, toks []tok) (string, bool) {
	if s.sess == "" || len(toks) == 0 {
		return "", false
	}
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = strings.ToLower(t.text)
	}
	switch {
	case len(words) == 1 && words[0] == "commit":
		return eosCommit(s, s.sess), true
	case len(words) == 1 && words[0] == "abort":
		s.dev.mu.Lock()
		s.dev.state().removeSession(s.sess)
		s.dev.mu.Unlock()
		s.leaveConfig()
		return "", true
	case len(words) == 2 && words[0] == "rollback" && words[1] == "clean-config":
		s.dev.mu.Lock()
		if _, ok := s.dev.state().sessions[s.sess]; ok {
			s.dev.state().sessions[s.sess] = &config{}
		}
		s.dev.mu.Unlock()
		s.path = nil
		return "", true
	}
	return "", false
}

// eosCommit replaces the running configuration with session name and leaves configuration mode.
func eosCommit(s *shell, name string) string {
	s.dev.mu.Lock()
	st := s.dev.state()
	cand, ok := st.sessions[name]
	if !ok {
		s.dev.mu.Unlock()
		return "% Cannot commit: session " + name + " does not exist"
	}
	c, _ := s.p.d.parseConfig(s.p.d.renderBody(cand), st.running)
	st.running = c
	st.removeSession(name)
	s.dev.touch(s.user)
	s.dev.mu.Unlock()
	if s.sess == name {
		s.leaveConfig()
	}
	return ""
}

func eosConfigureSession(s *shell, args []string) string {
	s.dev.mu.Lock()
	st := s.dev.state()
	var name string
	if len(args) == 0 {
		st.sessSeq++
		name = "session" + strconv.Itoa(int(s.dev.fleet.start.Unix()%100000)) + strconv.Itoa(st.sessSeq)
	} else {
		name = args[0]
	}
	if len(name) > 64 || strings.ContainsAny(name, "()#") {
		s.dev.mu.Unlock()
		return s.invalidArg(args[0])
	}
	_, exists := st.sessions[name]
	if len(args) >= 2 {
		s.dev.mu.Unlock()
		if len(args) > 2 {
			return s.invalidArg(args[2])
		}
		switch w, _ := expandWord(args[1], []string{"commit", "abort"}); w {
		case "commit":
			return eosCommit(s, name)
		case "abort":
			s.dev.mu.Lock()
			st.removeSession(name)
			s.dev.mu.Unlock()
			return ""
		}
		return s.invalidArg(args[1])
	}
	if !exists {
		if len(st.sessions) >= maxEOSSessions {
			s.dev.mu.Unlock()
			return "% Maximum number of pending sessions has been reached. Please commit or abort previous sessions before creating a new one"
		}
		st.sessions[name] = st.running.clone()
		st.sessOrder = append(st.sessOrder, name)
	}
	s.dev.mu.Unlock()
	s.mode = modeConfig
	s.path = nil
	s.sess = name
	return ""
}

func eosConfigureReplace(s *shell, args []string) string {
	k, name := s.p.parseLoc(args[0])
	if k == locBad || k == locNull {
		return s.invalidArg(args[0])
	}
	ignore := false
	for _, a := range args[1:] {
		if w, ok := expandWord(a, []string{"ignore-errors"}); ok && w != "" {
			ignore = true
			continue
		}
		return s.invalidArg(a)
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	text, ok := s.locText(k, name)
	if !ok {
		return s.p.errNoFile(args[0])
	}
	c, errs := s.p.d.parseConfig(text, st.running)
	if len(errs) > 0 && !ignore {
		var b strings.Builder
		for _, e := range errs {
			b.WriteString("% Invalid input (at line: " + e + ")\n")
		}
		b.WriteString("% Error: configuration replace aborted, running-config unchanged")
		return b.String()
	}
	st.running = c
	s.dev.touch(s.user)
	return ""
}

// sessionDiff renders the unified diff between the running config and a session.
func (p *platform) sessionDiff(running, cand *config, name string) string {
	ud := difflib.UnifiedDiff{
		A:        difflib.SplitLines(p.d.renderBody(running)),
		B:        difflib.SplitLines(p.d.renderBody(cand)),
		FromFile: "system:/running-config",
		ToFile:   "session:/" + name + "-session-config",
		Context:  3,
	}
	text, err := difflib.GetUnifiedDiffString(ud)
	if err != nil {
		return ""
	}
	return text
}

func eosShowSessionConfig(s *shell, args []string) string {
	name := s.sess
	diffs := false
	for i := 0; i < len(args); i++ {
		w, _ := expandWord(args[i], []string{"named", "diffs"})
		switch {
		case w == "named" && i+1 < len(args):
			name = args[i+1]
			i++
		case w == "diffs":
			diffs = true
		default:
			return s.invalidArg(args[i])
		}
	}
	if name == "" {
		return "% Not currently in a configuration session"
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	st := s.dev.state()
	cand, ok := st.sessions[name]
	if !ok {
		return "% Session " + name + " does not exist"
	}
	if diffs {
		return s.p.sessionDiff(st.running, cand, name)
	}
	return s.p.configFile(s.dev, cand, st.lastChange)
}

func eosShowSessions(s *shell, _ []string) string {
	s.dev.mu.Lock()
	names := append([]string(nil), s.dev.state().sessOrder...)
	s.dev.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "Maximum number of completed sessions: 1\nMaximum number of pending sessions: %d\n\n", maxEOSSessions)
	fmt.Fprintf(&b, "  %-22s %-13s %-10s %s\n", "Name", "State", "User", "Terminal")
	fmt.Fprintf(&b, "  %-22s %-13s %-10s %s\n", strings.Repeat("-", 22), strings.Repeat("-", 13), strings.Repeat("-", 10), "--------")
	for _, n := range names {
		mark := " "
		if n == s.sess {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %-22s %-13s %-10s %s\n", mark, n, "pending", "", "")
	}
	return b.String()
}

func eosShowVersion(s *shell, _ []string) string {
	f := s.dev.fleet
	mac := f.macOf(s.dev.index, 0)
	up := f.opts.Now().Sub(f.bootTime(s.dev.index))
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("Arista %s-R", eosModel)
	w("Hardware version:    01.11")
	w("Serial number:       %s", f.serialOf(s.dev.index))
	w("Hardware MAC address: %s", mac)
	w("System MAC address:  %s", mac)
	w("")
	w("Software image version: %s", eosVersion)
	w("Architecture:           x86_64")
	w("Internal build version: %s-26379303.4273F", eosVersion)
	w("Internal build ID:      9d9cba3e-2f5e-4f0b-8d5a-c1b6e4a1a2b3")
	w("Image format version:   1.0")
	w("Image optimization:     Default")
	w("")
	w("Uptime:                 %s", uptimeWords(up, ", ", " and "))
	w("Total memory:           8099732 kB")
	w("Free memory:            5991204 kB")
	return b.String()
}

func eosShowHostname(s *shell, _ []string) string {
	s.dev.mu.Lock()
	h, fq := eosNames(s)
	s.dev.mu.Unlock()
	return "Hostname: " + h + "\nFQDN:     " + fq
}

// eosNames returns the hostname and FQDN. d.mu must be held.
func eosNames(s *shell) (string, string) {
	h := s.dev.hostname()
	fq := h
	if l := s.dev.state().running.top("dns", "domain"); l != "" {
		fq = h + "." + strings.Fields(l)[2]
	} else if l := s.dev.state().running.top("ip", "domain-name"); l != "" {
		fq = h + "." + strings.Fields(l)[2]
	}
	return h, fq
}

func eosStatus(admin, up bool) (string, string, string) {
	switch {
	case !admin:
		return "administratively down", "down", "disabled"
	case !up:
		return "down", "down", "notconnect"
	}
	return "up", "up", "connected"
}

func eosInterfaceDetail(s *shell, b *strings.Builder, in ifaceInfo) {
	f := s.dev.fleet
	admin, up := s.ifState(in)
	st, proto, why := eosStatus(admin, up)
	w := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	w("%s is %s, line protocol is %s (%s)", in.name, st, proto, why)
	loop := !s.p.d.hasMAC(in.name)
	if loop {
		w("  Hardware is Loopback")
	} else {
		mac := f.macOf(s.dev.index, portNumber(in.name))
		w("  Hardware is Ethernet, address is %s (bia %s)", mac, mac)
	}
	if in.description != "" {
		w("  Description: %s", in.description)
	}
	if in.addr != "" {
		w("  Internet address is %s/%d", in.addr, in.plen)
		w("  Broadcast address is 255.255.255.255")
	}
	switch {
	case loop:
		w("  IP MTU %d bytes", in.mtu)
	case in.switchport:
		w("  Ethernet MTU 9214 bytes , BW 10000000 kbit")
	default:
		w("  IP MTU %d bytes , BW 10000000 kbit", in.mtu)
	}
	if !loop {
		w("  Full-duplex, 10Gb/s, auto negotiation: off, uni-link: n/a")
	}
	if admin && up {
		w("  Up %s", uptimeWords(f.opts.Now().Sub(f.bootTime(s.dev.index)), ", ", " and "))
	} else {
		w("  Down 3 days, 2 hours and 0 minutes")
	}
	if loop {
		return
	}
	w("  Loopback Mode : None")
	w("  2 link status changes since last clear")
	w("  Last clearing of \"show interface\" counters never")
	ip, ib, op, ob := s.liveCounters(in.name, admin && up)
	w("  5 minutes input rate %d bps (0.0%% with framing overhead), %d packets/sec", ib/100000, ip/100000)
	w("  5 minutes output rate %d bps (0.0%% with framing overhead), %d packets/sec", ob/100000, op/100000)
	w("     %d packets input, %d bytes", ip, ib)
	w("     Received 0 broadcasts, 0 multicast")
	w("     0 runts, 0 giants")
	w("     0 input errors, 0 CRC, 0 alignment, 0 symbol, 0 input discards")
	w("     0 PAUSE input")
	w("     %d packets output, %d bytes", op, ob)
	w("     Sent 0 broadcasts, 0 multicast")
	w("     0 output errors, 0 collisions")
	w("     0 late collision, 0 deferred, 0 output discards")
	w("     0 PAUSE output")
}

// eosVlanOf returns the Vlan column of "show interfaces status".
func eosVlanOf(s *shell, name string) string {
	blk, ok := s.dev.state().running.block("interface " + name)
	vlan := "1"
	if !ok {
		return vlan
	}
	for _, c := range blk.children {
		switch {
		case c.line == "no switchport":
			return "routed"
		case c.line == "switchport mode trunk":
			vlan = "trunk"
		case strings.HasPrefix(c.line, "switchport access vlan ") && vlan != "trunk":
			vlan = strings.Fields(c.line)[3]
		}
	}
	return vlan
}

func eosShowIfStatus(s *shell) string {
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	ifs := s.p.d.interfaces(s.dev.state().running)
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %-12s %-12s %-8s %-6s %-6s %-15s %s\n", "Port", "Name", "Status", "Vlan", "Duplex", "Speed", "Type", "Flags Encapsulation")
	for _, in := range ifs {
		if !s.p.d.hasMAC(in.name) || s.p.d.creatableIf(in.name) {
			continue
		}
		admin, up := s.ifState(in)
		_, _, why := eosStatus(admin, up)
		vlan := eosVlanOf(s, in.name)
		if !in.switchport && vlan != "routed" {
			vlan = "routed"
		}
		typ, dup, speed := "10GBASE-T", "full", "10G"
		if in.name == s.p.mgmtPort {
			typ, dup, speed = "10/100/1000", "a-full", "a-1G"
		}
		name := in.description
		if len(name) > 12 {
			name = name[:12]
		}
		fmt.Fprintf(&b, "%-10s %-12s %-12s %-8s %-6s %-6s %-15s\n", s.p.d.shortIf(in.name), name, why, vlan, dup, speed, typ)
	}
	return b.String()
}

func eosIPIntBrief(s *shell) string {
	s.dev.mu.Lock()
	ifs := s.p.d.interfaces(s.dev.state().running)
	s.dev.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%80s\n", "Address")
	fmt.Fprintf(&b, "%-17s %-17s %-12s %-14s %8s %s\n", "Interface", "IP Address", "Status", "Protocol", "MTU", "Owner")
	fmt.Fprintf(&b, "%s %s %s %s %s %s\n", strings.Repeat("-", 17), strings.Repeat("-", 17), strings.Repeat("-", 12),
		strings.Repeat("-", 14), strings.Repeat("-", 8), strings.Repeat("-", 7))
	for _, in := range ifs {
		if in.switchport {
			continue
		}
		admin, up := s.ifState(in)
		st, proto := "up", "up"
		switch {
		case !admin:
			st, proto = "admin down", "down"
		case !up:
			st, proto = "down", "lowerlayerdown"
		}
		addr := "unassigned"
		if in.addr != "" {
			addr = in.addr + "/" + strconv.Itoa(in.plen)
		}
		fmt.Fprintf(&b, "%-17s %-17s %-12s %-14s %8d\n", in.name, addr, st, proto, in.mtu)
	}
	return b.String()
}

func eosLLDPBrief(s *shell, sel []lldpEntry) string {
	var b strings.Builder
	b.WriteString("Last table change time   : 0:10:22 ago\n")
	fmt.Fprintf(&b, "Number of table inserts  : %d\nNumber of table deletes  : 0\n", len(sel))
	b.WriteString("Number of table drops    : 0\nNumber of table age-outs : 0\n\n")
	fmt.Fprintf(&b, "%-13s %-24s %-19s %s\n", "Port", "Neighbor Device ID", "Neighbor Port ID", "TTL")
	b.WriteString("---------- ------------------------ ---------------------- ---\n")
	for _, e := range sel {
		fmt.Fprintf(&b, "%-13s %-24s %-19s %d\n", s.p.d.shortIf(e.local), e.system, e.remote, 120)
	}
	return b.String()
}

func eosLLDPDetail(s *shell, sel []lldpEntry) string {
	var b strings.Builder
	for _, e := range sel {
		fmt.Fprintf(&b, "Interface %s detected 1 LLDP neighbors:\n\n", e.local)
		fmt.Fprintf(&b, "  Neighbor %s/\"%s\", age 4 seconds\n", e.chassis, e.remote)
		b.WriteString("  Discovered 3 days, 2:00:00 ago; Last changed 3 days, 2:00:00 ago\n")
		fmt.Fprintf(&b, "  - Chassis ID type: MAC address (4)\n    Chassis ID     : %s\n", e.chassis)
		fmt.Fprintf(&b, "  - Port ID type: Interface name (5)\n    Port ID        : \"%s\"\n", e.remote)
		b.WriteString("  - Time To Live: 120 seconds\n")
		fmt.Fprintf(&b, "  - Port Description: \"%s\"\n", e.remoteDescr)
		fmt.Fprintf(&b, "  - System Name: \"%s\"\n", e.system)
		fmt.Fprintf(&b, "  - System Description: \"Arista Networks EOS version %s running on an Arista Networks %s\"\n", eosVersion, eosModel)
		b.WriteString("  - System Capabilities : Bridge, Router\n    Enabled Capabilities: Bridge, Router\n")
		fmt.Fprintf(&b, "  - Management Address Subtype: IPv4 (1)\n    Management Address        : %s\n", e.mgmt)
		b.WriteString("    Interface Number Subtype  : ifIndex (2)\n    Interface Number          : 999001\n    OID String                : \n\n")
	}
	return b.String()
}

func eosShowBGP(s *shell) string {
	s.dev.mu.Lock()
	asn, rid, peers, ok := s.bgpState()
	s.dev.mu.Unlock()
	if !ok {
		return "% BGP inactive"
	}
	up := uptimeSince(s.dev.fleet.opts.Now().Sub(s.dev.fleet.bootTime(s.dev.index)))
	var b strings.Builder
	b.WriteString("BGP summary information for VRF default\n")
	fmt.Fprintf(&b, "Router identifier %s, local AS number %s\n", rid, asn)
	b.WriteString("Neighbor Status Codes: m - Under maintenance\n")
	b.WriteString("  Neighbor         V AS           MsgRcvd   MsgSent  InQ OutQ  Up/Down State   PfxRcd PfxAcc\n")
	for _, p := range peers {
		if p.established {
			fmt.Fprintf(&b, "  %-16s 4 %-12s %7d %9d %4d %4d %8s %-7s %-6d %d\n", p.addr, p.asn, p.rcvd, p.sent, 0, 0, up, "Estab", 1, 1)
		} else {
			fmt.Fprintf(&b, "  %-16s 4 %-12s %7d %9d %4d %4d %8s %-7s\n", p.addr, p.asn, 0, 0, 0, 0, "3d02h", "Active")
		}
	}
	return b.String()
}

func eosShowMAC(s *shell, _ []string) string {
	s.dev.mu.Lock()
	shut := true
	if blk, ok := s.dev.state().running.block("interface Ethernet1"); ok {
		shut = find(blk.children, "shutdown") >= 0
	}
	vlan := eosVlanOf(s, "Ethernet1")
	s.dev.mu.Unlock()
	var b strings.Builder
	b.WriteString("          Mac Address Table\n------------------------------------------------------------------\n\n")
	b.WriteString("Vlan    Mac Address       Type        Ports      Moves   Last Move\n")
	b.WriteString("----    -----------       ----        -----      -----   ---------\n")
	n := 0
	if !shut && vlan != "routed" && vlan != "trunk" {
		fmt.Fprintf(&b, "%4s    %s    DYNAMIC     Et1        1       3 days, 2:00:00 ago\n", vlan, s.dev.fleet.macOf(s.dev.index, 0xa1)[:4]+".56"+s.dev.fleet.macOf(s.dev.index, 0xa1)[7:])
		n = 1
	}
	fmt.Fprintf(&b, "Total Mac Addresses for this criterion: %d\n", n)
	return b.String()
}

// ---- "| json" renderers ----

func toJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return "{}"
	}
	return string(b)
}

func colonMAC(m string) string {
	h := strings.ReplaceAll(m, ".", "")
	var parts []string
	for i := 0; i+2 <= len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, ":")
}

func eosVersionJSON(s *shell, _ []string) string {
	f := s.dev.fleet
	now := f.opts.Now()
	boot := f.bootTime(s.dev.index)
	mac := colonMAC(f.macOf(s.dev.index, 0))
	return toJSON(map[string]any{
		"mfgName": "Arista", "modelName": eosModel + "-R", "hardwareRevision": "01.11",
		"serialNumber": f.serialOf(s.dev.index), "systemMacAddress": mac, "hwMacAddress": mac,
		"configMacAddress": "00:00:00:00:00:00", "version": eosVersion, "architecture": "x86_64",
		"internalVersion": eosVersion + "-26379303.4273F", "internalBuildId": "9d9cba3e-2f5e-4f0b-8d5a-c1b6e4a1a2b3",
		"imageFormatVersion": "1.0", "imageOptimization": "Default", "isIntlVersion": false,
		"bootupTimestamp": float64(boot.Unix()), "uptime": now.Sub(boot).Seconds(),
		"memTotal": 8099732, "memFree": 5991204,
	})
}

func eosHostnameJSON(s *shell, _ []string) string {
	s.dev.mu.Lock()
	h, fq := eosNames(s)
	s.dev.mu.Unlock()
	return toJSON(map[string]any{"hostname": h, "fqdn": fq})
}

func eosInterfacesJSON(s *shell, args []string) string {
	if len(args) > 0 {
		return s.p.errUnconverted
	}
	f := s.dev.fleet
	s.dev.mu.Lock()
	ifs := s.p.d.interfaces(s.dev.state().running)
	s.dev.mu.Unlock()
	out := map[string]any{}
	boot := float64(f.bootTime(s.dev.index).Unix())
	for _, in := range ifs {
		admin, up := s.ifState(in)
		_, proto, why := eosStatus(admin, up)
		e := map[string]any{
			"name": in.name, "description": in.description, "interfaceStatus": why,
			"lineProtocolStatus": proto, "mtu": in.mtu, "lastStatusChangeTimestamp": boot,
			"forwardingModel":  map[bool]string{true: "bridged", false: "routed"}[in.switchport],
			"interfaceAddress": []any{},
		}
		if s.p.d.hasMAC(in.name) {
			e["physicalAddress"] = f.macOf(s.dev.index, portNumber(in.name))
			e["bandwidth"] = 10000000000
		} else {
			e["bandwidth"] = 0
		}
		if in.addr != "" {
			e["interfaceAddress"] = []any{map[string]any{"primaryIp": map[string]any{"address": in.addr, "maskLen": in.plen}}}
		}
		ip, ib, op, ob := s.counters(in.name)
		e["interfaceCounters"] = map[string]any{"inUcastPkts": ip, "inOctets": ib, "outUcastPkts": op, "outOctets": ob,
			"inDiscards": 0, "outDiscards": 0, "totalInErrors": 0, "totalOutErrors": 0}
		out[in.name] = e
	}
	return toJSON(map[string]any{"interfaces": out})
}

func eosLLDPJSON(s *shell, args []string) string {
	if len(args) > 0 {
		return s.p.errUnconverted
	}
	s.dev.mu.Lock()
	tab := s.lldpTable()
	s.dev.mu.Unlock()
	list := []any{}
	for _, e := range tab {
		list = append(list, map[string]any{"port": e.local, "neighborDevice": e.system, "neighborPort": e.remote, "ttl": 120})
	}
	return toJSON(map[string]any{"lldpNeighbors": list, "tablesInserts": len(list), "tablesDeletes": 0, "tablesDrops": 0, "tablesAgeOuts": 0})
}

func eosARPJSON(s *shell, _ []string) string {
	s.dev.mu.Lock()
	arp := s.arpTable()
	s.dev.mu.Unlock()
	list := []any{}
	for _, e := range arp {
		if !e.own {
			list = append(list, map[string]any{"address": e.ip, "hwAddress": e.mac, "interface": e.iface, "age": e.age})
		}
	}
	return toJSON(map[string]any{"ipV4Neighbors": list, "dynamicEntries": len(list), "staticEntries": 0, "totalEntries": len(list)})
}

func eosNTPJSON(s *shell, _ []string) string {
	s.dev.mu.Lock()
	peers := s.ntpPeers()
	s.dev.mu.Unlock()
	out := map[string]any{}
	for _, p := range peers {
		e := map[string]any{"peerIpAddr": p.addr, "peerType": "unicast", "pollInterval": 64}
		if p.synced {
			e["condition"], e["refid"], e["stratumLevel"], e["reachabilityHistory"] = "sys.peer", ".GPS.", 1, []bool{true, true, true, true, true, true, true, true}
			e["delay"], e["offset"], e["jitter"], e["lastReceived"] = 0.512, -0.021, 1.938, 33
		} else {
			e["condition"], e["refid"], e["stratumLevel"], e["reachabilityHistory"] = "reject", ".INIT.", 16, []bool{}
			e["delay"], e["offset"], e["jitter"], e["lastReceived"] = 0.0, 0.0, 0.0, 0
		}
		out[p.addr] = e
	}
	return toJSON(map[string]any{"peers": out})
}

func eosBGPJSON(s *shell, _ []string) string {
	s.dev.mu.Lock()
	asn, rid, peers, ok := s.bgpState()
	s.dev.mu.Unlock()
	if !ok {
		return toJSON(map[string]any{"vrfs": map[string]any{}})
	}
	f := s.dev.fleet
	upSecs := f.opts.Now().Sub(f.bootTime(s.dev.index)).Seconds()
	pm := map[string]any{}
	for _, p := range peers {
		state, rcv := "Active", 0
		if p.established {
			state, rcv = "Established", 1
		}
		pm[p.addr] = map[string]any{"peerState": state, "asn": p.asn, "prefixReceived": rcv, "prefixAccepted": rcv,
			"upDownTime": float64(f.start.Unix()) - upSecs, "msgReceived": p.rcvd, "msgSent": p.sent,
			"inMsgQueue": 0, "outMsgQueue": 0, "version": 4, "underMaintenance": false}
	}
	return toJSON(map[string]any{"vrfs": map[string]any{"default": map[string]any{"routerId": rid, "asn": asn, "vrf": "default", "peers": pm}}})
}

// eosLLDP renders EOS's "show lldp neighbors [detail]".
func eosLLDP(s *shell, sel []lldpEntry, detail bool) string {
	if detail {
		return eosLLDPDetail(s, sel)
	}
	return eosLLDPBrief(s, sel)
}

// eosShowInterfaces is "show interfaces [status|IFACE...]".
func eosShowInterfaces(s *shell, a []string) string {
	if len(a) > 0 && strings.EqualFold(a[0], "status") {
		return eosShowIfStatus(s)
	}
	return showInterfacesDetail(s, a, eosInterfaceDetail)
}

package devsim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Cisco IOS-XE (CSR1000V-like router) platform.

const (
	iosVersion     = "17.3.4a"
	iosVersionLong = "17.03.04a"
	iosModel       = "CSR1000V"
)

func iosDialect() *dialect {
	top := []string{"aaa", "access-list", "alias", "archive", "banner", "boot", "boot-end-marker",
		"boot-start-marker", "bridge", "call-home", "cdp", "class-map", "clock", "control-plane", "crypto",
		"diagnostic", "enable", "errdisable", "event", "file", "hostname", "interface", "ip", "ipv6", "key",
		"license", "line", "lldp", "logging", "login", "mac", "memory", "multilink", "ntp", "platform",
		"policy-map", "redundancy", "route-map", "router", "service", "snmp-server", "spanning-tree",
		"subscriber", "track", "username", "version", "vlan", "vrf", "vtp"}
	return &dialect{
		indent:   " ",
		topWords: top,
		topOnly:  top,
		ifWords: []string{"arp", "bandwidth", "bfd", "carrier-delay", "cdp", "channel-group", "delay",
			"description", "duplex", "encapsulation", "flowcontrol", "hold-queue", "ip", "ipv6", "keepalive",
			"lldp", "load-interval", "logging", "mac-address", "media-type", "mpls", "mtu", "negotiation",
			"service-policy", "shutdown", "snmp", "spanning-tree", "speed", "standby", "storm-control",
			"switchport", "vrf", "vrrp"},
		ifIPWords: []string{"access-group", "address", "dhcp", "directed-broadcast", "flow", "helper-address",
			"igmp", "mtu", "nat", "ospf", "pim", "policy", "proxy-arp", "redirects", "tcp", "unnumbered",
			"unreachables", "verify", "virtual-reassembly", "vrf"},
		ifIPv6Words: []string{"address", "dhcp", "enable", "mtu", "nd", "ospf", "redirects", "traffic-filter",
			"unreachables"},
		lineWords: []string{"absolute-timeout", "access-class", "escape-character", "exec", "exec-timeout",
			"history", "length", "logging", "login", "password", "privilege", "session-timeout", "stopbits",
			"transport", "width"},
		shared: map[string][]string{"keychain": {"key"}},
		singles: map[string][][]string{
			"": {{"hostname"}, {"ip", "domain", "name"}, {"ip", "domain-name"}, {"clock", "timezone"},
				{"spanning-tree", "mode"}, {"enable", "secret"}, {"enable", "password"}, {"version"},
				{"file", "prompt"}, {"ip", "ssh", "version"}, {"logging", "buffered"}, {"ntp", "source"}},
			"interface": {{"description"}, {"ip", "address"}, {"shutdown"}, {"speed"}, {"duplex"}, {"mtu"},
				{"bandwidth"}, {"switchport", "mode"}, {"switchport", "access", "vlan"},
				{"switchport", "trunk", "native", "vlan"}, {"switchport", "trunk", "allowed", "vlan"},
				{"channel-group"}, {"load-interval"}, {"vrf", "forwarding"}, {"encapsulation"}, {"negotiation"},
				{"ip", "mtu"}, {"media-type"}},
			"router": {{"bgp", "router-id"}, {"router-id"}, {"maximum-paths"}, {"neighbor", "*", "remote-as"},
				{"neighbor", "*", "description"}, {"neighbor", "*", "update-source"}},
			"line": {{"exec-timeout"}, {"transport", "input"}, {"login"}, {"stopbits"}, {"length"}, {"width"},
				{"privilege", "level"}},
			"vlan": {{"name"}},
		},
		opener: iosOpener,
	}
}

func iosOpener(kind string, b []string) string {
	if len(b) == 0 {
		return ""
	}
	switch kind {
	case "":
		switch b[0] {
		case "interface", "router", "line", "route-map", "class-map", "policy-map", "archive",
			"redundancy", "control-plane":
			return b[0]
		case "vlan":
			if len(b) == 2 && b[1] != "" && b[1][0] >= '0' && b[1][0] <= '9' {
				return "vlan"
			}
		case "ip", "ipv6":
			if len(b) >= 3 && b[1] == "access-list" {
				return "acl"
			}
			if b[0] == "ip" && len(b) == 3 && b[1] == "vrf" {
				return "vrf"
			}
		case "vrf":
			if len(b) == 3 && b[1] == "definition" {
				return "vrf"
			}
		case "key":
			if len(b) == 3 && b[1] == "chain" {
				return "keychain"
			}
		case "spanning-tree":
			if len(b) == 3 && b[1] == "mst" && b[2] == "configuration" {
				return "mst"
			}
		}
	case "router":
		if b[0] == "address-family" {
			return "router-af"
		}
	case "vrf":
		if b[0] == "address-family" {
			return "vrf-af"
		}
	case "policy-map":
		if b[0] == "class" {
			return "pmap-c"
		}
	}
	return ""
}

func iosConfigPrompt(s *shell) string {
	if len(s.path) == 0 {
		return "config"
	}
	last := s.path[len(s.path)-1]
	switch kind := s.p.d.kindAt(s.path); kind {
	case "interface":
		if strings.Contains(last, ".") {
			return "config-subif"
		}
		return "config-if"
	case "acl":
		switch {
		case strings.HasPrefix(last, "ipv6"):
			return "config-ipv6-acl"
		case strings.Contains(last, " standard "):
			return "config-std-nacl"
		}
		return "config-ext-nacl"
	case "router-af":
		return "config-router-af"
	case "class-map":
		return "config-cmap"
	case "policy-map":
		return "config-pmap"
	case "pmap-c":
		return "config-pmap-c"
	case "redundancy":
		return "config-red"
	case "control-plane":
		return "config-cp"
	case "mst":
		return "config-mst"
	case "generic":
		return "config"
	default:
		return "config-" + kind
	}
}

func iosShowVersion(s *shell, _ []string) string {
	f := s.dev.fleet
	s.dev.mu.Lock()
	host := s.dev.hostname()
	s.dev.mu.Unlock()
	up := f.opts.Now().Sub(f.bootTime(s.dev.index))
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("Cisco IOS XE Software, Version %s", iosVersionLong)
	w("Cisco IOS Software [Amsterdam], Virtual XE Software (X86_64_LINUX_IOSD-UNIVERSALK9-M), Version %s, RELEASE SOFTWARE (fc3)", iosVersion)
	w("Technical Support: http://www.cisco.com/techsupport")
	w("Copyright (c) 1986-2021 by Cisco Systems, Inc.")
	w("Compiled Tue 20-Jul-21 04:59 by mcpre")
	w("")
	w("")
	w("Cisco IOS-XE software, Copyright (c) 2005-2021 by cisco Systems, Inc.")
	w("All rights reserved.  Certain components of Cisco IOS-XE software are")
	w("licensed under the GNU General Public License (\"GPL\") Version 2.0.")
	w("")
	w("ROM: IOS-XE ROMMON")
	w("")
	w("%s uptime is %s", host, uptimeWords(up, ", ", ""))
	w("Uptime for this control processor is %s", uptimeWords(up+2*time.Minute, ", ", ""))
	w("System returned to ROM by reload")
	w("System image file is \"bootflash:packages.conf\"")
	w("Last reload reason: reload")
	w("")
	w("License Level: ax")
	w("License Type: N/A(Smart License Enabled)")
	w("Next reload license Level: ax")
	w("")
	w("The current crypto throughput level is 1000 kbps ")
	w("")
	w("")
	w("Smart Licensing Status: UNREGISTERED/No Licenses in Use")
	w("")
	w("cisco %s (VXE) processor (revision VXE) with 2071288K/3075K bytes of memory.", iosModel)
	w("Processor board ID %s", f.serialOf(s.dev.index))
	w("Router operating mode: Autonomous")
	w("4 Gigabit Ethernet interfaces")
	w("32768K bytes of non-volatile configuration memory.")
	w("3978436K bytes of physical memory.")
	w("6188032K bytes of virtual memory.")
	w("")
	w("Configuration register is 0x2102")
	return b.String()
}

func iosShowHosts(s *shell, _ []string) string {
	s.dev.mu.Lock()
	run := s.dev.state().running
	dom := run.top("ip", "domain", "name")
	if dom != "" {
		dom = strings.Fields(dom)[3]
	} else if dom = run.top("ip", "domain-name"); dom != "" {
		dom = strings.Fields(dom)[2]
	}
	s.dev.mu.Unlock()
	var b strings.Builder
	if dom != "" {
		b.WriteString("Default domain is " + dom + "\n")
	} else {
		b.WriteString("Default domain is not set\n")
	}
	b.WriteString("Name/address lookup uses domain service\nName servers are 255.255.255.255\n\n")
	b.WriteString("Codes: UN - unknown, EX - expired, OK - OK, ?? - revalidate\n")
	b.WriteString("       temp - temporary, perm - permanent\n       NA - Not Applicable None - Not defined\n\n")
	b.WriteString("Host                      Port  Flags      Age Type   Address(es)\n")
	return b.String()
}

func iosConfigure(s *shell, _ []string) string {
	s.pending = func(s *shell, ans string) string {
		a := strings.ToLower(strings.TrimSpace(ans))
		if a == "" || strings.HasPrefix("terminal", a) {
			return cmdConfigureTerminal(s, nil)
		}
		return "?Must be \"terminal\", \"memory\" or \"network\""
	}
	return "Configuring from terminal, memory, or network [terminal]? "
}

func iosConfigureReplace(s *shell, args []string) string {
	k, name := s.p.parseLoc(args[0])
	if k == locBad || k == locNull {
		return s.invalidArg(args[0])
	}
	force, revert := false, false
	for i := 1; i < len(args); i++ {
		switch strings.ToLower(args[i]) {
		case "force":
			force = true
		case "revert":
			revert = true
		case "trigger", "error", "list", "ignorecase", "nolock":
		case "time":
			i++
		default:
			return s.invalidArg(args[i])
		}
	}
	s.dev.mu.Lock()
	_, ok := s.locText(k, name)
	s.dev.mu.Unlock()
	if !ok {
		return s.p.errNoFile(args[0])
	}
	do := func() string {
		s.dev.mu.Lock()
		defer s.dev.mu.Unlock()
		st := s.dev.state()
		text, ok := s.locText(k, name)
		if !ok {
			return s.p.errNoFile(args[0])
		}
		c, errs := s.p.d.parseConfig(text, st.running)
		if len(errs) > 0 {
			var b strings.Builder
			for _, e := range errs {
				b.WriteString("Command: " + e + " At level: 1 \n% Invalid input detected at '^' marker.\n")
			}
			if revert {
				b.WriteString("\nRollback aborted: errors were found.\nThe original configuration has been successfully restored.\n")
				return b.String()
			}
			st.running = c
			s.dev.touch(s.user)
			b.WriteString("\nTotal number of passes: 1\nRollback Done\n")
			return b.String()
		}
		st.running = c
		s.dev.touch(s.user)
		return "Total number of passes: 1\nRollback Done\n"
	}
	if force {
		return do()
	}
	s.pending = func(_ *shell, ans string) string {
		if a := strings.ToLower(strings.TrimSpace(ans)); a != "y" && a != "yes" {
			return ""
		}
		return do()
	}
	return "This will apply all necessary additions and deletions\nto replace the current running configuration with the\n" +
		"contents of the specified configuration file, which is\nassumed to be a complete configuration, not a partial\n" +
		"configuration. Enter Y if you are sure you want to proceed. ? [no]: "
}

// configOf returns the configuration tree of a location for diffs. d.mu must be held.
func (s *shell) configOf(k locKind, name string) (*config, bool) {
	st := s.dev.state()
	switch k {
	case locRunning:
		return st.running, true
	case locStartup:
		return st.startup, true
	}
	text, ok := s.locText(k, name)
	if !ok {
		return nil, false
	}
	c, _ := s.p.d.parseConfig(text, nil)
	return c, true
}

func iosArchiveDiff(s *shell, args []string) string {
	var locs []string
	for _, a := range args {
		if strings.EqualFold(a, "ignorecase") {
			continue
		}
		locs = append(locs, a)
	}
	if len(locs) == 0 || len(locs) > 2 {
		return s.invalidLast()
	}
	if len(locs) == 1 {
		locs = []string{"system:running-config", locs[0]}
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	var cs [2]*config
	for i, l := range locs {
		k, n := s.p.parseLoc(l)
		if k == locBad || k == locNull {
			return s.invalidArg(l)
		}
		c, ok := s.configOf(k, n)
		if !ok {
			return s.p.errNoFile(l)
		}
		cs[i] = c
	}
	return "\n" + s.p.d.contextualDiff(cs[0], cs[1])
}

func iosIncrementalDiff(s *shell, args []string) string {
	k, n := s.p.parseLoc(args[0])
	if k != locFile && k != locStartup {
		return s.invalidArg(args[0])
	}
	for _, a := range args[1:] {
		if !strings.EqualFold(a, "ignorecase") {
			return s.invalidArg(a)
		}
	}
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	text, ok := s.locText(k, n)
	if !ok {
		return s.p.errNoFile(args[0])
	}
	return s.p.d.incrementalDiff(s.dev.state().running, text)
}

func iosStatus(admin, up bool) (string, string) {
	switch {
	case !admin:
		return "administratively down", "down"
	case !up:
		return "down", "down"
	}
	return "up", "up"
}

func showInterfacesDetail(s *shell, args []string, detail func(s *shell, b *strings.Builder, in ifaceInfo)) string {
	ifs, only, ok := s.runningIfs(args)
	if !ok {
		return s.invalidArg(args[0])
	}
	var b strings.Builder
	found := false
	for _, in := range ifs {
		if only != "" && in.name != only {
			continue
		}
		found = true
		detail(s, &b, in)
	}
	if !found {
		return s.invalidArg(args[0])
	}
	return b.String()
}

func iosInterfaceDetail(s *shell, b *strings.Builder, in ifaceInfo) {
	f := s.dev.fleet
	admin, up := s.ifState(in)
	st, proto := iosStatus(admin, up)
	w := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	w("%s is %s, line protocol is %s ", in.name, st, proto)
	loop := strings.HasPrefix(in.name, "Loopback")
	if loop {
		w("  Hardware is Loopback")
	} else {
		mac := f.macOf(s.dev.index, portNumber(in.name))
		w("  Hardware is CSR vNIC, address is %s (bia %s)", mac, mac)
	}
	if in.description != "" {
		w("  Description: %s", in.description)
	}
	if in.addr != "" {
		w("  Internet address is %s/%d", in.addr, in.plen)
	}
	if loop {
		w("  MTU %d bytes, BW 8000000 Kbit/sec, DLY 5000 usec, ", in.mtu)
	} else {
		w("  MTU %d bytes, BW 1000000 Kbit/sec, DLY 10 usec, ", in.mtu)
	}
	w("     reliability 255/255, txload 1/255, rxload 1/255")
	if loop {
		w("  Encapsulation LOOPBACK, loopback not set")
		w("  Keepalive set (10 sec)")
	} else {
		w("  Encapsulation ARPA, loopback not set")
		w("  Keepalive set (10 sec)")
		w("  Full Duplex, 1000Mbps, link type is auto, media type is Virtual")
		w("  output flow-control is unsupported, input flow-control is unsupported")
		w("  ARP type: ARPA, ARP Timeout 04:00:00")
	}
	w("  Last input 00:00:01, output 00:00:01, output hang never")
	w("  Last clearing of \"show interface\" counters never")
	w("  Input queue: 0/375/0/0 (size/max/drops/flushes); Total output drops: 0")
	w("  Queueing strategy: fifo")
	w("  Output queue: 0/40 (size/max)")
	ip, ib, op, ob := s.liveCounters(in.name, admin && up)
	w("  5 minute input rate %d bits/sec, %d packets/sec", ib/100000, ip/100000)
	w("  5 minute output rate %d bits/sec, %d packets/sec", ob/100000, op/100000)
	w("     %d packets input, %d bytes, 0 no buffer", ip, ib)
	w("     Received 0 broadcasts (0 IP multicasts)")
	w("     0 runts, 0 giants, 0 throttles ")
	w("     0 input errors, 0 CRC, 0 frame, 0 overrun, 0 ignored")
	w("     0 watchdog, 0 multicast, 0 pause input")
	w("     %d packets output, %d bytes, 0 underruns", op, ob)
	w("     0 output errors, 0 collisions, 0 interface resets")
	w("     0 unknown protocol drops")
	w("     0 babbles, 0 late collision, 0 deferred")
	w("     0 lost carrier, 0 no carrier, 0 pause output")
	w("     0 output buffer failures, 0 output buffers swapped out")
}

func iosIPIntBrief(s *shell, _ []string) string {
	s.dev.mu.Lock()
	ifs := s.p.d.interfaces(s.dev.state().running)
	s.dev.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %-15s %-3s %-6s %-21s %s\n", "Interface", "IP-Address", "OK?", "Method", "Status", "Protocol")
	for _, in := range ifs {
		admin, up := s.ifState(in)
		st, proto := iosStatus(admin, up)
		addr, method := in.addr, "NVRAM"
		if addr == "" {
			addr, method = "unassigned", "unset"
		}
		fmt.Fprintf(&b, "%-22s %-15s YES %-6s %-21s %s\n", in.name, addr, method, st, proto)
	}
	return b.String()
}

func iosShowIPInterface(s *shell, args []string) string {
	ifs, only, ok := s.runningIfs(args)
	if !ok {
		return s.invalidArg(args[0])
	}
	var b strings.Builder
	for _, in := range ifs {
		if only != "" && in.name != only {
			continue
		}
		admin, up := s.ifState(in)
		st, proto := iosStatus(admin, up)
		fmt.Fprintf(&b, "%s is %s, line protocol is %s\n", in.name, st, proto)
		if in.addr == "" {
			b.WriteString("  Internet protocol processing disabled\n")
			continue
		}
		fmt.Fprintf(&b, "  Internet address is %s/%d\n  Broadcast address is 255.255.255.255\n", in.addr, in.plen)
		fmt.Fprintf(&b, "  Address determined by non-volatile memory\n  MTU is %d bytes\n", in.mtu)
		b.WriteString("  Helper address is not set\n  Directed broadcast forwarding is disabled\n")
		b.WriteString("  Outgoing Common access list is not set \n  Outgoing access list is not set\n")
		b.WriteString("  Inbound Common access list is not set \n  Inbound  access list is not set\n")
		b.WriteString("  Proxy ARP is enabled\n  Local Proxy ARP is disabled\n  Security level is default\n")
		b.WriteString("  Split horizon is enabled\n  ICMP redirects are always sent\n  ICMP unreachables are always sent\n")
	}
	return b.String()
}

// showLLDP parses "show lldp neighbors [IFACE] [detail]" and renders the selected neighbors.
func showLLDP(s *shell, args []string, render func(s *shell, sel []lldpEntry, detail bool) string) string {
	sel, detail, bad, ok := s.lldpSelect(args, "detail")
	if !ok {
		return s.invalidArg(bad)
	}
	return render(s, sel, detail)
}

// lldpSelect reads the arguments of "show lldp neighbors": the words
// (abbreviated as the CLI allows; "detail" among them asks for detail)
// and an interface name that keeps only its neighbors. bad is the first
// argument that is neither (ok false).
func (s *shell) lldpSelect(args []string, words ...string) (sel []lldpEntry, detail bool, bad string, ok bool) {
	only := ""
	for _, a := range args {
		if w, ok := expandWord(a, words); ok {
			detail = detail || w == "detail"
			continue
		}
		name, ok := s.p.d.canonIf(a)
		if !ok {
			return nil, false, a, false
		}
		only = name
	}
	s.dev.mu.Lock()
	tab := s.lldpTable()
	s.dev.mu.Unlock()
	for _, e := range tab {
		if only == "" || e.local == only {
			sel = append(sel, e)
		}
	}
	return sel, detail, "", true
}

// iosLLDP renders IOS-XE's "show lldp neighbors [detail]".
func iosLLDP(s *shell, sel []lldpEntry, detail bool) string {
	var b strings.Builder
	if !detail {
		b.WriteString("Capability codes:\n    (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n")
		b.WriteString("    (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\n\n")
		fmt.Fprintf(&b, "%-20s%-15s%-11s%-16s%s\n", "Device ID", "Local Intf", "Hold-time", "Capability", "Port ID")
		for _, e := range sel {
			id := e.system
			if len(id) > 20 {
				id = id[:20]
			}
			fmt.Fprintf(&b, "%-20s%-15s%-11d%-16s%s\n", id, s.p.d.shortIf(e.local), 120, "R", s.p.d.shortIf(e.remote))
		}
		fmt.Fprintf(&b, "\nTotal entries displayed: %d\n", len(sel))
		return b.String()
	}
	for _, e := range sel {
		b.WriteString("------------------------------------------------\n")
		fmt.Fprintf(&b, "Local Intf: %s\nChassis id: %s\nPort id: %s\nPort Description: %s\nSystem Name: %s\n\n",
			s.p.d.shortIf(e.local), e.chassis, s.p.d.shortIf(e.remote), e.remoteDescr, e.system)
		b.WriteString("System Description: \n")
		fmt.Fprintf(&b, "Cisco IOS Software [Amsterdam], Virtual XE Software (X86_64_LINUX_IOSD-UNIVERSALK9-M), Version %s, RELEASE SOFTWARE (fc3)\n", iosVersion)
		b.WriteString("Technical Support: http://www.cisco.com/techsupport\nCopyright (c) 1986-2021 by Cisco Systems, Inc.\n")
		b.WriteString("Compiled Tue 20-Jul-21 04:59 by mcpre\n\n")
		b.WriteString("Time remaining: 95 seconds\nSystem Capabilities: B,R\nEnabled Capabilities: R\n")
		fmt.Fprintf(&b, "Management Addresses:\n    IP: %s\n", e.mgmt)
		b.WriteString("Auto Negotiation - not supported\nPhysical media capabilities - not advertised\n")
		b.WriteString("Media Attachment Unit type - not advertised\nVlan ID: - not advertised\n\n")
	}
	fmt.Fprintf(&b, "\nTotal entries displayed: %d\n", len(sel))
	return b.String()
}

func iosShowBGP(s *shell, all bool) string {
	s.dev.mu.Lock()
	asn, rid, peers, ok := s.bgpState()
	s.dev.mu.Unlock()
	if !ok {
		return "% BGP not active\n"
	}
	up := uptimeSince(s.dev.fleet.opts.Now().Sub(s.dev.fleet.bootTime(s.dev.index)))
	var b strings.Builder
	if all {
		b.WriteString("For address family: IPv4 Unicast\n")
	}
	est := 0
	for _, p := range peers {
		if p.established {
			est++
		}
	}
	fmt.Fprintf(&b, "BGP router identifier %s, local AS number %s\n", rid, asn)
	fmt.Fprintf(&b, "BGP table version is %d, main routing table version %d\n", 2+est, 2+est)
	fmt.Fprintf(&b, "%d network entries using %d bytes of memory\n", 1+est, (1+est)*248)
	fmt.Fprintf(&b, "%d path entries using %d bytes of memory\n", 1+est, (1+est)*136)
	b.WriteString("BGP using 1544 total bytes of memory\n")
	b.WriteString("BGP activity 2/0 prefixes, 2/0 paths, scan interval 60 secs\n\n")
	b.WriteString("Neighbor        V           AS MsgRcvd MsgSent   TblVer  InQ OutQ Up/Down  State/PfxRcd\n")
	for _, p := range peers {
		state, updown := "Idle", "never"
		if p.established {
			state, updown = "1", up
		}
		fmt.Fprintf(&b, "%-15s 4 %12s %7d %7d %8d %4d %4d %-8s %12s\n", p.addr, p.asn, p.rcvd, p.sent, 2+est, 0, 0, updown, state)
	}
	return b.String()
}

// iosShowBGPNeighbors renders "show bgp ipv4 unicast neighbors" in IOS-XE's
// layout (the lines NAPALM ios reads: neighbour, description, remote router
// id, state, per-family prefix counters).
func iosShowBGPNeighbors(s *shell, args []string) string {
	s.dev.mu.Lock()
	asn, _, peers, ok := s.bgpState()
	s.dev.mu.Unlock()
	if !ok {
		return "% BGP not active\n"
	}
	if len(args) > 0 { // "... neighbors ADDRESS": that neighbor only
		if ipv4(args[0]) == nil || len(args) > 1 {
			return s.invalidArg(args[len(args)-1])
		}
		peers = slices.DeleteFunc(peers, func(p bgpPeer) bool { return p.addr != args[0] })
		if len(peers) == 0 {
			return "% No such neighbor or address family"
		}
	}
	up := uptimeSince(s.dev.fleet.opts.Now().Sub(s.dev.fleet.bootTime(s.dev.index)))
	var b strings.Builder
	for _, p := range peers {
		link := "external"
		if p.asn == asn {
			link = "internal"
		}
		fmt.Fprintf(&b, "BGP neighbor is %s,  remote AS %s, %s link\n", p.addr, p.asn, link)
		if p.descr != "" {
			fmt.Fprintf(&b, " Description: %s\n", p.descr)
		}
		rid, state := "0.0.0.0", "Idle"
		if p.established {
			rid, state = p.remoteID, "Established, up for "+up
		}
		fmt.Fprintf(&b, "  BGP version 4, remote router ID %s\n", rid)
		fmt.Fprintf(&b, "  BGP state = %s\n", state)
		b.WriteString("  Last read 00:00:08, last write 00:00:01, hold time is 180, keepalive interval is 60 seconds\n")
		b.WriteString("  Message statistics:\n    InQ depth is 0\n    OutQ depth is 0\n\n")
		fmt.Fprintf(&b, "                         Sent       Rcvd\n    Opens:                  1          1\n    Total:        %9d  %9d\n", p.sent, p.rcvd)
		b.WriteString("  Default minimum time between advertisement runs is 0 seconds\n\n")
		b.WriteString(" For address family: IPv4 Unicast\n")
		fmt.Fprintf(&b, "  Session: %s\n", p.addr)
		b.WriteString("  BGP table version 3, neighbor version 3/0\n  Output queue size : 0\n")
		b.WriteString("                                 Sent       Rcvd\n  Prefix activity:               ----       ----\n")
		sent, rcvd := 0, 0
		if p.established {
			sent, rcvd = 1, 1
		}
		fmt.Fprintf(&b, "    Prefixes Current:          %6d     %6d (Consumes %d bytes)\n", sent, rcvd, rcvd*120)
		fmt.Fprintf(&b, "    Prefixes Total:            %6d     %6d\n\n", sent, rcvd)
		b.WriteString("                                   Outbound    Inbound\n  Local Policy Denied Prefixes:    --------    -------\n")
		b.WriteString("    Total:                                0          0\n")
		b.WriteString("  Number of NLRIs in the update sent: max 1, min 0\n\n")
	}
	return b.String()
}

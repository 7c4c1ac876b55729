package devsim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Cisco NX-OS (Nexus 9000v-like switch) platform. Logins land in privileged exec ("sw1#"),
// the configuration is indented by two spaces without "!" separators or "end", candidates
// reach bootflash: over SCP ("scp -t bootflash:FILE" on an exec channel, once "feature
// scp-server" is configured), and configurations are replaced with checkpoints and
// "rollback running-config".

const (
	nxosVersion  = "9.3(8)"
	nxosModel    = "Nexus9000 C9300v Chassis"
	nxosPID      = "N9K-C9300v"
	nxosHostPort = "Ethernet1/1" // access port with a (simulated) host attached
	nxosTimeFmt  = "Mon Jan _2 15:04:05 2006"
	// nxosMaxCheckpoints bounds the named checkpoints of one device.
	nxosMaxCheckpoints = 16
)

// nxosShell is the NX-OS per-session state.
type nxosShell struct {
	dontAsk bool // "terminal dont-ask": destructive commands ask no question
}

// nxosDevice is the NX-OS per-device state beyond files: named checkpoints.
type nxosDevice struct {
	checkpoints map[string]flashFile
}

// nxosSess returns the session state, creating it on first use.
func (s *shell) nxosSess() *nxosShell {
	if s.nx == nil {
		s.nx = &nxosShell{}
	}
	return s.nx
}

// nxosDev returns the device's NX-OS state, creating it on first use. d.mu must be held.
func (d *Device) nxosDev() *nxosDevice {
	st := d.state()
	if st.nx == nil {
		st.nx = &nxosDevice{checkpoints: map[string]flashFile{}}
	}
	return st.nx
}

func nxosDialect() *dialect {
	top := []string{"aaa", "banner", "boot", "callhome", "cdp", "class-map", "cli", "clock", "copp", "crypto",
		"evpn", "fabric", "feature", "hardware", "hostname", "interface", "ip", "ipv6", "key", "license", "line",
		"lldp", "logging", "mac", "ntp", "nv", "nxapi", "object-group", "policy-map", "port-channel", "power",
		"rmon", "role", "route-map", "router", "service", "snmp-server", "spanning-tree", "ssh", "system",
		"telemetry", "username", "version", "vdc", "vlan", "vpc", "vrf"}
	return &dialect{
		indent:   "  ",
		topWords: top,
		topOnly:  top,
		ifWords: []string{"bandwidth", "beacon", "cdp", "channel-group", "delay", "description", "duplex",
			"encapsulation", "fabric", "flowcontrol", "hsrp", "inherit", "ip", "ipv6", "lacp", "link", "lldp",
			"load-interval", "logging", "mac-address", "medium", "mtu", "negotiate", "service-policy", "shutdown",
			"snmp", "spanning-tree", "speed", "storm-control", "switchport", "udld", "vpc", "vrf", "vrrp"},
		ifIPWords: []string{"access-group", "address", "arp", "dhcp", "directed-broadcast", "flow", "forward",
			"igmp", "ospf", "pim", "policy", "port", "proxy-arp", "redirects", "router", "unreachables", "verify"},
		ifIPv6Words: []string{"address", "dhcp", "link-local", "nd", "ospfv3", "redirects", "router"},
		shared: map[string][]string{
			"vrf":           {"ip", "ipv6"},
			"router-af":     {"route-map"},
			"router-nbr-af": {"route-map"},
		},
		singles: map[string][][]string{
			"": {{"hostname"}, {"ip", "domain-name"}, {"version"}, {"spanning-tree", "mode"}, {"clock", "timezone"},
				{"ntp", "source-interface"}},
			"interface": {{"description"}, {"ip", "address"}, {"mtu"}, {"speed"}, {"duplex"}, {"bandwidth"},
				{"switchport", "mode"}, {"switchport", "access", "vlan"}, {"switchport", "trunk", "native", "vlan"},
				{"switchport", "trunk", "allowed", "vlan"}, {"channel-group"}, {"load-interval"}, {"vrf", "member"},
				{"encapsulation"}},
			"router":     {{"router-id"}},
			"router-vrf": {{"router-id"}},
			"router-nbr": {{"remote-as"}, {"description"}, {"update-source"}},
			"vlan":       {{"name"}},
		},
		negLines: map[string][]negLine{
			"interface": {{text: "switchport"}, {text: "shutdown", positiveShown: true}},
		},
		ifTypes: []ifType{
			{long: "mgmt", short: "mgmt", mac: true},
			{long: "Ethernet", short: "Eth", mac: true},
			{long: "port-channel", short: "Po", creatable: true, mac: true},
			{long: "loopback", short: "Lo", creatable: true},
			{long: "Vlan", short: "Vlan", creatable: true, mac: true},
			{long: "nve", short: "nve", creatable: true},
			{long: "Tunnel", short: "Tunnel", creatable: true},
		},
		loopbackMTU: 1500,
		switchports: true,
		opener:      nxosOpener,
	}
}

func nxosOpener(kind string, b []string) string {
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
		case "line":
			if len(b) == 2 {
				return "line"
			}
		case "vlan":
			if len(b) == 2 && b[1] != "" && b[1][0] >= '0' && b[1][0] <= '9' && !strings.ContainsAny(b[1], ",-") {
				return "vlan"
			}
		case "vrf":
			if len(b) == 3 && b[1] == "context" {
				return "vrf"
			}
		case "ip", "ipv6", "mac":
			if len(b) >= 3 && b[1] == "access-list" {
				return "acl"
			}
		case "vpc":
			if len(b) == 3 && b[1] == "domain" {
				return "vpc"
			}
		case "key":
			if len(b) == 3 && b[1] == "chain" {
				return "keychain"
			}
		case "role":
			if len(b) == 3 && b[1] == "name" {
				return "role"
			}
		case "vdc":
			if len(b) >= 2 {
				return "vdc"
			}
		case "spanning-tree":
			if len(b) == 3 && b[1] == "mst" && b[2] == "configuration" {
				return "mst"
			}
		}
	case "router", "router-vrf":
		switch {
		case b[0] == "address-family":
			return "router-af"
		case b[0] == "neighbor" && len(b) >= 2:
			return "router-nbr"
		case kind == "router" && b[0] == "vrf" && len(b) == 2:
			return "router-vrf"
		}
	case "router-nbr":
		if b[0] == "address-family" {
			return "router-nbr-af"
		}
	case "vrf":
		if b[0] == "address-family" {
			return "vrf-af"
		}
	case "policy-map":
		if b[0] == "class" {
			return "pmap-c"
		}
	case "keychain":
		if b[0] == "key" {
			return "keychain-key"
		}
	}
	return ""
}

func newNXOS() *platform {
	p := &platform{
		name:           PlatformNXOS,
		d:              nxosDialect(),
		filters:        []string{"include", "exclude", "begin", "section", "count", "json", "no-more"},
		banner:         "Cisco NX-OS Software\nCopyright (c) 2002-2021, Cisco Systems, Inc. All rights reserved.\n",
		defaultTermLen: 24,
		maxTermWidth:   511,
		minTermWidth:   24,
		noHostname:     "switch",
		mgmtPort:       "mgmt0",
		nextPort:       "Ethernet1/2",
		prevPort:       "Ethernet1/3",
		sparePort:      "Ethernet1/4",
		template:       nxosTemplate,
		errIncomplete:  "% Incomplete command at '^' marker.",
		errUnconverted: "% Invalid command at '^' marker. (no JSON output for this command)",
		badSecret:      "% Permission denied",
		loginMode:      modeEnable,
		invalidAt:      nxosInvalidAt,
		ambiguous:      "% Ambiguous command at '^' marker.",
		renderBody:     nxosRenderBody,
		rawExec:        nxosRawExec,
	}
	p.configFileHeader = func(_ *Device, t time.Time) string {
		return "!Command: show running-config\n!Running configuration last done at: " + t.UTC().Format(nxosTimeFmt) + "\n\n"
	}
	p.configPrompt = nxosConfigPrompt
	p.configSpecial = func(*shell, []tok) (string, bool) { return "", false }
	p.execInConfig = func(w string) bool {
		switch w {
		case "sh", "sho", "show", "copy", "dir", "checkpoint", "rollback", "delete", "ping", "traceroute", "terminal":
			return true
		}
		return false
	}
	p.exec = []*cmdSpec{
		cmd("enable <args?>", false, cmdEnable),
		cmd("disable", true, cmdDisable),
		cmd("exit", false, cmdExit),
		cmd("logout", false, cmdExit),
		cmd("terminal length <arg>", false, cmdTermLength),
		cmd("terminal width <arg>", false, cmdTermWidth),
		cmd("terminal monitor", false, cmdNoop),
		cmd("terminal no monitor", false, cmdNoop),
		cmd("terminal session-timeout <arg>", false, cmdNoop),
		cmd("terminal dont-ask", false, func(s *shell, _ []string) string { s.nxosSess().dontAsk = true; return "" }),
		cmd("no terminal dont-ask", false, func(s *shell, _ []string) string { s.nxosSess().dontAsk = false; return "" }),
		cmd("configure", true, nxosConfigure),
		cmd("configure terminal", true, nxosConfigure),
		cmd("copy <arg> <arg>", true, nxosCopy),
		cmd("delete <args>", true, nxosDelete),
		showCmd("dir <args?>", true, nxosDir),
		cmd("checkpoint <args>", true, nxosCheckpoint),
		cmd("no checkpoint <arg>", true, nxosNoCheckpoint),
		cmd("rollback running-config <args>", true, nxosRollback),
		showCmd("show diff rollback-patch <args>", true, nxosShowDiff),
		showCmd("show checkpoint summary", true, nxosShowCheckpoints),
		showCmd("show file <args>", true, nxosShowFile),
		showCmd("show version", false, nxosShowVersion),
		showCmd("show hostname", false, nxosShowHostname),
		showCmd("show hosts", false, nxosShowHosts),
		showCmd("show clock", false, nxosShowClock),
		showCmd("show inventory", false, nxosShowInventory).withJSON(nxosInventoryJSON),
		showCmd("show running-config <args?>", true, nxosShowRunning),
		showCmd("show startup-config", true, nxosShowStartup),
		showCmd("show interface <args?>", false, nxosShowInterface),
		showCmd("show ip interface <args?>", false, nxosShowIPInterface),
		showCmd("show ipv6 interface <args?>", false, nxosShowIPv6Interface),
		showCmd("show lldp neighbors <args?>", false, nxosShowLLDP),
		showCmd("show ip arp <args?>", false, nxosShowARP),
		showCmd("show mac address-table <args?>", false, nxosShowMAC),
		showCmd("show ntp peers", false, nxosShowNTPPeers),
		showCmd("show system resources", false, nxosShowResources),
		showCmd("show environment temperature", false, nxosShowTemperature),
		showCmd("show bgp all summary <args?>", false, nxosShowBGP),
		cmd("ping <args>", false, nxosPing),
		cmd("traceroute <args>", false, nxosTraceroute),
	}
	return p
}

// nxosInvalidAt renders NX-OS's invalid-command error with a caret under the offending word.
func nxosInvalidAt(s *shell, line string, off int) string {
	col := len(s.prompt()) + min(max(off, 0), len(line))
	return strings.Repeat(" ", col) + "^\n% Invalid command at '^' marker."
}

func nxosSerial(i int) string { return fmt.Sprintf("9N3K%07X", i+1) }

func nxosTemplate(f *Fleet, i int) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("version %s Bios:version", nxosVersion)
	w("hostname %s", f.hostnameOf(i))
	w("")
	w("feature bgp")
	w("feature lldp")
	w("feature scp-server")
	w("")
	w("username admin password 5 $5$devsim$NotARealHashNotARealHashNotARealHash0 role network-admin")
	w("ip domain-lookup")
	w("ip domain-name %s", domainName)
	w("ntp server %s use-vrf management", mgmtGateway)
	w("")
	w("vlan 10")
	w("  name hosts")
	w("")
	w("vrf context management")
	w("  ip route 0.0.0.0/0 %s", mgmtGateway)
	w("")
	w("interface Ethernet1/1")
	w("  description hosts")
	w("  switchport access vlan 10")
	nbrs := map[string]neighbor{}
	for _, n := range f.neighbors(i) {
		nbrs[n.localPort] = n
	}
	for _, port := range []string{"Ethernet1/2", "Ethernet1/3"} {
		w("")
		w("interface %s", port)
		if n, ok := nbrs[port]; ok {
			w("  description to %s %s", f.hostnameOf(n.index), n.remotePort)
			w("  no switchport")
			w("  ip address %s/31", n.localIP)
			w("  no shutdown")
		}
	}
	w("")
	w("interface Ethernet1/4")
	w("  shutdown")
	w("")
	w("interface mgmt0")
	w("  vrf member management")
	w("  ip address %s/16", mgmtIP(i))
	w("")
	w("interface loopback0")
	w("  ip address %s/32", loopbackIP(i))
	w("line console")
	w("line vty")
	w("router bgp %s", asnOf(i))
	w("  router-id %s", loopbackIP(i))
	for _, n := range f.neighbors(i) {
		w("  neighbor %s", n.remoteIP)
		w("    remote-as %s", asnOf(n.index))
		w("    address-family ipv4 unicast")
	}
	return b.String()
}

// nxosRenderBody renders a configuration tree as NX-OS prints it: two-space indentation, a
// blank line around blocks, no "!" lines and no "end".
func nxosRenderBody(c *config) string {
	var b strings.Builder
	prevBlock, prevLine := false, ""
	for i, s := range c.items {
		isBlock := len(s.children) > 0 || nxosOpener("", strings.Fields(s.line)) != ""
		lines := strings.HasPrefix(prevLine, "line ") && strings.HasPrefix(s.line, "line ")
		if i > 0 && (isBlock || prevBlock) && !lines {
			b.WriteByte('\n')
		}
		prevLine = s.line
		b.WriteString(s.line)
		b.WriteByte('\n')
		nxosRenderChildren(&b, s.children, 1, s.line)
		prevBlock = isBlock
	}
	return b.String()
}

func nxosRenderChildren(b *strings.Builder, list []*stanza, depth int, parent string) {
	if strings.HasPrefix(parent, "interface ") {
		list = slices.Clone(list)
		slices.SortStableFunc(list, func(x, y *stanza) int { return nxosIfRank(x.line) - nxosIfRank(y.line) })
	}
	for _, s := range list {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(s.line)
		b.WriteByte('\n')
		nxosRenderChildren(b, s.children, depth+1, s.line)
	}
}

// nxosIfRank orders interface sub-commands the way NX-OS prints them.
func nxosIfRank(line string) int {
	switch f := strings.Fields(strings.TrimPrefix(line, "no ")); f[0] {
	case "description":
		return 0
	case "switchport":
		return 1
	case "vrf", "encapsulation":
		return 2
	case "mtu":
		return 3
	case "ip":
		return 4
	case "ipv6":
		return 5
	case "shutdown":
		return 9
	}
	return 6
}

func nxosConfigPrompt(s *shell) string {
	if len(s.path) == 0 {
		return "config"
	}
	last := s.path[len(s.path)-1]
	switch kind := s.p.d.kindAt(s.path); kind {
	case "interface":
		return "config-if"
	case "router":
		return "config-router"
	case "router-af":
		return "config-router-af"
	case "router-vrf":
		return "config-router-vrf"
	case "router-nbr":
		return "config-router-neighbor"
	case "router-nbr-af":
		return "config-router-neighbor-af"
	case "vrf":
		return "config-vrf"
	case "vrf-af":
		return "config-vrf-af"
	case "line":
		if strings.HasSuffix(last, "console") {
			return "config-console"
		}
		return "config-line"
	case "vpc":
		return "config-vpc-domain"
	case "generic":
		return "config"
	default:
		return "config-" + kind
	}
}

// nxosConfigure enters configuration mode ("configure" and "configure terminal" alike).
func nxosConfigure(s *shell, _ []string) string {
	s.mode = modeConfig
	s.path = nil
	return "Enter configuration commands, one per line. End with CNTL/Z."
}

// nxosUptime formats "3 day(s), 2 hour(s), 7 minute(s), 0 second(s)".
func nxosUptime(d time.Duration) string {
	sec := int(d / time.Second)
	return fmt.Sprintf("%d day(s), %d hour(s), %d minute(s), %d second(s)", sec/86400, sec/3600%24, sec/60%60, sec%60)
}

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

func nxosSerial(i int) string { return fmt.Sprintf("9N3K%07X", i+1) }

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

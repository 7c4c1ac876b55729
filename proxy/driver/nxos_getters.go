package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// NX-OS getters, parsing the CLI text the way NAPALM's nxos_ssh driver does.

// nxosIfNames maps interface name prefixes to netutils' canonical long names (the subset of
// netutils.constants.BASE_INTERFACES NX-OS uses); an unknown prefix is left as is.
var nxosIfNames = map[string]string{
	"Ethernet": "Ethernet", "Eth": "Ethernet", "eth": "Ethernet", "Et": "Ethernet", "et": "Ethernet",
	"Loopback": "Loopback", "loopback": "Loopback", "Lo": "Loopback", "lo": "Loopback",
	"Management": "Management", "Mgmt": "Management", "mgmt": "Management", "Ma": "Management",
	"PortChannel": "Port-channel", "Port-channel": "Port-channel", "Port-Channel": "Port-channel",
	"port-channel": "Port-channel", "po": "Port-channel", "Po": "Port-channel",
	"n": "nve", "nv": "nve", "nve": "nve", "Tunnel": "Tunnel", "Tun": "Tunnel", "Tu": "Tunnel",
	"VLAN": "VLAN", "V": "VLAN", "Vl": "VLAN", "vlan": "VLAN", "Vlan-interface": "VLAN",
}

var nxosIfSplitRe = regexp.MustCompile(`^([A-Za-z][A-Za-z-]*?)(\d.*)$`)

// nxosCanonical is netutils' canonical_interface_name for NX-OS names ("Eth1/2" ->
// "Ethernet1/2", "mgmt0" -> "Management0", "Po10" -> "Port-channel10", "Vlan10" unchanged).
func nxosCanonical(name string) string {
	m := nxosIfSplitRe.FindStringSubmatch(name)
	if m == nil {
		return name
	}
	if long, ok := nxosIfNames[m[1]]; ok {
		return long + m[2]
	}
	return name
}

// missingConfigLines returns the lines of candidate that base lacks, each preceded by the
// parent lines (by indentation) it needs, once (netutils' diff_network_config, which NAPALM's
// nxos drivers use for merge diffs). Blank and "!" lines are ignored.
func missingConfigLines(candidate, base string) string {
	type entry struct {
		line    string
		parents []string
	}
	parse := func(text string) []entry {
		var out []entry
		type level struct {
			indent int
			line   string
		}
		var stack []level
		for _, l := range configLines(text) {
			t := strings.TrimSpace(l)
			if t == "" || strings.HasPrefix(t, "!") {
				continue
			}
			ind := len(l) - len(strings.TrimLeft(l, " \t"))
			for len(stack) > 0 && stack[len(stack)-1].indent >= ind {
				stack = stack[:len(stack)-1]
			}
			parents := make([]string, len(stack))
			for i, p := range stack {
				parents[i] = p.line
			}
			out = append(out, entry{line: l, parents: parents})
			stack = append(stack, level{indent: ind, line: l})
		}
		return out
	}
	key := func(e entry) string { return strings.Join(append(slices.Clone(e.parents), e.line), "\x00") }
	have := map[string]bool{}
	for _, e := range parse(base) {
		have[key(e)] = true
	}
	var need []string
	seen := map[string]bool{}
	for _, e := range parse(candidate) {
		if have[key(e)] {
			continue
		}
		for _, p := range e.parents {
			if !seen[p] {
				seen[p] = true
				need = append(need, p)
			}
		}
		seen[e.line] = true
		need = append(need, e.line)
	}
	return strings.Join(need, "\n")
}

var (
	nxosModelRe1   = regexp.MustCompile(`.cisco (.*) \(`)
	nxosModelRe2   = regexp.MustCompile(`.cisco (.* [cC]hassis)`)
	nxosDomainRe   = regexp.MustCompile(`.*Default domain.*is (.*)$`)
	nxosInvTextRe  = regexp.MustCompile(`(?m)^NAME:\s+"(.*)",.*\n^PID:.*SN:\s+(\w*)`)
	nxosStatusSkip = regexp.MustCompile(`^(?:-{9,}|Port .*| .*)$`)
)

// nxosInventorySerial reads the chassis serial number from "show inventory | json".
func nxosInventorySerial(out string) (string, bool) {
	var v struct {
		Table json.RawMessage `json:"TABLE_inv"`
	}
	if err := json.Unmarshal([]byte(jsonBody(out)), &v); err != nil || v.Table == nil {
		return "", false
	}
	var t struct {
		Row json.RawMessage `json:"ROW_inv"`
	}
	if json.Unmarshal(v.Table, &t) != nil {
		return "", false
	}
	type row struct {
		Name   string `json:"name"`
		Serial string `json:"serialnum"`
	}
	var rows []row
	if json.Unmarshal(t.Row, &rows) != nil {
		var one row
		if json.Unmarshal(t.Row, &one) != nil {
			return "", false
		}
		rows = []row{one}
	}
	for _, r := range rows {
		if r.Name == "Chassis" || r.Name == `"Chassis"` {
			return r.Serial, true
		}
	}
	return "", true
}

// GetFacts implements Driver from show version, show hosts, show interface status, show
// hostname and show inventory (JSON, else text), as NAPALM nxos_ssh.
func (d *nxosDriver) GetFacts(ctx context.Context) (Facts, error) {
	f := Facts{Vendor: "Cisco", Uptime: -1, InterfaceList: []string{}}
	err := d.s.query(ctx, func(o runner) error {
		outs := map[string]string{}
		for _, c := range []string{"show version", "show hosts", "show interface status", "show hostname"} {
			out, err := o.show(c)
			if err != nil {
				return err
			}
			outs[c] = out
		}
		inv, failed, err := o.send("show inventory | json")
		if err != nil {
			return err
		}
		sn, ok := "", false
		if !failed {
			sn, ok = nxosInventorySerial(inv)
		}
		if !ok {
			text, err := o.show("show inventory")
			if err != nil {
				return err
			}
			for _, m := range nxosInvTextRe.FindAllStringSubmatch(text, -1) {
				if m[1] == "Chassis" {
					sn = m[2]
					break
				}
			}
		}
		f.SerialNumber = sn
		for l := range strings.SplitSeq(outs["show version"], "\n") {
			if _, up, ok := strings.Cut(l, " uptime is "); ok {
				f.Uptime = float64(parseUptimeWords(up))
			}
			if t := strings.TrimSpace(l); strings.Contains(l, "system: ") || strings.HasPrefix(t, "NXOS: version") {
				if fl := strings.Fields(t); len(fl) >= 3 {
					f.OSVersion = fl[2]
				}
			}
			if strings.Contains(l, "cisco") && strings.Contains(l, "hassis") {
				if m := nxosModelRe1.FindStringSubmatch(l); m != nil {
					f.Model = strings.TrimSpace(m[1])
				}
				if m := nxosModelRe2.FindStringSubmatch(l); m != nil {
					f.Model = strings.TrimSpace(m[1])
				}
			}
		}
		f.Hostname = strings.TrimSpace(outs["show hostname"])
		domain := ""
		for l := range strings.SplitSeq(outs["show hosts"], "\n") {
			if m := nxosDomainRe.FindStringSubmatch(strings.TrimRight(l, " \r")); m != nil {
				domain = strings.TrimSpace(m[1])
				break
			}
		}
		switch {
		case strings.Count(f.Hostname, ".") >= 2:
			f.FQDN = f.Hostname
			if domain != "" {
				f.Hostname = strings.Trim(strings.TrimSuffix(f.Hostname, domain), ".")
			}
		case domain != "":
			f.FQDN = f.Hostname + "." + domain
		}
		for l := range strings.SplitSeq(strings.TrimSpace(outs["show interface status"]), "\n") {
			l = strings.TrimRight(l, " \r")
			if l == "" || nxosStatusSkip.MatchString(l) {
				continue
			}
			f.InterfaceList = append(f.InterfaceList, nxosCanonical(strings.Fields(l)[0]))
		}
		return nil
	})
	return f, err
}

var (
	nxosIfProtoRe    = regexp.MustCompile(`(?m)^(\S+?)\s+is\s+(.+?),\s+line\s+protocol\s+is\s+(\S+).*$`)
	nxosIfStateRe    = regexp.MustCompile(`^(\S+) is (\S+)`)
	nxosIfEnabled1Re = regexp.MustCompile(`(?m)^admin state is (\S+)$`)
	nxosIfEnabled2Re = regexp.MustCompile(`(?m)^admin state is (\S+), `)
	nxosIfAdminDown  = regexp.MustCompile(`(?m)^.* is down.*Administratively down.*$`)
	nxosIfMACRe      = regexp.MustCompile(`(?m)^\s+Hardware:\s+(.*),\s+address:\s+(\S+) `)
	nxosIfSpeedRe    = regexp.MustCompile(`(?m)\s+(?:MTU (\S+)\s+bytes)?,\s+BW\s+(\S+)\s+(\S+).*$`)
	nxosIfNVERe      = regexp.MustCompile(`(?m)^.* Hardware: (\S+)$`)
	nxosIfMTURe      = regexp.MustCompile(`(?m)\s+MTU (\S+)\s+bytes.*$`)
	nxosIfDesc1Re    = regexp.MustCompile(`(?m)^\s+Description:\s+(.*)  (?:MTU|Internet)`)
	nxosIfDesc2Re    = regexp.MustCompile(`(?m)^\s+Description:\s+(.*)$`)
)

// nxosInterface parses one "show interface" section (NAPALM's parse_intf_section).
func nxosInterface(sec string) (string, Interface, bool) {
	var name string
	e := Interface{LastFlapped: -1}
	if m := nxosIfProtoRe.FindStringSubmatch(sec); m != nil {
		name = m[1]
		e.IsEnabled = !strings.Contains(strings.ToLower(m[2]), "admin")
		e.IsUp = strings.Contains(m[3], "up")
	} else {
		m := nxosIfStateRe.FindStringSubmatch(sec)
		if m == nil {
			return "", e, false
		}
		name = nxosCanonical(m[1])
		e.IsUp = m[2] == "up"
		e.IsEnabled = true
		if strings.Contains(sec, "admin state is") {
			m1 := nxosIfEnabled1Re.FindStringSubmatch(sec)
			if m1 == nil {
				m1 = nxosIfEnabled2Re.FindStringSubmatch(sec)
			}
			if m1 == nil {
				return "", e, false
			}
			e.IsEnabled = strings.Contains(m1[1], "up")
		} else if !e.IsUp && nxosIfAdminDown.MatchString(sec) {
			e.IsEnabled = false
		}
	}
	if m := nxosIfMACRe.FindStringSubmatch(sec); m != nil {
		e.MACAddress = macOr(m[2])
	}
	if m := nxosIfNVERe.FindStringSubmatch(sec); m != nil && m[1] == "NVE" {
		if mm := nxosIfMTURe.FindStringSubmatch(sec); mm != nil {
			e.MTU = atoi(mm[1], -1)
		}
		e.Speed = -1
	} else if m := nxosIfSpeedRe.FindStringSubmatch(sec); m != nil {
		e.MTU = atoi(m[1], -1)
		unit := strings.TrimRight(m[3], ",")
		if unit != "Kbit" && unit != "Kbit/sec" {
			return "", e, false
		}
		e.Speed = atof(m[2], 0) / 1000
	} else {
		return "", e, false
	}
	if m := nxosIfDesc1Re.FindStringSubmatch(sec); m != nil {
		e.Description = m[1]
	} else if m := nxosIfDesc2Re.FindStringSubmatch(sec); m != nil {
		e.Description = strings.TrimRight(m[1], " \r")
	}
	return name, e, true
}

// GetInterfaces implements Driver from show interface. As in NAPALM, names come out
// canonical (Management0, Loopback0, Port-channel1) except on SVI-style sections ("Vlan10
// is up, line protocol is up"); last_flapped is -1.
func (d *nxosDriver) GetInterfaces(ctx context.Context) (map[string]Interface, error) {
	res := map[string]Interface{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show interface")
		if err != nil {
			return err
		}
		var sec []string
		flush := func() error {
			if len(sec) == 0 {
				return nil
			}
			text := strings.Join(sec, "\n")
			sec = sec[:0]
			name, e, ok := nxosInterface(text)
			if !ok {
				return o.errf(ErrCommand, "show interface", fmt.Errorf("unexpected interface section: %s", deviceMessage(text)))
			}
			res[name] = e
			return nil
		}
		for l := range strings.SplitSeq(out, "\n") {
			l = strings.TrimRight(l, "\r")
			header := l != "" && l[0] != ' ' && strings.Contains(l, " is ") && !strings.HasPrefix(l, "admin state")
			if header {
				if err := flush(); err != nil {
					return err
				}
			}
			// Text before the first interface (an echoed command) is
			// dropped, as NAPALM's section split does.
			if len(sec) > 0 || header {
				sec = append(sec, l)
			}
		}
		return flush()
	})
	return res, err
}

// GetInterfacesIP implements Driver from show ip interface vrf all and show ipv6 interface
// vrf all (names as the device prints them: "mgmt0", "loopback0").
func (d *nxosDriver) GetInterfacesIP(ctx context.Context) (map[string]InterfaceIP, error) {
	res := map[string]InterfaceIP{}
	err := d.s.query(ctx, func(o runner) error {
		v4, err := o.show("show ip interface vrf all")
		if err != nil {
			return err
		}
		v6, failed, err := o.send("show ipv6 interface vrf all")
		if err != nil {
			return err
		}
		iface := ""
		for l := range strings.SplitSeq(v4, "\n") {
			if strings.Contains(l, "Interface status") {
				iface, _, _ = strings.Cut(l, ",")
				continue
			}
			if !strings.Contains(l, "IP address") || iface == "" {
				continue
			}
			f := strings.Fields(l)
			e := res[iface]
			if e.IPv4 == nil {
				e.IPv4 = map[string]IPPrefix{}
			}
			if len(f) >= 3 {
				ip := strings.TrimSuffix(f[2], ",")
				if ip != "none" {
					plen := -1
					if len(f) >= 6 {
						if _, p, ok := strings.Cut(f[5], "/"); ok {
							plen = atoi(p, -1)
						}
					}
					e.IPv4[ip] = IPPrefix{PrefixLength: plen}
				}
			}
			res[iface] = e
		}
		if failed {
			return nil
		}
		iface = ""
		for l := range strings.SplitSeq(v6, "\n") {
			if strings.Contains(l, "Interface status") {
				iface, _, _ = strings.Cut(l, ",")
				continue
			}
			if iface == "" {
				continue
			}
			e := res[iface]
			if e.IPv6 == nil {
				e.IPv6 = map[string]IPPrefix{}
			}
			res[iface] = e
			if !strings.Contains(l, "VALID") {
				continue
			}
			f := strings.Fields(strings.TrimSpace(l))
			switch {
			case strings.Contains(l, "link-local address") && len(f) >= 4:
				e.IPv6[strings.ToLower(f[3])] = IPPrefix{PrefixLength: 64}
			case strings.Contains(l, "IPv6 address") && len(f) >= 3:
				e.IPv6[strings.ToLower(f[2])] = IPPrefix{PrefixLength: 64}
			case len(f) >= 1:
				if a, p, ok := strings.Cut(f[0], "/"); ok {
					e.IPv6[strings.ToLower(a)] = IPPrefix{PrefixLength: atoi(p, -1)}
				}
			}
		}
		return nil
	})
	return res, err
}

var (
	nxosARPHeadRe  = regexp.MustCompile(`(?m)^Address\s+Age.*Interface.*$`)
	nxosARPFlagsRe = regexp.MustCompile(`\s+[*+#D]{1,4}\s*$`)
	nxosIPv4Re     = regexp.MustCompile(`^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$`)
)

// nxosARP reads show ip arp vrf VRF|all (ages in seconds, interface names
// as printed); a row it does not know fails the call.
var nxosARP = &arpSpec{
	all: "show ip arp vrf all | exc INCOMPLETE", vrf: "show ip arp vrf %s | exc INCOMPLETE",
	rows: func(o runner, cmd, out string) ([][]string, error) {
		parts := nxosARPHeadRe.Split(out, -1)
		if len(parts) != 2 {
			return nil, o.errf(ErrCommand, cmd, fmt.Errorf("unexpected ARP table: %s", deviceMessage(out)))
		}
		var rows [][]string
		for l := range strings.SplitSeq(strings.TrimSpace(parts[1]), "\n") {
			l = nxosARPFlagsRe.ReplaceAllString(strings.TrimRight(l, "\r"), "")
			f := strings.Fields(l)
			if len(f) == 0 {
				continue
			}
			if len(f) != 4 || !nxosIPv4Re.MatchString(f[0]) || !ciscoMACRe.MatchString(f[2]) {
				return nil, o.errf(ErrCommand, cmd, fmt.Errorf("unexpected ARP entry %q", l))
			}
			rows = append(rows, f)
		}
		return rows, nil
	},
	ip: 0, age: 1, mac: 2, iface: 3,
	ageOf: func(s string) float64 {
		switch {
		case s == "-":
		case strings.Contains(s, ":"):
			if secs, ok := nxosHMS(s); ok {
				return float64(secs)
			}
		default:
			return math.Round(atof(s, -1)*10) / 10
		}
		return -1
	},
	macOf: normalizeMAC,
}

// GetArpTable implements Driver from show ip arp vrf VRF|all.
func (d *nxosDriver) GetArpTable(ctx context.Context, vrf string) ([]ARPEntry, error) {
	return getARPTable(ctx, d.s, nxosARP, vrf)
}

// nxosHMS converts "hh:mm:ss" to seconds.
func nxosHMS(s string) (int, bool) {
	p := strings.Split(s, ":")
	if len(p) != 3 {
		return 0, false
	}
	h, e1 := strconv.Atoi(p[0])
	m, e2 := strconv.Atoi(p[1])
	sec, e3 := strconv.Atoi(p[2])
	if e1 != nil || e2 != nil || e3 != nil {
		return 0, false
	}
	return h*3600 + m*60 + sec, true
}

// nxosLLDP reads show lldp neighbors [interface X] detail: the fields
// NAPALM's TextFSM template reads (the first line of the system
// description; chassis id and port id as printed), a neighbour recorded
// at its "Enabled Capabilities" line.
var nxosLLDP = &lldpSpec{
	all: "show lldp neighbors detail", one: "show lldp neighbors interface %s detail",
	trimLine: " \r",
	rules: []lldpRule{
		{re: regexp.MustCompile(`^(Chassis id|Port id|Local Port id|Port Description|System Name|System Description|System Capabilities|Enabled Capabilities):\s+(.*)$`)},
	},
	records: lldpEnabledCaps,
	always:  true,
	value:   blankNotAdvertised,
}

// GetLLDPNeighborsDetail implements Driver from show lldp neighbors
// [interface X] detail.
func (d *nxosDriver) GetLLDPNeighborsDetail(ctx context.Context, iface string) (map[string][]LLDPNeighborDetail, error) {
	if err := safeArg(d.s, "interface", iface); err != nil {
		return nil, err
	}
	res := map[string][]LLDPNeighborDetail{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show(nxosLLDP.command(iface))
		if err != nil {
			return err
		}
		for _, r := range parseLLDPDetail(nxosLLDP, out) {
			local := r[lldpLocal]
			if local == "" {
				local = iface
			}
			name := nxosCanonical(local)
			res[name] = append(res[name], r.detail(lldpCapabCodes, false))
		}
		return nil
	})
	return res, err
}

// GetLLDPNeighbors implements Driver from the LLDP details, as NAPALM nxos does.
func (d *nxosDriver) GetLLDPNeighbors(ctx context.Context) (map[string][]LLDPNeighbor, error) {
	det, err := d.GetLLDPNeighborsDetail(ctx, "")
	if err != nil {
		return nil, err
	}
	return lldpFromDetail(det, "N/A", nil), nil
}

var (
	nxosMACLeadRe  = regexp.MustCompile(`(?m)^(?:[*+GOCE]|\(R\)|\(T\)|\(F\))`)
	nxosMACLine1Re = regexp.MustCompile(`^\s+\d{1,4}\s+[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+`)
	nxosMACLine2Re = regexp.MustCompile(`^\s+-\s+[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+`)
	nxosMACSkipRe  = regexp.MustCompile(`^(?:Legend|\s+\* - primary entry|\s+age -|\s+VLAN|------|\s*$)`)
	nxosMACRuleRe  = regexp.MustCompile(`(?m)^----.*`)
	nxosNumRe      = regexp.MustCompile(`\d+`)
	nxosShutRe     = regexp.MustCompile(`Shut.*Admin`)
)

// GetMACAddressTable implements Driver from show mac address-table (moves and last_move are
// -1, as in NAPALM nxos_ssh).
func (d *nxosDriver) GetMACAddressTable(ctx context.Context) ([]MACEntry, error) {
	res := []MACEntry{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show mac address-table")
		if err != nil {
			return err
		}
		parts := nxosMACRuleRe.Split(out, -1)
		if len(parts) < 2 {
			return nil
		}
		body := strings.TrimSpace(strings.Join(parts[1:], "\n"))
		body = nxosMACLeadRe.ReplaceAllString(body, "")
		body = strings.ReplaceAll(body, "vPC Peer-Link", "vPC-Peer-Link")
		entry := func(vlan, mac, typ, iface string) MACEntry {
			e := MACEntry{MAC: normalizeMAC(mac), Moves: -1, LastMove: -1}
			lt := strings.ToLower(typ)
			if lt == "self" || lt == "static" || lt == "system" {
				e.Static = true
				if strings.EqualFold(vlan, "all") || vlan == "-" {
					vlan = "0"
				}
				li := strings.ToLower(iface)
				if li == "cpu" || strings.Contains(li, "router") || strings.Contains(li, "switch") {
					iface = ""
				}
			}
			e.Active = lt == "dynamic"
			e.VLAN = atoi(vlan, 0)
			e.Interface = nxosCanonical(iface)
			return e
		}
		var vlan, mac, typ string
		for l := range strings.SplitSeq(body, "\n") {
			l = strings.TrimRight(l, "\r")
			if nxosMACSkipRe.MatchString(l) {
				continue
			}
			l = " " + l // the first line lost its indent to TrimSpace
			f := strings.Fields(l)
			switch {
			case (nxosMACLine1Re.MatchString(l) || nxosMACLine2Re.MatchString(l)) && len(f) >= 7:
				vlan, mac, typ = f[0], f[1], f[2]
				for _, iface := range f[6:] {
					res = append(res, entry(vlan, mac, typ, iface))
				}
			case mac != "" && len(f) < 7:
				for _, iface := range f {
					res = append(res, entry(vlan, mac, typ, iface))
				}
			default:
				return o.errf(ErrCommand, "show mac address-table", fmt.Errorf("unexpected line %q", strings.TrimSpace(l)))
			}
		}
		return nil
	})
	return res, err
}

var nxosCPURe = regexp.MustCompile(`^\s+CPU(\d+) states\s+:.*kernel,\s+([0-9]+\.[0-9]+)% idle`)

// GetEnvironment implements Driver from show system resources and show environment
// temperature; fans and power are NAPALM's "invalid" placeholders.
func (d *nxosDriver) GetEnvironment(ctx context.Context) (Environment, error) {
	env := Environment{
		Fans:        map[string]Fan{"invalid": {Status: true}},
		Temperature: map[string]Temperature{},
		Power:       map[string]Power{"invalid": {Status: true, Output: -1, Capacity: -1}},
		CPU:         map[CPUKey]CPU{CPUIndex(0): {Usage: -1}},
	}
	err := d.s.query(ctx, func(o runner) error {
		res, err := o.show("show system resources")
		if err != nil {
			return err
		}
		memOK := false
		for l := range strings.SplitSeq(res, "\n") {
			if m := nxosCPURe.FindStringSubmatch(l); m != nil {
				env.CPU[CPUIndex(atoi(m[1], 0))] = CPU{Usage: math.Round((100-atof(m[2], 100))*100) / 100}
			}
			if _, rest, ok := strings.Cut(l, "Memory usage:"); ok {
				p := strings.Split(rest, ",")
				if len(p) == 3 {
					total, _ := strconv.ParseInt(nxosNumRe.FindString(p[0]), 10, 64)
					used, _ := strconv.ParseInt(nxosNumRe.FindString(p[1]), 10, 64)
					env.Memory = Memory{AvailableRAM: total, UsedRAM: used}
					memOK = true
				}
			}
		}
		if !memOK {
			return o.errf(ErrCommand, "show system resources", fmt.Errorf("no memory usage in: %s", deviceMessage(res)))
		}
		temp, err := o.show("show environment temperature")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(temp, "\n") {
			f := strings.Fields(l)
			if len(f) != 6 || l[0] < '0' || l[0] > '9' {
				continue
			}
			major, minor, cur := atof(f[2], 0), atof(f[3], 0), atof(f[4], 0)
			env.Temperature[f[1]+"-"+f[0]] = Temperature{Temperature: cur, IsAlert: cur >= minor, IsCritical: cur >= major}
		}
		return nil
	})
	return env, err
}

// nxosNTP lists the addresses of "show ntp peers" of one kind ("Server" or "Peer"). NAPALM's
// nxos_ssh returns every entry for both getters; here servers and peers are told apart.
func (d *nxosDriver) nxosNTP(ctx context.Context, kind string) (map[string]struct{}, error) {
	res := map[string]struct{}{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show ntp peers")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(out, "\n") {
			f := strings.Fields(l)
			if len(f) < 2 || strings.Contains(l, "-----") || strings.Contains(l, "Peer IP Address") {
				continue
			}
			// NAPALM nxos_ssh lists every association for both getters.
			res[f[0]] = struct{}{}
		}
		return nil
	})
	return res, err
}

// GetNTPServers implements Driver from show ntp peers (the "Server" entries).
func (d *nxosDriver) GetNTPServers(ctx context.Context) (map[string]NTPServer, error) {
	m, err := d.nxosNTP(ctx, "Server")
	if err != nil {
		return nil, err
	}
	res := make(map[string]NTPServer, len(m))
	for k := range m {
		res[k] = NTPServer{}
	}
	return res, nil
}

// GetNTPPeers implements Driver from show ntp peers (the "Peer" entries).
func (d *nxosDriver) GetNTPPeers(ctx context.Context) (map[string]NTPPeer, error) {
	m, err := d.nxosNTP(ctx, "Peer")
	if err != nil {
		return nil, err
	}
	res := make(map[string]NTPPeer, len(m))
	for k := range m {
		res[k] = NTPPeer{}
	}
	return res, nil
}

var (
	nxosBGPVRFRe   = regexp.MustCompile(`(?m)^BGP summary information for VRF\s+(\S+),`)
	nxosBGPAFIRe   = regexp.MustCompile(`(?m)^BGP summary information.*address family (\S+ (?:Unicast|EVPN))`)
	nxosBGPRIDRe   = regexp.MustCompile(`(?m)^BGP router identifier\s+(\S+),\s+local AS number\s+(\S+)`)
	nxosBGPTableRe = regexp.MustCompile(`(?m)^Neighbor\s+.*PfxRcd\s*$`)
)

// GetBGPNeighbors implements Driver from show bgp all summary vrf all (NAPALM's parser:
// accepted and sent prefixes are -1, descriptions ""). The remote router id is not in the
// summary and is left "" (NAPALM puts "0.0.0.0"). Address families of one VRF are merged
// (NAPALM keeps the last section of a VRF only).
func (d *nxosDriver) GetBGPNeighbors(ctx context.Context) (map[string]BGPVRF, error) {
	res := map[string]BGPVRF{}
	err := d.s.query(ctx, func(o runner) error {
		out, failed, err := o.send("show bgp all summary vrf all")
		if err != nil {
			return err
		}
		if failed || !strings.Contains(out, "BGP summary information for ") {
			return nil // BGP not running
		}
		secs := strings.Split(strings.TrimSpace(out), "BGP summary information for ")
		for _, sec := range secs[1:] {
			sec = "BGP summary information for " + sec
			if len(strings.Split(strings.TrimSpace(sec), "\n")) <= 1 {
				continue
			}
			vm, am, rm := nxosBGPVRFRe.FindStringSubmatch(sec), nxosBGPAFIRe.FindStringSubmatch(sec), nxosBGPRIDRe.FindStringSubmatch(sec)
			if vm == nil || am == nil || rm == nil {
				return o.errf(ErrCommand, "show bgp all summary vrf all", fmt.Errorf("unexpected section: %s", deviceMessage(sec)))
			}
			vrf := vm[1]
			if strings.EqualFold(vrf, "default") {
				vrf = "global"
			}
			afi := strings.ToLower(strings.Fields(am[1])[0])
			if afi != "ipv4" && afi != "ipv6" && afi != "l2vpn" {
				return o.errf(ErrCommand, "show bgp all summary vrf all", fmt.Errorf("unsupported address family %q", am[1]))
			}
			localAS, err := asNumber(rm[2])
			if err != nil {
				return err
			}
			parts := nxosBGPTableRe.Split(sec, -1)
			if len(parts) != 2 {
				return o.errf(ErrCommand, "show bgp all summary vrf all", fmt.Errorf("no neighbor table in: %s", deviceMessage(sec)))
			}
			// Each section replaces its VRF (NAPALM's bgp_dict.update):
			// the last address family of a VRF is the one reported.
			v := BGPVRF{RouterID: rm[1], Peers: map[string]BGPPeer{}}
			for _, f := range nxosBGPRows(parts[1]) {
				remoteAS, err := asNumber(f[2])
				if err != nil {
					return err
				}
				state := strings.Join(f[9:], " ")
				recv, convErr := strconv.Atoi(state)
				up := convErr == nil
				uptime := -1
				if up {
					uptime = bgpUptime(f[8])
				} else {
					recv = -1
				}
				// NAPALM nxos_ssh hard-codes the remote router id.
				p := BGPPeer{LocalAS: localAS, RemoteAS: remoteAS, RemoteID: "0.0.0.0", IsUp: up, Uptime: uptime,
					IsEnabled: !nxosShutRe.MatchString(state), AddressFamily: map[string]BGPAFStats{}}
				p.AddressFamily[afi] = BGPAFStats{ReceivedPrefixes: recv, AcceptedPrefixes: -1, SentPrefixes: -1}
				v.Peers[f[0]] = p
			}
			res[vrf] = v
		}
		return nil
	})
	return res, err
}

// nxosBGPRows splits the neighbor table into rows of fields, joining rows NX-OS wraps after a
// long address or AS number.
func nxosBGPRows(table string) [][]string {
	var rows [][]string
	var cur []string
	for l := range strings.SplitSeq(table, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		cur = append(cur, f...)
		if len(cur) >= 10 && !(len(cur) == 10 && cur[9] == "Shut") {
			rows = append(rows, cur)
			cur = nil
		}
	}
	return rows
}

// Ping implements Driver like NAPALM nxos: "ping DEST timeout T packet-size S count C
// [source SRC] [vrf VRF]" (ping6 for IPv6).
func (d *nxosDriver) Ping(ctx context.Context, p PingOptions) (PingResult, error) {
	pingDefaults(&p)
	if err := checkProbeArgs(d.s, "ping", p.Destination, p.Source, p.VRF); err != nil {
		return PingResult{}, err
	}
	version := ""
	if strings.Contains(p.Destination, ":") {
		version = "6"
	}
	cmd := fmt.Sprintf("ping%s %s timeout %d packet-size %d count %d", version, p.Destination, p.Timeout, p.Size, p.Count)
	if p.Source != "" {
		cmd += " source " + p.Source
	}
	if p.VRF != "" {
		cmd += " vrf " + p.VRF
	}
	var res PingResult
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send(cmd)
		if err != nil {
			return err
		}
		res = parseNXOSPing(out, version == "6")
		return nil
	})
	return res, err
}

// parseNXOSPing reads NX-OS ping output as NAPALM does: "connect:" is an error, "PING" a
// result with one entry per reply.
func parseNXOSPing(out string, v6 bool) PingResult {
	var res PingResult
	switch {
	case strings.Contains(out, "connect:"):
		res.Error = out
	case strings.Contains(out, "PING"):
		s := &PingSuccess{Results: []PingProbeRT{}}
		for l := range strings.SplitSeq(out, "\n") {
			f := strings.Fields(l)
			switch {
			case strings.Contains(l, "icmp") && len(f) >= 7 && f[1] == "bytes":
				t := f[6]
				if v6 {
					t = f[5]
				}
				s.Results = append(s.Results, PingProbeRT{IPAddress: strings.TrimSuffix(f[3], ":"),
					RTT: atof(strings.TrimPrefix(t, "time="), 0)})
			case strings.Contains(l, "packets transmitted") && len(f) >= 4:
				s.ProbesSent = atoi(f[0], 0)
				s.PacketLoss = s.ProbesSent - atoi(f[3], 0)
			case strings.Contains(l, "min/avg/max") && len(f) >= 4:
				v := strings.Split(f[3], "/")
				if len(v) == 3 {
					s.RTTMin, s.RTTAvg, s.RTTMax = atof(v[0], 0), atof(v[1], 0), atof(v[2], 0)
				}
			}
		}
		res.Success = s
	default:
		res.Error = deviceMessage(out)
	}
	return res
}

// Traceroute implements Driver like NAPALM nxos: "traceroute DEST [source SRC] [vrf VRF]";
// a probe without answer ("*") gets host "*", address "*" and rtt 5000.
func (d *nxosDriver) Traceroute(ctx context.Context, t TracerouteOptions) (TracerouteResult, error) {
	traceDefaults(&t)
	if err := checkProbeArgs(d.s, "traceroute", t.Destination, t.Source, t.VRF); err != nil {
		return TracerouteResult{}, err
	}
	cmd := "traceroute " + t.Destination
	if strings.Contains(t.Destination, ":") {
		cmd = "traceroute6 " + t.Destination
	}
	if t.Source != "" {
		cmd += " source " + t.Source
	}
	if t.VRF != "" {
		cmd += " vrf " + t.VRF
	}
	var res TracerouteResult
	err := d.s.query(ctx, func(o runner) error {
		out, failed, err := o.send(cmd)
		if err != nil {
			return err
		}
		hops := parseNXOSTraceroute(out)
		if failed || len(hops) == 0 {
			res.Error = "Cannot execute traceroute on the device: " + cmd + ": " + deviceMessage(out)
			return nil
		}
		res.Success = hops
		return nil
	})
	return res, err
}

// nxosTraceHopRe is NAPALM nxos's hop line: the hop number and three probes,
// each "[host (ip) [(AS n)]] rtt ms" or "*".
var nxosTraceHopRe = regexp.MustCompile(`\s?(\d+)` + strings.Repeat(`\s+((([a-zA-Z0-9\.:-]*)\s+\(?([a-fA-F0-9\.:][^\)]*)\)?(?:\s+\(AS\s+[0-9]+\))?)?\s+(\d+\.\d+)\s+ms|\*)`, 3))

// parseNXOSTraceroute reads NX-OS traceroute output as NAPALM nxos: a probe
// without host and address took the previous probe's path ("*" before the
// first), a "*" probe is host and address "*" with rtt 5000 (5 s).
func parseNXOSTraceroute(out string) map[int]TracerouteHop {
	return parseHopTraceroute(nxosTraceHopRe, out, 5000)
}

// parseHopTraceroute is NAPALM's nxos/eos traceroute reader with the hop
// pattern re; a "*" or pathless probe has rtt nullRTT (milliseconds).
func parseHopTraceroute(re *regexp.Regexp, out string, nullRTT float64) map[int]TracerouteHop {
	res := map[int]TracerouteHop{}
	for l := range strings.SplitSeq(out, "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		hop, _ := strconv.Atoi(m[1])
		prevHost, prevIP := "*", "*"
		probes := map[int]TracerouteProbe{}
		for i := range 3 {
			g := m[2+i*5:]
			host, ip := g[2], napalmIP(g[3])
			rtt := nullRTT
			if g[4] != "" {
				rtt = atof(g[4], rtt)
			}
			if host == "" {
				host = prevHost
			}
			if ip == "" {
				ip = prevIP
			}
			if g[0] == "*" {
				host, ip = "*", "*"
			}
			probes[i+1] = TracerouteProbe{RTT: rtt, IPAddress: ip, HostName: host}
			prevHost, prevIP = host, ip
		}
		res[hop] = TracerouteHop{Probes: probes}
	}
	return res
}

package driver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
)

// IOS XR getters, parsed from the CLI text (NAPALM's iosxr driver reads the
// same data from the XML agent; the shapes are NAPALM's).

var (
	xrVersionRe = regexp.MustCompile(`Cisco IOS XR Software, Version (\S+)`)
	xrModelRe   = regexp.MustCompile(`(?m)^cisco (.+?) \(.*\) processor`)
	xrUptimeRe  = regexp.MustCompile(`(?m)^System uptime is (.+)$`)
	xrInvNameRe = regexp.MustCompile(`^NAME: "([^"]*)"`)
	xrInvSNRe   = regexp.MustCompile(`SN: (\S+)`)
)

// xrUptimeSeconds parses "1 year 3 weeks 2 days 4 hours 7 minutes".
func xrUptimeSeconds(s string) float64 {
	f := strings.Fields(strings.ReplaceAll(s, ",", " "))
	var total int64
	for i := 0; i+1 < len(f); i += 2 {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return -1
		}
		switch u := f[i+1]; {
		case strings.HasPrefix(u, "year"):
			total += n * yearSecs
		case strings.HasPrefix(u, "week"):
			total += n * weekSecs
		case strings.HasPrefix(u, "day"):
			total += n * daySecs
		case strings.HasPrefix(u, "hour"):
			total += n * hourSecs
		case strings.HasPrefix(u, "minute"):
			total += n * minuteSecs
		case strings.HasPrefix(u, "second"):
			total += n
		}
	}
	return float64(total)
}

// xrConfigValue returns the rest of the first "key ..." line of a running
// configuration section, "" when there is none.
func xrConfigValue(out, key string) string {
	for l := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), key+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// GetFacts implements Driver from show version, show inventory (the "Rack
// 0" serial number), the hostname and domain of the running configuration
// and show ipv4 interface brief (every interface).
func (d *iosxrDriver) GetFacts(ctx context.Context) (Facts, error) {
	if d.xml {
		return d.xmlFacts(ctx)
	}
	f := Facts{Vendor: "Cisco", Uptime: -1, InterfaceList: []string{}}
	err := d.s.query(ctx, func(o runner) error {
		ver, err := xrShow(o, "show version")
		if err != nil {
			return err
		}
		inv, err := xrShow(o, "show inventory")
		if err != nil {
			return err
		}
		host, err := xrShow(o, "show running-config hostname")
		if err != nil {
			return err
		}
		dom, err := xrShow(o, "show running-config domain")
		if err != nil {
			return err
		}
		brief, err := xrShow(o, "show ipv4 interface brief")
		if err != nil {
			return err
		}
		if m := xrVersionRe.FindStringSubmatch(ver); m != nil {
			f.OSVersion = m[1]
		}
		if m := xrModelRe.FindStringSubmatch(ver); m != nil {
			f.Model = m[1]
		}
		if m := xrUptimeRe.FindStringSubmatch(ver); m != nil {
			f.Uptime = xrUptimeSeconds(m[1])
		}
		name := ""
		for l := range strings.SplitSeq(inv, "\n") {
			if m := xrInvNameRe.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
				name = m[1]
				continue
			}
			if m := xrInvSNRe.FindStringSubmatch(l); m != nil && (f.SerialNumber == "" || name == "Rack 0") {
				f.SerialNumber = m[1]
			}
		}
		f.Hostname = xrConfigValue(host, "hostname")
		f.FQDN = f.Hostname
		if domain := xrConfigValue(dom, "domain name"); domain != "" && f.Hostname != "" {
			f.FQDN = f.Hostname + "." + domain
		}
		for l := range strings.SplitSeq(brief, "\n") {
			fl := strings.Fields(l)
			if len(fl) < 2 || fl[0] == "Interface" {
				continue
			}
			f.InterfaceList = append(f.InterfaceList, fl[0])
		}
		sortNicely(f.InterfaceList)
		return nil
	})
	return f, err
}

var (
	xrIfHeadRe = regexp.MustCompile(`^(\S+) is (administratively down|up|down|deleted)[^,]*, line protocol is (.+?)\s*$`)
	xrIfMACRe  = regexp.MustCompile(`^\s+Hardware is .*, address is ([0-9a-fA-F.:]+)`)
	xrIfDescRe = regexp.MustCompile(`^\s+Description: (.*?)\s*$`)
	xrIfMTURe  = regexp.MustCompile(`^\s+MTU (\d+) bytes, BW (\d+) Kbit`)
	xrIfFlapRe = regexp.MustCompile(`^\s+Last link flapped (\S+)`)
)

// GetInterfaces implements Driver from show interfaces.
func (d *iosxrDriver) GetInterfaces(ctx context.Context) (map[string]Interface, error) {
	if d.xml {
		return d.xmlInterfaces(ctx)
	}
	res := map[string]Interface{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := xrShow(o, "show interfaces")
		if err != nil {
			return err
		}
		name := ""
		var cur Interface
		flush := func() {
			if name != "" {
				res[name] = cur
			}
			name = ""
		}
		for l := range strings.SplitSeq(out, "\n") {
			l = strings.TrimRight(l, "\r")
			if m := xrIfHeadRe.FindStringSubmatch(l); m != nil {
				flush()
				name = m[1]
				cur = Interface{IsEnabled: m[2] != "administratively down", IsUp: m[3] == "up", LastFlapped: -1}
				continue
			}
			if name == "" {
				continue
			}
			if m := xrIfMACRe.FindStringSubmatch(l); m != nil {
				cur.MACAddress = normalizeMAC(m[1])
			} else if m := xrIfDescRe.FindStringSubmatch(l); m != nil {
				cur.Description = m[1]
			} else if m := xrIfMTURe.FindStringSubmatch(l); m != nil {
				cur.MTU = atoi(m[1], 0)
				cur.Speed = atof(m[2], 0) / 1000
			} else if m := xrIfFlapRe.FindStringSubmatch(l); m != nil {
				if secs := bgpUptime(m[1]); secs >= 0 {
					cur.LastFlapped = float64(secs)
				}
			}
		}
		flush()
		return nil
	})
	return res, err
}

var (
	xrIPHeadRe = regexp.MustCompile(`^(\S+) is \S+, ipv[46] protocol is`)
	xrIPv4Re   = regexp.MustCompile(`^\s+(?:Internet address is|Secondary address) (\d+\.\d+\.\d+\.\d+)/(\d+)`)
	xrLinkLcRe = regexp.MustCompile(`^\s+IPv6 is enabled, link-local address is ([0-9a-fA-F:]+)`)
	xrIPv6Re   = regexp.MustCompile(`^\s+([0-9a-fA-F:]+), subnet is \S+/(\d+)`)
)

// GetInterfacesIP implements Driver from show ipv4 interface and, when the
// device has it, show ipv6 interface; interfaces without addresses are
// left out.
func (d *iosxrDriver) GetInterfacesIP(ctx context.Context) (map[string]InterfaceIP, error) {
	if d.xml {
		return xrOne(d, ctx, xrReqIP, parseXRInterfacesIP)
	}
	res := map[string]InterfaceIP{}
	add := func(name string, v6 bool, addr string, plen int) {
		e := res[name]
		m := &e.IPv4
		if v6 {
			m = &e.IPv6
		}
		if *m == nil {
			*m = map[string]IPPrefix{}
		}
		(*m)[addr] = IPPrefix{PrefixLength: plen}
		res[name] = e
	}
	err := d.s.query(ctx, func(o runner) error {
		v4, err := xrShow(o, "show ipv4 interface")
		if err != nil {
			return err
		}
		name := ""
		for l := range strings.SplitSeq(v4, "\n") {
			if m := xrIPHeadRe.FindStringSubmatch(l); m != nil {
				name = m[1]
			} else if m := xrIPv4Re.FindStringSubmatch(l); m != nil && name != "" {
				add(name, false, m[1], atoi(m[2], 0))
			}
		}
		v6, failed, err := o.send("show ipv6 interface")
		if err != nil || failed {
			return err
		}
		name = ""
		for l := range strings.SplitSeq(xrClean(v6), "\n") {
			if m := xrIPHeadRe.FindStringSubmatch(l); m != nil {
				name = m[1]
			} else if m := xrLinkLcRe.FindStringSubmatch(l); m != nil && name != "" {
				add(name, true, strings.ToLower(m[1]), 10)
			} else if m := xrIPv6Re.FindStringSubmatch(l); m != nil && name != "" {
				add(name, true, strings.ToLower(m[1]), atoi(m[2], 0))
			}
		}
		return nil
	})
	return res, err
}

var xrARPRe = regexp.MustCompile(`^(\d+\.\d+\.\d+\.\d+)\s+(\S+)\s+([0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4})\s+(\S+)\s+(\S+)\s+(\S+)\s*$`)

// xrAge converts an ARP age ("00:00:42", "1d02h") to seconds, -1 for "-".
func xrAge(s string) float64 {
	if s == "-" {
		return -1
	}
	if n := bgpUptime(s); n >= 0 {
		return float64(n)
	}
	return -1
}

// xrARP reads show arp [vrf V] (ages in seconds, -1 for the router's own
// addresses).
var xrARP = &arpSpec{
	all: "show arp", vrf: "show arp vrf %s", show: xrShow,
	rows: lineRows(func(l string) []string {
		return xrARPRe.FindStringSubmatch(strings.TrimRight(l, "\r"))
	}),
	ip: 1, age: 2, mac: 3, iface: 6,
	ageOf: xrAge, macOf: normalizeMAC,
}

// GetArpTable implements Driver from show arp [vrf V].
func (d *iosxrDriver) GetArpTable(ctx context.Context, vrf string) ([]ARPEntry, error) {
	if d.xml {
		if vrf != "" {
			return nil, fmt.Errorf("%w: VRF support has not been added for this getter on this platform.", ErrNotSupported)
		}
		return xrOne(d, ctx, xrReqARP, parseXRARP)
	}
	return getARPTable(ctx, d.s, xrARP, vrf)
}

// GetLLDPNeighbors implements Driver from the LLDP details (the brief table
// truncates system names).
func (d *iosxrDriver) GetLLDPNeighbors(ctx context.Context) (map[string][]LLDPNeighbor, error) {
	if d.xml {
		return d.xmlLLDP(ctx)
	}
	det, err := d.GetLLDPNeighborsDetail(ctx, "")
	if err != nil {
		return nil, err
	}
	return lldpFromDetail(det, "", nil), nil
}

// xrLLDP reads show lldp neighbors [IF] detail: "Local Interface" opens a
// neighbour, a dashed line or "Total entries" closes it; an empty (or not
// advertised) "System Description:" takes the next line whole.
var xrLLDP = &lldpSpec{
	all: "show lldp neighbors detail", one: "show lldp neighbors %s detail",
	trimLine: "\r ",
	rules: []lldpRule{
		{re: regexp.MustCompile(`^(?:----|Total entries)`), act: lldpClose},
		{re: regexp.MustCompile(`^System Description:\s*(?:.*not advertised.*)?$`), key: lldpDescr, act: lldpNext},
		{re: regexp.MustCompile(`^(Local Interface|Chassis id|Port id|Port Description|System Name|System Description|System Capabilities|Enabled Capabilities):\s*(.*?)\s*$`)},
	},
	opens:    lldpLocal,
	value:    blankNotAdvertised,
	nextLine: strings.TrimSpace,
	keep:     func(r *lldpRow) bool { return r[lldpLocal] != "" },
}

// GetLLDPNeighborsDetail implements Driver from show lldp neighbors [IF]
// detail.
func (d *iosxrDriver) GetLLDPNeighborsDetail(ctx context.Context, iface string) (map[string][]LLDPNeighborDetail, error) {
	if d.xml {
		return xrOne(d, ctx, xrReqLLDP, parseXRLLDPDetail)
	}
	if err := safeArg(d.s, "interface", iface); err != nil {
		return nil, err
	}
	res := map[string][]LLDPNeighborDetail{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := xrShow(o, xrLLDP.command(iface))
		if err != nil {
			return err
		}
		for _, r := range parseLLDPDetail(xrLLDP, out) {
			res[r[lldpLocal]] = append(res[r[lldpLocal]], r.detail(lldpCapabCodes, true))
		}
		return nil
	})
	return res, err
}

// xrNTPConfig lists the addresses of the "ntp" block's lines of one kind
// ("server", "peer").
func (d *iosxrDriver) xrNTPConfig(ctx context.Context, kind string) ([]string, error) {
	if d.xml {
		return xrOne(d, ctx, xrReqNTPConfig, func(r *xnode) []string { return parseXRNTP(r, py.Title(kind)) })
	}
	var addrs []string
	err := d.s.query(ctx, func(o runner) error {
		out, err := xrShow(o, "show running-config ntp")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(out, "\n") {
			if !strings.HasPrefix(l, " ") || strings.HasPrefix(l, "  ") {
				continue
			}
			f := strings.Fields(l)
			if len(f) < 2 || f[0] != kind {
				continue
			}
			if f[1] == "vrf" && len(f) >= 4 {
				addrs = append(addrs, f[3])
			} else {
				addrs = append(addrs, f[1])
			}
		}
		return nil
	})
	return addrs, err
}

// GetNTPServers implements Driver from the ntp section of the running
// configuration.
func (d *iosxrDriver) GetNTPServers(ctx context.Context) (map[string]NTPServer, error) {
	addrs, err := d.xrNTPConfig(ctx, "server")
	if err != nil {
		return nil, err
	}
	res := map[string]NTPServer{}
	for _, a := range addrs {
		res[a] = NTPServer{}
	}
	return res, nil
}

// GetNTPPeers implements Driver from the ntp section of the running
// configuration.
func (d *iosxrDriver) GetNTPPeers(ctx context.Context) (map[string]NTPPeer, error) {
	addrs, err := d.xrNTPConfig(ctx, "peer")
	if err != nil {
		return nil, err
	}
	res := map[string]NTPPeer{}
	for _, a := range addrs {
		res[a] = NTPPeer{}
	}
	return res, nil
}

var xrNTPRe = regexp.MustCompile(`^([*#+\-x ])?~?([0-9a-fA-F.:]+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+([\d.\-]+)\s+([\d.\-]+)\s+([\d.\-]+)\s*$`)

// GetNTPStats implements Driver from show ntp associations (IOS XR prints
// no peer type: it is "-").
func (d *iosxrDriver) GetNTPStats(ctx context.Context) ([]NTPStats, error) {
	if d.xml {
		return xrOne(d, ctx, xrReqNTPStats, parseXRNTPStats)
	}
	res := []NTPStats{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := xrShow(o, "show ntp associations")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(out, "\n") {
			m := xrNTPRe.FindStringSubmatch(strings.TrimRight(l, "\r"))
			if m == nil || !strings.ContainsAny(m[2], ".:") {
				continue
			}
			res = append(res, NTPStats{Remote: m[2], ReferenceID: m[3], Synchronized: m[1] == "*",
				Stratum: atoi(m[4], 0), Type: "-", When: m[5], HostPoll: atoi(m[6], 0),
				Reachability: atoi(m[7], 0), Delay: atof(m[8], 0), Offset: atof(m[9], 0), Jitter: atof(m[10], 0)})
		}
		return nil
	})
	return res, err
}

var (
	xrBGPIDRe  = regexp.MustCompile(`BGP router identifier (\S+), local AS number (\S+)`)
	xrBGPRowRe = regexp.MustCompile(`^(\d+\.\d+\.\d+\.\d+|[0-9a-fA-F:]+:[0-9a-fA-F:]*)\s+\d+\s+(\S+)\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+(\S+)\s+(\S+)\s*$`)
)

// xrBGPNeighborConfig reads descriptions and shutdowns of the neighbor
// blocks of "show running-config router bgp".
func xrBGPNeighborConfig(text string) bgpConfig {
	c := bgpConfig{descriptions: map[string]string{}, shutdown: map[string]bool{}}
	nbr := ""
	for l := range strings.SplitSeq(text, "\n") {
		ind := len(l) - len(strings.TrimLeft(l, " "))
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case ind == 1 && f[0] == "neighbor" && len(f) == 2:
			nbr = f[1]
		case ind <= 1:
			nbr = ""
		case ind == 2 && nbr != "" && f[0] == "description":
			c.descriptions[nbr] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "description"))
		case ind == 2 && nbr != "" && f[0] == "shutdown":
			c.shutdown[nbr] = true
		}
	}
	return c
}

// GetBGPNeighbors implements Driver from show bgp summary (the default
// VRF, "global") and the neighbor blocks of the running configuration;
// sent prefixes and the remote router id are not in the summary (-1, "").
func (d *iosxrDriver) GetBGPNeighbors(ctx context.Context) (map[string]BGPVRF, error) {
	if d.xml {
		return d.xmlBGPNeighbors(ctx)
	}
	res := map[string]BGPVRF{}
	err := d.s.query(ctx, func(o runner) error {
		out, failed, err := o.send("show bgp summary")
		if err != nil {
			return err
		}
		out = xrClean(out)
		m := xrBGPIDRe.FindStringSubmatch(out)
		if failed || m == nil {
			return nil // BGP not running
		}
		localAS, err := asNumber(m[2])
		if err != nil {
			return o.errf(ErrCommand, "show bgp summary", err)
		}
		cfgText, _, err := o.send("show running-config router bgp")
		if err != nil {
			return err
		}
		cfg := xrBGPNeighborConfig(xrClean(cfgText))
		vrf := BGPVRF{RouterID: m[1], Peers: map[string]BGPPeer{}}
		for l := range strings.SplitSeq(out, "\n") {
			r := xrBGPRowRe.FindStringSubmatch(strings.TrimRight(l, "\r"))
			if r == nil {
				continue
			}
			remoteAS, err := asNumber(r[2])
			if err != nil {
				continue
			}
			p := BGPPeer{LocalAS: localAS, RemoteAS: remoteAS, IsEnabled: !cfg.shutdown[r[1]],
				Description: cfg.descriptions[r[1]], Uptime: -1,
				AddressFamily: map[string]BGPAFStats{"ipv4": {ReceivedPrefixes: -1, AcceptedPrefixes: -1, SentPrefixes: -1}}}
			if n, err := strconv.Atoi(r[4]); err == nil {
				p.IsUp = true
				p.Uptime = bgpUptime(r[3])
				p.AddressFamily["ipv4"] = BGPAFStats{ReceivedPrefixes: n, AcceptedPrefixes: n, SentPrefixes: -1}
			}
			vrf.Peers[r[1]] = p
		}
		res["global"] = vrf
		return nil
	})
	return res, err
}

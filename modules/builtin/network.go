package builtin

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/netinfo"
	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// networkFunctions is the part of Salt's network module
// (salt/modules/network.py) built on interface data. Interfaces are read
// from the kernel over rtnetlink and shaped exactly like Salt's parse of
// `ip link show` + `ip addr show`; if netlink is unavailable Go's net
// package is used (no labels, computed broadcasts).
func networkFunctions() []modules.Function {
	p := func(params ...modules.Param) modules.Spec { return modules.Spec{Params: params} }
	ifaceFn := func(pick func(data *payload.Map) any) modules.Func {
		return func(_ context.Context, c *modules.Call) (any, error) {
			all := netInterfaces(c)
			name := pyfmt.Str(c.Args.Get("iface"))
			v, ok := all.Get(name)
			if !ok {
				msg := fmt.Sprintf("Interface \"%s\" not in available interfaces: \"%s\"", name, strings.Join(all.Keys(), "\", \""))
				c.Log().Error(msg)
				return msg, nil
			}
			data, _ := v.(*payload.Map)
			return pick(data), nil
		}
	}
	hwAddr := ifaceFn(func(d *payload.Map) any {
		if v, ok := d.Get("hwaddr"); ok {
			return v
		}
		return ""
	})
	return []modules.Function{
		{Name: "network.interfaces", Doc: "Return a dictionary of information about all the interfaces on the minion\n\nCLI Example:\n\n    salt '*' network.interfaces",
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return netInterfaces(c), nil }},
		{Name: "network.hw_addr", Doc: "Return the hardware address (a.k.a. MAC address) for a given interface\n\nCLI Example:\n\n    salt '*' network.hw_addr eth0",
			Spec: p(req("iface")), Fn: hwAddr},
		{Name: "network.hwaddr", Doc: "Return the hardware address (a.k.a. MAC address) for a given interface\n\nCLI Example:\n\n    salt '*' network.hwaddr eth0",
			Spec: p(req("iface")), Fn: hwAddr},
		{Name: "network.interface", Doc: "Return the inet address for a given interface\n\nCLI Example:\n\n    salt '*' network.interface eth0",
			Spec: p(req("iface")), Fn: ifaceFn(func(d *payload.Map) any {
				if v, ok := d.Get("inet"); ok {
					return v
				}
				return ""
			})},
		{Name: "network.interface_ip", Doc: "Return the inet address for a given interface\n\nCLI Example:\n\n    salt '*' network.interface_ip eth0",
			Spec: p(req("iface")), Fn: ifaceFn(func(d *payload.Map) any {
				if l := d.List("inet"); len(l) > 0 {
					if m, ok := l[0].(*payload.Map); ok {
						if v, ok := m.Get("address"); ok {
							return v
						}
					}
				}
				return ""
			})},
		{Name: "network.subnets", Doc: "Returns a list of IPv4 subnets to which the host belongs\n\nCLI Example:\n\n    salt '*' network.subnets\n    salt '*' network.subnets interfaces=eth1",
			Spec: p(opt("interfaces", nil)),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return netSubnets(netInterfaces(c), "inet", c.Args.Get("interfaces")), nil
			}},
		{Name: "network.subnets6", Doc: "Returns a list of IPv6 subnets to which the host belongs\n\nCLI Example:\n\n    salt '*' network.subnets6",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return netSubnets(netInterfaces(c), "inet6", nil), nil
			}},
		{Name: "network.in_subnet", Doc: "Returns True if host is within specified subnet, otherwise False.\n\nCLI Example:\n\n    salt '*' network.in_subnet 10.0.0.0/16",
			Spec: p(req("cidr")),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				ifaces := netInterfaces(c)
				addrs := append(netIPAddrs(ifaces, nil, false, "inet"), netIPAddrs(ifaces, nil, false, "inet6")...)
				return netInSubnet(c, c.Args.Get("cidr"), addrs)
			}},
		{Name: "network.ip_in_subnet", Doc: "Returns True if given IP is within specified subnet, otherwise False.\n\nCLI Example:\n\n    salt '*' network.ip_in_subnet 172.17.0.4 172.16.0.0/12",
			Spec: p(req("ip_addr"), req("cidr")),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return netInSubnet(c, c.Args.Get("cidr"), []any{c.Args.Get("ip_addr")})
			}},
		{Name: "network.ip_addrs", Doc: "Returns a list of IPv4 addresses assigned to the host. 127.0.0.1 is\nignored, unless 'include_loopback=True' is indicated. interface limits the\nresult to matching interfaces (a name, glob or list), cidr to addresses in\nthat subnet, type=public|private to public or private addresses.\n\nCLI Example:\n\n    salt '*' network.ip_addrs",
			Spec: p(opt("interface", nil), opt("include_loopback", false), opt("cidr", nil), opt("type", nil)),
			Fn:   netIPAddrsFn("inet")},
		{Name: "network.ipaddrs", Doc: "Returns a list of IPv4 addresses assigned to the host (alias of\nnetwork.ip_addrs).\n\nCLI Example:\n\n    salt '*' network.ipaddrs",
			Spec: p(opt("interface", nil), opt("include_loopback", false), opt("cidr", nil), opt("type", nil)),
			Fn:   netIPAddrsFn("inet")},
		{Name: "network.ip_addrs6", Doc: "Returns a list of IPv6 addresses assigned to the host. ::1 is ignored,\nunless 'include_loopback=True' is indicated.\n\nCLI Example:\n\n    salt '*' network.ip_addrs6",
			Spec: p(opt("interface", nil), opt("include_loopback", false), opt("cidr", nil)),
			Fn:   netIPAddrsFn("inet6")},
		{Name: "network.ipaddrs6", Doc: "Returns a list of IPv6 addresses assigned to the host (alias of\nnetwork.ip_addrs6).\n\nCLI Example:\n\n    salt '*' network.ipaddrs6",
			Spec: p(opt("interface", nil), opt("include_loopback", false), opt("cidr", nil)),
			Fn:   netIPAddrsFn("inet6")},
		{Name: "network.get_hostname", Doc: "Get hostname\n\nCLI Example:\n\n    salt '*' network.get_hostname",
			Fn: func(context.Context, *modules.Call) (any, error) {
				h, err := os.Hostname()
				if err != nil {
					return nil, fmt.Errorf("OSError: %v", err)
				}
				return h, nil
			}},
		{Name: "network.is_private", Doc: "Check if the given IP address is a private address\n\nCLI Example:\n\n    salt '*' network.is_private 10.0.0.3",
			Spec: p(req("ip_addr")),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				a, err := netParseAddr(c.Args.Get("ip_addr"))
				if err != nil {
					return nil, err
				}
				return netIsPrivate(a), nil
			}},
		{Name: "network.is_loopback", Doc: "Check if the given IP address is a loopback address\n\nCLI Example:\n\n    salt '*' network.is_loopback 127.0.0.1",
			Spec: p(req("ip_addr")),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				a, err := netParseAddr(c.Args.Get("ip_addr"))
				if err != nil {
					return nil, err
				}
				return a.IsLoopback(), nil
			}},
		{Name: "network.calc_net", Doc: "Returns the CIDR of a subnet based on an IP address (CIDR notation\nsupported) and optional netmask.\n\nCLI Example:\n\n    salt '*' network.calc_net 172.17.0.5 255.255.255.240",
			Spec: p(req("ip_addr"), opt("netmask", nil)),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				s := pyfmt.Str(c.Args.Get("ip_addr"))
				if nm := c.Args.Get("netmask"); nm != nil {
					s += "/" + pyfmt.Str(nm)
				}
				pfx, err := netParseNetwork(s, false)
				if err != nil {
					return nil, err
				}
				return pfx.String(), nil
			}},
		{Name: "network.convert_cidr", Doc: "returns the network address, subnet mask and broadcast address of a cidr\naddress\n\nCLI Example:\n\n    salt '*' network.convert_cidr 172.31.0.0/16",
			Spec: p(req("cidr")),
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				pfx, err := netParseNetwork(pyfmt.Str(c.Args.Get("cidr")), false)
				if err != nil {
					return nil, err
				}
				return payload.NewMap("network", pfx.Addr().String(), "netmask", netMaskString(pfx), "broadcast", netLastAddr(pfx).String()), nil
			}},
		{Name: "network.ping", Doc: "Performs an ICMP ping to a host\n\nCLI Example:\n\n    salt '*' network.ping archlinux.org\n    salt '*' network.ping archlinux.org return_boolean=True\n    salt '*' network.ping archlinux.org timeout=3",
			Spec: p(req("host"), opt("timeout", false), opt("return_boolean", false)),
			Fn:   netPing},
	}
}

// netSanitizeHost is salt.utils.network.sanitize_host.
func netSanitizeHost(host string) string {
	if len(host) > 255 {
		host = host[:255]
	}
	var b strings.Builder
	for _, r := range host {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '.' || r == '-' || r == '_' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func netPing(ctx context.Context, c *modules.Call) (any, error) {
	host := netSanitizeHost(pyfmt.Str(c.Args.Get("host")))
	cmd := "ping -c 4 " + host
	if t := c.Args.Get("timeout"); payload.Truthy(t) {
		cmd = fmt.Sprintf("ping -W %s -c 4 %s", pyfmt.Str(t), host)
	}
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "/bin/sh"
	}
	boolean := payload.Truthy(c.Args.Get("return_boolean"))
	req := cmdRequest{
		cmd: cmd, shell: shell, rstrip: true, loglevel: "debug", resetLocale: true,
		pythonShell: cmdPythonShellDefault(c, nil), mergeStderr: !boolean,
	}
	out, err := cmdRunCore(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if boolean {
		return cmdRetcodeZero(out.retcode), nil
	}
	return out.stdout, nil
}

// netIPAddrsFn is network.ip_addrs / ip_addrs6.
func netIPAddrsFn(proto string) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		a := c.Args
		addrs := netIPAddrs(netInterfaces(c), a.Get("interface"), payload.Truthy(a.Get("include_loopback")), proto)
		if cidr := a.Get("cidr"); payload.Truthy(cidr) {
			out := []any{}
			for _, ip := range addrs {
				if ok, _ := netInSubnet(c, cidr, []any{ip}); ok == true {
					out = append(out, ip)
				}
			}
			return out, nil
		}
		if proto == "inet" {
			switch a.Get("type") {
			case "public", "private":
				want := a.Get("type") == "private"
				out := []any{}
				for _, ip := range addrs {
					addr, err := netip.ParseAddr(ip.(string))
					if err == nil && netIsPrivate(addr) == want {
						out = append(out, ip)
					}
				}
				return out, nil
			}
		}
		return addrs, nil
	}
}

// netIPAddrs is salt.utils.network._ip_addrs: the sorted, unique addresses
// of family proto on the interfaces matching filter.
func netIPAddrs(ifaces *payload.Map, filter any, includeLoopback bool, proto string) []any {
	var pats []string
	if filter != nil {
		for _, p := range cmdSplitInput(filter) {
			pats = append(pats, pyfmt.Str(p))
		}
	}
	seen := map[netip.Addr]bool{}
	var addrs []netip.Addr
	for _, it := range ifaces.Items() {
		name := payload.KeyString(it.Key)
		if filter != nil {
			match := false
			for _, p := range pats {
				if py.Fnmatch(name, p) {
					match = true
					break
				}
			}
			if !match {
				continue
			}
		}
		data, _ := it.Value.(*payload.Map)
		for _, e := range netProtoEntries(data, proto) {
			a, err := netip.ParseAddr(e.Str("address"))
			if err != nil || (a.IsLoopback() && !includeLoopback) || seen[a] {
				continue
			}
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	out := make([]any, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

// netProtoEntries is the entries of proto in an interface's data plus its
// secondary addresses of that type.
func netProtoEntries(data *payload.Map, proto string) []*payload.Map {
	var out []*payload.Map
	for _, v := range data.List(proto) {
		if m, ok := v.(*payload.Map); ok {
			out = append(out, m)
		}
	}
	for _, v := range data.List("secondary") {
		if m, ok := v.(*payload.Map); ok && m.Str("type") == proto {
			out = append(out, m)
		}
	}
	return out
}

// netSubnets is salt.utils.network._subnets.
func netSubnets(all *payload.Map, proto string, only any) []any {
	ifaces := all
	switch x := only.(type) {
	case nil:
	case []any:
		ifaces = &payload.Map{}
		for _, it := range all.Items() {
			for _, want := range x {
				if pyfmt.Str(want) == payload.KeyString(it.Key) {
					ifaces.SetKey(it.Key, it.Value)
					break
				}
			}
		}
	default:
		name := pyfmt.Str(x)
		v, ok := all.Get(name)
		if !ok {
			v = &payload.Map{}
		}
		ifaces = payload.NewMap(name, v)
	}
	field, dflt := "netmask", 32
	if proto == "inet6" {
		field, dflt = "prefixlen", 128
	}
	seen := map[netip.Prefix]bool{}
	var nets []netip.Prefix
	for _, it := range ifaces.Items() {
		data, _ := it.Value.(*payload.Map)
		for _, e := range netProtoEntries(data, proto) {
			spec := e.Str("address") + "/" + strconv.Itoa(dflt)
			if e.Has(field) {
				spec = e.Str("address") + "/" + e.Str(field)
			}
			pfx, err := netParseNetwork(spec, false)
			if err != nil {
				continue
			}
			addr, _ := netip.ParseAddr(e.Str("address"))
			if addr.Is4() && addr.IsLoopback() || addr.Is6() && addr.IsLoopback() && pfx.Bits() == 128 {
				continue
			}
			if !seen[pfx] {
				seen[pfx] = true
				nets = append(nets, pfx)
			}
		}
	}
	sort.Slice(nets, func(i, j int) bool {
		if c := nets[i].Addr().Compare(nets[j].Addr()); c != 0 {
			return c < 0
		}
		return nets[i].Bits() < nets[j].Bits()
	})
	out := make([]any, len(nets))
	for i, n := range nets {
		out[i] = n.String()
	}
	return out
}

// netInSubnet is salt.utils.network.in_subnet(cidr, addrs).
func netInSubnet(c *modules.Call, cidr any, addrs []any) (any, error) {
	pfx, err := netParseNetwork(pyfmt.Str(cidr), true)
	if err != nil {
		c.Log().Error(fmt.Sprintf("Invalid CIDR '%s'", pyfmt.Str(cidr)))
		return false, nil
	}
	for _, a := range addrs {
		addr, err := netParseAddr(a)
		if err != nil {
			return nil, err
		}
		if pfx.Contains(addr.WithZone("")) {
			return true, nil
		}
	}
	return false, nil
}

// netParseAddr is ipaddress.ip_address.
func netParseAddr(v any) (netip.Addr, error) {
	switch x := v.(type) {
	case int64:
		if x >= 0 && x < 1<<32 {
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], uint32(x))
			return netip.AddrFrom4(b), nil
		}
	case string:
		if a, err := netip.ParseAddr(x); err == nil {
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("ValueError: %s does not appear to be an IPv4 or IPv6 address", netQuoted(v))
}

// netQuoted is repr() of a value for ipaddress messages.
func netQuoted(v any) string {
	s := pyfmt.Str([]any{v})
	return s[1 : len(s)-1]
}

// netParseNetwork is ipaddress.ip_network(spec, strict): "addr",
// "addr/len", "addr/netmask" or "addr/hostmask".
func netParseNetwork(spec string, strict bool) (netip.Prefix, error) {
	bad := fmt.Errorf("ValueError: %s does not appear to be an IPv4 or IPv6 network", netQuoted(spec))
	addrPart, maskPart, hasMask := strings.Cut(spec, "/")
	addr, err := netip.ParseAddr(addrPart)
	if err != nil || addr.Zone() != "" && addr.Is4() {
		return netip.Prefix{}, bad
	}
	addr = addr.WithZone("")
	bits := addr.BitLen()
	if hasMask {
		if n, err := strconv.Atoi(maskPart); err == nil && maskPart != "" && maskPart[0] >= '0' && maskPart[0] <= '9' {
			if n < 0 || n > addr.BitLen() {
				return netip.Prefix{}, bad
			}
			bits = n
		} else if addr.Is4() {
			m, err := netip.ParseAddr(maskPart)
			if err != nil || !m.Is4() {
				return netip.Prefix{}, bad
			}
			b := m.As4()
			v := binary.BigEndian.Uint32(b[:])
			switch {
			case netContiguous(v):
				bits = netOnes(v)
			case netContiguous(^v):
				bits = netOnes(^v)
			default:
				return netip.Prefix{}, bad
			}
		} else {
			return netip.Prefix{}, bad
		}
	}
	pfx := netip.PrefixFrom(addr, bits)
	if strict && pfx.Masked().Addr() != addr {
		return netip.Prefix{}, fmt.Errorf("ValueError: %s has host bits set", spec)
	}
	return pfx.Masked(), nil
}

func netContiguous(v uint32) bool { return v == 0 || (^v)&((^v)+1) == 0 }

func netOnes(v uint32) int {
	n := 0
	for ; v != 0; v <<= 1 {
		n++
	}
	return n
}

// netMaskString is str(network.netmask).
func netMaskString(p netip.Prefix) string {
	if p.Addr().Is4() {
		return cidrToNetmask(p.Bits())
	}
	var b [16]byte
	for i := 0; i < p.Bits(); i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom16(b).String()
}

// netLastAddr is network.broadcast_address.
func netLastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	n := new(big.Int).SetBytes(b)
	host := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8-p.Bits())), big.NewInt(1))
	n.Or(n, host)
	out := make([]byte, len(b))
	n.FillBytes(out)
	a, _ := netip.AddrFromSlice(out)
	return a
}

// cidrToNetmask is cidr_to_ipv4_netmask for a valid prefix length.
func cidrToNetmask(bits int) string {
	if bits < 1 || bits > 32 {
		return ""
	}
	m := ^uint32(0) << (32 - bits)
	return fmt.Sprintf("%d.%d.%d.%d", byte(m>>24), byte(m>>16), byte(m>>8), byte(m))
}

// netIsPrivate is ipaddress's is_private (Python 3.10's list of private
// networks).
func netIsPrivate(a netip.Addr) bool {
	privateNets := [...]string{
		"0.0.0.0/8", "10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/29",
		"192.0.0.170/31", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"::1/128", "::/128", "::ffff:0:0/96", "100::/64", "2001::/23", "2001:2::/48", "2001:db8::/32",
		"2001:10::/28", "fc00::/7", "fe80::/10",
	}
	a = a.WithZone("")
	for _, s := range privateNets {
		p := netip.MustParsePrefix(s)
		if p.Addr().Is4() == a.Is4() && p.Contains(a) {
			return true
		}
	}
	return false
}

// netInterfaces is salt.utils.network.interfaces() for Linux.
func netInterfaces(c *modules.Call) *payload.Map {
	m, err := netlinkInterfaces()
	if err == nil {
		return m
	}
	c.Log().Debug("network: netlink unavailable, using the net package", "err", err)
	return netPackageInterfaces()
}

// netAddrInfo is one address of an interface.
type netAddrInfo struct {
	inet6     bool
	address   string
	prefix    int
	broadcast any // string or nil
	label     string
	scope     any // string or nil
	secondary bool
	peer      bool
}

// netLinkInfo is one interface.
type netLinkInfo struct {
	index  int32
	name   string
	up     bool
	parent string
	hwaddr string
	hasHW  bool
	addrs  []netAddrInfo
}

// netlinkInterfaces reads links and addresses over rtnetlink.
func netlinkInterfaces() (*payload.Map, error) {
	links, err := netlinkLinks()
	if err != nil {
		return nil, err
	}
	if err := netlinkAddrs(links); err != nil {
		return nil, err
	}
	out := &payload.Map{}
	for _, l := range links {
		data := payload.NewMap("up", l.up)
		if l.parent != "" {
			data.Set("parent", l.parent)
		}
		if l.hasHW {
			data.Set("hwaddr", l.hwaddr)
		}
		for _, a := range l.addrs {
			entry := &payload.Map{}
			key := "inet"
			if a.inet6 {
				key = "inet6"
			}
			if a.secondary && !a.inet6 {
				entry.Set("type", "inet")
				key = "secondary"
			}
			entry.Set("address", a.address)
			if a.inet6 {
				entry.Set("prefixlen", strconv.Itoa(a.prefix))
				entry.Set("scope", a.scope)
			} else {
				entry.Set("netmask", cidrToNetmask(a.prefix))
				entry.Set("broadcast", a.broadcast)
				entry.Set("label", a.label)
			}
			list, _ := data.Get(key)
			l, _ := list.([]any)
			data.Set(key, append(l, entry))
		}
		out.Set(l.name, data)
	}
	return out, nil
}

// netlinkLinks reads the links; a message that does not parse is an error
// (netInterfaces then falls back to the net package).
func netlinkLinks() ([]*netLinkInfo, error) {
	msgs, err := netinfo.Dump(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	var links []*netLinkInfo
	byIndex := map[int32]string{}
	var refs []netinfo.Link
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type == syscall.NLMSG_DONE {
			break
		}
		nl, ok, err := netinfo.ParseLink(m)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		l := &netLinkInfo{index: nl.Index, up: nl.Up, name: nl.Name}
		if nl.HWAddr != nil {
			l.hwaddr, l.hasHW = netinfo.LinkAddrString(nl.HWAddr, nl.Type), true
		}
		byIndex[l.index] = l.name
		links = append(links, l)
		refs = append(refs, nl)
	}
	for i, r := range refs {
		l := links[i]
		switch {
		case !r.HasParent:
		case r.Parent == 0:
			l.parent = "NONE"
		case r.ParentNetns:
			l.parent = fmt.Sprintf("if%d", r.Parent)
		default:
			if name, ok := byIndex[int32(r.Parent)]; ok {
				l.parent = name
			} else {
				l.parent = fmt.Sprintf("if%d", r.Parent)
			}
		}
	}
	return links, nil
}

// netlinkAddrs adds the IPv4 and IPv6 addresses to links; a message that
// does not parse is an error.
func netlinkAddrs(links []*netLinkInfo) error {
	msgs, err := netinfo.Dump(syscall.RTM_GETADDR, syscall.AF_UNSPEC)
	if err != nil {
		return err
	}
	byIndex := map[int32]*netLinkInfo{}
	for _, l := range links {
		byIndex[l.index] = l
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type == syscall.NLMSG_DONE {
			break
		}
		na, ok, err := netinfo.ParseAddr(m)
		if err != nil {
			return err
		}
		if !ok || na.Family != syscall.AF_INET && na.Family != syscall.AF_INET6 {
			continue
		}
		l, ok := byIndex[na.Index]
		if !ok {
			continue
		}
		a := netAddrInfo{inet6: na.Family == syscall.AF_INET6, prefix: na.PrefixLen, label: na.Label}
		if na.Broadcast != nil {
			a.broadcast = net.IP(na.Broadcast).String()
		}
		shown := na.Shown()
		if shown == nil {
			continue
		}
		a.address = net.IP(shown).String()
		if na.Local != nil && na.Address != nil && !net.IP(na.Local).Equal(net.IP(na.Address)) {
			// "inet LOCAL peer ADDRESS/len": Salt sees no prefix on LOCAL
			a.peer = true
			a.prefix = 32
			if a.inet6 {
				a.prefix = 128
			}
		}
		a.secondary = na.Secondary()
		if a.inet6 {
			a.scope = netScopeName(na.Scope)
		}
		l.addrs = append(l.addrs, a)
	}
	return nil
}

// netScopeName is iproute2's rtnl_rtscope_n2a with the default table.
func netScopeName(s uint8) string {
	switch s {
	case 0:
		return "global"
	case 200:
		return "site"
	case 253:
		return "link"
	case 254:
		return "host"
	case 255:
		return "nowhere"
	}
	return strconv.Itoa(int(s))
}

// netPackageInterfaces builds the same shape from Go's net package when
// netlink cannot be used.
func netPackageInterfaces() *payload.Map {
	out := &payload.Map{}
	ifs, err := net.Interfaces()
	if err != nil {
		return out
	}
	for _, ifc := range ifs {
		data := payload.NewMap("up", ifc.Flags&net.FlagUp != 0)
		switch {
		case len(ifc.HardwareAddr) > 0:
			data.Set("hwaddr", ifc.HardwareAddr.String())
		case ifc.Flags&net.FlagLoopback != 0:
			data.Set("hwaddr", "00:00:00:00:00:00")
		}
		addrs, _ := ifc.Addrs()
		var inet, inet6 []any
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ones, _ := ipn.Mask.Size()
			if ip4 := ipn.IP.To4(); ip4 != nil {
				var brd any
				if ifc.Flags&net.FlagBroadcast != 0 && ones < 31 {
					b := make(net.IP, 4)
					for i := range b {
						b[i] = ip4[i] | ^ipn.Mask[len(ipn.Mask)-4+i]
					}
					brd = b.String()
				}
				inet = append(inet, payload.NewMap("address", ip4.String(), "netmask", cidrToNetmask(ones), "broadcast", brd, "label", ifc.Name))
				continue
			}
			scope := "global"
			switch {
			case ipn.IP.IsLoopback():
				scope = "host"
			case ipn.IP.IsLinkLocalUnicast():
				scope = "link"
			}
			inet6 = append(inet6, payload.NewMap("address", ipn.IP.String(), "prefixlen", strconv.Itoa(ones), "scope", scope))
		}
		if inet != nil {
			data.Set("inet", inet)
		}
		if inet6 != nil {
			data.Set("inet6", inet6)
		}
		out.Set(ifc.Name, data)
	}
	return out
}

package grains

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/internal/netinfo"
	"github.com/gsalt/gsalt/wire/payload"
)

// iface is one network interface as Salt's _interfaces_ip sees it.
type iface struct {
	name   string
	hwaddr string // "" when the link has no address
	hasHW  bool
	inet   []string // primary IPv4 addresses
	inet6  []string // IPv6 addresses
	second []string // secondary IPv4 addresses
}

// Limits and Linux constants not exported by package syscall.
const (
	rtTableMain     = 254
	rtnUnicast      = 1
	maxInterfaces   = 4096
	maxAddrsPerLink = 4096
)

var reIfaceName = regexp.MustCompile(`^[\w.\-]+$`)

// interfaces lists the links and their addresses over netlink, in the
// order `ip addr show` prints them.
func (h *host) interfaces() ([]iface, error) {
	if !h.ifDone {
		h.ifDone = true
		if h.net != nil {
			h.ifList, h.ifErr = h.net()
		} else {
			h.ifList, h.ifErr = netlinkInterfaces()
		}
	}
	return h.ifList, h.ifErr
}

// netlinkInterfaces reads the links and addresses over netlink. Messages
// that do not parse are skipped.
func netlinkInterfaces() ([]iface, error) {
	links, err := netinfo.Dump(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	var out []iface
	byIndex := map[int32]int{}
	for i := range links {
		l, ok, err := netinfo.ParseLink(&links[i])
		if !ok || err != nil {
			continue
		}
		it := iface{name: l.Name}
		if l.HWAddr != nil {
			it.hwaddr, it.hasHW = netinfo.LinkAddrString(l.HWAddr, l.Type), true
		}
		if it.name == "" || !reIfaceName.MatchString(it.name) || len(out) >= maxInterfaces {
			continue
		}
		byIndex[l.Index] = len(out)
		out = append(out, it)
	}
	addrs, err := netinfo.Dump(syscall.RTM_GETADDR, syscall.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	for i := range addrs {
		a, ok, err := netinfo.ParseAddr(&addrs[i])
		if !ok || err != nil {
			continue
		}
		idx, ok := byIndex[a.Index]
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(a.Shown())
		if !ok {
			continue
		}
		it := &out[idx]
		if len(it.inet)+len(it.inet6)+len(it.second) >= maxAddrsPerLink {
			continue
		}
		switch {
		case a.Family == syscall.AF_INET && a.Secondary():
			it.second = append(it.second, ip.Unmap().String())
		case a.Family == syscall.AF_INET:
			it.inet = append(it.inet, ip.Unmap().String())
		case a.Family == syscall.AF_INET6:
			it.inet6 = append(it.inet6, ip.String())
		}
	}
	return out, nil
}

// ipInterfaces gives ip_interfaces, ip4_interfaces, ip6_interfaces, ipv4,
// ipv6, fqdn_ip4 and fqdn_ip6.
func (h *host) ipInterfaces(ctx context.Context) *payload.Map {
	ifs, err := h.interfaces()
	if err != nil {
		h.log.Debug("cannot list interfaces", "err", err)
	}
	all, v4, v6 := &payload.Map{}, &payload.Map{}, &payload.Map{}
	var addrs4, addrs6 []string
	for _, it := range ifs {
		both := append(append(append([]string{}, it.inet...), it.inet6...), it.second...)
		all.Set(it.name, strList(both))
		four := append(append([]string{}, it.inet...), it.second...)
		v4.Set(it.name, strList(four))
		v6.Set(it.name, strList(it.inet6))
		addrs4 = append(addrs4, four...)
		addrs6 = append(addrs6, it.inet6...)
	}
	g := payload.NewMap("ip_interfaces", all, "ip4_interfaces", v4, "ip6_interfaces", v6)
	ipv4, ipv6 := sortedAddrs(addrs4, true), sortedAddrs(addrs6, true)
	g.Set("ipv4", strList(ipv4))
	g.Set("ipv6", strList(ipv6))
	fqdn := h.fqdn(ctx)
	for _, fam := range []struct {
		key, network string
		have         []string
	}{{"fqdn_ip4", "ip4", ipv4}, {"fqdn_ip6", "ip6", ipv6}} {
		res := []string{}
		if len(fam.have) > 0 {
			lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
			ips, err := net.DefaultResolver.LookupNetIP(lctx, fam.network, fqdn)
			cancel()
			if err == nil {
				var s []string
				for _, ip := range ips {
					if fam.network == "ip4" {
						ip = ip.Unmap()
					}
					s = append(s, ip.String())
				}
				res = sortedAddrs(s, true)
			}
		}
		g.Set(fam.key, strList(res))
	}
	return g
}

// sortedAddrs is salt.utils.network._ip_addrs: unique addresses in
// numerical order, loopback ones dropped unless loopback is set.
func sortedAddrs(in []string, loopback bool) []string {
	seen := map[netip.Addr]bool{}
	var addrs []netip.Addr
	for _, s := range in {
		a, err := netip.ParseAddr(s)
		if err != nil || seen[a] || (!loopback && a.IsLoopback()) {
			continue
		}
		seen[a] = true
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Less(addrs[j]) })
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}

// hwaddrInterfaces is core.hwaddr_interfaces.
func (h *host) hwaddrInterfaces() *payload.Map {
	ifs, _ := h.interfaces()
	m := &payload.Map{}
	for _, it := range ifs {
		if it.hasHW {
			m.Set(it.name, it.hwaddr)
		}
	}
	return payload.NewMap("hwaddr_interfaces", m)
}

// defaultGateway is core.default_gateway, read from the main routing
// table. Like Salt, it gives nothing when the ip command is missing.
func (h *host) defaultGateway() *payload.Map {
	if h.which("ip") == "" {
		return nil
	}
	var gw4, gw6 any = false, false
	var err error
	if h.gateways != nil {
		gw4, gw6, err = h.gateways()
	} else {
		gw4, err = netlinkGateway(syscall.AF_INET)
		if err == nil {
			gw6, err = netlinkGateway(syscall.AF_INET6)
		}
	}
	if err != nil {
		h.log.Debug("cannot read routes", "err", err)
	}
	return payload.NewMap("ip_gw", gw4 != false || gw6 != false, "ip4_gw", gw4, "ip6_gw", gw6)
}

// netlinkGateway returns the first default route's gateway address, true
// for a default route without one, or false.
func netlinkGateway(family int) (any, error) {
	msgs, err := netinfo.Dump(syscall.RTM_GETROUTE, family)
	if err != nil {
		return false, err
	}
	for i := range msgs {
		r, ok, err := netinfo.ParseRoute(&msgs[i])
		if !ok || err != nil {
			continue
		}
		if r.DstLen != 0 || r.Table != rtTableMain || r.Type != rtnUnicast {
			continue
		}
		if ip, ok := netip.AddrFromSlice(r.Gateway); ok {
			if family == syscall.AF_INET {
				ip = ip.Unmap()
			}
			return ip.String(), nil
		}
		return true, nil
	}
	return false, nil
}

// lookupTimeout bounds each name service lookup.
const lookupTimeout = 10 * time.Second

// hostnameGrains is core.hostname: localhost, fqdn, host and domain.
func (h *host) hostnameGrains(ctx context.Context) *payload.Map {
	local, _ := os.Hostname()
	fqdn := h.fqdn(ctx)
	host, domain, _ := strings.Cut(fqdn, ".")
	return payload.NewMap("localhost", local, "fqdn", fqdn, "host", host, "domain", domain)
}

// fqdn is salt.utils.network.get_fqhostname: the canonical name of the
// host name, else Python's socket.getfqdn().
func (h *host) fqdn(ctx context.Context) string {
	if !h.fqdnDone {
		h.fqdnVal, h.fqdnDone = lookupFQDN(ctx), true
	}
	return h.fqdnVal
}

func lookupFQDN(ctx context.Context) string {
	name, _ := os.Hostname()
	lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	if cname, err := net.DefaultResolver.LookupCNAME(lctx, name); err == nil && cname != "" {
		return strings.TrimSuffix(cname, ".")
	}
	if f := getfqdn(lctx, name); f != "" {
		return f
	}
	return "localhost.localdomain"
}

// getfqdn is Python's socket.getfqdn.
func getfqdn(ctx context.Context, name string) string {
	name = strings.TrimSpace(name)
	if name == "" || name == "0.0.0.0" || name == "::" {
		name, _ = os.Hostname()
	}
	names := gethostbyaddr(ctx, name)
	if len(names) == 0 {
		return name
	}
	for _, n := range names {
		if strings.Contains(n, ".") {
			return n
		}
	}
	return names[0]
}

// gethostbyaddr returns the primary name and aliases of a host name or
// address, as Python's socket.gethostbyaddr (nil when it fails).
func gethostbyaddr(ctx context.Context, name string) []string {
	addr := name
	if _, err := netip.ParseAddr(name); err != nil {
		addrs, err := net.DefaultResolver.LookupHost(ctx, name)
		if err != nil || len(addrs) == 0 {
			return nil
		}
		addr = addrs[0]
	}
	names, err := net.DefaultResolver.LookupAddr(ctx, addr)
	if err != nil {
		return nil
	}
	for i := range names {
		names[i] = strings.TrimSuffix(names[i], ".")
	}
	return names
}

var reFQDNLabel = regexp.MustCompile(`(?i)^[A-Z\d\-_]{1,63}$`)

// isFQDN is salt.utils.network.is_fqdn.
func isFQDN(s string) bool {
	if !strings.Contains(s, ".") || len(s) >= 0xFF {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if !reFQDNLabel.MatchString(label) || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
	}
	return true
}

// fqdnsGrain is core.fqdns: the reverse names of every non-loopback
// address, unless enable_fqdns_grains is off.
func (h *host) fqdnsGrain(ctx context.Context) *payload.Map {
	enabled := true
	if v, ok := h.opt("enable_fqdns_grains"); ok {
		enabled = payload.Truthy(v)
	}
	if !enabled {
		return payload.NewMap("fqdns", []any{})
	}
	ifs, _ := h.interfaces()
	var v4, v6 []string
	for _, it := range ifs {
		v4 = append(append(v4, it.inet...), it.second...)
		v6 = append(v6, it.inet6...)
	}
	addrs := append(sortedAddrs(v4, false), sortedAddrs(v6, false)...)
	var (
		mu    sync.Mutex
		found = map[string]bool{}
		wg    sync.WaitGroup
		sem   = make(chan struct{}, 8)
	)
	for _, a := range addrs {
		wg.Add(1)
		sem <- struct{}{}
		go func(a string) {
			defer wg.Done()
			defer func() { <-sem }()
			lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
			defer cancel()
			names := gethostbyaddr(lctx, a)
			if len(names) == 0 {
				return
			}
			res := []string{getfqdn(lctx, names[0])}
			for _, alias := range names[1:] {
				if isFQDN(alias) {
					res = append(res, alias)
				}
			}
			mu.Lock()
			for _, n := range res {
				found[n] = true
			}
			mu.Unlock()
		}(a)
	}
	wg.Wait()
	out := make([]string, 0, len(found))
	for n := range found {
		out = append(out, n)
	}
	sort.Strings(out)
	return payload.NewMap("fqdns", strList(out))
}

// dnsGrain is core.dns.
func (h *host) dnsGrain() *payload.Map {
	src := "/etc/resolv.conf"
	if h.exists("/run/systemd/resolve/resolv.conf") {
		src = "/run/systemd/resolve/resolv.conf"
	}
	data, err := h.readFile(src)
	if err != nil {
		return nil
	}
	return payload.NewMap("dns", parseResolv(data))
}

// parseResolv is salt.utils.dns.parse_resolv.
func parseResolv(data string) *payload.Map {
	nameservers, ip4, ip6, search, sortlist, options := []string{}, []string{}, []string{}, []string{}, []string{}, []string{}
	domain := ""
	add := func(list []string, s string) []string {
		for _, x := range list {
			if x == s {
				return list
			}
		}
		return append(list, s)
	}
	for _, line := range strings.Split(data, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		directive := strings.ToLower(f[0])
		var args []string
		for _, a := range f[1:] {
			if a[0] == '#' || a[0] == ';' {
				break
			}
			args = append(args, a)
		}
		if len(args) == 0 {
			if directive == "search" {
				search = []string{}
			}
			continue
		}
		switch directive {
		case "nameserver":
			ip, err := netip.ParseAddr(args[0])
			if err != nil {
				continue
			}
			s := ip.String()
			nameservers = add(nameservers, s)
			if ip.Is4() {
				ip4 = add(ip4, s)
			} else {
				ip6 = add(ip6, s)
			}
		case "domain":
			domain = args[0]
		case "search":
			search = args
		case "sortlist":
			for _, raw := range args {
				if n, ok := sortlistEntry(raw); ok {
					sortlist = add(sortlist, n)
				}
			}
		case "options":
			options = add(options, args[0])
		}
	}
	return payload.NewMap(
		"nameservers", strList(nameservers),
		"ip4_nameservers", strList(ip4),
		"ip6_nameservers", strList(ip6),
		"sortlist", strList(sortlist),
		"domain", domain,
		"search", strList(search),
		"options", strList(options),
	)
}

// sortlistEntry turns a sortlist item into Python's
// ip_network(...).with_netmask, guessing the natural IPv4 netmask when none
// is given.
func sortlistEntry(raw string) (string, bool) {
	addrPart, maskPart, hasMask := strings.Cut(raw, "/")
	ip, err := netip.ParseAddr(addrPart)
	if err != nil {
		return "", false
	}
	bits := ip.BitLen()
	if hasMask {
		if m, err := netip.ParseAddr(maskPart); err == nil && ip.Is4() && m.Is4() {
			ones, okMask := maskOnes(m.AsSlice())
			if !okMask {
				return "", false
			}
			bits = ones
		} else {
			var n int
			if _, err := fmt.Sscanf(maskPart, "%d", &n); err != nil || n < 0 || n > ip.BitLen() || fmt.Sprint(n) != maskPart {
				return "", false
			}
			bits = n
		}
		if p := netip.PrefixFrom(ip, bits); p.Masked().Addr() != ip {
			return "", false // strict: host bits set
		}
	} else if ip.Is4() {
		b := ip.As4()
		switch {
		case b[0]&0xC0 == 0xC0:
			bits = 24
		case b[0]&0x80 != 0:
			bits = 16
		default:
			bits = 8
		}
	}
	p := netip.PrefixFrom(ip, bits).Masked()
	mask := net.CIDRMask(bits, ip.BitLen())
	var maskStr string
	if ip.Is4() {
		maskStr = net.IP(mask).String()
	} else {
		a, _ := netip.AddrFromSlice(mask)
		maskStr = a.String()
	}
	return p.Addr().String() + "/" + maskStr, true
}

// maskOnes returns the prefix length of a contiguous netmask.
func maskOnes(b []byte) (int, bool) {
	ones, size := net.IPMask(b).Size()
	if ones == 0 && size == 0 {
		return 0, false
	}
	return ones, true
}

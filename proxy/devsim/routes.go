package devsim

import (
	"strconv"
	"strings"
	"time"
)

// Route lookups and VRFs for the show commands NAPALM's get_route_to and get_network_instances
// send. The data comes from the device's running configuration and the fleet's cabling, so each
// device answers differently.

// routeView is one entry of the IPv4 routing table.
type routeView struct {
	Prefix, Plen, NextHop string
	Mask                  string
	Proto                 string // "connected", "local", "static" or "bgp"
	Iface                 string // outgoing interface ("" for a static route)
	Distance              int
	ASN                   string // the remote AS of a BGP route
	LocalASN              string
	Age                   time.Duration
}

// routes returns the global IPv4 routing table: static, connected (and local /32s when
// withLocal) and the BGP routes to established neighbors' loopbacks.
func (v *showView) routes(withLocal bool) []routeView {
	var out []routeView
	for _, r := range v.StaticRoutes() {
		r.Proto, r.Distance = "static", 1
		out = append(out, r)
	}
	for _, in := range v.Interfaces() {
		if !in.Admin || !in.Up || in.Addr == "" {
			continue
		}
		out = append(out, routeView{Prefix: in.Net, Plen: strconv.Itoa(in.Plen), Proto: "connected", Iface: in.Name})
		if withLocal && in.Plen < 32 {
			out = append(out, routeView{Prefix: in.Addr, Plen: "32", Proto: "local", Iface: in.Name})
		}
	}
	bgp := v.BGP()
	for _, p := range bgp.Peers {
		if p.Established && p.LocalPort != "" {
			out = append(out, routeView{Prefix: p.RemoteLoopback, Plen: "32", NextHop: p.Addr, Proto: "bgp",
				Iface: p.LocalPort, Distance: 20, ASN: p.ASN, LocalASN: bgp.ASN, Age: v.Uptime()})
		}
	}
	for i := range out {
		n, _ := strconv.Atoi(out[i].Plen)
		out[i].Mask = maskOf(n)
	}
	return out
}

// Lookup finds the route show templates asked for: Args are "[vrf NAME] ADDRESS [MASK]" or
// "[vrf NAME] PREFIX/LEN". Without a mask the longest matching prefix wins; with one the prefix
// must match exactly. It returns nil when no route matches (or the VRF has no such route).
func (v *showView) Lookup() *routeView {
	args := v.Args
	if len(args) >= 2 && strings.EqualFold(args[0], "vrf") {
		if !strings.EqualFold(args[1], "default") {
			return nil // no routes are simulated in other VRFs
		}
		args = args[2:]
	}
	if len(args) >= 2 && strings.EqualFold(args[len(args)-2], "vrf") { // NX-OS: ADDRESS vrf NAME
		if !strings.EqualFold(args[len(args)-1], "default") {
			return nil
		}
		args = args[:len(args)-2]
	}
	if len(args) == 0 {
		return nil
	}
	addr, plen, exact := args[0], 32, false
	if a, l, ok := strings.Cut(addr, "/"); ok {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 || n > 32 {
			return nil
		}
		addr, plen, exact = a, n, true
	} else if len(args) >= 2 && ipv4(args[1]) != nil {
		_, plen = parseAddr(args[:2])
		exact = true
	}
	if ipv4(addr) == nil {
		return nil
	}
	var best *routeView
	for _, r := range v.routes(true) {
		n, _ := strconv.Atoi(r.Plen)
		if exact {
			if n == plen && networkOf(addr, n) == r.Prefix {
				return &r
			}
			continue
		}
		if networkOf(addr, n) == r.Prefix && (best == nil || n > atoiOr(best.Plen)) {
			best = &r
		}
	}
	return best
}

func atoiOr(s string) int { n, _ := strconv.Atoi(s); return n }

func maskOf(plen int) string {
	if plen <= 0 {
		return "0.0.0.0"
	}
	return dotted(^uint32(0) << (32 - plen))
}

// vrfView is one VRF of the running configuration.
type vrfView struct {
	Name, RD   string
	Interfaces []string // canonical names, configuration order
	Short      []string // the same, abbreviated
}

// VRFs lists the VRFs the running configuration defines (platform.yaml's vrf_blocks), with the
// interfaces that are members (vrf_member lines).
func (v *showView) VRFs() []vrfView {
	s := v.s
	def := s.p.def.VRF
	s.dev.mu.Lock()
	defer s.dev.mu.Unlock()
	run := s.dev.state().running
	var out []vrfView
	idx := map[string]int{}
	for _, st := range run.items {
		for _, b := range def.Blocks {
			name, ok := strings.CutPrefix(st.line, b+" ")
			if !ok || strings.Contains(name, " ") || def.Skip == name {
				continue
			}
			vv := vrfView{Name: name, RD: "<not set>"}
			for _, ch := range st.children {
				if rd, ok := strings.CutPrefix(ch.line, "rd "); ok {
					vv.RD = rd
				}
			}
			idx[name] = len(out)
			out = append(out, vv)
		}
	}
	for _, st := range run.items {
		ifn, ok := strings.CutPrefix(st.line, "interface ")
		if !ok {
			continue
		}
		for _, ch := range st.children {
			for _, m := range def.Members {
				if name, ok := strings.CutPrefix(ch.line, m+" "); ok {
					if i, ok := idx[name]; ok {
						out[i].Interfaces = append(out[i].Interfaces, ifn)
						out[i].Short = append(out[i].Short, s.p.d.shortIf(ifn))
					}
				}
			}
		}
	}
	return out
}

// DefaultVRFInterfaces lists the interfaces of the default VRF (members of no VRF block).
func (v *showView) DefaultVRFInterfaces() []string {
	in := map[string]bool{}
	for _, vrf := range v.VRFs() {
		for _, n := range vrf.Interfaces {
			in[n] = true
		}
	}
	var out []string
	for _, i := range v.Interfaces() {
		if !in[i.Name] {
			out = append(out, i.Name)
		}
	}
	return out
}

// Peer returns the BGP neighbor the first argument names, nil when none matches.
func (v *showView) Peer() *bgpPeerView {
	for _, a := range v.Args {
		for _, p := range v.BGP().Peers {
			if p.Addr == a {
				return &p
			}
		}
	}
	return nil
}

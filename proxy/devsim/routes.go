package devsim

import (
	"cmp"
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
	Iface, Short          string // outgoing interface ("" for a static route), abbreviated
	Addr                  string // the interface's own address (connected and local routes)
	Distance              int
	ASN                   string // the remote AS of a BGP route
	LocalASN              string
	Age                   time.Duration
}

// RoutesIn returns the IPv4 routing table of a VRF: static routes (global "ip route" lines for
// the default VRF, "ip route" lines of the VRF block otherwise), connected and local routes of
// the VRF's interfaces, and, in the default VRF, BGP routes to established neighbors' loopbacks.
func (v *showView) RoutesIn(vrf string) []routeView {
	var out []routeView
	member := map[string]string{}
	vrfs := v.VRFs()
	for _, x := range vrfs {
		for _, n := range x.Interfaces {
			member[n] = x.Name
		}
	}
	up := v.Uptime()
	if vrf == "default" {
		for _, r := range v.StaticRoutes() {
			r.Proto, r.Distance = "static", 1
			out = append(out, r)
		}
	} else {
		for _, x := range vrfs {
			if x.Name == vrf {
				for _, r := range x.Statics {
					r.Proto, r.Distance = "static", 1
					out = append(out, r)
				}
			}
		}
	}
	for _, in := range v.Interfaces() {
		if !in.Admin || !in.Up || in.Addr == "" || cmp.Or(member[in.Name], "default") != vrf {
			continue
		}
		out = append(out, routeView{Prefix: in.Net, Plen: strconv.Itoa(in.Plen), Proto: "connected", Iface: in.Name,
			Short: in.Short, Addr: in.Addr})
		if in.Plen < 32 {
			out = append(out, routeView{Prefix: in.Addr, Plen: "32", Proto: "local", Iface: in.Name, Short: in.Short, Addr: in.Addr})
		}
	}
	if vrf == "default" {
		bgp := v.BGP()
		for _, p := range bgp.Peers {
			if p.Established && p.LocalPort != "" {
				out = append(out, routeView{Prefix: p.RemoteLoopback, Plen: "32", NextHop: p.Addr, Proto: "bgp",
					Iface: p.LocalPort, Short: v.s.p.d.shortIf(p.LocalPort), Distance: 20, ASN: p.ASN, LocalASN: bgp.ASN})
			}
		}
	}
	for i := range out {
		n, _ := strconv.Atoi(out[i].Plen)
		out[i].Mask = maskOf(n)
		out[i].Age = up
	}
	return out
}

// VRFNames is "default" and the configured VRFs.
func (v *showView) VRFNames() []string {
	out := []string{"default"}
	for _, x := range v.VRFs() {
		out = append(out, x.Name)
	}
	return out
}

// ArgVRF is the VRF the arguments name ("vrf NAME" anywhere), "default" without one.
func (v *showView) ArgVRF() string {
	for i := 0; i+1 < len(v.Args); i++ {
		if strings.EqualFold(v.Args[i], "vrf") {
			return v.Args[i+1]
		}
	}
	return "default"
}

// VRFTable is the default VRF (with every interface that is in no VRF) followed by the
// configured VRFs.
func (v *showView) VRFTable() []vrfView {
	def := vrfView{Name: "default", RD: "<not set>", Interfaces: []string{}, Short: []string{}}
	for _, n := range v.DefaultVRFInterfaces() {
		def.Interfaces = append(def.Interfaces, n)
		def.Short = append(def.Short, v.s.p.d.shortIf(n))
	}
	return append([]vrfView{def}, v.VRFs()...)
}

// Lookup finds the route show templates asked for in the VRF the arguments name: Args are
// "[vrf NAME] ADDRESS [MASK] [vrf NAME]" or with PREFIX/LEN. It returns nil when none matches.
func (v *showView) Lookup() *routeView { return v.LookupIn(v.ArgVRF()) }

// LookupIn is Lookup in the given VRF. Without a mask the longest matching prefix wins; with
// one the prefix must match exactly.
func (v *showView) LookupIn(vrf string) *routeView {
	var args []string
	for i := 0; i < len(v.Args); i++ {
		if strings.EqualFold(v.Args[i], "vrf") {
			i++
			continue
		}
		args = append(args, v.Args[i])
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
	for _, r := range v.RoutesIn(vrf) {
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
	Interfaces []string    // canonical names, configuration order
	Short      []string    // the same, abbreviated
	Statics    []routeView // "ip route" lines of the VRF block
	ID         int         // 1 is the default VRF
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
			vv := vrfView{Name: name, RD: "<not set>", Interfaces: []string{}, Short: []string{}, ID: len(out) + 2}
			for _, ch := range st.children {
				if rd, ok := strings.CutPrefix(ch.line, "rd "); ok {
					vv.RD = rd
				}
				if f := strings.Fields(ch.line); len(f) >= 4 && f[0] == "ip" && f[1] == "route" {
					if a, l, ok := strings.Cut(f[2], "/"); ok {
						vv.Statics = append(vv.Statics, routeView{Prefix: a, Plen: l, NextHop: f[3]})
					} else if len(f) >= 5 {
						_, n := parseAddr(f[2:4])
						vv.Statics = append(vv.Statics, routeView{Prefix: f[2], Plen: strconv.Itoa(n), NextHop: f[4]})
					}
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

// ProtoOK reports whether a route of protocol proto passes the protocol word of the arguments
// (bgp, static, connected); true when they name none.
func (v *showView) ProtoOK(proto string) bool {
	for _, a := range v.Args {
		switch w := strings.ToLower(a); w {
		case "bgp", "static", "connected":
			return w == proto || (w == "connected" && proto == "local")
		}
	}
	return true
}

package devsim

import (
	"fmt"
	"strings"
	"time"
)

// Template data. Platform templates (platforms/<name>/*.tmpl) see a deviceView when they render
// a startup configuration, a headerView for a configuration file header and a showView for show
// output. The views compute from the device's live state; show views take d.mu themselves.

// deviceView is the data of a startup-configuration template.
type deviceView struct {
	Index                                           int
	Hostname, Domain, Loopback, MgmtIP, Serial, ASN string
	Gateway                                         string
	Links                                           []linkView // the next and prev ports, in that order
	Neighbors                                       []peerLink // cabled neighbors
}

// linkView is one inter-device port; Peer is nil when nothing is cabled to it.
type linkView struct {
	Port string
	Peer *peerLink
}

// peerLink is the device at the other end of a link.
type peerLink struct {
	Index                                int
	Host, LocalPort, RemotePort, LocalIP string
	RemoteIP, ASN, RemoteLoopback        string
}

func (f *Fleet) deviceView(i int) deviceView {
	v := deviceView{Index: i, Hostname: f.hostnameOf(i), Domain: domainName, Loopback: loopbackIP(i),
		MgmtIP: mgmtIP(i), Serial: f.serialOf(i), ASN: asnOf(i), Gateway: mgmtGateway}
	byPort := map[string]*peerLink{}
	for _, n := range f.neighbors(i) {
		pl := peerLink{Index: n.index, Host: f.hostnameOf(n.index), LocalPort: n.localPort, RemotePort: n.remotePort,
			LocalIP: n.localIP, RemoteIP: n.remoteIP, ASN: asnOf(n.index), RemoteLoopback: loopbackIP(n.index)}
		v.Neighbors = append(v.Neighbors, pl)
		byPort[n.localPort] = &pl
	}
	for _, port := range []string{f.plat.nextPort, f.plat.prevPort} {
		v.Links = append(v.Links, linkView{Port: port, Peer: byPort[port]})
	}
	return v
}

// startupText renders device i's startup configuration from the platform template.
func (p *platform) startupText(f *Fleet, i int) string {
	var b strings.Builder
	if err := p.tmpl.ExecuteTemplate(&b, p.def.StartupConfig, f.deviceView(i)); err != nil {
		f.opts.Logger.Error("devsim: startup template", "platform", p.name, "err", err)
	}
	return b.String()
}

// headerView is the data of a configuration-file header template.
type headerView struct {
	Host string
	Time time.Time
	By   string // who changed the configuration last, "" when unknown
}

// configFileHeader renders the header of a configuration file. d.mu must be held.
func (p *platform) configFileHeader(d *Device, t time.Time) string {
	v := headerView{Host: d.hostname(), Time: t}
	if d.st != nil {
		v.By = d.st.changedBy
	}
	var b strings.Builder
	if err := p.tmpl.ExecuteTemplate(&b, p.def.ConfigHeader, v); err != nil {
		d.fleet.opts.Logger.Error("devsim: header template", "platform", p.name, "err", err)
	}
	return b.String()
}

// showView is the data of a show template. Its methods lock the device as they need.
type showView struct {
	s    *shell
	Args []string
	// Data is what a Go handler computed before rendering (nil for plain template commands).
	Data any
}

// render executes template name for the shell's device.
func (s *shell) render(name string, args []string) string {
	return s.renderData(name, args, nil)
}

// renderData executes template name with data computed by a Go handler.
func (s *shell) renderData(name string, args []string, data any) string {
	var b strings.Builder
	if err := s.p.tmpl.ExecuteTemplate(&b, name, &showView{s: s, Args: args, Data: data}); err != nil {
		s.dev.fleet.opts.Logger.Error("devsim: show template", "platform", s.p.name, "template", name, "err", err)
		return "% Internal error: " + name
	}
	return b.String()
}

// Host is the configured hostname.
func (v *showView) Host() string {
	v.s.dev.mu.Lock()
	defer v.s.dev.mu.Unlock()
	return v.s.dev.hostname()
}

// Now is the device clock.
func (v *showView) Now() time.Time { return v.s.dev.fleet.opts.Now() }

// Uptime is the time since the device booted.
func (v *showView) Uptime() time.Duration {
	f := v.s.dev.fleet
	return f.opts.Now().Sub(f.bootTime(v.s.dev.index))
}

// Device is the fleet data the startup configuration was built from.
func (v *showView) Device() deviceView { return v.s.dev.fleet.deviceView(v.s.dev.index) }

// Gateway is the management gateway.
func (v *showView) Gateway() string { return mgmtGateway }

// ifView is one interface as show templates see it.
type ifView struct {
	Name, Short, Description, Addr, Net string
	Plen, MTU                           int
	Admin, Up                           bool
	Status, Protocol                    string // IOS words: "up"/"down"/"administratively down"
}

// Interfaces lists the interfaces in configuration order.
func (v *showView) Interfaces() []ifView {
	s := v.s
	s.dev.mu.Lock()
	ifs := s.p.d.interfaces(s.dev.state().running)
	out := make([]ifView, 0, len(ifs))
	for _, in := range ifs {
		admin, up := s.ifState(in)
		st, proto := iosStatus(admin, up)
		iv := ifView{Name: in.name, Short: s.p.d.shortIf(in.name), Description: in.description, Addr: in.addr,
			Plen: in.plen, MTU: in.mtu, Admin: admin, Up: up, Status: st, Protocol: proto}
		if in.addr != "" {
			iv.Net = networkOf(in.addr, in.plen)
		}
		out = append(out, iv)
	}
	s.dev.mu.Unlock()
	return out
}

// arpView is one ARP entry; Own marks the device's own addresses.
type arpView struct {
	IP, MAC, Iface string
	Own            bool
	Age            int // seconds
}

// ARP is the ARP table sorted by address.
func (v *showView) ARP() []arpView {
	v.s.dev.mu.Lock()
	tab := v.s.arpTable()
	v.s.dev.mu.Unlock()
	out := make([]arpView, len(tab))
	for i, e := range tab {
		out[i] = arpView{IP: e.ip, MAC: e.mac, Iface: e.iface, Own: e.own, Age: e.age}
	}
	return out
}

// ntpView is one configured NTP server.
type ntpView struct {
	Addr   string
	Synced bool
}

// NTP lists the configured NTP servers.
func (v *showView) NTP() []ntpView {
	v.s.dev.mu.Lock()
	peers := v.s.ntpPeers()
	v.s.dev.mu.Unlock()
	out := make([]ntpView, len(peers))
	for i, p := range peers {
		out[i] = ntpView{Addr: p.addr, Synced: p.synced}
	}
	return out
}

// StaticRoutes lists the static routes of the global table.
func (v *showView) StaticRoutes() []routeView {
	v.s.dev.mu.Lock()
	st := v.s.staticRoutes()
	v.s.dev.mu.Unlock()
	up := v.Uptime()
	out := make([]routeView, len(st))
	for i, r := range st {
		out[i] = routeView{Prefix: r[0], Plen: r[1], NextHop: r[2], Age: up}
	}
	return out
}

// DefaultGateway is the next hop of the static default route, "" without one.
func (v *showView) DefaultGateway() string {
	gw := ""
	for _, r := range v.StaticRoutes() {
		if r.Prefix == "0.0.0.0" && r.Plen == "0" {
			gw = r.NextHop
		}
	}
	return gw
}

// bgpView is the BGP state of the device.
type bgpView struct {
	Active        bool // "router bgp" is configured
	ASN, RouterID string
	Peers         []bgpPeerView
	Established   int
}

// bgpPeerView is one configured BGP neighbor; the Remote fields are set when a fleet device
// answers on the address.
type bgpPeerView struct {
	Addr, ASN, Description, RemoteID string
	Established                      bool
	Rcvd, Sent                       int
	Internal                         bool
	LocalPort, RemoteLoopback        string
	LocalAddr                        string // the address of LocalPort
	RemoteIndex                      int
}

// BGP is the device's BGP state.
func (v *showView) BGP() bgpView {
	s := v.s
	f := s.dev.fleet
	s.dev.mu.Lock()
	asn, rid, peers, ok := s.bgpState()
	s.dev.mu.Unlock()
	out := bgpView{Active: ok, ASN: asn, RouterID: rid}
	addrs := map[string]string{}
	for _, in := range v.Interfaces() {
		addrs[in.Name] = in.Addr
	}
	for _, p := range peers {
		pv := bgpPeerView{Addr: p.addr, ASN: p.asn, Description: p.descr, RemoteID: p.remoteID,
			Established: p.established, Rcvd: p.rcvd, Sent: p.sent, Internal: p.asn == asn, RemoteIndex: -1}
		if p.established {
			out.Established++
			for _, n := range f.neighbors(s.dev.index) {
				if n.remoteIP == p.addr {
					pv.LocalPort, pv.RemoteLoopback, pv.RemoteIndex = n.localPort, loopbackIP(n.index), n.index
					pv.LocalAddr = addrs[n.localPort]
				}
			}
		}
		out.Peers = append(out.Peers, pv)
	}
	return out
}

// hms formats seconds as h:mm:ss.
func hms(sec int) string { return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60) }

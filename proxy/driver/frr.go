package driver

// The FRRouting driver: vtysh over SSH through scrapligo, with the
// candidate configuration kept in the driver (FRR has none of its own).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/util"
)

// Prompt patterns of vtysh: "host# " in exec mode, "host(config)# ",
// "host(config-router-af)# " etc. in the configuration modes, and a login
// shell ("user@host:~$ ") before vtysh is started. scrapligo's bundled
// platforms do not fit: the trailing space and the configuration sub-modes
// make cisco_iosxe and cumulus_vtysh wait for a prompt forever.
const (
	frrExecPattern   = `(?m)^[\w.\-]{1,63}#\s?$`
	frrConfigPattern = `(?m)^[\w.\-]{1,63}\(config[\w.\-@/:+]{0,32}\)#\s?$`
	frrShellPattern  = `(?m)^\S+@\S+:\S*[$#]\s?$`
	// frrTermWidth keeps readline from wrapping long configuration lines.
	frrTermWidth = 4095
)

// frr is the FRRouting driver; see NewFRR.
type frr struct {
	base
	noConfirmedCommit
	vtysh string
	save  bool

	// The candidate and the configuration before the last commit; guarded
	// by the session's operation slot.
	candidate string
	replace   bool
	loaded    bool
	previous  string
	havePrev  bool
}

// NewFRR returns an unopened driver for FRRouting routers ("frr"), spoken
// to through vtysh over SSH: the login either runs vtysh directly (an
// account whose shell or ForceCommand is vtysh) or lands in a Linux shell,
// where the driver starts vtysh (optional argument vtysh_command, default
// "vtysh").
//
// FRR applies configuration commands at once and has no candidate, so the
// candidate lives in the driver: LoadMergeCandidate and LoadReplaceCandidate
// only keep the text, CompareConfig computes the change against "show
// running-config" and CommitConfig applies it as vtysh configuration
// commands. A merge adds the candidate's lines that are missing and runs
// its "no ..." lines whose target is present; a replace works like
// frr-reload.py: the running lines the candidate lacks are removed ("no
// ..."), the candidate lines the running configuration lacks are added. A
// commit that the router rejects part-way is undone by replacing the
// configuration with the one read before it; Rollback restores that same
// configuration after a successful commit. A commit (and a rollback) ends
// with "write memory" unless the optional argument save_config is false.
// FRR has no commit messages, commit-confirm or uptime (Facts.Uptime is -1).
func NewFRR(o Options) (Driver, error) {
	s, err := newSession("frr", "", o)
	if err != nil {
		return nil, err
	}
	return &frr{
		base:              base{s: s},
		noConfirmedCommit: noConfirmedCommit{"frr"},
		vtysh:             optString(o.OptionalArgs, "vtysh_command", "vtysh"),
		save:              optBool(o.OptionalArgs, "save_config", true),
	}, nil
}

// Capabilities implements Driver.
func (f *frr) Capabilities() Capabilities {
	return Capabilities{CandidateConfig: true}
}

func frrPrivilegeLevels(vtysh string) map[string]*network.PrivilegeLevel {
	return map[string]*network.PrivilegeLevel{
		"linux": {Name: "linux", Pattern: frrShellPattern},
		"exec": {
			Name: "exec", Pattern: frrExecPattern,
			PreviousPriv: "linux", Escalate: vtysh, Deescalate: "exit",
		},
		"configuration": {
			Name: "configuration", Pattern: frrConfigPattern,
			PreviousPriv: "exec", Escalate: "configure terminal", Deescalate: "end",
		},
	}
}

// Open implements Driver: it logs in, starts vtysh if the login gave a
// shell, and turns paging off.
func (f *frr) Open(ctx context.Context) error {
	s := f.s
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	s.drop()
	dl := s.deadline(ctx)
	rem := time.Until(dl)
	if rem <= 0 {
		return s.errf(ErrTimeout, "open", ctx.Err())
	}
	opts := []util.Option{
		options.WithAuthNoStrictKey(),
		options.WithAuthUsername(s.o.Username),
		options.WithAuthPassword(s.o.Password),
		options.WithPort(s.o.Port),
		options.WithTransportType(s.tport),
		options.WithTimeoutSocket(rem),
		options.WithTimeoutOps(rem),
		options.WithTermWidth(frrTermWidth),
		options.WithPrivilegeLevels(frrPrivilegeLevels(f.vtysh)),
		options.WithDefaultDesiredPriv("exec"),
		options.WithFailedWhenContains([]string{
			"% Unknown command", "% Command incomplete", "% Ambiguous command", "% Invalid",
		}),
		options.WithNetworkOnOpen(func(d *network.Driver) error {
			if err := d.AcquirePriv("exec"); err != nil {
				return err
			}
			_, err := d.SendCommand("terminal length 0")
			return err
		}),
		options.WithNetworkOnClose(func(d *network.Driver) error {
			if err := d.AcquirePriv("exec"); err != nil {
				return err
			}
			if err := d.Channel.Write([]byte("exit"), false); err != nil {
				return err
			}
			return d.Channel.WriteReturn()
		}),
	}
	opts = append(opts, s.leanTransport()...)
	d, err := network.NewDriver(s.o.Host, opts...)
	if err != nil {
		return s.errf(ErrInvalidArgument, "open", err)
	}
	s.log.Debug("driver: opening", "driver", s.name, "addr", s.addr)
	// As in session.open: the SSH handshake is not bounded by crypto/ssh,
	// so the open is abandoned (and closed once it returns) when the time
	// is up.
	abandoned, err := openWithin(ctx, rem, d.Open, func() { _ = d.Channel.Close() })
	if abandoned || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return s.ctxErr("open", err)
	}
	if err != nil {
		return s.classifyOpen(err, dl)
	}
	s.d = d
	s.openedAt = time.Now()
	return nil
}

// Cli implements Driver. A command vtysh does not know fails the call, as
// in NAPALM.
func (f *frr) Cli(ctx context.Context, commands []string) (map[string]string, error) {
	out := make(map[string]string, len(commands))
	err := f.s.run(ctx, func(o *op) error {
		for _, c := range commands {
			r, err := o.show(c)
			if err != nil {
				return err
			}
			out[c] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LoadMergeCandidate implements Driver; nothing is sent to the router.
func (f *frr) LoadMergeCandidate(ctx context.Context, config string) error {
	return f.load(ctx, config, false)
}

// LoadReplaceCandidate implements Driver; nothing is sent to the router.
func (f *frr) LoadReplaceCandidate(ctx context.Context, config string) error {
	return f.load(ctx, config, true)
}

func (f *frr) load(ctx context.Context, config string, replace bool) error {
	if len(config) > maxOutput {
		return fmt.Errorf("%w: frr: candidate larger than %d bytes", ErrInvalidArgument, maxOutput)
	}
	return f.s.run(ctx, func(*op) error {
		f.candidate, f.replace, f.loaded = config, replace, true
		return nil
	})
}

// DiscardConfig implements Driver.
func (f *frr) DiscardConfig(ctx context.Context) error {
	return f.s.run(ctx, func(*op) error {
		f.candidate, f.replace, f.loaded = "", false, false
		return nil
	})
}

// running reads the running configuration without vtysh's preamble.
func (f *frr) running(o *op) (string, error) {
	out, err := o.show("show running-config")
	if err != nil {
		return "", err
	}
	return stripFRRPreamble(out), nil
}

func (f *frr) plan(running string) *frrPlan {
	r, c := parseFRRConfig(running), parseFRRConfig(f.candidate)
	if f.replace {
		return planFRRReplace(r, c)
	}
	return planFRRMerge(r, c)
}

// CompareConfig implements Driver. The difference has one line per
// command: "+" added, "-" removed, " " the enclosing context, indented one
// space per context level. It is "" without a candidate or when the
// candidate changes nothing.
func (f *frr) CompareConfig(ctx context.Context) (string, error) {
	var diff string
	err := f.s.run(ctx, func(o *op) error {
		if !f.loaded {
			return nil
		}
		run, err := f.running(o)
		if err != nil {
			return err
		}
		diff = f.plan(run).diff()
		return nil
	})
	return diff, err
}

// CommitConfig implements Driver (see NewFRR).
func (f *frr) CommitConfig(ctx context.Context, message string, revertIn int) error {
	if err := checkCommitArgs(f.s, f.Capabilities(), message, revertIn); err != nil {
		return err
	}
	return f.s.run(ctx, func(o *op) error {
		if !f.loaded {
			return f.s.errf(ErrCommand, "commit_config", errors.New("no candidate configuration loaded"))
		}
		run, err := f.running(o)
		if err != nil {
			return err
		}
		p := f.plan(run)
		if err := f.apply(o, p); err != nil {
			if o.fatal {
				return err
			}
			if rerr := f.restore(o, run); rerr != nil {
				return fmt.Errorf("%w (restoring the previous configuration failed too: %v)", err, rerr)
			}
			return fmt.Errorf("%w (previous configuration restored)", err)
		}
		f.previous, f.havePrev = run, true
		f.candidate, f.replace, f.loaded = "", false, false
		if len(p.ops) == 0 {
			return nil
		}
		return f.saveConfig(o)
	})
}

// Rollback implements Driver: it restores the running configuration read
// before the last successful commit (again on every call).
func (f *frr) Rollback(ctx context.Context) error {
	return f.s.run(ctx, func(o *op) error {
		if !f.havePrev {
			return f.s.errf(ErrCommand, "rollback", errors.New("no commit to roll back"))
		}
		if err := f.restore(o, f.previous); err != nil {
			return err
		}
		return f.saveConfig(o)
	})
}

// restore replaces the running configuration with config.
func (f *frr) restore(o *op, config string) error {
	run, err := f.running(o)
	if err != nil {
		return err
	}
	return f.apply(o, planFRRReplace(parseFRRConfig(run), parseFRRConfig(config)))
}

// saveConfig runs "write memory" unless save_config is off. A failure is
// logged, not returned: the change is live, only its persistence failed
// (NAPALM's drivers do not check it either).
func (f *frr) saveConfig(o *op) error {
	if !f.save {
		return nil
	}
	out, failed, err := o.send("write memory")
	if err != nil {
		return err
	}
	if msg := frrConfigFailure(out); failed || msg != "" {
		f.s.log.Warn("driver: configuration applied but not saved", "driver", f.s.name,
			"addr", f.s.addr, "output", deviceMessage(out))
	}
	return nil
}

// apply runs a plan in configuration mode, stopping at the first command
// vtysh rejects, and returns to exec mode.
func (f *frr) apply(o *op, p *frrPlan) error {
	if len(p.ops) == 0 {
		return nil
	}
	if err := o.budget("configure terminal"); err != nil {
		return err
	}
	if err := o.d.AcquirePriv("configuration"); err != nil {
		return o.fail("configure terminal", err)
	}
	var rejected error
	for _, c := range p.commands() {
		out, failed, err := o.sendRaw(c)
		if err != nil {
			return err
		}
		if failed || frrConfigFailure(out) != "" {
			rejected = o.rejected(c, out)
			break
		}
	}
	if err := o.home("configuration"); err != nil {
		return err
	}
	return rejected
}

// frrConfigFailure returns vtysh's complaints in a configuration command's
// output ("% ..." lines, "<daemon> is not running"), or "".
func frrConfigFailure(out string) string {
	var msgs []string
	for l := range strings.SplitSeq(out, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "%") || strings.HasSuffix(l, " is not running") {
			msgs = append(msgs, l)
		}
	}
	return strings.Join(msgs, "; ")
}

// GetConfig implements Driver: running is "show running-config" without
// its preamble, startup "show startup-config" (which vtysh fills only with
// an integrated frr.conf), candidate the loaded candidate.
func (f *frr) GetConfig(ctx context.Context, retrieve string) (Config, error) {
	var c Config
	if err := checkRetrieve(retrieve); err != nil {
		return c, err
	}
	err := f.s.run(ctx, func(o *op) error {
		if retrieve == "all" || retrieve == "running" {
			r, err := f.running(o)
			if err != nil {
				return err
			}
			c.Running = r
		}
		if retrieve == "all" || retrieve == "startup" {
			r, err := o.show("show startup-config")
			if err != nil {
				return err
			}
			c.Startup = stripFRRPreamble(r)
		}
		if retrieve == "all" || retrieve == "candidate" {
			c.Candidate = f.candidate
		}
		return nil
	})
	return c, err
}

// GetFacts implements Driver from "show version", the running
// configuration (hostname, domainname) and "show interface vrf all
// brief". FRR reports no uptime (-1) and no serial number.
func (f *frr) GetFacts(ctx context.Context) (Facts, error) {
	var fa Facts
	err := f.s.run(ctx, func(o *op) error {
		ver, err := o.show("show version")
		if err != nil {
			return err
		}
		run, err := f.running(o)
		if err != nil {
			return err
		}
		ifs, err := o.show("show interface vrf all brief")
		if err != nil {
			return err
		}
		fa = parseFRRFacts(ver, run, ifs)
		return nil
	})
	return fa, err
}

var frrVersionRe = regexp.MustCompile(`^(\S+) (\S+) \(([^)]*)\)`)

func parseFRRFacts(version, running, ifBrief string) Facts {
	fa := Facts{Uptime: -1, Vendor: "FRRouting", Model: "FRRouting", InterfaceList: []string{}}
	for l := range strings.SplitSeq(version, "\n") {
		if m := frrVersionRe.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			fa.OSVersion, fa.Hostname = m[2], m[3]
			break
		}
	}
	var domain string
	for l := range strings.SplitSeq(running, "\n") {
		if v, ok := strings.CutPrefix(l, "hostname "); ok {
			fa.Hostname = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "domainname "); ok {
			domain = strings.TrimSpace(v)
		}
	}
	fa.FQDN = fa.Hostname
	if domain != "" {
		fa.FQDN += "." + domain
	}
	for l := range strings.SplitSeq(ifBrief, "\n") {
		fs := strings.Fields(l)
		if len(fs) < 2 || fs[0] == "Interface" || strings.HasPrefix(fs[0], "---") {
			continue
		}
		if !slices.Contains(fa.InterfaceList, fs[0]) {
			fa.InterfaceList = append(fa.InterfaceList, fs[0])
		}
	}
	return fa
}

// frrInterface is one interface of "show interface vrf all json".
type frrInterface struct {
	AdministrativeStatus string `json:"administrativeStatus"`
	OperationalStatus    string `json:"operationalStatus"`
	Description          string `json:"description"`
	HardwareAddress      string `json:"hardwareAddress"`
	MTU                  int    `json:"mtu"`
	Speed                int    `json:"speed"`
	IPAddresses          []struct {
		Address string `json:"address"`
	} `json:"ipAddresses"`
}

// frrInterfaces reads "show interface vrf all json": interfaces by name,
// either directly or grouped by VRF.
func frrInterfaces(o *op) (map[string]frrInterface, error) {
	out, err := o.show("show interface vrf all json")
	if err != nil {
		return nil, err
	}
	return parseFRRInterfaces(out)
}

func parseFRRInterfaces(out string) (map[string]frrInterface, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		return nil, fmt.Errorf("%w: frr: show interface vrf all json: %w", ErrCommand, err)
	}
	res := map[string]frrInterface{}
	for name, v := range raw {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(v, &probe); err != nil {
			continue
		}
		if _, ok := probe["administrativeStatus"]; !ok {
			// A VRF grouping its interfaces.
			if inner, err := parseFRRInterfaces(string(v)); err == nil {
				for n, i := range inner {
					res[n] = i
				}
			}
			continue
		}
		var i frrInterface
		if err := json.Unmarshal(v, &i); err == nil {
			res[name] = i
		}
	}
	return res, nil
}

// GetInterfaces implements Driver from "show interface vrf all json"
// (LastFlapped is -1: FRR prints the flap times in the router's local
// time zone, which the driver does not know).
func (f *frr) GetInterfaces(ctx context.Context) (map[string]Interface, error) {
	var res map[string]Interface
	err := f.s.run(ctx, func(o *op) error {
		ifs, err := frrInterfaces(o)
		if err != nil {
			return err
		}
		res = make(map[string]Interface, len(ifs))
		for n, i := range ifs {
			res[n] = Interface{
				IsEnabled:   i.AdministrativeStatus == "up",
				IsUp:        i.OperationalStatus == "up",
				Description: i.Description,
				MACAddress:  normalizeMAC(i.HardwareAddress),
				LastFlapped: -1,
				MTU:         i.MTU,
				Speed:       float64(i.Speed),
			}
		}
		return nil
	})
	return res, err
}

// GetInterfacesIP implements Driver from "show interface vrf all json".
func (f *frr) GetInterfacesIP(ctx context.Context) (map[string]InterfaceIP, error) {
	var res map[string]InterfaceIP
	err := f.s.run(ctx, func(o *op) error {
		ifs, err := frrInterfaces(o)
		if err != nil {
			return err
		}
		res = map[string]InterfaceIP{}
		for n, i := range ifs {
			var e InterfaceIP
			for _, a := range i.IPAddresses {
				ip, plen, ok := strings.Cut(a.Address, "/")
				if !ok {
					continue
				}
				p := IPPrefix{PrefixLength: atoi(plen, 0)}
				if strings.Contains(ip, ":") {
					if e.IPv6 == nil {
						e.IPv6 = map[string]IPPrefix{}
					}
					e.IPv6[ip] = p
				} else {
					if e.IPv4 == nil {
						e.IPv4 = map[string]IPPrefix{}
					}
					e.IPv4[ip] = p
				}
			}
			if e.IPv4 != nil || e.IPv6 != nil {
				res[n] = e
			}
		}
		return nil
	})
	return res, err
}

// frrBGPSummary is "show bgp vrf all summary json": VRF -> address family
// -> summary.
type frrBGPSummary map[string]map[string]struct {
	RouterID string `json:"routerId"`
	AS       int64  `json:"as"`
	Peers    map[string]struct {
		RemoteAS       int64  `json:"remoteAs"`
		LocalAS        int64  `json:"localAs"`
		State          string `json:"state"`
		PeerState      string `json:"peerState"`
		PeerUptimeMsec int64  `json:"peerUptimeMsec"`
		PfxRcd         int    `json:"pfxRcd"`
		PfxSnt         int    `json:"pfxSnt"`
		Desc           string `json:"desc"`
	} `json:"peers"`
}

// GetBGPNeighbors implements Driver from "show bgp vrf all summary json"
// (the default VRF is "global"; remote_id is "": the summary lacks it). A
// router without bgpd has no neighbors.
func (f *frr) GetBGPNeighbors(ctx context.Context) (map[string]BGPVRF, error) {
	var res map[string]BGPVRF
	err := f.s.run(ctx, func(o *op) error {
		out, err := o.show("show bgp vrf all summary json")
		if err != nil {
			return err
		}
		res, err = parseFRRBGPSummary(out)
		return err
	})
	return res, err
}

func parseFRRBGPSummary(out string) (map[string]BGPVRF, error) {
	res := map[string]BGPVRF{}
	out = strings.TrimSpace(out)
	if !strings.HasPrefix(out, "{") {
		return res, nil // "bgpd is not running"
	}
	var sum frrBGPSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		return nil, fmt.Errorf("%w: frr: show bgp vrf all summary json: %w", ErrCommand, err)
	}
	for vrf, afs := range sum {
		name := vrf
		if vrf == "default" {
			name = "global"
		}
		v := BGPVRF{Peers: map[string]BGPPeer{}}
		for af, s := range afs {
			if v.RouterID == "" {
				v.RouterID = s.RouterID
			}
			afName := map[string]string{"ipv4Unicast": "ipv4", "ipv6Unicast": "ipv6"}[af]
			if afName == "" {
				afName = strings.ToLower(af)
			}
			for addr, p := range s.Peers {
				peer, ok := v.Peers[addr]
				if !ok {
					up := p.State == "Established"
					uptime := -1
					if up {
						uptime = int(p.PeerUptimeMsec / 1000)
					}
					local := p.LocalAS
					if local == 0 {
						local = s.AS
					}
					peer = BGPPeer{
						LocalAS: local, RemoteAS: p.RemoteAS, IsUp: up,
						IsEnabled:   !strings.Contains(p.State, "Admin") && p.PeerState != "Admin",
						Description: p.Desc, Uptime: uptime,
						AddressFamily: map[string]BGPAFStats{},
					}
				}
				peer.AddressFamily[afName] = BGPAFStats{
					ReceivedPrefixes: p.PfxRcd, AcceptedPrefixes: p.PfxRcd, SentPrefixes: p.PfxSnt,
				}
				v.Peers[addr] = peer
			}
		}
		res[name] = v
	}
	return res, nil
}

// frrUnsupported is the error of the getters FRR has no source for.
func (f *frr) frrUnsupported(what string) error {
	return f.s.errf(ErrNotSupported, what, errors.New("not available on FRRouting"))
}

// GetArpTable implements Driver: not available (vtysh shows no ARP table).
func (f *frr) GetArpTable(ctx context.Context, vrf string) ([]ARPEntry, error) {
	return nil, f.frrUnsupported("get_arp_table")
}

// GetLLDPNeighbors implements Driver: not available (FRR has no LLDP).
func (f *frr) GetLLDPNeighbors(ctx context.Context) (map[string][]LLDPNeighbor, error) {
	return nil, f.frrUnsupported("get_lldp_neighbors")
}

// GetLLDPNeighborsDetail implements Driver: not available.
func (f *frr) GetLLDPNeighborsDetail(ctx context.Context, iface string) (map[string][]LLDPNeighborDetail, error) {
	return nil, f.frrUnsupported("get_lldp_neighbors_detail")
}

// GetMACAddressTable implements Driver: not available.
func (f *frr) GetMACAddressTable(ctx context.Context) ([]MACEntry, error) {
	return nil, f.frrUnsupported("get_mac_address_table")
}

// GetEnvironment implements Driver: not available.
func (f *frr) GetEnvironment(ctx context.Context) (Environment, error) {
	return Environment{}, f.frrUnsupported("get_environment")
}

// GetNTPServers implements Driver: not available (FRR has no NTP).
func (f *frr) GetNTPServers(ctx context.Context) (map[string]NTPServer, error) {
	return nil, f.frrUnsupported("get_ntp_servers")
}

// GetNTPPeers implements Driver: not available.
func (f *frr) GetNTPPeers(ctx context.Context) (map[string]NTPPeer, error) {
	return nil, f.frrUnsupported("get_ntp_peers")
}

// GetNTPStats implements Driver: not available.
func (f *frr) GetNTPStats(ctx context.Context) ([]NTPStats, error) {
	return nil, f.frrUnsupported("get_ntp_stats")
}

// Ping implements Driver: not available (vtysh's ping takes no count and
// never ends).
func (f *frr) Ping(ctx context.Context, p PingOptions) (PingResult, error) {
	return PingResult{}, f.frrUnsupported("ping")
}

// Traceroute implements Driver: not available.
func (f *frr) Traceroute(ctx context.Context, t TracerouteOptions) (TracerouteResult, error) {
	return TracerouteResult{}, f.frrUnsupported("traceroute")
}

func frrCommonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// stripFRRPreamble removes the "Building configuration..." and "Current
// configuration:" lines vtysh prints before a configuration.
func stripFRRPreamble(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	for i, l := range lines {
		if i > 4 {
			break
		}
		if strings.TrimSpace(l) == "Current configuration:" {
			lines = lines[i+1:]
			break
		}
	}
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	out := strings.Join(lines, "\n")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// ---- configuration model ----

// frrKeywords is a tree of the commands that open a configuration context
// (node) in vtysh, by prefix, with the contexts nested in each (after the
// node list frr-reload.py knows).
type frrKeywords map[string]frrKeywords

func frrContextKeywords() frrKeywords {
	return frrKeywords{
		"router bgp ": {
			"address-family ":      {"vni ": {}},
			"vnc defaults":         {},
			"vnc nve-group ":       {},
			"vnc l2-group ":        {},
			"vrf-policy ":          {},
			"bmp targets ":         {},
			"segment-routing srv6": {},
		},
		"router rip":         {},
		"router ripng":       {},
		"router isis ":       {},
		"router openfabric ": {},
		"router ospf":        {},
		"router ospf6":       {},
		"router eigrp ":      {},
		"router babel":       {},
		"router pim":         {},
		"mpls ldp":           {"address-family ": {"interface ": {}}},
		"l2vpn ":             {"member pseudowire ": {}},
		"key chain ":         {"key ": {}},
		"vrf ":               {},
		"interface ":         {"link-params": {}},
		"pseudowire ":        {},
		"segment-routing": {
			"traffic-eng": {
				"segment-list ": {},
				"policy ":       {"candidate-path ": {}},
				"pcep":          {"pcc": {}, "pce ": {}, "pce-config ": {}},
			},
			"srv6": {"locators": {"locator ": {}}},
		},
		"nexthop-group ": {},
		"route-map ":     {},
		"pbr-map ":       {},
		"rpki":           {},
		"bfd":            {"peer ": {}, "profile ": {}},
		"line vty":       {},
	}
}

// match returns the nested keywords of the context line opens, if any.
func (k frrKeywords) match(line string) (frrKeywords, bool) {
	for p, sub := range k {
		if line == strings.TrimSpace(p) || strings.HasPrefix(line, p) {
			if p == "candidate-path " && strings.Contains(line, "explicit") {
				continue
			}
			return sub, true
		}
	}
	return nil, false
}

// frrBlock is one item of a configuration: a top-level line (ctx false,
// path holds the line) or a context (path holds its headers, outermost
// first, lines its own commands).
type frrBlock struct {
	path  []string
	ctx   bool
	lines []string
}

func (b *frrBlock) has(line string) bool { return slices.Contains(b.lines, line) }

// frrConfig is a parsed configuration: its items in order of appearance.
type frrConfig struct {
	blocks []*frrBlock
	index  map[string]*frrBlock
}

func frrKey(path []string) string { return strings.Join(path, "\n") }

func (c *frrConfig) get(path []string) *frrBlock { return c.index[frrKey(path)] }

func (c *frrConfig) block(path []string, ctx bool) *frrBlock {
	k := frrKey(path)
	if b, ok := c.index[k]; ok {
		return b
	}
	b := &frrBlock{path: slices.Clone(path), ctx: ctx}
	c.blocks = append(c.blocks, b)
	c.index[k] = b
	return b
}

func isFRRExit(t string) bool { return t == "exit" || strings.HasPrefix(t, "exit-") }

// parseFRRConfig parses FRR configuration text as vtysh prints it (nested
// contexts indented and closed by "exit") or as frr.conf files are often
// written (contexts closed by "!" or "exit", with or without indentation).
// Whitespace runs are collapsed; comments, "frr version", "frr defaults"
// and "end" are dropped.
func parseFRRConfig(text string) *frrConfig {
	cfg := &frrConfig{index: map[string]*frrBlock{}}
	lines := strings.Split(strings.ReplaceAll(text, "\r", ""), "\n")
	indented := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t != "" && t[0] != '!' && t[0] != '#' && (l[0] == ' ' || l[0] == '\t') {
			indented = true
			break
		}
	}
	type frame struct {
		header string
		indent int
		kw     frrKeywords
	}
	root := frrContextKeywords()
	var stack []frame
	path := func() []string {
		p := make([]string, len(stack))
		for i, fr := range stack {
			p[i] = fr.header
		}
		return p
	}
	keywords := func(depth int) frrKeywords {
		if depth == 0 {
			return root
		}
		return stack[depth-1].kw
	}
	for _, raw := range lines {
		raw = strings.TrimRight(raw, " \t")
		t := strings.TrimSpace(raw)
		if t == "" || t[0] == '#' {
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		if t[0] == '!' {
			if indent == 0 {
				stack = stack[:0]
			}
			continue
		}
		t = strings.Join(strings.Fields(t), " ")
		if len(stack) == 0 && (t == "Building configuration..." || t == "Current configuration:" ||
			strings.HasPrefix(t, "frr version ") || strings.HasPrefix(t, "frr defaults ")) {
			continue
		}
		if t == "end" {
			stack = stack[:0]
			continue
		}
		if isFRRExit(t) {
			if indented {
				for len(stack) > 0 && stack[len(stack)-1].indent > indent {
					stack = stack[:len(stack)-1]
				}
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if indented {
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
		}
		opened := false
		// A context keyword of the current context, or (without
		// indentation to tell) of an enclosing one, opens a context.
		for depth := len(stack); depth >= 0; depth-- {
			if sub, ok := keywords(depth).match(t); ok {
				stack = append(stack[:depth], frame{header: t, indent: indent, kw: sub})
				cfg.block(path(), true)
				opened = true
				break
			}
			if indented {
				break
			}
		}
		if opened {
			continue
		}
		if len(stack) == 0 {
			cfg.block([]string{t}, false)
			continue
		}
		b := cfg.block(path(), true)
		if !b.has(t) {
			b.lines = append(b.lines, t)
		}
	}
	return cfg
}

// ---- change plans ----

// frrOp is one configuration command: cmd run inside the contexts path
// (an empty cmd only enters path).
type frrOp struct {
	path []string
	cmd  string
}

// frrShown is one line of a plan's displayed difference; opens marks a
// context header added or removed (the lines after it are inside).
type frrShown struct {
	path  []string
	sign  byte
	line  string
	opens bool
}

// frrPlan is the change from a running configuration to a candidate.
type frrPlan struct {
	ops   []frrOp
	shown []frrShown
}

func (p *frrPlan) add(path []string, line string) {
	p.ops = append(p.ops, frrOp{path: path, cmd: line})
	p.shown = append(p.shown, frrShown{path: path, sign: '+', line: line})
}

func (p *frrPlan) enter(path []string) {
	p.ops = append(p.ops, frrOp{path: path})
	p.shown = append(p.shown, frrShown{path: path[:len(path)-1], sign: '+', line: path[len(path)-1], opens: true})
}

// del removes line from the context path.
func (p *frrPlan) del(path []string, line string) {
	p.ops = append(p.ops, frrOp{path: path, cmd: negateFRR(line)})
	p.shown = append(p.shown, frrShown{path: path, sign: '-', line: line})
}

// delBlock removes a whole context with "no <header>".
func (p *frrPlan) delBlock(b *frrBlock) {
	parent, header := b.path[:len(b.path)-1], b.path[len(b.path)-1]
	p.ops = append(p.ops, frrOp{path: parent, cmd: negateFRR(header)})
	p.shown = append(p.shown, frrShown{path: parent, sign: '-', line: header, opens: true})
	for _, l := range b.lines {
		p.shown = append(p.shown, frrShown{path: b.path, sign: '-', line: l})
	}
}

// negateFRR is the command undoing line: "no X" for X, X for "no X";
// commands whose "no" form takes no value lose it ("no description").
func negateFRR(line string) string {
	if v, ok := strings.CutPrefix(line, "no "); ok {
		return v
	}
	for _, p := range []string{"description ", "banner motd "} {
		if strings.HasPrefix(line, p) {
			return "no " + strings.TrimSpace(p)
		}
	}
	return "no " + line
}

// diff renders the plan: each line prefixed with "+" or "-" and indented
// one space per context level, the context headers it needs prefixed
// with " ".
func (p *frrPlan) diff() string {
	var sb strings.Builder
	var cur []string
	for _, s := range p.shown {
		n := frrCommonPrefix(cur, s.path)
		cur = cur[:n]
		for i := n; i < len(s.path); i++ {
			sb.WriteString(" " + strings.Repeat(" ", i) + s.path[i] + "\n")
			cur = append(cur, s.path[i])
		}
		sb.WriteString(string(s.sign) + strings.Repeat(" ", len(s.path)) + s.line + "\n")
		if s.opens {
			cur = append(cur, s.line)
		}
	}
	return sb.String()
}

// frrOverwriteKey returns, for commands that hold a single value and are
// replaced by setting a new one, the part naming the setting; "" for
// others (whose old line must be removed explicitly).
func frrOverwriteKey(line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) >= 2 && (f[0] == "hostname" || f[0] == "domainname" || f[0] == "description"):
		return f[0]
	case len(f) == 3 && f[1] == "router-id":
		return f[0] + " router-id"
	case len(f) == 2 && f[0] == "router-id":
		return "router-id"
	case len(f) == 4 && f[0] == "neighbor" && (f[2] == "remote-as" || f[2] == "peer-group"):
		return "neighbor " + f[1] + " " + f[2]
	case len(f) >= 4 && f[0] == "neighbor" && f[2] == "description":
		return "neighbor " + f[1] + " description"
	}
	return ""
}

// overwritten tells whether line is a single-value setting that one of
// candLines sets anew.
func overwritten(line string, candLines []string) bool {
	k := frrOverwriteKey(line)
	if k == "" {
		return false
	}
	for _, l := range candLines {
		if frrOverwriteKey(l) == k {
			return true
		}
	}
	return false
}

// frrDeleteByLines tells whether a context that disappears is emptied line
// by line rather than removed with "no <header>": interfaces and VRFs
// (FRR refuses to delete active ones) and nested contexts.
func frrDeleteByLines(b *frrBlock) bool {
	return len(b.path) > 1 || strings.HasPrefix(b.path[0], "interface ") || strings.HasPrefix(b.path[0], "vrf ")
}

// planFRRReplace computes the commands turning running into cand: first
// the removals (last item first, so dependent lines go before what they
// depend on), then the additions in the candidate's order.
func planFRRReplace(running, cand *frrConfig) *frrPlan {
	p := &frrPlan{}
	gone := map[string]bool{} // top-level contexts removed whole
	for _, b := range running.blocks {
		if b.ctx && len(b.path) == 1 && cand.get(b.path) == nil && !frrDeleteByLines(b) {
			gone[b.path[0]] = true
		}
	}
	for i := len(running.blocks) - 1; i >= 0; i-- {
		b := running.blocks[i]
		if len(b.path) > 1 && gone[b.path[0]] {
			continue
		}
		c := cand.get(b.path)
		switch {
		case !b.ctx:
			if c == nil && !overwritten(b.path[0], topLines(cand)) {
				p.del(nil, b.path[0])
			}
		case c != nil || frrDeleteByLines(b):
			var keep []string
			if c != nil {
				keep = c.lines
			}
			for j := len(b.lines) - 1; j >= 0; j-- {
				l := b.lines[j]
				if !slices.Contains(keep, l) && !overwritten(l, keep) {
					p.del(b.path, l)
				}
			}
		default:
			p.delBlock(b)
		}
	}
	for _, c := range cand.blocks {
		b := running.get(c.path)
		if !c.ctx {
			if b == nil {
				p.add(nil, c.path[0])
			}
			continue
		}
		if b == nil {
			p.enter(c.path)
		}
		for _, l := range c.lines {
			if b == nil || !b.has(l) {
				p.add(c.path, l)
			}
		}
	}
	return p
}

func topLines(c *frrConfig) []string {
	var out []string
	for _, b := range c.blocks {
		if !b.ctx {
			out = append(out, b.path[0])
		}
	}
	return out
}

// frrRemovesObject tells whether "no X" removes an object (a route, an
// address, a neighbor, a list entry, a context) rather than setting a
// default-on option off ("no bgp default ipv4-unicast"), which running
// configurations show as such.
func frrRemovesObject(x string) bool {
	for _, p := range []string{
		"ip route ", "ipv6 route ", "ip address ", "ipv6 address ", "network ",
		"aggregate-address ", "redistribute ", "interface ", "router ", "route-map ",
		"vrf ", "ip prefix-list ", "ipv6 prefix-list ", "access-list ", "ipv6 access-list ",
		"bgp community-list ", "bgp large-community-list ", "bgp extcommunity-list ",
		"bgp as-path access-list ", "key chain ", "description",
	} {
		if strings.HasPrefix(x, p) {
			return true
		}
	}
	f := strings.Fields(x)
	return f[0] == "neighbor" && (len(f) == 2 || len(f) >= 3 && (f[2] == "remote-as" || f[2] == "peer-group" || f[2] == "interface"))
}

// planFRRMerge computes the commands merging cand into running: the
// candidate's lines that are not there yet, and its "no X" lines where X
// is.
func planFRRMerge(running, cand *frrConfig) *frrPlan {
	p := &frrPlan{}
	for _, c := range cand.blocks {
		if !c.ctx {
			line := c.path[0]
			if running.get(c.path) != nil {
				continue
			}
			if x, ok := strings.CutPrefix(line, "no "); ok {
				if b := running.get([]string{x}); b != nil {
					if b.ctx {
						p.delBlock(b)
					} else {
						p.del(nil, x)
					}
					continue
				}
				if frrRemovesObject(x) {
					continue
				}
			}
			p.add(nil, line)
			continue
		}
		b := running.get(c.path)
		if b == nil {
			p.enter(c.path)
		}
		for _, l := range c.lines {
			switch x, neg := strings.CutPrefix(l, "no "); {
			case b != nil && b.has(l):
			case neg && b != nil && b.has(x):
				p.del(c.path, x)
			case neg && frrRemovesObject(x):
				// Removing what is not there: nothing to do.
			default:
				p.add(c.path, l)
			}
		}
	}
	return p
}

// commands turns the plan into the vtysh lines to type in configuration
// mode: each op's contexts entered (leaving the ones it is not in with
// "exit"), then its command.
func (p *frrPlan) commands() []string {
	var cmds, cur []string
	for _, op := range p.ops {
		n := frrCommonPrefix(cur, op.path)
		for len(cur) > n {
			cmds = append(cmds, "exit")
			cur = cur[:len(cur)-1]
		}
		for _, h := range op.path[n:] {
			cmds = append(cmds, h)
			cur = append(cur, h)
		}
		if op.cmd != "" {
			cmds = append(cmds, op.cmd)
		}
	}
	return cmds
}

// GetBGPConfig implements BGPConfigGetter from the running configuration:
// FRR writes "router bgp" as IOS does (neighbor lines, peer-groups,
// address-family blocks), so NAPALM ios's reading of it applies.
func (f *frr) GetBGPConfig(ctx context.Context, group, neighbor string) (map[string]map[string]any, error) {
	cfg, err := f.GetConfig(ctx, "running")
	if err != nil {
		return nil, err
	}
	return parseIOSBGPConfig(cfg.Running, group, neighbor), nil
}

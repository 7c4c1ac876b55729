package driver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// eosDriver is the Arista EOS driver (NAPALM's "eos" with transport ssh),
// on scrapligo's arista_eos platform. Candidates live in an EOS
// configuration session (napalm_<n>), compare is "show session-config named
// S diffs", commit saves the startup configuration to flash:rollback-0,
// commits the session and writes memory; rollback is "configure replace
// flash:rollback-0". Getters use "| json" where EOS offers it.
type eosDriver struct {
	base
	noConfirmedCommit
	sess string // pending configuration session, "" when none
}

// NewEOS returns an unopened Arista EOS driver.
func NewEOS(o Options) (Driver, error) {
	s, err := newSession("eos", "arista_eos", o)
	if err != nil {
		return nil, err
	}
	return &eosDriver{base: base{s: s}, noConfirmedCommit: noConfirmedCommit{"eos"}}, nil
}

// Capabilities implements Driver.
func (d *eosDriver) Capabilities() Capabilities { return Capabilities{CandidateConfig: true} }

// showJSON runs "cmd | json" and decodes its output into v.
func showJSON(o runner, cmd string, v any) error {
	out, err := o.show(cmd + " | json")
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(jsonBody(out)), v); err != nil {
		return o.errf(ErrCommand, cmd+" | json", fmt.Errorf("bad JSON from the device: %w", err))
	}
	return nil
}

// jsonBody trims anything around the outermost JSON object.
func jsonBody(s string) string {
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return s
	}
	return s[i : j+1]
}

// Cli implements Driver: a command the device rejects fails the call with
// ErrCommand, as NAPALM eos raises CommandErrorException.
func (d *eosDriver) Cli(ctx context.Context, commands []string) (map[string]string, error) {
	out := make(map[string]string, len(commands))
	err := d.s.run(ctx, func(o *op) error {
		for _, c := range commands {
			text, err := o.show(c)
			if err != nil {
				return err
			}
			out[c] = text
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// abort drops the pending session (best effort inside a failing load).
func (d *eosDriver) abort(o *op) error {
	if d.sess == "" {
		return nil
	}
	_, err := o.show("configure session " + d.sess + " abort")
	d.sess = ""
	return err
}

func (d *eosDriver) load(ctx context.Context, config string, replace bool) error {
	kind := "merge"
	if replace {
		kind = "replace"
	}
	return d.s.run(ctx, func(o *op) error {
		if d.sess == "" {
			d.sess = fmt.Sprintf("napalm_%d", time.Now().Nanosecond()/1000)
		}
		cmd := "configure session " + d.sess
		out, failed, err := o.send(cmd)
		if err != nil {
			return err
		}
		o.d.CurrentPriv = "configuration"
		if failed {
			if err := o.home("configuration"); err != nil {
				return err
			}
			d.sess = ""
			return o.rejected(cmd, out)
		}
		lines := make([]string, 0, 64)
		if replace {
			lines = append(lines, "rollback clean-config")
		}
		for _, l := range configLines(config) {
			l = strings.TrimSpace(l)
			if l == "" || l == "end" || (strings.HasPrefix(l, "!") && !strings.HasPrefix(l, "!!")) {
				continue
			}
			lines = append(lines, l)
		}
		var bad error
		for _, l := range lines {
			out, failed, err := o.sendRaw(l)
			if err != nil {
				return err
			}
			if failed {
				bad = o.errf(ErrCommand, kind+" candidate", fmt.Errorf("%q: %s", l, deviceMessage(out)))
				break
			}
		}
		if err := o.home("configuration"); err != nil {
			return err
		}
		if bad != nil {
			return errors.Join(bad, d.abort(o))
		}
		return nil
	})
}

// LoadMergeCandidate implements Driver.
func (d *eosDriver) LoadMergeCandidate(ctx context.Context, config string) error {
	return d.load(ctx, config, false)
}

// LoadReplaceCandidate implements Driver (rollback clean-config first).
func (d *eosDriver) LoadReplaceCandidate(ctx context.Context, config string) error {
	return d.load(ctx, config, true)
}

// CompareConfig implements Driver: the session diff without its two
// header lines.
func (d *eosDriver) CompareConfig(ctx context.Context) (string, error) {
	var diff string
	err := d.s.run(ctx, func(o *op) error {
		if d.sess == "" {
			return nil
		}
		out, err := o.show("show session-config named " + d.sess + " diffs")
		if err != nil {
			return err
		}
		lines := strings.Split(out, "\n")
		if len(lines) > 2 {
			diff = strings.Join(lines[2:], "\n")
		}
		return nil
	})
	return strings.TrimSpace(diff), err
}

// CommitConfig implements Driver.
func (d *eosDriver) CommitConfig(ctx context.Context, message string, revertIn int) error {
	if err := checkCommitArgs(d.s, d.Capabilities(), message, revertIn); err != nil {
		return err
	}
	return d.s.run(ctx, func(o *op) error {
		if d.sess == "" {
			return o.errf(ErrCommand, "commit_config", errors.New("no candidate configuration loaded"))
		}
		for _, cmd := range []string{"copy startup-config flash:rollback-0", "configure session " + d.sess + " commit"} {
			if _, err := o.show(cmd); err != nil {
				return err
			}
		}
		d.sess = ""
		_, err := o.show("write memory")
		return err
	})
}

// DiscardConfig implements Driver (configure session S abort).
func (d *eosDriver) DiscardConfig(ctx context.Context) error {
	return d.s.run(ctx, func(o *op) error { return d.abort(o) })
}

// Rollback implements Driver (configure replace flash:rollback-0).
func (d *eosDriver) Rollback(ctx context.Context) error {
	return d.s.run(ctx, func(o *op) error {
		for _, cmd := range []string{"configure replace flash:rollback-0", "write memory"} {
			if _, err := o.show(cmd); err != nil {
				return err
			}
		}
		return nil
	})
}

// GetConfig implements Driver; the candidate is the pending session's
// configuration.
func (d *eosDriver) GetConfig(ctx context.Context, retrieve string) (Config, error) {
	return d.GetConfigWith(ctx, ConfigOptions{Retrieve: retrieve})
}

// GetConfigWith implements ConfigGetter like NAPALM eos: the running and
// candidate configurations come sanitized by the device ("show
// running-config sanitized"), the startup one through EOS's sanitizing
// patterns.
func (d *eosDriver) GetConfigWith(ctx context.Context, co ConfigOptions) (Config, error) {
	var c Config
	retrieve := co.Retrieve
	if err := checkRetrieve(retrieve); err != nil {
		return c, err
	}
	suffix := ""
	if co.Sanitized {
		suffix = " sanitized"
	}
	full := ""
	if co.Full {
		full = " all"
	}
	err := d.s.query(ctx, func(o runner) error {
		var err error
		if retrieve == "startup" || retrieve == "all" {
			if c.Startup, err = o.show("show startup-config"); err != nil {
				return err
			}
			if co.Sanitized && c.Startup != "" {
				c.Startup = SanitizeConfig(c.Startup, EOSSanitizeFilters)
			}
		}
		if retrieve == "running" || retrieve == "all" {
			if c.Running, err = o.show("show running-config" + full + suffix); err != nil {
				return err
			}
		}
		if (retrieve == "candidate" || retrieve == "all") && d.sess != "" {
			if c.Candidate, err = o.show("show session-config named " + d.sess + suffix); err != nil {
				return err
			}
		}
		return nil
	})
	return c, err
}

type eosVersion struct {
	ModelName       string   `json:"modelName"`
	SerialNumber    string   `json:"serialNumber"`
	InternalVersion string   `json:"internalVersion"`
	Version         string   `json:"version"`
	BootupTimestamp *float64 `json:"bootupTimestamp"`
	Uptime          *float64 `json:"uptime"`
	MemTotal        int64    `json:"memTotal"`
	MemFree         int64    `json:"memFree"`
}

type eosInterface struct {
	Description        string   `json:"description"`
	InterfaceStatus    string   `json:"interfaceStatus"`
	LineProtocolStatus string   `json:"lineProtocolStatus"`
	MTU                int      `json:"mtu"`
	Bandwidth          float64  `json:"bandwidth"`
	PhysicalAddress    string   `json:"physicalAddress"`
	LastStatusChange   *float64 `json:"lastStatusChangeTimestamp"`
	ForwardingModel    string   `json:"forwardingModel"`
	Hardware           string   `json:"hardware"`
	InterfaceAddress   json.RawMessage
}

type eosAddr struct {
	Address string `json:"address"`
	MaskLen int    `json:"maskLen"`
}

type eosIfAddr struct {
	PrimaryIP   eosAddr   `json:"primaryIp"`
	Secondaries []eosAddr `json:"secondaryIpsOrderedList"`
}

// addresses decodes interfaceAddress, a list in "show interfaces" and an
// object in "show ip interface".
func (e eosInterface) addresses() []eosIfAddr {
	if len(e.InterfaceAddress) == 0 {
		return nil
	}
	var list []eosIfAddr
	if json.Unmarshal(e.InterfaceAddress, &list) == nil {
		return list
	}
	var one eosIfAddr
	if json.Unmarshal(e.InterfaceAddress, &one) == nil {
		return []eosIfAddr{one}
	}
	return nil
}

func (d *eosDriver) interfaces(o runner) (map[string]eosInterface, error) {
	var v struct {
		Interfaces map[string]json.RawMessage `json:"interfaces"`
	}
	if err := showJSON(o, "show interfaces", &v); err != nil {
		return nil, err
	}
	res := make(map[string]eosInterface, len(v.Interfaces))
	for name, raw := range v.Interfaces {
		var e eosInterface
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, o.errf(ErrCommand, "show interfaces | json", err)
		}
		var addr struct {
			InterfaceAddress json.RawMessage `json:"interfaceAddress"`
		}
		_ = json.Unmarshal(raw, &addr)
		e.InterfaceAddress = addr.InterfaceAddress
		res[name] = e
	}
	return res, nil
}

// GetFacts implements Driver from show version, show hostname and show
// interfaces (JSON), as NAPALM eos.
func (d *eosDriver) GetFacts(ctx context.Context) (Facts, error) {
	f := Facts{Vendor: "Arista", InterfaceList: []string{}}
	err := d.s.query(ctx, func(o runner) error {
		var ver eosVersion
		if err := showJSON(o, "show version", &ver); err != nil {
			return err
		}
		var host struct {
			Hostname string `json:"hostname"`
			FQDN     string `json:"fqdn"`
		}
		if err := showJSON(o, "show hostname", &host); err != nil {
			return err
		}
		ifs, err := d.interfaces(o)
		if err != nil {
			return err
		}
		f.Hostname, f.FQDN = host.Hostname, host.FQDN
		f.Model, f.SerialNumber, f.OSVersion = ver.ModelName, ver.SerialNumber, ver.InternalVersion
		switch {
		case ver.BootupTimestamp != nil:
			f.Uptime = float64(time.Now().UnixNano())/1e9 - *ver.BootupTimestamp
		case ver.Uptime != nil:
			f.Uptime = *ver.Uptime
		default:
			f.Uptime = -1
		}
		for n := range ifs {
			if !strings.Contains(n, ".") {
				f.InterfaceList = append(f.InterfaceList, n)
			}
		}
		sortNicely(f.InterfaceList)
		return nil
	})
	return f, err
}

// GetInterfaces implements Driver from show interfaces | json.
func (d *eosDriver) GetInterfaces(ctx context.Context) (map[string]Interface, error) {
	res := map[string]Interface{}
	err := d.s.query(ctx, func(o runner) error {
		ifs, err := d.interfaces(o)
		if err != nil {
			return err
		}
		for n, e := range ifs {
			i := Interface{Description: e.Description, MTU: e.MTU, Speed: e.Bandwidth / 1e6,
				MACAddress: normalizeMAC(e.PhysicalAddress), LastFlapped: -1}
			if e.LastStatusChange != nil {
				i.LastFlapped = *e.LastStatusChange
			}
			if e.LineProtocolStatus == "up" {
				i.IsUp, i.IsEnabled = true, true
			} else {
				i.IsEnabled = e.InterfaceStatus != "disabled"
			}
			res[n] = i
		}
		return nil
	})
	return res, err
}

// GetInterfacesIP implements Driver from show interfaces | json: every
// routed interface or interface with an address, with both ipv4 and ipv6
// keys (NAPALM eos reads show ip interface, which lists the same ones).
func (d *eosDriver) GetInterfacesIP(ctx context.Context) (map[string]InterfaceIP, error) {
	res := map[string]InterfaceIP{}
	err := d.s.query(ctx, func(o runner) error {
		if ok, err := eosInterfacesIPNAPALM(o, res); ok || err != nil {
			return err
		}
		if ok, err := eosInterfacesIPNAPALM(o, res); ok || err != nil {
			return err
		}
		ifs, err := d.interfaces(o)
		if err != nil {
			return err
		}
		for n, e := range ifs {
			addrs := e.addresses()
			if len(addrs) == 0 && e.ForwardingModel != "routed" {
				continue
			}
			ip := InterfaceIP{IPv4: map[string]IPPrefix{}, IPv6: map[string]IPPrefix{}}
			for _, a := range addrs {
				for _, x := range append([]eosAddr{a.PrimaryIP}, a.Secondaries...) {
					if x.Address != "" && x.Address != "0.0.0.0" {
						ip.IPv4[x.Address] = IPPrefix{PrefixLength: x.MaskLen}
					}
				}
			}
			res[n] = ip
		}
		return nil
	})
	return res, err
}

type eosARPNeighbor struct {
	Address   string   `json:"address"`
	HWAddress string   `json:"hwAddress"`
	Interface string   `json:"interface"`
	Age       *float64 `json:"age"`
}

// GetArpTable implements Driver from show arp vrf all | json (a device
// answering without VRFs is read as the default VRF).
func (d *eosDriver) GetArpTable(ctx context.Context, vrf string) ([]ARPEntry, error) {
	res := []ARPEntry{}
	err := d.s.query(ctx, func(o runner) error {
		var v struct {
			VRFs map[string]struct {
				Neighbors []eosARPNeighbor `json:"ipV4Neighbors"`
			} `json:"vrfs"`
			Neighbors []eosARPNeighbor `json:"ipV4Neighbors"`
		}
		if err := showJSON(o, "show arp vrf all", &v); err != nil {
			return err
		}
		var ns []eosARPNeighbor
		if v.VRFs != nil {
			names := make([]string, 0, len(v.VRFs))
			for n := range v.VRFs {
				names = append(names, n)
			}
			sortNicely(names)
			for _, n := range names {
				if vrf == "" || n == vrf {
					ns = append(ns, v.VRFs[n].Neighbors...)
				}
			}
		} else if vrf == "" || vrf == "default" {
			ns = v.Neighbors
		}
		for _, n := range ns {
			age := -1.0
			if n.Age != nil {
				age = *n.Age
			}
			res = append(res, ARPEntry{Interface: n.Interface, MAC: macOr(n.HWAddress), IP: n.Address, Age: age})
		}
		return nil
	})
	return res, err
}

// GetLLDPNeighbors implements Driver from show lldp neighbors | json.
func (d *eosDriver) GetLLDPNeighbors(ctx context.Context) (map[string][]LLDPNeighbor, error) {
	res := map[string][]LLDPNeighbor{}
	err := d.s.query(ctx, func(o runner) error {
		var v struct {
			Neighbors []struct {
				Port           string `json:"port"`
				NeighborDevice string `json:"neighborDevice"`
				NeighborPort   string `json:"neighborPort"`
			} `json:"lldpNeighbors"`
		}
		if err := showJSON(o, "show lldp neighbors", &v); err != nil {
			return err
		}
		for _, n := range v.Neighbors {
			res[n.Port] = append(res[n.Port], LLDPNeighbor{Hostname: n.NeighborDevice, Port: n.NeighborPort})
		}
		return nil
	})
	return res, err
}

// eosSpace is a character strings.TrimSpace trims.
const eosSpace = `[\s\v\x{85}\p{Z}]`

// eosLLDP reads the text of show lldp neighbors [IFACE] detail: an
// "Interface X detected" line names the local interface of the
// neighbours under it, each opened by a "Neighbor" line.
var eosLLDP = &lldpSpec{
	all: "show lldp neighbors detail", one: "show lldp neighbors %s detail",
	rules: []lldpRule{
		{re: regexp.MustCompile(`^Interface (\S+) detected \d+ LLDP neighbors`), act: lldpParent},
		{re: regexp.MustCompile(`^` + eosSpace + `*Neighbor .*[^\s\v\x{85}\p{Z}]`), act: lldpOpen},
		{re: regexp.MustCompile(`^\s*-?\s*(Chassis ID|Port ID|Port Description|System Name|System Description|System Capabilities|Enabled Capabilities)\s*:\s*(.*)$`)},
	},
	value: func(v string) string { return strings.Trim(strings.TrimSpace(v), `"`) },
	keep:  func(r *lldpRow) bool { return r[lldpLocal] != "" },
}

// GetLLDPNeighborsDetail implements Driver from the text of show lldp
// neighbors [IFACE] detail.
func (d *eosDriver) GetLLDPNeighborsDetail(ctx context.Context, iface string) (map[string][]LLDPNeighborDetail, error) {
	if err := safeArg(d.s, "interface", iface); err != nil {
		return nil, err
	}
	res := map[string][]LLDPNeighborDetail{}
	err := d.s.query(ctx, func(o runner) error {
		// NAPALM eos sends "show lldp neighbors {filters} detail", two
		// spaces without an interface.
		if ok, err := eosLLDPDetailNAPALM(o, "show lldp neighbors "+iface+" detail", res); ok || err != nil {
			return err
		}
		out, err := o.show(eosLLDP.command(iface))
		if err != nil {
			return err
		}
		for _, r := range parseLLDPDetail(eosLLDP, out) {
			e := r.detail(lldpCapabNames, true)
			e.ParentInterface = r[lldpLocal]
			res[e.ParentInterface] = append(res[e.ParentInterface], e)
		}
		return nil
	})
	return res, err
}

// GetMACAddressTable implements Driver from the text of show mac
// address-table (last_move is the time of the last move, in seconds since
// the epoch, as in EOS's JSON).
func (d *eosDriver) GetMACAddressTable(ctx context.Context) ([]MACEntry, error) {
	res := []MACEntry{}
	err := d.s.query(ctx, func(o runner) error {
		if ok, err := eosMACTableNAPALM(o, &res); ok || err != nil {
			return err
		}
		out, err := o.show("show mac address-table")
		if err != nil {
			return err
		}
		now := time.Now()
		for l := range strings.SplitSeq(out, "\n") {
			f := strings.Fields(l)
			if len(f) < 4 || !ciscoMACRe.MatchString(f[1]) {
				continue
			}
			vlan, err := strconv.Atoi(f[0])
			if err != nil {
				continue
			}
			e := MACEntry{MAC: normalizeMAC(f[1]), Interface: canonicalInterface(f[3], true), VLAN: vlan,
				Static: strings.EqualFold(f[2], "STATIC"), Active: true, LastMove: 0}
			if len(f) >= 5 {
				e.Moves = atoi(f[4], 0)
			}
			if len(f) >= 6 {
				if ago, ok := durationAgo(strings.Join(f[5:], " ")); ok {
					e.LastMove = float64(now.Add(-ago).Unix())
				}
			}
			res = append(res, e)
		}
		return nil
	})
	return res, err
}

var (
	eosCPUIdleRe = regexp.MustCompile(`ni,\s*([\d.]+)\s*%?\s*id`)
	eosMemRe     = regexp.MustCompile(`^(?:(\S+)\s+)?Mem\s*:\s+([\d.]+)[k\s]+total,(?:\s+([\d.]+)[k\s]+used,)?\s+([\d.]+)[k\s]+free,(?:\s+([\d.]+)[k\s]+used,)?`)
)

// GetEnvironment implements Driver: memory from show version (kB, like
// NAPALM eos), cpu from show processes top once (0 when the device has
// none), fans, temperature and power from show system environment ...
// | json when the device has them.
func (d *eosDriver) GetEnvironment(ctx context.Context) (Environment, error) {
	env := Environment{Fans: map[string]Fan{}, Temperature: map[string]Temperature{}, Power: map[string]Power{},
		CPU: map[CPUKey]CPU{CPUIndex(0): {Usage: 0}}}
	err := d.s.query(ctx, func(o runner) error {
		var ver eosVersion
		if err := showJSON(o, "show version", &ver); err != nil {
			return err
		}
		env.Memory = Memory{AvailableRAM: ver.MemTotal, UsedRAM: ver.MemTotal - ver.MemFree}
		top, failed, err := o.send("show processes top once")
		if err != nil {
			return err
		}
		if !failed {
			for l := range strings.SplitSeq(top, "\n") {
				if m := eosCPUIdleRe.FindStringSubmatch(l); m != nil {
					env.CPU[CPUIndex(0)] = CPU{Usage: float64(int((100-atof(m[1], 100))*10+0.5)) / 10}
				}
				if m := eosMemRe.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
					used := m[3]
					if used == "" {
						used = m[5]
					}
					total, u := atof(m[2], 0), atof(used, 0)
					if m[1] == "MiB" {
						total, u = total*1024, u*1024
					}
					env.Memory = Memory{AvailableRAM: int64(total), UsedRAM: int64(u)}
				}
			}
		}
		var cool struct {
			FanTraySlots []struct {
				Label  string `json:"label"`
				Status string `json:"status"`
			} `json:"fanTraySlots"`
		}
		if d.optionalJSON(o, "show system environment cooling", &cool) {
			for _, s := range cool.FanTraySlots {
				env.Fans[s.Label] = Fan{Status: s.Status == "ok"}
			}
		}
		type sensor struct {
			Name     string   `json:"name"`
			Current  *float64 `json:"currentTemperature"`
			Overheat float64  `json:"overheatThreshold"`
			Critical float64  `json:"criticalThreshold"`
		}
		var temp struct {
			Sensors    []sensor                         `json:"tempSensors"`
			CardSlots  []struct{ TempSensors []sensor } `json:"cardSlots"`
			PowerSlots []struct{ TempSensors []sensor } `json:"powerSupplySlots"`
		}
		if d.optionalJSON(o, "show system environment temperature", &temp) {
			add := func(list []sensor) {
				for _, s := range list {
					t := 0.0
					if s.Current != nil {
						t = *s.Current
					}
					env.Temperature[s.Name] = Temperature{Temperature: t, IsAlert: t > s.Overheat, IsCritical: t > s.Critical}
				}
			}
			for _, c := range temp.CardSlots {
				add(c.TempSensors)
			}
			for _, c := range temp.PowerSlots {
				add(c.TempSensors)
			}
			add(temp.Sensors)
		}
		var power struct {
			Supplies map[string]struct {
				State    string   `json:"state"`
				Capacity *float64 `json:"capacity"`
				Output   *float64 `json:"outputPower"`
			} `json:"powerSupplies"`
		}
		if d.optionalJSON(o, "show system environment power", &power) {
			for n, p := range power.Supplies {
				e := Power{Status: p.State == "" || p.State == "ok", Capacity: -1, Output: -1}
				if p.Capacity != nil {
					e.Capacity = *p.Capacity
				}
				if p.Output != nil {
					e.Output = *p.Output
				}
				env.Power[n] = e
			}
		}
		return nil
	})
	return env, err
}

// optionalJSON runs "cmd | json" and reports whether the device had it.
func (d *eosDriver) optionalJSON(o runner, cmd string, v any) bool {
	out, failed, err := o.send(cmd + " | json")
	if err != nil || failed {
		return false
	}
	return json.Unmarshal([]byte(jsonBody(out)), v) == nil
}

// GetNTPServers implements Driver like NAPALM eos: every "ntp" line of
// the running configuration's ntp section with NAPALM's details (vrf,
// iburst, key, version, prefer, and the address of a local-interface).
func (d *eosDriver) GetNTPServers(ctx context.Context) (map[string]NTPServer, error) {
	res := map[string]NTPServer{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show running-config | section ntp")
		if err != nil {
			return err
		}
		var ifaces map[string]InterfaceIP
		for l := range strings.SplitSeq(out, "\n") {
			t := strings.Fields(l)
			if len(t) < 3 || t[0] != "ntp" {
				continue
			}
			det := &NTPServerDetails{Port: 123, Version: 4, AssociationType: "SERVER", NetworkInstance: "default", KeyID: -1}
			idx := 3
			if t[2] == "vrf" && len(t) >= 5 {
				det.NetworkInstance, det.Address, idx = t[3], t[4], 5
			} else {
				det.Address = t[2]
			}
			family := 4
			if a, err := netip.ParseAddr(det.Address); err == nil && a.Is6() && !a.Is4In6() {
				family = 6
			}
			for idx < len(t) {
				switch t[idx] {
				case "iburst":
					det.IBurst = true
					idx++
				case "prefer":
					det.Prefer = true
					idx++
				case "key", "version":
					if idx+1 < len(t) {
						if t[idx] == "key" {
							det.KeyID = atoi(t[idx+1], -1)
						} else {
							det.Version = atoi(t[idx+1], 4)
						}
					}
					idx += 2
				case "local-interface":
					if idx+1 < len(t) {
						if ifaces == nil {
							ifaces = map[string]InterfaceIP{}
							if _, err := eosInterfacesIPNAPALM(o, ifaces); err != nil {
								return err
							}
						}
						det.SourceAddress = eosSourceAddress(ifaces[t[idx+1]], family)
					}
					idx += 2
				default:
					idx++
				}
			}
			res[det.Address] = NTPServer{NTPServerDetails: det}
		}
		return nil
	})
	return res, err
}

// eosSourceAddress picks an interface's address for an NTP server of
// family 4 or 6, as NAPALM eos does (the lowest address, in the order
// Python's dict would list them being unknown here).
func eosSourceAddress(ip InterfaceIP, family int) string {
	first := func(m map[string]IPPrefix) string {
		keys := slices.Sorted(maps.Keys(m))
		if len(keys) == 0 {
			return ""
		}
		return keys[0]
	}
	switch {
	case family == 6 && len(ip.IPv6) > 0:
		return first(ip.IPv6)
	case len(ip.IPv4) > 0:
		return first(ip.IPv4)
	}
	return first(ip.IPv6)
}

// GetNTPPeers implements Driver from "ntp peer" lines of the running
// configuration (NAPALM eos has no get_ntp_peers).
func (d *eosDriver) GetNTPPeers(ctx context.Context) (map[string]NTPPeer, error) {
	res := map[string]NTPPeer{}
	err := d.eachNTPLine(ctx, "peer", func(addr string) { res[addr] = NTPPeer{} })
	return res, err
}

func (d *eosDriver) eachNTPLine(ctx context.Context, kind string, fn func(addr string)) error {
	return d.s.query(ctx, func(o runner) error {
		out, err := o.show("show running-config | section ntp")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(out, "\n") {
			f := strings.Fields(l)
			if len(f) < 3 || f[0] != "ntp" || f[1] != kind {
				continue
			}
			if f[2] == "vrf" && len(f) >= 5 {
				fn(f[4])
			} else {
				fn(f[2])
			}
		}
		return nil
	})
}

var eosNTPRe = regexp.MustCompile(`(?i)^\s?(\+|\*|x|-)?([a-zA-Z0-9\.+-:]+)\s+([a-zA-Z0-9\.]+)\s+([0-9]{1,2})\s+(-|u)\s+([0-9h-]+)\s+([0-9]+)\s+([0-9]+)\s+([0-9\.]+)\s+([0-9\.-]+)\s+([0-9\.]+)\s?$`)

// GetNTPStats implements Driver from show ntp associations (text).
func (d *eosDriver) GetNTPStats(ctx context.Context) ([]NTPStats, error) {
	res := []NTPStats{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show ntp associations")
		if err != nil {
			return err
		}
		lines := strings.Split(out, "\n")
		if len(lines) <= 2 {
			return nil
		}
		for _, l := range lines[2:] {
			m := eosNTPRe.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			res = append(res, NTPStats{Remote: m[2], Synchronized: m[1] == "*", ReferenceID: m[3],
				Stratum: atoi(m[4], 0), Type: m[5], When: m[6], HostPoll: atoi(m[7], 0),
				Reachability: atoi(m[8], 0), Delay: atof(m[9], 0), Offset: atof(m[10], 0), Jitter: atof(m[11], 0)})
		}
		return nil
	})
	return res, err
}

// GetBGPNeighbors implements Driver from show ip bgp summary | json (the
// default VRF, named "global" as in NAPALM) and the BGP section of the
// running configuration; the remote router id is not in the summary and
// is left "".
func (d *eosDriver) GetBGPNeighbors(ctx context.Context) (map[string]BGPVRF, error) {
	res := map[string]BGPVRF{}
	err := d.s.query(ctx, func(o runner) error {
		var v struct {
			VRFs map[string]struct {
				RouterID string `json:"routerId"`
				ASN      any    `json:"asn"`
				Peers    map[string]struct {
					PeerState      string   `json:"peerState"`
					ASN            any      `json:"asn"`
					PrefixReceived int      `json:"prefixReceived"`
					PrefixAccepted int      `json:"prefixAccepted"`
					UpDownTime     *float64 `json:"upDownTime"`
				} `json:"peers"`
			} `json:"vrfs"`
		}
		done, err := eosBGPNeighborsNAPALM(o, res)
		if err != nil || done {
			return err
		}
		// Devices (or simulators) without the per-VRF commands: the
		// default VRF's summary and the running configuration.
		out, failed, err := o.send("show ip bgp summary | json")
		if err != nil {
			return err
		}
		if strings.Contains(out, "BGP inactive") || strings.Contains(out, "not configured") {
			return nil
		}
		if failed {
			return o.rejected("show ip bgp summary | json", out)
		}
		if err := json.Unmarshal([]byte(jsonBody(out)), &v); err != nil {
			return o.errf(ErrCommand, "show ip bgp summary | json", err)
		}
		cfgText, _, err := o.send("show running-config | section router bgp")
		if err != nil {
			return err
		}
		cfg := parseBGPConfig(cfgText)
		now := float64(time.Now().UnixNano()) / 1e9
		for name, vrf := range v.VRFs {
			localAS, _ := asNumber(fmt.Sprint(vrf.ASN))
			out := BGPVRF{RouterID: vrf.RouterID, Peers: map[string]BGPPeer{}}
			for addr, p := range vrf.Peers {
				remoteAS, _ := asNumber(fmt.Sprint(p.ASN))
				up := p.PeerState == "Established"
				peer := BGPPeer{LocalAS: localAS, RemoteAS: remoteAS, IsUp: up,
					IsEnabled: !cfg.shutdown[addr], Description: cfg.descriptions[addr], Uptime: -1,
					AddressFamily: map[string]BGPAFStats{"ipv4": {ReceivedPrefixes: p.PrefixReceived,
						AcceptedPrefixes: p.PrefixAccepted, SentPrefixes: -1}}}
				if up && p.UpDownTime != nil {
					peer.Uptime = int(now - *p.UpDownTime)
				}
				out.Peers[addr] = peer
			}
			if name == "default" {
				name = "global"
			}
			res[name] = out
		}
		return nil
	})
	return res, err
}

// eosBGPPeer is one peer of show ip bgp neighbors vrf all | json.
type eosBGPPeer struct {
	PeerAddress        string   `json:"peerAddress"`
	LocalASN           any      `json:"localAsn"`
	ASN                any      `json:"asn"`
	RouterID           string   `json:"routerId"`
	State              string   `json:"state"`
	IdleReason         string   `json:"idleReason"`
	Description        string   `json:"description"`
	EstablishedTime    *float64 `json:"establishedTime"`
	PrefixesReceived   int      `json:"prefixesReceived"`
	PrefixesSent       int      `json:"prefixesSent"`
	V6PrefixesReceived int      `json:"v6PrefixesReceived"`
	V6PrefixesSent     int      `json:"v6PrefixesSent"`
}

type eosBGPSummaryVRFs struct {
	VRFs map[string]struct {
		RouterID string `json:"routerId"`
		Peers    map[string]struct {
			PrefixAccepted int `json:"prefixAccepted"`
		} `json:"peers"`
	} `json:"vrfs"`
}

// eosBGPNeighborsNAPALM is NAPALM eos's get_bgp_neighbors: the IPv4 and
// IPv6 summaries of every VRF (accepted prefixes, router ids) and the
// neighbour details (state, description, counters). done is false when
// the device does not know the first command.
func eosBGPNeighborsNAPALM(o runner, res map[string]BGPVRF) (done bool, err error) {
	var v4, v6 eosBGPSummaryVRFs
	var nb4, nb6 struct {
		VRFs map[string]struct {
			PeerList []eosBGPPeer `json:"peerList"`
		} `json:"vrfs"`
	}
	out, failed, err := o.send("show ip bgp summary vrf all | json")
	if err != nil || failed || strings.Contains(out, "Invalid input") {
		return false, err
	}
	if err := json.Unmarshal([]byte(jsonBody(out)), &v4); err != nil {
		return true, o.errf(ErrCommand, "show ip bgp summary vrf all | json", fmt.Errorf("bad JSON from the device: %w", err))
	}
	for _, c := range []struct {
		cmd string
		v   any
	}{{"show ipv6 bgp summary vrf all", &v6}, {"show ip bgp neighbors vrf all", &nb4}, {"show ipv6 bgp peers vrf all", &nb6}} {
		if err := showJSON(o, c.cmd, c.v); err != nil {
			return true, err
		}
	}
	type vrfPeers = map[string]struct {
		PeerList []eosBGPPeer `json:"peerList"`
	}
	for _, nb := range []vrfPeers{nb4.VRFs, nb6.VRFs} {
		for name, vd := range nb {
			key := name
			if key == "default" {
				key = "global"
			}
			vrf := res[key]
			if vrf.Peers == nil {
				vrf.Peers = map[string]BGPPeer{}
			}
			for _, p := range vd.PeerList {
				ip := napalmIP(p.PeerAddress)
				local, _ := asNumber(fmt.Sprint(p.LocalASN))
				remote, _ := asNumber(fmt.Sprint(p.ASN))
				acc4, acc6 := 0, 0
				if s, ok := v4.VRFs[name].Peers[ip]; ok {
					acc4 = s.PrefixAccepted
				}
				if s, ok := v6.VRFs[name].Peers[ip]; ok {
					acc6 = s.PrefixAccepted
				}
				uptime := -1
				if p.EstablishedTime != nil {
					uptime = int(*p.EstablishedTime)
				}
				vrf.Peers[ip] = BGPPeer{LocalAS: local, RemoteAS: remote, RemoteID: napalmIP(p.RouterID),
					IsUp: p.State == "Established", IsEnabled: p.State != "Idle" || p.IdleReason != "Administratively shut down",
					Description: p.Description, Uptime: uptime, AddressFamily: map[string]BGPAFStats{
						"ipv4": {ReceivedPrefixes: p.PrefixesReceived, AcceptedPrefixes: acc4, SentPrefixes: p.PrefixesSent},
						"ipv6": {ReceivedPrefixes: p.V6PrefixesReceived, AcceptedPrefixes: acc6, SentPrefixes: p.V6PrefixesSent},
					}}
			}
			res[key] = vrf
		}
	}
	for _, s := range []eosBGPSummaryVRFs{v4, v6} {
		for name, vd := range s.VRFs {
			key := name
			if key == "default" {
				key = "global"
			}
			vrf := res[key]
			if vrf.Peers == nil {
				vrf.Peers = map[string]BGPPeer{}
			}
			vrf.RouterID = napalmIP(vd.RouterID)
			res[key] = vrf
		}
	}
	return true, nil
}

// Ping implements Driver like NAPALM eos.
func (d *eosDriver) Ping(ctx context.Context, p PingOptions) (PingResult, error) {
	pingDefaults(&p)
	if err := checkProbeArgs(d.s, "ping", p.Destination, p.Source, p.VRF); err != nil {
		return PingResult{}, err
	}
	cmd := fmt.Sprintf("ping %s timeout %d size %d repeat %d", p.Destination, p.Timeout, p.Size, p.Count)
	if p.VRF != "" {
		cmd = fmt.Sprintf("ping vrf %s %s timeout %d size %d repeat %d", p.VRF, p.Destination, p.Timeout, p.Size, p.Count)
	}
	if p.Source != "" {
		cmd += " source " + p.Source
	}
	var res PingResult
	err := d.s.query(ctx, func(o runner) error {
		out, failed, err := o.send(cmd)
		if err != nil {
			return err
		}
		switch {
		case failed || strings.Contains(out, "connect:"):
			res.Error = out
		case strings.Contains(out, "PING"):
			res.Success = parseLinuxPing(out)
		default:
			res.Error = "unexpected ping output: " + deviceMessage(out)
		}
		return nil
	})
	return res, err
}

// parseLinuxPing reads Linux iputils ping output (EOS) as NAPALM eos:
// unreachable and truncated replies are results with rtt 0.
func parseLinuxPing(out string) *PingSuccess {
	s := &PingSuccess{Results: []PingProbeRT{}}
	for l := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(l)
		switch {
		case strings.Contains(l, "icmp"):
			switch {
			case strings.Contains(l, "Unreachable") && len(f) > 2:
				if strings.Contains(f[2], "(") && len(f[2]) >= 2 {
					s.Results = append(s.Results, PingProbeRT{IPAddress: f[2][1 : len(f[2])-1]})
				} else {
					s.Results = append(s.Results, PingProbeRT{IPAddress: f[1]})
				}
			case strings.Contains(l, "truncated") && len(f) > 4:
				if strings.Contains(f[4], "(") && len(f[4]) >= 3 {
					s.Results = append(s.Results, PingProbeRT{IPAddress: f[4][1 : len(f[4])-2]})
				} else if len(f[3]) >= 1 {
					s.Results = append(s.Results, PingProbeRT{IPAddress: f[3][:len(f[3])-1]})
				}
			case len(f) > 6 && f[1] == "bytes" && len(f[3]) >= 1 && len(f[6]) >= 5:
				s.Results = append(s.Results, PingProbeRT{IPAddress: f[3][:len(f[3])-1], RTT: atof(f[6][5:], 0)})
			}
		case strings.Contains(l, "packets transmitted") && len(f) >= 4:
			s.ProbesSent = atoi(f[0], 0)
			s.PacketLoss = s.ProbesSent - atoi(f[3], 0)
		case strings.Contains(l, "min/avg/max") && len(f) >= 4:
			m := strings.Split(f[3], "/")
			if len(m) >= 4 {
				s.RTTMin, s.RTTAvg, s.RTTMax, s.RTTStddev = atof(m[0], 0), atof(m[1], 0), atof(m[2], 0), atof(m[3], 0)
			}
		}
	}
	return s
}

// eosTraceHopRe is NAPALM eos's traceroute hop line.
var eosTraceHopRe = regexp.MustCompile(`\s?(\d+)` + strings.Repeat(`\s+((([a-zA-Z0-9\.:-]*)\s+\(?([a-fA-F0-9\.:][^\)]*)\)?)?\s+(\d+\.\d+)\s+ms|\*)`, 3))

// Traceroute implements Driver like NAPALM eos (Linux traceroute through
// bash, bounded by TTL x timeout).
func (d *eosDriver) Traceroute(ctx context.Context, t TracerouteOptions) (TracerouteResult, error) {
	traceDefaults(&t)
	if err := checkProbeArgs(d.s, "traceroute", t.Destination, t.Source, t.VRF); err != nil {
		return TracerouteResult{}, err
	}
	src := ""
	if t.Source != "" {
		src = "-s " + t.Source
	}
	// NAPALM's command text, spaces included (two without a source).
	cmd := fmt.Sprintf("bash timeout %d traceroute %s %s -m %d -w %d", t.TTL*t.Timeout, t.Destination, src, t.TTL, t.Timeout)
	var res TracerouteResult
	err := d.s.query(ctx, func(o runner) error {
		if t.VRF != "" {
			if _, err := o.show("cli vrf " + t.VRF); err != nil {
				res.Error = "Cannot execute traceroute on the device: cli vrf " + t.VRF
				return nil
			}
		}
		out, failed, err := o.send(cmd)
		if err != nil {
			return err
		}
		if failed {
			res.Error = "Cannot execute traceroute on the device: " + cmd
			return nil
		}
		res.Success = parseHopTraceroute(eosTraceHopRe, out, float64(t.Timeout)*1000)
		return nil
	})
	return res, err
}

// tryJSON runs "cmd | json" and decodes it into v; ok is false (and err
// nil) when the device does not know the command in JSON.
func tryJSON(o runner, cmd string, v any) (ok bool, err error) {
	out, failed, err := o.send(cmd + " | json")
	if err != nil {
		return false, err
	}
	body := jsonBody(out)
	if failed || !strings.HasPrefix(body, "{") {
		return false, nil
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		return false, o.errf(ErrCommand, cmd+" | json", fmt.Errorf("bad JSON from the device: %w", err))
	}
	return true, nil
}

// eosInterfacesIPNAPALM is NAPALM eos's get_interfaces_ip from show ip
// interface and show ipv6 interface in JSON.
func eosInterfacesIPNAPALM(o runner, res map[string]InterfaceIP) (bool, error) {
	type addr struct {
		Address string `json:"address"`
		MaskLen int    `json:"maskLen"`
	}
	var v4 struct {
		Interfaces map[string]struct {
			InterfaceAddress struct {
				PrimaryIP               *addr  `json:"primaryIp"`
				SecondaryIPsOrderedList []addr `json:"secondaryIpsOrderedList"`
			} `json:"interfaceAddress"`
		} `json:"interfaces"`
	}
	type addr6 struct {
		Address string `json:"address"`
		Subnet  string `json:"subnet"`
	}
	var v6 struct {
		Interfaces map[string]struct {
			LinkLocal *addr6  `json:"linkLocal"`
			Addresses []addr6 `json:"addresses"`
		} `json:"interfaces"`
	}
	ok, err := tryJSON(o, "show ip interface", &v4)
	if !ok || err != nil {
		return ok, err
	}
	out, failed, err := o.send("show ipv6 interface | json")
	if err != nil {
		return true, err
	}
	if failed || !strings.HasPrefix(jsonBody(out), "{") {
		if !strings.Contains(out, "No IPv6 configured interfaces") {
			return true, o.rejected("show ipv6 interface | json", out)
		}
	} else if err := json.Unmarshal([]byte(jsonBody(out)), &v6); err != nil {
		return true, o.errf(ErrCommand, "show ipv6 interface | json", fmt.Errorf("bad JSON from the device: %w", err))
	}
	entry := func(name string) InterfaceIP {
		e, ok := res[name]
		if !ok {
			e = InterfaceIP{IPv4: map[string]IPPrefix{}, IPv6: map[string]IPPrefix{}}
		}
		return e
	}
	for name, d := range v4.Interfaces {
		e := entry(name)
		var list []addr
		if p := d.InterfaceAddress.PrimaryIP; p != nil && p.Address != "0.0.0.0" {
			list = append(list, *p)
		}
		list = append(list, d.InterfaceAddress.SecondaryIPsOrderedList...)
		for _, a := range list {
			if a.Address == "" {
				continue
			}
			ip := napalmIP(a.Address)
			if _, dup := e.IPv4[ip]; !dup {
				e.IPv4[ip] = IPPrefix{PrefixLength: a.MaskLen}
			}
		}
		res[name] = e
	}
	for name, d := range v6.Interfaces {
		e := entry(name)
		var list []addr6
		if d.LinkLocal != nil {
			list = append(list, *d.LinkLocal)
		}
		list = append(list, d.Addresses...)
		for _, a := range list {
			if a.Address == "" {
				continue
			}
			sub := cmp.Or(a.Subnet, "::/0")
			ml := atoi(sub[strings.LastIndexByte(sub, '/')+1:], 0)
			ip := napalmIP(a.Address)
			if _, dup := e.IPv6[ip]; !dup {
				e.IPv6[ip] = IPPrefix{PrefixLength: ml}
			}
		}
		res[name] = e
	}
	return true, nil
}

// eosLLDPDetailNAPALM is NAPALM eos's get_lldp_neighbors_detail from the
// JSON of show lldp neighbors [IFACE] detail.
func eosLLDPDetailNAPALM(o runner, cmd string, res map[string][]LLDPNeighborDetail) (bool, error) {
	var v struct {
		Neighbors map[string]struct {
			Info []struct {
				ChassisID     string          `json:"chassisId"`
				ChassisIDType string          `json:"chassisIdType"`
				SystemName    string          `json:"systemName"`
				SystemDescr   string          `json:"systemDescription"`
				Capabilities  json.RawMessage `json:"systemCapabilities"`
				Interface     struct {
					ID          string `json:"interfaceId"`
					Description string `json:"interfaceDescription"`
				} `json:"neighborInterfaceInfo"`
			} `json:"lldpNeighborInfo"`
		} `json:"lldpNeighbors"`
	}
	ok, err := tryJSON(o, cmd, &v)
	if !ok || err != nil {
		return ok, err
	}
	for iface, d := range v.Neighbors {
		for _, n := range d.Info {
			var all, enabled []string
			caps := payloadOrderedBools(n.Capabilities)
			for _, c := range caps {
				all = append(all, c.k)
				if c.v {
					enabled = append(enabled, c.k)
				}
			}
			chassis := n.ChassisID
			if n.ChassisIDType == "macAddress" {
				chassis = macOr(chassis)
			}
			res[iface] = append(res[iface], LLDPNeighborDetail{ParentInterface: iface,
				RemotePort: strings.ReplaceAll(n.Interface.ID, `"`, ""), RemotePortDescription: n.Interface.Description,
				RemoteSystemName: n.SystemName, RemoteSystemDescription: n.SystemDescr, RemoteChassisID: chassis,
				RemoteSystemCapab: lldpCapab(strings.Join(all, ","), lldpCapabNames), RemoteSystemEnableCapab: lldpCapab(strings.Join(enabled, ","), lldpCapabNames)})
		}
	}
	return true, nil
}

type kvBool struct {
	k string
	v bool
}

// payloadOrderedBools decodes a JSON object of booleans ({} or absent
// gives none).
func payloadOrderedBools(raw json.RawMessage) []kvBool {
	var m map[string]bool
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make([]kvBool, 0, len(m))
	for k, v := range m {
		out = append(out, kvBool{k, v})
	}
	return out
}

// eosMACTableNAPALM is NAPALM eos's get_mac_address_table from show mac
// address-table in JSON (the unicast table).
func eosMACTableNAPALM(o runner, res *[]MACEntry) (bool, error) {
	var v struct {
		Unicast struct {
			Entries []struct {
				VLAN      int      `json:"vlanId"`
				Interface string   `json:"interface"`
				MAC       string   `json:"macAddress"`
				Type      string   `json:"entryType"`
				LastMove  *float64 `json:"lastMove"`
				Moves     int      `json:"moves"`
			} `json:"tableEntries"`
		} `json:"unicastTable"`
	}
	ok, err := tryJSON(o, "show mac address-table", &v)
	if !ok || err != nil {
		return ok, err
	}
	for _, e := range v.Unicast.Entries {
		lm := 0.0
		if e.LastMove != nil {
			lm = *e.LastMove
		}
		*res = append(*res, MACEntry{MAC: macOr(e.MAC), Interface: e.Interface, VLAN: e.VLAN, Active: true,
			Static: e.Type == "static", Moves: e.Moves, LastMove: lm})
	}
	return true, nil
}

package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
)

// The getters below are NAPALM base getters a driver offers beyond the
// Driver interface; callers find them with a type assertion and report
// ErrNotSupported (NAPALM's NotImplementedError) where a driver lacks one.

// SNMPInformation is NAPALM get_snmp_information's result.
type SNMPInformation struct {
	ChassisID string                   `json:"chassis_id"`
	Community map[string]SNMPCommunity `json:"community"`
	Contact   string                   `json:"contact"`
	Location  string                   `json:"location"`
}

// SNMPCommunity is one community of SNMPInformation.
type SNMPCommunity struct {
	ACL  string `json:"acl"`
	Mode string `json:"mode"`
}

// User is one entry of NAPALM get_users.
type User struct {
	Level    int      `json:"level"`
	Password string   `json:"password"`
	SSHKeys  []string `json:"sshkeys"`
}

// SNMPGetter is implemented by drivers with get_snmp_information.
type SNMPGetter interface {
	GetSNMPInformation(ctx context.Context) (SNMPInformation, error)
}

// UsersGetter is implemented by drivers with get_users.
type UsersGetter interface {
	GetUsers(ctx context.Context) (map[string]User, error)
}

// NotSupported builds the error of a getter a driver does not have.
func NotSupported(d Driver, getter string) error {
	return fmt.Errorf("%w: %s: not implemented by the %s driver", ErrNotSupported, getter, d.Platform())
}

// --- ios ---

// GetSNMPInformation implements SNMPGetter like NAPALM ios.
func (d *iosDriver) GetSNMPInformation(ctx context.Context) (SNMPInformation, error) {
	res := SNMPInformation{ChassisID: "unknown", Community: map[string]SNMPCommunity{}, Contact: "unknown", Location: "unknown"}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show run | include snmp-server")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(iosPostprocess(out), "\n") {
			f := strings.Fields(l)
			switch {
			case strings.Contains(l, "snmp-server community") && len(f) >= 3:
				c := SNMPCommunity{Mode: "N/A", ACL: "N/A"}
				if len(f) > 3 {
					c.Mode = strings.ToLower(f[3])
				}
				if len(f) > 4 {
					c.ACL = f[4]
				}
				res.Community[f[2]] = c
			case strings.Contains(l, "snmp-server location"):
				res.Location = strings.Join(f[2:], " ")
			case strings.Contains(l, "snmp-server contact"):
				res.Contact = strings.Join(f[2:], " ")
			case strings.Contains(l, "snmp-server chassis-id"):
				res.ChassisID = strings.Join(f[2:], " ")
			}
		}
		if res.ChassisID == "unknown" {
			out, _, err := o.send("show snmp chassis")
			if err != nil {
				return err
			}
			res.ChassisID = iosPostprocess(out)
		}
		return nil
	})
	return res, err
}

var (
	iosUserRe    = regexp.MustCompile(`(?m)^username\s+(\S+)\s+(?:privilege\s+(\S+)\s+)?(?:(?:password|secret) \d+\s+(\S+))?$`)
	iosPubKeysRe = regexp.MustCompile(`(?m)^\s+username\s+(\S+)((?:\n\s+key-hash\s+\S+\s+\S+(?:[ \t]+\S+)?)+)$`)
)

// GetUsers implements UsersGetter like NAPALM ios: username lines of the
// running configuration (level 1 without a privilege) and the key hashes
// of "ip ssh pubkey-chain".
func (d *iosDriver) GetUsers(ctx context.Context) (map[string]User, error) {
	res := map[string]User{}
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send("show run | section username")
		if err != nil {
			return err
		}
		if strings.Contains(out, "Invalid input detected") {
			if out, err = o.show("show run | include username"); err != nil {
				return err
			}
		}
		out = strings.ReplaceAll(iosPostprocess(out), "\r", "")
		for _, m := range iosUserRe.FindAllStringSubmatch(out, -1) {
			u := User{Level: 1, Password: m[3], SSHKeys: []string{}}
			if m[2] != "" {
				u.Level = atoi(m[2], 1)
			}
			res[m[1]] = u
		}
		for _, m := range iosPubKeysRe.FindAllStringSubmatch(out, -1) {
			u, ok := res[m[1]]
			if !ok {
				continue
			}
			u.SSHKeys = []string{}
			for l := range strings.SplitSeq(m[2], "\n") {
				if l = strings.TrimSpace(l); len(l) > 9 {
					u.SSHKeys = append(u.SSHKeys, l[9:])
				}
			}
			res[m[1]] = u
		}
		return nil
	})
	return res, err
}

// --- eos ---

var eosSNMPCommRe = regexp.MustCompile(`^snmp-server\s+community\s+(?P<community>\S+)(\s+view\s+(?P<view>\S+))?(\s+(?P<access>ro|rw)?)(\s+ipv6\s+(?P<v6_acl>\S+))?(\s+(?P<v4_acl>\S+))?$`)

// GetSNMPInformation implements SNMPGetter like NAPALM eos.
func (d *eosDriver) GetSNMPInformation(ctx context.Context) (SNMPInformation, error) {
	res := SNMPInformation{Community: map[string]SNMPCommunity{}}
	err := d.s.query(ctx, func(o runner) error {
		for _, c := range []string{"show snmp v2-mib chassis", "show snmp v2-mib location", "show snmp v2-mib contact"} {
			var v map[string]string
			if err := showJSON(o, c, &v); err != nil {
				return err
			}
			for k, val := range v {
				switch k {
				case "chassisId":
					res.ChassisID = val
				case "location":
					res.Location = strings.Trim(val, `"`)
				case "contact":
					res.Contact = strings.Trim(val, `"`)
				}
			}
		}
		out, err := o.show("show running-config | section snmp-server community")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(out, "\n") {
			m := eosSNMPCommRe.FindStringSubmatch(strings.TrimRight(l, "\r "))
			if m == nil {
				continue
			}
			res.Community[m[eosSNMPCommRe.SubexpIndex("community")]] = SNMPCommunity{
				ACL: m[eosSNMPCommRe.SubexpIndex("v4_acl")], Mode: m[eosSNMPCommRe.SubexpIndex("access")]}
		}
		return nil
	})
	return res, err
}

// GetUsers implements UsersGetter like NAPALM eos (show users accounts).
func (d *eosDriver) GetUsers(ctx context.Context) (map[string]User, error) {
	res := map[string]User{}
	err := d.s.query(ctx, func(o runner) error {
		var v struct {
			Users map[string]struct {
				PrivLevel int    `json:"privLevel"`
				Secret    string `json:"secret"`
				SSHKey    string `json:"sshAuthorizedKey"`
			} `json:"users"`
		}
		if err := showJSON(o, "show users accounts", &v); err != nil {
			return err
		}
		for name, u := range v.Users {
			keys := []string{}
			if strings.HasPrefix(u.SSHKey, "ssh-rsa") || strings.HasPrefix(u.SSHKey, "ssh-dss") {
				keys = append(keys, u.SSHKey)
			}
			res[name] = User{Level: u.PrivLevel, Password: u.Secret, SSHKeys: keys}
		}
		return nil
	})
	return res, err
}

// --- nxos ---

var (
	nxosSNMPLocRe  = regexp.MustCompile(`^snmp-server\slocation\s(.*)`)
	nxosSNMPConRe  = regexp.MustCompile(`^snmp-server\scontact\s(.*)`)
	nxosSNMPCommRe = regexp.MustCompile(`^snmp-server\scommunity\s(\S+)\s((group\s+(network\-admin|network\-operator)|use\-.+\s+(\S+)))`)
	nxosUserRe     = []*regexp.Regexp{
		regexp.MustCompile(`^username\s+(?P<user>\w+.*)\s+password\s+\d+\s+(?P<pw>.*)\s+role\s+(?P<role>\w+.*)`),
		regexp.MustCompile(`^username\s+(?P<user>\w+.*)\s+role\s+(?P<role>\w+.*)`),
		regexp.MustCompile(`^username\s+(?P<user>\w+.*)\s+sshkey\s+(?P<kt>ssh-rsa|ssh-dsa)\s+(?P<kv>\w+.*)`),
	}
)

// GetSNMPInformation implements SNMPGetter like NAPALM nxos_ssh (from the
// running configuration; {} without any snmp-server line).
func (d *nxosDriver) GetSNMPInformation(ctx context.Context) (SNMPInformation, error) {
	var res SNMPInformation
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show running-config")
		if err != nil {
			return err
		}
		seen := false
		res = SNMPInformation{Community: map[string]SNMPCommunity{}}
		for l := range strings.SplitSeq(out, "\n") {
			l = strings.TrimRight(l, "\r")
			switch {
			case nxosSNMPLocRe.MatchString(l):
				seen = true
				if v := nxosSNMPLocRe.FindStringSubmatch(l)[1]; v != "" {
					res.Location = v
				}
			case nxosSNMPConRe.MatchString(l):
				seen = true
				if v := nxosSNMPConRe.FindStringSubmatch(l)[1]; v != "" {
					res.Contact = v
				}
			case nxosSNMPCommRe.MatchString(l):
				seen = true
				m := nxosSNMPCommRe.FindStringSubmatch(l)
				c, ok := res.Community[m[1]]
				if !ok {
					c = SNMPCommunity{ACL: m[5], Mode: strings.ToLower(m[4])}
				} else {
					if m[5] != "" {
						c.ACL = m[5]
					}
					if m[4] != "" {
						c.Mode = strings.ToLower(m[4])
					}
				}
				res.Community[m[1]] = c
			}
		}
		if !seen {
			res = SNMPInformation{}
		}
		return nil
	})
	return res, err
}

// GetUsers implements UsersGetter like NAPALM nxos_ssh: username lines of
// the running configuration, the highest level of a user's roles
// (network-admin 15, network-operator 5, priv-N N).
func (d *nxosDriver) GetUsers(ctx context.Context) (map[string]User, error) {
	res := map[string]User{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show running-config")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(out, "\n") {
			l = strings.TrimRight(l, "\r")
			for _, re := range nxosUserRe {
				m := re.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				g := func(n string) string {
					if i := re.SubexpIndex(n); i > 0 {
						return m[i]
					}
					return ""
				}
				name := g("user")
				u, ok := res[name]
				if !ok {
					u = User{SSHKeys: []string{}}
				}
				if pw := strings.TrimSpace(g("pw")); pw != "" {
					u.Password = pw
				}
				role, level := g("role"), 0
				switch {
				case strings.HasPrefix(role, "priv"):
					level = atoi(role[strings.LastIndexByte(role, '-')+1:], 0)
				case role == "network-admin":
					level = 15
				case role == "network-operator":
					level = 5
				}
				u.Level = max(u.Level, level)
				if kt, kv := g("kt"), g("kv"); kt != "" && kv != "" {
					u.SSHKeys = append(u.SSHKeys, kv)
				}
				res[name] = u
				break
			}
		}
		return nil
	})
	return res, err
}

// Optics is one interface of NAPALM get_optics.
type Optics struct {
	PhysicalChannels OpticsChannels `json:"physical_channels"`
	// State is the transceiver's inventory data (NAPALM nxos_ssh only).
	State *OpticsInventory `json:"state,omitempty"`
}

// OpticsInventory is the "state" of an nxos_ssh optic.
type OpticsInventory struct {
	Vendor        string `json:"vendor"`
	VendorPart    string `json:"vendor_part"`
	VendorRev     string `json:"vendor_rev"`
	SerialNo      string `json:"serial_no"`
	ConnectorType string `json:"connector_type"`
}

// OpticsChannels lists an interface's optical channels.
type OpticsChannels struct {
	Channel []OpticsChannel `json:"channel"`
}

// OpticsChannel is one channel of Optics.
type OpticsChannel struct {
	Index int         `json:"index"`
	State OpticsState `json:"state"`
}

// OpticsState are a channel's readings.
type OpticsState struct {
	InputPower       OpticsStat `json:"input_power"`
	OutputPower      OpticsStat `json:"output_power"`
	LaserBiasCurrent OpticsStat `json:"laser_bias_current"`
}

// OpticsStat is one reading (dBm or mA) with its statistics.
type OpticsStat struct {
	Instant float64 `json:"instant"`
	Avg     float64 `json:"avg"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
}

// OpticsGetter is implemented by drivers with get_optics.
type OpticsGetter interface {
	GetOptics(ctx context.Context) (map[string]Optics, error)
}

var iosDashLineRe = regexp.MustCompile(`(?m)^---------.*$`)

// GetOptics implements OpticsGetter like NAPALM ios: show interfaces
// transceiver (per switch of a VSS), -100.0 for readings the device does
// not give.
func (d *iosDriver) GetOptics(ctx context.Context) (map[string]Optics, error) {
	res := map[string]Optics{}
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send("show interfaces transceiver")
		if err != nil {
			return err
		}
		out = iosPostprocess(out)
		var table string
		switch {
		case strings.Contains(out, "% Invalid input"):
			return nil
		case strings.Contains(out, "% Incomplete command"):
			sv, _, err := o.send("show switch virtual")
			if err != nil {
				return err
			}
			if !regexp.MustCompile(`(?m)Switch mode[ ]+: Virtual Switch`).MatchString(sv) {
				return nil
			}
			for _, c := range []string{"show interfaces transceiver switch 1", "show interfaces transceiver switch 2"} {
				o1, _, err := o.send(c)
				if err != nil {
					return err
				}
				p := iosDashLineRe.Split(o1, -1)
				if len(p) < 2 {
					return nil
				}
				table += p[1]
			}
		default:
			p := iosDashLineRe.Split(out, -1)
			if len(p) < 2 {
				return nil
			}
			table = p[1]
		}
		for l := range strings.SplitSeq(strings.TrimSpace(table), "\n") {
			f := strings.Fields(strings.Trim(strings.TrimSpace(l), "-"))
			var name, cur, outP, inP string
			switch {
			case len(f) == 5:
				name, cur, outP, inP = f[0], "0", f[3], f[4]
			case len(f) >= 6:
				name, cur, outP, inP = f[0], f[3], f[4], f[5]
			default:
				continue
			}
			st := OpticsState{
				InputPower:       OpticsStat{Instant: atof(inP, -100), Avg: -100, Min: -100, Max: -100},
				OutputPower:      OpticsStat{Instant: atof(outP, -100), Avg: -100, Min: -100, Max: -100},
				LaserBiasCurrent: OpticsStat{Instant: atof(cur, 0)},
			}
			res[canonicalInterface(name, false)] = Optics{PhysicalChannels: OpticsChannels{Channel: []OpticsChannel{{Index: 0, State: st}}}}
		}
		return nil
	})
	return res, err
}

// GetOptics implements OpticsGetter like NAPALM eos (show interfaces
// transceiver in JSON; 0.0 for what the device does not give).
func (d *eosDriver) GetOptics(ctx context.Context) (map[string]Optics, error) {
	res := map[string]Optics{}
	err := d.s.query(ctx, func(o runner) error {
		var v struct {
			Interfaces map[string]struct {
				RxPower *float64 `json:"rxPower"`
				TxPower *float64 `json:"txPower"`
				TxBias  *float64 `json:"txBias"`
			} `json:"interfaces"`
		}
		if err := showJSON(o, "show interfaces transceiver", &v); err != nil {
			return err
		}
		val := func(p *float64) float64 {
			if p == nil {
				return 0
			}
			return *p
		}
		for port, pv := range v.Interfaces {
			st := OpticsState{InputPower: OpticsStat{Instant: val(pv.RxPower)}, OutputPower: OpticsStat{Instant: val(pv.TxPower)},
				LaserBiasCurrent: OpticsStat{Instant: val(pv.TxBias)}}
			res[port] = Optics{PhysicalChannels: OpticsChannels{Channel: []OpticsChannel{{Index: 0, State: st}}}}
		}
		return nil
	})
	return res, err
}

// VLAN is one entry of NAPALM get_vlans.
type VLAN struct {
	Name       string   `json:"name"`
	Interfaces []string `json:"interfaces"`
}

// VLANsGetter is implemented by drivers with get_vlans (keyed by VLAN id,
// as text like NAPALM ios).
type VLANsGetter interface {
	GetVLANs(ctx context.Context) (map[string]VLAN, error)
}

var (
	iosVlanRe     = regexp.MustCompile(`^(\d+)\s+(.*?)(?:active|act/[isl]shut|act/unsup)\S*(\s+[A-Z][a-z].*)?$`)
	iosVlanContRe = regexp.MustCompile(`^\s+([A-Z][a-z].*)$`)
	iosVlanBrief  = regexp.MustCompile(`(?m)^(\d+)\W+(.*?)(?:active|act/[isl]shut|act/unsup)`)
)

// parseIOSVlanPorts reads show vlan all-ports / show vlan id N: each VLAN
// with its ports (continued on the following lines), canonical names.
func parseIOSVlanPorts(out string) map[string]VLAN {
	res := map[string]VLAN{}
	cur := ""
	was := false
	for l := range strings.SplitSeq(out, "\n") {
		l = strings.TrimRight(l, "\r")
		ports := ""
		m := iosVlanRe.FindStringSubmatch(l)
		if m != nil {
			was, cur, ports = true, m[1], m[3]
			res[cur] = VLAN{Name: strings.TrimSpace(m[2]), Interfaces: []string{}}
		}
		var cm []string
		if was {
			if cm = iosVlanContRe.FindStringSubmatch(l); cm != nil {
				ports = cm[1]
			}
		}
		if cm == nil && m == nil {
			was = false
			continue
		}
		v := res[cur]
		for p := range strings.SplitSeq(ports, ",") {
			if p = strings.TrimSpace(p); p != "" {
				v.Interfaces = append(v.Interfaces, canonicalInterface(p, false))
			}
		}
		res[cur] = v
	}
	return res
}

// GetVLANs implements VLANsGetter like NAPALM ios: show vlan all-ports, or
// show vlan brief and show vlan id N per VLAN where the first is unknown.
func (d *iosDriver) GetVLANs(ctx context.Context) (map[string]VLAN, error) {
	var res map[string]VLAN
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send("show vlan all-ports")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "Invalid input detected") {
			res = parseIOSVlanPorts(iosPostprocess(out))
			return nil
		}
		brief, err := o.show("show vlan brief")
		if err != nil {
			return err
		}
		res = map[string]VLAN{}
		for _, m := range iosVlanBrief.FindAllStringSubmatch(iosPostprocess(brief), -1) {
			one, _, err := o.send("show vlan id " + m[1])
			if err != nil {
				return err
			}
			vs := parseIOSVlanPorts(iosPostprocess(one))
			switch len(vs) {
			case 0:
				res[m[1]] = VLAN{Name: strings.TrimSpace(m[2]), Interfaces: []string{}}
			case 1:
				maps.Copy(res, vs)
			default:
				return o.errf(ErrCommand, "show vlan id "+m[1], fmt.Errorf("found more values than can be present"))
			}
		}
		return nil
	})
	return res, err
}

// orderedKeys lists the keys of a JSON object in document order.
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// GetVLANs implements VLANsGetter like NAPALM eos (show vlan in JSON).
func (d *eosDriver) GetVLANs(ctx context.Context) (map[string]VLAN, error) {
	res := map[string]VLAN{}
	err := d.s.query(ctx, func(o runner) error {
		var v struct {
			VLANs map[string]struct {
				Name       string          `json:"name"`
				Interfaces json.RawMessage `json:"interfaces"`
			} `json:"vlans"`
		}
		if err := showJSON(o, "show vlan", &v); err != nil {
			return err
		}
		for id, vl := range v.VLANs {
			ifs := orderedKeys(vl.Interfaces)
			if ifs == nil {
				ifs = []string{}
			}
			res[id] = VLAN{Name: vl.Name, Interfaces: ifs}
		}
		return nil
	})
	return res, err
}

var nxosVlanRangeRe = regexp.MustCompile(`^([A-Za-z/-]+|.*/)(\d+)-(\d+)$`)

// nxosVlanPorts is NAPALM nxos's _parse_vlan_ports: ranges expanded
// ("Eth1/1-3"), names canonical.
func nxosVlanPorts(v any) []string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		s = strings.Join(parts, ",")
	}
	out := []string{}
	for p := range strings.SplitSeq(s, ",") {
		p = strings.TrimSpace(p)
		if m := nxosVlanRangeRe.FindStringSubmatch(p); m != nil {
			lo, hi := atoi(m[2], 0), atoi(m[3], -1)
			for i := lo; i <= hi && i-lo < 4096; i++ {
				out = append(out, canonicalInterface(m[1]+strconv.Itoa(i), false))
			}
			continue
		}
		out = append(out, canonicalInterface(p, false))
	}
	return out
}

// nxosTableRows is NAPALM nxos's _get_table_rows: TABLE_x/ROW_x as a list
// whatever NX-OS nests.
func nxosTableRows(parent map[string]any, table, row string) []map[string]any {
	var rows []any
	switch t := parent[table].(type) {
	case []any:
		for _, e := range t {
			if m, ok := e.(map[string]any); ok {
				rows = append(rows, m[row])
			}
		}
	case map[string]any:
		switch r := t[row].(type) {
		case []any:
			rows = r
		default:
			rows = []any{r}
		}
	}
	var out []map[string]any
	for _, r := range rows {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// GetVLANs implements VLANsGetter like NAPALM nxos_ssh (show vlan brief |
// json).
func (d *nxosDriver) GetVLANs(ctx context.Context) (map[string]VLAN, error) {
	res := map[string]VLAN{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show vlan brief | json")
		if err != nil {
			return err
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(jsonBody(out)), &v); err != nil {
			return o.errf(ErrCommand, "show vlan brief | json", fmt.Errorf("bad JSON from the device: %w", err))
		}
		for _, r := range nxosTableRows(v, "TABLE_vlanbriefxbrief", "ROW_vlanbriefxbrief") {
			id, ok := r["vlanshowbr-vlanid-utf"]
			if !ok {
				id = r["vlanshowbr-vlanid"]
			}
			ports, ok := r["vlanshowplist-ifidx"]
			if !ok {
				ports = []any{}
			}
			res[fmt.Sprint(id)] = VLAN{Name: fmt.Sprint(r["vlanshowbr-vlanname"]), Interfaces: nxosVlanPorts(ports)}
		}
		return nil
	})
	return res, err
}

// InterfaceCounters is one interface of NAPALM get_interfaces_counters
// (-1 for counters the device does not give).
type InterfaceCounters struct {
	TxErrors           int64 `json:"tx_errors"`
	RxErrors           int64 `json:"rx_errors"`
	TxDiscards         int64 `json:"tx_discards"`
	RxDiscards         int64 `json:"rx_discards"`
	TxOctets           int64 `json:"tx_octets"`
	RxOctets           int64 `json:"rx_octets"`
	TxUnicastPackets   int64 `json:"tx_unicast_packets"`
	RxUnicastPackets   int64 `json:"rx_unicast_packets"`
	TxMulticastPackets int64 `json:"tx_multicast_packets"`
	RxMulticastPackets int64 `json:"rx_multicast_packets"`
	TxBroadcastPackets int64 `json:"tx_broadcast_packets"`
	RxBroadcastPackets int64 `json:"rx_broadcast_packets"`
}

// CountersGetter is implemented by drivers with get_interfaces_counters.
type CountersGetter interface {
	GetInterfacesCounters(ctx context.Context) (map[string]InterfaceCounters, error)
}

func allUnknown() InterfaceCounters {
	return InterfaceCounters{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
}

var (
	iosCntHeaderRe = regexp.MustCompile(`(?m)^.* line protocol is .*$`)
	iosCntInRe     = regexp.MustCompile(`(\d+) packets input.* (\d+) bytes`)
	iosCntBcastRe  = regexp.MustCompile(`Received (\d+) broadcasts.*(\d+).*multicasts`)
	iosCntBcast2Re = regexp.MustCompile(`Received (\d+) broadcasts.*`)
	iosCntOutRe    = regexp.MustCompile(`(\d+) packets output.* (\d+) bytes`)
	iosCntInErrRe  = regexp.MustCompile(`(\d+) input errors`)
	iosCntOutErrRe = regexp.MustCompile(`(\d+) output errors`)
	iosIfNameSplit = regexp.MustCompile(` is .* line protocol is `)
)

func i64(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

// GetInterfacesCounters implements CountersGetter like NAPALM ios: show
// interfaces, queue drops from show interface summary.
func (d *iosDriver) GetInterfacesCounters(ctx context.Context) (map[string]InterfaceCounters, error) {
	res := map[string]InterfaceCounters{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show interfaces")
		if err != nil {
			return err
		}
		sum, _, err := o.send("show interface summary")
		if err != nil {
			return err
		}
		out, sum = iosPostprocess(out), iosPostprocess(sum)
		heads := iosCntHeaderRe.FindAllString(out, -1)
		bodies := iosCntHeaderRe.Split(out, -1)
		if len(bodies) != len(heads)+1 {
			return o.errf(ErrCommand, "show interfaces", fmt.Errorf("unexpected output"))
		}
		for i, h := range heads {
			name := strings.TrimSpace(iosIfNameSplit.Split(h, 2)[0])
			c := allUnknown()
			for l := range strings.SplitSeq(bodies[i+1], "\n") {
				switch {
				case strings.Contains(l, "packets input"):
					if m := iosCntInRe.FindStringSubmatch(l); m != nil {
						c.RxUnicastPackets, c.RxOctets = i64(m[1]), i64(m[2])
					}
				case strings.Contains(l, "broadcast"):
					if m := iosCntBcastRe.FindStringSubmatch(l); m != nil {
						c.RxBroadcastPackets, c.RxMulticastPackets = i64(m[1]), i64(m[2])
					} else if m := iosCntBcast2Re.FindStringSubmatch(l); m != nil {
						c.RxBroadcastPackets, c.RxMulticastPackets = i64(m[1]), -1
					}
				case strings.Contains(l, "packets output"):
					if m := iosCntOutRe.FindStringSubmatch(l); m != nil {
						c.TxUnicastPackets, c.TxOctets = i64(m[1]), i64(m[2])
					}
				case strings.Contains(l, "input errors"):
					if m := iosCntInErrRe.FindStringSubmatch(l); m != nil {
						c.RxErrors = i64(m[1])
					}
				case strings.Contains(l, "output errors"):
					if m := iosCntOutErrRe.FindStringSubmatch(l); m != nil {
						c.TxErrors = i64(m[1])
					}
				}
			}
			short := name
			for _, long := range []string{"HundredGigabitEthernet", "FortyGigabitEthernet", "TenGigabitEthernet"} {
				if rest, ok := strings.CutPrefix(name, long); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
					short = map[string]string{"HundredGigabitEthernet": "Hu", "FortyGigabitEthernet": "Fo", "TenGigabitEthernet": "Te"}[long] + rest
				}
			}
			re := regexp.MustCompile(`\b` + regexp.QuoteMeta(short) + `\b\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)`)
			for l := range strings.SplitSeq(sum, "\n") {
				if !strings.Contains(l, short) {
					continue
				}
				if m := re.FindStringSubmatch(l); m != nil {
					c.RxDiscards, c.TxDiscards = i64(m[2]), i64(m[4])
				}
			}
			res[name] = c
		}
		return nil
	})
	return res, err
}

// GetInterfacesCounters implements CountersGetter like NAPALM eos (show
// interfaces in JSON; subinterfaces left out).
func (d *eosDriver) GetInterfacesCounters(ctx context.Context) (map[string]InterfaceCounters, error) {
	res := map[string]InterfaceCounters{}
	err := d.s.query(ctx, func(o runner) error {
		var v struct {
			Interfaces map[string]struct {
				Hardware string         `json:"hardware"`
				Counters map[string]any `json:"interfaceCounters"`
			} `json:"interfaces"`
		}
		if err := showJSON(o, "show interfaces", &v); err != nil {
			return err
		}
		for name, i := range v.Interfaces {
			if i.Hardware == "subinterface" {
				continue
			}
			g := func(k string) int64 {
				if n, ok := i.Counters[k].(float64); ok {
					return int64(n)
				}
				return -1
			}
			res[name] = InterfaceCounters{TxOctets: g("outOctets"), RxOctets: g("inOctets"),
				TxUnicastPackets: g("outUcastPkts"), RxUnicastPackets: g("inUcastPkts"),
				TxMulticastPackets: g("outMulticastPkts"), RxMulticastPackets: g("inMulticastPkts"),
				TxBroadcastPackets: g("outBroadcastPkts"), RxBroadcastPackets: g("inBroadcastPkts"),
				TxDiscards: g("outDiscards"), RxDiscards: g("inDiscards"), TxErrors: g("totalOutErrors"), RxErrors: g("totalInErrors")}
		}
		return nil
	})
	return res, err
}

// IPv6Neighbor is one entry of NAPALM get_ipv6_neighbors_table.
type IPv6Neighbor struct {
	Interface string  `json:"interface"`
	MAC       string  `json:"mac"`
	IP        string  `json:"ip"`
	Age       float64 `json:"age"`
	State     string  `json:"state"`
}

// IPv6NeighborsGetter is implemented by drivers with
// get_ipv6_neighbors_table.
type IPv6NeighborsGetter interface {
	GetIPv6NeighborsTable(ctx context.Context) ([]IPv6Neighbor, error)
}

var iosIPv6NbrHeadRe = regexp.MustCompile(`(?mi)^IPv6\s+Address.*Interface$`)

// GetIPv6NeighborsTable implements IPv6NeighborsGetter like NAPALM ios
// (show ipv6 neighbors).
func (d *iosDriver) GetIPv6NeighborsTable(ctx context.Context) ([]IPv6Neighbor, error) {
	res := []IPv6Neighbor{}
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send("show ipv6 neighbors")
		if err != nil {
			return err
		}
		parts := iosIPv6NbrHeadRe.Split(strings.ReplaceAll(out, "\r", ""), -1)
		if len(parts) != 2 {
			return nil
		}
		for l := range strings.SplitSeq(strings.TrimSpace(parts[1]), "\n") {
			f := strings.Fields(l)
			if len(f) != 5 {
				continue
			}
			mac := ""
			if f[2] != "-" {
				mac = macOr(f[2])
			}
			res = append(res, IPv6Neighbor{Interface: f[4], MAC: mac, IP: napalmIP(f[0]), Age: atof(f[1], 0), State: f[3]})
		}
		return nil
	})
	return res, err
}

package driver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// iosDriver is the Cisco IOS / IOS-XE driver (NAPALM's "ios"), on
// scrapligo's cisco_iosxe platform. Candidates are written to flash
// through tclsh (NAPALM's inline_transfer), diffs come from "show archive
// config incremental-diffs" (merge) and "show archive config differences"
// (replace), a merge is committed with "copy FILE running-config", a
// replace with "configure replace FILE force", and every commit first saves
// the running configuration to the rollback file.
type iosDriver struct {
	base
	noConfirmedCommit
	fs           string // destination file system, "flash:"
	candidateCfg string
	mergeCfg     string
	rollbackCfg  string
	autoRollback bool
	replace      bool // the staged candidate is a replace (else a merge)
	loaded       bool // a candidate is staged
}

// NewIOS returns an unopened Cisco IOS / IOS-XE driver.
func NewIOS(o Options) (Driver, error) {
	s, err := newSession("ios", "cisco_iosxe", o)
	if err != nil {
		return nil, err
	}
	d := &iosDriver{
		base:              base{s: s},
		noConfirmedCommit: noConfirmedCommit{"ios"},
		fs:                optString(o.OptionalArgs, "dest_file_system", "flash:"),
		candidateCfg:      optString(o.OptionalArgs, "candidate_cfg", "candidate_config.txt"),
		mergeCfg:          optString(o.OptionalArgs, "merge_cfg", "merge_config.txt"),
		rollbackCfg:       optString(o.OptionalArgs, "rollback_cfg", "rollback_config.txt"),
		autoRollback:      optBool(o.OptionalArgs, "auto_rollback_on_error", true),
	}
	if !strings.HasSuffix(d.fs, ":") {
		return nil, fmt.Errorf("%w: ios: dest_file_system %q must end with ':'", ErrInvalidArgument, d.fs)
	}
	for _, n := range []string{d.candidateCfg, d.mergeCfg, d.rollbackCfg} {
		if n == "" || strings.ContainsAny(n, " \t\r\n\"{}[]$\\") {
			return nil, fmt.Errorf("%w: ios: file name %q", ErrInvalidArgument, n)
		}
	}
	return d, nil
}

// Capabilities implements Driver.
func (d *iosDriver) Capabilities() Capabilities { return Capabilities{} }

// path is NAPALM's _gen_full_path: "flash:/name".
func (d *iosDriver) path(name string) string { return d.fs + "/" + name }

var (
	iosLoadLine = regexp.MustCompile(`(?m)^Load for five secs.*$`)
	iosTimeLine = regexp.MustCompile(`(?m)^Time source is .*$`)
)

// postprocess is NAPALM's _send_command_postprocess.
func iosPostprocess(out string) string {
	out = iosLoadLine.ReplaceAllString(out, "")
	out = iosTimeLine.ReplaceAllString(out, "")
	return strings.TrimSpace(out)
}

// Cli implements Driver: outputs are returned as the device prints them,
// error messages included (NAPALM ios does not raise on invalid input).
func (d *iosDriver) Cli(ctx context.Context, commands []string) (map[string]string, error) {
	out := make(map[string]string, len(commands))
	err := d.s.run(ctx, func(o *op) error {
		for _, c := range commands {
			text, _, err := o.send(c)
			if err != nil {
				return err
			}
			out[c] = iosPostprocess(text)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkTcl rejects text that cannot travel inside a Tcl brace-quoted word.
func checkTcl(config string) error {
	depth := 0
	for _, l := range configLines(config) {
		if strings.HasSuffix(l, `\`) {
			return fmt.Errorf("%w: a configuration line ends with a backslash: %q", ErrInvalidArgument, l)
		}
		for i := 0; i < len(l); i++ {
			switch l[i] {
			case '\\':
				i++
			case '{':
				depth++
			case '}':
				depth--
				if depth < 0 {
					return fmt.Errorf("%w: unbalanced '}' in configuration line %q", ErrInvalidArgument, l)
				}
			}
		}
	}
	if depth != 0 {
		return fmt.Errorf("%w: unbalanced '{' in the configuration", ErrInvalidArgument)
	}
	return nil
}

// writeFile writes text to a flash file through tclsh.
func (d *iosDriver) writeFile(o *op, name, text string) error {
	if err := checkTcl(text); err != nil {
		return err
	}
	if err := o.budget("tclsh"); err != nil {
		return err
	}
	if err := o.d.AcquirePriv("tclsh"); err != nil {
		return o.fail("tclsh", err)
	}
	lines := append([]string{`puts [open "` + d.path(name) + `" w+] {`}, configLines(text)...)
	lines = append(lines, "}")
	orig := o.d.Channel.ReturnChar
	o.d.Channel.ReturnChar = []byte("\r")
	var out strings.Builder
	var sendErr error
	for _, l := range lines {
		r, _, err := o.sendRaw(l)
		if err != nil {
			sendErr = err
			break
		}
		out.WriteString(r + "\n")
	}
	o.d.Channel.ReturnChar = orig
	if sendErr != nil {
		return sendErr
	}
	if err := o.home("tclsh"); err != nil {
		return err
	}
	text = out.String()
	for _, bad := range []string{"error writing", "couldn't open", "invalid command name", "%Error"} {
		if strings.Contains(text, bad) {
			return o.errf(ErrCommand, "write "+d.path(name), errors.New(deviceMessage(text)))
		}
	}
	return nil
}

func (d *iosDriver) load(ctx context.Context, config string, replace bool) error {
	name := d.mergeCfg
	if replace {
		name = d.candidateCfg
	}
	return d.s.run(ctx, func(o *op) error {
		if err := d.writeFile(o, name, config); err != nil {
			return err
		}
		d.replace, d.loaded = replace, true
		return nil
	})
}

// LoadMergeCandidate implements Driver (flash:/merge_config.txt). As
// NAPALM's ios driver (napalm/ios/ios.py load_merge_candidate, which puts
// the text over the merge file), each load replaces the one before: a
// commit after several loads applies only the last (TestMergeLoadsBeforeCommit).
func (d *iosDriver) LoadMergeCandidate(ctx context.Context, config string) error {
	return d.load(ctx, config, false)
}

// LoadReplaceCandidate implements Driver (flash:/candidate_config.txt).
func (d *iosDriver) LoadReplaceCandidate(ctx context.Context, config string) error {
	return d.load(ctx, config, true)
}

var (
	reorderedRe = regexp.MustCompile(`order-dependent line.*re-ordered`)
	noLineRe    = regexp.MustCompile(`^no\s+`)
)

// normalizeCompare drops the lines NAPALM filters from a replace diff.
func iosNormalizeCompare(diff string) string {
	var keep []string
	for l := range strings.SplitSeq(diff, "\n") {
		if strings.Contains(l, "Contextual Config Diffs") || strings.Contains(l, "No changes were found") ||
			strings.Contains(l, "ntp clock-period") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// iosNormalizeMergeIncr turns incremental-diffs output into +/- lines.
func iosNormalizeMergeIncr(diff string) string {
	var out []string
	changes := false
	for l := range strings.SplitSeq(diff, "\n") {
		if reorderedRe.MatchString(l) {
			changes = true
		} else if strings.Contains(l, "No changes were found") {
			if !changes {
				return ""
			}
			continue
		}
		t := strings.TrimSpace(l)
		switch {
		case t == "end" || strings.Contains(l, "List of Commands"):
		case t == "":
		case noLineRe.MatchString(t):
			out = append(out, "-"+l)
		default:
			out = append(out, "+"+l)
		}
	}
	return strings.Join(out, "\n")
}

// iosNormalizeMerge echoes a merge file as a diff (fallback).
func iosNormalizeMerge(text string) string {
	var out []string
	for l := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, "+"+l)
		}
	}
	if len(out) == 0 {
		return "! No changes specified in merge file."
	}
	return "! incremental-diff failed; falling back to echo of merge file\n" + strings.Join(out, "\n")
}

// CompareConfig implements Driver ("" when nothing is staged).
func (d *iosDriver) CompareConfig(ctx context.Context) (string, error) {
	var diff string
	err := d.s.run(ctx, func(o *op) error {
		if !d.loaded {
			return nil
		}
		if d.replace {
			out, err := o.show("show archive config differences system:running-config " + d.path(d.candidateCfg))
			if err != nil {
				return err
			}
			if strings.Contains(out, "%Error") {
				return o.rejected("show archive config differences", out)
			}
			diff = iosNormalizeCompare(out)
			return nil
		}
		cmd := "show archive config incremental-diffs " + d.path(d.mergeCfg) + " ignorecase"
		out, _, err := o.send(cmd)
		if err != nil {
			return err
		}
		switch {
		case strings.Contains(out, "error code 5") || strings.Contains(out, "returned error 5"):
			diff = "You have encountered the obscure 'error 5' message. This generally " +
				"means you need to add an 'end' statement to the end of your merge changes."
		case strings.Contains(out, "%Error"):
			return o.rejected(cmd, out)
		case !strings.Contains(out, "% Invalid"):
			diff = iosNormalizeMergeIncr(out)
		default:
			text, err := o.show("more " + d.path(d.mergeCfg))
			if err != nil {
				return err
			}
			diff = iosNormalizeMerge(text)
		}
		return nil
	})
	return strings.TrimSpace(diff), err
}

// fileExists checks a flash file with "dir".
func (d *iosDriver) fileExists(o *op, name string) (bool, error) {
	out, failed, err := o.send("dir " + d.path(name))
	if err != nil {
		return false, err
	}
	return !failed && !strings.Contains(out, "%Error") && !strings.Contains(out, "No such file"), nil
}

// copyFile runs an interactive copy and checks its output.
func (d *iosDriver) copyFile(o *op, src, dst string) (string, error) {
	cmd := "copy " + src + " " + dst
	out, failed, err := o.interactive(cmd)
	if err != nil {
		return "", err
	}
	if failed || strings.Contains(out, "%Error") {
		return out, o.rejected(cmd, out)
	}
	return out, nil
}

// replaceFailed reports configure replace output that NAPALM treats as a
// failure.
func replaceFailed(out string) bool {
	low := strings.ToLower(out)
	return strings.Contains(out, "original configuration has been successfully restored") ||
		strings.Contains(low, "error") || strings.Contains(low, "not a valid config file") ||
		strings.Contains(low, "failed")
}

// CommitConfig implements Driver.
func (d *iosDriver) CommitConfig(ctx context.Context, message string, revertIn int) error {
	if err := checkCommitArgs(d.s, d.Capabilities(), message, revertIn); err != nil {
		return err
	}
	return d.s.run(ctx, func(o *op) error {
		if !d.loaded {
			return o.errf(ErrCommand, "commit_config", errors.New("no candidate configuration loaded"))
		}
		name := d.mergeCfg
		if d.replace {
			name = d.candidateCfg
		}
		ok, err := d.fileExists(o, name)
		if err != nil {
			return err
		}
		if !ok {
			return o.errf(ErrCommand, "commit_config", fmt.Errorf("candidate config file %s does not exist", d.path(name)))
		}
		if _, err := d.copyFile(o, "running-config", d.path(d.rollbackCfg)); err != nil {
			return err
		}
		if d.replace {
			cmd := "configure replace " + d.path(name) + " force"
			if d.autoRollback {
				cmd += " revert trigger error"
			}
			out, _, err := o.interactive(cmd)
			if err != nil {
				return err
			}
			if strings.Contains(out, "%Please turn config archive on") {
				return o.errf(ErrCommand, cmd, errors.New("replace requires the Cisco 'archive' feature to be enabled"))
			}
			if replaceFailed(out) {
				return o.errf(ErrCommand, cmd, fmt.Errorf("candidate config could not be applied: %s", deviceMessage(out)))
			}
		} else {
			cmd := "copy " + d.path(name) + " running-config"
			out, _, err := o.interactive(cmd)
			if err != nil {
				return err
			}
			if strings.Contains(out, "Invalid input detected") {
				rbErr := d.rollback(o)
				return o.errf(ErrCommand, cmd, errors.Join(
					fmt.Errorf("configuration merge failed; automatic rollback attempted: %s", deviceMessage(out)), rbErr))
			}
		}
		d.loaded = false
		return d.save(o)
	})
}

// save is netmiko's save_config for IOS.
func (d *iosDriver) save(o *op) error {
	out, failed, err := o.interactive("write memory")
	if err != nil {
		return err
	}
	if failed || strings.Contains(out, "%Error") {
		return o.rejected("write memory", out)
	}
	return nil
}

// DiscardConfig implements Driver: the candidate file gets the running
// configuration and the merge file is emptied, as NAPALM does.
func (d *iosDriver) DiscardConfig(ctx context.Context) error {
	return d.s.run(ctx, func(o *op) error {
		if _, err := d.copyFile(o, "running-config", d.path(d.candidateCfg)); err != nil {
			return err
		}
		if _, err := d.copyFile(o, "null:", d.path(d.mergeCfg)); err != nil {
			return err
		}
		d.loaded = false
		return nil
	})
}

func (d *iosDriver) rollback(o *op) error {
	ok, err := d.fileExists(o, d.rollbackCfg)
	if err != nil {
		return err
	}
	if !ok {
		return o.errf(ErrCommand, "rollback", errors.New("rollback config file does not exist"))
	}
	cmd := "configure replace " + d.path(d.rollbackCfg) + " force"
	out, _, err := o.interactive(cmd)
	if err != nil {
		return err
	}
	if replaceFailed(out) {
		return o.errf(ErrCommand, cmd, errors.New(deviceMessage(out)))
	}
	return d.save(o)
}

// Rollback implements Driver (configure replace with the rollback file).
func (d *iosDriver) Rollback(ctx context.Context) error {
	return d.s.run(ctx, func(o *op) error { return d.rollback(o) })
}

// iosConfigHeader is NAPALM ios get_config's filter of the lines IOS adds.
var iosConfigHeader = regexp.MustCompile(`(?m)^(?:Building configuration.*|Current configuration :.*|! Last configuration change at.*|! NVRAM config last updated at.*)$`)

// GetConfig implements Driver; IOS has no candidate (always "").
func (d *iosDriver) GetConfig(ctx context.Context, retrieve string) (Config, error) {
	return d.GetConfigWith(ctx, ConfigOptions{Retrieve: retrieve})
}

// iosConfig is NAPALM ios's get_config.
var iosConfig = &cliConfigSpec{
	running: "show running-config", startup: "show startup-config", full: " all",
	added: iosConfigHeader, sanitize: CiscoSanitizeFilters,
}

// GetConfigWith implements ConfigGetter like NAPALM ios.
func (d *iosDriver) GetConfigWith(ctx context.Context, co ConfigOptions) (Config, error) {
	return getCLIConfig(ctx, d.s, iosConfig, co)
}

var (
	iosModelRe  = regexp.MustCompile(`(?i)Cisco (.+?) .+bytes of`)
	iosOSRe     = regexp.MustCompile(`Cisco IOS Software \[.*?\], `)
	iosOSOldRe  = regexp.MustCompile(`IOS \(tm\).+Software`)
	iosAnyIntro = regexp.MustCompile(`Any interface listed with.*`)
)

// GetFacts implements Driver from show version, show hosts and show ip
// interface brief.
func (d *iosDriver) GetFacts(ctx context.Context) (Facts, error) {
	f := Facts{Vendor: "Cisco", Uptime: -1, SerialNumber: "Unknown", FQDN: "Unknown", OSVersion: "Unknown",
		Hostname: "Unknown", Model: "Unknown", InterfaceList: []string{}}
	err := d.s.query(ctx, func(o runner) error {
		ver, err := o.show("show version")
		if err != nil {
			return err
		}
		hosts, err := o.show("show hosts")
		if err != nil {
			return err
		}
		brief, err := o.show("show ip interface brief")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(ver, "\n") {
			if h, up, ok := strings.Cut(l, " uptime is "); ok {
				f.Hostname = strings.TrimSpace(h)
				f.Uptime = float64(parseUptimeWords(up))
			}
			if _, sn, ok := strings.Cut(l, "Processor board ID "); ok {
				f.SerialNumber = strings.TrimSpace(sn)
			}
			switch {
			case strings.Contains(l, "Cisco IOS Software, "):
				_, v, _ := strings.Cut(l, "Cisco IOS Software, ")
				f.OSVersion = strings.TrimSpace(v)
			case iosOSRe.MatchString(l):
				f.OSVersion = strings.TrimSpace(l[iosOSRe.FindStringIndex(l)[1]:])
			case iosOSOldRe.MatchString(l):
				_, v, _ := strings.Cut(l, "IOS (tm) ")
				f.OSVersion = strings.TrimSpace(v)
			}
		}
		domain := ""
		for l := range strings.SplitSeq(hosts, "\n") {
			if _, dom, ok := strings.Cut(l, "Default domain is "); ok {
				domain = strings.TrimSpace(dom)
				break
			}
		}
		if domain != "" && domain != "not set" && f.Hostname != "Unknown" {
			f.FQDN = f.Hostname + "." + domain
		}
		if m := iosModelRe.FindStringSubmatch(ver); m != nil {
			f.Model = m[1]
		}
		parts := iosAnyIntro.Split(brief, -1)
		for l := range strings.SplitSeq(strings.TrimSpace(parts[len(parts)-1]), "\n") {
			fl := strings.Fields(l)
			if len(fl) == 0 || strings.Contains(l, "Interface ") {
				continue
			}
			f.InterfaceList = append(f.InterfaceList, fl[0])
		}
		return nil
	})
	return f, err
}

var (
	iosIfRe1  = regexp.MustCompile(`^(\S+?)\s+is\s+(.+?),\s+line\s+protocol\s+is\s+(\S+)`)
	iosIfRe2  = regexp.MustCompile(`^(\S+)\s+is\s+(up|down)`)
	iosIfRe3  = regexp.MustCompile(`^(Control Plane Interface)\s+is\s+(.+?),\s+line\s+protocol\s+is\s+(\S+)`)
	iosMACRe  = regexp.MustCompile(`^\s+Hardware.+address\s+is\s+([0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4})`)
	iosDescRe = regexp.MustCompile(`^\s+Description:\s+(.+?)$`)
	iosMTURe  = regexp.MustCompile(`^\s+MTU\s+(\d+).+BW\s+(\d+)\s+([KMG]?b)`)
)

// GetInterfaces implements Driver from show interfaces (last_flapped is
// -1, as in NAPALM ios).
func (d *iosDriver) GetInterfaces(ctx context.Context) (map[string]Interface, error) {
	res := map[string]Interface{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show interfaces")
		if err != nil {
			return err
		}
		var name, desc, mac string
		var enabled, up, have bool
		for l := range strings.SplitSeq(out, "\n") {
			m := iosIfRe1.FindStringSubmatch(l)
			if m == nil && iosIfRe2.FindStringSubmatch(l) == nil {
				m = iosIfRe3.FindStringSubmatch(l)
			}
			if m != nil {
				name, enabled, up, have = m[1], !strings.Contains(strings.ToLower(m[2]), "admin"), strings.Contains(m[3], "up"), true
				desc, mac = "", ""
			} else if m := iosIfRe2.FindStringSubmatch(l); m != nil {
				name, enabled, up, have = m[1], true, m[2] == "up", true
				desc, mac = "", ""
			}
			if m := iosMACRe.FindStringSubmatch(l); m != nil {
				mac = normalizeMAC(m[1])
			}
			if m := iosDescRe.FindStringSubmatch(l); m != nil {
				desc = m[1]
			}
			if m := iosMTURe.FindStringSubmatch(l); m != nil && have {
				speed := atof(m[2], 0)
				switch {
				case strings.HasPrefix(m[3], "Kb"):
					speed /= 1000
				case strings.HasPrefix(m[3], "Gb"):
					speed *= 1000
				}
				res[name] = Interface{IsEnabled: enabled, IsUp: up, Description: desc, MACAddress: mac,
					LastFlapped: -1, MTU: atoi(m[1], 0), Speed: speed}
				have = false
			}
		}
		return nil
	})
	return res, err
}

var (
	iosInetRe   = regexp.MustCompile(`^\s+(?:Internet address is|Secondary address) (\d+\.\d+\.\d+\.\d+)/(\d+)`)
	iosLinkLcRe = regexp.MustCompile(`^\s+IPv6 is enabled, link-local address is ([a-fA-F0-9:]+)`)
	iosGlobalRe = regexp.MustCompile(`^\s+([a-fA-F0-9:]+), subnet is [a-fA-F0-9:]+/(\d+)`)
)

// GetInterfacesIP implements Driver from show ip interface and show ipv6
// interface; interfaces without addresses are left out, as in NAPALM ios.
func (d *iosDriver) GetInterfacesIP(ctx context.Context) (map[string]InterfaceIP, error) {
	res := map[string]InterfaceIP{}
	err := d.s.query(ctx, func(o runner) error {
		v4, err := o.show("show ip interface")
		if err != nil {
			return err
		}
		v6, failed, err := o.send("show ipv6 interface")
		if err != nil {
			return err
		}
		name := ""
		for l := range strings.SplitSeq(v4, "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if l[0] != ' ' {
				name = strings.Fields(l)[0]
				continue
			}
			if m := iosInetRe.FindStringSubmatch(l); m != nil && name != "" {
				e := res[name]
				if e.IPv4 == nil {
					e.IPv4 = map[string]IPPrefix{}
				}
				e.IPv4[m[1]] = IPPrefix{PrefixLength: atoi(m[2], 0)}
				res[name] = e
			}
		}
		if failed || strings.Contains(v6, "% Invalid input detected at") {
			return nil
		}
		name = ""
		for l := range strings.SplitSeq(v6, "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if l[0] != ' ' {
				name = strings.Fields(l)[0]
				e := res[name]
				e.IPv6 = map[string]IPPrefix{}
				res[name] = e
				continue
			}
			if name == "" {
				continue
			}
			if m := iosLinkLcRe.FindStringSubmatch(l); m != nil {
				res[name].IPv6[strings.ToLower(m[1])] = IPPrefix{PrefixLength: 10}
			}
			if m := iosGlobalRe.FindStringSubmatch(l); m != nil {
				res[name].IPv6[strings.ToLower(m[1])] = IPPrefix{PrefixLength: atoi(m[2], 0)}
			}
		}
		return nil
	})
	return res, err
}

// iosARP reads show arp: the "Internet" rows (ages in minutes, -1 for the
// device's own addresses, as IOS prints them).
var iosARP = &arpSpec{
	all: "show arp | exclude Incomplete", vrf: "show arp vrf %s | exclude Incomplete",
	rows: lineRows(func(l string) []string {
		if f := strings.Fields(l); len(f) >= 5 && f[0] == "Internet" {
			return f
		}
		return nil
	}),
	ip: 1, age: 2, mac: 3, iface: 5,
	ageOf: func(s string) float64 { return atof(s, -1) },
	macOf: macOr,
}

// GetArpTable implements Driver from show arp.
func (d *iosDriver) GetArpTable(ctx context.Context, vrf string) ([]ARPEntry, error) {
	return getARPTable(ctx, d.s, iosARP, vrf)
}

// GetLLDPNeighbors implements Driver from the LLDP details, as NAPALM ios.
func (d *iosDriver) GetLLDPNeighbors(ctx context.Context) (map[string][]LLDPNeighbor, error) {
	det, err := d.GetLLDPNeighborsDetail(ctx, "")
	if err != nil {
		return nil, err
	}
	return lldpFromDetail(det, "", func(port string) string {
		if strings.Count(port, ":") == 5 || strings.Count(port, "-") == 5 || strings.Count(port, ".") == 2 {
			return macOr(port)
		}
		return port
	}), nil
}

var (
	iosLLDPLocal   = regexp.MustCompile(`^Local Int(?:er)?f(?:ace)?\s*?[:-]\s+(.*)`)
	iosLLDPChassis = regexp.MustCompile(`^Chassis id\s*?[:-]\s+(.*)`)
	iosLLDPPort    = regexp.MustCompile(`^Port id\s*?[:-]\s+(.*)`)
	iosLLDPPortD   = regexp.MustCompile(`^Port Description\s*?[:-]\s+(.+)`)
	iosLLDPName    = regexp.MustCompile(`^System Name\s*?[:-]\s+(.*)`)
	iosLLDPDescrNL = regexp.MustCompile(`^System Description:`)
	iosLLDPDescr   = regexp.MustCompile(`^System Description\s*-\s*(.+)`)
	iosLLDPCapab   = regexp.MustCompile(`^System Capabilities\s*?[:-]\s+(.*)`)
	iosLLDPEnabled = regexp.MustCompile(`^Enabled Capabilities\s*?[:-]\s+(.*)`)
	iosLLDPBriefIf = regexp.MustCompile(`^.{20}([^\s]{1,15})`)
)

// iosLLDP reads show lldp neighbors detail as NAPALM's textfsm template
// does: a neighbour is recorded at its "Enabled Capabilities" line (and at
// the end, when something was read); "System Description:" takes the next
// line whole.
var iosLLDP = &lldpSpec{
	all: "show lldp neighbors detail", one: "show lldp neighbors %s detail",
	trimLine: "\r",
	rules: []lldpRule{
		{re: iosLLDPLocal, key: lldpLocal},
		{re: iosLLDPChassis, key: lldpChassis},
		{re: iosLLDPPort, key: lldpPort},
		{re: iosLLDPPortD, key: lldpPortDescr},
		{re: iosLLDPName, key: lldpName},
		{re: iosLLDPDescrNL, key: lldpDescr, act: lldpNext},
		{re: iosLLDPDescr, key: lldpDescr},
		{re: iosLLDPCapab, key: lldpCaps},
		{re: iosLLDPEnabled, key: lldpEnabledCaps},
	},
	records: lldpEnabledCaps,
	always:  true,
	value:   trimRightSpace, nextLine: trimRightSpace,
	keep: func(r *lldpRow) bool { return !r.empty() },
}

// parseIOSLLDPBrief lists the local interfaces of show lldp neighbors, in
// order (the column after the 20 characters of the device id).
func parseIOSLLDPBrief(out string) []string {
	var res []string
	in := false
	for l := range strings.SplitSeq(out, "\n") {
		l = strings.TrimRight(l, "\r")
		if !in {
			in = strings.HasPrefix(l, "Device ID")
			continue
		}
		if strings.HasPrefix(l, "Total entries displayed") || l == "" {
			break
		}
		if m := iosLLDPBriefIf.FindStringSubmatch(l); m != nil {
			res = append(res, m[1])
		}
	}
	return res
}

// GetLLDPNeighborsDetail implements Driver from show lldp neighbors detail;
// when the details lack "Local Intf:" (older IOS), the local interfaces come
// from show lldp neighbors, in the same order, as in NAPALM ios.
func (d *iosDriver) GetLLDPNeighborsDetail(ctx context.Context, iface string) (map[string][]LLDPNeighborDetail, error) {
	if err := safeArg(d.s, "interface", iface); err != nil {
		return nil, err
	}
	res := map[string][]LLDPNeighborDetail{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show(iosLLDP.command(iface))
		if err != nil {
			return err
		}
		rows := parseLLDPDetail(iosLLDP, out)
		if len(rows) == 0 {
			return nil
		}
		var locals []string
		if rows[0][lldpLocal] == "" {
			cmd := "show lldp neighbors"
			if iface != "" {
				cmd = "show lldp neighbors " + iface
			}
			brief, err := o.show(cmd)
			if err != nil {
				return err
			}
			locals = parseIOSLLDPBrief(brief)
			if len(locals) != len(rows) {
				return o.errf(ErrCommand, cmd, fmt.Errorf("LLDP neighbor count has changed between commands (%d interfaces, %d entries)", len(locals), len(rows)))
			}
		}
		for i, r := range rows {
			local := r[lldpLocal]
			if local == "" && i < len(locals) {
				local = locals[i]
			}
			r[lldpChassis] = macOr(r[lldpChassis])
			for k := lldpChassis; k < lldpKeys; k++ {
				r[k] = blankNotAdvertised(r[k])
			}
			local = canonicalInterface(local, false)
			res[local] = append(res[local], r.detail(lldpCapabCodes, false))
		}
		return nil
	})
	return res, err
}

var ciscoMACRe = regexp.MustCompile(`^[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}$`)

// The line formats of show mac address-table NAPALM ios knows (ISR
// "Destination Address" tables, Catalyst 2960/3560/4500/4948/6500).
var (
	iosMACDefault = regexp.MustCompile(`^[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}`)
	iosMAC6500    = regexp.MustCompile(`^(?:\*\s+)?\d{1,4}\s+[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\s+`)
	iosMACFill1   = regexp.MustCompile(`^\s{51}\S+`)
	iosMACFill2   = regexp.MustCompile(`^\s{32,34}\S+`)
	iosMACRouter  = regexp.MustCompile(`^R\s+\d{1,4}\s+.*Router`)
	iosMACRouterN = regexp.MustCompile(`^R\s+N/A\s+[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}.*Router`)
	iosMACVlanMAC = regexp.MustCompile(`^\d{1,4}\s+[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\s+`)
	iosMACPhyInt  = regexp.MustCompile(`^(?:\w{1,2}\d{1,3}/\d{1,2}|\w{1,2}\d{1,3})\s+[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\s+`)
	iosMAC2960All = regexp.MustCompile(`^All\s+[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}\.[a-fA-F0-9]{4}`)
	iosMACDashes  = regexp.MustCompile(`(?m)^----.*`)
	iosMACStar    = regexp.MustCompile(`(?m)^\*`)
	iosMACSkip    = []*regexp.Regexp{
		regexp.MustCompile(`^Vlan\s+Mac Address\s+`),
		regexp.MustCompile(`Total Mac Addresses`),
		regexp.MustCompile(`Multicast Entries`),
		regexp.MustCompile(`vlan.*mac.*address.*type.*`),
		regexp.MustCompile(`Displaying entries from active supervisor:\s+\w+\s+\[\d\]:`),
		regexp.MustCompile(`EHWIC:.*`),
		regexp.MustCompile(`Destination Address.*Address.*Type.*VLAN.*Destination.*Port`),
	}
)

// iosMACEntry is NAPALM ios's process_mac_fields.
func iosMACEntry(vlan, mac, typ, iface string) MACEntry {
	e := MACEntry{MAC: macOr(mac), Interface: iface, Active: true, Moves: -1, LastMove: -1}
	switch strings.ToLower(typ) {
	case "self", "static", "system":
		e.Static = true
		if strings.EqualFold(vlan, "all") {
			vlan = "0"
		}
		li := strings.ToLower(iface)
		if li == "cpu" || strings.Contains(li, "router") || strings.Contains(li, "switch") {
			e.Interface = ""
		}
	}
	e.VLAN = atoi(vlan, 0)
	return e
}

// parseIOSMACTable reads show mac address-table in every format NAPALM ios
// reads; multicast rows list their ports comma-separated (one entry each),
// continued on lines of their own (filled down from the row above).
func parseIOSMACTable(out string) []MACEntry {
	res := []MACEntry{}
	parts := iosMACDashes.Split(out, -1)
	if len(parts) < 2 {
		return res
	}
	out = strings.TrimSpace(strings.Join(parts[1:], "\n"))
	out = iosMACStar.ReplaceAllString(out, "")
	var fv, fm, ft string
	each := func(vlan, mac, typ, ifaces string) {
		if strings.Contains(ifaces, ",") {
			fv, fm, ft = vlan, mac, typ
		}
		for i := range strings.SplitSeq(ifaces, ",") {
			res = append(res, iosMACEntry(vlan, mac, typ, i))
		}
	}
	for line := range strings.SplitSeq(out, "\n") {
		line = strings.TrimRight(line, "\r")
		if iosMACFill1.MatchString(line) || iosMACFill2.MatchString(line) {
			for i := range strings.SplitSeq(strings.TrimSpace(line), ",") {
				res = append(res, iosMACEntry(fv, fm, ft, i))
			}
			continue
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "---") {
			line = "0" + line[3:]
		}
		f := strings.Fields(line)
		switch {
		case iosMACDefault.MatchString(line):
			if len(f) == 4 {
				res = append(res, iosMACEntry(f[2], f[0], f[1], f[3]))
			}
		case iosMAC6500.MatchString(line) && len(f) >= 6:
			switch len(f) {
			case 7:
				each(f[1], f[2], f[3], f[6])
			case 6:
				each(f[0], f[1], f[2], f[5])
			}
		case iosMACVlanMAC.MatchString(line) && len(f) == 5:
			res = append(res, iosMACEntry(f[0], f[1], f[2], f[4]))
		case iosMACPhyInt.MatchString(line) && len(f) == 5:
			res = append(res, iosMACEntry("-1", f[1], f[2], canonicalInterface(f[0], false)))
		case slices.ContainsFunc(iosMACSkip[:1], func(r *regexp.Regexp) bool { return r.MatchString(line) }):
		case (iosMAC2960All.MatchString(line) || iosMACVlanMAC.MatchString(line)) && len(f) == 4:
			each(f[0], f[1], f[2], f[3])
		case iosMACVlanMAC.MatchString(line) && len(f) == 3:
			res = append(res, iosMACEntry(f[0], f[1], f[2], ""))
		case iosMACPhyInt.MatchString(line) && len(f) == 4:
			res = append(res, iosMACEntry("-1", f[1], f[2], f[3]))
		case iosMACRouter.MatchString(line) && len(f) == 7:
			res = append(res, iosMACEntry(f[1], f[2], f[3], f[6]))
		case iosMACRouterN.MatchString(line) && len(f) == 7:
			res = append(res, iosMACEntry(strings.ReplaceAll(f[1], "N/A", "0"), f[2], f[3], f[6]))
		}
	}
	return res
}

// GetMACAddressTable implements Driver from show mac-address-table (show
// mac address-table where the first is not known), as NAPALM ios: moves
// and last_move are -1.
func (d *iosDriver) GetMACAddressTable(ctx context.Context) ([]MACEntry, error) {
	var res []MACEntry
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send("show mac-address-table")
		if err != nil {
			return err
		}
		if strings.Contains(out, "% Invalid") || out == "" {
			if out, err = o.show("show mac address-table"); err != nil {
				return err
			}
		}
		res = parseIOSMACTable(iosPostprocess(out))
		return nil
	})
	return res, err
}

var (
	iosCPURe  = regexp.MustCompile(`^.*one minute: (\d+)%; five.*$`)
	iosTempRe = regexp.MustCompile(`^(.*) Temperature Value`)
)

// GetEnvironment implements Driver like NAPALM ios: cpu from show
// processes cpu, memory from show memory statistics (-1 when the device
// has neither), temperature from show env temperature status, and
// NAPALM's "invalid" placeholders for what IOS does not report.
func (d *iosDriver) GetEnvironment(ctx context.Context) (Environment, error) {
	env := Environment{
		Fans:        map[string]Fan{"invalid": {Status: true}},
		Temperature: map[string]Temperature{},
		Power:       map[string]Power{"invalid": {Status: true, Output: -1, Capacity: -1}},
		CPU:         map[CPUKey]CPU{CPUIndex(0): {Usage: 0}},
		Memory:      Memory{AvailableRAM: -1, UsedRAM: -1},
	}
	err := d.s.query(ctx, func(o runner) error {
		out, failed, err := o.send("show proc cpu")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(out, "\n") {
			if !failed && strings.Contains(l, "CPU utilization") {
				if m := iosCPURe.FindStringSubmatch(l); m != nil {
					env.CPU[CPUIndex(0)] = CPU{Usage: atof(m[1], 0)}
				}
				break
			}
		}
		out, _, err = o.send("show memory statistics")
		if err != nil {
			return err
		}
		env.Memory = parseIOSMemory(out)
		if strings.Contains(out, "Invalid input detected at") {
			// IOS-XR style devices: "System memory  : 3931592K total, ..."
			out, _, err = o.send("show memory")
			if err != nil {
				return err
			}
			for l := range strings.SplitSeq(out, "\n") {
				if f := strings.Fields(l); strings.Contains(l, "System memory") && len(f) >= 6 {
					t, e1 := strconv.ParseInt(strings.ReplaceAll(f[3], "K", ""), 10, 64)
					u, e2 := strconv.ParseInt(strings.ReplaceAll(f[5], "K", ""), 10, 64)
					if e1 == nil && e2 == nil {
						env.Memory = Memory{AvailableRAM: t, UsedRAM: u}
					}
				}
			}
		}
		out, failed, err = o.send("show env temperature status")
		if err != nil {
			return err
		}
		if failed || strings.Contains(out, "% Invalid") || strings.Contains(out, "Not Supported") {
			env.Temperature["invalid"] = Temperature{Temperature: -1}
			return nil
		}
		name := ""
		for l := range strings.SplitSeq(out, "\n") {
			if m := iosTempRe.FindStringSubmatch(l); m != nil {
				name = strings.ToLower(m[1])
				_, v, _ := strings.Cut(l, ":")
				env.Temperature[name] = Temperature{Temperature: atof(firstField(v), -1)}
				continue
			}
			if name == "" {
				continue
			}
			t := env.Temperature[name]
			_, v, _ := strings.Cut(l, ":")
			switch {
			case strings.Contains(l, "Yellow Threshold"):
				t.IsAlert = t.Temperature > atof(firstField(v), 1e9)
			case strings.Contains(l, "Red Threshold"):
				t.IsCritical = t.Temperature > atof(firstField(v), 1e9)
			}
			env.Temperature[name] = t
		}
		return nil
	})
	return env, err
}

// parseIOSMemory reads show memory statistics as NAPALM ios: the last
// "Processor" line and the last I/O line, summed (-1 when either is
// missing).
func parseIOSMemory(out string) Memory {
	var pt, pu, it, iu int64
	var havePro, haveIO bool
	for l := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		t, e1 := strconv.ParseInt(f[2], 10, 64)
		u, e2 := strconv.ParseInt(f[3], 10, 64)
		if e1 != nil || e2 != nil {
			continue
		}
		if strings.Contains(l, "Processor") {
			pt, pu, havePro = t, u, true
		} else if strings.Contains(l, "I/O") || strings.Contains(l, "io") {
			it, iu, haveIO = t, u, true
		}
	}
	if !havePro || !haveIO {
		return Memory{AvailableRAM: -1, UsedRAM: -1}
	}
	return Memory{AvailableRAM: pt + it, UsedRAM: pu + iu}
}

func firstField(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// GetNTPServers implements Driver from the running configuration.
func (d *iosDriver) GetNTPServers(ctx context.Context) (map[string]NTPServer, error) {
	res := map[string]NTPServer{}
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show run | include ntp server")
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(out, "\n") {
			f := strings.Fields(l)
			if len(f) < 3 || f[0] != "ntp" || f[1] != "server" {
				continue
			}
			if f[2] == "vrf" && len(f) >= 5 {
				res[f[4]] = NTPServer{}
			} else {
				res[f[2]] = NTPServer{}
			}
		}
		return nil
	})
	return res, err
}

// GetNTPPeers implements Driver as NAPALM ios does: the remotes of the NTP
// associations.
func (d *iosDriver) GetNTPPeers(ctx context.Context) (map[string]NTPPeer, error) {
	stats, err := d.GetNTPStats(ctx)
	if err != nil {
		return nil, err
	}
	res := map[string]NTPPeer{}
	for _, s := range stats {
		if s.Remote != "" {
			res[s.Remote] = NTPPeer{}
		}
	}
	return res, nil
}

var iosNTPAddrRe = regexp.MustCompile(`^(\W*)([0-9.*]*)`)

// GetNTPStats implements Driver from show ntp associations.
func (d *iosDriver) GetNTPStats(ctx context.Context) ([]NTPStats, error) {
	res := []NTPStats{}
	err := d.s.query(ctx, func(o runner) error {
		out, failed, err := o.send("show ntp associations")
		if err != nil {
			return err
		}
		if failed || strings.Contains(out, "%NTP is not enabled") {
			return nil
		}
		for l := range strings.SplitSeq(out, "\n") {
			if l == "" || strings.Contains(l, "address") || strings.Contains(l, "sys.peer") {
				continue
			}
			f := strings.Fields(l)
			if len(f) != 9 {
				continue
			}
			m := iosNTPAddrRe.FindStringSubmatch(f[0])
			st, e1 := strconv.Atoi(f[2])
			poll, e2 := strconv.Atoi(f[4])
			reach, e3 := strconv.Atoi(f[5])
			if m == nil || e1 != nil || e2 != nil || e3 != nil {
				continue
			}
			res = append(res, NTPStats{Remote: m[2], Synchronized: strings.Contains(m[1], "*"), ReferenceID: f[1],
				Stratum: st, Type: "-", When: f[3], HostPoll: poll, Reachability: reach,
				Delay: atof(f[6], 0), Offset: atof(f[7], 0), Jitter: atof(f[8], 0)})
		}
		return nil
	})
	return res, err
}

const (
	iosIPv4Re = `\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}`
	iosIPv6Re = `(?:::|[0-9a-fA-F:]{0,39}::[0-9a-fA-F:]{0,39}|[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4})`
	iosASNRe  = `[\d\.]+`
)

// iosBGPAFIs are the address families NAPALM ios reports, with the
// neighbour command of each.
var iosBGPAFIs = []struct{ afi, cmd string }{
	{"ipv4 unicast", "show bgp ipv4 unicast neighbors"},
	{"ipv4 multicast", "show bgp ipv4 multicast neighbors"},
	{"ipv6 unicast", "show bgp ipv6 unicast neighbors"},
	{"ipv6 multicast", "show bgp ipv6 multicast neighbors"},
	{"vpnv4 unicast", "show bgp vpnv4 unicast all neighbors"},
	{"vpnv6 unicast", "show bgp vpnv6 unicast all neighbors"},
	{"ipv4 mdt", "show bgp ipv4 mdt all neighbors"},
}

// lineRule is one line pattern of a record-by-record reader: its named
// groups update the current record, and record appends a copy.
type lineRule struct {
	re     *regexp.Regexp
	record bool
}

// readRecords runs rules over text the way NAPALM's ios BGP parsers do:
// the first rule matching a line (anchored at its start) updates the
// current record with its named groups (unmatched groups set to ""); a
// recording rule appends a copy and then clears noFill.
func readRecords(text string, rules []lineRule, noFill []string) []map[string]string {
	var res []map[string]string
	cur := map[string]string{}
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimRight(l, "\r")
		for _, r := range rules {
			m := r.re.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			for i, n := range r.re.SubexpNames() {
				if n != "" {
					cur[n] = m[i]
				}
			}
			if r.record {
				res = append(res, maps.Clone(cur))
				for _, f := range noFill {
					delete(cur, f)
				}
			}
			break
		}
	}
	return res
}

var (
	iosBGPSummaryRules = []lineRule{
		{re: regexp.MustCompile(`^For address family: (?P<afi>[\S ]+)$`)},
		{re: regexp.MustCompile(`^.* router identifier (?P<router_id>` + iosIPv4Re + `), local AS number (?P<local_as>` + iosASNRe + `)`)},
		{re: regexp.MustCompile(`^\*?(?P<remote_addr>(` + iosIPv4Re + `)|(` + iosIPv6Re + `))\s+\d+\s+(?P<remote_as>` + iosASNRe + `)(\s+\S+){5}\s+(?P<uptime>(never)|\d+\S+)\s+(?P<accepted_prefixes>\d+)`), record: true},
		{re: regexp.MustCompile(`^\*?(?P<remote_addr>(` + iosIPv4Re + `)|(` + iosIPv6Re + `))\s+\d+\s+(?P<remote_as>` + iosASNRe + `)(\s+\S+){5}\s+(?P<uptime>(never)|\d+\S+)\s+(?P<state>\D.*)`), record: true},
		{re: regexp.MustCompile(`^\*?(?P<remote_addr>(` + iosIPv4Re + `)|(` + iosIPv6Re + `))`)},
		{re: regexp.MustCompile(`^\s+\d+\s+(?P<remote_as>` + iosASNRe + `)(\s+\S+){5}\s+(?P<uptime>(never)|\d+\S+)\s+(?P<accepted_prefixes>\d+)`), record: true},
		{re: regexp.MustCompile(`^\s+\d+\s+(?P<remote_as>` + iosASNRe + `)(\s+\S+){5}\s+(?P<uptime>(never)|\d+\S+)\s+(?P<state>\D.*)`), record: true},
	}
	iosBGPNeighborRules = []lineRule{
		{re: regexp.MustCompile(`^BGP neighbor is (?P<remote_addr>(` + iosIPv4Re + `)|(` + iosIPv6Re + `)),(\s+vrf (?P<vrf>\S+),)?\s+remote AS (?P<remote_as>` + iosASNRe + `).*`)},
		{re: regexp.MustCompile(`^\s+Description: (?P<description>.+)`)},
		{re: regexp.MustCompile(`^\s+BGP version \d+, remote router ID (?P<remote_id>` + iosIPv4Re + `)`)},
		{re: regexp.MustCompile(`^\s+BGP state = (?P<state>\w+)`)},
		{re: regexp.MustCompile(`^\s+For address family: (?P<afi>[\S ]+)$`)},
		{re: regexp.MustCompile(`^\s+Prefixes Current:\s+(?P<sent_prefixes>\d+)\s+(?P<accepted_prefixes>\d+).*`)},
		{re: regexp.MustCompile(`^\s+Saved (soft-reconfig):.+(?P<received_prefixes>\d+).*`), record: true},
		{re: regexp.MustCompile(`^\s+Local Policy Denied Prefixes:.+`), record: true},
	}
)

// napalmIP is napalm.base.helpers.ip: an address in its canonical text
// (IPv6 compressed, lower case); text that is no address is kept.
func napalmIP(s string) string {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return s
	}
	return a.String()
}

// GetBGPNeighbors implements Driver like NAPALM ios: the peers and their
// counters of show bgp all summary, joined by address family with the
// per-family neighbour commands (description, remote router id, state,
// sent and accepted prefixes), by VRF.
func (d *iosDriver) GetBGPNeighbors(ctx context.Context) (map[string]BGPVRF, error) {
	res := map[string]BGPVRF{}
	err := d.s.query(ctx, func(o runner) error {
		sum, _, err := o.send("show bgp all summary")
		if err != nil {
			return err
		}
		sum = strings.TrimSpace(iosPostprocess(sum))
		if strings.Contains(sum, "Invalid input") || strings.Contains(sum, "BGP not active") {
			return nil
		}
		var nb strings.Builder
		for _, a := range iosBGPAFIs {
			out, _, err := o.send(a.cmd)
			if err != nil {
				return err
			}
			nb.WriteString(strings.TrimSpace(iosPostprocess(out)))
			nb.WriteString("\n")
		}
		parseIOSBGPNeighbors(sum, nb.String(), res)
		return nil
	})
	return res, err
}

// parseIOSBGPNeighbors fills res from the summary and neighbour texts.
func parseIOSBGPNeighbors(sum, neigh string, res map[string]BGPVRF) {
	summary := readRecords(sum, iosBGPSummaryRules, []string{"accepted_prefixes", "state", "uptime", "remote_as", "remote_addr"})
	neighbors := readRecords(neigh, iosBGPNeighborRules, []string{"received_prefixes", "accepted_prefixes", "sent_prefixes"})
	rid := ""
	for _, e := range summary {
		if rid == "" {
			rid = e["router_id"]
		}
	}
	for _, n := range neighbors {
		vrf := cmp.Or(n["vrf"], "global")
		if _, ok := res[vrf]; !ok {
			res[vrf] = BGPVRF{RouterID: napalmIP(rid), Peers: map[string]BGPPeer{}}
		}
	}
	supported := func(afi string) bool {
		return slices.ContainsFunc(iosBGPAFIs, func(a struct{ afi, cmd string }) bool { return a.afi == afi })
	}
	for _, e := range summary {
		addr := napalmIP(e["remote_addr"])
		afi := strings.ToLower(e["afi"])
		if !supported(afi) {
			continue
		}
		var n map[string]string
		for _, c := range neighbors {
			if strings.ToLower(c["afi"]) != afi || napalmIP(c["remote_addr"]) != addr {
				continue
			}
			vrf := cmp.Or(c["vrf"], "global")
			if _, dup := res[vrf].Peers[addr]; vrf == "global" || !dup {
				n = c
				break
			}
		}
		if n == nil {
			continue
		}
		enabled := !strings.Contains(e["state"], "(Admin)")
		uptime := bgpUptime(e["uptime"])
		up := strings.Contains(n["state"], "Established")
		accepted := atoi(e["accepted_prefixes"], -1)
		received, sent := -1, -1
		if up {
			if v, ok := n["accepted_prefixes"]; ok {
				accepted = atoi(v, accepted)
			}
			received = accepted
			if v, ok := n["received_prefixes"]; ok {
				received = atoi(v, accepted)
			}
			if v, ok := n["sent_prefixes"]; ok {
				sent = atoi(v, -1)
			}
		} else {
			uptime = -1
		}
		vrf := cmp.Or(n["vrf"], "global")
		af := BGPAFStats{ReceivedPrefixes: received, AcceptedPrefixes: accepted, SentPrefixes: sent}
		v := res[vrf]
		p, ok := v.Peers[addr]
		if !ok {
			local, _ := asNumber(e["local_as"])
			remote, _ := asNumber(e["remote_as"])
			p = BGPPeer{LocalAS: local, RemoteAS: remote, RemoteID: napalmIP(n["remote_id"]), IsUp: up,
				IsEnabled: enabled, Description: n["description"], Uptime: uptime, AddressFamily: map[string]BGPAFStats{}}
		} else {
			p.IsUp = p.IsUp || up
			p.Uptime = max(p.Uptime, uptime)
		}
		p.AddressFamily[afi] = af
		v.Peers[addr] = p
		res[vrf] = v
	}
}

var (
	iosPingRateRe = regexp.MustCompile(`\((\d*)/(\d*)\)`)
	iosPingRTTRe  = regexp.MustCompile(`(\d+)/(\d+)/(\d+)`)
)

// Ping implements Driver like NAPALM ios.
func (d *iosDriver) Ping(ctx context.Context, p PingOptions) (PingResult, error) {
	pingDefaults(&p)
	if err := checkProbeArgs(d.s, "ping", p.Destination, p.Source, p.VRF); err != nil {
		return PingResult{}, err
	}
	cmd := vrfCommand("ping", p.VRF, p.Destination)
	cmd += fmt.Sprintf(" timeout %d size %d repeat %d", p.Timeout, p.Size, p.Count)
	if p.Source != "" {
		cmd += " source " + p.Source
	}
	var res PingResult
	err := d.s.query(ctx, func(o runner) error {
		out, _, err := o.send(cmd)
		if err != nil {
			return err
		}
		res = parseIOSPing(out, p.Destination)
		return nil
	})
	return res, err
}

// parseIOSPing reads IOS ping output like NAPALM ios: any "%" is an error,
// "Success rate is N percent (got/sent), round-trip min/avg/max = a/b/c ms"
// gives the statistics (IOS prints no per-probe times: they are 0).
func parseIOSPing(out, dest string) PingResult {
	var res PingResult
	switch {
	case strings.Contains(out, "%"):
		res.Error = out
	case strings.Contains(out, "Sending"):
		s := &PingSuccess{Results: []PingProbeRT{}}
		for l := range strings.SplitSeq(out, "\n") {
			if !strings.Contains(l, "Success rate is") {
				continue
			}
			m := iosPingRateRe.FindStringSubmatch(l)
			if m == nil {
				break
			}
			got, sent := atoi(m[1], 0), atoi(m[2], 0)
			s.ProbesSent, s.PacketLoss = sent, sent-got
			if strings.Contains(l, "Success rate is 0 ") {
				break
			}
			if i := strings.Index(l, ")"); i >= 0 {
				if r := iosPingRTTRe.FindStringSubmatch(l[i:]); r != nil {
					s.RTTMin, s.RTTAvg, s.RTTMax = atof(r[1], 0), atof(r[2], 0), atof(r[3], 0)
				}
			}
			for range got {
				s.Results = append(s.Results, PingProbeRT{IPAddress: dest, RTT: 0})
			}
		}
		res.Success = s
	default:
		res.Error = "unexpected ping output: " + deviceMessage(out)
	}
	return res
}

// Traceroute implements Driver like NAPALM ios.
func (d *iosDriver) Traceroute(ctx context.Context, t TracerouteOptions) (TracerouteResult, error) {
	traceDefaults(&t)
	if err := checkProbeArgs(d.s, "traceroute", t.Destination, t.Source, t.VRF); err != nil {
		return TracerouteResult{}, err
	}
	cmd := vrfCommand("traceroute", t.VRF, t.Destination)
	if t.Source != "" {
		cmd += " source " + t.Source
	}
	if t.TTL > 0 && t.TTL <= 255 {
		cmd += fmt.Sprintf(" ttl 0 %d", t.TTL)
	}
	if t.Timeout >= 1 && t.Timeout <= 3600 {
		cmd += fmt.Sprintf(" timeout %d", t.Timeout)
	}
	var res TracerouteResult
	err := d.s.query(ctx, func(o runner) error {
		out, failed, err := o.send(cmd)
		if err != nil {
			return err
		}
		switch {
		case strings.Contains(out, "Unrecognized host or address"):
			res.Error = "unknown host " + t.Destination
		case failed:
			res.Error = deviceMessage(out)
		default:
			res.Success = parseIOSTraceroute(out)
		}
		return nil
	})
	return res, err
}

var (
	iosTraceHopRe = regexp.MustCompile(`\n\s+[0-9]{1,3}\s`)
	iosTraceASRe  = regexp.MustCompile(` \[AS [0-9.]+\]`)
)

// parseIOSTraceroute reads IOS traceroute output as NAPALM ios: a hop runs
// from its number to the next hop's (continuation lines name the routers
// of the later probes), each hop has probes 1-3 (zero-valued for "*"),
// and a probe takes the last host and address seen in its hop.
func parseIOSTraceroute(out string) map[int]TracerouteHop {
	res := map[int]TracerouteHop{}
	idx := iosTraceHopRe.FindAllStringIndex(out, -1)
	for i, se := range idx {
		end := len(out)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		seg := iosTraceASRe.ReplaceAllString(strings.ReplaceAll(out[se[0]:end], " msec", "msec"), "")
		toks := strings.Fields(seg)
		if len(toks) == 0 {
			continue
		}
		hop, err := strconv.Atoi(toks[0])
		if err != nil {
			continue
		}
		probes := map[int]TracerouteProbe{1: {}, 2: {}, 3: {}}
		n := 1
		host, ip := "", ""
		for _, t := range toks[1:] {
			switch {
			case t == "*":
				n++
			case strings.Contains(t, "msec"):
				probes[n] = TracerouteProbe{RTT: atof(strings.ReplaceAll(t, "msec", ""), 0), IPAddress: ip, HostName: host}
				n++
			case strings.Contains(t, "("):
				ip = strings.NewReplacer("(", "", ")", "").Replace(t)
			default:
				host, ip = t, t
			}
		}
		res[hop] = TracerouteHop{Probes: probes}
	}
	return res
}

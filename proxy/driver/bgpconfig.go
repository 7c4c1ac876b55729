package driver

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// BGPConfigGetter is implemented by drivers with get_bgp_config: the BGP
// groups of the configuration by name ("_" for peers without a group), each
// a NAPALM BGPConfigGroupDict with its neighbors. group and neighbor narrow
// the result as NAPALM's driver does.
type BGPConfigGetter interface {
	GetBGPConfig(ctx context.Context, group, neighbor string) (map[string]map[string]any, error)
}

// cfgLine is one line of a configuration with its parent lines, as
// netutils' IOSConfigParser.build_config_relationship gives them.
type cfgLine struct {
	line    string
	parents []string
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// configTree parses indented configuration text like netutils'
// BaseSpaceConfigParser: comment ("!") and blank lines dropped, trailing
// spaces trimmed, each line with the lines it is nested under; a banner's
// text stays one line.
func configTree(text string) []cfgLine {
	var lines []string
	for l := range strings.SplitSeq(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimLeft(l, " \t"), "!") {
			continue
		}
		lines = append(lines, strings.TrimRight(l, " \t\r"))
	}
	var res []cfgLine
	var stack []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		ind := indentOf(l)
		for len(stack) > 0 && indentOf(stack[len(stack)-1]) >= ind {
			stack = stack[:len(stack)-1]
		}
		if ind > 0 && len(stack) == 0 && len(res) > 0 {
			stack = append(stack, res[len(res)-1].line)
		}
		t := strings.TrimLeft(l, " \t")
		if strings.HasPrefix(t, "banner") || strings.HasPrefix(t, "vacant-message") {
			res = append(res, cfgLine{line: l, parents: slices.Clone(stack)})
			// the banner text up to the line with the closing ^C
			j := i + 1
			for ; j < len(lines) && !strings.Contains(lines[j], "^C"); j++ {
			}
			if j < len(lines) {
				body := strings.Join(lines[i+1:j+1], "\n")
				res = append(res, cfgLine{line: body, parents: append(slices.Clone(stack), l)})
				i = j
			}
			continue
		}
		res = append(res, cfgLine{line: l, parents: slices.Clone(stack)})
		stack = append(stack, l)
	}
	return res
}

// parseObjects is napalm's netutils_parse_objects: the lines containing
// section and the lines whose eldest parent contains it.
func parseObjects(section string, tree []cfgLine) []string {
	var res []string
	for _, c := range tree {
		if strings.Contains(c.line, section) {
			res = append(res, c.line)
		}
		if len(c.parents) > 0 && strings.Contains(c.parents[0], section) {
			res = append(res, c.line)
		}
	}
	return res
}

// parseParents is napalm's netutils_parse_parents: the parent lines
// matching parent (at their start) of lines containing child.
func parseParents(parent *regexp.Regexp, child string, tree []cfgLine) []string {
	var res []string
	for _, c := range tree {
		for _, p := range c.parents {
			if strings.Contains(c.line, child) && parent.FindStringIndex(p) != nil && parent.FindStringIndex(p)[0] == 0 && !slices.Contains(res, p) {
				res = append(res, p)
			}
		}
	}
	return res
}

func linesTree(lines []string) []cfgLine { return configTree(strings.Join(lines, "\n") + "\n") }

// pyRepr is Python's repr() of a str.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// pyListRepr is Python's str() of a list of str.
func pyListRepr(l []string) string {
	p := make([]string, len(l))
	for i, s := range l {
		p[i] = pyRepr(s)
	}
	return "[" + strings.Join(p, ", ") + "]"
}

// findTxt is napalm's regex_find_txt over str(lines): the one match
// converted to def's type (int or string), def when there is none or it
// does not convert; several matches give str(list) for a string default.
func findTxt(re *regexp.Regexp, lines []string, def any) any {
	text := pyListRepr(lines)
	ms := re.FindAllStringSubmatch(text, -1)
	if len(ms) == 0 {
		return def
	}
	vals := make([]string, len(ms))
	for i, m := range ms {
		if len(m) > 1 {
			vals[i] = m[1]
		} else {
			vals[i] = m[0]
		}
	}
	switch def.(type) {
	case int64:
		if len(vals) != 1 {
			return def
		}
		n, err := strconv.ParseInt(strings.TrimSpace(vals[0]), 10, 64)
		if err != nil {
			return def
		}
		return n
	default:
		if len(vals) == 1 {
			return vals[0]
		}
		return pyListRepr(vals)
	}
}

var (
	iosBGPAsnRe       = regexp.MustCompile(`router bgp (\d+)`)
	ipv4InLineRe      = regexp.MustCompile(ipAddrRe)
	ipv6InLineRe      = regexp.MustCompile(`(?:[0-9a-fA-F]{1,4}:){1,7}(?::|[0-9a-fA-F]{1,4})(?::[0-9a-fA-F]{0,4})*`)
	iosAFIParentRe    = regexp.MustCompile(`\s+address-family.*`)
	iosBGPPeerGroupRe = regexp.MustCompile(` peer-group ([^']+)`)
	iosBGPDescrRe     = regexp.MustCompile(` description ([^']+)'`)
	iosBGPRemoteASRe  = regexp.MustCompile(` remote-as (\d+)`)
	iosBGPMaxPfxRe    = regexp.MustCompile(`maximum-prefix (\d+) \d+ \w+ \d+`)
	iosBGPMaxPctRe    = regexp.MustCompile(`maximum-prefix \d+ (\d+) \w+ \d+`)
	iosBGPMaxTmoRe    = regexp.MustCompile(`maximum-prefix \d+ \d+ \w+ (\d+)`)
	iosBGPRMOutRe     = regexp.MustCompile(`route-map ([^\s]+) out`)
	iosBGPRMInRe      = regexp.MustCompile(`route-map ([^\s]+) in`)
	iosBGPUpdSrcRe    = regexp.MustCompile(` update-source (\w+)`)
	iosBGPLocalASRe   = regexp.MustCompile(`local-as (\d+)`)
	iosBGPPasswordRe  = regexp.MustCompile(`password (?:[0-9] )?([^']+')`)
	iosBGPNHSRe       = regexp.MustCompile(` next-hop-self`)
	iosBGPRRCRe       = regexp.MustCompile(`route-reflector-client`)
	iosBGPMultipathRe = regexp.MustCompile(` multipath`)
	iosBGPMultihopRe  = regexp.MustCompile(`ebgp-multihop \{\d+\}`)
	iosBGPRemPrivRe   = regexp.MustCompile(`remove-private-as`)
)

// iosPrefixLimit is NAPALM ios's build_prefix_limit.
func iosPrefixLimit(af string, limit, pct, tmo any) map[string]any {
	low := strings.ToLower(af)
	inet, inet6 := strings.Contains(low, "ipv4"), strings.Contains(low, "ipv6")
	typ := "inet"
	if inet6 {
		typ = "inet6"
	}
	safi := "unicast"
	if f := strings.Fields(af); af != "" && len(f) != 2 && len(f) > 0 {
		safi = f[len(f)-1]
	}
	if !inet && !inet6 {
		return map[string]any{}
	}
	return map[string]any{typ: map[string]any{safi: map[string]any{"limit": limit,
		"teardown": map[string]any{"threshold": pct, "timeout": tmo}}}}
}

func truthy(v any) bool {
	switch x := v.(type) {
	case string:
		return x != ""
	case int64:
		return x != 0
	}
	return v != nil
}

// GetBGPConfig implements BGPConfigGetter like NAPALM ios: the router bgp
// section of the running configuration (netutils' parse), neighbors in VRFs
// left out.
func (d *iosDriver) GetBGPConfig(ctx context.Context, group, neighbor string) (map[string]map[string]any, error) {
	cfg, err := d.GetConfig(ctx, "running")
	if err != nil {
		return nil, err
	}
	return parseIOSBGPConfig(cfg.Running, group, neighbor), nil
}

func parseIOSBGPConfig(running, group, neighbor string) map[string]map[string]any {
	bgp := parseObjects("router bgp", configTree(running))
	res := map[string]map[string]any{}
	if len(bgp) == 0 {
		return res
	}
	tree := linesTree(bgp)
	asn := findTxt(iosBGPAsnRe, bgp, int64(0))
	neighbors := map[string]bool{}
	for _, l := range bgp {
		if !strings.Contains(l, " neighbor ") {
			continue
		}
		if m := ipv4InLineRe.FindString(l); m != "" {
			neighbors[m] = true
		} else if m := ipv6InLineRe.FindString(l); m != "" {
			neighbors[m] = true
		}
	}
	names := make([]string, 0, len(neighbors))
	for n := range neighbors {
		names = append(names, n)
	}
	slices.Sort(names)
	groups := map[string]map[string]any{}
	afi := "" // NAPALM's loop variable, also read by the group loop below
	for _, n := range names {
		if neighbor != "" && n != neighbor {
			continue
		}
		afis := parseParents(iosAFIParentRe, n, tree)
		afi = ""
		if len(afis) > 0 {
			afi = afis[0]
		}
		if strings.Contains(pyListRepr(afis), "vrf") {
			continue
		}
		nc := parseObjects(n, tree)
		g := findTxt(iosBGPPeerGroupRe, nc, "_").(string)
		if groups[g] == nil {
			groups[g] = map[string]any{}
		}
		groups[g][n] = map[string]any{
			"description":            findTxt(iosBGPDescrRe, nc, ""),
			"remote_as":              findTxt(iosBGPRemoteASRe, nc, int64(0)),
			"prefix_limit":           iosPrefixLimit(afi, findTxt(iosBGPMaxPfxRe, nc, int64(0)), findTxt(iosBGPMaxPctRe, nc, int64(0)), findTxt(iosBGPMaxTmoRe, nc, int64(0))),
			"export_policy":          findTxt(iosBGPRMOutRe, nc, ""),
			"import_policy":          findTxt(iosBGPRMInRe, nc, ""),
			"local_address":          findTxt(iosBGPUpdSrcRe, nc, ""),
			"local_as":               findTxt(iosBGPLocalASRe, nc, asn),
			"authentication_key":     findTxt(iosBGPPasswordRe, nc, ""),
			"nhs":                    truthy(findTxt(iosBGPNHSRe, nc, "")),
			"route_reflector_client": truthy(findTxt(iosBGPRRCRe, nc, "")),
		}
	}
	if group == "" || group == "_" {
		nb := groups["_"]
		if nb == nil {
			nb = map[string]any{}
		}
		res["_"] = map[string]any{"apply_groups": []string{}, "description": "", "local_as": asn, "type": "",
			"import_policy": "", "export_policy": "", "local_address": "", "multipath": false, "multihop_ttl": 0,
			"remote_as": 0, "remove_private_as": false, "prefix_limit": map[string]any{}, "neighbors": nb}
	}
	gnames := make([]string, 0, len(groups))
	for g := range groups {
		gnames = append(gnames, g)
	}
	slices.Sort(gnames)
	for _, g := range gnames {
		if (group != "" && g != group) || g == "_" {
			continue
		}
		nc := parseObjects(g, tree)
		multipath := false
		for _, a := range parseParents(iosAFIParentRe, g, tree) {
			afi = a
			multipath = truthy(findTxt(iosBGPMultipathRe, []string{pyListRepr(parseObjects(a, tree))}, ""))
			if multipath {
				break
			}
		}
		localAS := findTxt(iosBGPLocalASRe, nc, asn)
		peerAS := findTxt(iosBGPRemoteASRe, nc, int64(0))
		typ := "external"
		if truthy(localAS) {
			if localAS == peerAS {
				typ = "internal"
			}
		} else if asn == peerAS {
			typ = "internal"
		}
		res[g] = map[string]any{"apply_groups": []string{}, "description": findTxt(iosBGPDescrRe, nc, ""),
			"local_as": localAS, "type": typ, "import_policy": findTxt(iosBGPRMInRe, nc, ""),
			"export_policy": findTxt(iosBGPRMOutRe, nc, ""), "local_address": findTxt(iosBGPUpdSrcRe, nc, ""),
			"multipath": multipath, "multihop_ttl": findTxt(iosBGPMultihopRe, nc, int64(0)), "remote_as": peerAS,
			"remove_private_as": truthy(findTxt(iosBGPRemPrivRe, nc, "")),
			"prefix_limit":      iosPrefixLimit(afi, findTxt(iosBGPMaxPfxRe, nc, int64(0)), findTxt(iosBGPMaxPctRe, nc, int64(0)), findTxt(iosBGPMaxTmoRe, nc, int64(0))),
			"neighbors":         groups[g]}
	}
	return res
}

// eos get_bgp_config: NAPALM's field and type tables.
var (
	eosGroupFields = map[string]string{"type": "type", "multipath": "multipath", "apply-groups": "apply_groups",
		"remove-private-as": "remove_private_as", "ebgp-multihop": "multihop_ttl", "remote-as": "remote_as",
		"local-v4-addr": "local_address", "local-v6-addr": "local_address", "local-as": "local_as",
		"next-hop-self": "nhs", "description": "description", "import-policy": "import_policy", "export-policy": "export_policy"}
	eosPeerFields = map[string]string{"description": "description", "remote-as": "remote_as",
		"local-v4-addr": "local_address", "local-v6-addr": "local_address", "local-as": "local_as",
		"next-hop-self": "nhs", "route-reflector-client": "route_reflector_client", "import-policy": "import_policy",
		"export-policy": "export_policy", "passwd": "authentication_key"}
	eosPropTypes = map[string]string{"remote-as": "int", "ebgp-multihop": "int", "local-v4-addr": "str",
		"local-v6-addr": "str", "local-as": "int", "remove-private-as": "bool", "next-hop-self": "bool",
		"description": "str", "route-reflector-client": "bool", "password": "str", "route-map": "str",
		"apply-groups": "list", "type": "str", "import-policy": "str", "export-policy": "str", "multipath": "bool"}
)

func eosTypeDefault(t string) any {
	switch t {
	case "str":
		return ""
	case "int":
		return int64(0)
	case "bool":
		return false
	case "list":
		return []string{}
	}
	return nil
}

func eosPropField(p string) (string, bool) {
	if f, ok := eosGroupFields[p]; ok {
		return f, true
	}
	f, ok := eosPeerFields[p]
	return f, ok
}

// eosConvert is napalm.base.helpers.convert(type, value, default).
func eosConvert(t, v string) any {
	switch t {
	case "str":
		return v
	case "int":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return int64(0)
		}
		return n
	case "bool":
		return v != ""
	case "list":
		l := []string{}
		for _, r := range v {
			l = append(l, string(r))
		}
		return l
	}
	return nil
}

// eosParseOptions is NAPALM eos's parse_options.
func eosParseOptions(opts []string, deflt bool) map[string]any {
	if len(opts) == 0 {
		return map[string]any{}
	}
	prop := opts[0]
	typ, ok := eosPropTypes[prop]
	if !ok {
		return map[string]any{}
	}
	val := eosTypeDefault(typ)
	if !deflt {
		if len(opts) > 1 {
			val = eosConvert(typ, opts[1])
		} else if typ == "bool" {
			val = true
		}
	}
	if f, ok := eosPropField(prop); ok {
		return map[string]any{f: val}
	}
	switch prop {
	case "password":
		if len(opts) > 2 {
			return map[string]any{"authentication_key": opts[2]}
		}
	case "route-map":
		dir := ""
		switch len(opts) {
		case 3:
			dir, val = opts[2], opts[1]
		case 2:
			dir = opts[1]
		}
		if dir == "in" {
			return map[string]any{"import_policy": val}
		}
		return map[string]any{"export_policy": val}
	}
	return map[string]any{}
}

func eosDefaultGroup(localAS any) map[string]any {
	g := map[string]any{}
	for prop, key := range eosGroupFields {
		g[key] = eosTypeDefault(eosPropTypes[prop])
	}
	g["prefix_limit"], g["neighbors"], g["local_as"] = map[string]any{}, map[string]any{}, localAS
	return g
}

func eosDefaultNeighbor(localAS any, group map[string]any) map[string]any {
	n := map[string]any{}
	for prop, key := range eosPeerFields {
		n[key] = eosTypeDefault(eosPropTypes[prop])
	}
	n["prefix_limit"], n["local_as"], n["authentication_key"] = map[string]any{}, localAS, ""
	peerKeys := map[string]bool{}
	for _, k := range eosPeerFields {
		peerKeys[k] = true
	}
	for _, k := range eosGroupFields {
		if v, ok := group[k]; ok && peerKeys[k] {
			n[k] = v
		}
	}
	return n
}

// GetBGPConfig implements BGPConfigGetter like NAPALM eos: show
// running-config | section router bgp, read line by line.
func (d *eosDriver) GetBGPConfig(ctx context.Context, group, neighbor string) (map[string]map[string]any, error) {
	var res map[string]map[string]any
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show running-config | section router bgp")
		if err != nil {
			return err
		}
		res = parseEOSBGPConfig(out, group)
		return nil
	})
	return res, err
}

func parseEOSBGPConfig(text, group string) map[string]map[string]any {
	res := map[string]map[string]any{}
	var localAS any = int64(0)
	neighbors := map[string]map[string]any{}
	var order []string
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "router bgp") {
			if n, err := asNumber(strings.TrimSpace(strings.TrimPrefix(l, "router bgp"))); err == nil {
				localAS = n
			}
			continue
		}
		if !strings.HasPrefix(l, "neighbor") && !strings.HasPrefix(l, "no neighbor") {
			continue
		}
		deflt := strings.HasPrefix(l, "no")
		l = strings.ReplaceAll(strings.ReplaceAll(l, "no neighbor ", ""), "neighbor ", "")
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		name, opts := f[0], f[1:]
		if _, err := netip.ParseAddr(name); err == nil {
			gname := ""
			if len(opts) > 1 && opts[0] == "peer-group" {
				gname = opts[1]
			} else if len(opts) > 2 && opts[0] == "peer" && opts[1] == "group" {
				gname = opts[2]
			}
			if _, ok := neighbors[name]; !ok {
				neighbors[name] = eosDefaultNeighbor(localAS, res[gname])
				order = append(order, name)
			}
			if gname != "" {
				neighbors[name]["__group"] = gname
			}
			for k, v := range eosParseOptions(opts, deflt) {
				neighbors[name][k] = v
			}
			continue
		}
		if group != "" && name != group {
			continue
		}
		if _, ok := res[name]; !ok {
			res[name] = eosDefaultGroup(localAS)
		}
		for k, v := range eosParseOptions(opts, deflt) {
			res[name][k] = v
		}
	}
	res["_"] = eosDefaultGroup(localAS)
	for _, peer := range order {
		det := neighbors[peer]
		g, _ := det["__group"].(string)
		delete(det, "__group")
		if g == "" {
			g = "_"
		}
		if _, ok := res[g]; !ok {
			res[g] = eosDefaultGroup(localAS)
		}
		res[g]["neighbors"].(map[string]any)[peer] = det
	}
	for _, g := range res {
		delete(g, "nhs")
	}
	if localAS == int64(0) {
		return map[string]map[string]any{}
	}
	return res
}

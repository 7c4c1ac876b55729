package driver

// Junos operational data the way NAPALM's junos driver reads it: PyEZ
// tables and views (napalm/junos/utils/junos_views.yml) select items of an
// RPC reply by relative paths and read their fields. The helpers here give
// the same selections over gsalt's XML tree, and junosPyFacts the PyEZ
// facts some getters branch on (switch_style, srx_cluster, personality).

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// replyTop returns the first element of an RPC reply's body (the element
// PyEZ hands to a table), looking through nested <rpc-reply> wrappers.
func replyTop(reply *xnode) *xnode {
	n := reply
	for n != nil {
		if n.local == "rpc-reply" || n.local == "" {
			var next *xnode
			for _, k := range n.kids {
				next = k
				break
			}
			if next == nil {
				return n
			}
			n = next
			continue
		}
		return n
	}
	return reply
}

// xpathAll evaluates the relative paths PyEZ views use: steps separated by
// "/", ".." for the parent, a last step "@name" for an attribute (returned
// as a node named "@name" holding the value) and alternatives separated by
// " | ", whose matches are concatenated in order.
func xpathAll(n *xnode, path string) []*xnode {
	if n == nil {
		return nil
	}
	var out []*xnode
	alts := 0
	for alt := range strings.SplitSeq(path, "|") {
		alts++
		cur := []*xnode{n}
		for step := range strings.SplitSeq(strings.TrimSpace(alt), "/") {
			var next []*xnode
			for _, c := range cur {
				switch {
				case step == "..":
					if c.parent != nil {
						next = append(next, c.parent)
					}
				case step == ".":
					next = append(next, c)
				case strings.HasPrefix(step, "@"):
					for _, a := range c.attrs {
						if a.Name.Local == step[1:] && a.Name.Space != "xmlns" {
							next = append(next, &xnode{local: step, text: a.Value, parent: c, seq: c.seq})
						}
					}
				default:
					next = append(next, c.children(step)...)
				}
			}
			cur = next
		}
		out = append(out, cur...)
	}
	if alts > 1 {
		// An XPath union is in document order.
		slices.SortStableFunc(out, func(a, b *xnode) int { return a.seq - b.seq })
	}
	return out
}

// pyText is PyEZ's field text: the stripped element text, or the element's
// name when the text is empty (a flag such as <multihop/> reads "multihop").
func pyText(x *xnode) string {
	t := strings.TrimSpace(x.text)
	if t == "" {
		return x.local
	}
	return t
}

// fvals returns the field values at path (PyEZ gives None for none, the
// value for one and a list for more).
func fvals(n *xnode, path string) []string {
	var out []string
	for _, x := range xpathAll(n, path) {
		out = append(out, pyText(x))
	}
	return out
}

// fstr returns the first value at path and whether there was one.
func fstr(n *xnode, path string) (string, bool) {
	v := fvals(n, path)
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// fstrOr returns the first value at path, def when there is none.
func fstrOr(n *xnode, path, def string) string {
	if v, ok := fstr(n, path); ok {
		return v
	}
	return def
}

// fint returns the first value at path as an int (ok false when absent
// or not a number, where PyEZ would fail or give None).
func fint(n *xnode, path string) (int64, bool) {
	v, ok := fstr(n, path)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(v, 10, 64)
	return i, err == nil
}

// ffloat returns the first value at path as a float.
func ffloat(n *xnode, path string) (float64, bool) {
	v, ok := fstr(n, path)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// junosPyFacts are the PyEZ device facts NAPALM's junos driver reads.
type junosPyFacts struct {
	Hostname, FQDN, Model, Serial, Version string
	Personality, SwitchStyle               string
	SRXCluster                             bool
	// Uptime, when set, is used instead of <get-system-uptime-information>
	// (NAPALM's test double fixes the device's uptime the same way).
	Uptime *float64
}

var (
	pyezSRX4 = regexp.MustCompile(`^SRX\s?\d{4}`)
	pyezSRX3 = regexp.MustCompile(`^SRX\s?\d{3}`)
)

// junosPersonality is PyEZ's personality fact from the model.
func junosPersonality(model string) string {
	m := strings.ToUpper(model)
	switch {
	case strings.HasPrefix(m, "EX") || strings.HasPrefix(m, "QFX"):
		return "SWITCH"
	case strings.HasPrefix(m, "MX"), strings.HasPrefix(m, "VMX"), m == "VRR":
		return "MX"
	case strings.HasPrefix(m, "VJX"):
		return "SRX_BRANCH"
	case strings.HasPrefix(m, "M"):
		return "M"
	case strings.HasPrefix(m, "T"):
		return "T"
	case strings.HasPrefix(m, "PTX"):
		return "PTX"
	case pyezSRX4.MatchString(m):
		if n, _ := strconv.Atoi(m[len(m)-4:]); n > 5000 {
			return "SRX_HIGHEND"
		}
		return "SRX_MIDRANGE"
	case pyezSRX3.MatchString(m), strings.Contains(m, "FIREFLY"):
		return "SRX_BRANCH"
	case m == "OLIVE":
		return "OLIVE"
	case strings.HasPrefix(m, "NFX"):
		return "NFX"
	}
	return ""
}

// junosSwitchStyle is PyEZ's switch_style fact.
func junosSwitchStyle(personality, model string) string {
	m := strings.ToUpper(model)
	switch personality {
	case "MX", "SRX_HIGHEND":
		return "BRIDGE_DOMAIN"
	case "SWITCH", "SRX_BRANCH":
		switch {
		case strings.Contains(m, "FIREFLY"):
			return "NONE"
		case strings.HasPrefix(m, "EX9") || strings.HasPrefix(m, "EX43") || strings.HasPrefix(m, "QFX"):
			return "VLAN_L2NG"
		}
		return "VLAN"
	}
	return "NONE"
}

// pyFacts returns the device's PyEZ facts, read once per session from
// <get-software-information>, <get-chassis-inventory>, the configured
// domain name and (SRX) <get-chassis-cluster-status>.
func (j *junos) pyFacts(o *ncOp) (*junosPyFacts, error) {
	if j.facts != nil {
		return j.facts, nil
	}
	sw, err := o.rpc("<get-software-information/>")
	if err != nil {
		return nil, err
	}
	f := &junosPyFacts{}
	f.Hostname, f.Model, f.Version = junosSoftware(sw)
	f.FQDN = f.Hostname
	if inv, err := o.rpc("<get-chassis-inventory/>"); err == nil {
		f.Serial = inv.find("chassis").value("serial-number")
	} else if !isRPCError(err) {
		return nil, err
	}
	if dom, err := o.rpc("<get-configuration><configuration><system><domain-name/></system></configuration></get-configuration>"); err == nil {
		if d := dom.find("domain-name"); d != nil && strings.TrimSpace(d.text) != "" && f.Hostname != "" {
			f.FQDN = f.Hostname + "." + strings.TrimSpace(d.text)
		}
	} else if !isRPCError(err) {
		return nil, err
	}
	f.Personality = junosPersonality(f.Model)
	f.SwitchStyle = junosSwitchStyle(f.Personality, f.Model)
	if strings.HasPrefix(f.Personality, "SRX") {
		if cl, err := o.rpc("<get-chassis-cluster-status/>"); err == nil {
			f.SRXCluster = cl.find("redundancy-group") != nil
		} else if !isRPCError(err) {
			return nil, err
		}
	}
	j.facts = f
	return f, nil
}

// isRPCError reports whether err is the device's rpc-error (the RPC ran
// and was refused), as opposed to a transport failure.
func isRPCError(err error) bool {
	var re *RPCError
	return errors.As(err, &re)
}

// junosOnly runs fn on a Junos server; elsewhere the getter is not
// supported (it needs Junos's own RPCs).
func (j *junos) junosOnly(o *ncOp, what string, fn func() error) error {
	if !j.n.isJunos() {
		return j.genericUnsupported(what, what+" needs Junos's operational RPCs")
	}
	return fn()
}

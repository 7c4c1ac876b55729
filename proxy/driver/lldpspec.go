package driver

import (
	"fmt"
	"regexp"
	"strings"
)

// The text getters of show lldp neighbors detail (IOS, IOS-XR, NX-OS, EOS)
// share one line parser driven by a per-platform lldpSpec: the command,
// the line rules (regexps and what a match does) and the value cleaners.
// What differs in how a platform turns the fields into NAPALM's
// LLDPNeighborDetail stays with its getter.

// lldpKey is a field of one neighbour as the detail texts print them.
type lldpKey int

const (
	lldpNoKey       lldpKey = iota
	lldpLocal               // the local interface
	lldpChassis             // the remote chassis id
	lldpPort                // the remote port id
	lldpPortDescr           // the remote port description
	lldpName                // the remote system name
	lldpDescr               // the remote system description
	lldpCaps                // the remote system capabilities, as printed
	lldpEnabledCaps         // the enabled capabilities, as printed
	lldpKeys
)

// lldpLabels maps the field labels the platforms print to the fields
// (rules whose key is lldpNoKey read the label from their first group).
var lldpLabels = map[string]lldpKey{
	"Local Interface": lldpLocal, "Local Port id": lldpLocal,
	"Chassis id": lldpChassis, "Chassis ID": lldpChassis,
	"Port id": lldpPort, "Port ID": lldpPort,
	"Port Description": lldpPortDescr, "System Name": lldpName,
	"System Description": lldpDescr, "System Capabilities": lldpCaps,
	"Enabled Capabilities": lldpEnabledCaps,
}

// lldpAct is what a matching line does.
type lldpAct int

const (
	lldpSet    lldpAct = iota // set the field from the last group
	lldpNext                  // the next line, whole, is the field's value
	lldpClose                 // close the record (a separator line)
	lldpParent                // close the record; the last group is the local interface of the next ones
	lldpOpen                  // close the record and open one under the current parent
)

// lldpRule is one line rule of a spec.
type lldpRule struct {
	re  *regexp.Regexp
	key lldpKey // lldpNoKey with two groups: the label in group 1, through lldpLabels
	act lldpAct
}

// lldpSpec drives parseLLDPDetail for one platform.
type lldpSpec struct {
	all, one string     // the command, without and with an interface (%s)
	trimLine string     // cut off the right of every line
	rules    []lldpRule // tried in order; the first match applies
	// opens is the field that closes the record and opens a new one;
	// records the field after which the neighbour is recorded.
	opens, records lldpKey
	// always: fields need no opening line (a record is always open).
	always bool
	// value cleans a field's value; nextLine the line taken whole.
	value, nextLine func(string) string
	// keep says whether a record closed before its recording field (by a
	// separator, an opening line or the end of the text) is kept; nil
	// drops it.
	keep func(r *lldpRow) bool
}

// command is the spec's command for iface ("" for all).
func (s *lldpSpec) command(iface string) string {
	if iface == "" {
		return s.all
	}
	return fmt.Sprintf(s.one, iface)
}

// lldpRow is one neighbour's fields as read.
type lldpRow [lldpKeys]string

// empty reports a row with no field read.
func (r *lldpRow) empty() bool {
	return *r == lldpRow{}
}

// parseLLDPDetail reads a detail text by spec into rows, in order.
func parseLLDPDetail(spec *lldpSpec, out string) []lldpRow {
	var (
		rows   []lldpRow
		row    lldpRow
		open   = spec.always
		parent string
		next   lldpKey
	)
	closeRow := func() {
		if open && spec.keep != nil && spec.keep(&row) {
			rows = append(rows, row)
		}
		row, open = lldpRow{}, spec.always
	}
	for l := range strings.SplitSeq(out, "\n") {
		l = strings.TrimRight(l, spec.trimLine)
		if next != lldpNoKey {
			row[next], next = spec.nextLine(l), lldpNoKey
			continue
		}
		for _, r := range spec.rules {
			m := r.re.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			key := r.key
			if key == lldpNoKey && len(m) > 2 {
				key = lldpLabels[m[1]]
			}
			v := ""
			if len(m) > 1 {
				v = m[len(m)-1]
			}
			switch r.act {
			case lldpClose:
				closeRow()
			case lldpParent:
				closeRow()
				parent = v
			case lldpOpen:
				closeRow()
				row[lldpLocal], open = parent, true
			case lldpNext:
				if open {
					next = key
				}
			case lldpSet:
				if key == spec.opens && key != lldpNoKey {
					closeRow()
					open = true
				}
				if !open {
					break
				}
				row[key] = spec.value(v)
				if key == spec.records && key != lldpNoKey {
					rows = append(rows, row)
					row, open = lldpRow{}, spec.always
				}
			}
			break
		}
	}
	closeRow()
	return rows
}

// detail builds NAPALM's neighbour from a row: the capabilities through
// caps, the chassis id normalised when it is a MAC address and mac is set.
func (r *lldpRow) detail(caps map[string]string, mac bool) LLDPNeighborDetail {
	chassis := r[lldpChassis]
	if mac {
		chassis = macOr(chassis)
	}
	return LLDPNeighborDetail{
		RemoteChassisID:         chassis,
		RemotePort:              r[lldpPort],
		RemotePortDescription:   r[lldpPortDescr],
		RemoteSystemName:        r[lldpName],
		RemoteSystemDescription: r[lldpDescr],
		RemoteSystemCapab:       lldpCapab(r[lldpCaps], caps),
		RemoteSystemEnableCapab: lldpCapab(r[lldpEnabledCaps], caps),
	}
}

// blankNotAdvertised drops a value LLDP did not advertise.
func blankNotAdvertised(v string) string {
	if strings.Contains(v, "not advertised") {
		return ""
	}
	return v
}

// trimRightSpace trims the spaces off a value's right.
func trimRightSpace(v string) string { return strings.TrimRight(v, " ") }

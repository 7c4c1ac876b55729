package driver

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Parsing helpers shared by the platform drivers (the equivalents of
// napalm.base.helpers).

// normalizeMAC returns a MAC address in NAPALM's format ("01:23:45:67:89:AB")
// from Cisco dotted ("0123.4567.89ab"), colon or dash notation, or "" when
// raw is not a MAC address.
func normalizeMAC(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	var hex string
	switch {
	case strings.Count(raw, ".") == 2:
		for _, g := range strings.Split(raw, ".") {
			if len(g) > 4 || g == "" {
				return ""
			}
			hex += strings.Repeat("0", 4-len(g)) + g
		}
	case strings.Count(raw, ":") == 5 || strings.Count(raw, "-") == 5:
		for _, g := range strings.FieldsFunc(raw, func(r rune) bool { return r == ':' || r == '-' }) {
			if len(g) > 2 {
				return ""
			}
			hex += strings.Repeat("0", 2-len(g)) + g
		}
	case len(raw) == 12:
		hex = raw
	default:
		return ""
	}
	if len(hex) != 12 {
		return ""
	}
	hex = strings.ToUpper(hex)
	for _, c := range hex {
		if !strings.ContainsRune("0123456789ABCDEF", c) {
			return ""
		}
	}
	var b strings.Builder
	for i := 0; i < 12; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(hex[i : i+2])
	}
	return b.String()
}

// macOr returns normalizeMAC(raw), or raw itself when it is not a MAC.
func macOr(raw string) string {
	if m := normalizeMAC(raw); m != "" {
		return m
	}
	return raw
}

var ifAbbrev = []struct{ short, long string }{
	{"Gi", "GigabitEthernet"}, {"Te", "TenGigabitEthernet"}, {"Fa", "FastEthernet"},
	{"Fo", "FortyGigabitEthernet"}, {"Hu", "HundredGigE"}, {"Tw", "TwoGigabitEthernet"},
	{"Lo", "Loopback"}, {"Po", "Port-channel"}, {"Tu", "Tunnel"}, {"Vl", "Vlan"},
	{"Et", "Ethernet"}, {"Ma", "Management"}, {"Vx", "Vxlan"}, {"BD", "BDI"},
}

// canonicalInterface expands an abbreviated interface name ("Gi2" ->
// "GigabitEthernet2"); eos selects EOS spellings (Port-Channel).
func canonicalInterface(name string, eos bool) string {
	i := strings.IndexAny(name, "0123456789")
	if i <= 0 {
		return name
	}
	prefix, num := name[:i], name[i:]
	for _, a := range ifAbbrev {
		if strings.EqualFold(prefix, a.long) {
			if prefix == strings.ToLower(prefix) && !(eos && a.long == "Port-channel") {
				// netutils' table spells lower-case long names
				// properly: "port-channel12" -> "Port-channel12".
				return a.long + num
			}
			return name
		}
	}
	for _, a := range ifAbbrev {
		if strings.EqualFold(prefix, a.short) {
			long := a.long
			if eos && long == "Port-channel" {
				long = "Port-Channel"
			}
			return long + num
		}
	}
	return name
}

var digitsRe = regexp.MustCompile(`\d+|\D+`)

// naturalLess orders strings with embedded numbers numerically
// (napalm.base.utils.string_parsers.sorted_nicely).
func naturalLess(a, b string) bool {
	pa, pb := digitsRe.FindAllString(a, -1), digitsRe.FindAllString(b, -1)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, y := pa[i], pb[i]
		if x == y {
			continue
		}
		nx, ex := strconv.ParseUint(x, 10, 64)
		ny, ey := strconv.ParseUint(y, 10, 64)
		if ex == nil && ey == nil && nx != ny {
			return nx < ny
		}
		return x < y
	}
	return len(pa) < len(pb)
}

// sortNicely sorts in place with naturalLess.
func sortNicely(s []string) {
	slices.SortFunc(s, func(a, b string) int {
		switch {
		case naturalLess(a, b):
			return -1
		case naturalLess(b, a):
			return 1
		}
		return 0
	})
}

const (
	minuteSecs = 60
	hourSecs   = 3600
	daySecs    = 24 * hourSecs
	weekSecs   = 7 * daySecs
	yearSecs   = 365 * daySecs
)

// parseUptimeWords parses "1 year, 3 weeks, 2 days, 4 hours, 7 minutes"
// (IOS) or "3 days, 2 hours and 7 minutes" (EOS) into seconds.
func parseUptimeWords(s string) int64 {
	s = strings.ReplaceAll(s, " and ", ", ")
	var total int64
	for part := range strings.SplitSeq(s, ",") {
		f := strings.Fields(part)
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch unit := f[1]; {
		case strings.HasPrefix(unit, "year"):
			total += n * yearSecs
		case strings.HasPrefix(unit, "week"):
			total += n * weekSecs
		case strings.HasPrefix(unit, "day"):
			total += n * daySecs
		case strings.HasPrefix(unit, "hour"):
			total += n * hourSecs
		case strings.HasPrefix(unit, "minute"):
			total += n * minuteSecs
		case strings.HasPrefix(unit, "second"):
			total += n
		}
	}
	return total
}

var (
	bgpDH = regexp.MustCompile(`^(\d+)d(\d+)h$`)
	bgpWD = regexp.MustCompile(`^(\d+)w(\d+)d$`)
	bgpYW = regexp.MustCompile(`^(\d+)y(\d+)w$`)
)

// bgpUptime converts a BGP up/down column ("00:14:23", "1d17h", "8w5d",
// "1y28w", "never") to seconds, -1 for never or unparsable.
func bgpUptime(s string) int {
	s = strings.TrimSpace(s)
	atoi := func(x string) int { n, _ := strconv.Atoi(x); return n }
	if strings.Contains(s, ":") {
		p := strings.Split(s, ":")
		if len(p) == 3 {
			return atoi(p[0])*hourSecs + atoi(p[1])*minuteSecs + atoi(p[2])
		}
		return -1
	}
	if m := bgpDH.FindStringSubmatch(s); m != nil {
		return atoi(m[1])*daySecs + atoi(m[2])*hourSecs
	}
	if m := bgpWD.FindStringSubmatch(s); m != nil {
		return atoi(m[1])*weekSecs + atoi(m[2])*daySecs
	}
	if m := bgpYW.FindStringSubmatch(s); m != nil {
		return atoi(m[1])*yearSecs + atoi(m[2])*weekSecs
	}
	return -1
}

// durationAgo parses "3 days, 2:00:00 ago" / "0:10:22 ago" into a duration.
func durationAgo(s string) (time.Duration, bool) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "ago"))
	var d time.Duration
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if strings.Contains(part, ":") {
			p := strings.Split(part, ":")
			if len(p) != 3 {
				return 0, false
			}
			var v [3]int
			for i := range p {
				n, err := strconv.Atoi(p[i])
				if err != nil {
					return 0, false
				}
				v[i] = n
			}
			d += time.Duration(v[0])*time.Hour + time.Duration(v[1])*time.Minute + time.Duration(v[2])*time.Second
			continue
		}
		secs := parseUptimeWords(part)
		if secs == 0 && !strings.HasPrefix(part, "0") {
			return 0, false
		}
		d += time.Duration(secs) * time.Second
	}
	return d, true
}

// lldpCapabCodes maps the one-letter LLDP capability codes of IOS.
var lldpCapabCodes = map[string]string{
	"o": "other", "n/a": "other", "p": "repeater", "b": "bridge", "w": "wlan-access-point",
	"r": "router", "t": "telephone", "c": "docsis-cable-device", "s": "station",
}

// lldpCapabNames maps the capability names of EOS.
var lldpCapabNames = map[string]string{
	"other": "other", "repeater": "repeater", "bridge": "bridge", "wlanaccesspoint": "wlan-access-point",
	"router": "router", "telephone": "telephone", "docsis": "docsis-cable-device", "station": "station",
	"stationonly": "station",
}

// lldpCapab turns a comma-separated capability list into NAPALM's sorted
// names, using table; unknown entries are skipped.
func lldpCapab(list string, table map[string]string) []string {
	out := []string{}
	for c := range strings.SplitSeq(list, ",") {
		c = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(c), " ", ""))
		if v, ok := table[c]; ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// atof parses a float, def when it does not parse.
func atof(s string, def float64) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return def
	}
	return f
}

// atoi parses an int, def when it does not parse.
func atoi(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}

// asNumber parses an AS number, plain or asdot ("1.10" = 65546).
func asNumber(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if hi, lo, ok := strings.Cut(s, "."); ok {
		h, err1 := strconv.ParseInt(hi, 10, 64)
		l, err2 := strconv.ParseInt(lo, 10, 64)
		if err1 != nil || err2 != nil {
			return 0, fmt.Errorf("%w: AS number %q", ErrCommand, s)
		}
		return h*65536 + l, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: AS number %q", ErrCommand, s)
	}
	return n, nil
}

// configLines splits a configuration into lines, dropping trailing
// whitespace and carriage returns.
func configLines(config string) []string {
	config = strings.ReplaceAll(config, "\r\n", "\n")
	lines := strings.Split(strings.TrimRight(config, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return lines
}

// bgpConfig is what the running configuration tells about BGP neighbors.
type bgpConfig struct {
	descriptions map[string]string
	shutdown     map[string]bool
}

// parseBGPConfig reads "neighbor X description ..." and "neighbor X
// shutdown" lines of a "show running-config | section router bgp".
func parseBGPConfig(text string) bgpConfig {
	c := bgpConfig{descriptions: map[string]string{}, shutdown: map[string]bool{}}
	for l := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "neighbor" {
			continue
		}
		switch f[2] {
		case "description":
			_, rest, _ := strings.Cut(l, " description ")
			c.descriptions[f[1]] = strings.TrimSpace(rest)
		case "shutdown":
			c.shutdown[f[1]] = true
		}
	}
	return c
}

package devsim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Deterministic per-device facts. Devices form a chain: the "next" port of device i is cabled
// to the "prev" port of device i+1, with 10.0.0.0/31 links numbered by the lower device index.

const (
	mgmtGateway = "172.16.255.254"
	domainName  = "example.net"
)

// neighbor describes the device cabled to a local port.
type neighbor struct {
	index      int    // fleet index of the neighbor
	localPort  string // canonical local interface
	remotePort string // canonical remote interface
	localIP    string
	remoteIP   string
}

func (f *Fleet) hostnameOf(i int) string { return f.opts.HostnamePrefix + strconv.Itoa(i+1) }

func mgmtIP(i int) string     { return dotted(172<<24 | 16<<16 + uint32(i) + 1) }
func loopbackIP(i int) string { return dotted(10<<24 | 255<<16 + uint32(i) + 1) }

func linkIP(link, side int) string { return dotted(10<<24 + uint32(2*link+side)) }

func asnOf(i int) string {
	if 65001+i <= 65534 {
		return strconv.Itoa(65001 + i)
	}
	return strconv.FormatInt(4200000000+int64(i), 10)
}

// neighbors returns the cabled neighbors of device i (next first, then prev).
func (f *Fleet) neighbors(i int) []neighbor {
	next, prev := f.plat.nextPort, f.plat.prevPort
	var out []neighbor
	if i+1 < len(f.devices) {
		out = append(out, neighbor{index: i + 1, localPort: next, remotePort: prev, localIP: linkIP(i, 0), remoteIP: linkIP(i, 1)})
	}
	if i > 0 {
		out = append(out, neighbor{index: i - 1, localPort: prev, remotePort: next, localIP: linkIP(i-1, 1), remoteIP: linkIP(i-1, 0)})
	}
	return out
}

// macOf returns the hardware address of port number port on device i in Cisco dotted form.
func (f *Fleet) macOf(i, port int) string {
	return fmt.Sprintf("%s%02x.%02x%02x", f.plat.def.Identity.MACPrefix, i>>8&255, i&255, port&255)
}

// portNumber maps an interface name to the number used in its MAC address.
func portNumber(name string) int {
	_, num := splitIf(name)
	n := 0
	for i := 0; i < len(num) && num[i] >= '0' && num[i] <= '9'; i++ {
		n = n*10 + int(num[i]-'0')
	}
	if len(name) > 0 && name[0] == 'M' { // Management1
		n += 200
	}
	return n
}

func (f *Fleet) serialOf(i int) string {
	return fmt.Sprintf(f.plat.def.Identity.Serial, i+1)
}

// bootTime is when device i pretends to have booted.
func (f *Fleet) bootTime(i int) time.Time {
	return f.start.Add(-(3*24*time.Hour + 2*time.Hour + time.Duration(i%1000)*7*time.Minute))
}

// uptimeParts splits d into years, weeks, days, hours and minutes.
func uptimeParts(d time.Duration) (y, w, dd, h, m int) {
	mins := int(d / time.Minute)
	m = mins % 60
	hours := mins / 60
	h = hours % 24
	days := hours / 24
	y = days / 365
	days %= 365
	w = days / 7
	dd = days % 7
	return
}

// uptimeWords is an uptime in words: the non-zero years, weeks, days
// and hours, then the minutes (always), joined by sep; last, when not
// empty, joins the minutes instead (EOS: "1 day and 3 minutes").
func uptimeWords(d time.Duration, sep, last string) string {
	y, wk, dd, h, m := uptimeParts(d)
	var parts []string
	for _, p := range []struct {
		n    int
		unit string
	}{{y, "year"}, {wk, "week"}, {dd, "day"}, {h, "hour"}} {
		if p.n > 0 {
			parts = append(parts, plural(p.n, p.unit))
		}
	}
	mins := plural(m, "minute")
	switch {
	case len(parts) == 0:
		return mins
	case last != "":
		return strings.Join(parts, sep) + last + mins
	}
	return strings.Join(append(parts, mins), sep)
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

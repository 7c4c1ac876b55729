package target

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
)

// ipTarget is a parsed ipcidr target: Python's ip_address(tgt), or failing
// that ip_network(tgt) (strict: no host bits set).
type ipTarget struct {
	addr   netip.Addr
	prefix netip.Prefix
	isNet  bool
}

func (t ipTarget) proto() string {
	a := t.addr
	if t.isNet {
		a = t.prefix.Addr()
	}
	if a.Is4() {
		return "ipv4"
	}
	return "ipv6"
}

func parseIPTarget(s string) (ipTarget, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return ipTarget{addr: a}, true
	}
	p, ok := parsePyNetwork(s)
	if !ok {
		return ipTarget{}, false
	}
	return ipTarget{prefix: p, isNet: true}, true
}

// parsePyNetwork follows ipaddress.ip_network(s) with strict=True: one
// optional "/", a decimal prefix length (leading zeros allowed), or for
// IPv4 a dotted netmask or hostmask; host bits must be zero.
func parsePyNetwork(s string) (netip.Prefix, bool) {
	if strings.Count(s, "/") > 1 {
		return netip.Prefix{}, false
	}
	addrPart, maskPart, hasMask := strings.Cut(s, "/")
	a, err := netip.ParseAddr(addrPart)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	bits := a.BitLen()
	if hasMask {
		n, ok := parsePrefixLen(maskPart, a.BitLen())
		if !ok {
			if !a.Is4() {
				return netip.Prefix{}, false
			}
			n, ok = parseDottedMask(maskPart)
			if !ok {
				return netip.Prefix{}, false
			}
		}
		bits = n
	}
	p := netip.PrefixFrom(a, bits)
	if p.Masked().Addr() != a {
		return netip.Prefix{}, false
	}
	return p, true
}

func parsePrefixLen(s string, max int) (int, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return 0, true
	}
	if len(s) > 3 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > max {
		return 0, false
	}
	return n, true
}

func parseDottedMask(s string) (int, bool) {
	m, err := netip.ParseAddr(s)
	if err != nil || !m.Is4() {
		return 0, false
	}
	b := m.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	if n, ok := contiguousPrefix(v); ok {
		return n, true
	}
	return contiguousPrefix(^v)
}

// contiguousPrefix accepts a netmask of the form 1...10...0.
func contiguousPrefix(v uint32) (int, bool) {
	n := 0
	for n < 32 && v&(1<<(31-n)) != 0 {
		n++
	}
	if n < 32 && v<<n != 0 {
		return 0, false
	}
	return n, true
}

// pyAddrString is str(ipaddress.ip_address(...)) in Python 3.11: dotted
// quad, or compressed lowercase hextets (IPv4-mapped addresses included)
// with "%zone".
func pyAddrString(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	b := a.As16()
	var h [8]uint16
	for i := range h {
		h[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	bestStart, bestLen, curStart, curLen := -1, 0, -1, 0
	for i, x := range h {
		if x == 0 {
			if curStart < 0 {
				curStart = i
			}
			curLen++
			if curLen > bestLen {
				bestStart, bestLen = curStart, curLen
			}
		} else {
			curStart, curLen = -1, 0
		}
	}
	parts := make([]string, 0, 9)
	for i := 0; i < 8; i++ {
		if bestLen > 1 && i == bestStart {
			if i == 0 {
				parts = append(parts, "")
			}
			parts = append(parts, "")
			if bestStart+bestLen == 8 {
				parts = append(parts, "")
			}
			i += bestLen - 1
			continue
		}
		parts = append(parts, strconv.FormatUint(uint64(h[i]), 16))
	}
	s := strings.Join(parts, ":")
	if z := a.Zone(); z != "" {
		s += "%" + z
	}
	return s
}

// pyAddrFromItem is ipaddress.ip_address(item) for a grain list member.
func pyAddrFromItem(item any) (netip.Addr, bool) {
	switch v := item.(type) {
	case string:
		a, err := netip.ParseAddr(v)
		return a, err == nil
	case bool:
		return netip.Addr{}, false
	}
	k, _, u, neg, _ := pyNumber(item)
	if k != 1 || neg {
		return netip.Addr{}, false
	}
	if u < 1<<32 {
		return netip.AddrFrom4([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}), true
	}
	var b [16]byte
	for j := 0; j < 8; j++ {
		b[15-j] = byte(u >> (8 * j))
	}
	return netip.AddrFrom16(b), true
}

// pyContains is Python's `s in container` for a grain value.
func pyContains(container any, s string) (bool, error) {
	switch c := container.(type) {
	case string:
		return strings.Contains(c, s), nil
	}
	if l, ok := asList(container); ok {
		for _, e := range l {
			if py.Equal(e, s) {
				return true, nil
			}
		}
		return false, nil
	}
	if d, ok := asDict(container); ok {
		return dictHasStr(d, s), nil
	}
	return false, fmt.Errorf("%w: argument of type %T is not a container", ErrInvalidAddress, container)
}

// inSubnet is salt.utils.network.in_subnet(cidr, addrs): any member (or the
// single value) parsed as an address lies in the network. An unparsable
// member reached before a match is an error, as in Python.
func inSubnet(p netip.Prefix, addrs any) (bool, error) {
	l, ok := asList(addrs)
	if !ok {
		if addrs == nil {
			return false, nil
		}
		l = []any{addrs}
	}
	for _, item := range l {
		a, ok := pyAddrFromItem(item)
		if !ok {
			return false, fmt.Errorf("%w: %v", ErrInvalidAddress, pyfmt.Str(item))
		}
		if p.Contains(a.WithZone("")) {
			return true, nil
		}
	}
	return false, nil
}

// ipcidrMatch is ipcidr_match.match against the minion's grains.
func ipcidrMatch(tgt any, grains any) (bool, error) {
	s, ok := tgt.(string)
	if !ok {
		return false, soft(fmt.Errorf("%w: ipcidr target is %T, not a string", ErrInvalidTarget, tgt))
	}
	t, ok := parseIPTarget(s)
	if !ok {
		return false, soft(fmt.Errorf("%w: invalid IP/CIDR %q", ErrInvalidTarget, s))
	}
	return t.matchGrains(grains)
}

func (t ipTarget) matchGrains(grains any) (bool, error) {
	gd, ok := asDict(grains)
	if !ok {
		return false, nil
	}
	val, ok := gd.get(t.proto())
	if !ok {
		return false, nil
	}
	if !t.isNet {
		return pyContains(val, pyAddrString(t.addr))
	}
	return inSubnet(t.prefix, val)
}

// Package procnet reads Linux's /proc/net/tcp and tcp6 tables: the
// address decoding the master's presence check and the status.master
// execution module share.
package procnet

import (
	"encoding/hex"
	"net"
	"strconv"
	"strings"
)

// ParseAddr decodes a table's "ADDR:PORT" field, such as "0100007F:1151"
// (IPv4, or 32 hex digits for IPv6, each 32-bit word in host byte order,
// little-endian here).
func ParseAddr(s string) (net.IP, int, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return nil, 0, false
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, 0, false
	}
	ip := make(net.IP, len(raw))
	for w := 0; w < len(raw); w += 4 {
		ip[w], ip[w+1], ip[w+2], ip[w+3] = raw[w+3], raw[w+2], raw[w+1], raw[w]
	}
	return ip, int(port), true
}

// AddrText is the text of a decoded address: IPv4 (IPv4-mapped IPv6
// addresses included) in dotted form, else IPv6's.
func AddrText(ip net.IP) string {
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.String()
}

package netinfo

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"syscall"
	"testing"
)

// TestLoopback reads the real kernel tables: every Linux network namespace
// has "lo" with 127.0.0.1/8.
func TestLoopback(t *testing.T) {
	links, err := Dump(syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	if err != nil {
		t.Skipf("netlink unavailable: %v", err)
	}
	var lo *Link
	for i := range links {
		l, ok, err := ParseLink(&links[i])
		if err != nil {
			t.Fatal(err)
		}
		if ok && l.Name == "lo" {
			lo = &l
		}
	}
	if lo == nil {
		t.Fatal("no lo link")
	}
	if lo.Type != 772 || LinkAddrString(lo.HWAddr, lo.Type) != "00:00:00:00:00:00" || lo.Index <= 0 {
		t.Errorf("lo = %+v", *lo)
	}
	addrs, err := Dump(syscall.RTM_GETADDR, syscall.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range addrs {
		a, ok, err := ParseAddr(&addrs[i])
		if err != nil {
			t.Fatal(err)
		}
		ip, _ := netip.AddrFromSlice(a.Shown())
		if ok && a.Index == lo.Index && ip == netip.MustParseAddr("127.0.0.1") {
			found = true
			if a.Family != syscall.AF_INET || a.PrefixLen != 8 || a.Secondary() || a.Label != "lo" {
				t.Errorf("127.0.0.1 = %+v", a)
			}
		}
	}
	if !found {
		t.Error("no 127.0.0.1 on lo")
	}
	routes, err := Dump(syscall.RTM_GETROUTE, syscall.AF_INET)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range routes {
		if _, ok, err := ParseRoute(&routes[i]); err != nil {
			t.Fatal(err)
		} else if ok {
			n++
		}
	}
	if n == 0 {
		t.Error("no IPv4 routes (the local table holds at least 127.0.0.1)")
	}
}

func TestParseOtherAndBadMessages(t *testing.T) {
	other := syscall.NetlinkMessage{Header: syscall.NlMsghdr{Type: syscall.NLMSG_DONE}, Data: make([]byte, 64)}
	if _, ok, err := ParseLink(&other); ok || err != nil {
		t.Errorf("ParseLink(DONE) = %v, %v", ok, err)
	}
	if _, ok, err := ParseAddr(&other); ok || err != nil {
		t.Errorf("ParseAddr(DONE) = %v, %v", ok, err)
	}
	if _, ok, err := ParseRoute(&other); ok || err != nil {
		t.Errorf("ParseRoute(DONE) = %v, %v", ok, err)
	}
	// an attribute claiming more bytes than the message holds
	data := make([]byte, syscall.SizeofIfInfomsg+4)
	binary.NativeEndian.PutUint16(data[syscall.SizeofIfInfomsg:], 200)
	binary.NativeEndian.PutUint16(data[syscall.SizeofIfInfomsg+2:], syscall.IFLA_IFNAME)
	bad := syscall.NetlinkMessage{Header: syscall.NlMsghdr{Type: syscall.RTM_NEWLINK}, Data: data}
	if _, ok, err := ParseLink(&bad); ok || !errors.Is(err, ErrNetlink) {
		t.Errorf("ParseLink(bad) = %v, %v", ok, err)
	}
}

func TestLinkAddrString(t *testing.T) {
	tests := []struct {
		b    []byte
		typ  uint16
		want string
	}{
		{[]byte{0xde, 0xad, 0xbe, 0xef, 0, 1}, 1, "de:ad:be:ef:00:01"},
		{[]byte{10, 0, 0, 1}, ArphrdIPGRE, "10.0.0.1"},
		{[]byte{10, 0, 0, 1}, ArphrdSit, "10.0.0.1"},
		{[]byte{10, 0, 0, 1}, 1, "0a:00:00:01"},
		{netip.MustParseAddr("2001:db8::1").AsSlice(), ArphrdTunnel6, "2001:db8::1"},
		{nil, 1, ""},
	}
	for _, tc := range tests {
		if got := LinkAddrString(tc.b, tc.typ); got != tc.want {
			t.Errorf("LinkAddrString(%x, %d) = %q, want %q", tc.b, tc.typ, got, tc.want)
		}
	}
}

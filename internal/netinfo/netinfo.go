// Package netinfo reads network links, addresses and routes from the Linux
// kernel over rtnetlink, for the core grains and the network execution
// module. It decodes the kernel's messages into plain values; what to keep
// and how to present it (Salt's shapes, limits) is the callers' business.
//
// Dump sends one dump request; ParseLink, ParseAddr and ParseRoute decode
// one message of the answer each, and report attribute errors so that a
// caller can skip the message or give up, as it prefers.
package netinfo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"syscall"
)

// ErrNetlink wraps failures of the netlink socket or of its messages.
var ErrNetlink = errors.New("netinfo: netlink")

// Link-layer (ARPHRD_*) types whose addresses are IP addresses.
const (
	ArphrdTunnel  = 768
	ArphrdTunnel6 = 769
	ArphrdSit     = 776
	ArphrdIPGRE   = 778
	ArphrdIP6GRE  = 823
)

// Linux constants not exported by package syscall.
const (
	iflaLinkNetnsid = 37 // IFLA_LINK_NETNSID
	ifaFlags        = 8  // IFA_FLAGS
	ifaFSecondary   = 0x01
	rtaTable        = 15 // RTA_TABLE
)

// Dump runs one rtnetlink dump request (syscall.RTM_GETLINK, RTM_GETADDR or
// RTM_GETROUTE) for an address family (syscall.AF_UNSPEC for all) and
// returns the answer's messages. Errors wrap ErrNetlink.
func Dump(proto, family int) ([]syscall.NetlinkMessage, error) {
	tab, err := syscall.NetlinkRIB(proto, family)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNetlink, os.NewSyscallError("netlinkrib", err))
	}
	msgs, err := syscall.ParseNetlinkMessage(tab)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNetlink, os.NewSyscallError("parsenetlinkmessage", err))
	}
	return msgs, nil
}

// Link is one network interface (an RTM_NEWLINK message).
type Link struct {
	Index int32
	// Type is the link-layer type (ARPHRD_*).
	Type uint16
	// Up reports the IFF_UP flag.
	Up   bool
	Name string
	// HWAddr is the link-layer address; nil when the link has none.
	HWAddr []byte
	// Parent is IFLA_LINK, the index of the link this one is stacked on,
	// when HasParent; ParentNetns means that index belongs to another
	// network namespace (IFLA_LINK_NETNSID is present).
	Parent      uint32
	HasParent   bool
	ParentNetns bool
}

// ParseLink decodes an RTM_NEWLINK message; ok is false for any other
// message. err (wrapping ErrNetlink) reports attributes that do not parse.
func ParseLink(m *syscall.NetlinkMessage) (l Link, ok bool, err error) {
	if m.Header.Type != syscall.RTM_NEWLINK || len(m.Data) < syscall.SizeofIfInfomsg {
		return Link{}, false, nil
	}
	l = Link{
		Type:  binary.NativeEndian.Uint16(m.Data[2:4]),
		Index: int32(binary.NativeEndian.Uint32(m.Data[4:8])),
		Up:    binary.NativeEndian.Uint32(m.Data[8:12])&syscall.IFF_UP != 0,
	}
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return Link{}, false, fmt.Errorf("%w: link attributes: %w", ErrNetlink, err)
	}
	for _, a := range attrs {
		switch a.Attr.Type {
		case syscall.IFLA_IFNAME:
			l.Name = strings.TrimRight(string(a.Value), "\x00")
		case syscall.IFLA_ADDRESS:
			if len(a.Value) > 0 {
				l.HWAddr = a.Value
			}
		case syscall.IFLA_LINK:
			if len(a.Value) >= 4 {
				l.Parent, l.HasParent = binary.NativeEndian.Uint32(a.Value[:4]), true
			}
		case iflaLinkNetnsid:
			l.ParentNetns = true
		}
	}
	return l, true, nil
}

// Addr is one interface address (an RTM_NEWADDR message).
type Addr struct {
	// Index is the link's index.
	Index int32
	// Family is syscall.AF_INET or syscall.AF_INET6 (others are possible).
	Family    uint8
	PrefixLen int
	Scope     uint8
	// Flags are the IFA_F_* flags (IFA_FLAGS when present).
	Flags uint32
	// Local and Address are IFA_LOCAL and IFA_ADDRESS (the peer on a
	// point-to-point link); nil when absent.
	Local, Address []byte
	// Broadcast is IFA_BROADCAST, nil when absent.
	Broadcast []byte
	// Label is IFA_LABEL.
	Label string
}

// Shown is the address `ip addr` prints first: IFA_LOCAL, else
// IFA_ADDRESS (nil when the message has neither).
func (a *Addr) Shown() []byte {
	if a.Local != nil {
		return a.Local
	}
	return a.Address
}

// Secondary reports the IFA_F_SECONDARY flag.
func (a *Addr) Secondary() bool { return a.Flags&ifaFSecondary != 0 }

// ParseAddr decodes an RTM_NEWADDR message; ok is false for any other
// message. err (wrapping ErrNetlink) reports attributes that do not parse.
func ParseAddr(m *syscall.NetlinkMessage) (a Addr, ok bool, err error) {
	if m.Header.Type != syscall.RTM_NEWADDR || len(m.Data) < syscall.SizeofIfAddrmsg {
		return Addr{}, false, nil
	}
	a = Addr{
		Family:    m.Data[0],
		PrefixLen: int(m.Data[1]),
		Flags:     uint32(m.Data[2]),
		Scope:     m.Data[3],
		Index:     int32(binary.NativeEndian.Uint32(m.Data[4:8])),
	}
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return Addr{}, false, fmt.Errorf("%w: address attributes: %w", ErrNetlink, err)
	}
	for _, at := range attrs {
		switch at.Attr.Type {
		case syscall.IFA_LOCAL:
			a.Local = at.Value
		case syscall.IFA_ADDRESS:
			a.Address = at.Value
		case syscall.IFA_BROADCAST:
			a.Broadcast = at.Value
		case syscall.IFA_LABEL:
			a.Label = strings.TrimRight(string(at.Value), "\x00")
		case ifaFlags:
			if len(at.Value) >= 4 {
				a.Flags = binary.NativeEndian.Uint32(at.Value[:4])
			}
		}
	}
	return a, true, nil
}

// Route is one route (an RTM_NEWROUTE message), with the fields needed to
// find default routes.
type Route struct {
	// DstLen is the destination prefix length (0 for a default route).
	DstLen uint8
	// Table is the routing table (RTA_TABLE when present).
	Table uint32
	// Type is the route type (RTN_*).
	Type uint8
	// Gateway is RTA_GATEWAY, nil when absent.
	Gateway []byte
}

// ParseRoute decodes an RTM_NEWROUTE message; ok is false for any other
// message. err (wrapping ErrNetlink) reports attributes that do not parse.
func ParseRoute(m *syscall.NetlinkMessage) (r Route, ok bool, err error) {
	if m.Header.Type != syscall.RTM_NEWROUTE || len(m.Data) < syscall.SizeofRtMsg {
		return Route{}, false, nil
	}
	r = Route{DstLen: m.Data[1], Table: uint32(m.Data[4]), Type: m.Data[7]}
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return Route{}, false, fmt.Errorf("%w: route attributes: %w", ErrNetlink, err)
	}
	for _, a := range attrs {
		switch a.Attr.Type {
		case rtaTable:
			if len(a.Value) >= 4 {
				r.Table = binary.NativeEndian.Uint32(a.Value)
			}
		case syscall.RTA_GATEWAY:
			r.Gateway = a.Value
		}
	}
	return r, true, nil
}

// LinkAddrString prints a link-layer address of an ARPHRD type the way
// iproute2's ll_addr_n2a does: tunnel endpoints as IP addresses, anything
// else as colon-separated hex bytes.
func LinkAddrString(b []byte, typ uint16) string {
	if len(b) == 4 && (typ == ArphrdTunnel || typ == ArphrdSit || typ == ArphrdIPGRE) {
		return netip.AddrFrom4([4]byte(b)).String()
	}
	if len(b) == 16 && (typ == ArphrdTunnel6 || typ == ArphrdIP6GRE) {
		return netip.AddrFrom16([16]byte(b)).String()
	}
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf("%02x", c)
	}
	return strings.Join(parts, ":")
}

package master

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/procnet"
	"github.com/gsalt/gsalt/wire/payload"
)

// ConnectedIDs returns the minions Salt's presence detection considers
// connected (CkMinions.connected_ids), each with the address it was matched
// on: the remote addresses of established TCP connections to the publish
// port (from /proc/net/tcp and tcp6) are compared with the ipv4 and ipv6
// grains in the minion data cache; a loopback peer stands for every
// non-loopback address of this host. Without minion_data_cache nobody is
// connected, as in Salt.
func (m *Master) ConnectedIDs() (map[string]string, error) {
	out := map[string]string{}
	if !m.cfg.MinionDataCache {
		return out, nil
	}
	addrs, err := remoteAddrs(m.publishPort)
	if err != nil {
		return nil, err
	}
	if addrs["127.0.0.1"] {
		delete(addrs, "127.0.0.1")
		for _, a := range hostAddrs(false) {
			addrs[a] = true
		}
	}
	if addrs["::1"] {
		delete(addrs, "::1")
		for _, a := range hostAddrs(true) {
			addrs[a] = true
		}
	}
	if len(addrs) == 0 {
		return out, nil
	}
	for _, id := range m.data.ids() {
		g, ok := m.data.grains(id).(*payload.Map)
		if !ok {
			continue
		}
		for _, key := range []string{"ipv4", "ipv6"} {
			if _, done := out[id]; done {
				break
			}
			for _, ip := range g.List(key) {
				if s := payload.Text(ip); addrs[s] {
					out[id] = s
					break
				}
			}
		}
	}
	return out, nil
}

// connectedCount is keys.Options.ConnectedMinions for max_minions.
func (m *Master) connectedCount(id string) (int, bool) {
	ids, err := m.ConnectedIDs()
	if err != nil {
		return 0, false
	}
	_, ok := ids[id]
	return len(ids), ok
}

// ConnectedCounter returns a function for keys.Options.ConnectedMinions
// (max_minions), usable before the Master exists: it reports
// nobody connected while get returns nil.
func ConnectedCounter(get func() *Master) func(id string) (int, bool) {
	return func(id string) (int, bool) {
		m := get()
		if m == nil {
			return 0, false
		}
		return m.connectedCount(id)
	}
}

// remoteAddrs lists the remote addresses of established TCP connections
// whose local port is port (salt.utils.network.local_port_tcp).
func remoteAddrs(port int) (map[string]bool, error) {
	out := map[string]bool{}
	var errs []error
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := scanProcNet(f, port, out); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

func scanProcNet(path string, port int, out map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "01" { // ESTABLISHED
			continue
		}
		_, lport, ok := procnet.ParseAddr(fields[1])
		if !ok || lport != port {
			continue
		}
		ip, _, ok := procnet.ParseAddr(fields[2])
		if !ok {
			continue
		}
		out[procnet.AddrText(ip)] = true
	}
	return sc.Err()
}

// hostAddrs lists this host's non-loopback addresses of one family.
func hostAddrs(v6 bool) []string {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range as {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() {
			continue
		}
		if (n.IP.To4() == nil) == v6 {
			out = append(out, n.IP.String())
		}
	}
	return out
}

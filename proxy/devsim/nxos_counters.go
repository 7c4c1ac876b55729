package devsim

import (
	"encoding/json"
	"strconv"
	"strings"
)

// nxosInterfaceJSON answers "show interface | json" (every interface with
// its state and counters, NX-OS's string-valued fields: eth_* for Ethernet
// and port-channels, mgmt_* for mgmt0) and "show interface counters
// detailed | json" (the interfaces with a non-zero counter, only those
// counters), the forms NAPALM nxos_ssh's get_interfaces_counters reads.
func nxosInterfaceJSON(s *shell, args []string) string {
	detailed := false
	switch strings.Join(args, " ") {
	case "":
	case "counters detailed":
		detailed = true
	default:
		return s.p.errUnconverted
	}
	s.dev.mu.Lock()
	ifs := s.p.d.interfaces(s.dev.state().running)
	type row struct {
		in        ifaceInfo
		admin, up bool
	}
	rows := make([]row, 0, len(ifs))
	for _, in := range ifs {
		admin, up := s.nxosIfState(in)
		rows = append(rows, row{in, admin, up})
	}
	s.dev.mu.Unlock()
	itoa := strconv.Itoa
	var out []map[string]any
	for _, r := range rows {
		name := r.in.name
		eth := strings.HasPrefix(name, "Ethernet") || strings.HasPrefix(name, "port-channel")
		mgmt := strings.HasPrefix(name, "mgmt")
		if detailed && !eth && !mgmt {
			continue
		}
		// the counters of the text "show interface" (keyed like it by port number)
		inPk, inB, outPk, outB := s.liveCounters("Ethernet"+itoa(nxosPortNumber(name)), r.admin && r.up)
		e := map[string]any{"interface": name}
		switch {
		case detailed:
			if inPk == 0 && outPk == 0 {
				out = append(out, e)
				continue
			}
			if mgmt {
				e["mgmt_in_pkts"], e["mgmt_in_bytes"], e["mgmt_out_pkts"], e["mgmt_out_bytes"] = itoa(inPk), itoa(inB), itoa(outPk), itoa(outB)
			} else {
				e["eth_inpkts"], e["eth_inucast"], e["eth_inbytes"] = itoa(inPk), itoa(inPk), itoa(inB)
				e["eth_outpkts"], e["eth_outucast"], e["eth_outbytes"] = itoa(outPk), itoa(outPk), itoa(outB)
			}
		default:
			state, admin := "up", "up"
			if !r.admin {
				state, admin = "down", "down"
			} else if !r.up {
				state = "down"
			}
			e["state"], e["admin_state"] = state, admin
			switch {
			case mgmt:
				e["eth_mtu"] = itoa(r.in.mtu)
				e["mgmt_in_pkts"], e["mgmt_in_bytes"], e["mgmt_in_mcast"] = itoa(inPk), itoa(inB), "0"
				e["mgmt_out_pkts"], e["mgmt_out_bytes"], e["mgmt_out_mcast"] = itoa(outPk), itoa(outB), "0"
			case eth:
				e["eth_mtu"] = itoa(r.in.mtu)
				e["eth_inucast"], e["eth_inmcast"], e["eth_inbcast"], e["eth_inpkts"], e["eth_inbytes"] = itoa(inPk), "0", "0", itoa(inPk), itoa(inB)
				e["eth_inerr"], e["eth_indiscard"] = "0", "0"
				e["eth_outucast"], e["eth_outmcast"], e["eth_outbcast"], e["eth_outpkts"], e["eth_outbytes"] = itoa(outPk), "0", "0", itoa(outPk), itoa(outB)
				e["eth_outerr"], e["eth_outdiscard"] = "0", "0"
			default:
				e["eth_mtu"] = itoa(r.in.mtu)
			}
		}
		out = append(out, e)
	}
	b, err := json.Marshal(map[string]any{"TABLE_interface": map[string]any{"ROW_interface": out}})
	if err != nil {
		return "{}"
	}
	return string(b)
}

package driver

import (
	"context"
	"regexp"
	"strconv"
	"strings"
)

var (
	nxosOptPortRe   = regexp.MustCompile(`(?m)^(Ether.*?)[ ]*?$`)
	nxosOptVendorRe = regexp.MustCompile(`(?m)name is (.*)$`)
	nxosOptPartRe   = regexp.MustCompile(`(?m)part number is (.*)$`)
	nxosOptRevRe    = regexp.MustCompile(`(?m)revision is (.*)$`)
	nxosOptSerialRe = regexp.MustCompile(`(?m)serial number is (.*)$`)
	nxosOptTypeRe   = regexp.MustCompile(`(?m)type is (.*)$`)
	nxosOptRxRe     = regexp.MustCompile(`Rx Power[ ]+(?:(\S+?)[ ]+dBm|(N.A))`)
	nxosOptTxRe     = regexp.MustCompile(`Tx Power[ ]+(?:(\S+?)[ ]+dBm|(N.A))`)
	nxosOptCurRe    = regexp.MustCompile(`Current[ ]+(?:(\S+?)[ ]+mA|(N.A))`)
	nxosEtherLineRe = regexp.MustCompile(`(?m)^Ether`)
)

// nxosConnector is NAPALM nxos_ssh's connector_type_map.
var nxosConnector = map[string]string{
	"1000base-LH": "LC_CONNECTOR", "1000base-SX": "LC_CONNECTOR", "1000base-T": "Unknown",
	"10Gbase-LR": "LC_CONNECTOR", "10Gbase-SR": "LC_CONNECTOR",
	"SFP-H10GB-CU1M": "DAC_CONNECTOR", "SFP-H10GB-CU1.45M": "DAC_CONNECTOR",
	"SFP-H10GB-CU3M": "DAC_CONNECTOR", "SFP-H10GB-CU3.45M": "DAC_CONNECTOR",
}

// GetOptics implements OpticsGetter like NAPALM nxos_ssh: show interface
// transceiver details, one section per Ethernet port with a transceiver,
// its inventory under "state" and one channel of readings when the port
// has DOM (-100.0 for N/A).
func (d *nxosDriver) GetOptics(ctx context.Context) (map[string]Optics, error) {
	var res map[string]Optics
	err := d.s.query(ctx, func(o runner) error {
		out, err := o.show("show interface transceiver details")
		if err != nil {
			return err
		}
		res = parseNXOSOptics(out)
		return nil
	})
	return res, err
}

func parseNXOSOptics(out string) map[string]Optics {
	res := map[string]Optics{}
	starts := nxosEtherLineRe.FindAllStringIndex(out, -1)
	for i, st := range starts {
		end := len(out)
		if i+1 < len(starts) {
			end = starts[i+1][0] - 1 // the "\n" before the next section
		}
		sec := out[st[0]:end]
		if strings.Contains(sec, "transceiver is not present") || strings.Contains(sec, "transceiver is not applicable") {
			continue
		}
		grab := func(re *regexp.Regexp) string {
			if m := re.FindStringSubmatch(sec); m != nil {
				return strings.TrimSpace(m[1])
			}
			return ""
		}
		typ := ""
		if m := nxosOptTypeRe.FindStringSubmatch(sec); m != nil {
			typ = m[1]
		}
		conn, ok := nxosConnector[typ]
		if !ok {
			conn = "Unknown"
		}
		inv := &OpticsInventory{Vendor: grab(nxosOptVendorRe), VendorPart: grab(nxosOptPartRe), VendorRev: grab(nxosOptRevRe),
			SerialNo: grab(nxosOptSerialRe), ConnectorType: conn}
		opt := Optics{PhysicalChannels: OpticsChannels{Channel: []OpticsChannel{}}, State: inv}
		if !strings.Contains(sec, "DOM is not supported") {
			reading := func(re *regexp.Regexp) float64 {
				m := re.FindStringSubmatch(sec)
				if m == nil {
					return -100
				}
				v := m[1]
				if v == "" {
					v = m[2]
				}
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return -100
				}
				return f
			}
			stt := OpticsState{
				InputPower:       OpticsStat{Instant: reading(nxosOptRxRe), Avg: -100, Min: -100, Max: -100},
				OutputPower:      OpticsStat{Instant: reading(nxosOptTxRe), Avg: -100, Min: -100, Max: -100},
				LaserBiasCurrent: OpticsStat{Instant: reading(nxosOptCurRe)},
			}
			opt.PhysicalChannels.Channel = append(opt.PhysicalChannels.Channel, OpticsChannel{Index: 0, State: stt})
		}
		port := nxosOptPortRe.FindStringSubmatch(sec)[1]
		res[port] = opt
	}
	return res
}

// nxosCounterMap is NAPALM nxos_ssh's if_mapping: the JSON field of each
// counter for Ethernet/port-channel and management interfaces ("" = none).
var nxosCounterMap = []struct {
	re     *regexp.Regexp
	fields [12]string
}{
	{regexp.MustCompile(`^(Ether|port-channel).*`), [12]string{"eth_outerr", "eth_inerr", "eth_outdiscard", "eth_indiscard",
		"eth_outbytes", "eth_inbytes", "eth_outucast", "eth_inucast", "eth_outmcast", "eth_inmcast", "eth_outbcast", "eth_inbcast"}},
	{regexp.MustCompile(`^mgm.*`), [12]string{"", "", "", "", "mgmt_out_bytes", "mgmt_in_bytes", "", "", "mgmt_out_mcast", "mgmt_in_mcast", "", ""}},
}

func (c *InterfaceCounters) fields() [12]*int64 {
	return [12]*int64{&c.TxErrors, &c.RxErrors, &c.TxDiscards, &c.RxDiscards, &c.TxOctets, &c.RxOctets,
		&c.TxUnicastPackets, &c.RxUnicastPackets, &c.TxMulticastPackets, &c.RxMulticastPackets, &c.TxBroadcastPackets, &c.RxBroadcastPackets}
}

func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), true
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// GetInterfacesCounters implements CountersGetter like NAPALM nxos_ssh:
// every interface of show interface | json (0 for what it lacks), updated
// from show interface counters detailed | json.
func (d *nxosDriver) GetInterfacesCounters(ctx context.Context) (map[string]InterfaceCounters, error) {
	res := map[string]InterfaceCounters{}
	err := d.s.query(ctx, func(o runner) error {
		det, err := nxosTable(o, "show interface counters detailed | json", "TABLE_interface", "ROW_interface")
		if err != nil {
			return err
		}
		ifs, err := nxosTable(o, "show interface | json", "TABLE_interface", "ROW_interface")
		if err != nil {
			return err
		}
		apply := func(rows []map[string]any, fresh bool) {
			for _, r := range rows {
				name := str(r["interface"])
				for _, m := range nxosCounterMap {
					if !m.re.MatchString(name) {
						continue
					}
					c, seen := res[name]
					if !fresh && !seen {
						break // NAPALM would fail on an interface show interface lacks
					}
					if fresh {
						c = InterfaceCounters{}
					}
					ptrs := c.fields()
					for i, f := range m.fields {
						if n, ok := jsonInt(r[f]); ok && f != "" {
							*ptrs[i] = n
						}
					}
					res[name] = c
					break
				}
			}
		}
		apply(ifs, true)
		apply(det, false)
		return nil
	})
	return res, err
}

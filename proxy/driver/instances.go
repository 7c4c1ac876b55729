package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// NetworkInstance is one entry of NAPALM get_network_instances.
type NetworkInstance struct {
	Name       string                `json:"name"`
	Type       string                `json:"type"`
	State      NetworkInstanceState  `json:"state"`
	Interfaces NetworkInstanceIfaces `json:"interfaces"`
}

// NetworkInstanceState holds an instance's route distinguisher.
type NetworkInstanceState struct {
	RouteDistinguisher string `json:"route_distinguisher"`
}

// NetworkInstanceIfaces lists an instance's interfaces (values are empty
// objects, as in NAPALM).
type NetworkInstanceIfaces struct {
	Interface map[string]struct{} `json:"interface"`
}

// NetworkInstancesGetter is implemented by drivers with
// get_network_instances; name selects one instance ("" = all).
type NetworkInstancesGetter interface {
	GetNetworkInstances(ctx context.Context, name string) (map[string]NetworkInstance, error)
}

func newInstance(name, rd string, ifaces map[string]struct{}) NetworkInstance {
	t := "L3VRF"
	if name == "default" {
		t = "DEFAULT_INSTANCE"
	}
	if ifaces == nil {
		ifaces = map[string]struct{}{}
	}
	return NetworkInstance{Name: name, Type: t, State: NetworkInstanceState{RouteDistinguisher: rd}, Interfaces: NetworkInstanceIfaces{Interface: ifaces}}
}

// pickInstance applies get_network_instances' name argument.
func pickInstance(all map[string]NetworkInstance, name string) map[string]NetworkInstance {
	if name == "" {
		return all
	}
	if v, ok := all[name]; ok {
		return map[string]NetworkInstance{name: v}
	}
	return map[string]NetworkInstance{}
}

var iosVRFHeadRe = regexp.MustCompile(`(?s)^VRF (\S+).*RD (.*?);`)

// GetNetworkInstances implements NetworkInstancesGetter like NAPALM ios:
// show vrf detail and, for the default instance, show ip interface brief
// less the interfaces of a VRF.
func (d *iosDriver) GetNetworkInstances(ctx context.Context, name string) (map[string]NetworkInstance, error) {
	var res map[string]NetworkInstance
	err := d.s.query(ctx, func(o runner) error {
		det, _, err := o.send("show vrf detail")
		if err != nil {
			return err
		}
		det = iosPostprocess(det)
		brief, err := o.show("show ip interface brief")
		if err != nil {
			return err
		}
		res, err = parseIOSNetworkInstances(det, iosPostprocess(brief))
		return err
	})
	if err != nil {
		return nil, err
	}
	if name != "" {
		if v, ok := res[name]; ok {
			return map[string]NetworkInstance{name: v}, nil
		}
		return nil, fmt.Errorf("%w: the vrf %s does not exist", ErrCommand, name)
	}
	return res, nil
}

func parseIOSNetworkInstances(det, brief string) (map[string]NetworkInstance, error) {
	def := map[string]struct{}{}
	for l := range strings.SplitSeq(strings.TrimSpace(brief), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.Contains(l, "Interface ") {
			continue
		}
		def[f[0]] = struct{}{}
	}
	res := map[string]NetworkInstance{"default": newInstance("default", "", def)}
	if det == "" || strings.Contains(det, "Invalid input detected") {
		return res, nil
	}
	for vrf := range strings.SplitSeq(det, "\n\n") {
		first, _, _ := strings.Cut(vrf, "Address family")
		m := iosVRFHeadRe.FindStringSubmatch(first)
		if m == nil {
			return nil, fmt.Errorf("%w: show vrf detail: unexpected section %q", ErrCommand, firstLine(first))
		}
		rd := m[2]
		if rd == "<not set>" {
			rd = ""
		}
		ifs := map[string]struct{}{}
		if _, after, ok := strings.Cut(first, "Interfaces:"); ok && !strings.Contains(first, "No interfaces") {
			for _, i := range strings.Fields(after) {
				ifs[canonicalInterface(i, false)] = struct{}{}
			}
		}
		for i := range ifs {
			delete(def, i)
		}
		res[m[1]] = newInstance(m[1], rd, ifs)
	}
	return res, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// GetNetworkInstances implements NetworkInstancesGetter like NAPALM eos
// (show vrf in JSON; a default instance from the routed interfaces when the
// device lists none).
func (d *eosDriver) GetNetworkInstances(ctx context.Context, name string) (map[string]NetworkInstance, error) {
	res := map[string]NetworkInstance{}
	all := map[string]struct{}{}
	err := d.s.query(ctx, func(o runner) error {
		var v struct {
			VRFs map[string]struct {
				RD         any      `json:"routeDistinguisher"`
				Interfaces []string `json:"interfaces"`
			} `json:"vrfs"`
		}
		if err := showJSON(o, "show vrf", &v); err != nil {
			return err
		}
		for n, vrf := range v.VRFs {
			rd := fmt.Sprint(vrf.RD)
			if vrf.RD == nil || rd == "<not set>" || rd == "None" {
				rd = ""
			}
			ifs := map[string]struct{}{}
			for _, raw := range vrf.Interfaces {
				for i := range strings.SplitSeq(raw, ",") {
					if i = strings.TrimSpace(i); i != "" {
						ifs[i] = struct{}{}
						all[i] = struct{}{}
					}
				}
			}
			res[n] = newInstance(n, rd, ifs)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := res["default"]; !ok {
		ips, err := d.GetInterfacesIP(ctx)
		if err != nil {
			return nil, err
		}
		def := map[string]struct{}{}
		for i := range ips {
			if _, ok := all[i]; !ok {
				def[i] = struct{}{}
			}
		}
		res["default"] = newInstance("default", "", def)
	}
	return pickInstance(res, name), nil
}

// nxosTable runs an NX-OS "| json" command and returns the rows of
// TABLE_<table>.ROW_<row> (a single row object becomes a list of one, as
// NAPALM's _get_command_table does).
func nxosTable(o runner, cmd, table, row string) ([]map[string]any, error) {
	out, err := o.show(cmd)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(jsonBody(out)), &top); err != nil {
		return nil, o.errf(ErrCommand, cmd, fmt.Errorf("bad JSON from the device: %w", err))
	}
	var t map[string]json.RawMessage
	if raw, ok := top[table]; !ok || json.Unmarshal(raw, &t) != nil {
		return nil, nil
	}
	raw, ok := t[row]
	if !ok {
		return nil, nil
	}
	var rows []map[string]any
	if json.Unmarshal(raw, &rows) == nil {
		return rows, nil
	}
	var one map[string]any
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, o.errf(ErrCommand, cmd, fmt.Errorf("unexpected %s: %w", row, err))
	}
	return []map[string]any{one}, nil
}

// str is a JSON scalar as Python's str() prints it.
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprintf("%d", int64(x))
		}
		return fmt.Sprint(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return fmt.Sprint(v)
}

// GetNetworkInstances implements NetworkInstancesGetter like NAPALM
// nxos_ssh (show vrf detail | json, show vrf interface | json).
func (d *nxosDriver) GetNetworkInstances(ctx context.Context, name string) (map[string]NetworkInstance, error) {
	res := map[string]NetworkInstance{}
	err := d.s.query(ctx, func(o runner) error {
		vrfs, err := nxosTable(o, "show vrf detail | json", "TABLE_vrf", "ROW_vrf")
		if err != nil {
			return err
		}
		ifRows, err := nxosTable(o, "show vrf interface | json", "TABLE_if", "ROW_if")
		if err != nil {
			return err
		}
		byVRF := map[string]map[string]struct{}{}
		for _, r := range ifRows {
			v := str(r["vrf_name"])
			if byVRF[v] == nil {
				byVRF[v] = map[string]struct{}{}
			}
			byVRF[v][str(r["if_name"])] = struct{}{}
		}
		for _, r := range vrfs {
			n := str(r["vrf_name"])
			res[n] = newInstance(n, str(r["rd"]), byVRF[n])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pickInstance(res, name), nil
}

package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/wire/payload"
)

// napalmLabPlatform is one simulated platform of the NAPALM function lab.
type napalmLabPlatform struct {
	id, sim, driver string
	xml             bool // optional_args xml_agent: every iosxr getter through the XML agent
}

// napalmLabPlatforms are the simulated devices the NAPALM function tests
// manage: the second device of a three-device fleet per platform (it
// peers in BGP with the first and the third).
var napalmLabPlatforms = []napalmLabPlatform{
	{id: "ios1", sim: devsim.PlatformIOS, driver: "ios"},
	{id: "eos1", sim: devsim.PlatformEOS, driver: "eos"},
	{id: "nx1", sim: devsim.PlatformNXOS, driver: "nxos_ssh"},
	{id: "xr1", sim: devsim.PlatformIOSXR, driver: "iosxr"},
	{id: "xr2", sim: devsim.PlatformIOSXR, driver: "iosxr", xml: true},
}

// napalmLabNow is the simulated devices' fixed clock, so that two runs of a
// function (through two masters) see the same device.
var napalmLabNow = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// napalmLab is the simulated devices of napalmLabPlatforms.
type napalmLab struct {
	sims map[string]*devsim.Fleet
	ids  []string
	// validate is a NAPALM validation file for napalm.compliance_report.
	validate string
}

func startNapalmLab(t *testing.T, ctx context.Context, dir string) *napalmLab {
	t.Helper()
	l := &napalmLab{sims: map[string]*devsim.Fleet{}}
	for _, p := range napalmLabPlatforms {
		s, err := devsim.Start(ctx, devsim.Options{Platform: p.sim, Devices: 3, User: "admin", Password: "admin",
			Now: func() time.Time { return napalmLabNow }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		l.sims[p.id] = s
		l.ids = append(l.ids, p.id)
	}
	l.validate = filepath.Join(dir, "validate.yml")
	writeFile(t, l.validate, "- get_facts:\n    os_version: '^$'\n    interface_list:\n      _mode: strict\n      list: []\n"+
		"- get_users:\n    admin:\n      level: 15\n- get_ntp_servers:\n    172.16.255.254: {}\n")
	return l
}

// pillarYAML is the proxy pillar of device id, as a pillar SLS.
func (l *napalmLab) pillarYAML(id string) string {
	for _, p := range napalmLabPlatforms {
		if p.id == id {
			extra := ""
			if p.xml {
				extra = "    xml_agent: true\n"
			}
			return fmt.Sprintf("proxy:\n  proxytype: napalm\n  driver: %s\n  host: 127.0.0.1\n  username: admin\n"+
				"  password: admin\n  optional_args:\n    port: %d\n%s", p.driver, l.sims[id].Port(1), extra)
		}
	}
	return ""
}

// pillar answers a gsalt master's pillar requests with the same pillar.
func (l *napalmLab) pillar(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
	for _, p := range napalmLabPlatforms {
		if p.id == req.ID {
			opts := payload.NewMap("port", int64(l.sims[p.id].Port(1)))
			if p.xml {
				opts.Set("xml_agent", true)
			}
			return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", p.driver, "host", "127.0.0.1",
				"username", "admin", "password", "admin", "optional_args", opts)), nil
		}
	}
	return payload.NewMap(), nil
}

// napalmCall is one function call of the NAPALM function table: its
// arguments are JSON values as a client sends them (the salt CLI's parsing
// done: "key=value" strings stay strings, a YAML dict is a dict).
type napalmCall struct {
	fun  string
	args []any
}

func (c napalmCall) String() string {
	parts := []string{c.fun}
	for _, a := range c.args {
		if s, ok := a.(string); ok {
			parts = append(parts, s)
		} else {
			b, _ := json.Marshal(a)
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, " ")
}

// napalmCalls lists the NAPALM-based functions (Salt's napalm_network,
// napalm_bgp, napalm_route, napalm_snmp, napalm_users, napalm_probes,
// napalm_ntp and napalm modules) run on every simulated platform; VALIDATE
// stands for the lab's validation file. The writing ones run with
// test=True so that every master sees the same device.
var napalmCalls = []napalmCall{
	{"net.facts", nil}, {"net.interfaces", nil}, {"net.ipaddrs", nil}, {"net.arp", nil}, {"net.mac", nil},
	{"net.lldp", nil}, {"net.lldp", []any{"interface=Ethernet1"}},
	{"net.environment", nil}, {"net.optics", nil},
	{"net.config", []any{"source=running"}},
	{"bgp.config", nil}, {"bgp.neighbors", nil}, {"bgp.neighbors", []any{"10.0.0.0"}},
	{"route.show", []any{"10.255.0.3/32"}}, {"route.show", []any{"10.255.0.3/32", "bgp"}}, {"route.show", []any{"not-a-prefix"}},
	{"snmp.config", nil}, {"snmp.update_config", []any{"location=Lab", "test=True"}},
	{"users.config", nil}, {"users.set_users", []any{map[string]any{"bob": map[string]any{"level": 15, "password": "x"}}, "test=True"}},
	{"probes.config", nil}, {"probes.results", nil},
	{"ntp.peers", nil}, {"ntp.servers", nil}, {"ntp.stats", nil},
	{"napalm.compliance_report", []any{"VALIDATE"}},
	{"napalm.call", []any{"get_network_instances"}}, {"napalm.call", []any{"get_interfaces_counters"}},
	{"napalm.call", []any{"get_vlans"}}, {"napalm.call", []any{"get_bgp_neighbors_detail"}},
	{"napalm.call", []any{"get_config", "sanitized=True"}},
	{"napalm.netmiko_commands", []any{"show clock"}}, {"napalm.netmiko_call", []any{"send_command", "show version"}},
}

// argsFor is the call's arguments with VALIDATE replaced by the lab's
// validation file.
func (l *napalmLab) argsFor(c napalmCall) []any {
	out := make([]any, len(c.args))
	for i, a := range c.args {
		if s, ok := a.(string); ok {
			a = strings.ReplaceAll(s, "VALIDATE", l.validate)
		}
		out[i] = a
	}
	return out
}

// plainJSON is v as decoded JSON (what `salt --out json` gives).
func plainJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInteropRealSaltMasterNapalmFunctions: a real Salt 3006 salt-master
// and a gsalt master each manage the same simulated IOS, EOS, NX-OS and
// IOS XR devices (gsalt-devsim, fixed clock) through gsalt-proxy's napalm
// proxytype; every function of napalmCalls returns the same dict through
// both masters.
func TestInteropRealSaltMasterNapalmFunctions(t *testing.T) {
	src := saltpeer.Require(t)
	if testing.Short() {
		t.Skip("interop with real Salt skipped in -short mode")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := shortDir(t)
	lab := startNapalmLab(t, ctx, dir)

	// The real master and its gsalt-proxy.
	files := map[string]string{"srv/pillar/top.sls": "base:\n"}
	for _, id := range lab.ids {
		files["srv/pillar/top.sls"] += fmt.Sprintf("  '%s':\n    - %s\n", id, id)
		files["srv/pillar/"+id+".sls"] = lab.pillarYAML(id)
	}
	sm := startRealMaster(t, src, filepath.Join(dir, "m"), files)
	rdir := filepath.Join(dir, "rp")
	writeFile(t, filepath.Join(rdir, "etc", "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %[2]d\nroot_dir: %[1]s\n"+
		"pki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/log\n"+
		"ipv6: False\nenable_fqdns_grains: False\nacceptance_wait_time: 0.5\n", rdir, sm.ret))
	runFleet(t, ctx, cancel, proxy.Options{ConfigDir: filepath.Join(rdir, "etc"), IDs: lab.ids, Logger: testLogger()})

	// The gsalt master and its gsalt-proxy.
	gdir := filepath.Join(dir, "g")
	d := testMaster(t, gdir, lab.pillar)
	boot := started.Watch(t, d.Bus())
	gf := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: proxyConf(t, gdir, d, ""), IDs: lab.ids, Logger: testLogger()})
	for _, id := range lab.ids {
		waitFor(t, id+" in the gsalt fleet", func() bool { _, ok := gf.Device(id); return ok })
		dev, _ := gf.Device(id)
		waitServing(t, boot, dev)
		waitFor(t, id+" up", dev.Initialized)
	}
	sm.acceptWhenPending(t, lab.ids...)
	list := strings.Join(lab.ids, ",")
	testutil.Eventually(t, 90*time.Second, func() bool { return len(sm.salt(t, "-L", list, "test.ping")) == len(lab.ids) },
		"every device answering the real master's test.ping")

	// One Python process runs every call through Salt's LocalClient (the
	// salt CLI's client), one job per call.
	var batch []map[string]any
	for _, c := range napalmCalls {
		args := lab.argsFor(c)
		if args == nil {
			args = []any{}
		}
		batch = append(batch, map[string]any{"fun": c.fun, "arg": args})
	}
	real := sm.localClient(t, lab.ids, batch)
	if len(real) != len(napalmCalls) {
		t.Fatalf("LocalClient returned %d results for %d calls", len(real), len(napalmCalls))
	}
	for i, c := range napalmCalls {
		t.Run(c.String(), func(t *testing.T) {
			args := lab.argsFor(c)
			for k, a := range args {
				args[k] = payload.FromGo(a)
			}
			mine := runJob(t, d, lab.ids, "list", c.fun, args...)
			for _, id := range lab.ids {
				r, ok := real[i][id]
				if !ok {
					t.Errorf("%s: no return through the real master", id)
					continue
				}
				if g := plainJSON(t, mine[id]); !sameReturn(r, g, "") {
					rb, _ := json.MarshalIndent(r, "", " ")
					gb, _ := json.MarshalIndent(g, "", " ")
					t.Errorf("%s: real salt-master got\n%s\ngsalt master got\n%s", id, rb, gb)
				}
			}
		})
	}
}

// localClientPy runs the JSON list of calls on stdin through Salt's
// LocalClient of the master config argv[1], targeting the list argv[2:],
// and prints the list of returns as JSON.
const localClientPy = `import json, sys
import salt.client
client = salt.client.LocalClient(sys.argv[1])
out = []
for call in json.load(sys.stdin):
    out.append(client.cmd(sys.argv[2:], call["fun"], call["arg"], tgt_type="list", timeout=60))
json.dump(out, sys.stdout)
`

// localClient runs calls ({"fun", "arg"}) on ids through the real master's
// LocalClient and returns each call's returns by minion.
func (sm *realMaster) localClient(t *testing.T, ids []string, calls []map[string]any) []map[string]any {
	t.Helper()
	in, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := saltpeer.PythonCommand(ctx, sm.src, localClientPy, append([]string{filepath.Join(sm.conf, "master")}, ids...)...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("LocalClient: %v\n%s", err, errb.String())
	}
	var res []map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("LocalClient output: %v\n%s", err, out.String())
	}
	return res
}

// clockKeys are return keys whose numbers the driver computes from its own
// clock at call time (seconds since boot, since a MAC moved, since a BGP
// session changed): two calls a few seconds apart differ there.
var clockKeys = map[string]bool{"uptime": true, "last_move": true, "last_flapped": true, "last_event": true}

// sameReturn compares two JSON returns, numbers under clockKeys within
// five minutes of each other.
func sameReturn(a, b any, key string) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !sameReturn(x, y, k) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !sameReturn(av[i], bv[i], key) {
				return false
			}
		}
		return true
	case float64:
		bv, ok := b.(float64)
		if ok && clockKeys[key] {
			return math.Abs(av-bv) < 300
		}
		return ok && av == bv
	}
	return reflect.DeepEqual(a, b)
}

// napalmWant is what one function returns on each driver: "PATH=VALUE"
// (the JSON value at PATH, its keys separated by "/", printed with
// fmt.Sprint), "PATH" (present), "#PATH=N" (N entries) or "!TEXT" (result
// False with TEXT in the comment). "*" holds the wants of the drivers not
// named.
type napalmWant map[string][]string

// napalmE2E is the end-to-end table: the functions of napalmCalls with
// what the simulated device 2 (sw2: AS 65002, BGP peers sw1 10.0.0.0 in
// AS 65001 and sw3 10.0.0.3 in AS 65003) makes them return.
var napalmE2E = []struct {
	call napalmCall
	want napalmWant
}{
	{napalmCall{"net.lldp", nil}, napalmWant{
		"ios":      {"out/GigabitEthernet2/0/remote_system_name=sw3", "out/GigabitEthernet3/0/remote_system_name=sw1", "#out=2"},
		"eos":      {"out/Ethernet2/0/remote_system_name=sw3", "out/Ethernet2/0/remote_port=Ethernet3", "#out=2"},
		"nxos_ssh": {"out/Ethernet1/2/0/remote_system_name=sw3", "#out=2"},
		"iosxr":    {"out/GigabitEthernet0/0/0/0/0/remote_system_name=sw3", "#out=2"},
	}},
	{napalmCall{"net.lldp", []any{"interface=Ethernet2"}}, napalmWant{
		"eos": {"out/Ethernet2/0/remote_system_name=sw3", "#out=1"},
		"*":   {"#out=1", "out/Ethernet2=<nil>"}, // Salt keys the asked interface, None when it has no neighbour
	}},
	{napalmCall{"net.environment", nil}, napalmWant{
		"ios":      {"out/cpu/0/%usage=0", "out/memory/used_ram=-1"},
		"eos":      {"out/memory/available_ram=8099732", "#out/cpu=1"},
		"nxos_ssh": {"out/temperature/CPU-1/temperature=37", "out/cpu/1/%usage=4.5"},
		"iosxr": {"out/cpu/0/RP0/CPU0/%usage=3", "out/power/PM0/capacity=3000", "out/power/PM0/output=180", "out/fans/FT0/status=true",
			"out/temperature/RSP0/temperature=31", "out/memory/used_ram=3221225472"},
	}},
	{napalmCall{"net.optics", nil}, napalmWant{
		"ios":      {"#out=0"},
		"eos":      {"out/Ethernet2/physical_channels/channel/0/state/input_power/instant=-2.1", "#out=2"},
		"nxos_ssh": {"out/Ethernet1/2/physical_channels/channel/0/state/output_power/instant=-1.03", "out/Ethernet1/1/state/vendor=CISCO-FINISAR"},
		"iosxr":    {"!get_optics is not implemented for the NAPALM iosxr driver!"},
	}},
	{napalmCall{"bgp.config", nil}, napalmWant{
		"ios":      {"out/_/local_as=65002", "out/_/neighbors/10.0.0.0/remote_as=65001", "out/_/neighbors/10.0.0.3/remote_as=65003"},
		"eos":      {"out/_/local_as=65002", "out/_/neighbors/10.0.0.0/remote_as=65001", "out/_/neighbors/10.0.0.3/remote_as=65003"},
		"nxos_ssh": {"!get_bgp_config is not implemented for the NAPALM nxos_ssh driver!"},
		"iosxr":    {"out/_/local_as=65002", "out/_/neighbors/10.0.0.0/remote_as=65001", "out/_/neighbors/10.0.0.3/remote_as=65003"},
	}},
	{napalmCall{"bgp.neighbors", nil}, napalmWant{
		"eos": {"out/default/65001/0/remote_address=10.0.0.0", "out/default/65003/0/up=true", "out/default/65001/0/local_address=10.0.0.1"},
		"*":   {"out/global/65001/0/remote_address=10.0.0.0", "out/global/65003/0/up=true", "out/global/65003/0/local_as=65002"},
	}},
	{napalmCall{"bgp.neighbors", []any{"10.0.0.3"}}, napalmWant{
		"eos": {"#out/default=1", "out/default/65003/0/remote_address=10.0.0.3"},
		"*":   {"#out/global=1", "out/global/65003/0/remote_address=10.0.0.3"},
	}},
	{napalmCall{"route.show", []any{"10.255.0.3/32"}}, napalmWant{
		"eos":      {"out/10.255.0.3/32/0/next_hop=10.0.0.3", "out/10.255.0.3/32/0/protocol=eBGP", "out/10.255.0.3/32/0/protocol_attributes/remote_as=65003"},
		"ios":      {"out/10.255.0.3/32/0/next_hop=10.0.0.3", "out/10.255.0.3/32/0/protocol=bgp", "out/10.255.0.3/32/0/outgoing_interface=GigabitEthernet2"},
		"nxos_ssh": {"out/10.255.0.3/32/0/next_hop=10.0.0.3", "out/10.255.0.3/32/0/protocol=bgp"},
		"iosxr": {"out/10.255.0.3/32/0/next_hop=10.0.0.3", "out/10.255.0.3/32/0/protocol=bgp",
			"out/10.255.0.3/32/0/outgoing_interface=GigabitEthernet0/0/0/0", "#out/10.255.0.3/32=1"},
	}},
	{napalmCall{"route.show", []any{"not-a-prefix"}}, napalmWant{
		"iosxr": {"!Wrong destination IP Address!"},
		"*":     {"!Please specify a valid destination!"},
	}},
	{napalmCall{"snmp.config", nil}, napalmWant{
		"ios": {"out/chassis_id=9ESG0000002", "out/location=unknown"},
		"*":   {"out/chassis_id=", "#out/community=0"},
	}},
	{napalmCall{"snmp.update_config", []any{"location=Lab", "test=True"}}, napalmWant{
		"*": {"comment=Configuration discarded.", "already_configured=false", "diff"},
	}},
	{napalmCall{"users.config", nil}, napalmWant{
		"nxos_ssh": {"out/admin/level=15", "#out/admin/sshkeys=0"},
		"iosxr":    {"out/admin/level=15", "#out/admin/sshkeys=0", "#out=1"},
		"*":        {"#out=0"},
	}},
	{napalmCall{"users.set_users", []any{map[string]any{"bob": map[string]any{"level": 15, "password": "x"}}, "test=True"}}, napalmWant{
		"*": {"comment=Configuration discarded.", "already_configured=false"},
	}},
	{napalmCall{"probes.config", nil}, napalmWant{
		"ios":   {"#out=0"},
		"iosxr": {"#out=0"},
		"*":     {"!get_probes_config is not implemented for the NAPALM"},
	}},
	{napalmCall{"probes.results", nil}, napalmWant{
		"iosxr": {"#out=0"},
		"*":     {"!get_probes_results is not implemented for the NAPALM"},
	}},
	{napalmCall{"ntp.stats", nil}, napalmWant{
		"nxos_ssh": {"!get_ntp_stats is not implemented for the NAPALM nxos_ssh driver!"},
		"*":        {"out/0/remote=172.16.255.254", "out/0/synchronized=true", "out/0/stratum=1"},
	}},
	{napalmCall{"napalm.compliance_report", []any{"VALIDATE"}}, napalmWant{
		"nxos_ssh": {"out/complies=false", "out/get_users/complies=true", "out/get_ntp_servers/complies=true", "out/get_facts/present/os_version/complies=false"},
		"iosxr":    {"out/complies=false", "out/get_users/complies=true", "out/get_ntp_servers/complies=true", "#out/skipped=0"},
		"*":        {"out/complies=false", "out/get_users/missing/0=admin", "out/get_ntp_servers/complies=true"},
	}},
	{napalmCall{"napalm.call", []any{"get_network_instances"}}, napalmWant{
		"nxos_ssh": {"out/management/type=L3VRF", "out/default/interfaces/interface/Ethernet1/2", "#out=2"},
		"iosxr":    {"!get_network_instances is not implemented for the NAPALM iosxr driver!"},
		"*":        {"out/default/type=DEFAULT_INSTANCE", "#out=1"},
	}},
	{napalmCall{"napalm.call", []any{"get_interfaces_counters"}}, napalmWant{
		"ios":      {"out/GigabitEthernet1/tx_octets=15371060", "out/GigabitEthernet2/rx_unicast_packets=100585"},
		"eos":      {"out/Ethernet1/tx_octets=15371060", "out/Ethernet2/rx_unicast_packets=100585"},
		"nxos_ssh": {"out/Ethernet1/2/tx_octets=15384150", "out/mgmt0/rx_octets=21348540", "out/Ethernet1/4/tx_octets=0", "out/mgmt0/tx_errors=0"},
		"iosxr":    {"#out=5", "out/GigabitEthernet0/0/0/2/tx_octets=0", "out/Loopback0/rx_errors=0"},
	}},
	{napalmCall{"napalm.call", []any{"get_vlans"}}, napalmWant{
		"eos":      {"out/10/name=hosts", "out/10/interfaces/0=Ethernet1", "out/1/name=default", "#out=2"},
		"nxos_ssh": {"out/10/name=hosts", "out/10/interfaces/0=Ethernet1/1", "out/1/name=default", "#out=2"},
		"ios":      {"!show vlan brief: % Invalid input"}, // a CSR1000V router has no VLAN database
		"iosxr":    {"!get_vlans is not implemented for the NAPALM iosxr driver!"},
	}},
	{napalmCall{"napalm.call", []any{"get_config", "sanitized=True"}}, napalmWant{
		// iosxr's candidate is "show configuration merge" over the XML agent
		"iosxr": {"out/running"},
		"*":     {"out/running", "out/candidate="},
	}},
	{napalmCall{"napalm.netmiko_commands", []any{"show clock"}}, napalmWant{"*": {"#=1"}}},
}

// TestNapalmFunctionsThroughMaster: a gsalt master runs every function of
// napalmE2E on simulated IOS, EOS, NX-OS and IOS XR devices
// (gsalt-devsim) through gsalt-proxy's napalm proxytype and gets the
// device's data, or NAPALM's "not implemented" comment where the NAPALM
// driver has no such getter.
func TestNapalmFunctionsThroughMaster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := shortDir(t)
	lab := startNapalmLab(t, ctx, dir)
	d := testMaster(t, dir, lab.pillar)
	boot := started.Watch(t, d.Bus())
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: proxyConf(t, dir, d, ""), IDs: lab.ids, Logger: testLogger()})
	for _, id := range lab.ids {
		waitFor(t, id+" in the fleet", func() bool { _, ok := f.Device(id); return ok })
		dev, _ := f.Device(id)
		waitServing(t, boot, dev)
		waitFor(t, id+" up", dev.Initialized)
	}
	for _, c := range napalmE2E {
		t.Run(c.call.String(), func(t *testing.T) {
			args := lab.argsFor(c.call)
			for k, a := range args {
				args[k] = payload.FromGo(a)
			}
			got := runJob(t, d, lab.ids, "list", c.call.fun, args...)
			for _, p := range napalmLabPlatforms {
				wants, ok := c.want[p.driver]
				if !ok {
					wants = c.want["*"]
				}
				ret := plainJSON(t, got[p.id])
				for _, w := range wants {
					if err := checkWant(ret, w); err != nil {
						b, _ := json.MarshalIndent(ret, "", " ")
						t.Errorf("%s: %v\n%s", p.driver, err, b)
						break
					}
				}
			}
		})
	}
}

// checkWant checks one napalmWant entry against a JSON return.
func checkWant(ret any, w string) error {
	if text, ok := strings.CutPrefix(w, "!"); ok {
		m, _ := ret.(map[string]any)
		if m == nil || m["result"] != false || !strings.Contains(fmt.Sprint(m["comment"]), text) {
			return fmt.Errorf("want result False and a comment with %q", text)
		}
		return nil
	}
	if m, ok := ret.(map[string]any); ok && !strings.HasPrefix(w, "#=") {
		if m["result"] != true {
			return fmt.Errorf("result is not True (want %s)", w)
		}
	}
	count := strings.HasPrefix(w, "#")
	w = strings.TrimPrefix(w, "#")
	path, want, hasWant := strings.Cut(w, "=")
	v, ok := jsonAt(ret, path)
	if !ok {
		return fmt.Errorf("no %s", path)
	}
	switch {
	case count:
		n := -1
		switch x := v.(type) {
		case map[string]any:
			n = len(x)
		case []any:
			n = len(x)
		}
		if fmt.Sprint(n) != want {
			return fmt.Errorf("%s has %d entries, want %s", path, n, want)
		}
	case hasWant && jsonText(v) != want:
		return fmt.Errorf("%s = %v, want %s", path, v, want)
	}
	return nil
}

// jsonText prints a JSON value as the wants write it (numbers in full).
func jsonText(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// jsonAt finds the value at a "/"-separated path; a key may itself hold
// "/" (interface names, prefixes): the longest key that matches wins.
func jsonAt(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	parts := strings.Split(path, "/")
	for n := len(parts); n >= 1; n-- {
		key := strings.Join(parts[:n], "/")
		rest := strings.Join(parts[n:], "/")
		switch x := v.(type) {
		case map[string]any:
			if sub, ok := x[key]; ok {
				if r, ok := jsonAt(sub, rest); ok {
					return r, true
				}
			}
		case []any:
			var i int
			if _, err := fmt.Sscanf(key, "%d", &i); err == nil && fmt.Sprint(i) == key && i < len(x) {
				if r, ok := jsonAt(x[i], rest); ok {
					return r, true
				}
			}
		}
	}
	return nil, false
}

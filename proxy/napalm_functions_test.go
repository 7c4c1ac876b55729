package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/saltpeer"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/wire/payload"
)

// napalmLabPlatform is one simulated platform of the NAPALM function lab.
type napalmLabPlatform struct {
	id, sim, driver string
}

// napalmLabPlatforms are the simulated devices the NAPALM function tests
// manage: the second device of a three-device fleet per platform (it
// peers in BGP with the first and the third).
var napalmLabPlatforms = []napalmLabPlatform{
	{id: "ios1", sim: devsim.PlatformIOS, driver: "ios"},
	{id: "eos1", sim: devsim.PlatformEOS, driver: "eos"},
	{id: "nx1", sim: devsim.PlatformNXOS, driver: "nxos_ssh"},
	{id: "xr1", sim: devsim.PlatformIOSXR, driver: "iosxr"},
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
			return fmt.Sprintf("proxy:\n  proxytype: napalm\n  driver: %s\n  host: 127.0.0.1\n  username: admin\n"+
				"  password: admin\n  optional_args:\n    port: %d\n", p.driver, l.sims[id].Port(1))
		}
	}
	return ""
}

// pillar answers a gsalt master's pillar requests with the same pillar.
func (l *napalmLab) pillar(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
	for _, p := range napalmLabPlatforms {
		if p.id == req.ID {
			return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", p.driver, "host", "127.0.0.1",
				"username", "admin", "password", "admin", "optional_args", payload.NewMap("port", int64(l.sims[p.id].Port(1))))), nil
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
	gf := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: proxyConf(t, gdir, d, ""), IDs: lab.ids, Logger: testLogger()})
	for _, id := range lab.ids {
		waitFor(t, id+" in the gsalt fleet", func() bool { _, ok := gf.Device(id); return ok })
		dev, _ := gf.Device(id)
		waitReady(t, dev)
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

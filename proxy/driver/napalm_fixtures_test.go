package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The NAPALM fixture test feeds the command outputs of NAPALM's own test
// suite (napalm-automation/napalm, test/<driver>/mocked_data/test_<getter>/
// <case>/, exported by scripts/napalm-fixtures.sh into GSALT_NAPALM_TESTS)
// to gsalt's getters through a canned runner, and compares the results with
// the case's expected_result.json by NAPALM's rules (getters.py
// dict_diff/list_dicts_diff: every key of either side compared, lists
// compared whole and in order, "..." in the expected result matches
// anything, numbers compared by value as Python does).
//
// testdata/napalm_fixtures.golden records the outcome of every case
// ("driver getter case outcome"); a case that was value-equal and no longer
// is fails the test. -napalm-update rewrites the file.

var napalmUpdate = flag.Bool("napalm-update", false, "rewrite testdata/napalm_fixtures.golden from the NAPALM fixture run")

// napalmSanitize is NAPALM's BaseTestDouble.sanitize_text: a command's
// fixture file name.
var napalmSanitizeRe = regexp.MustCompile(`[^a-zA-Z0-9]`)

func napalmSanitize(cmd string) string {
	s := napalmSanitizeRe.ReplaceAllString(cmd, "_")
	if len(s) > 150 {
		s = s[:150]
	}
	return s
}

// napalmPlatform describes one NAPALM test folder and the gsalt driver that
// answers it.
type napalmPlatform struct {
	folder string // NAPALM's test folder: ios, nxos_ssh, eos
	newDrv func(Options) (Driver, error)
	// open, when set, starts a fake device answering from the case folder
	// and returns the driver connected to it and the fixture files it
	// lacked (junos: NETCONF RPC replies).
	open func(t *testing.T, dir string) (Driver, func() []string)
	// file names the fixture of one command ("" = none).
	file func(cmd string) string
	// lacks are the tests NAPALM's driver itself cannot run (its method
	// raises NotImplementedError, so getters.py skips them): skipped.
	lacks []string
}

var napalmPlatforms = []napalmPlatform{
	{folder: "ios", newDrv: NewIOS, file: func(cmd string) string { return napalmSanitize(cmd) + ".txt" }},
	{folder: "nxos_ssh", newDrv: NewNXOS, file: func(cmd string) string { return napalmSanitize(cmd) + ".txt" }},
	{folder: "eos", newDrv: NewEOS, file: func(cmd string) string {
		// NAPALM eos runs commands over eAPI: JSON fixtures are
		// "<cmd>.json", text ones "<cmd>.text"; gsalt sends "cmd | json".
		if base, ok := strings.CutSuffix(cmd, " | json"); ok {
			return napalmSanitize(base) + ".json"
		}
		return napalmSanitize(cmd) + ".text"
	}},
	{folder: "junos", open: openJunosFixture},
	{folder: "iosxr", open: openIOSXRFixture,
		lacks: []string{"test_get_optics", "test_get_network_instances", "test_get_firewall_policies", "test_ping"}},
}

// openIOSXRFixture answers the iosxr driver's XML agent requests from a
// NAPALM iosxr case folder, as NAPALM's FakeIOSXRDevice does: a request
// body's reply is the file named after the sanitized body (NAPALM's
// request strings carry line-continuation spaces gsalt does not send, so
// runs of "_" are compared as one and the longest file name that is a
// prefix of the request's wins: NAPALM cuts names at 150 characters);
// the double returns the files of "show lldp neighbors"
// (show_lldp_neighbors.txt) and of configuration shows as the command's
// text itself, so those are wrapped into the agent's <CLI> reply.
func openIOSXRFixture(t *testing.T, dir string) (Driver, func() []string) {
	d, err := NewIOSXR(Options{Host: "fixture", OptionalArgs: map[string]any{"xml_agent": true}})
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	collapse := func(s string) string {
		for strings.Contains(s, "__") {
			s = strings.ReplaceAll(s, "__", "_")
		}
		return s
	}
	var missing []string
	read := func(name string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			missing = append(missing, name)
			return "", false
		}
		return string(b), true
	}
	canned := &cannedRunner{name: "iosxr", answer: func(body string) (string, bool) {
		want := collapse(napalmSanitizeRe.ReplaceAllString(body, "_"))
		best := ""
		for _, e := range ents {
			n, ok := strings.CutSuffix(e.Name(), ".txt")
			if !ok {
				continue
			}
			if c := collapse(n); strings.HasPrefix(want, c) && len(c) > len(collapse(best)) {
				best = n
			}
		}
		if best == "" {
			missing = append(missing, napalmSanitize(body)+".txt")
			return "", false
		}
		return read(best + ".txt")
	}}
	sessionOf(d).canned = xrDouble{cannedRunner: canned, text: func(kind, cmd string) (string, bool) {
		if kind == "Exec" {
			return read(napalmSanitize(cmd) + ".txt")
		}
		return read(napalmSanitize("<CLI><"+kind+">"+cmd+"</"+kind+"></CLI>") + ".txt")
	}}
	return d, func() []string { return slices.Clone(missing) }
}

// xrDouble is NAPALM's FakeIOSXRDevice: XML requests answered by the
// canned runner, CLI requests by the text of a file.
type xrDouble struct {
	*cannedRunner
	text func(kind, cmd string) (string, bool)
}

func (x xrDouble) cliText(kind, cmd string) (string, error) {
	out, ok := x.text(kind, cmd)
	if !ok {
		return "", x.errf(ErrCommand, cmd, errors.New("no canned text"))
	}
	return out, nil
}

// openJunosFixture serves a NAPALM junos case folder from a NETCONF fake:
// every RPC is answered with the folder's <rpc-name>.xml, the file
// NAPALM's FakeJunOSDevice reads for the same RPC (conftest.py
// FakeRPCObject.response).
func openJunosFixture(t *testing.T, dir string) (Driver, func() []string) {
	f := startFakeJunos(t)
	f.fixtures = dir
	d := f.open(t, nil)
	d.facts = napalmJunosFacts(t, dir)
	return d, func() []string {
		f.mu.Lock()
		defer f.mu.Unlock()
		return slices.Clone(f.missing)
	}
}

// napalmJunosFacts are the PyEZ facts NAPALM's FakeJunOSDevice reports:
// its default facts (a vSRX) updated with the case's facts.yml (flat
// "key: value" lines), and its fixed uptime of 4380 s.
func napalmJunosFacts(t *testing.T, dir string) *junosPyFacts {
	uptime := 4380.0
	f := &junosPyFacts{Hostname: "vsrx", FQDN: "vsrx", Model: "FIREFLY-PERIMETER", Serial: "beb914a9cca3",
		Version: "12.1X47-D20.7", Personality: "SRX_BRANCH", SwitchStyle: "NONE", Uptime: &uptime}
	b, err := os.ReadFile(filepath.Join(dir, "facts.yml"))
	if errors.Is(err, os.ErrNotExist) {
		return f
	}
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "version":
			f.Version = v
		case "model":
			f.Model = v
		case "personality":
			f.Personality = v
		case "switch_style":
			f.SwitchStyle = v
		case "srx_cluster":
			f.SRXCluster = v == "true" || v == "True"
		case "hostname":
			f.Hostname = v
		case "fqdn":
			f.FQDN = v
		case "serialnumber":
			f.Serial = v
		}
	}
	return f
}

// napalmGetters maps NAPALM's test names to the gsalt call they exercise
// (the arguments NAPALM's getters.py passes).
var napalmGetters = map[string]func(ctx context.Context, d Driver) (any, error){
	"test_get_facts":              func(ctx context.Context, d Driver) (any, error) { return d.GetFacts(ctx) },
	"test_get_interfaces":         func(ctx context.Context, d Driver) (any, error) { return d.GetInterfaces(ctx) },
	"test_get_interfaces_ip":      func(ctx context.Context, d Driver) (any, error) { return d.GetInterfacesIP(ctx) },
	"test_get_arp_table":          func(ctx context.Context, d Driver) (any, error) { return d.GetArpTable(ctx, "") },
	"test_get_arp_table_with_vrf": func(ctx context.Context, d Driver) (any, error) { return d.GetArpTable(ctx, "TEST") },
	"test_get_lldp_neighbors":     func(ctx context.Context, d Driver) (any, error) { return d.GetLLDPNeighbors(ctx) },
	"test_get_lldp_neighbors_detail": func(ctx context.Context, d Driver) (any, error) {
		return d.GetLLDPNeighborsDetail(ctx, "")
	},
	"test_get_mac_address_table": func(ctx context.Context, d Driver) (any, error) { return d.GetMACAddressTable(ctx) },
	"test_get_environment":       func(ctx context.Context, d Driver) (any, error) { return d.GetEnvironment(ctx) },
	"test_get_ntp_servers":       func(ctx context.Context, d Driver) (any, error) { return d.GetNTPServers(ctx) },
	"test_get_ntp_peers":         func(ctx context.Context, d Driver) (any, error) { return d.GetNTPPeers(ctx) },
	"test_get_ntp_stats":         func(ctx context.Context, d Driver) (any, error) { return d.GetNTPStats(ctx) },
	"test_get_bgp_neighbors":     func(ctx context.Context, d Driver) (any, error) { return d.GetBGPNeighbors(ctx) },
	"test_get_config":            func(ctx context.Context, d Driver) (any, error) { return d.GetConfig(ctx, "all") },
	"test_get_config_filtered": func(ctx context.Context, d Driver) (any, error) {
		// getters.py checks every retrieve and returns the last (candidate).
		for _, r := range []string{"running", "startup"} {
			c, err := d.GetConfig(ctx, r)
			if err != nil {
				return nil, err
			}
			if (r == "running" && (c.Startup != "" || c.Candidate != "")) || (r == "startup" && (c.Running != "" || c.Candidate != "")) {
				return nil, fmt.Errorf("get_config(retrieve=%q) filled other keys", r)
			}
		}
		return d.GetConfig(ctx, "candidate")
	},
	"test_get_config_sanitized": func(ctx context.Context, d Driver) (any, error) {
		return GetConfigWith(ctx, d, ConfigOptions{Retrieve: "all", Sanitized: true})
	},
	"test_get_config_sanitized_filtered": func(ctx context.Context, d Driver) (any, error) {
		r, err := GetConfigWith(ctx, d, ConfigOptions{Retrieve: "running", Sanitized: true})
		if err != nil {
			return nil, err
		}
		s, err := GetConfigWith(ctx, d, ConfigOptions{Retrieve: "startup", Sanitized: true})
		if err != nil {
			return nil, err
		}
		if r.Startup != "" || r.Candidate != "" || r.Running == "" || s.Running != "" || s.Candidate != "" {
			return nil, errors.New("get_config(retrieve, sanitized=True) filled the wrong keys")
		}
		return Config{Running: r.Running, Startup: s.Startup}, nil
	},
	"test_get_snmp_information": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(SNMPGetter)
		if !ok {
			return nil, NotSupported(d, "get_snmp_information")
		}
		return g.GetSNMPInformation(ctx)
	},
	"test_get_users": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(UsersGetter)
		if !ok {
			return nil, NotSupported(d, "get_users")
		}
		return g.GetUsers(ctx)
	},
	"test_get_optics": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(OpticsGetter)
		if !ok {
			return nil, NotSupported(d, "get_optics")
		}
		return g.GetOptics(ctx)
	},
	"test_get_vlans": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(VLANsGetter)
		if !ok {
			return nil, NotSupported(d, "get_vlans")
		}
		return g.GetVLANs(ctx)
	},
	"test_get_interfaces_counters": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(CountersGetter)
		if !ok {
			return nil, NotSupported(d, "get_interfaces_counters")
		}
		return g.GetInterfacesCounters(ctx)
	},
	"test_get_ipv6_neighbors_table": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(IPv6NeighborsGetter)
		if !ok {
			return nil, NotSupported(d, "get_ipv6_neighbors_table")
		}
		return g.GetIPv6NeighborsTable(ctx)
	},
	"test_get_network_instances": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(NetworkInstancesGetter)
		if !ok {
			return nil, NotSupported(d, "get_network_instances")
		}
		return g.GetNetworkInstances(ctx, "")
	},
	"test_get_route_to": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(RouteGetter)
		if !ok {
			return nil, NotSupported(d, "get_route_to")
		}
		return g.GetRouteTo(ctx, RouteOptions{Destination: "1.0.4.0/24", Protocol: "bgp"})
	},
	"test_get_route_to_longer": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(RouteGetter)
		if !ok {
			return nil, NotSupported(d, "get_route_to")
		}
		return g.GetRouteTo(ctx, RouteOptions{Destination: "1.0.4.0/24", Protocol: "bgp", Longer: true})
	},
	"test_get_bgp_config": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(BGPConfigGetter)
		if !ok {
			return nil, NotSupported(d, "get_bgp_config")
		}
		return g.GetBGPConfig(ctx, "", "")
	},
	"test_get_bgp_neighbors_detail": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(BGPNeighborsDetailGetter)
		if !ok {
			return nil, NotSupported(d, "get_bgp_neighbors_detail")
		}
		return g.GetBGPNeighborsDetail(ctx, "")
	},
	"test_get_probes_config": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(ProbesConfigGetter)
		if !ok {
			return nil, NotSupported(d, "get_probes_config")
		}
		return g.GetProbesConfig(ctx)
	},
	"test_get_probes_results": func(ctx context.Context, d Driver) (any, error) {
		g, ok := d.(ProbesResultsGetter)
		if !ok {
			return nil, NotSupported(d, "get_probes_results")
		}
		return g.GetProbesResults(ctx)
	},
	"test_ping": func(ctx context.Context, d Driver) (any, error) {
		return d.Ping(ctx, PingOptions{Destination: "8.8.8.8"})
	},
	"test_traceroute": func(ctx context.Context, d Driver) (any, error) {
		return d.Traceroute(ctx, TracerouteOptions{Destination: "8.8.8.8"})
	},
}

// napalmOutcome of one case.
const (
	outValue    = "value-equal"
	outShape    = "shape-equal"
	outDiffer   = "differs"
	outError    = "error"
	outMissing  = "no-getter"
	outSkipped  = "skipped"
	goldenNAPAL = "testdata/napalm_fixtures.golden"
)

type napalmCase struct {
	platform, getter, name, outcome, detail string
}

func TestNAPALMFixtures(t *testing.T) {
	root := os.Getenv("GSALT_NAPALM_TESTS")
	if root == "" {
		t.Skip("GSALT_NAPALM_TESTS unset: run scripts/napalm-fixtures.sh DIR and set it to DIR")
	}
	var cases []napalmCase
	for _, p := range napalmPlatforms {
		dir := filepath.Join(root, p.folder, "mocked_data")
		tests, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("%s: %v", p.folder, err)
		}
		for _, te := range tests {
			if !te.IsDir() || !strings.HasPrefix(te.Name(), "test_") {
				continue
			}
			subs, err := os.ReadDir(filepath.Join(dir, te.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range subs {
				if !c.IsDir() {
					continue
				}
				cases = append(cases, runNAPALMCase(t, p, filepath.Join(dir, te.Name(), c.Name()), te.Name(), c.Name()))
			}
		}
	}
	if *napalmUpdate {
		var b strings.Builder
		for _, c := range cases {
			fmt.Fprintf(&b, "%s %s %s %s\n", c.platform, c.getter, c.name, c.outcome)
		}
		if err := os.WriteFile(goldenNAPAL, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := readNAPALMGolden(t)
	for _, c := range cases {
		key := c.platform + " " + c.getter + " " + c.name
		if was, ok := want[key]; ok && was == outValue && c.outcome != outValue {
			t.Errorf("%s: was value-equal, now %s: %s", key, c.outcome, c.detail)
		}
		if testing.Verbose() && c.outcome != outValue && c.outcome != outMissing && c.outcome != outSkipped {
			t.Logf("%s: %s: %s", key, c.outcome, c.detail)
		}
	}
	t.Log("\n" + napalmTable(cases))
}

func readNAPALMGolden(t *testing.T) map[string]string {
	res := map[string]string{}
	f, err := os.Open(goldenNAPAL)
	if errors.Is(err, os.ErrNotExist) {
		return res
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) == 4 {
			res[fl[0]+" "+fl[1]+" "+fl[2]] = fl[3]
		}
	}
	return res
}

func runNAPALMCase(t *testing.T, p napalmPlatform, dir, getter, name string) napalmCase {
	t.Helper()
	c := napalmCase{platform: p.folder, getter: strings.TrimPrefix(getter, "test_"), name: name}
	if getter == "test_is_alive" || slices.Contains(p.lacks, getter) {
		c.outcome = outSkipped
		return c
	}
	call, ok := napalmGetters[getter]
	if !ok {
		c.outcome = outMissing
		return c
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected_result.json"))
	if errors.Is(err, os.ErrNotExist) {
		c.outcome = outSkipped // NAPALM itself cannot run such a case
		return c
	}
	if err != nil {
		c.outcome, c.detail = outError, err.Error()
		return c
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		c.outcome, c.detail = outError, "expected_result.json: "+err.Error()
		return c
	}
	var (
		d       Driver
		missing []string
		lacked  func() []string
	)
	if p.open != nil {
		d, lacked = p.open(t, dir)
	} else {
		d, err = p.newDrv(Options{Host: "fixture"})
		if err != nil {
			t.Fatal(err)
		}
		sessionOf(d).canned = &cannedRunner{name: p.folder, answer: func(cmd string) (string, bool) {
			fn := p.file(cmd)
			b, err := os.ReadFile(filepath.Join(dir, fn))
			if err != nil {
				missing = append(missing, fn)
				return "", false
			}
			return string(b), true
		}}
	}
	res, err := call(context.Background(), d)
	if lacked != nil {
		missing = lacked()
	}
	if err != nil {
		c.outcome, c.detail = outError, fmt.Sprintf("%v (missing fixtures %v)", err, missing)
		return c
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var diff any
	if l, ok := got.([]any); ok {
		wl, _ := want.([]any)
		if d := napalmListDiff(l, wl); len(d) > 0 {
			diff = d
		}
	} else {
		gm, _ := got.(map[string]any)
		wm, _ := want.(map[string]any)
		if d := napalmDictDiff(gm, wm); len(d) > 0 {
			diff = d
		}
	}
	switch {
	case diff == nil:
		c.outcome = outValue
	case sameShape(got, want):
		c.outcome = outShape
	default:
		c.outcome = outDiffer
	}
	if diff != nil {
		db, _ := json.Marshal(diff)
		c.detail = string(db)
		if len(c.detail) > 600 {
			c.detail = c.detail[:600] + "..."
		}
		if len(missing) > 0 {
			c.detail += fmt.Sprintf(" (missing fixtures %v)", missing)
		}
	}
	return c
}

// napalmListDiff is NAPALM's list_dicts_diff: element-wise dict_diff, the
// shorter list padded with {}.
func napalmListDiff(got, want []any) []any {
	var res []any
	for i := range max(len(got), len(want)) {
		var g, w map[string]any
		if i < len(got) {
			g, _ = got[i].(map[string]any)
		}
		if i < len(want) {
			w, _ = want[i].(map[string]any)
		}
		if d := napalmDictDiff(g, w); len(d) > 0 {
			res = append(res, d)
		}
	}
	return res
}

// napalmDictDiff is NAPALM's dict_diff(result, expected).
func napalmDictDiff(got, want map[string]any) map[string]any {
	res := map[string]any{}
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	for k := range keys {
		g, w := got[k], want[k]
		if gm, ok := g.(map[string]any); ok {
			if wm, ok := w.(map[string]any); ok {
				if d := napalmDictDiff(gm, wm); len(d) > 0 {
					res[k] = d
				}
			} else {
				res[k] = map[string]any{"result": g, "expected": w}
			}
			continue
		}
		if w == "..." {
			continue
		}
		if !pyEqual(g, w) {
			res[k] = map[string]any{"result": g, "expected": w}
		}
	}
	return res
}

// pyEqual is Python's == on JSON values (numbers by value, True == 1).
func pyEqual(a, b any) bool {
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case float64:
			return x, true
		case bool:
			if x {
				return 1, true
			}
			return 0, true
		}
		return 0, false
	}
	if x, ok := num(a); ok {
		y, ok := num(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, pyEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !pyEqual(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// sameShape reports whether got has want's structure: the same key sets,
// list lengths and JSON kinds everywhere ("..." matches anything), values
// aside.
func sameShape(got, want any) bool {
	if want == "..." {
		return true
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !sameShape(gv, wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameShape(g[i], w[i]) {
				return false
			}
		}
		return true
	case float64:
		_, ok := got.(float64)
		return ok
	case string:
		_, ok := got.(string)
		return ok
	case bool:
		_, ok := got.(bool)
		return ok
	case nil:
		return got == nil
	}
	return false
}

// napalmTable renders the per platform × getter counts.
func napalmTable(cases []napalmCase) string {
	type row struct{ n, shape, value int }
	rows := map[string]*row{}
	var keys []string
	for _, c := range cases {
		if c.outcome == outSkipped {
			continue
		}
		k := c.platform + " | " + c.getter
		r, ok := rows[k]
		if !ok {
			r = &row{}
			rows[k] = r
			keys = append(keys, k)
		}
		r.n++
		if c.outcome == outValue || c.outcome == outShape {
			r.shape++
		}
		if c.outcome == outValue {
			r.value++
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("| driver | getter | cases | shape-equal | value-equal |\n|---|---|---|---|---|\n")
	tot := row{}
	for _, k := range keys {
		r := rows[k]
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", k, r.n, r.shape, r.value)
		tot.n, tot.shape, tot.value = tot.n+r.n, tot.shape+r.shape, tot.value+r.value
	}
	fmt.Fprintf(&b, "| all | | %d | %d | %d |\n", tot.n, tot.shape, tot.value)
	return b.String()
}

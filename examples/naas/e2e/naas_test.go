package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsalt/gsalt/internal/fleetlab"
	"github.com/gsalt/gsalt/internal/testutil"
	"github.com/gsalt/gsalt/internal/testutil/proc"
)

// devices is the number of simulated devices (GSALT_NAAS_DEVICES, default
// 50); the request goes out in batches of batchSize.
const batchSize = 10

// badDevice has a line in its data model that IOS rejects.
const badDevice = "sw7"

func deviceCount(t *testing.T) int {
	if s := os.Getenv("GSALT_NAAS_DEVICES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 8 {
			t.Fatalf("GSALT_NAAS_DEVICES=%q: want a number of at least 8", s)
		}
		return n
	}
	return 50
}

// inventory writes the data model of n devices in the shape of the
// example's pillar/naas/inventory.yaml: sw1 and sw2 are spines, the others
// leaves with one uplink to each spine; badDevice carries a line the
// device rejects.
func inventory(n, basePort int) string {
	var b strings.Builder
	b.WriteString("# written by the naas end-to-end test\n")
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("sw%d", i)
		fmt.Fprintf(&b, "%s:\n  host: 127.0.0.1\n  port: %d\n", id, basePort+i-1)
		if i <= 2 {
			fmt.Fprintf(&b, "  role: spine\n  hostname: spine%d\n  asn: 65000\n  loopback: 10.255.0.%d\n  interfaces:\n", i, i)
			fmt.Fprintf(&b, "    - {name: GigabitEthernet1, description: management, address: 172.16.0.%d, netmask: 255.255.0.0}\n", i)
			for j, leaf := range []int{3, 4} {
				fmt.Fprintf(&b, "    - {name: GigabitEthernet%d, description: leaf%d, address: 10.%d.%d.0, netmask: 255.255.255.254, peer: 10.%[3]d.%[4]d.1, peer_asn: %d}\n",
					j+2, leaf, i, leaf, 65100+leaf)
			}
			b.WriteString("    - {name: GigabitEthernet4}\n")
			continue
		}
		fmt.Fprintf(&b, "  role: leaf\n  hostname: leaf%d\n  asn: %d\n  loopback: 10.255.1.%d\n  gateway: 172.16.255.254\n  interfaces:\n", i, 65100+i, i)
		fmt.Fprintf(&b, "    - {name: GigabitEthernet1, description: management, address: 172.16.0.%d, netmask: 255.255.0.0}\n", i)
		for s := 1; s <= 2; s++ {
			fmt.Fprintf(&b, "    - {name: GigabitEthernet%d, description: spine%d, address: 10.%d.%d.1, netmask: 255.255.255.254, peer: 10.%[3]d.%[4]d.0, peer_asn: 65000}\n",
				s+1, s, s, i)
		}
		b.WriteString("    - {name: GigabitEthernet4}\n")
		if id == badDevice {
			b.WriteString("  extra_lines:\n    - snmp-server location dc1 row 4\n    - frobnicate widgets now\n")
		}
	}
	return b.String()
}

// intendedLines are lines the device's configuration must have once its
// intended configuration is in place.
func intendedLines(i int) []string {
	l := []string{"ip domain name dc1.example.net", "ntp server 192.0.2.1", "ntp server 192.0.2.2", "logging host 192.0.2.10",
		fmt.Sprintf("ip address 172.16.0.%d 255.255.0.0", i)}
	if i <= 2 {
		return append(l, fmt.Sprintf("hostname spine%d", i), fmt.Sprintf("ip address 10.255.0.%d 255.255.255.255", i),
			fmt.Sprintf("neighbor 10.%d.3.1 route-reflector-client", i), "description leaf4", "mtu 9000")
	}
	return append(l, fmt.Sprintf("hostname leaf%d", i), fmt.Sprintf("ip address 10.255.1.%d 255.255.255.255", i),
		fmt.Sprintf("router bgp %d", 65100+i), fmt.Sprintf("neighbor 10.2.%d.0 remote-as 65000", i),
		"ip route 0.0.0.0 0.0.0.0 172.16.255.254", "description spine2")
}

// withoutStamp drops IOS's "Last configuration change" comment.
func withoutStamp(cfg string) string {
	var out []string
	for _, l := range strings.Split(cfg, "\n") {
		if !strings.HasPrefix(l, "! Last configuration change") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestNetworkAsAService: the example as shipped, with real processes on
// loopback (gsalt-master, gsalt-api, one gsalt-proxy for every device,
// gsalt-devsim). A POST to /hook/naas/configure naming every device with
// batch 10 returns at once; the reactor starts the orchestration, which
// replaces the devices' configurations ten at a time. Every device but
// badDevice ends with its intended configuration (read over SSH);
// badDevice rejects a line, is reported failed with the device's message
// and is left as it was, and the others are not held up. Progress and
// per-device results come on /events, the results are in the job cache
// (/jobs). A second request for some devices commits nothing
// (unchanged) and touches no other device; a malformed request is
// rejected.
func TestNetworkAsAService(t *testing.T) {
	if testing.Short() {
		t.Skip("real-process end-to-end test skipped in -short mode")
	}
	n := deviceCount(t)
	dir := testutil.ShortDir(t, "gnaas")
	bin := buildTools(t)

	first := startDevsim(t, dir, bin, n)

	// The master: the example's master.d file with its paths, eauth
	// backend and port moved onto the test's; its pillar with the test's
	// inventory.
	ex := exampleDir(t)
	roots, pillarDir := filepath.Join(dir, "srv", "salt"), filepath.Join(dir, "srv", "pillar")
	testutil.CopyTree(t, filepath.Join(ex, "salt"), roots)
	testutil.CopyTree(t, filepath.Join(ex, "pillar"), pillarDir)
	testutil.WriteFile(t, filepath.Join(pillarDir, "naas", "inventory.yaml"), inventory(n, first), 0o644)
	ports := proc.FreePorts(t, 3)
	etc := filepath.Join(dir, "etc")
	testutil.WriteFile(t, filepath.Join(etc, "master"), fmt.Sprintf("interface: 127.0.0.1\npublish_port: %[2]d\nret_port: %[3]d\n"+
		"root_dir: %[1]s\npki_dir: %[1]s/pki\ncachedir: %[1]s/cache\nsock_dir: %[1]s/sock\nlog_file: %[1]s/master.log\n"+
		"log_level_logfile: info\nuser: root\nauto_accept: True\n", dir, ports[0], ports[1]), 0o644)
	conf := testutil.ReadFile(t, filepath.Join(ex, "master.d", "naas.conf"))
	conf = testutil.Redirect(t, conf, "/srv/salt", roots)
	conf = testutil.Redirect(t, conf, "/srv/pillar", pillarDir)
	// eauth auto (any password) for a user instead of PAM for a group.
	conf = testutil.Redirect(t, conf, "  pam:\n    netops%:", "  auto:\n    naas:")
	conf = testutil.Redirect(t, conf, "  port: 8000\n  ssl_crt: /etc/pki/tls/certs/localhost.crt\n  ssl_key: /etc/pki/tls/certs/localhost.key\n",
		fmt.Sprintf("  port: %d\n  host: 127.0.0.1\n  disable_ssl: True\n", ports[2]))
	testutil.WriteFile(t, filepath.Join(etc, "master.d", "naas.conf"), conf, 0o644)
	testutil.WriteFile(t, filepath.Join(dir, "pki", "master.pem"), testutil.ReadFile(t, filepath.Join(vectorsDir, "pki/master/master.pem")), 0o400)
	testutil.WriteFile(t, filepath.Join(dir, "pki", "master.pub"), testutil.ReadFile(t, filepath.Join(vectorsDir, "pki/master/master.pub")), 0o644)
	startProc(t, dir, "gsalt-master", filepath.Join(bin, "gsalt-master"), "-c", etc, "-l", "info")
	startProc(t, dir, "gsalt-api", filepath.Join(bin, "gsalt-api"), "-c", etc, "-l", "info")

	a := &api{base: fmt.Sprintf("http://127.0.0.1:%d", ports[2]), hc: &http.Client{Timeout: 60 * time.Second}}
	a.login(t, "naas")
	events := a.openEvents(t)

	// One gsalt-proxy for every device.
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("sw%d", i+1)
	}
	testutil.WriteFile(t, filepath.Join(dir, "devices.txt"), strings.Join(ids, "\n")+"\n", 0o644)
	petc := filepath.Join(dir, "petc")
	testutil.WriteFile(t, filepath.Join(petc, "proxy"), fmt.Sprintf("master: 127.0.0.1\nmaster_port: %[2]d\nroot_dir: %[1]s/p\n"+
		"pki_dir: %[1]s/p/pki\ncachedir: %[1]s/p/cache\nsock_dir: %[1]s/p/sock\nlog_file: %[1]s/p/log\n"+
		"enable_fqdns_grains: False\nacceptance_wait_time: 0.2\nacceptance_wait_time_max: 1\n", dir, ports[1]), 0o644)
	startProc(t, dir, "gsalt-proxy", filepath.Join(bin, "gsalt-proxy"), "-c", petc, "--proxyids-file", filepath.Join(dir, "devices.txt"), "-l", "info")
	events.wait(t, "every device's start event", testutil.Scale(3*time.Minute), func(evs []sseEvent) bool {
		started := map[string]bool{}
		for _, e := range evs {
			if strings.HasPrefix(e.Tag, "salt/minion/") && strings.HasSuffix(e.Tag, "/start") {
				started[strings.Split(e.Tag, "/")[2]] = true
			}
		}
		return len(started) == n
	})

	initial := make([]string, n)
	for i := range n {
		initial[i] = fleetlab.RunningConfig(t, first+i)
		if fleetlab.HasLine(initial[i], "ntp server 192.0.2.1") {
			t.Fatalf("sw%d starts with the intended NTP server", i+1)
		}
	}

	// 1. A malformed request starts nothing.
	if code := a.do(t, http.MethodPost, "/hook/naas/configure", map[string]any{"devices": "sw1; reboot", "batch": 0}, nil); code != 200 {
		t.Fatalf("hook: %d", code)
	}
	rej := events.wait(t, "the rejection", testutil.Scale(time.Minute), func(evs []sseEvent) bool {
		return slices.ContainsFunc(evs, func(e sseEvent) bool { return e.Tag == "naas/request/rejected" })
	})
	for _, e := range rej {
		if e.Tag == "naas/request/rejected" {
			if r, _ := e.Data["reason"].(string); !strings.Contains(r, "devices must be") || !strings.Contains(r, "batch must be") {
				t.Errorf("rejection reason %q", r)
			}
		}
	}

	// 2. Every device, batch 10.
	var hook struct {
		Success bool `json:"success"`
	}
	sent := time.Now()
	if code := a.do(t, http.MethodPost, "/hook/naas/configure", map[string]any{"devices": ids, "batch": batchSize, "request_id": "r1"}, &hook); code != 200 || !hook.Success {
		t.Fatalf("hook: %d %+v", code, hook)
	}
	answered := time.Now()
	events.wait(t, "request r1's end", testutil.Scale(5*time.Minute), func(evs []sseEvent) bool {
		return slices.ContainsFunc(evs, func(e sseEvent) bool {
			return e.Tag == "naas/request/r1/done" || e.Tag == "naas/request/r1/failed"
		})
	})
	// The per-device reports come from the reactor after the state
	// results: wait for all of them.
	evs := events.wait(t, "a report for every device", testutil.Scale(time.Minute), func(evs []sseEvent) bool {
		return len(reports(evs, "r1")) == n
	})
	var end sseEvent
	for _, e := range evs {
		if e.Tag == "naas/request/r1/done" || e.Tag == "naas/request/r1/failed" {
			end = e
		}
	}
	if end.Tag != "naas/request/r1/failed" {
		t.Errorf("request r1 ended with %s, want failed (%s rejects a line)", end.Tag, badDevice)
	}
	if !answered.Before(end.At) {
		t.Errorf("the hook answered at %v, after the request ended at %v", answered, end.At)
	}
	if !slices.ContainsFunc(evs, func(e sseEvent) bool { return e.Tag == "naas/request/r1/start" }) {
		t.Error("no naas/request/r1/start on /events")
	}
	rep := reports(evs, "r1")
	t.Logf("request r1: hook answered in %v, %d devices in %d-device batches done %v later, %d reports",
		answered.Sub(sent), n, batchSize, end.At.Sub(answered), len(rep))
	for _, id := range ids {
		e, ok := rep[id]
		switch {
		case !ok:
			t.Errorf("%s: no report", id)
		case id == badDevice:
			if e.outcome != "failed" || !strings.Contains(e.data["error"].(string), "Invalid input") {
				t.Errorf("%s: %s %v, want failed with the device's Invalid input", id, e.outcome, e.data["error"])
			}
		case e.outcome != "applied":
			t.Errorf("%s: %s %v", id, e.outcome, e.data)
		default:
			if d, _ := e.data["diff"].(string); !strings.Contains(d, "+ntp server 192.0.2.1") {
				t.Errorf("%s: diff lacks the new NTP server:\n%s", id, d)
			}
		}
	}

	t.Logf("%s: %v", badDevice, rep[badDevice].data["error"])
	// The batches: one state.sls job per batch of at most batchSize
	// devices, the batches covering every device once.
	var batches [][]string
	covered := map[string]int{}
	for _, e := range evs {
		if !strings.HasPrefix(e.Tag, "salt/job/") || !strings.HasSuffix(e.Tag, "/new") {
			continue
		}
		d := e.Data
		if d["fun"] != "state.sls" {
			continue
		}
		var ms []string
		for _, m := range d["minions"].([]any) {
			ms = append(ms, m.(string))
			covered[m.(string)]++
		}
		batches = append(batches, ms)
	}
	t.Logf("batches: %v", batches)
	if len(batches) != (n+batchSize-1)/batchSize {
		t.Errorf("%d state.sls jobs, want %d: %v", len(batches), (n+batchSize-1)/batchSize, batches)
	}
	for _, b := range batches {
		if len(b) > batchSize {
			t.Errorf("a batch of %d devices: %v", len(b), b)
		}
	}
	if len(covered) != n {
		t.Errorf("the batches covered %d devices, want %d: %v", len(covered), n, covered)
	}

	// Every device through SSH: the intended configuration, except the
	// one that rejected a line, which is as it was.
	for i := 1; i <= n; i++ {
		cfg := fleetlab.RunningConfig(t, first+i-1)
		id := fmt.Sprintf("sw%d", i)
		if id == badDevice {
			if withoutStamp(cfg) != withoutStamp(initial[i-1]) {
				t.Errorf("%s changed although its replace failed:\n%s", id, cfg)
			}
			continue
		}
		for _, l := range intendedLines(i) {
			if !fleetlab.HasLine(cfg, l) {
				t.Errorf("%s lacks %q:\n%s", id, l, cfg)
			}
		}
		if fleetlab.HasLine(cfg, "ntp server 172.16.255.254") {
			t.Errorf("%s kept the old NTP server (not a replace):\n%s", id, cfg)
		}
	}

	// The job cache: the orchestration (runner job) and a device's job.
	var orch string
	for _, e := range evs {
		if strings.HasPrefix(e.Tag, "salt/run/") && strings.HasSuffix(e.Tag, "/new") && e.Data["fun"] == "runner.state.orchestrate" {
			orch = strings.Split(e.Tag, "/")[2]
		}
	}
	if orch == "" {
		t.Fatal("no runner.state.orchestrate job on /events")
	}
	var job map[string]any
	if code := a.do(t, http.MethodGet, "/jobs/"+orch, nil, &job); code != 200 {
		t.Fatalf("/jobs/%s: %d", orch, code)
	}
	if s := fmt.Sprint(job["return"]); !strings.Contains(s, "naas_replace") || !strings.Contains(s, badDevice) {
		t.Errorf("/jobs/%s lacks the orchestration's steps: %.2000s", orch, s)
	}
	jid := rep["sw3"].data["jid"].(string)
	job = nil
	if code := a.do(t, http.MethodGet, "/jobs/"+jid, nil, &job); code != 200 {
		t.Fatalf("/jobs/%s: %d", jid, code)
	}
	if s := fmt.Sprint(job["return"]); !strings.Contains(s, "sw3") || !strings.Contains(s, "netconfig_|-naas_replace_|-r1_|-managed") {
		t.Errorf("/jobs/%s lacks sw3's state return: %.2000s", jid, s)
	}

	// The failed device's job: the replace failed, net.rollback ran.
	jid = rep[badDevice].data["jid"].(string)
	var bad struct {
		Return []map[string]any `json:"return"`
	}
	if code := a.do(t, http.MethodGet, "/jobs/"+jid, nil, &bad); code != 200 || len(bad.Return) != 1 {
		t.Fatalf("/jobs/%s: %d %v", jid, code, bad)
	}
	states, _ := bad.Return[0][badDevice].(map[string]any)
	state := func(k string) map[string]any { m, _ := states[k].(map[string]any); return m }
	if r := state("netconfig_|-naas_replace_|-r1_|-managed"); r["result"] != false {
		t.Errorf("%s's replace: %v", badDevice, r)
	}
	if r := state("module_|-naas_rollback_|-naas_rollback_|-run"); r["result"] != true || r["__state_ran__"] != nil {
		t.Errorf("%s's rollback: %v", badDevice, r)
	}

	// 3. The same intended configurations again for some devices: nothing
	// to commit, and no other device is touched.
	var again []string
	for i := 3; len(again) < 10 && i <= n; i++ {
		if id := fmt.Sprintf("sw%d", i); id != badDevice {
			again = append(again, id)
		}
	}
	if code := a.do(t, http.MethodPost, "/hook/naas/configure", map[string]any{"devices": again, "batch": 4, "request_id": "r2"}, &hook); code != 200 {
		t.Fatalf("hook: %d", code)
	}
	evs = events.wait(t, "request r2's end", testutil.Scale(3*time.Minute), func(evs []sseEvent) bool {
		return len(reports(evs, "r2")) == len(again) && slices.ContainsFunc(evs, func(e sseEvent) bool {
			return e.Tag == "naas/request/r2/done" || e.Tag == "naas/request/r2/failed"
		})
	})
	if !slices.ContainsFunc(evs, func(e sseEvent) bool { return e.Tag == "naas/request/r2/done" }) {
		t.Error("request r2 did not end with done")
	}
	for id, e := range reports(evs, "r2") {
		if !slices.Contains(again, id) || e.outcome != "unchanged" {
			t.Errorf("r2: %s %s %v", id, e.outcome, e.data)
		}
	}
}

// startDevsim starts gsalt-devsim with n IOS devices on consecutive
// ports and returns the first; a port taken between the check and the
// start makes it exit, and it is tried again on another range.
func startDevsim(t *testing.T, dir, bin string, n int) int {
	t.Helper()
	for attempt := range 3 {
		base := fleetlab.FreeRange(t, n)
		sim := startProc(t, dir, fmt.Sprintf("gsalt-devsim-%d", attempt), filepath.Join(bin, "gsalt-devsim"), "--devices", strconv.Itoa(n),
			"--base-port", strconv.Itoa(base), "--platform", "ios", "--user", "admin", "--password", "admin")
		var m []string
		testutil.Eventually(t, 60*time.Second, func() bool {
			m = devsimLine.FindStringSubmatch(testutil.ReadFile(t, sim.Log))
			return m != nil || sim.Exited()
		}, "gsalt-devsim's banner")
		if m == nil {
			t.Logf("gsalt-devsim exited (attempt %d): %s", attempt+1, sim.Tail(500))
			continue
		}
		if m[1] != strconv.Itoa(base) || m[2] != strconv.Itoa(base+n-1) {
			t.Fatalf("gsalt-devsim ports %s..%s for %d devices from %d", m[1], m[2], n, base)
		}
		return base
	}
	t.Fatal("gsalt-devsim did not start")
	return 0
}

type report struct {
	outcome string
	data    map[string]any
}

// reports returns the naas/device/<id>/<outcome> events of a request by
// device.
func reports(evs []sseEvent, request string) map[string]report {
	out := map[string]report{}
	for _, e := range evs {
		parts := strings.Split(e.Tag, "/")
		if len(parts) != 4 || parts[0] != "naas" || parts[1] != "device" {
			continue
		}
		d := e.Data
		if d == nil || d["request"] != request {
			continue
		}
		out[parts[2]] = report{outcome: parts[3], data: d}
	}
	return out
}

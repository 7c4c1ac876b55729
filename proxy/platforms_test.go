package proxy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsalt/gsalt/internal/testutil/started"
	"github.com/gsalt/gsalt/master"
	"github.com/gsalt/gsalt/proxy"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/wire/payload"
)

// TestPlatformsThroughProxy serves simulated IOS XR and NX-OS devices
// from one gsalt-proxy and drives them through the master's publish:
// test.ping, NAPALM grains, net.cli, net.load_config test/commit,
// compare, rollback and a rejected line, each checked on the simulated
// device's running config.
func TestPlatformsThroughProxy(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type platform struct {
		id, sim, driver, vendor, os string
		show, showHas               string
		line, bad, badErr           string
		// runningHas is how the line shows in the running config
		// (IOS XR nests it under its block).
		runningHas string
		// candidate: get_config returns the candidate (NX-OS has none).
		candidate bool
	}
	plats := []platform{
		{id: "xr1", sim: devsim.PlatformIOSXR, driver: "iosxr", vendor: "Cisco", os: "iosxr",
			show: "show version", showHas: "Cisco IOS XR Software",
			line: "ntp server 10.7.7.7", bad: "this is not a command", badErr: "Invalid input", runningHas: "ntp\n server 172.16.255.254\n server 10.7.7.7\n", candidate: true},
		{id: "nx1", sim: devsim.PlatformNXOS, driver: "nxos_ssh", vendor: "Cisco", os: "nxos_ssh", // Salt's napalm grain os is the driver name
			show: "show version", showHas: "NX-OS",
			line: "ntp server 10.7.7.7 use-vrf management", bad: "this is not a command", badErr: "Invalid command", runningHas: "ntp server 10.7.7.7 use-vrf management"},
	}
	sims := map[string]*devsim.Fleet{}
	for _, p := range plats {
		s, err := devsim.Start(ctx, devsim.Options{Platform: p.sim, Devices: 1, User: "admin", Password: "admin"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sims[p.id] = s
	}
	byID := map[string]platform{}
	for _, p := range plats {
		byID[p.id] = p
	}
	pillar := func(_ context.Context, req master.PillarRequest) (*payload.Map, error) {
		p := byID[req.ID]
		return payload.NewMap("proxy", payload.NewMap("proxytype", "napalm", "driver", p.driver, "host", "127.0.0.1",
			"username", "admin", "password", "admin", "optional_args", payload.NewMap("port", int64(sims[req.ID].Port(0))))), nil
	}
	dir := shortDir(t)
	d := testMaster(t, dir, pillar)
	boot := started.Watch(t, d.Bus())
	bus := d.Bus().Subscribe(nil, 4096)
	defer bus.Close()
	etc := proxyConf(t, dir, d, "loop_interval: 0.2\n")
	var ids []string
	for _, p := range plats {
		ids = append(ids, p.id)
	}
	f := runFleet(t, ctx, cancel, proxy.Options{ConfigDir: etc, IDs: ids, Logger: testLogger()})
	for _, id := range ids {
		waitFor(t, id+" in the fleet", func() bool { _, ok := f.Device(id); return ok })
		dev, _ := f.Device(id)
		waitServing(t, boot, dev)
		waitFor(t, id+" up", dev.Initialized)
	}

	for _, p := range plats {
		t.Run(p.driver, func(t *testing.T) {
			running := func() string { return sims[p.id].Device(0).RunningConfig() }
			has := func() bool { return strings.Contains(running(), p.runningHas) }
			call := func(fun string, args ...any) any {
				t.Helper()
				return runJob(t, d, p.id, "", fun, args...)[p.id]
			}
			dict := func(fun string, args ...any) *payload.Map {
				t.Helper()
				r, ok := call(fun, args...).(*payload.Map)
				if !ok {
					t.Fatalf("%s returned %v", fun, call(fun, args...))
				}
				return r
			}
			if v := call("test.ping"); v != true {
				t.Errorf("test.ping: %v", v)
			}
			for g, want := range map[string]string{"vendor": p.vendor, "os": p.os} {
				if v := call("grains.get", g); v != want {
					t.Errorf("grains.get %s = %v, want %s", g, v, want)
				}
			}
			if v := call("grains.get", "model"); payload.Text(v) == "" {
				t.Errorf("grains.get model is empty")
			}
			cli := dict("net.cli", p.show)
			if !cli.Bool("result") || !strings.Contains(cli.Map("out").Str(p.show), p.showHas) {
				t.Errorf("net.cli: %v", cli)
			}
			before := running()
			r := dict("net.load_config", "text="+p.line, "test=True")
			if !r.Bool("result") || !strings.Contains(r.Str("diff"), strings.TrimPrefix(p.line, "ntp ")) || running() != before {
				t.Errorf("test=True: %v", r)
			}
			r = dict("net.load_config", "text="+p.line)
			if !r.Bool("result") || !has() {
				t.Errorf("commit: %v\n%s", r, running())
			}
			// A candidate left uncommitted shows in net.config source=candidate
			// and not in the running config, then is discarded.
			r = dict("net.load_config", "text="+strings.Replace(p.line, "10.7.7.7", "10.8.8.8", 1), "commit=False")
			cand := dict("net.config", "source=candidate").Map("out").Str("candidate")
			if !r.Bool("result") || strings.Contains(cand, "10.8.8.8") != p.candidate || strings.Contains(running(), "10.8.8.8") {
				t.Errorf("candidate: %v\n%s", r, cand)
			}
			if dc := dict("net.discard_config"); !dc.Bool("result") {
				t.Errorf("discard: %v", dc)
			}
			if c := dict("net.compare_config"); !c.Bool("result") || payload.Truthy(get(c, "out")) {
				t.Errorf("compare after commit: %v", c)
			}
			r = dict("net.load_config", "text="+p.line)
			if !r.Bool("already_configured") || r.Str("comment") != "Already configured." {
				t.Errorf("same line again: %v", r)
			}
			if rb := dict("net.rollback"); !rb.Bool("result") || has() {
				t.Errorf("rollback: %v\n%s", rb, running())
			}
			// The configuration is unchanged; its "!" comment lines may not be
			// (NX-OS's "!Running configuration last done at" moves with the
			// automatic rollback of a failed merge).
			body := func() string {
				var keep []string
				for _, l := range strings.Split(running(), "\n") {
					if !strings.HasPrefix(l, "!") {
						keep = append(keep, l)
					}
				}
				return strings.Join(keep, "\n")
			}
			after := body()
			r = dict("net.load_config", "text="+p.bad)
			if r.Bool("result") || !strings.Contains(r.Str("comment"), p.badErr) {
				t.Errorf("rejected line: %v", r)
			}
			if got := body(); got != after {
				t.Errorf("the rejected line changed the config:\n%s\nwas\n%s", got, after)
			}

			// NAPALM getters beyond the base set, through the master.
			vfile := filepath.Join(dir, p.id+"-validate.yml")
			if err := os.WriteFile(vfile, []byte("- get_facts:\n    vendor: "+p.vendor+"\n    os_version: '^$'\n- get_users:\n    admin:\n      level: 15\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cr := dict("napalm.compliance_report", vfile)
			rep := cr.Map("out")
			facts := rep.Map("get_facts").Map("present")
			if !cr.Bool("result") || rep.Bool("complies") || !facts.Map("vendor").Bool("complies") || facts.Map("os_version").Bool("complies") {
				t.Errorf("compliance_report: %v", cr)
			}
			users := dict("users.config")
			snmp := dict("snmp.config")
			optics := dict("net.optics")
			// nxos_ssh from its CLI, iosxr from the XML agent.
			if lvl, _ := users.Map("out").Map("admin").Int("level"); !users.Bool("result") || lvl != 15 {
				t.Errorf("users.config: %v", users)
			}
			if !rep.Map("get_users").Bool("complies") {
				t.Errorf("compliance_report get_users: %v", rep)
			}
			if !snmp.Bool("result") {
				t.Errorf("snmp.config: %v", snmp)
			}
			if p.driver == "nxos_ssh" {
				// gsalt-devsim's NX-OS answers show interface transceiver
				// details for its up Ethernet ports, with DOM readings.
				found := false
				for _, it := range optics.Map("out").Items() {
					ch := it.Value.(*payload.Map).Map("physical_channels").List("channel")
					if len(ch) == 1 {
						if v, ok := ch[0].(*payload.Map).Map("state").Map("input_power").Get("instant"); ok && v != 0.0 {
							found = true
						}
					}
				}
				if !optics.Bool("result") || !found {
					t.Errorf("net.optics: %v", optics)
				}
			} else if optics.Bool("result") || !strings.Contains(optics.Str("comment"), "get_optics is not implemented") {
				t.Errorf("net.optics: %v", optics)
			}

			// revert_in: committed now, reverted by the proxy's scheduler.
			r = dict("net.load_config", "text="+p.line, "revert_in=3s")
			jid := r.Str("commit_id")
			if !r.Bool("result") || jid == "" || !has() {
				t.Fatalf("revert_in: %v", r)
			}
			waitSchedRet(t, bus, p.id, "__napalm_commit_"+jid)
			if has() {
				t.Errorf("not reverted:\n%s", running())
			}
		})
	}
}

func get(m *payload.Map, k string) any {
	v, _ := m.Get(k)
	return v
}

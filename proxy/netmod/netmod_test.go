package netmod_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/devsim"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/netmod"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

const secret = "s3cret"

// fakeService is the proxy framework's Service reduced to one device.
type fakeService struct {
	mu sync.Mutex
	m  proxymod.Module
}

func (s *fakeService) ID() string        { return "dev1" }
func (s *fakeService) ProxyType() string { return proxymod.NapalmTypeName }
func (s *fakeService) Do(ctx context.Context, fn func(ctx context.Context, m proxymod.Module) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(ctx, s.m)
}

// fakeFiles serves salt:// files from a directory.
type fakeFiles struct{ dir string }

func (f fakeFiles) CacheFile(_ context.Context, src, _ string) (string, error) {
	rel, ok := strings.CutPrefix(src, "salt://")
	if !ok {
		return src, nil
	}
	p := filepath.Join(f.dir, rel)
	if _, err := os.Stat(p); err != nil {
		return "", nil
	}
	return p, nil
}

func startFleet(t *testing.T, plat string, n int, faults map[int]devsim.Fault) *devsim.Fleet {
	t.Helper()
	f, err := devsim.Start(context.Background(), devsim.Options{Platform: plat, Devices: n, Secret: secret, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func proxyCfg(plat string, port int, extra ...any) *proxymod.Config {
	px := payload.NewMap("proxytype", "napalm", "driver", plat, "host", "127.0.0.1", "username", "admin",
		"passwd", "admin", "timeout", int64(10),
		"optional_args", payload.NewMap("port", int64(port), "secret", secret))
	for i := 0; i+1 < len(extra); i += 2 {
		px.Set(extra[i].(string), extra[i+1])
	}
	return &proxymod.Config{ID: "dev1", ProxyType: "napalm", Proxy: px, Log: slog.New(slog.DiscardHandler)}
}

// harness runs execution functions against one napalm module.
type harness struct {
	t   *testing.T
	mod *proxymod.Napalm
	reg *modules.Registry
	env *modules.Env
}

func newHarness(t *testing.T, mod *proxymod.Napalm) *harness {
	t.Helper()
	reg := modules.NewRegistry()
	if err := reg.Register(netmod.Functions()...); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := &modules.Env{ID: "dev1", Registry: reg, Log: slog.New(slog.DiscardHandler),
		Grains:   payload.NewMap("id", "dev1"),
		Pillar:   payload.NewMap("ntp", "10.0.0.7"),
		Opts:     payload.NewMap("id", "dev1"),
		Services: map[string]any{proxymod.ServiceName: &fakeService{m: mod}, "files": fakeFiles{dir}}}
	return &harness{t: t, mod: mod, reg: reg, env: env}
}

func (h *harness) file(name, text string) {
	h.t.Helper()
	dir := h.env.Services["files"].(fakeFiles).dir
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func kw(kv ...any) *payload.Map { return payload.NewMap(append([]any{"__kwarg__", true}, kv...)...) }

func (h *harness) exec(fun string, args ...any) modules.Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.reg.Execute(ctx, modules.Binder{}, h.env, fun, args, nil)
}

// ret runs fun and returns its dict return.
func (h *harness) ret(fun string, args ...any) *payload.Map {
	h.t.Helper()
	r := h.exec(fun, args...)
	m, ok := r.Return.(*payload.Map)
	if !ok {
		h.t.Fatalf("%s: return %T %v", fun, r.Return, r.Return)
	}
	return m
}

func initModule(t *testing.T, cfg *proxymod.Config) *proxymod.Napalm {
	t.Helper()
	m := proxymod.NewNapalm(nil)
	if err := m.Init(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	return m
}

var lldpIf = map[string]string{"ios": "GigabitEthernet2", "eos": "Ethernet2"}

var models = map[string]string{"ios": "CSR1000V", "eos": "DCS-7050TX-64-R"}

func TestGrainsAndGetters(t *testing.T) {
	t.Parallel()
	for _, plat := range []string{"ios", "eos"} {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, plat, 3, nil)
			mod := initModule(t, proxyCfg(plat, f.Port(1)))
			ctx := context.Background()
			g, err := mod.Grains(ctx)
			if err != nil {
				t.Fatal(err)
			}
			oa := g.Map("optional_args")
			if g.Str("model") != models[plat] || g.Str("os") != plat || g.Str("host") != "127.0.0.1" || g.Str("username") != "admin" ||
				g.Str("hostname") != "sw2" || len(g.List("interfaces")) == 0 || g.Str("serial") == "" || g.Str("version") == "" ||
				oa == nil || oa.Has("secret") || !oa.Has("port") || oa.Bool("config_lock") {
				t.Fatalf("grains %v", g)
			}
			if ka, _ := oa.Int("keepalive"); ka != 5 {
				t.Errorf("keepalive %v", oa)
			}
			if ok, _ := mod.Ping(ctx); !ok {
				t.Error("ping false")
			}
			if ok, _ := mod.Alive(ctx); !ok {
				t.Error("alive false")
			}

			h := newHarness(t, mod)
			okOut := func(check func(out any) error) func(r *payload.Map) error {
				return func(r *payload.Map) error {
					if !r.Bool("result") || r.Str("comment") != "" {
						return fmt.Errorf("not ok: %v", r)
					}
					out, _ := r.Get("out")
					return check(out)
				}
			}
			hasKeys := func(keys ...string) func(out any) error {
				return func(out any) error {
					m, ok := out.(*payload.Map)
					if !ok {
						return fmt.Errorf("out %T", out)
					}
					for _, k := range keys {
						if !m.Has(k) {
							return fmt.Errorf("out lacks %q: %v", k, m.Keys())
						}
					}
					return nil
				}
			}
			isList := func(min int) func(out any) error {
				return func(out any) error {
					l, ok := out.([]any)
					if !ok || len(l) < min {
						return fmt.Errorf("out %T %v", out, out)
					}
					return nil
				}
			}
			failed := func(prefix string) func(r *payload.Map) error {
				return func(r *payload.Map) error {
					if r.Bool("result") || !strings.HasPrefix(r.Str("comment"), prefix) {
						return fmt.Errorf("want failure %q: %v", prefix, r)
					}
					return nil
				}
			}
			macCheck := okOut(isList(0))
			if plat == "ios" { // a CSR1000V has no MAC address table
				macCheck = failed(`Cannot execute "get_mac_address_table"`)
			}
			port := fmt.Sprint(f.Port(1))
			cases := []struct {
				name, fun string
				args      []any
				check     func(r *payload.Map) error
			}{
				{"facts", "net.facts", nil, okOut(hasKeys("uptime", "vendor", "os_version", "serial_number", "model", "hostname", "fqdn", "interface_list"))},
				{"cli", "net.cli", []any{"show version", "show clock"}, okOut(func(out any) error {
					m := out.(*payload.Map)
					if strings.Join(m.Keys(), "|") != "show version|show clock" || !strings.Contains(m.Str("show version"), models[plat]) {
						return fmt.Errorf("cli %v", m)
					}
					return nil
				})},
				{"cli textfsm", "net.cli", []any{"show version", kw("textfsm_parse", true)}, func(r *payload.Map) error {
					// No template given: Salt's comment, the raw output kept.
					if !r.Bool("result") || r.Str("comment") != "Unable to process the output from show version." ||
						!strings.Contains(r.Map("out").Str("show version"), models[plat]) {
						return fmt.Errorf("%v", r)
					}
					return nil
				}},
				{"interfaces", "net.interfaces", nil, okOut(func(out any) error {
					m := out.(*payload.Map)
					v := m.Items()[0].Value.(*payload.Map)
					return hasKeys("is_enabled", "is_up", "description", "mac_address", "last_flapped", "mtu", "speed")(v)
				})},
				{"ipaddrs", "net.ipaddrs", nil, okOut(func(out any) error {
					if m, ok := out.(*payload.Map); !ok || m.Len() == 0 {
						return fmt.Errorf("%v", out)
					}
					return nil
				})},
				{"arp", "net.arp", nil, okOut(isList(1))},
				{"arp filtered", "net.arp", []any{kw("interface", "Nope0")}, okOut(func(out any) error {
					if l, ok := out.([]any); !ok || len(l) != 0 {
						return fmt.Errorf("%v", out)
					}
					return nil
				})},
				{"lldp", "net.lldp", nil, okOut(func(out any) error {
					if m, ok := out.(*payload.Map); !ok || m.Len() == 0 {
						return fmt.Errorf("%v", out)
					}
					return nil
				})},
				{"lldp none", "net.lldp", []any{"Nope0"}, okOut(func(out any) error {
					if v, ok := out.(*payload.Map).Get("Nope0"); !ok || v != nil || out.(*payload.Map).Len() != 1 {
						return fmt.Errorf("%v", out)
					}
					return nil
				})},
				{"lldp one", "net.lldp", []any{lldpIf[plat]}, okOut(func(out any) error {
					l := out.(*payload.Map).List(lldpIf[plat])
					if len(l) != 1 || out.(*payload.Map).Len() != 1 {
						return fmt.Errorf("%v", out)
					}
					return hasKeys("remote_port", "remote_system_name", "remote_chassis_id")(l[0])
				})},
				{"mac", "net.mac", []any{kw("vlan", 1)}, macCheck},
				{"environment", "net.environment", nil, okOut(hasKeys("fans", "temperature", "power", "cpu", "memory"))},
				{"config running", "net.config", []any{"running"}, okOut(func(out any) error {
					if !strings.Contains(out.(*payload.Map).Str("running"), "hostname sw2") {
						return fmt.Errorf("%v", out)
					}
					return nil
				})},
				{"config all", "net.config", nil, okOut(hasKeys("running", "candidate", "startup"))},
				{"config bad source", "net.config", []any{"bogus"}, failed(`Cannot execute "get_config" on 127.0.0.1:` + port + " as admin. Reason: ")},
				{"ping", "net.ping", []any{"10.0.0.3"}, okOut(hasKeys("error"))},
				{"connected", "net.connected", nil, func(r *payload.Map) error {
					if r.Len() != 1 || !r.Bool("out") {
						return fmt.Errorf("%v", r)
					}
					return nil
				}},
				{"compare empty", "net.compare_config", nil, okOut(func(out any) error {
					if out != "" {
						return fmt.Errorf("%q", out)
					}
					return nil
				})},
				{"ntp servers", "ntp.servers", nil, okOut(func(out any) error {
					l, _ := out.([]any)
					for _, s := range l {
						if s == "172.16.255.254" {
							return nil
						}
					}
					return fmt.Errorf("%v", out)
				})},
				{"ntp peers", "ntp.peers", nil, okOut(isList(0))},
				{"ntp stats", "ntp.stats", nil, okOut(isList(1))},
				{"ntp stats peer", "ntp.stats", []any{"192.0.2.250"}, okOut(isList(0))},
				{"bgp", "bgp.neighbors", nil, okOut(func(out any) error {
					// NAPALM names the default VRF "global" on ios and
					// as the device prints it ("default") on eos.
					vrf := "global"
					if plat == "eos" {
						vrf = "default"
					}
					g := out.(*payload.Map).Map(vrf)
					if g == nil || g.Len() == 0 {
						return fmt.Errorf("%v", out)
					}
					peers, _ := g.Items()[0].Value.([]any)
					if len(peers) == 0 {
						return fmt.Errorf("%v", g)
					}
					return hasKeys("up", "local_as", "remote_as", "remote_address", "router_id")(peers[0])
				})},
				{"bgp filtered", "bgp.neighbors", []any{"192.0.2.250"}, okOut(func(out any) error {
					// No peer of that address in any VRF.
					for _, it := range out.(*payload.Map).Items() {
						if vm, _ := it.Value.(*payload.Map); vm != nil && vm.Len() != 0 {
							return fmt.Errorf("%v", out)
						}
					}
					return nil
				})},
				{"alive", "napalm.alive", nil, okOut(func(out any) error {
					if !out.(*payload.Map).Bool("is_alive") {
						return fmt.Errorf("%v", out)
					}
					return nil
				})},
				{"call facts", "napalm.call", []any{"get_facts"}, okOut(hasKeys("model"))},
				{"call cli", "napalm.call", []any{"cli", kw("commands", []any{"show version"})}, okOut(hasKeys("show version"))},
				{"call not implemented", "napalm.call", []any{"get_firewall_policies"}, failed("get_firewall_policies is not implemented for the NAPALM " + plat + " driver!")},
				{"optics", "net.optics", nil, okOut(func(out any) error {
					m, _ := out.(*payload.Map)
					if plat == "ios" { // a CSR1000V has no transceivers
						if m == nil || m.Len() != 0 {
							return fmt.Errorf("%v", out)
						}
						return nil
					}
					ch := m.Map("Ethernet2").Map("physical_channels").List("channel")
					if len(ch) != 1 {
						return fmt.Errorf("%v", out)
					}
					st := ch[0].(*payload.Map).Map("state")
					if v, _ := st.Map("input_power").Get("instant"); v != -2.1 {
						return fmt.Errorf("rx power %v", st)
					}
					return nil
				})},
				{"call unknown", "napalm.call", []any{"frobnicate"}, failed(`Cannot execute "frobnicate" on 127.0.0.1:` + port + " as admin. Reason: '" + strings.ToUpper(plat) + "Driver' object has no attribute 'frobnicate'!")},
				{"call missing arg", "napalm.call", []any{"ping"}, failed(`Cannot execute "ping"`)},
				{"reconnect", "napalm.reconnect", []any{kw("force", true)}, func(r *payload.Map) error {
					if !r.Bool("result") || r.Str("comment") != "Connection restarted!" {
						return fmt.Errorf("%v", r)
					}
					return nil
				}},
				{"after reconnect", "net.facts", nil, okOut(hasKeys("model"))},
			}
			for _, tc := range cases {
				if err := tc.check(h.ret(tc.fun, tc.args...)); err != nil {
					t.Errorf("%s: %v", tc.name, err)
				}
			}
		})
	}
}

func TestConfigWorkflow(t *testing.T) {
	t.Parallel()
	for _, plat := range []string{"ios", "eos"} {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, plat, 1, nil)
			dev := f.Device(0)
			h := newHarness(t, initModule(t, proxyCfg(plat, f.Port(0))))
			const line = "ntp server 10.0.0.1"
			before := dev.RunningConfig()
			h.file("ntp.cfg", line+"\n")
			h.file("ntp.j2", "ntp server {{ pillar.ntp }}\n{% for s in extra %}ntp server {{ s }}\n{% endfor %}")
			// get_managed's own variables: name (/tmp/<md5 of the source>), source, mode None.
			h.file("src.j2", "ntp server 10.0.0.{{ 12 if (source == 'salt://src.j2' and name == '/tmp/' ~ ('salt://src.j2' | md5) and mode is none) else 99 }}\n")

			type want struct {
				result, already bool
				comment         string
				diffHas         string
				diffEmpty       bool
				loaded          any
				runningHas      []string
				runningLacks    []string
				unchanged       bool
			}
			cases := []struct {
				name string
				fun  string
				args []any
				want want
			}{
				{"test mode", "net.load_config", []any{kw("text", line, "test", true)},
					want{result: true, comment: "Configuration discarded.", diffHas: "+" + line, loaded: "", unchanged: true}},
				{"test mode debug", "net.load_config", []any{kw("text", line, "test", true, "debug", true)},
					want{result: true, comment: "Configuration discarded.", diffHas: "+" + line, loaded: line, unchanged: true}},
				{"salt file test", "net.load_config", []any{kw("filename", "salt://ntp.cfg", "test", true)},
					want{result: true, comment: "Configuration discarded.", diffHas: "+" + line, loaded: "", unchanged: true}},
				{"commit_in without the schedule module", "net.load_config", []any{kw("text", line, "commit_in", "5m")},
					want{comment: "Unable to schedule the commit: 'schedule.add' is not available: function not available", diffHas: "+" + line, loaded: "", unchanged: true}},
				{"revert_in without the schedule module", "net.load_config", []any{kw("text", line, "revert_in", 60)},
					want{comment: "Unable to schedule the revert: 'schedule.add' is not available: function not available", diffHas: "+" + line, loaded: "", unchanged: true}},
				{"commit_in unreadable", "net.load_config", []any{kw("text", line, "commit_in", "soon")},
					want{comment: "Unable to schedule the commit: netmod: bad time: \"soon\" is not a time span such as 30, 30m, 1h30m or 1:30 (minutes)", diffHas: "+" + line, loaded: "", unchanged: true}},
				{"no commit", "net.load_config", []any{kw("text", line, "commit", false)},
					want{result: true, diffHas: "+" + line, loaded: "", unchanged: true}},
				{"discard", "net.discard_config", nil, want{result: true, unchanged: true}},
				{"commit", "net.load_config", []any{kw("text", line)},
					want{result: true, diffHas: "+" + line, loaded: "", runningHas: []string{line}}},
				{"already configured", "net.load_config", []any{kw("text", line)},
					want{result: true, already: true, comment: "Already configured.", diffEmpty: true, loaded: "", runningHas: []string{line}}},
				{"rollback", "net.rollback", nil, want{result: true, runningLacks: []string{line}, runningHas: []string{"ntp server 172.16.255.254"}}},
				{"template source test", "net.load_template", []any{kw("template_source", "ntp server {{ a }}\nntp server {{ b }}\n",
					"context", payload.NewMap("a", "10.0.0.5"), "defaults", payload.NewMap("a", "10.9.9.9", "b", "10.0.0.6"), "test", true)},
					want{result: true, comment: "Configuration discarded.", diffHas: "+ntp server 10.0.0.6", loaded: "", unchanged: true}},
				{"template file variables", "net.load_template", []any{"salt://src.j2", kw("test", true)},
					want{result: true, comment: "Configuration discarded.", diffHas: "+ntp server 10.0.0.12", loaded: "", unchanged: true}},
				{"template file commit", "net.load_template", []any{"salt://ntp.j2", kw("extra", []any{"10.0.0.8"})},
					want{result: true, diffHas: "+ntp server 10.0.0.7", loaded: "", runningHas: []string{"ntp server 10.0.0.7", "ntp server 10.0.0.8"}}},
				{"ntp set_servers test", "ntp.set_servers", []any{"10.0.0.9", kw("test", true)},
					want{result: true, comment: "Configuration discarded.", diffHas: "+ntp server 10.0.0.9", loaded: "", runningLacks: []string{"ntp server 10.0.0.9"}}},
				{"ntp delete_servers", "ntp.delete_servers", []any{"10.0.0.8"},
					want{result: true, diffHas: "10.0.0.8", loaded: "", runningLacks: []string{"ntp server 10.0.0.8"}, runningHas: []string{"ntp server 10.0.0.7"}}},
			}
			for _, tc := range cases {
				prev := dev.RunningConfig()
				r := h.exec(tc.fun, tc.args...)
				m, ok := r.Return.(*payload.Map)
				if !ok {
					t.Fatalf("%s: %v", tc.name, r.Return)
				}
				w := tc.want
				var errs []string
				if m.Bool("result") != w.result || (r.Retcode == 0) != w.result {
					errs = append(errs, fmt.Sprintf("result/retcode %d", r.Retcode))
				}
				if m.Str("comment") != w.comment {
					errs = append(errs, fmt.Sprintf("comment %q", m.Str("comment")))
				}
				if tc.fun != "net.rollback" && tc.fun != "net.discard_config" {
					if strings.Join(m.Keys(), ",") != "result,comment,already_configured,loaded_config,diff" {
						errs = append(errs, fmt.Sprintf("keys %v", m.Keys()))
					}
					if m.Bool("already_configured") != w.already {
						errs = append(errs, "already_configured")
					}
					if lc, _ := m.Get("loaded_config"); lc != w.loaded {
						errs = append(errs, fmt.Sprintf("loaded_config %q", lc))
					}
					if d := m.Str("diff"); !strings.Contains(d, w.diffHas) || (w.diffEmpty && d != "") {
						errs = append(errs, fmt.Sprintf("diff %q", d))
					}
				}
				run := dev.RunningConfig()
				if w.unchanged && run != prev {
					errs = append(errs, "running config changed")
				}
				for _, s := range w.runningHas {
					if !strings.Contains(run, s) {
						errs = append(errs, "running lacks "+s)
					}
				}
				for _, s := range w.runningLacks {
					if strings.Contains(run, s) {
						errs = append(errs, "running has "+s)
					}
				}
				if len(errs) > 0 {
					t.Errorf("%s: %s\nreturn: %v", tc.name, strings.Join(errs, "; "), m)
				}
			}
			if !strings.Contains(before, "ntp server 172.16.255.254") {
				t.Errorf("unexpected base config")
			}

			// Failures before any device change.
			for _, tc := range []struct {
				name string
				args []any
				want *payload.Map
			}{
				{"missing file", []any{"salt://nope.j2"}, payload.NewMap("result", false, "comment", "Source file salt://nope.j2 not found in saltenv 'base'", "out", nil)},
				{"bad engine", []any{kw("template_source", "x", "template_engine", "mako")}, payload.NewMap("result", false, "comment", "Invalid templating engine! Choose between: jinja", "out", nil)},
				{"bad template", []any{kw("template_source", "ntp server {{ a ")}, payload.NewMap("result", false, "comment", "Error while rendering the template.", "out", nil)},
			} {
				m := h.ret("net.load_template", tc.args...)
				if fmt.Sprint(m) != fmt.Sprint(tc.want) {
					t.Errorf("%s: %v", tc.name, m)
				}
			}
			m := h.ret("net.load_config", kw("filename", "salt://nope.cfg"))
			if fmt.Sprint(m) != fmt.Sprint(payload.NewMap("result", false, "out", nil, "comment", "Unable to read from salt://nope.cfg. Please specify a valid file or text.")) {
				t.Errorf("missing file: %v", m)
			}
			if plat == "eos" {
				prev := dev.RunningConfig()
				r := h.exec("net.load_config", kw("text", "ntp server 10.9.9.9\nthis is not a command\n"))
				m := r.Return.(*payload.Map)
				c := m.Str("comment")
				if m.Bool("result") || r.Retcode != 1 || !strings.HasPrefix(c, `Cannot execute "load_merge_candidate"`) ||
					!strings.HasSuffix(c, "!\nConfiguration discarded.") || dev.RunningConfig() != prev {
					t.Errorf("bad config: %d %v", r.Retcode, m)
				}
			}
		})
	}
}

func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return port
}

func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("init", func(t *testing.T) {
		t.Parallel()
		bad := startFleet(t, "ios", 1, map[int]devsim.Fault{0: devsim.FaultBadAuth})
		dead := closedPort(t)
		cases := []struct {
			name string
			cfg  *proxymod.Config
			errs []error
			msg  string
		}{
			{"bad auth", proxyCfg("ios", bad.Port(0)), []error{proxymod.ErrNapalmConnect, driver.ErrAuth},
				fmt.Sprintf("Cannot connect to 127.0.0.1:%d as admin.", bad.Port(0))},
			{"unreachable", proxyCfg("eos", dead), []error{proxymod.ErrNapalmConnect, driver.ErrConnect},
				fmt.Sprintf("Cannot connect to 127.0.0.1:%d as admin.", dead)},
			{"no driver", &proxymod.Config{ID: "x", Proxy: payload.NewMap("host", "h")}, []error{proxymod.ErrNapalmConfig}, "driver name"},
			{"unknown driver", &proxymod.Config{ID: "x", Proxy: payload.NewMap("host", "h", "driver", "vyos")}, []error{proxymod.ErrNapalmConfig, driver.ErrUnknownDriver}, "vyos"},
		}
		for _, tc := range cases {
			err := proxymod.NewNapalm(nil).Init(ctx, tc.cfg)
			for _, e := range tc.errs {
				if !errors.Is(err, e) {
					t.Errorf("%s: %v is not %v", tc.name, err, e)
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
	})
	t.Run("device gone", func(t *testing.T) {
		t.Parallel()
		f := startFleet(t, "ios", 1, nil)
		port := f.Port(0)
		alive := initModule(t, proxyCfg("ios", port))
		perCall := initModule(t, proxyCfg("ios", port, "always_alive", false))
		ha, hp := newHarness(t, alive), newHarness(t, perCall)
		if r := hp.ret("net.facts"); !r.Bool("result") || r.Map("out").Str("model") != "CSR1000V" {
			t.Fatalf("per-call facts: %v", r)
		}
		if ok, _ := perCall.Alive(ctx); !ok {
			t.Error("not-always-alive module must report alive")
		}
		_ = f.Close()
		r := ha.ret("net.facts")
		want := fmt.Sprintf(`Cannot execute "get_facts" on 127.0.0.1:%d as admin. Reason: `, port)
		if r.Bool("result") || !strings.HasPrefix(r.Str("comment"), want) || r.Map("out") == nil || r.Map("out").Len() != 0 {
			t.Errorf("always alive, device gone: %v", r)
		}
		if ok, _ := alive.Alive(ctx); ok {
			t.Error("alive after the device went away")
		}
		res := hp.exec("net.facts")
		if res.Return != fmt.Sprintf("Cannot connect to 127.0.0.1:%d as admin.. See log for details.", port) {
			t.Errorf("per call, device gone: %v", res.Return)
		}
		g, err := perCall.Grains(ctx)
		if err != nil || g.Str("os") != "ios" {
			t.Errorf("grains of an unreachable device: %v %v", g, err)
		}
		if v, _ := g.Get("model"); v != nil {
			t.Errorf("model of an unreachable device: %v", v)
		}
	})
	t.Run("not a proxy", func(t *testing.T) {
		reg := modules.NewRegistry()
		if err := reg.Register(netmod.Functions()...); err != nil {
			t.Fatal(err)
		}
		r := reg.Execute(ctx, modules.Binder{}, &modules.Env{}, "net.facts", nil, nil)
		if r.Return != "ERROR: "+proxymod.ErrNotProxy.Error() || r.Retcode != 1 {
			t.Errorf("%v", r.Return)
		}
	})
}

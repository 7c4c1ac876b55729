package netmod_test

import (
	"strings"
	"testing"

	"github.com/gsalt/gsalt/wire/payload"
)

// TestBGPRouteProbesNetmiko drives bgp.config, bgp.neighbors, route.show,
// probes.*, napalm.call get_network_instances and the napalm.netmiko_*
// functions against simulated devices.
func TestBGPRouteProbesNetmiko(t *testing.T) {
	t.Parallel()
	for _, plat := range []string{"ios", "eos"} {
		t.Run(plat, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, plat, 1, nil)
			h := newHarness(t, initModule(t, proxyCfg(plat, f.Port(0))))

			bgp := "router bgp 65001\n neighbor 10.0.0.2 remote-as 65002\n neighbor 10.0.0.2 description upstream\n"
			if plat == "eos" {
				bgp = "router bgp 65001\n   neighbor 10.0.0.2 remote-as 65002\n   neighbor 10.0.0.2 description upstream\n"
			}
			if r := h.ret("net.load_config", kw("text", bgp, "commit", true)); !r.Bool("result") {
				t.Fatalf("load_config: %v", r)
			}
			r := h.ret("bgp.config")
			out, _ := r.Get("out")
			cfg, _ := out.(*payload.Map)
			peer := cfg.Map("_").Map("neighbors").Map("10.0.0.2")
			las, _ := cfg.Map("_").Get("local_as")
			if !r.Bool("result") || peer == nil || peer.Str("description") != "upstream" || las != int64(65001) {
				t.Fatalf("bgp.config: %v", r)
			}
			if as, _ := peer.Get("remote_as"); as != int64(65002) {
				t.Errorf("remote_as: %v", peer)
			}

			r = h.ret("route.show", "10.99.0.0/24", "bgp")
			if plat == "ios" {
				// no such route: NAPALM ios keeps the asked prefix with no entries
				out, _ = r.Get("out")
				m, _ := out.(*payload.Map)
				if l, ok := m.Get("10.99.0.0/24"); !r.Bool("result") || !ok || len(l.([]any)) != 0 {
					t.Errorf("route.show: %v", r)
				}
			}
			r = h.ret("route.show", "not-a-prefix")
			if r.Bool("result") || !strings.Contains(r.Str("comment"), "Please specify a valid destination!") {
				t.Errorf("route.show bad destination: %v", r)
			}

			r = h.ret("probes.results")
			if r.Bool("result") || r.Str("comment") != "get_probes_results is not implemented for the NAPALM "+plat+" driver!" {
				t.Errorf("probes.results: %v", r)
			}

			args := h.exec("napalm.netmiko_args")
			am, ok := args.Return.(*payload.Map)
			wantType := map[string]string{"ios": "cisco_ios", "eos": "arista_eos"}[plat]
			if !ok || am.Str("device_type") != wantType || am.Str("host") != "127.0.0.1" || am.Str("username") != "admin" || am.Str("secret") != secret {
				t.Errorf("netmiko_args: %v", args.Return)
			}
			if _, ok := am.Get("port"); !ok {
				t.Errorf("netmiko_args without the port: %v", am)
			}

			cmds := h.exec("napalm.netmiko_commands", "show version", "show clock")
			l, ok := cmds.Return.([]any)
			if !ok || len(l) != 2 || !strings.Contains(payload.Text(l[0]), map[string]string{"ios": "Cisco", "eos": "Arista"}[plat]) {
				t.Fatalf("netmiko_commands: %#v", cmds.Return)
			}

			conf := h.exec("napalm.netmiko_config", "ntp server 10.9.9.{{ 3 + 6 }}")
			if s, ok := conf.Return.(string); !ok || !strings.Contains(s, "ntp server 10.9.9.9") {
				t.Fatalf("netmiko_config: %#v", conf.Return)
			}
			run := h.exec("napalm.netmiko_call", "send_command", "show running-config")
			if s, ok := run.Return.(string); !ok || !strings.Contains(s, "ntp server 10.9.9.9") {
				t.Errorf("netmiko_call send_command: %#v", run.Return)
			}
			multi := h.exec("napalm.netmiko_multi_call",
				payload.NewMap("name", "find_prompt"),
				payload.NewMap("name", "send_command", "args", []any{"show version"}))
			ml, ok := multi.Return.([]any)
			if !ok || len(ml) != 2 || !strings.HasSuffix(payload.Text(ml[0]), "#") {
				t.Errorf("netmiko_multi_call: %#v", multi.Return)
			}
			bad := h.exec("napalm.netmiko_call", "no_such_method")
			if !strings.Contains(payload.Text(bad.Return), "object has no attribute 'no_such_method'") {
				t.Errorf("netmiko_call unknown method: %#v", bad.Return)
			}

			if plat != "ios" {
				return // the simulated EOS has no "show vrf | json" yet
			}
			r = h.ret("napalm.call", "get_network_instances")
			out, _ = r.Get("out")
			ni, _ := out.(*payload.Map)
			if !r.Bool("result") || ni.Map("default") == nil || ni.Map("default").Str("type") != "DEFAULT_INSTANCE" {
				t.Errorf("get_network_instances: %v", r)
			}
		})
	}
}

package netmod

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// napalmNotImplemented are NAPALM base methods gsalt's drivers lack; calling
// them gives NAPALM's NotImplementedError comment.
var napalmNotImplemented = map[string]bool{
	"get_firewall_policies": true, "confirm_commit": true, "has_pending_commit": true,
	"get_config_sections": true, "load_template": true, "traceroute_vrf": true,
}

// napalmFunctions is Salt's napalm_mod module (napalm.alive, napalm.call,
// napalm.reconnect).
func napalmFunctions() []modules.Function {
	return []modules.Function{
		{Name: "napalm.alive", Doc: "Returns the alive status of the connection layer.\n\nCLI Example:\n\n    salt '*' napalm.alive",
			Spec: kwargsOnly, Fn: getter("is_alive", func(ctx context.Context, d driver.Driver) (any, error) {
				return payload.NewMap("is_alive", d.IsAlive(ctx)), nil
			})},
		{Name: "napalm.reconnect", Doc: "Reconnect the NAPALM proxy when the connection is dropped by the network device (force=True always reconnects).\n\nCLI Example:\n\n    salt '*' napalm.reconnect",
			Spec: modules.Spec{Params: []modules.Param{p("force", false)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					ret := payload.NewMap("out", nil, "result", true, "comment", "Already alive.")
					alive := n.Call(ctx, "is_alive", func(ctx context.Context, d driver.Driver) (any, error) {
						return payload.NewMap("is_alive", d.IsAlive(ctx)), nil
					})
					isAlive := alive.Bool("result") && alive.Map("out") != nil && alive.Map("out").Bool("is_alive")
					if !isAlive || c.Args.Bool("force") {
						if err := n.Reconnect(ctx); err != nil {
							c.Log().Error("napalm.reconnect: cannot reopen the connection", "err", err)
						}
						ret.Set("comment", "Connection restarted!")
					}
					return ret, nil
				})
			}},
		{Name: "napalm.compliance_report", Doc: "Return the compliance report.\n\nfilepath\n    The absolute path to the validation file (salt:// supported).\n\nstring\n    The compliance report send as inline string.\n\nrenderer: ``jinja|yaml``\n    The renderer pipe to send the file through.\n\nCLI Example:\n\n    salt '*' napalm.compliance_report ~/validate.yml\n    salt '*' napalm.compliance_report salt://path/to/validator.sls",
			Spec: modules.Spec{Params: []modules.Param{p("filepath", nil), p("string", nil), p("renderer", "jinja|yaml")}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				text := str(c.Args.Get("string"))
				if fp := str(c.Args.Get("filepath")); fp != "" {
					saltenv := c.Args.Kwargs.Str("saltenv")
					if saltenv == "" {
						saltenv = "base"
					}
					s, ok := readSource(ctx, c, fp, saltenv)
					if !ok {
						return nil, fmt.Errorf("%w: template file %s not found", modules.ErrExecution, fp)
					}
					text = s
				}
				src, err := render.Default().Render(ctx, []byte(text), str(c.Args.Get("renderer")), renderContext(c, "base"))
				if err != nil {
					return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
				}
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					return n.Call(ctx, "compliance_report", func(ctx context.Context, d driver.Driver) (any, error) {
						return complianceReport(ctx, n, d, src)
					}), nil
				})
			}},
		{Name: "napalm.call", Doc: "Execute arbitrary methods from the NAPALM library, returning {out, result, comment}.\n\nCLI Example:\n\n    salt '*' napalm.call get_lldp_neighbors\n    salt '*' napalm.call cli \"['show version']\"",
			Spec: modules.Spec{Params: []modules.Param{rp("method")}, Varargs: true, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				method := c.Args.Str("method")
				a := callArgs{pos: c.Args.Varargs, kw: c.Args.CleanKwargs()}
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					switch method {
					case "open":
						return n.Call(ctx, method, func(ctx context.Context, _ driver.Driver) (any, error) { return nil, n.Reconnect(ctx) }), nil
					case "close":
						r := n.Call(ctx, method, func(context.Context, driver.Driver) (any, error) { return nil, nil })
						n.Disconnect(ctx)
						return r, nil
					}
					return n.Call(ctx, method, func(ctx context.Context, d driver.Driver) (any, error) {
						return callMethod(ctx, n, d, method, a)
					}), nil
				})
			}},
	}
}

// callArgs are napalm.call's *args and **kwargs (None values dropped, as
// salt.utils.napalm.call does).
type callArgs struct {
	pos []any
	kw  *payload.Map
}

// get returns argument i (by position) or name (by keyword).
func (a callArgs) get(i int, name string) any {
	if i < len(a.pos) {
		return a.pos[i]
	}
	v, _ := a.kw.Get(name)
	return v
}

// required returns a required argument or Python's TypeError text.
func (a callArgs) required(method string, i int, name string) (any, error) {
	v := a.get(i, name)
	if v == nil {
		return nil, fmt.Errorf("%s() missing 1 required positional argument: '%s'", method, name)
	}
	return v, nil
}

// strList reads a list of strings (a single string is one element).
func strList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, payload.Text(e))
		}
		return out
	}
	return []string{payload.Text(v)}
}

// callMethod maps a NAPALM method name to the driver.
func callMethod(ctx context.Context, n *proxymod.Napalm, d driver.Driver, method string, a callArgs) (any, error) {
	switch method {
	case "cli":
		v, err := a.required(method, 0, "commands")
		if err != nil {
			return nil, err
		}
		cmds := strList(v)
		outs, err := d.Cli(ctx, cmds)
		if err != nil {
			return nil, err
		}
		m := &payload.Map{}
		for _, c := range cmds {
			if o, ok := outs[c]; ok {
				m.Set(c, o)
			}
		}
		return m, nil
	case "is_alive":
		return payload.NewMap("is_alive", d.IsAlive(ctx)), nil
	case "get_facts":
		return d.GetFacts(ctx)
	case "get_interfaces":
		return d.GetInterfaces(ctx)
	case "get_interfaces_ip":
		return d.GetInterfacesIP(ctx)
	case "get_arp_table":
		return d.GetArpTable(ctx, str(a.get(0, "vrf")))
	case "get_lldp_neighbors":
		return d.GetLLDPNeighbors(ctx)
	case "get_lldp_neighbors_detail":
		return d.GetLLDPNeighborsDetail(ctx, str(a.get(0, "interface")))
	case "get_mac_address_table":
		return d.GetMACAddressTable(ctx)
	case "get_environment":
		return d.GetEnvironment(ctx)
	case "get_ntp_servers":
		return d.GetNTPServers(ctx)
	case "get_ntp_peers":
		return d.GetNTPPeers(ctx)
	case "get_ntp_stats":
		return d.GetNTPStats(ctx)
	case "get_bgp_neighbors":
		return d.GetBGPNeighbors(ctx)
	case "get_config":
		r := str(a.get(0, "retrieve"))
		if r == "" {
			r = "all"
		}
		return driver.GetConfigWith(ctx, d, driver.ConfigOptions{Retrieve: r,
			Full: payload.Truthy(a.get(1, "full")), Sanitized: payload.Truthy(a.get(2, "sanitized"))})
	case "get_snmp_information":
		return snmpInformation(ctx, d)
	case "get_users":
		return users(ctx, d)
	case "get_optics":
		return optics(ctx, d)
	case "get_interfaces_counters":
		g, ok := d.(driver.CountersGetter)
		if !ok {
			return nil, driver.NotSupported(d, method)
		}
		return g.GetInterfacesCounters(ctx)
	case "get_ipv6_neighbors_table":
		g, ok := d.(driver.IPv6NeighborsGetter)
		if !ok {
			return nil, driver.NotSupported(d, method)
		}
		return g.GetIPv6NeighborsTable(ctx)
	case "get_vlans":
		g, ok := d.(driver.VLANsGetter)
		if !ok {
			return nil, driver.NotSupported(d, method)
		}
		return g.GetVLANs(ctx)
	case "get_bgp_config":
		return bgpConfig(ctx, d, str(a.get(0, "group")), str(a.get(1, "neighbor")))
	case "get_bgp_neighbors_detail":
		return bgpNeighborsDetail(ctx, d, str(a.get(0, "neighbor_address")))
	case "get_route_to":
		return routeTo(ctx, d, driver.RouteOptions{Destination: str(a.get(0, "destination")),
			Protocol: str(a.get(1, "protocol")), Longer: payload.Truthy(a.get(2, "longer"))})
	case "get_probes_config":
		return probesConfig(ctx, d)
	case "get_probes_results":
		return probesResults(ctx, d)
	case "get_network_instances":
		return networkInstances(ctx, d, str(a.get(0, "name")))
	case "compare_config":
		return d.CompareConfig(ctx)
	case "discard_config":
		return nil, d.DiscardConfig(ctx)
	case "rollback":
		return nil, d.Rollback(ctx)
	case "commit_config":
		return nil, d.CommitConfig(ctx, str(a.get(0, "message")), intArg(a.get(1, "revert_in")))
	case "load_merge_candidate", "load_replace_candidate":
		text := a.get(1, "config")
		if fn := str(a.get(0, "filename")); fn != "" {
			st, err := os.Stat(fn)
			if err != nil || st.Size() > maxFileSize {
				return nil, fmt.Errorf("%w: cannot read %s", driver.ErrInvalidArgument, fn)
			}
			b, err := os.ReadFile(fn)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", driver.ErrInvalidArgument, err)
			}
			text = string(b)
		}
		if text == nil {
			return nil, fmt.Errorf("%w: please provide a config or a filename", driver.ErrInvalidArgument)
		}
		if method == "load_replace_candidate" {
			return nil, d.LoadReplaceCandidate(ctx, payload.Text(text))
		}
		return nil, d.LoadMergeCandidate(ctx, payload.Text(text))
	case "ping":
		dst, err := a.required(method, 0, "destination")
		if err != nil {
			return nil, err
		}
		return d.Ping(ctx, driver.PingOptions{Destination: payload.Text(dst), Source: str(a.get(1, "source")),
			TTL: intArg(a.get(2, "ttl")), Timeout: intArg(a.get(3, "timeout")), Size: intArg(a.get(4, "size")),
			Count: intArg(a.get(5, "count")), VRF: str(a.get(6, "vrf"))})
	case "traceroute":
		dst, err := a.required(method, 0, "destination")
		if err != nil {
			return nil, err
		}
		return d.Traceroute(ctx, driver.TracerouteOptions{Destination: payload.Text(dst), Source: str(a.get(1, "source")),
			TTL: intArg(a.get(2, "ttl")), Timeout: intArg(a.get(3, "timeout")), VRF: str(a.get(4, "vrf"))})
	}
	if napalmNotImplemented[method] {
		return nil, fmt.Errorf("%w: %s", driver.ErrNotSupported, method)
	}
	return nil, fmt.Errorf("'%sDriver' object has no attribute '%s'", strings.ToUpper(n.DriverName()), method)
}

package netmod

import (
	"context"
	"errors"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// bgpFunctions is Salt's napalm_bgp module (bgp.config, bgp.neighbors).
func bgpFunctions() []modules.Function {
	return []modules.Function{
		{Name: "bgp.config", Doc: "Provides the BGP configuration on the device.\n\n:param group: Name of the group selected to display the configuration.\n:param neighbor: IP Address of the neighbor to display the configuration.\n    If the group parameter is not specified, the neighbor setting will be\n    ignored.\n\nCLI Example:\n\n    salt '*' bgp.config # entire BGP config\n    salt '*' bgp.config PEERS-GROUP-NAME # provides detail only about BGP group PEERS-GROUP-NAME\n    salt '*' bgp.config PEERS-GROUP-NAME 172.17.17.1 # provides details only about BGP neighbor 172.17.17.1,\n    # configured in the group PEERS-GROUP-NAME",
			Spec: modules.Spec{Params: []modules.Param{p("group", nil), p("neighbor", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				group, neighbor := str(c.Args.Get("group")), str(c.Args.Get("neighbor"))
				return getter("get_bgp_config", func(ctx context.Context, d driver.Driver) (any, error) {
					return bgpConfig(ctx, d, group, neighbor)
				})(ctx, c)
			}},
		{Name: "bgp.neighbors", Doc: "Provides details regarding the BGP sessions configured on the network device.\n\n:param neighbor: IP Address of a specific neighbor.\n\nCLI Example:\n\n    salt '*' bgp.neighbors  # all neighbors\n    salt '*' bgp.neighbors 172.17.17.1  # only session with BGP neighbor(s) 172.17.17.1",
			Spec: modules.Spec{Params: []modules.Param{p("neighbor", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				neighbor := str(c.Args.Get("neighbor"))
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					return n.Call(ctx, "get_bgp_neighbors_detail", func(ctx context.Context, d driver.Driver) (any, error) {
						return bgpNeighborsDetail(ctx, d, neighbor)
					}), nil
				})
			}},
	}
}

// bgpConfig is NAPALM get_bgp_config on drivers that have it.
func bgpConfig(ctx context.Context, d driver.Driver, group, neighbor string) (any, error) {
	g, ok := d.(driver.BGPConfigGetter)
	if !ok {
		return nil, driver.NotSupported(d, "get_bgp_config")
	}
	return g.GetBGPConfig(ctx, group, neighbor)
}

// bgpNeighborsDetail is NAPALM get_bgp_neighbors_detail: the driver's own
// where it has one (ios, eos), else, or when the device rejects its
// commands (a gsalt addition), the peers of get_bgp_neighbors shaped the
// same way with the keys the summary provides.
func bgpNeighborsDetail(ctx context.Context, d driver.Driver, neighbor string) (any, error) {
	if g, ok := d.(driver.BGPNeighborsDetailGetter); ok {
		res, err := g.GetBGPNeighborsDetail(ctx, neighbor)
		if err == nil || !errors.Is(err, driver.ErrCommand) {
			return res, err
		}
	}
	vrfs, err := d.GetBGPNeighbors(ctx)
	if err != nil {
		return nil, err
	}
	return bgpDetail(vrfs, neighbor), nil
}

// bgpDetail shapes get_bgp_neighbors like NAPALM's
// get_bgp_neighbors_detail ({vrf: {remote_as: [peer details]}}) with the
// keys the summary provides: up, local_as, remote_as, router_id,
// remote_address, connection_state, description and the prefix counters.
func bgpDetail(vrfs map[string]driver.BGPVRF, neighbor string) *payload.Map {
	out := &payload.Map{}
	for _, vk := range driver.ToPayload(vrfs).(*payload.Map).Items() {
		vrfName := payload.KeyString(vk.Key)
		vrf := vrfs[vrfName]
		byAS := &payload.Map{}
		peers := driver.ToPayload(vrf.Peers).(*payload.Map)
		for _, pk := range peers.Items() {
			addr := payload.KeyString(pk.Key)
			if neighbor != "" && addr != neighbor {
				continue
			}
			peer := vrf.Peers[addr]
			var recv, acc, sent int64
			for _, af := range peer.AddressFamily {
				recv += int64(max(af.ReceivedPrefixes, 0))
				acc += int64(max(af.AcceptedPrefixes, 0))
				sent += int64(max(af.SentPrefixes, 0))
			}
			state := "Idle"
			if peer.IsUp {
				state = "Established"
			}
			entry := payload.NewMap(
				"up", peer.IsUp,
				"local_as", peer.LocalAS,
				"remote_as", peer.RemoteAS,
				"router_id", vrf.RouterID,
				"remote_address", addr,
				"routing_table", vrfName,
				"connection_state", state,
				"description", peer.Description,
				"received_prefix_count", recv,
				"accepted_prefix_count", acc,
				"advertised_prefix_count", sent,
			)
			list, _ := byAS.GetKey(peer.RemoteAS)
			l, _ := list.([]any)
			byAS.SetKey(peer.RemoteAS, append(l, entry))
		}
		if byAS.Len() > 0 {
			out.Set(vrfName, byAS)
		}
	}
	return out
}

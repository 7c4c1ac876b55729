package virt

import (
	"context"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

func (m *Module) networkFunctions() []modules.Function {
	byName := func(fn func(n Network, c *modules.Call) (any, error)) modules.Func {
		return m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
			n, err := conn.NetworkByName(c.Args.Str("name"))
			if err != nil {
				return nil, err
			}
			return fn(n, c)
		})
	}
	act := func(f func(Network) error) modules.Func {
		return byName(func(n Network, _ *modules.Call) (any, error) {
			if err := f(n); err != nil {
				return nil, err
			}
			return true, nil
		})
	}
	name := kwSpec(req("name"))
	return []modules.Function{
		{Name: "virt.list_networks", Doc: "List all virtual networks.\n\nCLI Example:\n\n    salt '*' virt.list_networks", Spec: kwSpec(),
			Fn: m.withConn(func(_ context.Context, _ *modules.Call, conn Conn) (any, error) {
				ns, err := conn.Networks()
				if err != nil {
					return nil, err
				}
				out := []any{}
				for _, n := range ns {
					s, err := n.Name()
					if err != nil {
						return nil, err
					}
					out = append(out, s)
				}
				return out, nil
			})},
		{Name: "virt.network_info", Doc: "Return information on a virtual network provided its name.\n\nCLI Example:\n\n    salt '*' virt.network_info default", Spec: kwSpec(opt("name", nil)),
			Fn: m.withConn(func(_ context.Context, c *modules.Call, conn Conn) (any, error) {
				res, err := networkInfo(conn, c.Args.Get("name"))
				if err != nil {
					// Salt silences libvirt errors here and returns {}.
					c.Log().Debug("Silenced libvirt error", "err", err)
					return payload.NewMap(), nil
				}
				return res, nil
			})},
		{Name: "virt.network_get_xml", Doc: "Return the XML definition of a virtual network\n\nCLI Example:\n\n    salt '*' virt.network_get_xml default", Spec: name,
			Fn: byName(func(n Network, _ *modules.Call) (any, error) { return n.XML() })},
		{Name: "virt.network_start", Doc: "Start a defined virtual network.\n\nCLI Example:\n\n    salt '*' virt.network_start default", Spec: name, Fn: act(Network.Create)},
		{Name: "virt.network_stop", Doc: "Stop a defined virtual network.\n\nCLI Example:\n\n    salt '*' virt.network_stop default", Spec: name, Fn: act(Network.Destroy)},
		{Name: "virt.network_undefine", Doc: "Remove a defined virtual network. This does not stop the virtual network.\n\nCLI Example:\n\n    salt '*' virt.network_undefine default", Spec: name, Fn: act(Network.Undefine)},
		{Name: "virt.network_set_autostart", Doc: "Set the autostart flag on a virtual network so that the network\nwill start with the host system on reboot.\n\nCLI Example:\n\n    salt \"*\" virt.network_set_autostart <pool> <on | off>", Spec: kwSpec(req("name"), opt("state", "on")),
			Fn: byName(func(n Network, c *modules.Call) (any, error) {
				if err := n.SetAutostart(c.Args.Get("state") == "on"); err != nil {
					return nil, err
				}
				return true, nil
			})},
	}
}

func networkInfo(conn Conn, name any) (*payload.Map, error) {
	ns, err := conn.Networks()
	if err != nil {
		return nil, err
	}
	out := payload.NewMap()
	for _, n := range ns {
		nn, err := n.Name()
		if err != nil {
			return nil, err
		}
		if name != nil && nn != payload.Text(name) {
			continue
		}
		uuid, err := n.UUID()
		if err != nil {
			return nil, err
		}
		var bridge any
		if b, err := n.Bridge(); err == nil {
			bridge = b
		}
		auto, err := n.Autostart()
		if err != nil {
			return nil, err
		}
		active, err := n.Active()
		if err != nil {
			return nil, err
		}
		pers, err := n.Persistent()
		if err != nil {
			return nil, err
		}
		ls, err := n.Leases()
		if err != nil {
			return nil, err
		}
		leases := []any{}
		for _, l := range ls {
			typ := "unknown"
			switch l.IPType {
			case 0:
				typ = "ipv4"
			case 1:
				typ = "ipv6"
			}
			leases = append(leases, payload.NewMap("iface", l.Iface, "expirytime", l.Expiry, "type", typ, "mac", l.Mac,
				"iaid", nilIfEmpty(l.IaID), "ipaddr", l.IPAddr, "prefix", int64(l.Prefix), "hostname", nilIfEmpty(l.Hostname), "clientid", nilIfEmpty(l.ClientID)))
		}
		out.Set(nn, payload.NewMap("uuid", uuid, "bridge", bridge, "autostart", b2i(auto), "active", b2i(active),
			"persistent", b2i(pers), "leases", leases))
	}
	return out, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

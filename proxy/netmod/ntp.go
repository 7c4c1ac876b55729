package netmod

import (
	"context"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// ntpFunctions is Salt's napalm_ntp module (ntp.*).
func ntpFunctions() []modules.Function {
	keys := func(method string, fn func(ctx context.Context, d driver.Driver) (any, error)) modules.Func {
		return func(ctx context.Context, c *modules.Call) (any, error) {
			return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
				r := n.Call(ctx, method, fn)
				if !r.Bool("result") {
					return r, nil
				}
				list := []any{}
				if m := r.Map("out"); m != nil {
					for _, it := range m.Items() {
						list = append(list, it.Key)
					}
				}
				r.Set("out", list)
				return r, nil
			})
		}
	}
	change := func(kind string, remove bool) modules.Func {
		return func(ctx context.Context, c *modules.Call) (any, error) {
			return ntpChange(ctx, c, kind, remove)
		}
	}
	varSpec := modules.Spec{Varargs: true, Kwargs: true}
	return []modules.Function{
		{Name: "ntp.peers", Doc: "Returns a list the NTP peers configured on the network device.\n\nCLI Example:\n\n    salt '*' ntp.peers",
			Spec: kwargsOnly, Fn: keys("get_ntp_peers", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetNTPPeers(ctx) })},
		{Name: "ntp.servers", Doc: "Returns a list of the configured NTP servers on the device.\n\nCLI Example:\n\n    salt '*' ntp.servers",
			Spec: kwargsOnly, Fn: keys("get_ntp_servers", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetNTPServers(ctx) })},
		{Name: "ntp.stats", Doc: "Returns a dictionary containing synchronization details of the NTP peers.\n\nCLI Example:\n\n    salt '*' ntp.stats",
			Spec: modules.Spec{Params: []modules.Param{p("peer", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					r := n.Call(ctx, "get_ntp_stats", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetNTPStats(ctx) })
					if !r.Bool("result") {
						return r, nil
					}
					if peer := c.Args.Get("peer"); payload.Truthy(peer) {
						out, _ := r.Get("out")
						r.Set("out", filterList(out, "remote", peer))
					}
					return r, nil
				})
			}},
		{Name: "ntp.set_peers", Doc: "Configures a list of NTP peers on the device (test=True, commit=False supported).\n\nCLI Example:\n\n    salt '*' ntp.set_peers 192.168.0.1 172.17.17.1 time.apple.com",
			Spec: varSpec, Fn: change("peer", false)},
		{Name: "ntp.set_servers", Doc: "Configures a list of NTP servers on the device (test=True, commit=False supported).\n\nCLI Example:\n\n    salt '*' ntp.set_servers 192.168.0.1 172.17.17.1 time.apple.com",
			Spec: varSpec, Fn: change("server", false)},
		{Name: "ntp.delete_peers", Doc: "Removes NTP peers configured on the device (test=True, commit=False supported).\n\nCLI Example:\n\n    salt '*' ntp.delete_peers 8.8.8.8 time.apple.com",
			Spec: varSpec, Fn: change("peer", true)},
		{Name: "ntp.delete_servers", Doc: "Removes NTP servers configured on the device (test=True, commit=False supported).\n\nCLI Example:\n\n    salt '*' ntp.delete_servers 8.8.8.8 time.apple.com",
			Spec: varSpec, Fn: change("server", true)},
	}
}

// ntpChange is set_/delete_ peers/servers. Salt renders NAPALM's retired
// set_ntp_* templates; gsalt generates the same lines ("[no] ntp
// server|peer <address>"), which IOS and EOS both accept.
func ntpChange(ctx context.Context, c *modules.Call, kind string, remove bool) (any, error) {
	var b strings.Builder
	for _, a := range c.Args.Varargs {
		if remove {
			b.WriteString("no ")
		}
		fmt.Fprintf(&b, "ntp %s %s\n", kind, payload.Text(a))
	}
	text := b.String()
	o := cfgOpts{test: c.Args.Bool("test"), commit: true, loadedConfig: text}
	if c.Args.Given("commit") {
		o.commit = c.Args.Bool("commit")
	}
	return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
		loaded := loadCandidate(ctx, n, false, text)
		return configLogic(ctx, c, n, loaded, o), nil
	})
}

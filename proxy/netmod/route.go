package netmod

import (
	"context"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
)

// routeFunctions is Salt's napalm_route module (route.show).
func routeFunctions() []modules.Function {
	return []modules.Function{
		{Name: "route.show", Doc: "Displays all details for a certain route learned via a specific protocol.\nIf the protocol is not specified, will return all possible routes.\n\n:param destination: destination prefix.\n:param protocol: (optional) protocol used to learn the routes to the destination.\n\nCLI Example:\n\n    salt 'my_router' route.show 172.16.0.0/25\n    salt 'my_router' route.show 172.16.0.0/25 bgp",
			Spec: modules.Spec{Params: []modules.Param{rp("destination"), p("protocol", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				o := driver.RouteOptions{Destination: c.Args.Str("destination"), Protocol: str(c.Args.Get("protocol"))}
				return getter("get_route_to", func(ctx context.Context, d driver.Driver) (any, error) {
					return routeTo(ctx, d, o)
				})(ctx, c)
			}},
	}
}

// routeTo is NAPALM get_route_to on drivers that have it.
func routeTo(ctx context.Context, d driver.Driver, o driver.RouteOptions) (any, error) {
	g, ok := d.(driver.RouteGetter)
	if !ok {
		return nil, driver.NotSupported(d, "get_route_to")
	}
	return g.GetRouteTo(ctx, o)
}

package netmod

import (
	"context"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
)

// usersFunctions is Salt's napalm_users module (users.config).
func usersFunctions() []modules.Function {
	return []modules.Function{
		{Name: "users.config", Doc: "Returns the configuration of the users on the device\n\nCLI Example:\n\n    salt '*' users.config",
			Spec: kwargsOnly,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return getter("get_users", func(ctx context.Context, d driver.Driver) (any, error) {
					return users(ctx, d)
				})(ctx, c)
			}},
	}
}

// users is NAPALM get_users on drivers that have it.
func users(ctx context.Context, d driver.Driver) (any, error) {
	g, ok := d.(driver.UsersGetter)
	if !ok {
		return nil, driver.NotSupported(d, "get_users")
	}
	return g.GetUsers(ctx)
}

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

// usersChangeFunctions are Salt's users.set_users and users.delete_users.
// Salt renders NAPALM's set_users / delete_users templates; gsalt generates
// the lines itself: "username U privilege L secret P" (IOS, EOS; "nopassword"
// without a password) or "username U password P" (NX-OS), "sshkey" lines
// for the keys, and "no username U" to delete.
func usersChangeFunctions() []modules.Function {
	spec := modules.Spec{Params: []modules.Param{rp("users"), p("test", false), p("commit", true)}, Kwargs: true}
	return []modules.Function{
		{Name: "users.set_users", Doc: "Configures users on network devices.\n\n:param users: Dictionary formatted as the output of the function config()\n:param test: Dry run? If set as True, will apply the config, discard and return the changes.\n:param commit: Commit? (default: True)\n\nCLI Example:\n\n    salt '*' users.set_users \"{'mircea': {}}\"",
			Spec: spec, Fn: func(ctx context.Context, c *modules.Call) (any, error) { return usersChange(ctx, c, false) }},
		{Name: "users.delete_users", Doc: "Removes users from the configuration of network devices.\n\n:param users: Dictionary formatted as the output of the function config()\n:param test: Dry run? If set as True, will apply the config, discard and return the changes.\n:param commit: Commit? (default: True)\n\nCLI Example:\n\n    salt '*' users.delete_users \"{'mircea': {}}\"",
			Spec: spec, Fn: func(ctx context.Context, c *modules.Call) (any, error) { return usersChange(ctx, c, true) }},
	}
}

func usersChange(ctx context.Context, c *modules.Call, remove bool) (any, error) {
	m, ok := c.Args.Get("users").(*payload.Map)
	if !ok {
		return nil, fmt.Errorf("%w: users must be a dictionary", modules.ErrExecution)
	}
	var plat string
	if err := proxymodDriverName(ctx, c, &plat); err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, it := range m.Items() {
		u := payload.KeyString(it.Key)
		if remove {
			fmt.Fprintf(&b, "no username %s\n", u)
			continue
		}
		d, _ := it.Value.(*payload.Map)
		if d == nil {
			d = &payload.Map{}
		}
		pw := d.Str("password")
		lvl, _ := payload.AsInt(netGetAny(d, "level"))
		switch {
		case strings.HasPrefix(plat, "nxos"):
			if pw != "" {
				fmt.Fprintf(&b, "username %s password %s\n", u, pw)
			} else {
				fmt.Fprintf(&b, "username %s\n", u)
			}
		default:
			line := "username " + u
			if lvl > 0 {
				line += fmt.Sprintf(" privilege %d", lvl)
			}
			switch {
			case pw != "" && plat != "eos" && strings.HasPrefix(pw, "$1$"):
				line += " secret 5 " + pw // an MD5 hash as get_users returns it
			case pw != "" && plat != "eos" && (strings.HasPrefix(pw, "$8$") || strings.HasPrefix(pw, "$9$")):
				line += " secret " + pw[1:2] + " " + pw
			case pw != "":
				line += " secret " + pw
			default:
				line += " nopassword"
			}
			b.WriteString(line + "\n")
		}
		if keys, ok := netGetAny(d, "sshkeys").([]any); ok {
			for _, k := range keys {
				fmt.Fprintf(&b, "username %s sshkey %s\n", u, payload.Text(k))
			}
		}
	}
	return loadGenerated(ctx, c, b.String())
}

func netGetAny(m *payload.Map, k string) any { v, _ := m.Get(k); return v }

// proxymodDriverName reads the proxy's NAPALM driver name.
func proxymodDriverName(ctx context.Context, c *modules.Call, out *string) error {
	_, err := proxymod.With(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
		*out = n.DriverName()
		return nil, nil
	})
	return err
}

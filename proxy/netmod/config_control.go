package netmod

import (
	"context"
	"fmt"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/wire/payload"
)

// configControlFunctions are Salt's net.config_changed and
// net.config_control (napalm_network), which the network state modules
// call to commit what they loaded.
func configControlFunctions() []modules.Function {
	return []modules.Function{
		{Name: "net.config_changed", Doc: "Will prompt if the configuration has been changed.\n\n:return: A tuple with a boolean that specifies if the config was changed on the device.\nAnd a string that provides more details of the reason why the configuration was not changed.\n\nCLI Example:\n\n    salt '*' net.config_changed",
			Spec: kwargsOnly,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					changed, reason := configChanged(ctx, n)
					return []any{changed, reason}, nil
				})
			}},
		{Name: "net.config_control", Doc: "Will check if the configuration was changed.\nIf differences found, will try to commit.\nIn case commit unsuccessful, will try to rollback.\n\n:return: A tuple with a boolean that specifies if the config was changed/committed/rollbacked on the device.\nAnd a string that provides more details of the reason why the configuration was not committed properly.\n\nCLI Example:\n\n    salt '*' net.config_control",
			Spec: kwargsOnly,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					changed, reason := configChanged(ctx, n)
					if !changed {
						return []any{false, reason}, nil
					}
					result, comment := true, ""
					try := n.Call(ctx, "commit_config", func(ctx context.Context, d driver.Driver) (any, error) { return nil, d.CommitConfig(ctx, "", 0) })
					if !try.Bool("result") {
						result = false
						comment = fmt.Sprintf("Unable to commit the changes: %s.\nWill try to rollback now!", try.Str("comment"))
						rb := n.Call(ctx, "rollback", func(ctx context.Context, d driver.Driver) (any, error) { return nil, d.Rollback(ctx) })
						if !rb.Bool("result") {
							comment += "\nCannot rollback! " + rb.Str("comment")
						}
					}
					return []any{result, comment}, nil
				})
			}},
	}
}

// configChanged is Salt's config_changed: whether compare_config shows a
// difference, else why not.
func configChanged(ctx context.Context, n *proxymod.Napalm) (bool, string) {
	r := n.Call(ctx, "compare_config", func(ctx context.Context, d driver.Driver) (any, error) { return d.CompareConfig(ctx) })
	if !r.Bool("result") {
		return false, r.Str("comment")
	}
	if out, _ := r.Get("out"); payload.Truthy(out) {
		return true, ""
	}
	return false, "Configuration was not changed on the device."
}

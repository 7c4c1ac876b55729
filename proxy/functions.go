package proxy

import (
	"context"
	"errors"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/proxymod"
)

// commonFunctions replace base execution functions on every proxy: Salt's
// own functions branch on is_proxy() for these.
func commonFunctions() []modules.Function {
	return []modules.Function{
		{Name: "test.ping", Doc: "Used to make sure the minion is up and responding. Not an ICMP ping.\n\nOn a proxy minion it asks the proxy module's ping whether the device answers.\n\nCLI Example:\n\n    salt '*' test.ping",
			Fn: proxyPing},
	}
}

// statePinger is a proxymod.Service that can answer test.ping without
// the device gate when its module is a proxymod.StatePinger (*Device).
type statePinger interface {
	// statePing returns the module's PingState; ok is false when the
	// module is not a StatePinger (or there is none yet).
	statePing() (up, ok bool)
}

// proxyPing is test.ping on a proxy: the proxy module's ping. A device
// whose module is not initialised (or is too busy to ask) is reported as
// not answering rather than as an error.
func proxyPing(ctx context.Context, c *modules.Call) (any, error) {
	if svc, ok := modules.Service[proxymod.Service](c.Env, proxymod.ServiceName); ok {
		if sp, ok := svc.(statePinger); ok {
			if up, ok := sp.statePing(); ok {
				return up, nil
			}
		}
	}
	ok, err := proxymod.With(ctx, c, func(ctx context.Context, m proxymod.Module) (bool, error) {
		return m.Ping(ctx)
	})
	switch {
	case errors.Is(err, proxymod.ErrNotProxy):
		return true, nil
	case errors.Is(err, proxymod.ErrNotInitialized), errors.Is(err, proxymod.ErrBusy):
		c.Log().Info("test.ping: the device cannot be asked", "err", err)
		return false, nil
	case err != nil:
		return nil, err
	}
	return ok, nil
}

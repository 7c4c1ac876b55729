package netmod

import (
	"context"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
)

// probesFunctions is Salt's napalm_probes module (probes.config,
// probes.results).
func probesFunctions() []modules.Function {
	return []modules.Function{
		{Name: "probes.config", Doc: "Returns the configuration of the RPM probes.\n\nCLI Example:\n\n    salt '*' probes.config",
			Spec: kwargsOnly, Fn: getter("get_probes_config", probesConfig)},
		{Name: "probes.results", Doc: "Provides the results of the measurements of the RPM/SLA probes.\n\nCLI Example:\n\n    salt '*' probes.results",
			Spec: kwargsOnly, Fn: getter("get_probes_results", probesResults)},
	}
}

// probesConfig is NAPALM get_probes_config on drivers that have it.
func probesConfig(ctx context.Context, d driver.Driver) (any, error) {
	g, ok := d.(driver.ProbesConfigGetter)
	if !ok {
		return nil, driver.NotSupported(d, "get_probes_config")
	}
	return g.GetProbesConfig(ctx)
}

// probesResults is NAPALM get_probes_results on drivers that have it.
func probesResults(ctx context.Context, d driver.Driver) (any, error) {
	g, ok := d.(driver.ProbesResultsGetter)
	if !ok {
		return nil, driver.NotSupported(d, "get_probes_results")
	}
	return g.GetProbesResults(ctx)
}

// networkInstances is NAPALM get_network_instances on drivers that have it.
func networkInstances(ctx context.Context, d driver.Driver, name string) (any, error) {
	g, ok := d.(driver.NetworkInstancesGetter)
	if !ok {
		return nil, driver.NotSupported(d, "get_network_instances")
	}
	return g.GetNetworkInstances(ctx, name)
}

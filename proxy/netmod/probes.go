package netmod

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/wire/payload"
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

// probesChangeFunctions are Salt's probes.set_probes, probes.delete_probes
// and probes.schedule_probes. Salt renders NAPALM's set_probes /
// delete_probes / schedule_probes templates, which exist for junos and
// iosxr only; gsalt generates IP SLA lines for ios (the probe name is the
// SLA operation number, the test name its tag; icmp-ping tests) and
// reports the other drivers as Salt does a missing template.
func probesChangeFunctions() []modules.Function {
	spec := modules.Spec{Params: []modules.Param{rp("probes"), p("test", false), p("commit", true)}, Kwargs: true}
	mk := func(name, template, doc string) modules.Function {
		return modules.Function{Name: name, Doc: doc, Spec: spec,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return probesChange(ctx, c, template) }}
	}
	return []modules.Function{
		mk("probes.set_probes", "set_probes", "Configures RPM/SLA probes on the device.\n\n:param probes: Dictionary formatted as the output of the function config()\n:param test: Dry run?\n:param commit: Commit?\n\nCLI Example:\n\n    salt 'ios_minion' probes.set_probes \"{'1':{'new_test1':{'probe_type':'icmp-ping','target':'192.168.0.1','source':'192.168.0.2','probe_count':13,'test_interval':3}}}\" test=True"),
		mk("probes.delete_probes", "delete_probes", "Removes RPM/SLA probes from the network device.\n\n:param probes: Dictionary with a similar format as the output dictionary of the function config(), where the details are not necessary.\n:param test: Dry run?\n:param commit: Commit?\n\nCLI Example:\n\n    salt 'ios_minion' probes.delete_probes \"{'1': {'new_test1': {}}}\""),
		mk("probes.schedule_probes", "schedule_probes", "Will schedule the probes. On Cisco devices the probe must be scheduled to be executed.\n\n:param probes: Dictionary with a similar format as the output dictionary of the function config(), where the details are not necessary.\n:param test: Dry run?\n:param commit: Commit?\n\nCLI Example:\n\n    salt 'ios_minion' probes.schedule_probes \"{'1': {'new_test1': {}}}\""),
	}
}

func probesChange(ctx context.Context, c *modules.Call, template string) (any, error) {
	var plat string
	if err := proxymodDriverName(ctx, c, &plat); err != nil {
		return nil, err
	}
	if plat != "ios" && plat != "iosxe" {
		return payload.NewMap("result", false, "comment", fmt.Sprintf("Cannot load the template %s: not available for the %s driver", template, plat),
			"already_configured", false, "loaded_config", "", "diff", ""), nil
	}
	probes, _ := c.Args.Get("probes").(*payload.Map)
	var b strings.Builder
	if probes != nil {
		for _, pit := range probes.Items() {
			id := payload.KeyString(pit.Key)
			if _, err := strconv.Atoi(id); err != nil {
				return nil, fmt.Errorf("%w: IP SLA probe names are numbers: %q", modules.ErrExecution, id)
			}
			tests, _ := pit.Value.(*payload.Map)
			switch template {
			case "delete_probes":
				fmt.Fprintf(&b, "no ip sla %s\n", id)
				continue
			case "schedule_probes":
				fmt.Fprintf(&b, "ip sla schedule %s life forever start-time now\n", id)
				continue
			}
			if tests == nil {
				continue
			}
			for _, tit := range tests.Items() {
				t, _ := tit.Value.(*payload.Map)
				if t == nil {
					continue
				}
				if pt := t.Str("probe_type"); pt != "" && pt != "icmp-ping" {
					return nil, fmt.Errorf("%w: probe type %s: only icmp-ping on ios", modules.ErrExecution, pt)
				}
				src := "source-ip"
				if s := t.Str("source"); s != "" && !strings.ContainsAny(s[:1], "0123456789") {
					src = "source-interface"
				}
				fmt.Fprintf(&b, "ip sla %s\n icmp-echo %s", id, t.Str("target"))
				if s := t.Str("source"); s != "" {
					fmt.Fprintf(&b, " %s %s", src, s)
				}
				fmt.Fprintf(&b, "\n tag %s\n", payload.KeyString(tit.Key))
				if n, ok := payload.AsInt(netGetAny(t, "probe_count")); ok {
					fmt.Fprintf(&b, " history buckets-kept %d\n", n)
				}
				if n, ok := payload.AsInt(netGetAny(t, "test_interval")); ok {
					fmt.Fprintf(&b, " frequency %d\n", n)
				}
			}
		}
	}
	return loadGenerated(ctx, c, b.String())
}

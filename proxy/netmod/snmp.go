package netmod

import (
	"context"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
)

// snmpFunctions is Salt's napalm_snmp module (snmp.config).
func snmpFunctions() []modules.Function {
	return []modules.Function{
		{Name: "snmp.config", Doc: "Returns the SNMP configuration\n\nCLI Example:\n\n    salt '*' snmp.config",
			Spec: kwargsOnly,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return getter("get_snmp_information", func(ctx context.Context, d driver.Driver) (any, error) {
					return snmpInformation(ctx, d)
				})(ctx, c)
			}},
	}
}

// snmpInformation is NAPALM get_snmp_information on drivers that have it.
func snmpInformation(ctx context.Context, d driver.Driver) (any, error) {
	g, ok := d.(driver.SNMPGetter)
	if !ok {
		return nil, driver.NotSupported(d, "get_snmp_information")
	}
	return g.GetSNMPInformation(ctx)
}

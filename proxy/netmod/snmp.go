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

// snmpChangeFunctions are Salt's snmp.update_config and snmp.remove_config.
// Salt renders NAPALM's snmp_config / delete_snmp_config templates; gsalt
// generates the lines itself ("[no] snmp-server location|contact|
// chassis-id ...", "[no] snmp-server community NAME RO|RW"), which IOS, EOS
// and NX-OS accept.
func snmpChangeFunctions() []modules.Function {
	spec := modules.Spec{Params: []modules.Param{p("location", nil), p("contact", nil), p("community", nil),
		p("chassis_id", nil), p("test", false), p("commit", true)}, Kwargs: true}
	return []modules.Function{
		{Name: "snmp.update_config", Doc: "Updates the SNMP configuration.\n\n:param location: physical location of the device\n:param contact: contact details\n:param community: a string or a dictionary of communities (mode: rw or ro)\n:param chassis_id: the chassis ID\n:param test: dry run\n:param commit: commit the changes\n\nCLI Example:\n\n    salt '*' snmp.update_config location='Greenwich, UK' test=True",
			Spec: spec, Fn: func(ctx context.Context, c *modules.Call) (any, error) { return snmpChange(ctx, c, false) }},
		{Name: "snmp.remove_config", Doc: "Removes a configuration element from the SNMP configuration.\n\n:param location: physical location of the device\n:param contact: contact details\n:param community: a string or a dictionary of communities\n:param chassis_id: the chassis ID\n:param test: dry run\n:param commit: commit the changes\n\nCLI Example:\n\n    salt '*' snmp.remove_config community='abcd'",
			Spec: spec, Fn: func(ctx context.Context, c *modules.Call) (any, error) { return snmpChange(ctx, c, true) }},
	}
}

func snmpChange(ctx context.Context, c *modules.Call, remove bool) (any, error) {
	var b strings.Builder
	for _, f := range [][2]string{{"location", "location"}, {"contact", "contact"}, {"chassis_id", "chassis-id"}} {
		v := str(c.Args.Get(f[0]))
		if v == "" {
			continue
		}
		if remove {
			fmt.Fprintf(&b, "no snmp-server %s\n", f[1])
		} else {
			fmt.Fprintf(&b, "snmp-server %s %s\n", f[1], v)
		}
	}
	comms := map[string]string{}
	var names []string
	switch x := c.Args.Get("community").(type) {
	case string:
		if x != "" {
			comms[x], names = "ro", []string{x}
		}
	case *payload.Map:
		for _, it := range x.Items() {
			name := payload.KeyString(it.Key)
			mode := "ro"
			if d, ok := it.Value.(*payload.Map); ok && d.Str("mode") == "rw" {
				mode = "rw"
			}
			comms[name] = mode
			names = append(names, name)
		}
	}
	for _, n := range names {
		if remove {
			fmt.Fprintf(&b, "no snmp-server community %s\n", n)
		} else {
			fmt.Fprintf(&b, "snmp-server community %s %s\n", n, strings.ToUpper(comms[n]))
		}
	}
	return loadGenerated(ctx, c, b.String())
}

// loadGenerated merges generated configuration lines like net.load_template
// would (test, commit and the loaded_ret dict as Salt returns it).
func loadGenerated(ctx context.Context, c *modules.Call, text string) (any, error) {
	o := cfgOpts{test: c.Args.Bool("test"), commit: true, loadedConfig: text}
	if c.Args.Given("commit") {
		o.commit = c.Args.Bool("commit")
	}
	return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
		loaded := loadCandidate(ctx, n, false, text)
		return configLogic(ctx, c, n, loaded, o), nil
	})
}

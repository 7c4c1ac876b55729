package netmod

import (
	"context"
	"crypto/md5"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/proxy/driver"
	"github.com/gsalt/gsalt/proxy/proxymod"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// templateEngines are the template_engine values net.load_template
// renders; Salt's other engines (mako, py, ...) are not available.
var templateEngines = []string{"jinja"}

// getter wraps a driver method without arguments.
func getter(method string, fn func(ctx context.Context, d driver.Driver) (any, error)) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
			return n.Call(ctx, method, fn), nil
		})
	}
}

// filterList keeps the maps of list whose key equals value.
func filterList(list any, key string, value any) []any {
	out := []any{}
	l, _ := list.([]any)
	for _, e := range l {
		m, ok := e.(*payload.Map)
		if !ok {
			continue
		}
		if v, ok := m.Get(key); ok && payload.Text(v) == payload.Text(value) {
			out = append(out, e)
		}
	}
	return out
}

// netFunctions is Salt's napalm_network module (net.*).
func netFunctions() []modules.Function {
	cfgArgs := modules.Spec{Params: []modules.Param{p("inherit_napalm_device", nil)}, Kwargs: true}
	return []modules.Function{
		{Name: "net.connected", Doc: "Specifies if the connection to the device succeeded.\n\nCLI Example:\n\n    salt '*' net.connected",
			Spec: kwargsOnly, Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					up, _ := n.Ping(ctx)
					return payload.NewMap("out", up), nil
				})
			}},
		{Name: "net.facts", Doc: "Returns characteristics of the network device (NAPALM get_facts).\n\nCLI Example:\n\n    salt '*' net.facts",
			Spec: kwargsOnly, Fn: getter("get_facts", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetFacts(ctx) })},
		{Name: "net.environment", Doc: "Returns the environment of the device (fans, temperature, power, cpu, memory).\n\nCLI Example:\n\n    salt '*' net.environment",
			Spec: kwargsOnly, Fn: getter("get_environment", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetEnvironment(ctx) })},
		{Name: "net.interfaces", Doc: "Returns details of the interfaces on the device.\n\nCLI Example:\n\n    salt '*' net.interfaces",
			Spec: kwargsOnly, Fn: getter("get_interfaces", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetInterfaces(ctx) })},
		{Name: "net.ipaddrs", Doc: "Returns IP addresses configured on the device.\n\nCLI Example:\n\n    salt '*' net.ipaddrs",
			Spec: kwargsOnly, Fn: getter("get_interfaces_ip", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetInterfacesIP(ctx) })},
		{Name: "net.cli", Doc: "Returns a dictionary with the raw output of all commands passed as arguments.\n\nCLI Example:\n\n    salt '*' net.cli \"show version\" \"show chassis fan\"",
			Spec: modules.Spec{Varargs: true, Kwargs: true}, Fn: netCli},
		{Name: "net.traceroute", Doc: "Calls the method traceroute from the NAPALM driver object.\n\nCLI Example:\n\n    salt '*' net.traceroute 8.8.8.8",
			Spec: modules.Spec{Params: []modules.Param{rp("destination"), p("source", nil), p("ttl", nil), p("timeout", nil), p("vrf", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				o := driver.TracerouteOptions{Destination: c.Args.Str("destination"), Source: str(c.Args.Get("source")),
					TTL: intArg(c.Args.Get("ttl")), Timeout: intArg(c.Args.Get("timeout")), VRF: str(c.Args.Get("vrf"))}
				return getter("traceroute", func(ctx context.Context, d driver.Driver) (any, error) { return d.Traceroute(ctx, o) })(ctx, c)
			}},
		{Name: "net.ping", Doc: "Executes a ping on the network device and returns a dictionary as a result.\n\nCLI Example:\n\n    salt '*' net.ping 8.8.8.8",
			Spec: modules.Spec{Params: []modules.Param{rp("destination"), p("source", nil), p("ttl", nil), p("timeout", nil), p("size", nil), p("count", nil), p("vrf", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				o := driver.PingOptions{Destination: c.Args.Str("destination"), Source: str(c.Args.Get("source")),
					TTL: intArg(c.Args.Get("ttl")), Timeout: intArg(c.Args.Get("timeout")), Size: intArg(c.Args.Get("size")),
					Count: intArg(c.Args.Get("count")), VRF: str(c.Args.Get("vrf"))}
				return getter("ping", func(ctx context.Context, d driver.Driver) (any, error) { return d.Ping(ctx, o) })(ctx, c)
			}},
		{Name: "net.arp", Doc: "NAPALM returns a list of dictionaries with details of the ARP entries.\n\nCLI Example:\n\n    salt '*' net.arp\n    salt '*' net.arp macaddr='5c:5e:ab:da:3c:f0'",
			Spec: modules.Spec{Params: []modules.Param{p("interface", ""), p("ipaddr", ""), p("macaddr", "")}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					r := n.Call(ctx, "get_arp_table", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetArpTable(ctx, "") })
					if !r.Bool("result") {
						return r, nil
					}
					table, _ := r.Get("out")
					for _, f := range [][2]string{{"interface", "interface"}, {"ipaddr", "ip"}, {"macaddr", "mac"}} {
						if v := c.Args.Get(f[0]); payload.Truthy(v) {
							table = filterList(table, f[1], v)
						}
					}
					r.Set("out", table)
					return r, nil
				})
			}},
		{Name: "net.lldp", Doc: "Returns a detailed view of the LLDP neighbors.\n\nCLI Example:\n\n    salt '*' net.lldp\n    salt '*' net.lldp interface='TenGigE0/0/0/8'",
			Spec: modules.Spec{Params: []modules.Param{p("interface", "")}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					r := n.Call(ctx, "get_lldp_neighbors_detail", func(ctx context.Context, d driver.Driver) (any, error) {
						return d.GetLLDPNeighborsDetail(ctx, "")
					})
					if !r.Bool("result") {
						return r, nil
					}
					if iface := c.Args.Get("interface"); payload.Truthy(iface) {
						var v any
						if m := r.Map("out"); m != nil {
							v, _ = m.GetKey(iface)
						}
						r.Set("out", payload.NewMap().SetKey(iface, v))
					}
					return r, nil
				})
			}},
		{Name: "net.mac", Doc: "Returns the MAC Address Table on the device.\n\nCLI Example:\n\n    salt '*' net.mac\n    salt '*' net.mac vlan=10",
			Spec: modules.Spec{Params: []modules.Param{p("address", ""), p("interface", ""), p("vlan", int64(0))}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					r := n.Call(ctx, "get_mac_address_table", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetMACAddressTable(ctx) })
					if !r.Bool("result") {
						return r, nil
					}
					table, _ := r.Get("out")
					if v, ok := c.Args.Get("vlan").(int64); ok && v != 0 {
						table = filterList(table, "vlan", v)
					}
					if v := c.Args.Get("address"); payload.Truthy(v) {
						table = filterList(table, "mac", v)
					}
					if v := c.Args.Get("interface"); payload.Truthy(v) {
						table = filterList(table, "interface", v)
					}
					r.Set("out", table)
					return r, nil
				})
			}},
		{Name: "net.optics", Doc: "Fetches the power usage on the various transceivers installed on the switch (in dBm), and returns a view that conforms with the openconfig model openconfig-platform-transceiver.yang\n\nCLI Example:\n\n    salt '*' net.optics",
			Spec: kwargsOnly, Fn: getter("get_optics", optics)},
		{Name: "net.config", Doc: "Return the whole configuration of the network device (source: running, candidate or startup; all by default).\n\nCLI Example:\n\n    salt '*' net.config\n    salt '*' net.config source=candidate",
			Spec: modules.Spec{Params: []modules.Param{p("source", nil)}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				src := str(c.Args.Get("source"))
				if src == "" {
					src = "all"
				}
				return getter("get_config", func(ctx context.Context, d driver.Driver) (any, error) { return d.GetConfig(ctx, src) })(ctx, c)
			}},
		{Name: "net.load_config", Doc: "Applies configuration changes on the device (from text or a file), with test, commit, replace and debug options.\n\nCLI Example:\n\n    salt '*' net.load_config text='ntp peer 192.168.0.1'\n    salt '*' net.load_config filename='salt://my_config.txt' test=True",
			Spec: modules.Spec{Params: []modules.Param{p("filename", nil), p("text", nil), p("test", false), p("commit", true), p("debug", false),
				p("replace", false), p("commit_in", nil), p("commit_at", nil), p("revert_in", nil), p("revert_at", nil), p("commit_jid", nil),
				p("inherit_napalm_device", nil), p("saltenv", "base")}, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				text := c.Args.Get("text")
				if fn := c.Args.Get("filename"); payload.Truthy(fn) {
					s, ok := readSource(ctx, c, payload.Text(fn), c.Args.Str("saltenv"))
					if !ok {
						return payload.NewMap("result", false, "out", nil,
							"comment", fmt.Sprintf("Unable to read from %s. Please specify a valid file or text.", payload.Text(fn))), nil
					}
					text = s
				}
				return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					loaded := loadCandidate(ctx, n, c.Args.Bool("replace"), text)
					return configLogic(ctx, c, n, loaded, configOpts(c, text)), nil
				})
			}},
		{Name: "net.load_template", Doc: "Renders a configuration template (Jinja) and loads the result on the device.\n\nCLI Example:\n\n    salt '*' net.load_template salt://templates/ntp.jinja servers=[1.2.3.4]\n    salt '*' net.load_template template_source='ntp server {{ s }}' s=10.0.0.1 test=True",
			Spec: modules.Spec{Params: []modules.Param{p("template_name", nil), p("template_source", nil), p("context", nil), p("defaults", nil),
				p("template_engine", "jinja"), p("saltenv", "base"), p("template_hash", nil), p("template_hash_name", nil), p("skip_verify", false),
				p("test", false), p("commit", true), p("debug", false), p("replace", false), p("commit_in", nil), p("commit_at", nil),
				p("revert_in", nil), p("revert_at", nil), p("inherit_napalm_device", nil)}, Kwargs: true},
			Fn: netLoadTemplate},
		{Name: "net.commit", Doc: "Commits the configuration changes made on the network device.\n\nCLI Example:\n\n    salt '*' net.commit",
			Spec: cfgArgs, Fn: getter("commit_config", func(ctx context.Context, d driver.Driver) (any, error) { return nil, d.CommitConfig(ctx, "", 0) })},
		{Name: "net.discard_config", Doc: "Discards the changes applied.\n\nCLI Example:\n\n    salt '*' net.discard_config",
			Spec: cfgArgs, Fn: getter("discard_config", func(ctx context.Context, d driver.Driver) (any, error) { return nil, d.DiscardConfig(ctx) })},
		{Name: "net.compare_config", Doc: "Returns the difference between the running config and the candidate config.\n\nCLI Example:\n\n    salt '*' net.compare_config",
			Spec: cfgArgs, Fn: getter("compare_config", func(ctx context.Context, d driver.Driver) (any, error) { return d.CompareConfig(ctx) })},
		{Name: "net.cancel_commit", Doc: "Cancel a commit scheduled to be executed via the commit_in and commit_at arguments from the net.load_template or net.load_config execution functions. The commit ID is displayed when the commit is scheduled via the functions named above.\n\nCLI Example:\n\n    salt '*' net.cancel_commit 20180726083540640360",
			Spec: modules.Spec{Params: []modules.Param{rp("jid")}}, Fn: cancelCommit},
		{Name: "net.confirm_commit", Doc: "Confirm a commit scheduled to be reverted via the revert_in and revert_at arguments from the net.load_template or net.load_config execution functions. The commit ID is displayed when the commit confirmed is scheduled via the functions named above.\n\nCLI Example:\n\n    salt '*' net.confirm_commit 20180726083540640360",
			Spec: modules.Spec{Params: []modules.Param{rp("jid")}}, Fn: confirmCommit},
		{Name: "net.rollback", Doc: "Rollbacks the configuration.\n\nCLI Example:\n\n    salt '*' net.rollback",
			Spec: cfgArgs, Fn: getter("rollback", func(ctx context.Context, d driver.Driver) (any, error) { return nil, d.Rollback(ctx) })},
	}
}

// netCli is net.cli: the outputs by command, in the order given, parsed
// through TextFSM templates with textfsm_parse=True (textfsm.go).
func netCli(ctx context.Context, c *modules.Call) (any, error) {
	cmds := make([]string, 0, len(c.Args.Varargs))
	for _, v := range c.Args.Varargs {
		cmds = append(cmds, payload.Text(v))
	}
	return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
		r := n.Call(ctx, "cli", func(ctx context.Context, d driver.Driver) (any, error) {
			outs, err := d.Cli(ctx, cmds)
			if err != nil {
				return nil, err
			}
			m := &payload.Map{}
			for _, cmd := range cmds {
				if o, ok := outs[cmd]; ok {
					m.Set(cmd, o)
				}
			}
			return m, nil
		})
		if !r.Bool("result") {
			return r, nil
		}
		parse := c.Args.Get("textfsm_parse")
		if !payload.Truthy(parse) && c.Env != nil {
			if c.Env.Opts != nil {
				parse, _ = c.Env.Opts.Get("napalm_cli_textfsm_parse")
			}
			if !payload.Truthy(parse) && c.Env.Pillar != nil {
				parse, _ = c.Env.Pillar.Get("napalm_cli_textfsm_parse")
			}
		}
		if !payload.Truthy(parse) {
			return r, nil
		}
		return textfsmProcess(ctx, c, cmds, r), nil
	})
}

// loadCandidate is the load_merge_candidate / load_replace_candidate call.
func loadCandidate(ctx context.Context, n *proxymod.Napalm, replace bool, text any) *payload.Map {
	method := "load_merge_candidate"
	if replace {
		method = "load_replace_candidate"
	}
	return n.Call(ctx, method, func(ctx context.Context, d driver.Driver) (any, error) {
		if text == nil {
			return nil, fmt.Errorf("%w: please specify a configuration (text or filename)", driver.ErrInvalidArgument)
		}
		if replace {
			return nil, d.LoadReplaceCandidate(ctx, payload.Text(text))
		}
		return nil, d.LoadMergeCandidate(ctx, payload.Text(text))
	})
}

// cfgOpts are _config_logic's options.
type cfgOpts struct {
	test, debug, commit  bool
	replace              bool
	loadedConfig         any
	commitIn, commitAt   any
	revertIn, revertAt   any
	commitJID            any
	hasCommitSchedule    bool
	hasRevertScheduleArg bool
}

func configOpts(c *modules.Call, loaded any) cfgOpts {
	o := cfgOpts{test: c.Args.Bool("test"), debug: c.Args.Bool("debug"), commit: c.Args.Bool("commit"), replace: c.Args.Bool("replace"), loadedConfig: loaded,
		commitIn: c.Args.Get("commit_in"), commitAt: c.Args.Get("commit_at"), revertIn: c.Args.Get("revert_in"),
		revertAt: c.Args.Get("revert_at"), commitJID: c.Args.Get("commit_jid")}
	o.hasCommitSchedule = payload.Truthy(o.commitIn) || payload.Truthy(o.commitAt)
	o.hasRevertScheduleArg = payload.Truthy(o.revertIn) || payload.Truthy(o.revertAt)
	return o
}

// appendComment adds text to the comment of r.
func appendComment(r *payload.Map, text string) { r.Set("comment", r.Str("comment")+text) }

// safeDiscard is _safe_dicard_config: it returns the discard result, or
// loaded marked failed when the discard failed.
func safeDiscard(ctx context.Context, c *modules.Call, n *proxymod.Napalm, loaded *payload.Map) *payload.Map {
	d := n.Call(ctx, "discard_config", func(ctx context.Context, d driver.Driver) (any, error) { return nil, d.DiscardConfig(ctx) })
	if !d.Bool("result") {
		msg := d.Str("comment")
		if msg == "" {
			msg = "Unable to discard config."
		}
		appendComment(loaded, msg)
		loaded.Set("result", false)
		c.Retcode = 1
		return loaded
	}
	return d
}

// safeCommit is _safe_commit_config.
func safeCommit(ctx context.Context, c *modules.Call, n *proxymod.Napalm, loaded *payload.Map, revertIn int) *payload.Map {
	cm := n.Call(ctx, "commit_config", func(ctx context.Context, d driver.Driver) (any, error) { return nil, d.CommitConfig(ctx, "", revertIn) })
	if !cm.Bool("result") {
		msg := cm.Str("comment")
		if msg == "" {
			msg = "Unable to commit."
		}
		appendComment(loaded, msg)
		loaded.Set("result", false)
		if d := safeDiscard(ctx, c, n, loaded); !d.Bool("result") {
			return loaded
		}
	}
	return cm
}

// configLogic is _config_logic: compare, then discard (test mode, or a
// failed load) or commit, filling loaded with already_configured,
// loaded_config and diff. commit_in/commit_at schedule the commit and
// revert_in/revert_at commit with a scheduled revert (commit.go).
func configLogic(ctx context.Context, c *modules.Call, n *proxymod.Napalm, loaded *payload.Map, o cfgOpts) *payload.Map {
	loaded.Set("already_configured", false)
	loaded.Set("loaded_config", "")
	if o.debug {
		loaded.Set("loaded_config", o.loadedConfig)
	}
	cmp := n.Call(ctx, "compare_config", func(ctx context.Context, d driver.Driver) (any, error) { return d.CompareConfig(ctx) })
	if !cmp.Bool("result") {
		loaded.Set("diff", nil)
		loaded.Set("result", false)
		loaded.Set("comment", cmp.Str("comment"))
		c.Retcode = 1
		return loaded
	}
	diff, _ := cmp.Get("out")
	loaded.Set("diff", diff)
	loaded.Delete("out")
	if !loaded.Bool("result") || o.test {
		if loaded.Str("comment") != "" {
			appendComment(loaded, "\n")
		}
		if !payload.Truthy(diff) {
			loaded.Set("already_configured", true)
		}
		if d := safeDiscard(ctx, c, n, loaded); !d.Bool("result") {
			return loaded
		}
		appendComment(loaded, "Configuration discarded.")
		if !loaded.Bool("result") {
			c.Retcode = 1
		}
		return loaded
	}
	if o.commit {
		if jid := o.commitJID; payload.Truthy(jid) {
			// This is the scheduled run of a commit: take it off the schedule.
			c.Log().Info("Committing the JID", "jid", jid)
			if _, err := cancelCommitJID(ctx, c, payload.Text(jid)); err != nil {
				c.Log().Warn("cannot take the commit off the schedule", "jid", jid, "err", err)
			}
		}
		if payload.Truthy(diff) {
			switch {
			case o.hasCommitSchedule:
				return scheduledCommit(ctx, c, n, loaded, o, o.replace)
			case o.hasRevertScheduleArg:
				return revertableCommit(ctx, c, n, loaded, o)
			}
			if cm := safeCommit(ctx, c, n, loaded, 0); !cm.Bool("result") {
				return loaded
			}
		} else {
			if d := safeDiscard(ctx, c, n, loaded); !d.Bool("result") {
				return loaded
			}
			loaded.Set("already_configured", true)
			loaded.Set("comment", "Already configured.")
		}
	}
	if !loaded.Bool("result") {
		c.Retcode = 1
	}
	return loaded
}

// netLoadTemplate is net.load_template.
func netLoadTemplate(ctx context.Context, c *modules.Call) (any, error) {
	loaded := payload.NewMap("result", true, "comment", "", "out", nil)
	engine := c.Args.Str("template_engine")
	known := false
	for _, e := range templateEngines {
		known = known || e == engine
	}
	if !known {
		loaded.Set("result", false)
		loaded.Set("comment", "Invalid templating engine! Choose between: "+strings.Join(templateEngines, ", "))
		return loaded, nil
	}
	saltenv := c.Args.Str("saltenv")
	vars := &payload.Map{}
	if d, ok := c.Args.Get("defaults").(*payload.Map); ok {
		for _, it := range d.Items() {
			vars.SetKey(it.Key, it.Value)
		}
	}
	if cx, ok := c.Args.Get("context").(*payload.Map); ok {
		for _, it := range cx.Items() {
			vars.SetKey(it.Key, it.Value)
		}
	}
	for _, it := range c.Args.CleanKwargs().Items() {
		vars.SetKey(it.Key, it.Value)
	}
	rendered := ""
	if src := c.Args.Get("template_source"); payload.Truthy(src) {
		out, err := renderText(ctx, c, engine, payload.Text(src), "", saltenv, vars)
		if err != nil {
			c.Log().Error("net.load_template: rendering failed", "err", err)
			loaded.Set("result", false)
			loaded.Set("comment", "Error while rendering the template.")
			return loaded, nil
		}
		rendered = out
	} else {
		var names []string
		switch v := c.Args.Get("template_name").(type) {
		case nil:
			return nil, fmt.Errorf("%w: please specify template_name or template_source", modules.ErrInvocation)
		case []any:
			for _, x := range v {
				names = append(names, payload.Text(x))
			}
		default:
			names = []string{payload.Text(v)}
		}
		for _, name := range names {
			text, ok := readSource(ctx, c, name, saltenv)
			if !ok {
				msg := fmt.Sprintf("Source file '%s' not found", name)
				if strings.HasPrefix(name, "salt://") {
					msg = fmt.Sprintf("Source file %s not found in saltenv '%s'", name, saltenv)
				} else if !strings.Contains(name, "://") {
					msg = fmt.Sprintf("Local file source %s does not exist", name)
				}
				appendComment(loaded, msg)
				loaded.Set("result", false)
				return loaded, nil
			}
			// file.get_managed renders to /tmp/<md5 of the name> and gives
			// the template its own arguments (name, source, user, group,
			// mode, attrs) under defaults, context and the template vars.
			tvars := payload.NewMap("name", "/tmp/"+fmt.Sprintf("%x", md5.Sum([]byte(name))), "source", name,
				"user", nil, "group", nil, "mode", nil, "attrs", nil, "saltenv", saltenv)
			for _, it := range vars.Items() {
				tvars.SetKey(it.Key, it.Value)
			}
			out, err := renderText(ctx, c, engine, text, name, saltenv, tvars)
			if err != nil {
				c.Log().Error("net.load_template: rendering failed", "template", name, "err", err)
				appendComment(loaded, "Error while rendering the template.")
				loaded.Set("result", false)
				return loaded, nil
			}
			rendered += out
		}
	}
	return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
		r := loadCandidate(ctx, n, c.Args.Bool("replace"), rendered)
		return configLogic(ctx, c, n, r, configOpts(c, rendered)), nil
	})
}

// renderText renders a template with the job's grains, pillar and opts,
// plus vars (defaults, then context, then the extra keyword arguments).
// renderContext is the render context of a function's templates: the
// job's grains, pillar, opts and file client.
func renderContext(c *modules.Call, saltenv string) *render.Context {
	rc := &render.Context{Saltenv: saltenv, Log: c.Log()}
	if c.Env != nil {
		rc.Grains, rc.Pillar = c.Env.Grains, c.Env.Pillar
		if m, ok := c.Env.Opts.(*payload.Map); ok {
			rc.Opts = m
		}
		if fc, ok := modules.Service[FileClient](c.Env, filesServiceName); ok {
			rc.Files = fc
		}
	}
	return rc
}

func renderText(ctx context.Context, c *modules.Call, engine, text, source, saltenv string, vars *payload.Map) (string, error) {
	rc := &render.Context{Saltenv: saltenv, Vars: vars, Log: c.Log()}
	if c.Env != nil {
		rc.Grains, rc.Pillar = c.Env.Grains, c.Env.Pillar
		if m, ok := c.Env.Opts.(*payload.Map); ok {
			rc.Opts = m
		}
		if fc, ok := modules.Service[FileClient](c.Env, filesServiceName); ok {
			rc.Files = fc
		}
	}
	if strings.HasPrefix(source, "salt://") {
		rc.Source = source
	}
	out, err := render.Default().Text(ctx, engine, []byte(text), rc)
	if err != nil {
		return "", fmt.Errorf("netmod: render: %w", err)
	}
	return out, nil
}

// optics is NAPALM get_optics on drivers that have it.
func optics(ctx context.Context, d driver.Driver) (any, error) {
	g, ok := d.(driver.OpticsGetter)
	if !ok {
		return nil, driver.NotSupported(d, "get_optics")
	}
	return g.GetOptics(ctx)
}

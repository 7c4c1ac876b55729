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

// netmikoDeviceTypes is Salt's map of NAPALM driver (the os grain) to
// Netmiko device_type, extended by the netmiko_device_type_map option.
var netmikoDeviceTypes = map[string]string{
	"junos": "juniper_junos", "ios": "cisco_ios", "iosxr": "cisco_xr", "eos": "arista_eos",
	"nxos_ssh": "cisco_nxos", "asa": "cisco_asa", "fortios": "fortinet", "panos": "paloalto_panos",
	"aos": "alcatel_aos", "vyos": "vyos", "f5": "f5_ltm", "ce": "huawei", "s350": "cisco_s300",
}

// netmikoOptionalArgs are the arguments of Netmiko's BaseConnection
// (netmiko 4) that NAPALM's optional_args pass through, less the ones
// NAPALM sets itself (ip, host, username, password, device_type, timeout).
var netmikoOptionalArgs = []string{"secret", "port", "verbose", "global_delay_factor", "global_cmd_verify",
	"use_keys", "key_file", "pkey", "passphrase", "disabled_algorithms", "allow_agent", "ssh_strict",
	"system_host_keys", "alt_host_keys", "alt_key_file", "ssh_config_file", "conn_timeout", "auth_timeout",
	"banner_timeout", "blocking_timeout", "session_timeout", "read_timeout_override", "keepalive",
	"default_enter", "response_return", "serial_settings", "fast_cli", "session_log",
	"session_log_record_writes", "session_log_file_mode", "allow_auto_change", "encoding", "sock",
	"auto_connect", "delay_factor_compat"}

// netmikoConnArgs are the keys of netmiko_args: connection details the
// Netmiko methods themselves do not take.
var netmikoConnArgs = func() map[string]bool {
	m := map[string]bool{"host": true, "ip": true, "username": true, "password": true, "timeout": true, "device_type": true}
	for _, k := range netmikoOptionalArgs {
		m[k] = true
	}
	return m
}()

// netmikoArgs is Salt's napalm.netmiko_args.
func netmikoArgs(c *modules.Call, n *proxymod.Napalm) *payload.Map {
	o, opt := n.ConnOptions()
	ret := payload.NewMap("host", o.Host, "username", o.Username, "password", o.Password, "timeout", int64(o.Timeout.Seconds()))
	for _, k := range netmikoOptionalArgs {
		if v, ok := opt.Get(k); ok {
			ret.Set(k, v)
		}
	}
	types := map[string]string{}
	for k, v := range netmikoDeviceTypes {
		types[k] = v
	}
	if c.Env != nil {
		if m, ok := c.Env.Opts.(*payload.Map); ok {
			if extra, ok := m.Get("netmiko_device_type_map"); ok {
				if em, ok := extra.(*payload.Map); ok {
					for _, it := range em.Items() {
						types[payload.KeyString(it.Key)] = payload.Text(it.Value)
					}
				}
			}
		}
	}
	dt, ok := types[n.DriverName()]
	if !ok && n.DriverName() == "nxos" {
		dt = types["nxos_ssh"]
	}
	ret.Set("device_type", dt)
	return ret
}

// netmikoMethodKwargs are the kwargs of a call less the connection
// details and Salt's __pub_ keys.
func netmikoMethodKwargs(c *modules.Call) map[string]any {
	kw := map[string]any{}
	for _, it := range c.Args.CleanKwargs().Items() {
		k := payload.KeyString(it.Key)
		if !netmikoConnArgs[k] {
			kw[k] = it.Value
		}
	}
	return kw
}

// withNetmiko runs fn on the proxy's connection and returns its value as
// the Netmiko function would (a failure raises).
func withNetmiko(ctx context.Context, c *modules.Call, method string, fn func(ctx context.Context, nm driver.Netmiko) (any, error)) (any, error) {
	return run(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
		r := n.Call(ctx, method, func(ctx context.Context, d driver.Driver) (any, error) {
			nm, ok := d.(driver.Netmiko)
			if !ok {
				return nil, driver.NotSupported(d, method)
			}
			return fn(ctx, nm)
		})
		if !r.Bool("result") {
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, r.Str("comment"))
		}
		out, _ := r.Get("out")
		return out, nil
	})
}

// netmikoSendConfig is Salt's netmiko.send_config as napalm.netmiko_config
// calls it: the commands (or config_file's lines) rendered through
// template_engine, sent with send_config_set, then commit when asked.
func netmikoSendConfig(ctx context.Context, c *modules.Call, commands []string) (any, error) {
	kw := netmikoMethodKwargs(c)
	saltenv := "base"
	if s, ok := kw["saltenv"].(string); ok && s != "" {
		saltenv = s
	}
	var text string
	if src := str(kw["config_file"]); src != "" {
		s, ok := readSource(ctx, c, src, saltenv)
		if !ok {
			return nil, fmt.Errorf("%w: Source file %s not found", modules.ErrExecution, src)
		}
		text = s
	} else if len(commands) > 0 {
		text = strings.Join(commands, "\n")
	} else if v, ok := kw["config_commands"]; ok {
		text = strings.Join(strList(v), "\n")
	}
	engine := "jinja"
	if v, ok := kw["template_engine"]; ok {
		engine = str(v)
	}
	if engine != "" {
		vars := &payload.Map{}
		for _, k := range []string{"defaults", "context"} {
			if m, ok := kw[k].(*payload.Map); ok {
				for _, it := range m.Items() {
					vars.SetKey(it.Key, it.Value)
				}
			}
		}
		out, err := renderText(ctx, c, engine, text, "", saltenv, vars)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
		text = out
	}
	var lines []any
	for l := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, "\r"))
		}
	}
	commit := payload.Truthy(kw["commit"])
	mkw := map[string]any{}
	for k, v := range kw {
		switch k {
		case "config_file", "config_commands", "template_engine", "context", "defaults", "saltenv", "commit":
		default:
			mkw[k] = v
		}
	}
	if commit {
		mkw["exit_config_mode"] = false
	}
	return withNetmiko(ctx, c, "send_config_set", func(ctx context.Context, nm driver.Netmiko) (any, error) {
		out, err := nm.NetmikoCall(ctx, "send_config_set", []any{lines}, mkw)
		if err != nil || !commit {
			return out, err
		}
		co, err := nm.NetmikoCall(ctx, "commit", nil, nil)
		if err != nil {
			return nil, err
		}
		return payload.Text(out) + payload.Text(co), nil
	})
}

// netmikoFun dispatches the netmiko.* function fun (napalm.netmiko_fun).
func netmikoFun(ctx context.Context, c *modules.Call, fun string, args []any) (any, error) {
	fun = strings.TrimPrefix(fun, "netmiko.")
	kw := netmikoMethodKwargs(c)
	switch fun {
	case "send_command", "send_command_timing", "commit":
		return withNetmiko(ctx, c, fun, func(ctx context.Context, nm driver.Netmiko) (any, error) {
			return nm.NetmikoCall(ctx, fun, args, kw)
		})
	case "send_config":
		var cmds []string
		if len(args) > 1 {
			cmds = strList(args[1])
		}
		return netmikoSendConfig(ctx, c, cmds)
	case "call":
		if len(args) == 0 {
			return nil, fmt.Errorf("%w: call() missing 1 required positional argument: 'method'", modules.ErrExecution)
		}
		return netmikoCall(ctx, c, payload.Text(args[0]), args[1:])
	case "multi_call":
		return netmikoMultiCall(ctx, c, args)
	}
	return nil, fmt.Errorf("%w: 'netmiko.%s' is not available.", modules.ErrExecution, fun)
}

func netmikoCall(ctx context.Context, c *modules.Call, method string, args []any) (any, error) {
	kw := netmikoMethodKwargs(c)
	return withNetmiko(ctx, c, method, func(ctx context.Context, nm driver.Netmiko) (any, error) {
		return nm.NetmikoCall(ctx, method, args, kw)
	})
}

func netmikoMultiCall(ctx context.Context, c *modules.Call, methods []any) (any, error) {
	return withNetmiko(ctx, c, "multi_call", func(ctx context.Context, nm driver.Netmiko) (any, error) {
		ret := []any{}
		for _, m := range methods {
			mm, ok := m.(*payload.Map)
			if !ok {
				return nil, fmt.Errorf("%w: multi_call: each method is a dictionary with name, args and kwargs", driver.ErrInvalidArgument)
			}
			name := mm.Str("name")
			if name == "" {
				return nil, fmt.Errorf("%w: 'name'", driver.ErrInvalidArgument)
			}
			var args []any
			if a, ok := mm.Get("args"); ok {
				args, _ = a.([]any)
			}
			kw := map[string]any{}
			if k, ok := mm.Get("kwargs"); ok {
				if km, ok := k.(*payload.Map); ok {
					for _, it := range km.Items() {
						kw[payload.KeyString(it.Key)] = it.Value
					}
				}
			}
			out, err := nm.NetmikoCall(ctx, name, args, kw)
			if err != nil {
				return nil, err
			}
			ret = append(ret, out)
		}
		return ret, nil
	})
}

// netmikoFunctions are Salt's napalm_mod Netmiko functions.
func netmikoFunctions() []modules.Function {
	return []modules.Function{
		{Name: "napalm.netmiko_args", Doc: "Return the key-value arguments used for the authentication arguments for the netmiko module.\n\nCLI Example:\n\n    salt '*' napalm.netmiko_args",
			Spec: kwargsOnly,
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return proxymod.With(ctx, c, func(ctx context.Context, n *proxymod.Napalm) (any, error) {
					return netmikoArgs(c, n), nil
				})
			}},
		{Name: "napalm.netmiko_fun", Doc: "Call an arbitrary function from the Netmiko module, passing the authentication details from the existing NAPALM connection.\n\nCLI Example:\n\n    salt '*' napalm.netmiko_fun send_command 'show version'",
			Spec: modules.Spec{Params: []modules.Param{rp("fun")}, Varargs: true, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return netmikoFun(ctx, c, c.Args.Str("fun"), c.Args.Varargs)
			}},
		{Name: "napalm.netmiko_call", Doc: "Execute an arbitrary Netmiko method, passing the authentication details from the existing NAPALM connection.\n\nCLI Example:\n\n    salt '*' napalm.netmiko_call send_command 'show version'",
			Spec: modules.Spec{Params: []modules.Param{rp("method")}, Varargs: true, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return netmikoCall(ctx, c, c.Args.Str("method"), c.Args.Varargs)
			}},
		{Name: "napalm.netmiko_multi_call", Doc: "Execute a list of arbitrary Netmiko methods, passing the authentication details from the existing NAPALM connection.\n\nCLI Example:\n\n    salt '*' napalm.netmiko_multi_call \"{'name': 'send_command', 'args': ['show version']}\" \"{'name': 'send_command', 'args': ['show interfaces']}\"",
			Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return netmikoMultiCall(ctx, c, c.Args.Varargs)
			}},
		{Name: "napalm.netmiko_commands", Doc: "Invoke one or more commands to be executed on the remote device, via Netmiko.\nReturns a list of strings, with the output from each command.\n\nCLI Example:\n\n    salt '*' napalm.netmiko_commands 'show version' 'show interfaces'",
			Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				cmds := c.Args.Varargs
				return withNetmiko(ctx, c, "send_command", func(ctx context.Context, nm driver.Netmiko) (any, error) {
					ret := []any{}
					for _, cmd := range cmds {
						out, err := nm.NetmikoCall(ctx, "send_command", []any{payload.Text(cmd)}, nil)
						if err != nil {
							return nil, err
						}
						ret = append(ret, out)
					}
					return ret, nil
				})
			}},
		{Name: "napalm.netmiko_config", Doc: "Load a list of configuration commands on the remote device, via Netmiko.\n\nconfig_commands\n    A list of configuration commands to be loaded on the remote device.\n\nconfig_file\n    Read the configuration commands from a file (salt:// supported).\n\nexit_config_mode: ``True``\n    Determines whether or not to exit config mode after complete.\n\ncommit: ``False``\n    Commit the configuration changes before exiting the config mode.\n\nCLI Example:\n\n    salt '*' napalm.netmiko_config 'set system ntp peer 1.2.3.4' commit=True",
			Spec: modules.Spec{Varargs: true, Kwargs: true},
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				var cmds []string
				for _, v := range c.Args.Varargs {
					cmds = append(cmds, payload.Text(v))
				}
				return netmikoSendConfig(ctx, c, cmds)
			}},
	}
}

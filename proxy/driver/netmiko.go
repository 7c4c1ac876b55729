package driver

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Netmiko is implemented by the SSH drivers: the Netmiko connection methods
// Salt's napalm.netmiko_* functions call, answered over the driver's own
// scrapligo session (gsalt has no Netmiko; the session already is the SSH
// connection Netmiko would open).
type Netmiko interface {
	// NetmikoCall runs one Netmiko method with its positional and keyword
	// arguments. Methods: send_command, send_command_timing,
	// send_config_set, commit, find_prompt, is_alive, check_config_mode,
	// check_enable_mode, config_mode, exit_config_mode, enable, disconnect.
	NetmikoCall(ctx context.Context, method string, args []any, kwargs map[string]any) (any, error)
}

// ErrNetmikoMethod is a Netmiko method gsalt does not answer; its text is
// Python's AttributeError for the method.
var ErrNetmikoMethod = errors.New("no such Netmiko method")

// netmikoArg reads argument name: position i or keyword.
func netmikoArg(args []any, kw map[string]any, i int, name string) (any, bool) {
	if i >= 0 && i < len(args) {
		return args[i], true
	}
	v, ok := kw[name]
	return v, ok
}

func netmikoBool(args []any, kw map[string]any, i int, name string, def bool) bool {
	v, ok := netmikoArg(args, kw, i, name)
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != "" && !strings.EqualFold(x, "false")
	case int64:
		return x != 0
	}
	return def
}

// NetmikoCall implements Netmiko.
func (b *base) NetmikoCall(ctx context.Context, method string, args []any, kw map[string]any) (any, error) {
	switch method {
	case "is_alive":
		return b.IsAlive(ctx), nil
	case "disconnect":
		return nil, nil
	}
	var res any
	err := b.s.run(ctx, func(o *op) error {
		prompt := func() (string, error) {
			if err := o.budget(method); err != nil {
				return "", err
			}
			p, err := o.d.Channel.GetPrompt()
			if err != nil {
				return "", o.fail(method, err)
			}
			return string(p), nil
		}
		inConfig := func() bool { return strings.Contains(o.d.CurrentPriv, "config") }
		switch method {
		case "send_command", "send_command_timing":
			v, ok := netmikoArg(args, kw, 0, "command_string")
			if !ok || v == nil {
				return fmt.Errorf("%w: %s() missing 1 required positional argument: 'command_string'", ErrInvalidArgument, method)
			}
			cmd := fmt.Sprint(v)
			var out string
			var err error
			if inConfig() {
				out, _, err = o.sendRaw(cmd)
			} else {
				out, _, err = o.send(cmd)
			}
			if err != nil {
				return err
			}
			if !netmikoBool(args, kw, -1, "strip_command", true) {
				out = cmd + "\n" + out
			}
			if !netmikoBool(args, kw, -1, "strip_prompt", true) {
				p, err := prompt()
				if err != nil {
					return err
				}
				out += "\n" + p
			}
			res = out
		case "send_config_set":
			v, _ := netmikoArg(args, kw, 0, "config_commands")
			var cmds []string
			switch x := v.(type) {
			case nil:
				res = ""
				return nil
			case string:
				cmds = []string{x}
			case []string:
				cmds = x
			case []any:
				for _, e := range x {
					cmds = append(cmds, fmt.Sprint(e))
				}
			default:
				return fmt.Errorf("%w: Invalid argument passed into send_config_set", ErrInvalidArgument)
			}
			var t strings.Builder
			if err := o.budget(method); err != nil {
				return err
			}
			if err := o.d.AcquirePriv("configuration"); err != nil {
				return o.fail(method, err)
			}
			for _, c := range cmds {
				p, err := prompt()
				if err != nil {
					return err
				}
				out, _, err := o.sendRaw(c)
				if err != nil {
					return err
				}
				t.WriteString(p + c + "\n")
				if out != "" {
					t.WriteString(out + "\n")
				}
			}
			if netmikoBool(args, kw, -1, "exit_config_mode", true) {
				if err := o.home("configuration"); err != nil {
					return err
				}
			}
			p, err := prompt()
			if err != nil {
				return err
			}
			t.WriteString(p)
			res = t.String()
		case "commit":
			if b.s.name != "iosxr" {
				return fmt.Errorf("%w: Network device does not support 'commit()' method", ErrNotSupported)
			}
			if err := o.budget(method); err != nil {
				return err
			}
			if !inConfig() {
				if err := o.d.AcquirePriv("configuration"); err != nil {
					return o.fail(method, err)
				}
			}
			out, failed, err := o.sendRaw("commit")
			if err != nil {
				return err
			}
			if failed {
				return o.rejected("commit", out)
			}
			res = out
		case "find_prompt":
			p, err := prompt()
			if err != nil {
				return err
			}
			res = p
		case "check_config_mode":
			res = inConfig()
		case "check_enable_mode":
			res = o.d.CurrentPriv == o.d.DefaultDesiredPriv || inConfig()
		case "config_mode":
			if err := o.budget(method); err != nil {
				return err
			}
			if err := o.d.AcquirePriv("configuration"); err != nil {
				return o.fail(method, err)
			}
			res = ""
		case "exit_config_mode", "enable":
			if err := o.home(o.d.CurrentPriv); err != nil {
				return err
			}
			res = ""
		default:
			return fmt.Errorf("%w: '%s' object has no attribute '%s'", ErrNetmikoMethod, netmikoClass(b.s.name), method)
		}
		return nil
	})
	return res, err
}

// netmikoClass names the Netmiko connection class of a driver, for error
// texts.
func netmikoClass(driver string) string {
	switch driver {
	case "ios":
		return "CiscoIosSSH"
	case "eos":
		return "AristaSSH"
	case "nxos_ssh":
		return "CiscoNxosSSH"
	case "iosxr":
		return "CiscoXrSSH"
	}
	return "BaseConnection"
}

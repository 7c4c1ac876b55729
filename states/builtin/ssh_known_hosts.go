package builtin

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file is Salt's ssh_known_hosts state module
// (salt/states/ssh_known_hosts.py) over the ssh execution module.

func sshKnownHostsStates() []states.Function {
	return []states.Function{
		{Name: "ssh_known_hosts.present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("user", nil), sbOpt("fingerprint", nil), sbOpt("key", nil),
			sbOpt("port", nil), sbOpt("enc", nil), sbOpt("config", nil), sbOpt("hash_known_hosts", true), sbOpt("timeout", int64(5)), sbOpt("fingerprint_hash_type", nil)}},
			Fn: sshKnownHostsPresent},
		{Name: "ssh_known_hosts.absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("user", nil), sbOpt("config", nil)}},
			Fn: sshKnownHostsAbsent},
	}
}

// knownHostsConfig is the config default for user, or the error comment.
func knownHostsConfig(user, config any) (string, string) {
	cfg := ""
	if payload.Truthy(config) {
		cfg = pyfmt.Str(config)
	}
	if !payload.Truthy(user) {
		if cfg == "" {
			cfg = "/etc/ssh/ssh_known_hosts"
		}
		if !filepath.IsAbs(cfg) {
			return cfg, `If not specifying a "user", specify an absolute "config".`
		}
		return cfg, ""
	}
	if cfg == "" {
		cfg = ".ssh/known_hosts"
	}
	return cfg, ""
}

func sshKnownHostsPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	a := c.Args
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	if c.Test {
		ret.Result = states.None
	}
	config, bad := knownHostsConfig(a.Get("user"), a.Get("config"))
	if bad != "" {
		ret.Result, ret.Comment = states.False, bad
		return ret, nil
	}
	key, fp := a.Get("key"), a.Get("fingerprint")
	if c.Test {
		switch {
		case payload.Truthy(key) && payload.Truthy(fp):
			ret.Result, ret.Comment = states.False, `Specify either "key" or "fingerprint", not both.`
			return ret, nil
		case payload.Truthy(key) && !payload.Truthy(a.Get("enc")):
			ret.Result, ret.Comment = states.False, `Required argument "enc" if using "key" argument.`
			return ret, nil
		}
		res, err := sbExec(ctx, c, "ssh.check_known_host", []any{a.Get("user"), name}, payload.NewMap("key", key, "fingerprint", fp,
			"config", config, "port", a.Get("port"), "fingerprint_hash_type", a.Get("fingerprint_hash_type")))
		if err != nil {
			if errors.Is(err, modules.ErrCommandNotFound) {
				ret.Result, ret.Comment = states.False, "ssh.check_known_host error: "+sbErrText(err)
				return ret, nil
			}
			return ret, err
		}
		switch res {
		case "exists":
			ret.Result, ret.Comment = states.True, fmt.Sprintf("Host %s is already in %s", name, config)
		case "add":
			ret.Comment = fmt.Sprintf("Key for %s is set to be added to %s", name, config)
		default:
			ret.Comment = fmt.Sprintf("Key for %s is set to be updated in %s", name, config)
		}
		return ret, nil
	}
	res, err := sbExec(ctx, c, "ssh.set_known_host", nil, payload.NewMap("user", a.Get("user"), "hostname", name, "fingerprint", fp, "key", key,
		"port", a.Get("port"), "enc", a.Get("enc"), "config", config, "hash_known_hosts", a.Get("hash_known_hosts"), "timeout", a.Get("timeout"),
		"fingerprint_hash_type", a.Get("fingerprint_hash_type")))
	if err != nil {
		return ret, err
	}
	rm, _ := res.(*payload.Map)
	if rm == nil {
		return ret, fmt.Errorf("ssh.set_known_host returned %s", pyfmt.Repr(res))
	}
	switch rm.Str("status") {
	case "exists":
		ret.Comment = fmt.Sprintf("%s already exists in %s", name, config)
	case "error":
		ret.Result, ret.Comment = states.False, rm.Str("error")
	default:
		old, _ := rm.Get("old")
		newV, _ := rm.Get("new")
		ret.Changes = payload.NewMap("old", old, "new", newV)
		first := &payload.Map{}
		if l := rm.List("new"); len(l) > 0 {
			first, _ = l[0].(*payload.Map)
		}
		if payload.Truthy(key) {
			ret.Comment = fmt.Sprintf("%s's key saved to %s (key: %s)", name, config, first.Str("key"))
		} else {
			ret.Comment = fmt.Sprintf("%s's key saved to %s (fingerprint: %s)", name, config, first.Str("fingerprint"))
		}
	}
	return ret, nil
}

func sshKnownHostsAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	config, bad := knownHostsConfig(c.Args.Get("user"), c.Args.Get("config"))
	if bad != "" {
		ret.Result, ret.Comment = states.False, bad
		return ret, nil
	}
	known, err := sbExec(ctx, c, "ssh.get_known_host_entries", nil, payload.NewMap("user", c.Args.Get("user"), "hostname", name, "config", config))
	if err != nil {
		return ret, err
	}
	if !payload.Truthy(known) {
		ret.Comment = "Host is already absent"
		return ret, nil
	}
	if c.Test {
		ret.Result, ret.Comment = states.None, fmt.Sprintf("Key for %s is set to be removed from %s", name, config)
		return ret, nil
	}
	res, err := sbExec(ctx, c, "ssh.rm_known_host", nil, payload.NewMap("user", c.Args.Get("user"), "hostname", name, "config", config))
	if err != nil {
		return ret, err
	}
	rm, _ := res.(*payload.Map)
	if rm == nil {
		return ret, fmt.Errorf("ssh.rm_known_host returned %s", pyfmt.Repr(res))
	}
	if rm.Str("status") == "error" {
		ret.Result, ret.Comment = states.False, rm.Str("error")
		return ret, nil
	}
	ret.Changes = payload.NewMap("old", known, "new", nil)
	ret.Comment = rm.Str("comment")
	return ret, nil
}

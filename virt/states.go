package virt

import (
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"strings"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// StateFunctions returns the virt.* state functions (salt/states/virt.py):
// stopped, powered_off, rebooted, unpowered, snapshot, saved, reverted,
// keys, and the defining states (DefineStateFunctions).
func StateFunctions() []states.Function {
	conn := []modules.Param{opt("connection", nil), opt("username", nil), opt("password", nil)}
	spec := func(ps ...modules.Param) modules.Spec {
		return modules.Spec{Params: append(append([]modules.Param{req("name")}, ps...), conn...)}
	}
	return append([]states.Function{
		{Name: "virt.stopped", Spec: spec(), Fn: virtCall("shutdown", "stopped", "Machine has been shut down", "shutdown", true)},
		{Name: "virt.powered_off", Spec: spec(), Fn: virtCall("stop", "unpowered", "Machine has been powered off", "shutdown", true)},
		{Name: "virt.rebooted", Spec: spec(), Fn: virtCall("reboot", "rebooted", "Machine has been rebooted", "", true)},
		{Name: "virt.unpowered", Spec: modules.Spec{Params: []modules.Param{req("name")}}, Fn: virtCall("stop", "unpowered", "Machine has been powered off", "", false)},
		{Name: "virt.snapshot", Spec: spec(opt("suffix", nil)), Fn: virtCall("snapshot", "saved", "Snapshot has been taken", "", true)},
		{Name: "virt.saved", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("suffix", nil)}}, Fn: virtCall("snapshot", "saved", "Snapshots has been taken", "", false)},
		{Name: "virt.reverted", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("snapshot", nil), opt("cleanup", false)}}, Fn: reverted},
		keysFunction(),
	}, DefineStateFunctions()...)
}

// isLibvirtFailure tells whether an exec failure is a libvirt error (Salt
// catches libvirt.libvirtError in _virt_call).
func isLibvirtFailure(ret any) bool {
	s, ok := ret.(string)
	return ok && strings.Contains(s, "libvirtError: ")
}

// virtCall is _virt_call: run virt.<function> on every domain matching the
// name glob, skipping those already in state.
func virtCall(function, section, comment, state string, withConn bool) states.Func {
	return func(ctx context.Context, c *states.Call) (states.Ret, error) {
		name := c.Args.Str("name")
		ret := states.Ret{Name: name, Result: states.True}
		if c.Test {
			ret.Result = states.None
		}
		kw := payload.NewMap()
		if withConn {
			for _, k := range []string{"connection", "username", "password"} {
				kw.Set(k, c.Args.Get(k))
			}
		}
		if function == "snapshot" {
			kw.Set("suffix", c.Args.Get("suffix"))
		}
		all, err := c.Exec(ctx, "virt.list_domains", nil, nil)
		if err != nil {
			return ret, err
		}
		var targeted []string
		for _, d := range asList(all) {
			if py.Fnmatch(payload.Text(d), name) {
				targeted = append(targeted, payload.Text(d))
			}
		}
		var changed, ignored []any
		for _, dom := range targeted {
			if state != "" {
				st, err := c.Exec(ctx, "virt.vm_state", []any{dom}, nil)
				if err != nil {
					if isLibvirtFailure(st) {
						ignored = append(ignored, payload.NewMap("domain", dom, "issue", libvirtText(st)))
						continue
					}
					return ret, err
				}
				if payload.Text(val(asMap(st), dom)) == state {
					continue
				}
			}
			var resp any = true
			if !c.Test {
				r, err := c.Exec(ctx, "virt."+function, []any{dom}, kw)
				if err != nil {
					if isLibvirtFailure(r) {
						ignored = append(ignored, payload.NewMap("domain", dom, "issue", libvirtText(r)))
						continue
					}
					return ret, err
				}
				if m := asMap(r); m != nil {
					r = val(m, "name")
				}
				resp = r
			}
			changed = append(changed, payload.NewMap("domain", dom, function, resp))
		}
		if len(changed) == 0 {
			ret.Result = states.False
			if len(ignored) == 0 && len(targeted) > 0 {
				ret.Result = states.True
			}
			ret.Comment = "No changes had happened"
			if len(ignored) > 0 {
				ret.Changes = payload.NewMap("ignored", ignored)
			}
			return ret, nil
		}
		ret.Changes = payload.NewMap(section, changed)
		ret.Comment = comment
		return ret, nil
	}
}

// libvirtText is str(libvirtError) from the minion's error text.
func libvirtText(v any) string {
	s := payload.Text(v)
	if i := strings.Index(s, "libvirtError: "); i >= 0 {
		return s[i+len("libvirtError: "):]
	}
	return s
}

// reverted is virt.reverted.
func reverted(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := c.Args.Str("name")
	ret := states.Ret{Name: name, Result: states.False}
	all, err := c.Exec(ctx, "virt.list_domains", nil, nil)
	if err != nil {
		ret.Comment = strings.TrimPrefix(payload.Text(all), "ERROR: ")
		return ret, nil
	}
	var domains []string
	for _, d := range asList(all) {
		if py.Fnmatch(payload.Text(d), name) {
			domains = append(domains, payload.Text(d))
		}
	}
	if len(domains) == 0 {
		ret.Comment = fmt.Sprintf("No domains found for criteria \"%s\"", name)
		return ret, nil
	}
	changes := payload.NewMap()
	var revertedList, ignored []any
	multi := len(domains) > 1
	for _, dom := range domains {
		kw := payload.NewMap("vm_snapshot", c.Args.Get("snapshot"), "cleanup", c.Args.Get("cleanup"))
		r, err := c.Exec(ctx, "virt.revert_snapshot", []any{dom}, kw)
		var result *payload.Map
		if err != nil {
			if !errors.Is(err, states.ErrExecFailed) {
				return ret, err
			}
			msg := strings.TrimPrefix(payload.Text(r), "ERROR: ")
			if !multi {
				ret.Comment = msg
				return ret, nil
			}
			ignored = append(ignored, payload.NewMap("domain", dom, "issue", msg))
		} else {
			rm := asMap(r)
			result = payload.NewMap("domain", dom, "current", val(rm, "reverted"), "deleted", val(rm, "deleted"))
		}
		if !multi {
			changes = result
			break
		}
		if result != nil {
			revertedList = append(revertedList, result)
		}
	}
	if multi {
		if len(revertedList) > 0 {
			changes.Set("reverted", revertedList)
		}
	}
	if len(domains) != len(ignored) {
		ret.Result = states.True
		ret.Comment = "Domain has been reverted"
		if multi {
			ret.Comment = "Domains has been reverted"
		}
	}
	if len(ignored) > 0 {
		changes.Set("ignored", ignored)
	}
	ret.Changes = changes
	return ret, nil
}

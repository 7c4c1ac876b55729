package virt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// The defining states of salt/states/virt.py: defined, running,
// network_defined, network_running, pool_defined, pool_running,
// pool_deleted and volume_defined, on the virt.* execution functions.

// lvErr sorts out the error of an execution call the way Salt's states
// catch libvirt.libvirtError: msg is the libvirt message when the call
// failed with one; otherwise fatal is the error (nil on success).
func lvErr(ret any, err error) (msg string, libvirt bool, fatal error) {
	if err == nil {
		return "", false, nil
	}
	if errors.Is(err, states.ErrExecFailed) && isLibvirtFailure(ret) {
		return libvirtText(ret), true, nil
	}
	return "", false, err
}

// lvExec runs fun through c.Exec and sorts its outcome as lvErr does: a
// libvirt failure makes ret False with libvirt's message and reports stop;
// any other error is returned for the state to raise.
func lvExec(ctx context.Context, c *states.Call, ret *states.Ret, fun string, args []any, kw *payload.Map) (out any, stop bool, err error) {
	out, err = c.Exec(ctx, fun, args, kw)
	msg, ok, fatal := lvErr(out, err)
	if fatal != nil {
		return out, false, fatal
	}
	if ok {
		ret.Result, ret.Comment = states.False, msg
		return out, true, nil
	}
	return out, false, nil
}

// connKW are the connection arguments the states pass on.
func connKW(a *modules.Args, kv ...any) *payload.Map {
	m := payload.NewMap(kv...)
	for _, k := range []string{"connection", "username", "password"} {
		m.Set(k, a.Get(k))
	}
	return m
}

func connParams() []modules.Param {
	return []modules.Param{opt("connection", nil), opt("username", nil), opt("password", nil)}
}

func domainStateSpec(withLive bool) modules.Spec {
	ps := []modules.Param{req("name"), opt("cpu", nil), opt("mem", nil), opt("vm_type", nil), opt("disk_profile", nil), opt("disks", nil),
		opt("nic_profile", nil), opt("interfaces", nil), opt("graphics", nil), opt("seed", true), opt("install", true), opt("pub_key", nil),
		opt("priv_key", nil)}
	ps = append(ps, connParams()...)
	ps = append(ps, opt("os_type", nil), opt("arch", nil), opt("boot", nil), opt("numatune", nil), opt("boot_dev", nil),
		opt("hypervisor_features", nil), opt("clock", nil), opt("serials", nil), opt("consoles", nil), opt("stop_on_reboot", false))
	if withLive {
		ps = append(ps, opt("live", true))
	}
	ps = append(ps, opt("host_devices", nil), opt("autostart", false))
	return modules.Spec{Params: ps}
}

func netStateSpec() modules.Spec {
	ps := []modules.Param{req("name"), req("bridge"), req("forward"), opt("vport", nil), opt("tag", nil), opt("ipv4_config", nil),
		opt("ipv6_config", nil), opt("autostart", true)}
	ps = append(ps, connParams()...)
	ps = append(ps, opt("mtu", nil), opt("domain", nil), opt("nat", nil), opt("interfaces", nil), opt("addresses", nil),
		opt("physical_function", nil), opt("dns", nil))
	return modules.Spec{Params: ps}
}

func poolStateSpec() modules.Spec {
	ps := []modules.Param{req("name"), opt("ptype", nil), opt("target", nil), opt("permissions", nil), opt("source", nil),
		opt("transient", false), opt("autostart", true)}
	return modules.Spec{Params: append(ps, connParams()...)}
}

// DefineStateFunctions returns virt.defined, running, network_defined,
// network_running, pool_defined, pool_running, pool_deleted and
// volume_defined.
func DefineStateFunctions() []states.Function {
	return []states.Function{
		{Name: "virt.defined", Spec: domainStateSpec(true), Fn: defined},
		{Name: "virt.running", Spec: domainStateSpec(false), Fn: running},
		{Name: "virt.network_defined", Spec: netStateSpec(), Fn: networkDefined},
		{Name: "virt.network_running", Spec: netStateSpec(), Fn: networkRunning},
		{Name: "virt.pool_defined", Spec: poolStateSpec(), Fn: poolDefined},
		{Name: "virt.pool_running", Spec: poolStateSpec(), Fn: poolRunningState},
		{Name: "virt.pool_deleted", Spec: modules.Spec{Params: append([]modules.Param{req("name"), opt("purge", false)}, connParams()...)}, Fn: poolDeleted},
		{Name: "virt.volume_defined", Spec: modules.Spec{Params: append([]modules.Param{req("pool"), req("name"), req("size"), opt("allocation", int64(0)),
			opt("format", nil), opt("type", nil), opt("permissions", nil), opt("backing_store", nil), opt("nocow", false)}, connParams()...)}, Fn: volumeDefined},
	}
}

func newRet(c *states.Call, name string) states.Ret {
	r := states.Ret{Name: name, Result: states.True, Changes: payload.NewMap()}
	if c.Test {
		r.Result = states.None
	}
	return r
}

func defined(ctx context.Context, c *states.Call) (states.Ret, error) {
	return defineDomain(ctx, c, c.Args.Get("live"))
}

// defineDomain is virt.defined with its live argument (virt.running has
// none and calls it with the default, True).
func defineDomain(ctx context.Context, c *states.Call, live any) (states.Ret, error) {
	a := c.Args
	name := a.Str("name")
	ret := newRet(c, name)
	doms, stop, err := lvExec(ctx, c, &ret, "virt.list_domains", nil, connKW(a))
	if stop || err != nil {
		return ret, err
	}
	if slices.Contains(asList(doms), any(name)) {
		kw := connKW(a)
		for _, k := range []string{"cpu", "mem", "disk_profile", "disks", "nic_profile", "interfaces", "graphics", "boot", "numatune",
			"serials", "consoles", "boot_dev", "hypervisor_features", "clock", "stop_on_reboot", "host_devices", "autostart"} {
			kw.Set(k, a.Get(k))
		}
		kw.Set("live", live)
		kw.Set("test", c.Test)
		st, stop, err := lvExec(ctx, c, &ret, "virt.update", []any{name}, kw)
		if stop || err != nil {
			return ret, err
		}
		status := asMap(st)
		ret.Changes.Set(name, status)
		switch {
		case !payload.Truthy(val(status, "definition")):
			ret.Changes = payload.NewMap()
			ret.Comment = fmt.Sprintf("Domain %s unchanged", name)
			ret.Result = states.True
		case payload.Truthy(val(status, "errors")):
			ret.Comment = fmt.Sprintf("Domain %s updated with live update(s) failures", name)
		default:
			ret.Comment = fmt.Sprintf("Domain %s updated", name)
		}
		return ret, nil
	}
	if !c.Test {
		kw := connKW(a, "cpu", a.Get("cpu"), "mem", a.Get("mem"), "os_type", a.Get("os_type"), "arch", a.Get("arch"),
			"hypervisor", a.Get("vm_type"), "disk", a.Get("disk_profile"), "disks", a.Get("disks"), "nic", a.Get("nic_profile"),
			"interfaces", a.Get("interfaces"), "graphics", a.Get("graphics"), "seed", a.Get("seed"), "install", a.Get("install"),
			"pub_key", a.Get("pub_key"), "priv_key", a.Get("priv_key"), "boot", a.Get("boot"), "numatune", a.Get("numatune"),
			"serials", a.Get("serials"), "consoles", a.Get("consoles"), "start", false, "boot_dev", a.Get("boot_dev"),
			"hypervisor_features", a.Get("hypervisor_features"), "clock", a.Get("clock"), "stop_on_reboot", a.Get("stop_on_reboot"),
			"host_devices", a.Get("host_devices"))
		if _, stop, err := lvExec(ctx, c, &ret, "virt.init", []any{name}, kw); stop || err != nil {
			return ret, err
		}
	}
	ret.Changes.Set(name, payload.NewMap("definition", true))
	ret.Comment = fmt.Sprintf("Domain %s defined", name)
	return ret, nil
}

func running(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := a.Str("name")
	ret, err := defineDomain(ctx, c, true)
	if err != nil || ret.Result == states.False {
		return ret, err
	}
	changed := payload.Truthy(val(asMap(val(ret.Changes, name)), "definition"))
	st, stop, err := lvExec(ctx, c, &ret, "virt.vm_state", []any{name}, connKW(a))
	if stop || err != nil {
		return ret, err
	}
	if payload.Text(val(asMap(st), name)) != "running" {
		if !c.Test {
			if _, stop, err := lvExec(ctx, c, &ret, "virt.start", []any{name}, connKW(a)); stop || err != nil {
				return ret, err
			}
		}
		comment := fmt.Sprintf("Domain %s started", name)
		if len(ret.Comment) < len("unchanged") || ret.Comment[len(ret.Comment)-len("unchanged"):] != "unchanged" {
			comment = ret.Comment + " and started"
		}
		ret.Comment = comment
		ch := asMap(val(ret.Changes, name))
		if ch == nil {
			ch = payload.NewMap()
			ret.Changes.Set(name, ch)
		}
		ch.Set("started", true)
	} else if !changed {
		ret.Comment = fmt.Sprintf("Domain %s exists and is running", name)
	}
	return ret, nil
}

func netKW(a *modules.Args, kv ...any) *payload.Map {
	kw := connKW(a)
	for _, k := range []string{"vport", "tag", "ipv4_config", "ipv6_config", "mtu", "domain", "nat", "interfaces", "addresses", "physical_function", "dns"} {
		kw.Set(k, a.Get(k))
	}
	for i := 0; i+1 < len(kv); i += 2 {
		kw.Set(kv[i].(string), kv[i+1])
	}
	return kw
}

// xorAuto is Salt's "autostart differs" test of an info's 0/1 flag.
func xorAuto(info *payload.Map, want bool) bool {
	return payload.Truthy(val(info, "autostart")) != want
}

// definedChange records a network or pool (kind) just defined as Salt's
// network_defined and pool_defined word it.
func definedChange(ret *states.Ret, kind, name string, autostart bool) {
	if autostart {
		ret.Changes.Set(name, kind+" defined, marked for autostart")
		ret.Comment = fmt.Sprintf("%s %s defined, marked for autostart", kind, name)
		return
	}
	ret.Changes.Set(name, kind+" defined")
	ret.Comment = fmt.Sprintf("%s %s defined", kind, name)
}

// onOff is the state argument of virt.*_set_autostart.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func networkDefined(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := a.Str("name")
	ret := newRet(c, name)
	autostart := a.Bool("autostart")
	info, stop, err := lvExec(ctx, c, &ret, "virt.network_info", []any{name}, connKW(a))
	if stop || err != nil {
		return ret, err
	}
	args := []any{name, a.Get("bridge"), a.Get("forward")}
	var needsAutostart bool
	if ni := asMap(val(asMap(info), name)); ni != nil && ni.Len() > 0 {
		needsAutostart = xorAuto(ni, autostart)
		needs, stop, err := lvExec(ctx, c, &ret, "virt.network_update", args, netKW(a, "test", true))
		if stop || err != nil {
			return ret, err
		}
		if payload.Truthy(needs) {
			if !c.Test {
				if _, stop, err := lvExec(ctx, c, &ret, "virt.network_update", args, netKW(a, "test", false)); stop || err != nil {
					return ret, err
				}
			}
			action := ""
			if needsAutostart {
				action = ", autostart flag changed"
			}
			ret.Changes.Set(name, "Network updated"+action)
			ret.Comment = fmt.Sprintf("Network %s updated%s", name, action)
		} else {
			ret.Comment = fmt.Sprintf("Network %s unchanged", name)
			ret.Result = states.True
		}
	} else {
		needsAutostart = autostart
		if !c.Test {
			if _, stop, err := lvExec(ctx, c, &ret, "virt.network_define", args, netKW(a, "autostart", false, "start", false)); stop || err != nil {
				return ret, err
			}
		}
		definedChange(&ret, "Network", name, needsAutostart)
	}
	if needsAutostart && !c.Test {
		if _, stop, err := lvExec(ctx, c, &ret, "virt.network_set_autostart", []any{name}, connKW(a, "state", onOff(autostart))); stop || err != nil {
			return ret, err
		}
	}
	return ret, nil
}

func networkRunning(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := a.Str("name")
	ret, err := networkDefined(ctx, c)
	if err != nil || ret.Result == states.False {
		return ret, err
	}
	result := states.True
	if c.Test {
		result = states.None
	}
	info, stop, err := lvExec(ctx, c, &ret, "virt.network_info", []any{name}, connKW(a))
	if stop || err != nil {
		return ret, err
	}
	if payload.Truthy(val(asMap(val(asMap(info), name)), "active")) {
		ret.Comment += " and is running"
	} else {
		if !c.Test {
			if _, stop, err := lvExec(ctx, c, &ret, "virt.network_start", []any{name}, connKW(a)); stop || err != nil {
				return ret, err
			}
		}
		change := "Network started"
		if v, ok := ret.Changes.Get(name); ok {
			change = payload.Text(v) + " and started"
		}
		ret.Changes.Set(name, change)
		ret.Comment += " and started"
	}
	ret.Result = result
	return ret, nil
}

// buildablePools are BUILDABLE_POOL_TYPES.
var buildablePools = []string{"disk", "fs", "netfs", "dir", "logical", "vstorage", "zfs"}

func poolKW(a *modules.Args, kv ...any) *payload.Map {
	src := asMap(a.Get("source"))
	kw := connKW(a, "ptype", a.Get("ptype"), "target", a.Get("target"), "permissions", a.Get("permissions"))
	for _, k := range []string{"devices", "dir", "initiator", "adapter", "hosts", "auth", "name", "format"} {
		kw.Set("source_"+k, val(src, k))
	}
	for i := 0; i+1 < len(kv); i += 2 {
		kw.Set(kv[i].(string), kv[i+1])
	}
	return kw
}

// buildPool runs virt.pool_build, only logging a libvirt failure (the
// disk or volume group may already exist), like Salt.
func buildPool(ctx context.Context, c *states.Call, name string) error {
	r, err := c.Exec(ctx, "virt.pool_build", []any{name}, connKW(c.Args))
	msg, ok, fatal := lvErr(r, err)
	if ok {
		slog.Warn("Failed to build libvirt storage pool", "pool", name, "err", msg)
	}
	return fatal
}

func poolDefined(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := a.Str("name")
	ret := newRet(c, name)
	autostart := a.Bool("autostart")
	ptype := a.Str("ptype")
	info, stop, err := lvExec(ctx, c, &ret, "virt.pool_info", []any{name}, connKW(a))
	if stop || err != nil {
		return ret, err
	}
	needsAutostart := false
	if im := asMap(info); im != nil && im.Len() > 0 {
		pi := asMap(val(im, name))
		needsAutostart = xorAuto(pi, autostart)
		needs, stop, err := lvExec(ctx, c, &ret, "virt.pool_update", []any{name}, poolKW(a, "test", true))
		if stop || err != nil {
			return ret, err
		}
		if payload.Truthy(needs) {
			if !c.Test {
				if _, stop, err := lvExec(ctx, c, &ret, "virt.pool_update", []any{name}, poolKW(a)); stop || err != nil {
					return ret, err
				}
			}
			action := ""
			if payload.Text(val(pi, "state")) != "running" && slices.Contains(buildablePools, ptype) {
				if !c.Test {
					if err := buildPool(ctx, c, name); err != nil {
						return ret, err
					}
				}
				action = ", built"
			}
			if needsAutostart {
				action += ", autostart flag changed"
			}
			ret.Changes.Set(name, "Pool updated"+action)
			ret.Comment = fmt.Sprintf("Pool %s updated%s", name, action)
		} else {
			ret.Comment = fmt.Sprintf("Pool %s unchanged", name)
			ret.Result = states.True
		}
	} else {
		needsAutostart = autostart
		if !c.Test {
			if _, stop, err := lvExec(ctx, c, &ret, "virt.pool_define", []any{name}, poolKW(a, "transient", a.Get("transient"), "start", false)); stop || err != nil {
				return ret, err
			}
			if slices.Contains(buildablePools, ptype) {
				if err := buildPool(ctx, c, name); err != nil {
					return ret, err
				}
			}
		}
		definedChange(&ret, "Pool", name, needsAutostart)
	}
	if needsAutostart && !c.Test {
		if _, stop, err := lvExec(ctx, c, &ret, "virt.pool_set_autostart", []any{name}, connKW(a, "state", onOff(autostart))); stop || err != nil {
			return ret, err
		}
	}
	return ret, nil
}

func poolRunningState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := a.Str("name")
	ptype := a.Str("ptype")
	ret, err := poolDefined(ctx, c)
	if err != nil || ret.Result == states.False {
		return ret, err
	}
	prev := payload.Text(val(ret.Changes, name))
	_, hasChange := ret.Changes.Get(name)
	isDefined := hasChange && len(prev) >= 12 && prev[:12] == "Pool defined"
	updated := hasChange && len(prev) >= 12 && prev[:12] == "Pool updated"
	result := states.True
	if c.Test {
		result = states.None
	}
	info, stop, err := lvExec(ctx, c, &ret, "virt.pool_info", []any{name}, connKW(a))
	if stop || err != nil {
		return ret, err
	}
	action := "started"
	st := "stopped"
	if pi := asMap(val(asMap(info), name)); pi != nil && pi.Has("state") {
		st = payload.Text(val(pi, "state"))
	}
	isRunning := st == "running"
	if isRunning {
		if updated {
			action = "restarted"
			if !c.Test {
				if _, stop, err := lvExec(ctx, c, &ret, "virt.pool_stop", []any{name}, connKW(a)); stop || err != nil {
					return ret, err
				}
			}
			if slices.Contains(buildablePools, ptype) && ptype != "disk" && ptype != "logical" {
				if !c.Test {
					if _, stop, err := lvExec(ctx, c, &ret, "virt.pool_build", []any{name}, connKW(a)); stop || err != nil {
						return ret, err
					}
				}
				action = "built, " + action
			}
		} else {
			action = "already running"
			result = states.True
		}
	}
	if !isRunning || updated || isDefined {
		if !c.Test {
			if _, stop, err := lvExec(ctx, c, &ret, "virt.pool_start", []any{name}, connKW(a)); stop || err != nil {
				return ret, err
			}
		}
	}
	comment := "Pool " + name
	change := "Pool"
	if hasChange {
		comment = ret.Comment + ","
		change = prev + ","
	}
	if action != "already running" {
		ret.Changes.Set(name, change+" "+action)
	}
	ret.Comment = comment + " " + action
	ret.Result = result
	return ret, nil
}

func poolDeleted(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := a.Str("name")
	ret := states.Ret{Name: name, Result: states.True, Changes: payload.NewMap()}
	fail := func(msg string) (states.Ret, error) {
		ret.Result, ret.Comment = states.False, "Failed deleting pool: "+msg
		return ret, nil
	}
	call := func(fun string, args ...any) (any, bool, error) {
		r, err := c.Exec(ctx, fun, args, connKW(a))
		msg, ok, fatal := lvErr(r, err)
		if fatal != nil {
			return nil, false, fatal
		}
		if ok {
			_, ferr := fail(msg)
			return nil, false, ferr
		}
		return r, true, nil
	}
	info, ok, err := call("virt.pool_info", name)
	if err != nil || !ok {
		return ret, err
	}
	im := asMap(info)
	if im == nil || im.Len() == 0 {
		ret.Comment = "Storage pool could not be found: " + name
		return ret, nil
	}
	pi := asMap(val(im, name))
	ptype := payload.Text(val(pi, "type"))
	ret.Changes.Set("stopped", false)
	ret.Changes.Set("deleted", false)
	ret.Changes.Set("undefined", false)
	deletedVols := []any{}
	ret.Changes.Set("deleted_volumes", deletedVols)
	var unsupported []string
	purge := a.Bool("purge")
	if payload.Text(val(pi, "state")) == "running" {
		if purge {
			if !slices.Contains([]string{"iscsi", "iscsi-direct", "mpath", "scsi"}, ptype) {
				if _, ok, err := call("virt.pool_refresh", name); err != nil || !ok {
					return ret, err
				}
				vols, ok, err := call("virt.pool_list_volumes", name)
				if err != nil || !ok {
					return ret, err
				}
				for _, v := range asList(vols) {
					deleted := c.Test
					if !c.Test {
						r, ok, err := call("virt.volume_delete", name, v)
						if err != nil || !ok {
							return ret, err
						}
						deleted = payload.Truthy(r)
					}
					if deleted {
						deletedVols = append(deletedVols, v)
						ret.Changes.Set("deleted_volumes", deletedVols)
					}
				}
			} else {
				unsupported = append(unsupported, "deleting volume")
			}
		}
		if !c.Test {
			r, ok, err := call("virt.pool_stop", name)
			if err != nil || !ok {
				return ret, err
			}
			ret.Changes.Set("stopped", r)
		} else {
			ret.Changes.Set("stopped", true)
		}
		if purge {
			if slices.Contains([]string{"dir", "fs", "netfs", "logical", "vstorage", "zfs"}, ptype) {
				if !c.Test {
					r, ok, err := call("virt.pool_delete", name)
					if err != nil || !ok {
						return ret, err
					}
					ret.Changes.Set("deleted", r)
				} else {
					ret.Changes.Set("deleted", true)
				}
			} else {
				unsupported = append(unsupported, "deleting pool")
			}
		}
	}
	if !c.Test {
		r, ok, err := call("virt.pool_undefine", name)
		if err != nil || !ok {
			return ret, err
		}
		ret.Changes.Set("undefined", r)
	} else {
		ret.Changes.Set("undefined", true)
		ret.Result = states.None
	}
	if len(unsupported) > 0 {
		list := ""
		for i, u := range unsupported {
			if i > 0 {
				list += ", "
			}
			list += u
		}
		ret.Comment = fmt.Sprintf("Unsupported actions for pool of type \"%s\": %s", ptype, list)
	}
	return ret, nil
}

func volumeDefined(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	pool, name := a.Str("pool"), a.Str("name")
	ret := states.Ret{Name: name, Result: states.True, Changes: payload.NewMap()}
	pools, err := c.Exec(ctx, "virt.list_pools", nil, connKW(a))
	if err != nil {
		return ret, err
	}
	if !slices.Contains(asList(pools), any(pool)) {
		return ret, fmt.Errorf("%w: Storage pool %s not existing", modules.ErrInvocation, pool)
	}
	infos, err := c.Exec(ctx, "virt.volume_infos", []any{pool, name}, connKW(a))
	if err != nil {
		return ret, err
	}
	if vi := asMap(val(asMap(val(asMap(infos), pool)), name)); vi != nil && vi.Len() > 0 {
		ret.Comment = "volume is existing"
		bs := asMap(val(vi, "backing_store"))
		want := asMap(a.Get("backing_store"))
		same := textEq(val(bs, "path"), val(want, "path")) && textEq(val(bs, "format"), val(want, "format"))
		format := a.Get("format")
		if !same || (format != nil && !textEq(val(vi, "format"), format)) {
			ret.Result = states.False
			ret.Comment = "A volume with the same name but different backing store or format is existing"
			return ret, nil
		}
		capacity, _ := payload.AsInt(val(vi, "capacity"))
		size, _ := payload.AsInt(a.Get("size"))
		if capacity != size*1024*1024 {
			ret.Comment = "The capacity of the volume is different, but no resize performed"
		}
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
	}
	testComment := "would be "
	if !c.Test {
		kw := connKW(a)
		for _, k := range []string{"allocation", "format", "type", "permissions", "backing_store", "nocow"} {
			kw.Set(k, a.Get(k))
		}
		r, err := c.Exec(ctx, "virt.volume_define", []any{pool, name, a.Get("size")}, kw)
		if msg, ok, fatal := lvErr(r, err); fatal != nil {
			// Salt's volume_define raises CommandExecutionError for libvirt
			// failures: an exception in the state.
			return ret, fatal
		} else if ok {
			ret.Result, ret.Comment = states.False, msg
			return ret, nil
		}
		testComment = ""
	}
	ret.Comment = fmt.Sprintf("Volume %s %sdefined in pool %s", name, testComment, pool)
	ret.Changes = payload.NewMap(pool+"/"+name, payload.NewMap("old", "", "new", "defined"))
	return ret, nil
}

// textEq compares the scalar volume values checked here (path, format) as
// text, None only equal to None: libvirt reports them as strings, a state
// may give a number. (Python's == itself is py.Equal.)
func textEq(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return payload.Text(a) == payload.Text(b)
}

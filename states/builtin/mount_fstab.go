package builtin

// This file is the swap and fstab-only states of Salt's mount state
// module (salt/states/mount.py) on Linux: mount.swap (activate a swap
// device or file and keep it in the fstab), mount.fstab_present and
// mount.fstab_absent (manage an fstab entry without mounting it, or
// mounting a new one), over mount.swaps/swapon, mount.set_fstab,
// mount.rm_fstab, mount.fstab and disk.blkid for mount_by.

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func mountFstabStates() []states.Function {
	return []states.Function{
		{Name: "mount.swap", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("persist", true), sbOpt("config", "/etc/fstab")}},
			Fn: mountSwapState},
		{Name: "mount.fstab_present", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("fs_file"), sbReq("fs_vfstype"),
			sbOpt("fs_mntops", "defaults"), sbOpt("fs_freq", int64(0)), sbOpt("fs_passno", int64(0)), sbOpt("mount_by", nil),
			sbOpt("config", "/etc/fstab"), sbOpt("mount", true), sbOpt("match_on", "auto"), sbOpt("not_change", false), sbOpt("fs_mount", true)}},
			Fn: mountFstabPresent},
		{Name: "mount.fstab_absent", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("fs_file"), sbOpt("mount_by", nil),
			sbOpt("config", "/etc/fstab")}},
			Fn: mountFstabAbsent},
	}
}

// mountSwapState is mount.swap.
func mountSwapState(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	swaps := func() (*payload.Map, error) {
		v, err := sbExec(ctx, c, "mount.swaps", nil, nil)
		if err != nil {
			return nil, err
		}
		m, _ := v.(*payload.Map)
		if m == nil {
			m = &payload.Map{}
		}
		return m, nil
	}
	on, err := swaps()
	if err != nil {
		return ret, err
	}
	real := name
	if v, err := sbExec(ctx, c, "file.is_link", []any{name}, nil); err == nil && payload.Truthy(v) {
		l, err := sbExec(ctx, c, "file.readlink", []any{name}, nil)
		if err != nil {
			return ret, err
		}
		real = payload.Text(l)
		if !strings.HasPrefix(real, "/") {
			real = "/dev/" + path.Base(real)
		}
	}
	switch {
	case on.Has(real):
		ret.Comment = fmt.Sprintf("Swap %s already active", name)
	case c.Test:
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Swap %s is set to be activated", name)
	default:
		if _, err := sbExec(ctx, c, "mount.swapon", []any{real}, nil); err != nil {
			return ret, err
		}
		if on, err = swaps(); err != nil {
			return ret, err
		}
		if st, ok := on.Get(real); ok {
			ret.Comment = fmt.Sprintf("Swap %s activated", name)
			if m, ok := st.(*payload.Map); ok {
				ret.Changes = m.Clone()
			}
		} else {
			ret.Comment = fmt.Sprintf("Swap %s failed to activate", name)
			ret.Result = states.False
		}
	}
	if !payload.Truthy(c.Args.Get("persist")) {
		return ret, nil
	}
	config := c.Args.Get("config")
	v, err := sbExec(ctx, c, "mount.fstab", []any{config}, nil)
	if err != nil {
		return ret, err
	}
	fstab, _ := v.(*payload.Map)
	if fstab == nil {
		fstab = &payload.Map{}
	}
	device := func(k string) (any, any) {
		e, _ := fstab.Get(k)
		m, _ := e.(*payload.Map)
		if m == nil {
			return nil, nil
		}
		d, _ := m.Get("device")
		t, _ := m.Get("fstype")
		return d, t
	}
	if c.Test {
		known := fstab.Has(name)
		for _, it := range fstab.Items() {
			if d, _ := device(payload.KeyString(it.Key)); d == name {
				known = true
			}
		}
		if !known {
			ret.Result = states.None
			if on.Has(name) {
				ret.Comment = fmt.Sprintf("Swap %s is set to be added to the fstab and to be activated", name)
			}
		}
		return ret, nil
	}
	if fstab.Has("none") {
		if d, t := device("none"); d == name && t != "swap" {
			return ret, nil
		}
	}
	out, err := sbExec(ctx, c, "mount.set_fstab", []any{"none", name, "swap", []any{"defaults"}, int64(0), int64(0), config}, nil)
	if err != nil {
		return ret, err
	}
	switch out {
	case "new":
		ret.Changes.Set("persist", "new")
		ret.Comment += ". Added new entry to the fstab."
	case "change":
		ret.Changes.Set("persist", "update")
		ret.Comment += ". Updated the entry in the fstab."
	case "bad config":
		ret.Result = states.False
		ret.Comment += ". However, the fstab was not found."
	}
	return ret, nil
}

// mountConvertTo is _convert_to: the device spelled as convert_to
// ("device", "uuid", "label", ...) through disk.blkid, or nil.
func mountConvertTo(ctx context.Context, c *states.Call, dev string, convertTo any) (any, error) {
	to := ""
	if convertTo != nil {
		to = pyfmt.Str(convertTo)
	}
	if !payload.Truthy(convertTo) || (to == "device" && strings.HasPrefix(dev, "/")) || strings.HasPrefix(dev, strings.ToUpper(to)+"=") {
		return dev, nil
	}
	var v any
	var err error
	if strings.HasPrefix(dev, "/") {
		v, err = sbExec(ctx, c, "disk.blkid", []any{dev}, nil)
	} else {
		v, err = sbExec(ctx, c, "disk.blkid", nil, payload.NewMap("token", dev))
	}
	if err != nil {
		return nil, err
	}
	m, _ := v.(*payload.Map)
	if m == nil || m.Len() != 1 {
		return nil, nil
	}
	first := m.Items()[0]
	if to == "device" {
		return payload.KeyString(first.Key), nil
	}
	key := strings.ToUpper(to)
	info, _ := first.Value.(*payload.Map)
	var val any
	if info != nil {
		var ok bool
		if val, ok = info.Get(key); !ok {
			return nil, fmt.Errorf("%w: KeyError: '%s'", modules.ErrExecution, key)
		}
	}
	return key + "=" + pyfmt.Str(val), nil
}

// mountFsFile is fs_file without trailing slashes (except "/").
func mountFsFile(c *states.Call) string {
	f := pyfmt.Str(c.Args.Get("fs_file"))
	if f != "/" {
		f = strings.TrimRight(f, "/")
	}
	return f
}

// mountFstabPresent is mount.fstab_present on Linux.
func mountFstabPresent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	var comments []string
	done := func() (states.Ret, error) {
		ret.Comment = strings.Join(comments, "\n")
		return ret, nil
	}
	a := c.Args
	fsFile := mountFsFile(c)
	config := pyfmt.Str(a.Get("config"))
	spec, err := mountConvertTo(ctx, c, name, a.Get("mount_by"))
	if err != nil {
		return ret, err
	}
	if !payload.Truthy(spec) {
		comments = append(comments, fmt.Sprintf("Device %s cannot be converted to %s", name, pyfmt.Str(a.Get("mount_by"))))
		return done()
	}
	kw := payload.NewMap("name", fsFile, "device", spec, "fstype", a.Get("fs_vfstype"), "opts", a.Get("fs_mntops"), "dump", a.Get("fs_freq"),
		"pass_num", a.Get("fs_passno"), "config", a.Get("config"))
	if c.Test {
		kw.Set("test", true)
	}
	kw.Set("match_on", a.Get("match_on"))
	kw.Set("not_change", a.Get("not_change"))
	out, err := sbExec(ctx, c, "mount.set_fstab", nil, kw)
	if err != nil {
		return ret, err
	}
	if c.Test {
		ret.Result = states.None
		switch out {
		case "present":
			comments = append(comments, fmt.Sprintf("%s entry is already in %s.", fsFile, config))
		case "new":
			comments = append(comments, fmt.Sprintf("%s entry will be written in %s.", fsFile, config))
			if payload.Truthy(a.Get("mount")) {
				comments = append(comments, fmt.Sprintf("Will mount %s on %s", name, fsFile))
			}
		case "change":
			comments = append(comments, fmt.Sprintf("%s entry will be updated in %s.", fsFile, config))
		default:
			ret.Result = states.False
			comments = append(comments, fmt.Sprintf("%s entry cannot be created in %s: %s.", fsFile, config, pyfmt.Str(out)))
		}
		return done()
	}
	ret.Result = states.True
	switch out {
	case "present":
		comments = append(comments, fmt.Sprintf("%s entry was already in %s.", fsFile, config))
	case "new":
		ret.Changes.Set("persist", out)
		comments = append(comments, fmt.Sprintf("%s entry added in %s.", fsFile, config))
		if payload.Truthy(a.Get("mount")) {
			res, err := sbExec(ctx, c, "mount.mount", []any{fsFile}, nil)
			if err != nil {
				return ret, err
			}
			if s, ok := res.(string); ok {
				ret.Result = states.False
				_, after, found := strings.Cut(s, ":")
				if !found {
					return ret, fmt.Errorf("%w: IndexError: list index out of range", modules.ErrExecution)
				}
				comments = append(comments, "Error while mounting "+after)
			} else {
				comments = append(comments, fmt.Sprintf("Mounted %s on %s", name, fsFile))
			}
		}
	case "change":
		ret.Changes.Set("persist", out)
		comments = append(comments, fmt.Sprintf("%s entry updated in %s.", fsFile, config))
	default:
		ret.Result = states.False
		comments = append(comments, fmt.Sprintf("%s entry cannot be changed in %s: %s.", fsFile, config, pyfmt.Str(out)))
	}
	return done()
}

// mountFstabAbsent is mount.fstab_absent on Linux.
func mountFstabAbsent(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.False, Changes: &payload.Map{}}
	a := c.Args
	fsFile := mountFsFile(c)
	config := pyfmt.Str(a.Get("config"))
	spec, err := mountConvertTo(ctx, c, name, a.Get("mount_by"))
	if err != nil {
		return ret, err
	}
	v, err := sbExec(ctx, c, "mount.fstab", []any{a.Get("config")}, nil)
	if err != nil {
		return ret, err
	}
	fstab, _ := v.(*payload.Map)
	present := fstab != nil && fstab.Has(fsFile)
	if c.Test {
		ret.Result = states.None
		if !present {
			ret.Comment = fmt.Sprintf("%s entry is already missing in %s.", fsFile, config)
		} else {
			ret.Comment = fmt.Sprintf("%s entry will be removed from %s.", fsFile, config)
		}
		return ret, nil
	}
	if !present {
		ret.Result = states.True
		ret.Comment = fmt.Sprintf("%s entry is already missing in %s.", fsFile, config)
		return ret, nil
	}
	out, err := sbExec(ctx, c, "mount.rm_fstab", nil, payload.NewMap("name", fsFile, "device", spec, "config", a.Get("config")))
	if err != nil {
		return ret, err
	}
	if out != true {
		ret.Comment = fmt.Sprintf("%s entry failed when removing from %s.", fsFile, config)
		return ret, nil
	}
	ret.Result = states.True
	ret.Changes.Set("persist", "removed")
	ret.Comment = fmt.Sprintf("%s entry removed from %s.", fsFile, config)
	return ret, nil
}

package builtin

// This file is Salt's mount state module (salt/states/mount.py) on Linux:
// mount.mounted and mount.unmounted over mount.active, mount.mount,
// mount.remount, mount.umount, the mount cache and mount.set_fstab /
// mount.rm_fstab. Bind mounts of an active mount are compared like any
// other mount (Salt's bind-specific option copying is not done).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func mountStates() []states.Function {
	return []states.Function{
		{Name: "mount.mounted", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbReq("device"), sbReq("fstype"), sbOpt("mkmnt", false),
			sbOpt("opts", "defaults"), sbOpt("dump", int64(0)), sbOpt("pass_num", int64(0)), sbOpt("config", "/etc/fstab"), sbOpt("persist", true),
			sbOpt("mount", true), sbOpt("user", nil), sbOpt("match_on", "auto"), sbOpt("device_name_regex", nil),
			sbOpt("extra_mount_invisible_options", nil), sbOpt("extra_mount_invisible_keys", nil), sbOpt("extra_mount_ignore_fs_keys", nil),
			sbOpt("extra_mount_translate_options", nil), sbOpt("hidden_opts", nil), sbOpt("bind_mount_copy_active_opts", true)}, Kwargs: true},
			Fn: mountMounted, Watch: mountModWatch},
		{Name: "mount.unmounted", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("device", nil), sbOpt("config", "/etc/fstab"),
			sbOpt("persist", false), sbOpt("user", nil)}, Kwargs: true}, Fn: mountUnmounted, Watch: mountModWatch},
		{Name: "mount.mod_watch", Spec: modules.Spec{Params: []modules.Param{sbReq("name"), sbOpt("user", nil)}, Kwargs: true}, Fn: mountModWatch},
	}
}

var (
	mountInvisibleOpts = []string{"_netdev", "actimeo", "bg", "comment", "defaults", "delay_connect", "direct-io-mode", "intr", "loop",
		"nointr", "nobootwait", "nofail", "password", "reconnect", "retry", "soft", "auto", "users", "bind", "nonempty",
		"transform_symlinks", "port", "backup-volfile-servers"}
	mountInvisibleKeys = []string{"actimeo", "comment", "credentials", "direct-io-mode", "password", "port", "retry", "secretfile"}
	mountSizeRe        = regexp.MustCompile(`^size=([0-9]+)(k|m|g)`)
	mountLVRe          = regexp.MustCompile(`^/dev/([^/]+)/([^/]+)$`)
	mountFuseRe        = regexp.MustCompile(`^\w+#(.+)`)
)

// mountSizeK is _size_convert: a size= option in kilobytes.
func mountSizeK(m []string) string {
	n, _ := strconv.ParseInt(m[1], 10, 64)
	switch m[2] {
	case "m":
		n *= 1024
	case "g":
		n *= 1024 * 1024
	}
	return strconv.FormatInt(n, 10)
}

func mountStrs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, pyfmt.Str(x))
	}
	return out
}

func mountExists(p string) bool { _, err := os.Stat(p); return err == nil }

func mountMounted(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	device := pyfmt.Str(c.Args.Get("device"))
	fstype := pyfmt.Str(c.Args.Get("fstype"))
	for _, req := range []struct{ v, what string }{{name, "name"}, {device, "device"}, {fstype, "fstype"}} {
		if req.v == "" || req.v == "None" {
			ret.Result = states.False
			ret.Comment = fmt.Sprintf("Must provide %s to mount.mounted", req.what)
			return ret, nil
		}
	}
	updateCache := false
	opts := mountOptList(c.Args.Get("opts"))
	hidden := mountOptList(c.Args.Get("hidden_opts"))
	if name != "/" {
		name = strings.TrimRight(name, "/")
	}
	mount := c.Args.Bool("mount")
	mkmnt := c.Args.Bool("mkmnt")
	user := c.Args.Get("user")
	activeV, err := sbExec(ctx, c, "mount.active", []any{true}, nil)
	if err != nil {
		return ret, err
	}
	active, _ := activeV.(*payload.Map)
	realName, err := filepath.Abs(name)
	if err != nil {
		realName = name
	}
	if r, err := filepath.EvalSymlinks(realName); err == nil {
		realName = r
	}
	compName := strings.ReplaceAll(realName, " ", `\040`)
	var deviceList []string
	realDevice := device
	switch {
	case strings.HasPrefix(device, "/"):
		realDevice = device
		if r, err := filepath.EvalSymlinks(device); err == nil {
			realDevice = r
		}
	case strings.HasPrefix(strings.ToUpper(device), "UUID="):
		parts := strings.Split(device, "=")
		realDevice = strings.ToLower(strings.Trim(parts[1], `"`))
	case strings.HasPrefix(strings.ToUpper(device), "LABEL="):
		label := strings.Split(device, "=")[1]
		res, err := sbExec(ctx, c, "cmd.run_all", []any{"blkid -t LABEL=" + label}, nil)
		if err != nil {
			return ret, err
		}
		m, _ := res.(*payload.Map)
		if rc, _ := m.Int("retcode"); rc > 0 {
			ret.Comment = fmt.Sprintf("Unable to find device with label %s.", label)
			ret.Result = states.False
			return ret, nil
		}
		// Salt walks the output text character by character here, so
		// the "device" is its first character.
		if out := m.Str("stdout"); out != "" {
			for _, ch := range out {
				deviceList = append(deviceList, strings.Split(string(ch), ":")[0])
			}
			realDevice = deviceList[0]
		}
	}
	if m := mountLVRe.FindStringSubmatch(device); m != nil {
		mapper := "/dev/mapper/" + strings.ReplaceAll(m[1], "-", "--") + "-" + strings.ReplaceAll(m[2], "-", "--")
		if mountExists(mapper) {
			realDevice = mapper
		}
	}
	if m := mountFuseRe.FindStringSubmatch(device); m != nil {
		realDevice = m[1]
	}
	if cur := active.Map(compName); cur != nil {
		if mount {
			deviceList = append(deviceList, cur.Str("device"))
			first := deviceList[0]
			if r, err := filepath.EvalSymlinks(first); err == nil {
				first = r
			} else if a, err := filepath.Abs(first); err == nil {
				first = a
			}
			deviceList = append(deviceList, first)
			for _, k := range []string{"alt_device", "device_uuid", "device_label"} {
				if v, ok := cur.Get(k); ok && payload.Truthy(v) && !containsString(deviceList, pyfmt.Str(v)) {
					deviceList = append(deviceList, pyfmt.Str(v))
				}
			}
			if len(opts) > 0 {
				r, stop, err := mountCompareOpts(ctx, c, &ret, cur, opts, hidden, fstype, realName, device, mkmnt)
				if err != nil || stop {
					return r, err
				}
				updateCache = updateCache || r.Changes.Has("umount")
				cacheV, err := sbExec(ctx, c, "mount.read_mount_cache", []any{realName}, nil)
				if err != nil {
					return ret, err
				}
				cache, _ := cacheV.(*payload.Map)
				if cache != nil && cache.Has("opts") {
					var missing []string
					for _, o := range mountStrs(cache.List("opts")) {
						if !containsString(opts, o) {
							missing = append(missing, o)
						}
					}
					if len(missing) > 0 {
						if c.Test {
							ret.Result = states.None
							ret.Comment = fmt.Sprintf("Remount would be forced because options (%s)changed", strings.Join(missing, ","))
							return ret, nil
						}
						ret.Changes.Set("umount", fmt.Sprintf("Forced remount because options (%s) changed", opts[len(opts)-1]))
						res, err := sbExec(ctx, c, "mount.remount", []any{realName, device}, payload.NewMap("mkmnt", mkmnt, "fstype", fstype, "opts", mountAnyList(opts)))
						if err != nil {
							return ret, err
						}
						ret.Result = mountResult(res)
						updateCache = true
					}
				} else {
					updateCache = true
				}
			}
			if !containsString(deviceList, realDevice) {
				var ignored string
				for _, re := range mountStrs(c.Args.Get("device_name_regex")) {
					rx, err := regexp.Compile(re)
					if err != nil {
						continue
					}
					for _, d := range deviceList {
						if loc := rx.FindStringIndex(d); loc != nil && loc[0] == 0 {
							ignored = d
							break
						}
					}
					if ignored != "" {
						break
					}
				}
				switch {
				case ignored != "":
					ret.Result = states.True
					ret.Comment = "An umount will not be forced because device matched device_name_regex: " + ignored
				case c.Test:
					ret.Result = states.None
					ret.Comment = "An umount would have been forced because devices do not match.  Watched: " + device
				default:
					msg := "Forced unmount because devices don't match. Wanted: " + device
					if realDevice != device {
						msg += " (" + realDevice + ")"
					}
					ret.Changes.Set("umount", msg+", current: "+strings.Join(deviceList, ", "))
					if _, err := sbExec(ctx, c, "mount.umount", []any{realName}, payload.NewMap("user", user)); err != nil {
						return ret, err
					}
					activeV, err = sbExec(ctx, c, "mount.active", []any{true}, nil)
					if err != nil {
						return ret, err
					}
					active, _ = activeV.(*payload.Map)
					if active.Has(compName) {
						ret.Comment = "Unable to unmount"
						ret.Result = states.None
						return ret, nil
					}
					updateCache = true
				}
			} else {
				ret.Comment = "Target was already mounted"
			}
		}
	}
	if !active.Has(compName) {
		switch {
		case mount:
			if c.Test {
				ret.Result = states.None
				switch {
				case mountExists(name):
					ret.Comment = fmt.Sprintf("%s would be mounted", name)
				case mkmnt:
					ret.Comment = fmt.Sprintf("%s would be created and mounted", name)
				default:
					ret.Comment = fmt.Sprintf("%s does not exist and would not be created", name)
				}
				return ret, nil
			}
			if !mountExists(name) && !mkmnt {
				ret.Result = states.False
				ret.Comment = "Mount directory is not present"
				return ret, nil
			}
			out, err := sbExec(ctx, c, "mount.mount", []any{name, device, mkmnt, fstype, mountAnyList(opts)}, payload.NewMap("user", user))
			if err != nil {
				return ret, err
			}
			activeV, err = sbExec(ctx, c, "mount.active", []any{true}, nil)
			if err != nil {
				return ret, err
			}
			active, _ = activeV.(*payload.Map)
			updateCache = true
			if s, ok := out.(string); ok {
				ret.Comment = s
				ret.Result = states.False
				return ret, nil
			}
			if active.Has(compName) {
				ret.Comment = "Target was successfully mounted"
				ret.Changes.Set("mount", true)
			}
		case !mountExists(name):
			switch {
			case c.Test:
				ret.Result = states.None
				if mkmnt {
					ret.Comment = fmt.Sprintf("%s would be created, but not mounted", name)
				} else {
					ret.Comment = fmt.Sprintf("%s does not exist and would neither be created nor mounted", name)
				}
			case mkmnt:
				if err := os.MkdirAll(name, 0o755); err != nil {
					return ret, fmt.Errorf("mount.mounted: %w", err)
				}
				ret.Comment = fmt.Sprintf("%s was created, not mounted", name)
			default:
				ret.Comment = fmt.Sprintf("%s not present and not mounted", name)
			}
		default:
			if c.Test {
				ret.Comment = fmt.Sprintf("%s would not be mounted", name)
			} else {
				ret.Comment = fmt.Sprintf("%s not mounted", name)
			}
		}
	}
	if !c.Args.Bool("persist") {
		return ret, nil
	}
	fstabKw := payload.NewMap("match_on", c.Args.Get("match_on"))
	fstabArgs := []any{name, device, fstype, mountAnyList(opts), c.Args.Get("dump"), c.Args.Get("pass_num"), c.Args.Get("config")}
	if c.Test {
		fstabKw.Set("test", true)
		out, err := sbExec(ctx, c, "mount.set_fstab", fstabArgs, fstabKw)
		if err != nil {
			return ret, err
		}
		if out == "present" {
			return ret, nil
		}
		ret.Result = states.None
		var comment string
		switch out {
		case "new":
			if mount {
				comment = fmt.Sprintf("%s is mounted, but needs to be written to the fstab in order to be made persistent.", name)
			} else {
				comment = fmt.Sprintf("%s needs to be written to the fstab in order to be made persistent.", name)
			}
		case "change":
			if mount {
				comment = fmt.Sprintf("%s is mounted, but its fstab entry must be updated.", name)
			} else {
				comment = fmt.Sprintf("The %s fstab entry must be updated.", name)
			}
		default:
			ret.Result = states.False
			comment = fmt.Sprintf("Unable to detect fstab status for mount point %s due to unexpected output '%s' from call to mount.set_fstab. This is most likely a bug.", name, pyfmt.Str(out))
		}
		ret.Comment = fmt.Sprintf("%s. %s", ret.Comment, comment)
		return ret, nil
	}
	out, err := sbExec(ctx, c, "mount.set_fstab", fstabArgs, fstabKw)
	if err != nil {
		return ret, err
	}
	if updateCache {
		if _, err := sbExec(ctx, c, "mount.write_mount_cache", []any{realName, device}, payload.NewMap("mkmnt", mkmnt, "fstype", fstype, "mount_opts", mountAnyList(opts))); err != nil {
			return ret, err
		}
	}
	switch out {
	case "present":
		ret.Comment += ". Entry already exists in the fstab."
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

// mountCompareOpts checks the wanted options against the active mount's
// and remounts (or, in test mode, says it would) when one differs. stop
// is set when the state returns here.
func mountCompareOpts(ctx context.Context, c *states.Call, ret *states.Ret, cur *payload.Map, opts, hidden []string, fstype, realName, device string, mkmnt bool) (states.Ret, bool, error) {
	invisible := append([]string(nil), mountInvisibleOpts...)
	invisible = append(invisible, mountStrs(c.Args.Get("extra_mount_invisible_options"))...)
	for _, h := range hidden {
		if !containsString(invisible, h) {
			invisible = append(invisible, h)
		}
	}
	keys := append(append([]string(nil), mountInvisibleKeys...), mountStrs(c.Args.Get("extra_mount_invisible_keys"))...)
	ignoreFS := map[string][]string{"ramfs": {"size"}}
	if m, ok := c.Args.Get("extra_mount_ignore_fs_keys").(*payload.Map); ok {
		for _, it := range m.Items() {
			ignoreFS[payload.KeyString(it.Key)] = mountStrs(it.Value)
		}
	}
	translate := map[string]string{"tcp": "proto=tcp", "udp": "proto=udp"}
	if m, ok := c.Args.Get("extra_mount_translate_options").(*payload.Map); ok {
		for _, it := range m.Items() {
			translate[payload.KeyString(it.Key)] = pyfmt.Str(it.Value)
		}
	}
	activeOpts := mountStrs(cur.List("opts"))
	superopts := mountStrs(cur.List("superopts"))
	var trigger []string
	for _, o := range opts {
		if t, ok := translate[o]; ok {
			o = t
		}
		key := strings.Split(o, "=")[0]
		if containsString(keys, key) {
			o = key
		}
		if m := mountSizeRe.FindStringSubmatch(o); m != nil {
			o = "size=" + mountSizeK(m) + "k"
		}
		if fstype == "cifs" && key == "user" {
			o = "username=" + strings.Split(o, "=")[1]
		}
		if containsString(ignoreFS[fstype], strings.Split(o, "=")[0]) {
			o = strings.Split(o, "=")[0]
		}
		if parts := strings.Split(o, "="); (parts[0] == "uid" || parts[0] == "gid") && len(parts) > 1 {
			id := parts[1]
			if !regexp.MustCompile(`^[0-9]+$`).MatchString(id) {
				fun := "user.info"
				if parts[0] == "gid" {
					fun = "group.info"
				}
				if info, err := sbExec(ctx, c, fun, []any{id}, nil); err == nil {
					if m, ok := info.(*payload.Map); ok {
						if v, ok := m.Get(parts[0]); ok {
							id = pyfmt.Str(v)
						}
					}
				}
			}
			o = parts[0] + "=" + id
		}
		for i, so := range superopts {
			if m := mountSizeRe.FindStringSubmatch(so); m != nil {
				o = "size=" + mountSizeK(m) + "k"
				superopts = append(superopts[:i:i], superopts[i+1:]...)
				superopts = append(superopts, o)
				break
			}
		}
		if !containsString(activeOpts, o) && !containsString(superopts, o) && !containsString(invisible, o) &&
			!containsString(ignoreFS[fstype], o) && !containsString(keys, o) {
			trigger = append(trigger, o)
		}
	}
	if len(trigger) == 0 {
		return *ret, false, nil
	}
	sorted := append([]string(nil), trigger...)
	sort.Strings(sorted)
	list := strings.Join(sorted, ",")
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Remount would be forced because options (%s) changed", list)
		return *ret, true, nil
	}
	if fstype == "nfs" || fstype == "cvfs" || strings.HasPrefix(fstype, "fuse") {
		ret.Changes.Set("umount", fmt.Sprintf("Forced unmount and mount because options (%s) changed", list))
		res, err := sbExec(ctx, c, "mount.umount", []any{realName}, nil)
		if err != nil {
			return *ret, true, err
		}
		if res != true {
			ret.Result = states.False
			ret.Comment = fmt.Sprintf("Unable to unmount %s: %s.", realName, pyfmt.Str(res))
			return *ret, true, nil
		}
		res, err = sbExec(ctx, c, "mount.mount", []any{realName, device}, payload.NewMap("mkmnt", mkmnt, "fstype", fstype, "opts", mountAnyList(opts)))
		if err != nil {
			return *ret, true, err
		}
		ret.Result = mountResult(res)
		return *ret, false, nil
	}
	ret.Changes.Set("umount", fmt.Sprintf("Forced remount because options (%s) changed", list))
	res, err := sbExec(ctx, c, "mount.remount", []any{realName, device}, payload.NewMap("mkmnt", mkmnt, "fstype", fstype, "opts", mountAnyList(opts)))
	if err != nil {
		return *ret, true, err
	}
	ret.Result = mountResult(res)
	return *ret, false, nil
}

// mountResult is a mount/remount return as a state result (Salt puts
// the error text itself there, which counts as a failure).
func mountResult(v any) states.Result {
	if v == true {
		return states.True
	}
	return states.False
}

func mountOptList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return strings.Split(x, ",")
	}
	return mountStrs(v)
}

func mountAnyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func mountUnmounted(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	if name == "" {
		ret.Result = states.False
		ret.Comment = "Must provide name to mount.unmounted"
		return ret, nil
	}
	activeV, err := sbExec(ctx, c, "mount.active", []any{true}, nil)
	if err != nil {
		return ret, err
	}
	active, _ := activeV.(*payload.Map)
	device := c.Args.Get("device")
	if !active.Has(strings.ReplaceAll(name, " ", `\040`)) {
		ret.Comment = "Target was already unmounted"
	} else {
		if c.Test {
			ret.Result = states.None
			ret.Comment = fmt.Sprintf("Mount point %s is mounted but should not be", name)
			return ret, nil
		}
		args := []any{name}
		if payload.Truthy(device) {
			args = append(args, device)
		}
		out, err := sbExec(ctx, c, "mount.umount", args, payload.NewMap("user", c.Args.Get("user")))
		if err != nil {
			return ret, err
		}
		switch {
		case out == true:
			ret.Comment = "Target was successfully unmounted"
			ret.Changes.Set("umount", true)
		default:
			if s, ok := out.(string); ok {
				ret.Comment = s
				ret.Result = states.False
			} else {
				ret.Comment = "Execute set to False, Target was not unmounted"
			}
		}
		if _, err := sbExec(ctx, c, "mount.delete_mount_cache", []any{name}, nil); err != nil {
			return ret, err
		}
	}
	if !c.Args.Bool("persist") {
		return ret, nil
	}
	config := c.Args.Get("config")
	fstabV, err := sbExec(ctx, c, "mount.fstab", []any{config}, nil)
	if err != nil {
		return ret, err
	}
	fstab, _ := fstabV.(*payload.Map)
	entry := fstab.Map(name)
	if entry == nil {
		ret.Comment += ". fstab entry not found"
		return ret, nil
	}
	if payload.Truthy(device) && entry.Str("device") != pyfmt.Str(device) {
		ret.Comment += fmt.Sprintf(". fstab entry for device %s not found", pyfmt.Str(device))
		return ret, nil
	}
	if c.Test {
		ret.Result = states.None
		ret.Comment = fmt.Sprintf("Mount point %s is unmounted but needs to be purged from %s to be made persistent", name, pyfmt.Str(config))
		return ret, nil
	}
	out, err := sbExec(ctx, c, "mount.rm_fstab", []any{name, device, config}, nil)
	if err != nil {
		return ret, err
	}
	if out != true {
		ret.Result = states.False
		ret.Comment += ". Failed to persist purge"
	} else {
		ret.Comment += ". Removed target from fstab"
		ret.Changes.Set("persist", "purged")
	}
	return ret, nil
}

// mountModWatch is mount.mod_watch: a watched mount.mounted remounts its
// device (mount.remount); other functions say watch is not supported.
func mountModWatch(ctx context.Context, c *states.Call) (states.Ret, error) {
	name := sbName(c)
	kw := &payload.Map{}
	if c.Args.Kwargs != nil {
		kw = c.Args.Kwargs
	}
	sfun, ok := sbSfun(c, kw)
	if !ok {
		return states.Ret{}, errors.New("KeyError: 'sfun'")
	}
	ret := states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}
	if sfun != "mounted" {
		ret.Comment = fmt.Sprintf("Watch not supported in %s at this time", sfun)
		return ret, nil
	}
	args := []any{name}
	for _, k := range []string{"device", "fstype", "opts"} {
		if !c.Args.Given(k) && c.Args.Get(k) == nil {
			return states.Ret{}, fmt.Errorf("KeyError: '%s'", k)
		}
		args = append(args, c.Args.Get(k))
	}
	// name, device, mkmnt=False, fstype, opts
	args = []any{args[0], args[1], false, args[2], args[3]}
	out, err := sbExec(ctx, c, "mount.remount", args, payload.NewMap("user", c.Args.Get("user")))
	if err != nil {
		return states.Ret{}, err
	}
	if payload.Truthy(out) {
		ret.Comment = name + " remounted"
	} else {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("%s failed to remount: %s", name, pyfmt.Str(out))
	}
	return ret, nil
}

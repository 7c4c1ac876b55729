package builtin

// This file is the mounting part of Salt's mount module
// (salt/modules/mount.py) on Linux: active mounts from
// /proc/self/mountinfo (or /proc/self/mounts), mount, umount, remount and
// the mount cache in <cachedir>/mounts.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/internal/pyyaml"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/render"
	"github.com/gsalt/gsalt/wire/payload"
)

// mountMaxTable bounds the mount tables read.
const mountMaxTable = 16 << 20

func mountOpsFunctions() []modules.Function {
	return []modules.Function{
		{Name: "mount.active", Spec: modules.Spec{Params: []modules.Param{opt("extended", false)}},
			Doc: "List the active mounts.\n\nCLI Example:\n\n    salt '*' mount.active",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return mountActive(ctx, c, c.Args.Bool("extended"))
			}},
		{Name: "mount.get_mount_from_path", Spec: modules.Spec{Params: []modules.Param{req("path")}},
			Doc: "Return the mount providing a specified path.\n\n.. versionadded:: 3006.0\n\npath\n    The path for the function to evaluate.\n\nCLI Example:\n\n    salt '*' mount.get_mount_from_path /opt/some/nested/path",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return mountFromPath(pyfmt.Str(c.Args.Get("path"))), nil
			}},
		{Name: "mount.get_device_from_path", Spec: modules.Spec{Params: []modules.Param{req("path")}},
			Doc: "Return the underlying device for a specified path.\n\n.. versionadded:: 3006.0\n\npath\n    The path for the function to evaluate.\n\nCLI Example:\n\n    salt '*' mount.get_device_from_path /",
			Fn:  mountDeviceFromPath},
		{Name: "mount.is_fuse_exec", Spec: modules.Spec{Params: []modules.Param{req("cmd")}},
			Doc: "Returns true if the command passed is a fuse mountable application.\n\nCLI Example:\n\n    salt '*' mount.is_fuse_exec sshfs",
			Fn:  mountIsFuseExec},
		{Name: "mount.is_mounted", Spec: modules.Spec{Params: []modules.Param{req("name")}},
			Doc: "Provide information if the path is mounted\n\nCLI Example:\n\n    salt '*' mount.is_mounted /mnt/share",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				act, err := mountActive(ctx, c, false)
				if err != nil {
					return nil, err
				}
				return act.Has(pyfmt.Str(c.Args.Get("name"))), nil
			}},
		{Name: "mount.mount", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("device", false), opt("mkmnt", false), opt("fstype", ""),
			opt("opts", "defaults"), opt("user", nil), opt("util", "mount")}},
			Doc: "Mount a device\n\nCLI Example:\n\n    salt '*' mount.mount /mnt/foo /dev/sdz1 True",
			Fn:  mountMount},
		{Name: "mount.remount", Spec: modules.Spec{Params: []modules.Param{req("name"), req("device"), opt("mkmnt", false), opt("fstype", ""),
			opt("opts", "defaults"), opt("user", nil)}},
			Doc: "Attempt to remount a device, if the device is not already mounted, mount is called\n\nCLI Example:\n\n    salt '*' mount.remount /mnt/foo /dev/sdz1 True",
			Fn:  mountRemount},
		{Name: "mount.umount", Spec: modules.Spec{Params: []modules.Param{req("name"), opt("device", nil), opt("user", nil), opt("util", "mount")}},
			Doc: "Attempt to unmount a device by specifying the directory it is mounted on\n\nCLI Example:\n\n    salt '*' mount.umount /mnt/foo",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return mountUmount(ctx, c, pyfmt.Str(c.Args.Get("name")), c.Args.Get("device"))
			}},
		{Name: "mount.read_mount_cache", Spec: modules.Spec{Params: []modules.Param{req("name")}},
			Doc: "Provide information if the path is mounted\n\nCLI Example:\n\n    salt '*' mount.read_mount_cache /mnt/share",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				cache := mountReadCache(ctx, c)
				if m := cache.Map("mounts"); m != nil {
					if v, ok := m.Get(pyfmt.Str(c.Args.Get("name"))); ok {
						return v, nil
					}
				}
				return &payload.Map{}, nil
			}},
		{Name: "mount.write_mount_cache", Spec: modules.Spec{Params: []modules.Param{req("real_name"), req("device"), req("mkmnt"), req("fstype"), req("mount_opts")}},
			Doc: "Write the mount cache for a given device.\n\nCLI Example:\n\n    salt '*' mount.write_mount_cache /mnt/share /dev/sda1 False ext4 defaults,nosuid",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return true, mountWriteCache(ctx, c, pyfmt.Str(c.Args.Get("real_name")), payload.NewMap("device", c.Args.Get("device"),
					"fstype", c.Args.Get("fstype"), "mkmnt", c.Args.Get("mkmnt"), "opts", c.Args.Get("mount_opts")))
			}},
		{Name: "mount.delete_mount_cache", Spec: modules.Spec{Params: []modules.Param{req("real_name")}},
			Doc: "Provide information if the path is mounted\n\nCLI Example:\n\n    salt '*' mount.delete_mount_cache /mnt/share",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return true, mountWriteCache(ctx, c, pyfmt.Str(c.Args.Get("real_name")), nil)
			}},
	}
}

// mountList is _list_mounts: mount point → device from `mount -l`.
func mountList(ctx context.Context) map[string]string {
	out := map[string]string{}
	res, err := pkgRun(ctx, []string{"mount", "-l"}, pkgRunOpts{})
	if err != nil {
		return out
	}
	for _, line := range strings.Split(res.stdout, "\n") {
		if comps := strings.Fields(line); len(comps) >= 3 {
			out[comps[2]] = comps[0]
		}
	}
	return out
}

// mountResolveIDs is _resolve_user_group_names: uid=/gid= names become
// numbers, and \040 becomes "\ ".
func mountResolveIDs(ctx context.Context, c *modules.Call, opts []string) []any {
	out := make([]any, len(opts))
	for i, o := range opts {
		k, v, found := strings.Cut(o, "=")
		if found && (k == "uid" || k == "gid") && !mountDigits.MatchString(v) {
			fun := "user.info"
			if k == "gid" {
				fun = "group.info"
			}
			if info, err := mountCall(ctx, c, fun, v); err == nil {
				if m, ok := info.(*payload.Map); ok {
					if id, ok := m.Get(k); ok {
						o = k + "=" + pyfmt.Str(id)
					}
				}
			}
		}
		out[i] = strings.ReplaceAll(o, `\040`, `\ `)
	}
	return out
}

var mountDigits = regexp.MustCompile(`^[0-9]+$`)

// mountCall calls another execution function with positional args.
func mountCall(ctx context.Context, c *modules.Call, fun string, args ...any) (any, error) {
	if c.Env == nil || c.Env.Registry == nil {
		return nil, fmt.Errorf("%w: '%s' is not available", modules.ErrExecution, fun)
	}
	fn, ok := c.Env.Registry.Lookup(fun)
	if !ok {
		return nil, fmt.Errorf("%w: '%s' is not available", modules.ErrExecution, fun)
	}
	kw := &payload.Map{}
	for i, a := range args {
		if i < len(fn.Spec.Params) {
			kw.Set(fn.Spec.Params[i].Name, a)
		}
	}
	bound, err := modules.BindKeywords(fn.Spec, kw)
	if err != nil {
		return nil, err
	}
	return fn.Fn(ctx, &modules.Call{Fun: fun, Env: c.Env, Args: bound})
}

// mountActive is active(extended) on Linux.
func mountActive(ctx context.Context, c *modules.Call, extended bool) (*payload.Map, error) {
	list := mountList(ctx)
	alt := func(p string) any {
		if d, ok := list[p]; ok {
			return d
		}
		return nil
	}
	ret := &payload.Map{}
	if extended {
		if b, err := readBounded("/proc/self/mountinfo", mountMaxTable); err == nil {
			var blkid *payload.Map
			if v, err := mountCall(ctx, c, "disk.blkid"); err == nil {
				blkid, _ = v.(*payload.Map)
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				comps := strings.Fields(sc.Text())
				sep := -1
				for i, f := range comps {
					if f == "-" {
						sep = i
						break
					}
				}
				if len(comps) < 6 || sep < 0 || sep+3 >= len(comps) {
					continue
				}
				major, minor, _ := strings.Cut(comps[2], ":")
				dev := comps[sep+2]
				var uuid, label any
				if dev != "" && blkid != nil {
					if info := blkid.Map(dev); info != nil {
						if u, ok := info.Get("UUID"); ok && u != nil {
							uuid = strings.ToLower(pyfmt.Str(u))
						}
						label, _ = info.Get("LABEL")
					}
				}
				ret.Set(comps[4], payload.NewMap("mountid", comps[0], "parentid", comps[1], "major", major, "minor", minor,
					"root", comps[3], "opts", mountResolveIDs(ctx, c, strings.Split(comps[5], ",")), "fstype", comps[sep+1],
					"device", strings.ReplaceAll(dev, `\040`, `\ `), "alt_device", alt(comps[4]),
					"superopts", mountResolveIDs(ctx, c, strings.Split(comps[sep+3], ",")), "device_uuid", uuid, "device_label", label))
			}
			return ret, nil
		}
	}
	b, err := readBounded("/proc/self/mounts", mountMaxTable)
	if err != nil {
		return nil, fmt.Errorf("%w: File not readable /proc/self/mounts", modules.ErrExecution)
	}
	for _, line := range strings.Split(string(b), "\n") {
		comps := strings.Fields(line)
		if len(comps) < 4 {
			continue
		}
		ret.Set(comps[1], payload.NewMap("device", comps[0], "alt_device", alt(comps[1]), "fstype", comps[2],
			"opts", mountResolveIDs(ctx, c, strings.Split(comps[3], ","))))
	}
	return ret, nil
}

// mountOptsList is opts as a list: a string split on commas.
func mountOptsList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return strings.Split(x, ",")
	case []any:
		out := make([]string, len(x))
		for i, o := range x {
			out[i] = pyfmt.Str(o)
		}
		return out
	}
	return strings.Split(pyfmt.Str(v), ",")
}

// mountRun runs mount/umount and returns True or the command's stderr.
func mountRun(ctx context.Context, argv []string) (any, error) {
	res, err := pkgRun(ctx, argv, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	if res.retcode != 0 {
		return res.stderr, nil
	}
	return true, nil
}

// mountArgs is "-o OPTS -t FSTYPE" as argv items.
func mountArgs(opts []string, optsGiven bool, fstype string) []string {
	var args []string
	if optsGiven && len(opts) > 0 {
		args = append(args, "-o", strings.Join(opts, ","))
	}
	if fstype != "" {
		args = append(args, "-t", fstype)
	}
	return args
}

func mountMount(ctx context.Context, c *modules.Call) (any, error) {
	if u := c.Args.Get("util"); u != "mount" {
		return false, nil
	}
	name := pyfmt.Str(c.Args.Get("name"))
	return mountDo(ctx, c, name, c.Args.Get("device"), c.Args.Bool("mkmnt"), pyfmt.Str(c.Args.Get("fstype")), c.Args.Get("opts"))
}

func mountDo(ctx context.Context, c *modules.Call, name string, device any, mkmnt bool, fstype string, optsArg any) (any, error) {
	opts := mountOptsList(optsArg)
	if _, err := os.Stat(name); err != nil && mkmnt {
		if err := os.MkdirAll(name, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
		}
	}
	argv := []string{"mount"}
	if payload.Truthy(device) {
		argv = append(argv, mountArgs(opts, optsArg != nil, fstype)...)
		argv = append(argv, pyfmt.Str(device), name)
	} else {
		argv = append(argv, name)
	}
	return mountRun(ctx, argv)
}

func mountRemount(ctx context.Context, c *modules.Call) (any, error) {
	name := pyfmt.Str(c.Args.Get("name"))
	device := c.Args.Get("device")
	fstype := pyfmt.Str(c.Args.Get("fstype"))
	opts := mountOptsList(c.Args.Get("opts"))
	act, err := mountActive(ctx, c, false)
	if err != nil {
		return nil, err
	}
	if !act.Has(name) {
		return mountDo(ctx, c, name, device, c.Args.Bool("mkmnt"), fstype, opts)
	}
	if !containsStr(opts, "remount") {
		opts = append(opts, "remount")
	}
	argv := append([]string{"mount"}, mountArgs(opts, true, fstype)...)
	return mountRun(ctx, append(argv, pyfmt.Str(device), name))
}

func mountUmount(ctx context.Context, c *modules.Call, name string, device any) (any, error) {
	act, err := mountActive(ctx, c, false)
	if err != nil {
		return nil, err
	}
	if !act.Has(name) {
		return fmt.Sprintf("%s does not have anything mounted", name), nil
	}
	target := name
	if payload.Truthy(device) {
		target = pyfmt.Str(device)
	}
	return mountRun(ctx, []string{"umount", target})
}

// mountCachePath is <cachedir>/mounts.
func mountCachePath(c *modules.Call) string {
	dir := optStr(c, "cachedir")
	if dir == "" {
		dir = "/var/cache/salt/minion"
	}
	return filepath.Join(dir, "mounts")
}

// mountReadCache reads the YAML mount cache ({} when missing).
func mountReadCache(ctx context.Context, c *modules.Call) *payload.Map {
	b, err := os.ReadFile(mountCachePath(c))
	if err != nil {
		return &payload.Map{}
	}
	v, err := render.YAML{}.Render(ctx, string(b), nil)
	if m, ok := v.(*payload.Map); err == nil && ok {
		return m
	}
	return &payload.Map{}
}

// mountWriteCache sets (entry != nil) or deletes the cache entry of name.
func mountWriteCache(ctx context.Context, c *modules.Call, name string, entry *payload.Map) error {
	cache := mountReadCache(ctx, c)
	mounts := cache.Map("mounts")
	if mounts == nil {
		if entry == nil {
			return nil
		}
		mounts = &payload.Map{}
		cache.Set("mounts", mounts)
	}
	if entry == nil {
		if _, ok := mounts.Delete(name); !ok {
			return nil
		}
	} else {
		mounts.Set(name, entry)
	}
	text, err := pyyaml.Dump(cache, pyyaml.Options{FlowLeaves: true})
	if err == nil {
		err = os.WriteFile(mountCachePath(c), []byte(text), 0o644)
	}
	if err != nil {
		return fmt.Errorf("%w: Unable to write mount cache.", modules.ErrExecution)
	}
	return nil
}

// mountFromPath is get_mount_from_path: the nearest folder at or above
// path (made absolute, symlinks resolved) that is a mount point, else "/".
func mountFromPath(path string) string {
	if !filepath.IsAbs(path) {
		if wd, err := os.Getwd(); err == nil {
			path = filepath.Join(wd, path)
		}
	}
	path = fileRealpath(filepath.Clean(path))
	for path != "/" {
		if pyIsMount(path) {
			return path
		}
		path = filepath.Dir(path)
	}
	return path
}

// pyIsMount is os.path.ismount: path exists, is not a symlink, and its
// device differs from its parent's, or it is its own parent.
func pyIsMount(path string) bool {
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSymlink != 0 {
		return false
	}
	pst, err := os.Lstat(fileRealpath(filepath.Join(path, "..")))
	if err != nil {
		return false
	}
	a, ok1 := st.Sys().(*syscall.Stat_t)
	b, ok2 := pst.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 {
		return false
	}
	return a.Dev != b.Dev || a.Ino == b.Ino
}

// mountDeviceFromPath is get_device_from_path: the device of the active
// mount providing path, None when the active mounts do not list it.
func mountDeviceFromPath(ctx context.Context, c *modules.Call) (any, error) {
	mnt := mountFromPath(pyfmt.Str(c.Args.Get("path")))
	act, err := mountActive(ctx, c, false)
	if err != nil {
		return nil, err
	}
	m, _ := act.Get(mnt)
	if mm, ok := m.(*payload.Map); ok {
		d, _ := mm.Get("device")
		return d, nil
	}
	return nil, nil
}

// mountIsFuseExec is is_fuse_exec: whether the command found on PATH is
// linked against libfuse (ldd's output names it); False when the command
// is not found.
func mountIsFuseExec(ctx context.Context, c *modules.Call) (any, error) {
	p, err := which(pyfmt.Str(c.Args.Get("cmd")))
	if err != nil {
		return false, nil
	}
	if _, err := which("ldd"); err != nil {
		return nil, fmt.Errorf("%w: ldd", modules.ErrCommandNotFound)
	}
	out, err := callFunction(ctx, c, "cmd.run", []any{"ldd " + p}, payload.NewMap("python_shell", false))
	if err != nil {
		return nil, err
	}
	return strings.Contains(pyfmt.Str(out), "libfuse"), nil
}

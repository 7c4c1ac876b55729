package builtin

import (
	"context"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"os"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// diskFunctions is the reading part of Salt's disk module
// (salt/modules/disk.py) on Linux: df, blkid and lsblk output.
func diskFunctions() []modules.Function {
	return []modules.Function{
		{Name: "disk.usage", Spec: modules.Spec{Params: []modules.Param{opt("args", nil)}},
			Doc: "Return usage information for volumes mounted on this minion\n\nargs\n    Sequence of flags to pass to the ``df`` command.\n\nCLI Example:\n\n    salt '*' disk.usage",
			Fn:  diskUsage},
		{Name: "disk.inodeusage", Spec: modules.Spec{Params: []modules.Param{opt("args", nil)}},
			Doc: "Return inode usage information for volumes mounted on this minion\n\nCLI Example:\n\n    salt '*' disk.inodeusage",
			Fn:  diskInodeUsage},
		{Name: "disk.percent", Spec: modules.Spec{Params: []modules.Param{opt("args", nil)}},
			Doc: "Return partition information for volumes mounted on this minion\n\nCLI Example:\n\n    salt '*' disk.percent /var",
			Fn:  diskPercent},
		{Name: "disk.blkid", Spec: modules.Spec{Params: []modules.Param{opt("device", nil), opt("token", nil)}},
			Doc: "Return block device attributes: UUID, LABEL, etc. This function only works\non systems where blkid is available.\n\ndevice\n    Device name from the system\n\ntoken\n    Any valid token used for the search\n\nCLI Example:\n\n    salt '*' disk.blkid\n    salt '*' disk.blkid /dev/sda\n    salt '*' disk.blkid token='UUID=6a38ee5-7235-44e7-8b22-816a403bad5d'",
			Fn:  diskBlkid},
		{Name: "disk.fstype", Spec: modules.Spec{Params: []modules.Param{req("device")}},
			Doc: "Return the filesystem name of the specified device\n\ndevice\n    The name of the device\n\nCLI Example:\n\n    salt '*' disk.fstype /dev/sdX1",
			Fn:  diskFstype},
		{Name: "disk.get_fstype_from_path", Spec: modules.Spec{Params: []modules.Param{req("path")}},
			Doc: "Return the filesystem type of the underlying device for a specified path.\n\n.. versionadded:: 3006.0\n\npath\n    The path for the function to evaluate.\n\nCLI Example:\n\n    salt '*' disk.get_fstype_from_path /root",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				dev, err := callFunction(ctx, c, "mount.get_device_from_path", []any{c.Args.Get("path")}, nil)
				if err != nil {
					return nil, err
				}
				return callFunction(ctx, c, "disk.fstype", []any{dev}, nil)
			}},
	}
}

// diskFlags is _clean_flags.
func diskFlags(args any, caller string) (string, error) {
	if args == nil {
		return "", nil
	}
	var items []string
	switch x := args.(type) {
	case string:
		for _, r := range x {
			items = append(items, string(r))
		}
	default:
		l, _ := pyfmt.List(x)
		for _, e := range l {
			items = append(items, pyfmt.Str(e))
		}
	}
	var flags string
	for _, f := range items {
		if len(f) != 1 || !strings.Contains("aBhHiklPtTxv", f) {
			return "", fmt.Errorf("%w: Invalid flag passed to %s", modules.ErrExecution, caller)
		}
		flags += f
	}
	return flags, nil
}

// diskDF runs df with the flags, stderr merged as cmd.run does.
func diskDF(ctx context.Context, base []string, flags string) ([]string, error) {
	argv := append([]string{}, base...)
	if flags != "" {
		argv = append(argv, "-"+flags)
	}
	res, err := pkgRun(ctx, argv, pkgRunOpts{combined: true})
	if err != nil {
		return nil, err
	}
	return py.SplitLines(res.stdout, false), nil
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// diskJoinName merges the fields of a file system name with spaces.
func diskJoinName(comps []string) []string {
	for len(comps) >= 2 && !isDigits(comps[1]) {
		comps[0] = comps[0] + " " + comps[1]
		comps = append(comps[:1], comps[2:]...)
	}
	return comps
}

func diskUsage(ctx context.Context, c *modules.Call) (any, error) {
	flags, err := diskFlags(c.Args.Get("args"), "disk.usage")
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat("/etc/mtab"); err != nil || !st.Mode().IsRegular() {
		c.Log().Error("df cannot run without /etc/mtab")
		return &payload.Map{}, nil
	}
	lines, err := diskDF(ctx, []string{"df", "-P"}, flags)
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	old := ""
	for _, line := range lines {
		if line == "" || strings.HasPrefix(line, "Filesystem") {
			continue
		}
		if old != "" {
			line = old + " " + line
		}
		comps := strings.Fields(line)
		if len(comps) == 1 {
			old = line
			continue
		}
		old = ""
		comps = diskJoinName(comps)
		if len(comps) < 2 {
			continue
		}
		if len(comps) < 6 {
			c.Log().Error("Problem parsing disk usage information")
			ret = &payload.Map{}
			continue
		}
		ret.Set(comps[5], payload.NewMap("filesystem", comps[0], "1K-blocks", comps[1], "used", comps[2], "available", comps[3], "capacity", comps[4]))
	}
	return ret, nil
}

func diskInodeUsage(ctx context.Context, c *modules.Call) (any, error) {
	flags, err := diskFlags(c.Args.Get("args"), "disk.inodeusage")
	if err != nil {
		return nil, err
	}
	lines, err := diskDF(ctx, []string{"df", "-iP"}, flags)
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	for _, line := range lines {
		if strings.HasPrefix(line, "Filesystem") {
			continue
		}
		comps := strings.Fields(line)
		if len(comps) == 0 {
			continue
		}
		if len(comps) < 6 {
			c.Log().Error("Problem parsing inode usage information")
			ret = &payload.Map{}
			continue
		}
		ret.Set(comps[5], payload.NewMap("inodes", comps[1], "used", comps[2], "free", comps[3], "use", comps[4], "filesystem", comps[0]))
	}
	return ret, nil
}

func diskPercent(ctx context.Context, c *modules.Call) (any, error) {
	lines, err := diskDF(ctx, []string{"df", "-P"}, "")
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	for _, line := range lines {
		if line == "" || strings.HasPrefix(line, "Filesystem") {
			continue
		}
		comps := diskJoinName(strings.Fields(line))
		if len(comps) < 2 {
			continue
		}
		if len(comps) < 6 {
			c.Log().Error("Problem parsing disk usage information")
			ret = &payload.Map{}
			continue
		}
		ret.Set(comps[5], comps[4])
	}
	if a := c.Args.Get("args"); payload.Truthy(a) {
		v, ok := ret.GetKey(a)
		if !ok {
			c.Log().Error(fmt.Sprintf("Problem parsing disk usage information: Partition '%s' does not exist!", pyfmt.Str(a)))
			return &payload.Map{}, nil
		}
		return v, nil
	}
	return ret, nil
}

var diskQuotes = regexp.MustCompile(`"+`)

func diskBlkid(ctx context.Context, c *modules.Call) (any, error) {
	if _, err := which("blkid"); err != nil {
		return nil, fmt.Errorf("%w: blkid", modules.ErrCommandNotFound)
	}
	argv := []string{"blkid"}
	if d := c.Args.Get("device"); payload.Truthy(d) {
		argv = append(argv, pyfmt.Str(d))
	} else if tk := c.Args.Get("token"); payload.Truthy(tk) {
		argv = append(argv, "-t", pyfmt.Str(tk))
	}
	res, err := pkgRun(ctx, argv, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	if res.retcode > 0 {
		return ret, nil
	}
	for _, line := range py.SplitLines(res.stdout, false) {
		comps := strings.Fields(line)
		if len(comps) == 0 {
			continue
		}
		dev := comps[0][:len(comps[0])-1]
		_, rest, _ := strings.Cut(line, " ")
		attrs := diskQuotes.Split(rest, -1)
		info := &payload.Map{}
		for i := 0; i+1 < len(attrs); i += 2 {
			k := strings.Trim(strings.Trim(attrs[i], "="), " ")
			info.Set(k, strings.Trim(attrs[i+1], `"`))
		}
		ret.Set(dev, info)
	}
	return ret, nil
}

func diskFstype(ctx context.Context, c *modules.Call) (any, error) {
	dev := pyfmt.Str(c.Args.Get("device"))
	if _, err := which("lsblk"); err == nil {
		res, err := pkgRun(ctx, strings.Fields("lsblk -o fstype "+dev), pkgRunOpts{combined: true})
		if err == nil {
			if l := py.SplitLines(res.stdout, false); len(l) > 1 && strings.TrimSpace(l[1]) != "" {
				return strings.TrimSpace(l[1]), nil
			}
		}
	}
	if _, err := which("df"); err == nil {
		res, err := pkgRun(ctx, strings.Fields("df -T "+dev), pkgRunOpts{combined: true})
		if err == nil {
			if l := py.SplitLines(res.stdout, false); len(l) > 1 && l[1] != "" {
				return l[1], nil
			}
		}
	}
	return "", nil
}

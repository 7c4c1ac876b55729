package builtin

import (
	"context"
	"github.com/gsalt/gsalt/internal/py"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// kmodFunctions is the reading part of Salt's kmod module.
func kmodFunctions() []modules.Function {
	return []modules.Function{
		{Name: "kmod.available", Doc: "Return a list of all available kernel modules\n\nCLI Example:\n\n    salt '*' kmod.available",
			Fn: func(_ context.Context, c *modules.Call) (any, error) { return grainsStrList(kmodAvailable(c)), nil }},
		{Name: "kmod.check_available", Spec: modules.Spec{Params: []modules.Param{req("mod")}},
			Doc: "Check to see if the specified kernel module is available\n\nCLI Example:\n\n    salt '*' kmod.check_available kvm",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				return containsStr(kmodAvailable(c), c.Args.Str("mod")), nil
			}},
		{Name: "kmod.lsmod", Doc: "Return a dict containing information about currently loaded modules\n\nCLI Example:\n\n    salt '*' kmod.lsmod",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return kmodLsmod(ctx) }},
		{Name: "kmod.is_loaded", Spec: modules.Spec{Params: []modules.Param{req("mod")}},
			Doc: "Check to see if the specified kernel module is loaded\n\nCLI Example:\n\n    salt '*' kmod.is_loaded kvm",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				mods, err := kmodLsmod(ctx)
				if err != nil {
					return nil, err
				}
				for _, m := range mods {
					if m.(*payload.Map).Str("module") == c.Args.Str("mod") {
						return true, nil
					}
				}
				return false, nil
			}},
	}
}

func kmodRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Release))
	for _, ch := range u.Release {
		if ch == 0 {
			break
		}
		b = append(b, byte(ch))
	}
	return string(b)
}

// kmodAvailable is kmod.available: modules.builtin entries and the .ko
// files below /lib/modules/<release>, sorted.
func kmodAvailable(c *modules.Call) []string {
	dir := filepath.Join("/lib/modules", kmodRelease())
	var ret []string
	if b, err := os.ReadFile(filepath.Join(dir, "modules.builtin")); err == nil {
		for _, line := range py.FileLines(string(b)) {
			base := line[strings.LastIndexByte(line, '/')+1:]
			if r := []rune(base); len(r) >= 4 {
				ret = append(ret, string(r[:len(r)-4]))
			} else {
				ret = append(ret, "")
			}
		}
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if i := strings.Index(d.Name(), ".ko"); i >= 0 {
			ret = append(ret, strings.ReplaceAll(d.Name()[:i], "-", "_"))
		}
		return nil
	})
	sort.Strings(ret)
	return ret
}

func kmodLsmod(ctx context.Context) ([]any, error) {
	bin, err := which("lsmod")
	if err != nil {
		return nil, err
	}
	res, err := pkgRun(ctx, []string{bin}, pkgRunOpts{combined: true})
	if err != nil {
		return nil, err
	}
	ret := []any{}
	for _, line := range py.SplitLines(res.stdout, false) {
		comps := strings.Fields(line)
		if len(comps) <= 2 || comps[0] == "Module" {
			continue
		}
		deps := []any{}
		if len(comps) > 3 {
			for _, d := range strings.Split(comps[3], ",") {
				deps = append(deps, d)
			}
		}
		ret = append(ret, payload.NewMap("size", comps[1], "module", comps[0], "depcount", comps[2], "deps", deps))
	}
	return ret, nil
}

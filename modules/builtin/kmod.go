package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"

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
		{Name: "kmod.mod_list", Spec: modules.Spec{Params: []modules.Param{opt("only_persist", false)}},
			Doc: "Return a list of the loaded module names (only_persist: the ones in the modules file)\n\nCLI Example:\n\n    salt '*' kmod.mod_list",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				mods, err := kmodModList(ctx, c, c.Args.Bool("only_persist"))
				if err != nil {
					return nil, err
				}
				return grainsStrList(mods), nil
			}},
		{Name: "kmod.load", Spec: modules.Spec{Params: []modules.Param{req("mod"), opt("persist", false)}},
			Doc: "Load the specified kernel module (persist: also add it to the modules file)\n\nCLI Example:\n\n    salt '*' kmod.load kvm",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return kmodChange(ctx, c, true) }},
		{Name: "kmod.remove", Spec: modules.Spec{Params: []modules.Param{req("mod"), opt("persist", false), opt("comment", true)}},
			Doc: "Remove the specified kernel module (persist: also from the modules file, commented out when comment is set)\n\nCLI Example:\n\n    salt '*' kmod.remove kvm",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return kmodChange(ctx, c, false) }},
	}
}

// kmodConf is the modules file: Salt's own file under modules-load.d on
// systemd systems, else /etc/modules.
func kmodConf(c *modules.Call) string {
	if grainsData(c).Has("systemd") {
		return "/etc/modules-load.d/salt_managed.conf"
	}
	return "/etc/modules"
}

// kmodModList is mod_list: the loaded modules or the persistent ones.
func kmodModList(ctx context.Context, c *modules.Call, persist bool) ([]string, error) {
	set := map[string]bool{}
	if persist {
		if b, err := os.ReadFile(kmodConf(c)); err == nil {
			for _, line := range py.FileLines(string(b)) {
				line = strings.TrimSpace(line)
				if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(line, "#") {
					set[f[0]] = true
				}
			}
		}
	} else {
		mods, err := kmodLsmod(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range mods {
			set[m.(*payload.Map).Str("module")] = true
		}
	}
	out := make([]string, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return out, nil
}

// kmodChange is load (modprobe) or remove (rmmod): the sorted modules
// that appeared or went, plus the persisted one, or an error text.
func kmodChange(ctx context.Context, c *modules.Call, load bool) (any, error) {
	mod := pyfmt.Str(c.Args.Get("mod"))
	tool, verb := "rmmod", "removing"
	if load {
		tool, verb = "modprobe", "loading"
	}
	bin, err := which(tool)
	if err != nil {
		return nil, err
	}
	before, err := kmodLsmod(ctx)
	if err != nil {
		return nil, err
	}
	res, err := pkgRun(ctx, append([]string{bin}, strings.Fields(mod)...), pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	if res.retcode != 0 {
		return fmt.Sprintf("Error %s module %s: %s", verb, mod, res.stderr), nil
	}
	after, err := kmodLsmod(ctx)
	if err != nil {
		return nil, err
	}
	names := func(l []any) map[string]bool {
		m := map[string]bool{}
		for _, e := range l {
			m[e.(*payload.Map).Str("module")] = true
		}
		return m
	}
	pre, post := names(before), names(after)
	changed := map[string]bool{}
	if load {
		for m := range post {
			if !pre[m] {
				changed[m] = true
			}
		}
	} else {
		for m := range pre {
			if !post[m] {
				changed[m] = true
			}
		}
	}
	if c.Args.Bool("persist") {
		name, err := kmodPersist(ctx, c, mod, load, c.Args.Bool("comment"))
		if err != nil {
			return nil, err
		}
		if name != "" {
			changed[name] = true
		}
	}
	out := make([]string, 0, len(changed))
	for m := range changed {
		out = append(out, m)
	}
	sort.Strings(out)
	return grainsStrList(out), nil
}

// kmodPersist adds mod to the modules file (uncommenting it when it is
// there commented out) or takes it out (commenting it when comment is
// set). It returns the module's name when the file changed.
func kmodPersist(ctx context.Context, c *modules.Call, mod string, add, comment bool) (string, error) {
	conf := kmodConf(c)
	f := strings.Fields(mod)
	if len(f) == 0 {
		return "", nil
	}
	name := f[0]
	persisted, err := kmodModList(ctx, c, true)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(conf)
	if err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	text := string(b)
	esc := regexp.QuoteMeta(mod)
	if add {
		if containsStr(persisted, name) || !containsStr(kmodAvailable(c), name) {
			if err == nil {
				return "", nil
			}
			return "", os.WriteFile(conf, nil, 0o644)
		}
		if re := regexp.MustCompile(`(?m)^#[\t ]*` + esc + `[\t ]*$`); re.MatchString(text) {
			text = regexp.MustCompile(`(?m)^#[\t ]*(`+esc+`)`).ReplaceAllString(text, "$1")
		} else {
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += mod + "\n"
		}
	} else {
		if !containsStr(persisted, name) {
			return "", nil
		}
		re := regexp.MustCompile(`(?m)^[\t ]*` + esc + `[\t ]?.*$`)
		if comment {
			text = re.ReplaceAllStringFunc(text, func(l string) string { return "#" + l })
		} else {
			text = regexp.MustCompile(`(?m)^[\t ]*`+esc+`[\t ]?`).ReplaceAllString(text, "")
		}
	}
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("%w: %w", modules.ErrExecution, err)
	}
	return name, nil
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

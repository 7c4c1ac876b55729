package builtin

import (
	"context"
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// maxSysctlConf bounds a sysctl configuration file read into memory.
const maxSysctlConf = 16 << 20

// sysctlFunctions is Salt's linux_sysctl module: the sysctl binary for live
// values, sysctl.conf (or sysctl.d/99-salt.conf) for persistent ones.
func sysctlFunctions() []modules.Function {
	return []modules.Function{
		{Name: "sysctl.default_config", Doc: "Linux hosts using systemd 207 or later ignore ``/etc/sysctl.conf`` and only\nload from ``/etc/sysctl.d/*.conf``. This function will do the proper checks\nand return a default config file which will be valid for the Minion. Hosts\nrunning systemd >= 207 will use ``/etc/sysctl.d/99-salt.conf``.\n\nCLI Example:\n\n    salt -G 'kernel:Linux' sysctl.default_config",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) { return sysctlDefaultConfig(ctx, c), nil }},
		{Name: "sysctl.show", Spec: modules.Spec{Params: []modules.Param{opt("config_file", false)}},
			Doc: "Return a list of sysctl parameters for this minion\n\nconfig: Pull the data from the system configuration file\n    instead of the live data.\n\nCLI Example:\n\n    salt '*' sysctl.show",
			Fn:  sysctlShow},
		{Name: "sysctl.get", Spec: modules.Spec{Params: []modules.Param{req("name")}},
			Doc: "Return a single sysctl parameter for this minion\n\nCLI Example:\n\n    salt '*' sysctl.get net.ipv4.ip_forward",
			Fn:  func(ctx context.Context, c *modules.Call) (any, error) { return sysctlGet(ctx, c.Args.Str("name")) }},
		{Name: "sysctl.assign", Spec: modules.Spec{Params: []modules.Param{req("name"), req("value")}},
			Doc: "Assign a single sysctl parameter for this minion\n\nCLI Example:\n\n    salt '*' sysctl.assign net.ipv4.ip_forward 1",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return sysctlAssign(ctx, c.Args.Str("name"), pyfmt.Str(c.Args.Get("value")))
			}},
		{Name: "sysctl.persist", Spec: modules.Spec{Params: []modules.Param{req("name"), req("value"), opt("config", nil)}},
			Doc: "Assign and persist a simple sysctl parameter for this minion. If ``config``\nis not specified, a sensible default will be chosen using\nsysctl.default_config.\n\nCLI Example:\n\n    salt '*' sysctl.persist net.ipv4.ip_forward 1",
			Fn:  sysctlPersist},
	}
}

func sysctlDefaultConfig(ctx context.Context, c *modules.Call) string {
	if systemdBooted(c.Env) && systemdVersion(ctx) >= 207 {
		return "/etc/sysctl.d/99-salt.conf"
	}
	return "/etc/sysctl.conf"
}

// sysctlWhich is _which("sysctl").
func sysctlWhich() (string, error) {
	p, err := exec.LookPath("sysctl")
	if err != nil {
		return "", fmt.Errorf("%w: Command 'sysctl' cannot be found", modules.ErrExecution)
	}
	return p, nil
}

func sysctlShow(ctx context.Context, c *modules.Call) (any, error) {
	ret := &payload.Map{}
	if cf := c.Args.Get("config_file"); payload.Truthy(cf) {
		p := pyfmt.Str(cf)
		if _, err := os.Stat(p); err != nil {
			return []any{}, nil
		}
		b, err := readBounded(p, maxSysctlConf)
		if err != nil {
			c.Log().Error("Could not open sysctl file")
			return nil, nil
		}
		for _, line := range py.FileLines(string(b)) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") || !strings.Contains(line, "=") {
				continue
			}
			k, v, _ := strings.Cut(line, "=")
			ret.Set(strings.TrimRight(k, " \t\n\r\v\f"), strings.TrimLeft(v, " \t\n\r\v\f"))
		}
		return ret, nil
	}
	bin, err := sysctlWhich()
	if err != nil {
		return nil, err
	}
	res, err := pkgRun(ctx, []string{bin, "-a"}, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	for _, line := range py.SplitLines(res.stdout, false) {
		if k, v, ok := strings.Cut(line, " = "); ok {
			ret.Set(k, v)
		}
	}
	return ret, nil
}

// sysctlGet is cmd.run "sysctl -n name" (stderr merged, as cmd.run does).
func sysctlGet(ctx context.Context, name string) (string, error) {
	bin, err := sysctlWhich()
	if err != nil {
		return "", err
	}
	res, err := pkgRun(ctx, []string{bin, "-n", name}, pkgRunOpts{combined: true})
	if err != nil {
		return "", err
	}
	return res.stdout, nil
}

func sysctlAssign(ctx context.Context, name, value string) (*payload.Map, error) {
	tran := strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
	if _, err := os.Stat("/proc/sys/" + tran); err != nil {
		return nil, fmt.Errorf("%w: sysctl %s does not exist", modules.ErrExecution, name)
	}
	bin, err := sysctlWhich()
	if err != nil {
		return nil, err
	}
	res, err := pkgRun(ctx, []string{bin, "-w", name + "=" + value}, pkgRunOpts{})
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\s+=\s+` + regexp.QuoteMeta(value) + `$`)
	first := res.stdout
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		// Python's re.match with "$" also matches before a final newline
		// only; a longer output does not match.
		if i != len(first)-1 {
			first = "\x00"
		}
	}
	if !re.MatchString(first) || strings.Contains(res.stderr, "Invalid argument") {
		msg := res.stdout
		if res.retcode != 0 && res.stderr != "" {
			msg = res.stderr
		}
		return nil, fmt.Errorf("%w: sysctl -w failed: %s", modules.ErrExecution, msg)
	}
	k, v, _ := strings.Cut(res.stdout, " = ")
	return payload.NewMap(k, v), nil
}

var sysctlSpaceRe = regexp.MustCompile(`\s+`)

// sysctlSanitize replaces runs of whitespace by one tab.
func sysctlSanitize(v string) string { return sysctlSpaceRe.ReplaceAllString(v, "\t") }

func sysctlPersist(ctx context.Context, c *modules.Call) (any, error) {
	name, value := c.Args.Str("name"), pyfmt.Str(c.Args.Get("value"))
	config := c.Args.Str("config")
	if c.Args.Get("config") == nil {
		config = sysctlDefaultConfig(ctx, c)
	}
	if st, err := os.Stat(config); err != nil || !st.Mode().IsRegular() {
		dir := filepath.Dir(config)
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("%w: %w", modules.ErrExecution, err)
			}
		}
		if err := os.WriteFile(config, []byte("#\n# Kernel sysctl configuration\n#\n"), 0o644); err != nil {
			return nil, fmt.Errorf("%w: Could not write to file: %s", modules.ErrExecution, config)
		}
	}
	b, err := readBounded(config, maxSysctlConf)
	if err != nil {
		return nil, fmt.Errorf("%w: Could not read from file: %s", modules.ErrExecution, config)
	}
	var nlines []string
	edited := false
	for _, line := range py.FileLines(string(b)) {
		if !strings.Contains(line, "=") {
			nlines = append(nlines, line)
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if strings.HasPrefix(k, "#") || k != name {
			nlines = append(nlines, line)
			continue
		}
		want := sysctlSanitize(value)
		if sysctlSanitize(v) == want {
			cur, err := sysctlGet(ctx, name)
			if err != nil {
				return nil, err
			}
			if sysctlSanitize(cur) != want {
				if _, err := sysctlAssign(ctx, name, value); err != nil {
					return nil, err
				}
				return "Updated", nil
			}
			return "Already set", nil
		}
		nlines = append(nlines, name+" = "+value+"\n")
		edited = true
	}
	if !edited {
		nlines = append(nlines, name+" = "+value+"\n")
	}
	if err := os.WriteFile(config, []byte(strings.Join(nlines, "")), 0o644); err != nil {
		return nil, fmt.Errorf("%w: Could not write to file: %s", modules.ErrExecution, config)
	}
	if _, err := sysctlAssign(ctx, name, value); err != nil {
		return nil, err
	}
	return "Updated", nil
}

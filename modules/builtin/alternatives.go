package builtin

import (
	"context"
	"github.com/gsalt/gsalt/internal/py"
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
)

// alternativesFunctions is Salt's alternatives module (update-alternatives,
// or alternatives on RedHat).
func alternativesFunctions() []modules.Function {
	name := modules.Spec{Params: []modules.Param{req("name")}}
	namePath := modules.Spec{Params: []modules.Param{req("name"), req("path")}}
	return []modules.Function{
		{Name: "alternatives.display", Spec: name, Doc: "Display alternatives settings for defined command name\n\nCLI Example:\n\n    salt '*' alternatives.display editor",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				out, err := altRun(ctx, c, "--display", c.Args.Str("name"))
				if err != nil {
					return nil, err
				}
				if out.retcode > 0 && out.stderr != "" {
					return out.stderr, nil
				}
				return out.stdout, nil
			}},
		{Name: "alternatives.show_link", Spec: name, Doc: "Display master link for the alternative\n\nCLI Example:\n\n    salt '*' alternatives.show_link editor",
			Fn: altShowLink},
		{Name: "alternatives.show_current", Spec: name, Doc: "Display the current highest-priority alternative for a given alternatives\nlink\n\nCLI Example:\n\n    salt '*' alternatives.show_current editor",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				p, err := os.Readlink("/etc/alternatives/" + c.Args.Str("name"))
				if err != nil {
					c.Log().Error("alternative: " + c.Args.Str("name") + " does not exist")
					return false, nil
				}
				return p, nil
			}},
		{Name: "alternatives.check_exists", Spec: namePath, Doc: "Check if the given path is an alternative for a name.\n\nCLI Example:\n\n    salt '*' alternatives.check_exists name path",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return altCheckExists(ctx, c, c.Args.Str("name"), c.Args.Str("path"))
			}},
		{Name: "alternatives.check_installed", Spec: namePath, Doc: "Check if the current highest-priority match for a given alternatives link\nis set to the desired path\n\nCLI Example:\n\n    salt '*' alternatives.check_installed name path",
			Fn: func(_ context.Context, c *modules.Call) (any, error) {
				p, err := os.Readlink("/etc/alternatives/" + c.Args.Str("name"))
				return err == nil && p == c.Args.Str("path"), nil
			}},
		{Name: "alternatives.install", Spec: modules.Spec{Params: []modules.Param{req("name"), req("link"), req("path"), req("priority")}},
			Doc: "Install symbolic links determining default commands\n\nCLI Example:\n\n    salt '*' alternatives.install editor /usr/bin/editor /usr/bin/emacs23 50",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				out, err := altRun(ctx, c, "--install", c.Args.Str("link"), c.Args.Str("name"), c.Args.Str("path"), pyfmt.Str(c.Args.Get("priority")))
				if err != nil {
					return nil, err
				}
				if out.retcode > 0 && out.stderr != "" {
					return out.stderr, nil
				}
				return out.stdout, nil
			}},
		{Name: "alternatives.remove", Spec: namePath, Doc: "Remove symbolic links determining the default commands.\n\nCLI Example:\n\n    salt '*' alternatives.remove name path",
			Fn: altSimple("--remove", true)},
		{Name: "alternatives.auto", Spec: name, Doc: "Trigger alternatives to set the path for <name> as\nspecified by priority.\n\nCLI Example:\n\n    salt '*' alternatives.auto name",
			Fn: altSimple("--auto", false)},
		{Name: "alternatives.set", Spec: namePath, Doc: "Manually set the alternative <path> for <name>.\n\nCLI Example:\n\n    salt '*' alternatives.set name path",
			Fn: altSimple("--set", true)},
	}
}

// altCmd is _get_cmd.
func altCmd(c *modules.Call) string {
	if grainsData(c).Str("os_family") == "RedHat" {
		return "alternatives"
	}
	return "update-alternatives"
}

func altRun(ctx context.Context, c *modules.Call, args ...string) (pkgCmdResult, error) {
	return pkgRun(ctx, append([]string{altCmd(c)}, args...), pkgRunOpts{})
}

func altSimple(flag string, withPath bool) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		args := []string{flag, c.Args.Str("name")}
		if withPath {
			args = append(args, c.Args.Str("path"))
		}
		out, err := altRun(ctx, c, args...)
		if err != nil {
			return nil, err
		}
		if out.retcode > 0 {
			return out.stderr, nil
		}
		return out.stdout, nil
	}
}

func altCheckExists(ctx context.Context, c *modules.Call, name, path string) (bool, error) {
	out, err := altRun(ctx, c, "--display", name)
	if err != nil {
		return false, err
	}
	if out.retcode > 0 && out.stderr != "" {
		return false, nil
	}
	for _, line := range py.SplitLines(out.stdout, false) {
		if strings.HasPrefix(line, path) {
			return true, nil
		}
	}
	return false, nil
}

func altShowLink(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Args.Str("name")
	switch grainsData(c).Str("os_family") {
	case "RedHat", "Suse":
		dir := "/var/lib/alternatives"
		if grainsData(c).Str("os_family") == "Suse" {
			dir = "/var/lib/rpm/alternatives"
		}
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			c.Log().Error("alternatives: " + name + " does not exist")
			return false, nil
		}
		lines := strings.SplitAfter(string(b), "\n")
		if len(lines) < 2 {
			return false, nil
		}
		return strings.TrimRight(lines[1], "\n"), nil
	}
	out, err := altRun(ctx, c, "--query", name)
	if err != nil {
		return nil, err
	}
	if out.retcode > 0 && out.stderr != "" {
		return false, nil
	}
	first, _, _ := strings.Cut(out.stdout, "\n\n")
	for _, line := range strings.Split(first, "\n") {
		if strings.HasPrefix(line, "Link:") {
			return strings.TrimSpace(line[len("Link:"):]), nil
		}
	}
	return false, nil
}

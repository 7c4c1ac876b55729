package builtin

// This file is the config part of Salt's git module (salt/modules/git.py)
// over the git binary: git.config_get, git.config_get_regexp,
// git.config_set and git.config_unset.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

func gitFunctions() []modules.Function {
	common := []modules.Param{opt("user", nil), opt("password", nil), opt("ignore_retcode", false), opt("output_encoding", nil)}
	withCommon := func(ps ...modules.Param) []modules.Param { return append(ps, common...) }
	getRegexp := func(ctx context.Context, c *modules.Call) (any, error) {
		res, err := gitConfigGetter(ctx, c, "--get-regexp", c.Args.Get("value_regex"))
		if err != nil {
			return nil, err
		}
		ret := &payload.Map{}
		if res.retcode == 1 {
			return ret, nil
		}
		for _, line := range py.SplitLines(res.stdout, false) {
			f := strings.FieldsFunc(line, py.IsSpace)
			if len(f) < 2 {
				continue
			}
			param := f[0]
			value := strings.TrimLeftFunc(strings.TrimPrefix(strings.TrimLeftFunc(line, py.IsSpace), param), py.IsSpace)
			old, _ := ret.Get(param)
			l, _ := old.([]any)
			ret.Set(param, append(l, value))
		}
		return ret, nil
	}
	regexpSpec := modules.Spec{Params: withCommon(req("key"), opt("value_regex", nil), opt("cwd", nil)), Kwargs: true}
	return []modules.Function{
		{Name: "git.config_get", Spec: modules.Spec{Params: withCommon(req("key"), opt("cwd", nil)), Kwargs: true},
			Doc: "Get the value of a key in the git configuration file (all=True: every value, as a list)\n\nCLI Example:\n\n    salt myminion git.config_get user.name cwd=/path/to/repo",
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				allV, _ := c.Args.Kwargs.Get("all")
				all := payload.Truthy(allV)
				return gitConfigGet(ctx, c, all)
			}},
		{Name: "git.config_get_regexp", Spec: regexpSpec,
			Doc: "Get the value of a key or keys in the git configuration file using regexes\n\nCLI Example:\n\n    salt myminion git.config_get_regexp user.name cwd=/path/to/repo", Fn: getRegexp},
		{Name: "git.config_get_regex", Spec: regexpSpec,
			Doc: "Alias of git.config_get_regexp\n\nCLI Example:\n\n    salt myminion git.config_get_regex user.name cwd=/path/to/repo", Fn: getRegexp},
		{Name: "git.config_set", Spec: modules.Spec{Params: withCommon(req("key"), opt("value", nil), opt("multivar", nil), opt("cwd", nil)), Kwargs: true},
			Doc: "Set a key in the git configuration file (value, or multivar for several values)\n\nCLI Example:\n\n    salt myminion git.config_set user.email me@example.com cwd=/path/to/repo",
			Fn:  gitConfigSet},
		{Name: "git.config_unset", Spec: modules.Spec{Params: withCommon(req("key"), opt("value_regex", nil), opt("cwd", nil)), Kwargs: true},
			Doc: "Unset a key in the git configuration file\n\nCLI Example:\n\n    salt myminion git.config_unset /path/to/repo foo.bar",
			Fn:  gitConfigUnset},
	}
}

// gitKwargs splits the global/all/add keyword arguments off; others are
// an error as in Salt.
func gitKwargs(c *modules.Call, allowed ...string) (map[string]bool, error) {
	out := map[string]bool{}
	var bad []string
	for _, it := range c.Args.CleanKwargs().Items() {
		k := payload.KeyString(it.Key)
		if containsStr(allowed, k) {
			out[k] = payload.Truthy(it.Value)
			continue
		}
		bad = append(bad, k+"="+pyfmt.Str(it.Value))
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: The following keyword arguments are not valid: %s", modules.ErrInvocation, strings.Join(bad, ", "))
	}
	return out, nil
}

// gitCwd checks and expands cwd ("" with global).
func gitCwd(c *modules.Call, global bool) (string, error) {
	cwd := c.Args.Get("cwd")
	if cwd == nil {
		if !global {
			return "", fmt.Errorf("%w: 'cwd' argument required unless global=True", modules.ErrInvocation)
		}
		return "", nil
	}
	p := pyfmt.Str(cwd)
	if strings.HasPrefix(p, "~") {
		if home, err := os.UserHomeDir(); err == nil {
			p = home + p[1:]
		}
	}
	return filepath.Join(p), nil
}

// gitRun is _git_run for the config functions: git through cmd.run_all
// as the user argument (runas, so that a missing user is Salt's "User
// '...' is not available" and --global is that user's file); failhard
// turns a non-zero exit into Salt's "Command '...' failed: stderr" error.
func gitRun(ctx context.Context, c *modules.Call, argv []string, cwd string, failhard bool) (pkgCmdResult, error) {
	o := gitRunOpts{noFailhard: !failhard, ignoreRetcode: payload.Truthy(c.Args.Get("ignore_retcode"))}
	if cwd != "" {
		o.cwd = cwd
	}
	m, err := gitExec(ctx, c, argv, o)
	if err != nil {
		return pkgCmdResult{}, err
	}
	v, _ := m.Get("retcode")
	rc, _ := cmdPyInt(v)
	return pkgCmdResult{stdout: m.Str("stdout"), stderr: m.Str("stderr"), retcode: int(rc)}, nil
}

// gitWhich is _which_git_config for a modern git.
func gitWhich(global bool) []string {
	if global {
		return []string{"--global"}
	}
	return []string{"--local"}
}

func gitConfigGetter(ctx context.Context, c *modules.Call, op string, valueRegex any) (pkgCmdResult, error) {
	kw, err := gitKwargs(c, "global", "all")
	if err != nil {
		return pkgCmdResult{}, err
	}
	cwd, err := gitCwd(c, kw["global"])
	if err != nil {
		return pkgCmdResult{}, err
	}
	argv := append([]string{"git", "config"}, gitWhich(kw["global"])...)
	argv = append(argv, op, pyfmt.Str(c.Args.Get("key")))
	if op == "--get-regexp" && valueRegex != nil {
		argv = append(argv, pyfmt.Str(valueRegex))
	}
	return gitRun(ctx, c, argv, cwd, false)
}

func gitConfigGet(ctx context.Context, c *modules.Call, all bool) (any, error) {
	res, err := gitConfigGetter(ctx, c, "--get-all", nil)
	if err != nil {
		return nil, err
	}
	if res.retcode == 1 {
		return nil, nil
	}
	lines := py.SplitLines(res.stdout, false)
	if all {
		return grainsStrList(lines), nil
	}
	if len(lines) == 0 {
		return "", nil
	}
	return lines[len(lines)-1], nil
}

// gitMultivar is the multivar argument as a list of strings.
func gitMultivar(v any) []string {
	if l, ok := v.([]any); ok {
		out := make([]string, len(l))
		for i, x := range l {
			out[i] = pyfmt.Str(x)
		}
		return out
	}
	return strings.Split(pyfmt.Str(v), ",")
}

func gitConfigSet(ctx context.Context, c *modules.Call) (any, error) {
	kw, err := gitKwargs(c, "global", "add")
	if err != nil {
		return nil, err
	}
	cwd, err := gitCwd(c, kw["global"])
	if err != nil {
		return nil, err
	}
	value, multivar := c.Args.Get("value"), c.Args.Get("multivar")
	if value != nil && multivar != nil {
		return nil, fmt.Errorf("%w: Only one of 'value' and 'multivar' is permitted", modules.ErrInvocation)
	}
	key := pyfmt.Str(c.Args.Get("key"))
	prefix := []string{"git", "config"}
	if kw["global"] {
		prefix = append(prefix, "--global")
	}
	if value != nil {
		mode := "--replace-all"
		if kw["add"] {
			mode = "--add"
		}
		if _, err := gitRun(ctx, c, append(append([]string(nil), prefix...), mode, key, pyfmt.Str(value)), cwd, true); err != nil {
			return nil, err
		}
	} else {
		for i, target := range gitMultivar(multivar) {
			mode := "--add"
			if i == 0 {
				mode = "--replace-all"
			}
			if _, err := gitRun(ctx, c, append(append([]string(nil), prefix...), mode, key, target), cwd, true); err != nil {
				return nil, err
			}
		}
	}
	return gitConfigGet(ctx, c, true)
}

func gitConfigUnset(ctx context.Context, c *modules.Call) (any, error) {
	kw, err := gitKwargs(c, "global", "all")
	if err != nil {
		return nil, err
	}
	cwd, err := gitCwd(c, kw["global"])
	if err != nil {
		return nil, err
	}
	key := pyfmt.Str(c.Args.Get("key"))
	argv := []string{"git", "config", "--unset"}
	if kw["all"] {
		argv[2] = "--unset-all"
	}
	argv = append(argv, gitWhich(kw["global"])...)
	argv = append(argv, key)
	if vr := c.Args.Get("value_regex"); vr != nil {
		argv = append(argv, pyfmt.Str(vr))
	}
	res, err := gitRun(ctx, c, argv, cwd, false)
	if err != nil {
		return nil, err
	}
	switch res.retcode {
	case 0:
		return true, nil
	case 1:
		return nil, fmt.Errorf("%w: Section or key is invalid", modules.ErrExecution)
	case 5:
		if v, err := gitConfigGet(ctx, c, false); err == nil && v == nil {
			return nil, fmt.Errorf("%w: Key '%s' does not exist", modules.ErrExecution, key)
		}
		msg := fmt.Sprintf("Multiple values exist for key '%s'", key)
		if c.Args.Get("value_regex") != nil {
			msg += " and value_regex matches multiple values"
		}
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, msg)
	case 6:
		return nil, fmt.Errorf("%w: The value_regex is invalid", modules.ErrExecution)
	}
	msg := fmt.Sprintf("Failed to unset key '%s', git config returned exit code %d", key, res.retcode)
	if res.stderr != "" {
		msg += "; " + res.stderr
	}
	return nil, fmt.Errorf("%w: %s", modules.ErrExecution, msg)
}

package builtin

// This file is the repository part of Salt's git module
// (salt/modules/git.py) over the git binary, what git.latest uses:
// clone, init, fetch, pull, checkout, reset, merge, merge_base, branch,
// tag, rev_parse, revision, current_branch, describe, diff, status,
// discard_local_changes, symbolic_ref, submodule, ls_remote,
// remote_refs, remotes, remote_get, remote_set, list_branches,
// list_tags, is_worktree and version. Commands run through cmd.run_all
// (runas=user) as in Salt; identity keys are local files or salt:// URLs
// used through ssh -i.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// gitRunOpts are _git_run's options.
type gitRunOpts struct {
	cwd            any
	identity       any
	ignoreRetcode  bool
	noFailhard     bool
	redirectStderr bool
	saltenv        string
}

// gitRedact is salt.utils.url.redact_http_basic_auth.
func gitRedact(s string) string {
	return regexp.MustCompile(`(?i)(https?)://.*@`).ReplaceAllString(s, "${1}://<redacted>@")
}

// gitAddAuth is salt.utils.url.add_http_basic_auth(https_only=True).
func gitAddAuth(u string, user, pass any) (string, error) {
	if user == nil && pass == nil {
		return u, nil
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || strings.ToLower(scheme) != "https" {
		return "", fmt.Errorf("%w: Basic Auth only supported for HTTPS", modules.ErrInvocation)
	}
	auth := pyfmt.Str(user)
	if pass != nil {
		auth += ":" + pyfmt.Str(pass)
	}
	return scheme + "://" + auth + "@" + rest, nil
}

// gitSSHWrapperOpts are the options of Salt's ssh-id-wrapper.
const gitSSHWrapperOpts = "-oStrictHostKeyChecking=no -oPasswordAuthentication=no -oKbdInteractiveAuthentication=no -oChallengeResponseAuthentication=no"

// gitExec is _git_run: the command through cmd.run_all, Salt's
// "Command '...' failed: <stderr>" error unless failhard is off, and the
// identity files tried one after the other.
func gitExec(ctx context.Context, c *modules.Call, argv []string, o gitRunOpts) (*payload.Map, error) {
	run := func(env *payload.Map) (*payload.Map, error) {
		kw := payload.NewMap("cwd", o.cwd, "runas", c.Args.Get("user"), "password", c.Args.Get("password"), "python_shell", false,
			"ignore_retcode", o.ignoreRetcode, "redirect_stderr", o.redirectStderr, "output_encoding", c.Args.Get("output_encoding"))
		if env != nil {
			kw.Set("env", env)
		}
		v, err := callFunction(ctx, c, "cmd.run_all", []any{strArgs(argv)}, kw)
		if err != nil {
			return nil, err
		}
		m, _ := v.(*payload.Map)
		if m == nil {
			return nil, fmt.Errorf("%w: cmd.run_all returned no result", modules.ErrExecution)
		}
		return m, nil
	}
	errStream := "stderr"
	if o.redirectStderr {
		errStream = "stdout"
	}
	rc := func(m *payload.Map) int64 { v, _ := m.Get("retcode"); n, _ := cmdPyInt(v); return n }
	ids := gitIdentities(o.identity)
	if len(ids) == 0 {
		res, err := run(nil)
		if err != nil {
			return nil, err
		}
		if rc(res) != 0 && !o.noFailhard {
			msg := fmt.Sprintf("Command '%s' failed", gitRedact(strings.Join(argv, " ")))
			if e := res.Str(errStream); e != "" {
				msg += ": " + gitRedact(e)
			}
			return nil, fmt.Errorf("%w: %s", modules.ErrExecution, msg)
		}
		return res, nil
	}
	var errs, missing []string
	var res *payload.Map
	for _, id := range ids {
		if strings.Contains(id, "salt://") {
			tmp, err := os.CreateTemp("", "gsalt-git-id-")
			if err != nil {
				return nil, fmt.Errorf("%w: %v", modules.ErrExecution, err)
			}
			tmp.Close()
			_ = os.Chmod(tmp.Name(), 0o600)
			got, err := callFunction(ctx, c, "cp.get_file", []any{id, tmp.Name(), o.saltenv}, nil)
			if err != nil || !payload.Truthy(got) {
				c.Log().Error("identity does not exist", "identity", id)
				os.Remove(tmp.Name())
				continue
			}
			defer os.Remove(tmp.Name())
			id = tmp.Name()
		} else if !fileExistsRegular(id) {
			missing = append(missing, id)
			c.Log().Error("identity does not exist", "identity", id)
			continue
		}
		if gitKeyEncrypted(id) {
			errs = append(errs, fmt.Sprintf("Identity file %s is passphrase-protected and cannot be used in a non-interactive command. Using salt-call from the minion will allow a passphrase-protected key to be used.", id))
			continue
		}
		var err error
		res, err = run(payload.NewMap("GIT_IDENTITY", id, "GIT_SSH_COMMAND", "ssh "+gitSSHWrapperOpts+" -i "+py.ShlexQuote(id)))
		if err != nil {
			return nil, err
		}
		if rc(res) == 0 {
			return res, nil
		}
		if e := res.Str(errStream); e != "" {
			errs = append(errs, gitRedact(e))
		}
	}
	if !o.noFailhard || res == nil {
		msg := "Unable to authenticate using identity file:\n\n" + strings.Join(errs, "\n")
		if len(missing) > 0 {
			if len(errs) > 0 {
				msg += "\n\n"
			}
			msg += "The following identity file(s) were not found: " + strings.Join(missing, ", ")
		}
		return nil, fmt.Errorf("%w: %s", modules.ErrExecution, msg)
	}
	return res, nil
}

// gitKeyEncrypted is salt.utils.ssh.key_is_encrypted.
func gitKeyEncrypted(p string) bool {
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	return regexp.MustCompile(`(?m)^Proc-Type: 4,ENCRYPTED`).Match(b)
}

func fileExistsRegular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// gitIdentities is the identity argument as a list.
func gitIdentities(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, pyfmt.Str(e))
		}
		return out
	}
	if s := pyfmt.Str(v); s != "" {
		return []string{s}
	}
	return nil
}

// gitFormatOpts is _format_opts.
func gitFormatOpts(v any) ([]string, error) {
	var out []string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		for _, e := range x {
			out = append(out, pyfmt.Str(e))
		}
		return out, nil
	case string:
		parts, err := py.ShlexSplit(x)
		if err != nil {
			return nil, err
		}
		out = parts
	default:
		out = []string{pyfmt.Str(x)}
	}
	if len(out) > 0 && out[len(out)-1] == "--" {
		out = out[:len(out)-1]
	}
	return out, nil
}

// gitExpandPath is _expand_path: cwd joined to the user's home (an
// absolute cwd stays as it is).
func gitExpandPath(c *modules.Call, cwd any) string {
	p := pyfmt.Str(cwd)
	home := cmdHomeDir("")
	if u := c.Args.Get("user"); payload.Truthy(u) {
		home = cmdHomeDir(pyfmt.Str(u))
	}
	if filepath.IsAbs(p) {
		return p
	}
	return pyJoin(home, p)
}

// gitCmd builds "git <git_opts> sub" plus opts.
func gitCmd(c *modules.Call, sub ...string) ([]string, error) {
	argv := []string{"git"}
	if c.Args.Given("git_opts") {
		g, err := gitFormatOpts(c.Args.Get("git_opts"))
		if err != nil {
			return nil, err
		}
		argv = append(argv, g...)
	}
	return append(argv, sub...), nil
}

func gitOpts(c *modules.Call) []string {
	o, _ := gitFormatOpts(c.Args.Get("opts"))
	return o
}

// gitSimple is a function running one command in cwd and returning its
// stdout.
func gitStdout(ctx context.Context, c *modules.Call, argv []string, o gitRunOpts) (any, error) {
	o.ignoreRetcode = o.ignoreRetcode || c.Args.Bool("ignore_retcode")
	res, err := gitExec(ctx, c, argv, o)
	if err != nil {
		return nil, err
	}
	return res.Str("stdout"), nil
}

func gitParams(first []modules.Param, extra ...string) []modules.Param {
	ps := append([]modules.Param{}, first...)
	for _, e := range extra {
		switch e {
		case "opts", "git_opts":
			ps = append(ps, opt(e, ""))
		case "ignore_retcode":
			ps = append(ps, opt(e, false))
		case "saltenv":
			ps = append(ps, opt(e, "base"))
		default:
			ps = append(ps, opt(e, nil))
		}
	}
	return ps
}

// gitSplitLines is stdout.splitlines() as a list.
func gitSplitLines(v any) []any { return archiveSplitLines(payload.Text(v)) }

func gitOpsFunctions() []modules.Function {
	cwd := req("cwd")
	std := []string{"user", "password", "ignore_retcode", "output_encoding"}
	withStd := func(first []modules.Param, extra ...string) modules.Spec {
		return modules.Spec{Params: gitParams(first, append(extra, std...)...)}
	}
	doc := func(s, ex string) string { return s + "\n\nCLI Example:\n\n    salt myminion " + ex }
	return []modules.Function{
		{Name: "git.version", Spec: modules.Spec{Params: []modules.Param{opt("versioninfo", false)}},
			Doc: doc("Returns the version of Git installed on the minion", "git.version"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				v := "unknown"
				if res, err := gitExec(ctx, c, []string{"git", "--version"}, gitRunOpts{}); err == nil {
					s := res.Str("stdout")
					if i := strings.Index(s, "("); i >= 0 {
						s = strings.TrimSpace(s[:i])
					}
					if f := strings.Fields(s); len(f) > 0 {
						v = f[len(f)-1]
					}
				}
				if !c.Args.Bool("versioninfo") {
					return v, nil
				}
				var out []any
				for _, p := range strings.Split(v, ".") {
					if n, ok := cmdPyInt(p); ok {
						out = append(out, n)
					} else {
						out = append(out, p)
					}
				}
				return out, nil
			}},
		{Name: "git.init", Spec: withStd([]modules.Param{cwd, opt("bare", false), opt("template", nil), opt("separate_git_dir", nil), opt("shared", nil)}, "opts", "git_opts"),
			Doc: doc("Interface to git-init(1)", "git.init /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "init")
				if err != nil {
					return nil, err
				}
				if c.Args.Bool("bare") {
					argv = append(argv, "--bare")
				}
				if t := c.Args.Get("template"); t != nil {
					argv = append(argv, "--template="+pyfmt.Str(t))
				}
				if s := c.Args.Get("separate_git_dir"); s != nil {
					argv = append(argv, "--separate-git-dir="+pyfmt.Str(s))
				}
				if sh := c.Args.Get("shared"); sh != nil {
					v := ""
					switch x := sh.(type) {
					case int64:
						v = "0" + pyfmt.Str(x)
					case string:
						v = x
					default:
						v = strings.ToLower(pyfmt.Str(x))
					}
					argv = append(argv, "--shared="+v)
				}
				argv = append(argv, gitOpts(c)...)
				argv = append(argv, gitExpandPath(c, c.Args.Get("cwd")))
				return gitStdout(ctx, c, argv, gitRunOpts{})
			}},
		{Name: "git.clone", Spec: withStd([]modules.Param{cwd, opt("url", nil), opt("name", nil)}, "opts", "git_opts", "identity", "https_user", "https_pass", "saltenv"),
			Doc: doc("Interface to git-clone(1)", "git.clone /path/to/repo_parent_dir git://github.com/saltstack/salt.git"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				dir := gitExpandPath(c, c.Args.Get("cwd"))
				if !payload.Truthy(c.Args.Get("url")) {
					return nil, fmt.Errorf("%w: Missing 'url' argument", modules.ErrInvocation)
				}
				u, err := gitAddAuth(pyfmt.Str(c.Args.Get("url")), c.Args.Get("https_user"), c.Args.Get("https_pass"))
				if err != nil {
					return nil, err
				}
				argv, err := gitCmd(c, "clone")
				if err != nil {
					return nil, err
				}
				argv = append(append(argv, gitOpts(c)...), "--", u)
				var runCwd any = "/tmp"
				if n := c.Args.Get("name"); n != nil {
					argv = append(argv, pyfmt.Str(n))
					if err := os.MkdirAll(dir, 0o777); err != nil {
						return nil, fmt.Errorf("%w: %s", modules.ErrExecution, cmdPyOSError(err))
					}
					runCwd = dir
				} else {
					argv = append(argv, dir)
				}
				if _, err := gitExec(ctx, c, argv, gitRunOpts{cwd: runCwd, identity: c.Args.Get("identity"), ignoreRetcode: c.Args.Bool("ignore_retcode"), saltenv: c.Args.Str("saltenv")}); err != nil {
					return nil, err
				}
				return true, nil
			}},
		{Name: "git.fetch", Spec: withStd([]modules.Param{cwd, opt("remote", nil), opt("force", false), opt("refspecs", nil)}, "opts", "git_opts", "identity", "saltenv"),
			Doc: doc("Interface to git-fetch(1)", "git.fetch /path/to/repo upstream"), Fn: gitFetch},
		{Name: "git.pull", Spec: withStd([]modules.Param{cwd}, "opts", "git_opts", "identity", "saltenv"),
			Doc: doc("Interface to git-pull(1)", "git.pull /path/to/repo opts='--rebase origin master'"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "pull")
				if err != nil {
					return nil, err
				}
				return gitStdout(ctx, c, append(argv, gitOpts(c)...), gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), identity: c.Args.Get("identity"), saltenv: c.Args.Str("saltenv")})
			}},
		{Name: "git.checkout", Spec: withStd([]modules.Param{cwd, opt("rev", nil), opt("force", false)}, "opts", "git_opts"),
			Doc: doc("Interface to git-checkout(1)", "git.checkout /path/to/repo somebranch user=jeff"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "checkout")
				if err != nil {
					return nil, err
				}
				if c.Args.Bool("force") {
					argv = append(argv, "--force")
				}
				o := gitOpts(c)
				argv = append(argv, o...)
				if rev := c.Args.Get("rev"); rev == nil {
					if !containsStr(o, "-b") && !containsStr(o, "-B") {
						return nil, fmt.Errorf("%w: 'rev' argument is required unless -b or -B in opts", modules.ErrInvocation)
					}
				} else {
					argv = append(argv, pyfmt.Str(rev))
				}
				return gitStdout(ctx, c, argv, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), redirectStderr: true})
			}},
		{Name: "git.reset", Spec: withStd([]modules.Param{cwd}, "opts", "git_opts", "identity"),
			Doc: doc("Interface to git-reset(1), returns the stdout from the git command", "git.reset /path/to/repo opts='--hard origin/master'"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "reset")
				if err != nil {
					return nil, err
				}
				return gitStdout(ctx, c, append(argv, gitOpts(c)...), gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), identity: c.Args.Get("identity")})
			}},
		{Name: "git.merge", Spec: modules.Spec{Params: gitParams([]modules.Param{cwd, opt("rev", nil)}, "opts", "git_opts", "user", "password", "identity", "ignore_retcode", "output_encoding"), Kwargs: true},
			Doc: doc("Interface to git-merge(1)", "git.merge /path/to/repo rev=upstream/foo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if _, err := gitKwargs(c); err != nil {
					return nil, err
				}
				argv, err := gitCmd(c, "merge")
				if err != nil {
					return nil, err
				}
				argv = append(argv, gitOpts(c)...)
				if r := c.Args.Get("rev"); payload.Truthy(r) {
					argv = append(argv, pyfmt.Str(r))
				}
				return gitStdout(ctx, c, argv, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), identity: c.Args.Get("identity")})
			}},
		{Name: "git.merge_base", Spec: modules.Spec{Params: gitParams([]modules.Param{cwd, opt("refs", nil), opt("octopus", false), opt("is_ancestor", false), opt("independent", false), opt("fork_point", nil)},
			"opts", "git_opts", "user", "password", "ignore_retcode", "output_encoding"), Kwargs: true},
			Doc: doc("Interface to git-merge-base(1)", "git.merge_base /path/to/repo refs=8f2e542,4ad8cab is_ancestor=True"), Fn: gitMergeBase},
		{Name: "git.branch", Spec: withStd([]modules.Param{cwd, opt("name", nil)}, "opts", "git_opts"),
			Doc: doc("Interface to git-branch(1)", "git.branch /path/to/repo mybranch opts='-b'"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "branch")
				if err != nil {
					return nil, err
				}
				argv = append(argv, gitOpts(c)...)
				if n := c.Args.Get("name"); n != nil {
					argv = append(argv, pyfmt.Str(n))
				}
				if _, err := gitStdout(ctx, c, argv, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))}); err != nil {
					return nil, err
				}
				return true, nil
			}},
		{Name: "git.tag", Spec: withStd([]modules.Param{cwd, req("name"), opt("ref", "HEAD"), opt("message", nil)}, "opts", "git_opts"),
			Doc: doc("Interface to git-tag(1), adds and removes tags.", "git.tag /path/to/repo v1.2"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "tag")
				if err != nil {
					return nil, err
				}
				var o []string
				for _, x := range gitOpts(c) {
					if x != "-a" && x != "--annotate" {
						o = append(o, x)
					}
				}
				for _, x := range o {
					if x == "-m" || strings.Contains(x, "--message") {
						return nil, fmt.Errorf("%w: Tag messages must be passed in the \"message\" argument", modules.ErrInvocation)
					}
				}
				argv = append(append(argv, o...), pyfmt.Str(c.Args.Get("name")))
				if !containsStr(o, "-d") && !containsStr(o, "--delete") {
					argv = append(argv, pyfmt.Str(c.Args.Get("ref")))
				}
				return gitStdout(ctx, c, argv, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), redirectStderr: true})
			}},
		{Name: "git.rev_parse", Spec: withStd([]modules.Param{cwd, opt("rev", nil)}, "opts", "git_opts"),
			Doc: doc("Interface to git-rev-parse(1)", "git.rev_parse /path/to/repo HEAD"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "rev-parse")
				if err != nil {
					return nil, err
				}
				argv = append(argv, gitOpts(c)...)
				if r := c.Args.Get("rev"); r != nil {
					argv = append(argv, pyfmt.Str(r))
				}
				return gitStdout(ctx, c, argv, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
			}},
		{Name: "git.revision", Spec: withStd([]modules.Param{cwd, opt("rev", "HEAD"), opt("short", false)}),
			Doc: doc("Returns the SHA1 hash of a given identifier (hash, branch, tag, HEAD, etc.)", "git.revision /path/to/repo mybranch"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv := []string{"git", "rev-parse"}
				if c.Args.Bool("short") {
					argv = append(argv, "--short")
				}
				return gitStdout(ctx, c, append(argv, pyfmt.Str(c.Args.Get("rev"))), gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
			}},
		{Name: "git.current_branch", Spec: withStd([]modules.Param{cwd}),
			Doc: doc("Returns the current branch name of a local checkout.", "git.current_branch /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return gitStdout(ctx, c, []string{"git", "rev-parse", "--abbrev-ref", "HEAD"}, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
			}},
		{Name: "git.describe", Spec: withStd([]modules.Param{cwd, opt("rev", "HEAD")}),
			Doc: doc("Returns the git-describe(1) string (or the SHA1 hash if there are no tags) for the given revision.", "git.describe /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return gitStdout(ctx, c, []string{"git", "describe", "--always", pyfmt.Str(c.Args.Get("rev"))}, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
			}},
		{Name: "git.diff", Spec: modules.Spec{Params: gitParams([]modules.Param{cwd, opt("item1", nil), opt("item2", nil)}, "opts", "git_opts", "user", "password",
			"no_index", "cached", "paths", "output_encoding")},
			Doc: doc("Interface to git-diff(1)", "git.diff /path/to/repo HEAD"), Fn: gitDiff},
		{Name: "git.discard_local_changes", Spec: withStd([]modules.Param{cwd, opt("path", ".")}),
			Doc: doc("Runs a git checkout -- <path> from the directory specified by cwd.", "git.discard_local_changes /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return gitStdout(ctx, c, []string{"git", "checkout", "--", pyfmt.Str(c.Args.Get("path"))}, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), redirectStderr: true})
			}},
		{Name: "git.status", Spec: withStd([]modules.Param{cwd}),
			Doc: doc("Returns the changes to the repository", "git.status /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				out, err := gitStdout(ctx, c, []string{"git", "status", "-z", "--porcelain"}, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
				if err != nil {
					return nil, err
				}
				names := map[string]string{"M": "modified", "A": "new", "D": "deleted", "??": "untracked"}
				ret := &payload.Map{}
				for _, line := range strings.Split(payload.Text(out), "\x00") {
					f := strings.FieldsFunc(line, cmdPyIsSpace)
					if len(f) < 2 {
						continue
					}
					st := f[0]
					name := strings.TrimLeftFunc(strings.TrimLeftFunc(line, cmdPyIsSpace)[len(st):], cmdPyIsSpace)
					if n, ok := names[st]; ok {
						st = n
					}
					old, _ := ret.Get(st)
					l, _ := old.([]any)
					ret.Set(st, append(l, name))
				}
				return ret, nil
			}},
		{Name: "git.symbolic_ref", Spec: withStd([]modules.Param{cwd, req("ref"), opt("value", nil)}, "opts", "git_opts"),
			Doc: doc("Interface to git-symbolic-ref(1)", "git.symbolic_ref /path/to/repo HEAD"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "symbolic-ref")
				if err != nil {
					return nil, err
				}
				o := gitOpts(c)
				if c.Args.Get("value") != nil && (containsStr(o, "-d") || containsStr(o, "--delete")) {
					return nil, fmt.Errorf("%w: Value cannot be set for symbolic ref if -d/--delete is included in opts", modules.ErrInvocation)
				}
				argv = append(append(argv, o...), pyfmt.Str(c.Args.Get("ref")))
				if v := c.Args.Get("value"); payload.Truthy(v) {
					// Salt extends the command with the value's characters.
					for _, r := range pyfmt.Str(v) {
						argv = append(argv, string(r))
					}
				}
				return gitStdout(ctx, c, argv, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
			}},
		{Name: "git.submodule", Spec: modules.Spec{Params: gitParams([]modules.Param{cwd, req("command")}, "opts", "git_opts", "user", "password", "identity", "ignore_retcode", "saltenv", "output_encoding"), Kwargs: true},
			Doc: doc("Interface to git-submodule(1)", "git.submodule /path/to/repo update opts='--init --recursive'"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				kw := c.Args.CleanKwargs()
				if v, ok := kw.Get("init"); ok {
					kw.Delete("init")
					if kw.Len() == 0 && payload.Truthy(v) {
						return nil, fmt.Errorf("%w: The 'init' argument is no longer supported. Either set 'command' to 'init', or include '--init' in the 'opts' argument and set 'command' to 'update'.", modules.ErrInvocation)
					}
				}
				if kw.Len() > 0 {
					if _, err := gitKwargs(c, "init"); err != nil {
						return nil, err
					}
				}
				argv, err := gitCmd(c, "submodule", pyfmt.Str(c.Args.Get("command")))
				if err != nil {
					return nil, err
				}
				return gitStdout(ctx, c, append(argv, gitOpts(c)...), gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), identity: c.Args.Get("identity"), saltenv: c.Args.Str("saltenv")})
			}},
		{Name: "git.ls_remote", Spec: modules.Spec{Params: gitParams([]modules.Param{opt("cwd", nil), opt("remote", "origin"), opt("ref", nil)}, "opts", "git_opts", "user", "password", "identity", "https_user", "https_pass", "ignore_retcode", "output_encoding", "saltenv")},
			Doc: doc("Interface to git-ls-remote(1). Returns the upstream hash for a remote reference.", "git.ls_remote /path/to/repo origin master"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				var dir any
				if c.Args.Get("cwd") != nil {
					dir = gitExpandPath(c, c.Args.Get("cwd"))
				}
				remote, err := gitAddAuth(pyfmt.Str(c.Args.Get("remote")), c.Args.Get("https_user"), c.Args.Get("https_pass"))
				if err != nil {
					return nil, err
				}
				argv, err := gitCmd(c, "ls-remote")
				if err != nil {
					return nil, err
				}
				argv = append(append(argv, gitOpts(c)...), remote)
				if r := c.Args.Get("ref"); payload.Truthy(r) {
					argv = append(argv, pyfmt.Str(r))
				}
				out, err := gitStdout(ctx, c, argv, gitRunOpts{cwd: dir, identity: c.Args.Get("identity"), saltenv: c.Args.Str("saltenv")})
				if err != nil {
					return nil, err
				}
				return gitRefMap(payload.Text(out)), nil
			}},
		{Name: "git.remote_refs", Spec: modules.Spec{Params: gitParams([]modules.Param{req("url"), opt("heads", false), opt("tags", false)}, "user", "password", "identity", "https_user", "https_pass", "ignore_retcode", "output_encoding", "saltenv"), Kwargs: true},
			Doc: doc("Return the remote refs for the specified URL by running git ls-remote.", "git.remote_refs https://github.com/saltstack/salt.git"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				kw, err := gitKwargsAny(c, "filter")
				if err != nil {
					return nil, err
				}
				argv := []string{"git", "ls-remote"}
				if c.Args.Bool("heads") {
					argv = append(argv, "--heads")
				}
				if c.Args.Bool("tags") {
					argv = append(argv, "--tags")
				}
				u, err := gitAddAuth(pyfmt.Str(c.Args.Get("url")), c.Args.Get("https_user"), c.Args.Get("https_pass"))
				if err != nil {
					return nil, err
				}
				argv = append(argv, u)
				if f := kw["filter"]; payload.Truthy(f) {
					argv = append(argv, pyfmt.Str(f))
				}
				out, err := gitStdout(ctx, c, argv, gitRunOpts{identity: c.Args.Get("identity"), saltenv: c.Args.Str("saltenv")})
				if err != nil {
					return nil, err
				}
				return gitRefMap(payload.Text(out)), nil
			}},
		{Name: "git.remotes", Spec: withStd([]modules.Param{cwd, opt("redact_auth", true)}),
			Doc: doc("Get fetch and push URLs for each remote in a git checkout", "git.remotes /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return gitRemotes(ctx, c, gitExpandPath(c, c.Args.Get("cwd")), c.Args.Bool("redact_auth"))
			}},
		{Name: "git.remote_get", Spec: withStd([]modules.Param{cwd, opt("remote", "origin"), opt("redact_auth", true)}),
			Doc: doc("Get the fetch and push URL for a specific remote", "git.remote_get /path/to/repo upstream"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				return gitRemoteGet(ctx, c, gitExpandPath(c, c.Args.Get("cwd")), pyfmt.Str(c.Args.Get("remote")), c.Args.Bool("redact_auth"))
			}},
		{Name: "git.remote_set", Spec: modules.Spec{Params: gitParams([]modules.Param{cwd, req("url"), opt("remote", "origin")}, "user", "password", "https_user", "https_pass", "push_url", "push_https_user", "push_https_pass", "ignore_retcode", "output_encoding")},
			Doc: doc("Sets a remote with the specified name, replacing it if it already exists", "git.remote_set /path/to/repo git@github.com:user/repo.git"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				dir := pyfmt.Str(c.Args.Get("cwd"))
				remote := pyfmt.Str(c.Args.Get("remote"))
				all, err := gitRemotes(ctx, c, gitExpandPath(c, dir), true)
				if err != nil {
					return nil, err
				}
				o := gitRunOpts{cwd: dir, ignoreRetcode: c.Args.Bool("ignore_retcode")}
				if all.Has(remote) {
					if _, err := gitExec(ctx, c, []string{"git", "remote", "rm", remote}, o); err != nil {
						return nil, err
					}
				}
				u, err := gitAddAuth(pyfmt.Str(c.Args.Get("url")), c.Args.Get("https_user"), c.Args.Get("https_pass"))
				if err != nil {
					return nil, err
				}
				if _, err := gitExec(ctx, c, []string{"git", "remote", "add", remote, u}, o); err != nil {
					return nil, err
				}
				if pu := c.Args.Get("push_url"); payload.Truthy(pu) {
					p, err := gitAddAuth(pyfmt.Str(pu), c.Args.Get("push_https_user"), c.Args.Get("push_https_pass"))
					if err != nil {
						return nil, err
					}
					if _, err := gitExec(ctx, c, []string{"git", "remote", "set-url", "--push", remote, p}, o); err != nil {
						return nil, err
					}
				}
				return gitRemoteGet(ctx, c, gitExpandPath(c, dir), remote, true)
			}},
		{Name: "git.list_branches", Spec: withStd([]modules.Param{cwd, opt("remote", false)}),
			Doc: doc("Return a list of branches", "git.list_branches /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				refs := "refs/heads/"
				if c.Args.Bool("remote") {
					refs = "refs/remotes/"
				}
				out, err := gitStdout(ctx, c, []string{"git", "for-each-ref", "--format", "%(refname:short)", refs}, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
				if err != nil {
					return nil, err
				}
				return gitSplitLines(out), nil
			}},
		{Name: "git.list_tags", Spec: withStd([]modules.Param{cwd}),
			Doc: doc("Return a list of tags", "git.list_tags /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				out, err := gitStdout(ctx, c, []string{"git", "for-each-ref", "--format", "%(refname:short)", "refs/tags/"}, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
				if err != nil {
					return nil, err
				}
				return gitSplitLines(out), nil
			}},
		{Name: "git.is_worktree", Spec: modules.Spec{Params: []modules.Param{cwd, opt("user", nil), opt("password", nil), opt("output_encoding", nil)}},
			Doc: doc("Check if the given path is a worktree (not the main checkout)", "git.is_worktree /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				res, err := gitExec(ctx, c, []string{"git", "rev-parse", "--show-toplevel"}, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))})
				if err != nil {
					return false, nil
				}
				b, err := os.ReadFile(pyJoin(res.Str("stdout"), ".git"))
				if err != nil {
					return false, nil
				}
				line, _, _ := strings.Cut(string(b), "\n")
				f := strings.Fields(line)
				if len(f) < 2 {
					return false, nil
				}
				rest := strings.TrimLeftFunc(strings.TrimPrefix(strings.TrimLeftFunc(line, cmdPyIsSpace), f[0]), cmdPyIsSpace)
				return f[0] == "gitdir:" && strings.HasPrefix(rest, "/"), nil
			}},
	}
}

// gitKwargsAny is like gitKwargs but keeps the values.
func gitKwargsAny(c *modules.Call, allowed ...string) (map[string]any, error) {
	out := map[string]any{}
	var bad []string
	for _, it := range c.Args.CleanKwargs().Items() {
		k := payload.KeyString(it.Key)
		if containsStr(allowed, k) {
			out[k] = it.Value
			continue
		}
		bad = append(bad, k+"="+pyfmt.Str(it.Value))
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: The following keyword arguments are not valid: %s", modules.ErrInvocation, strings.Join(bad, ", "))
	}
	return out, nil
}

// gitRefMap parses ls-remote output into {ref: sha}.
func gitRefMap(out string) *payload.Map {
	ret := &payload.Map{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.FieldsFunc(line, cmdPyIsSpace)
		if len(f) < 2 {
			continue
		}
		name := strings.TrimLeftFunc(strings.TrimLeftFunc(line, cmdPyIsSpace)[len(f[0]):], cmdPyIsSpace)
		ret.Set(name, f[0])
	}
	return ret
}

func gitRemotes(ctx context.Context, c *modules.Call, dir string, redact bool) (*payload.Map, error) {
	out, err := gitStdout(ctx, c, []string{"git", "remote", "--verbose"}, gitRunOpts{cwd: dir})
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	for _, line := range strings.Split(payload.Text(out), "\n") {
		f := strings.FieldsFunc(line, cmdPyIsSpace)
		if len(f) < 3 {
			continue
		}
		name, action := f[0], strings.ToLower(strings.TrimRight(strings.TrimLeft(f[len(f)-1], "("), ")"))
		if action != "fetch" && action != "push" {
			c.Log().Warn("Unknown action for remote", "action", action, "remote", name, "cwd", dir)
			continue
		}
		url := strings.Join(f[1:len(f)-1], " ")
		if redact {
			url = gitRedact(url)
		}
		m, _ := ret.Get(name)
		mm, _ := m.(*payload.Map)
		if mm == nil {
			mm = &payload.Map{}
			ret.Set(name, mm)
		}
		mm.Set(action, url)
	}
	return ret, nil
}

func gitRemoteGet(ctx context.Context, c *modules.Call, dir, remote string, redact bool) (any, error) {
	all, err := gitRemotes(ctx, c, dir, redact)
	if err != nil {
		return nil, err
	}
	v, ok := all.Get(remote)
	if !ok {
		return nil, fmt.Errorf("%w: Remote '%s' not present in git checkout located at %s", modules.ErrExecution, remote, dir)
	}
	return v, nil
}

var gitFetchRe = regexp.MustCompile(`^[\s*]*(?:([0-9a-f]+)\.\.([0-9a-f]+)|\[(?:new (tag|branch)|tag update)\])\s+(.+)->`)

func gitFetch(ctx context.Context, c *modules.Call) (any, error) {
	argv, err := gitCmd(c, "fetch")
	if err != nil {
		return nil, err
	}
	if c.Args.Bool("force") {
		argv = append(argv, "--force")
	}
	for _, o := range gitOpts(c) {
		if o != "-f" && o != "--force" {
			argv = append(argv, o)
		}
	}
	if r := c.Args.Get("remote"); payload.Truthy(r) {
		argv = append(argv, pyfmt.Str(r))
	}
	switch rs := c.Args.Get("refspecs").(type) {
	case nil:
	case []any:
		for _, x := range rs {
			argv = append(argv, pyfmt.Str(x))
		}
	default:
		argv = append(argv, strings.Split(pyfmt.Str(rs), ",")...)
	}
	out, err := gitStdout(ctx, c, argv, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), identity: c.Args.Get("identity"), redirectStderr: true, saltenv: c.Args.Str("saltenv")})
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	add := func(k string, v any) {
		old, _ := ret.Get(k)
		l, _ := old.([]any)
		ret.Set(k, append(l, v))
	}
	for _, line := range strings.Split(payload.Text(out), "\n") {
		m := gitFetchRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ref := strings.TrimRightFunc(m[4], cmdPyIsSpace)
		switch {
		case m[3] != "":
			if m[3] == "tag" {
				add("new tags", ref)
			} else {
				add("new branches", ref)
			}
		case m[1] != "":
			ub, _ := ret.Get("updated branches")
			um, _ := ub.(*payload.Map)
			if um == nil {
				um = &payload.Map{}
				ret.Set("updated branches", um)
			}
			um.Set(ref, payload.NewMap("old", m[1], "new", m[2]))
		default:
			add("updated tags", ref)
		}
	}
	return ret, nil
}

func gitMergeBase(ctx context.Context, c *modules.Call) (any, error) {
	kw, err := gitKwargsAny(c, "all")
	if err != nil {
		return nil, err
	}
	all := payload.Truthy(kw["all"])
	isAnc, indep, octo := c.Args.Bool("is_ancestor"), c.Args.Bool("independent"), c.Args.Bool("octopus")
	fork := c.Args.Get("fork_point")
	if all && (indep || isAnc || payload.Truthy(fork)) {
		return nil, fmt.Errorf("%w: The 'all' argument is not compatible with 'independent', 'is_ancestor', or 'fork_point'", modules.ErrInvocation)
	}
	var refs []string
	switch r := c.Args.Get("refs").(type) {
	case nil:
	case []any:
		for _, x := range r {
			refs = append(refs, pyfmt.Str(x))
		}
	default:
		for _, x := range strings.Split(pyfmt.Str(r), ",") {
			refs = append(refs, strings.TrimSpace(x))
		}
	}
	n := 0
	for _, b := range []bool{octo, indep, isAnc, payload.Truthy(fork)} {
		if b {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, fmt.Errorf("%w: Only one of 'octopus', 'independent', 'is_ancestor', and 'fork_point' is permitted", modules.ErrInvocation)
	case isAnc && len(refs) != 2:
		return nil, fmt.Errorf("%w: Two refs/commits are required if 'is_ancestor' is True", modules.ErrInvocation)
	case payload.Truthy(fork) && len(refs) > 1:
		return nil, fmt.Errorf("%w: At most one ref/commit can be passed if 'fork_point' is specified", modules.ErrInvocation)
	case payload.Truthy(fork) && len(refs) == 0:
		refs = []string{"HEAD"}
	}
	argv, err := gitCmd(c, "merge-base")
	if err != nil {
		return nil, err
	}
	argv = append(argv, gitOpts(c)...)
	if all {
		argv = append(argv, "--all")
	}
	switch {
	case octo:
		argv = append(argv, "--octopus")
	case isAnc:
		argv = append(argv, "--is-ancestor")
	case indep:
		argv = append(argv, "--independent")
	case payload.Truthy(fork):
		argv = append(argv, "--fork-point", pyfmt.Str(fork))
	}
	argv = append(argv, refs...)
	res, err := gitExec(ctx, c, argv, gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd")), ignoreRetcode: c.Args.Bool("ignore_retcode"), noFailhard: isAnc})
	if err != nil {
		return nil, err
	}
	if isAnc {
		v, _ := res.Get("retcode")
		rc, _ := cmdPyInt(v)
		return rc == 0, nil
	}
	bases := gitSplitLines(res.Str("stdout"))
	if all {
		return bases, nil
	}
	if len(bases) == 0 {
		return nil, fmt.Errorf("%w: IndexError: list index out of range", modules.ErrExecution)
	}
	return bases[0], nil
}

func gitDiff(ctx context.Context, c *modules.Call) (any, error) {
	noIndex, cached := c.Args.Bool("no_index"), c.Args.Bool("cached")
	if noIndex && cached {
		return nil, fmt.Errorf("%w: The 'no_index' and 'cached' options cannot be used together", modules.ErrExecution)
	}
	argv, err := gitCmd(c, "diff")
	if err != nil {
		return nil, err
	}
	argv = append(argv, gitOpts(c)...)
	var paths []string
	switch p := c.Args.Get("paths").(type) {
	case nil:
	case []any:
		for _, x := range p {
			paths = append(paths, pyfmt.Str(x))
		}
	default:
		paths = strings.Split(pyfmt.Str(p), ",")
	}
	o := gitRunOpts{cwd: c.Args.Get("cwd"), redirectStderr: true}
	i1, i2 := c.Args.Get("item1"), c.Args.Get("item2")
	switch {
	case noIndex:
		o.ignoreRetcode, o.noFailhard = true, true
		argv = append(argv, "--no-index")
	case cached:
		argv = append(argv, "--cached")
		if payload.Truthy(i1) {
			argv = append(argv, pyfmt.Str(i1))
		}
	default:
		for _, v := range []any{i1, i2} {
			if payload.Truthy(v) {
				argv = append(argv, pyfmt.Str(v))
			}
		}
	}
	if len(paths) > 0 {
		argv = append(append(argv, "--"), paths...)
	}
	res, err := gitExec(ctx, c, argv, o)
	if err != nil {
		return nil, err
	}
	return res.Str("stdout"), nil
}

package builtin

// This file is the working-tree part of Salt's git module
// (salt/modules/git.py): add, rm, commit, push, stash, archive and the
// worktree functions (worktree_add, worktree_prune, worktree_rm,
// list_worktrees), each running the same git command with the same flags
// as Salt so that the output and the errors match.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/wire/payload"
)

// gitCwdOpts are the run options of a command in the expanded cwd.
func gitCwdOpts(c *modules.Call) gitRunOpts {
	return gitRunOpts{cwd: gitExpandPath(c, c.Args.Get("cwd"))}
}

// gitWithOpts builds "git <git_opts> sub... <opts>".
func gitWithOpts(c *modules.Call, sub ...string) ([]string, error) {
	argv, err := gitCmd(c, sub...)
	if err != nil {
		return nil, err
	}
	o, err := gitFormatOpts(c.Args.Get("opts"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", modules.ErrInvocation, err)
	}
	return append(argv, o...), nil
}

// gitVersionAbove reports whether the git binary's version is above v
// (LooseVersion comparison of the numeric parts).
func gitVersionAbove(ctx context.Context, c *modules.Call, v []int64) bool {
	res, err := gitExec(ctx, c, []string{"git", "--version"}, gitRunOpts{noFailhard: true})
	if err != nil {
		return false
	}
	s := res.Str("stdout")
	if i := strings.Index(s, "("); i >= 0 {
		s = s[:i]
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return false
	}
	var have []int64
	for _, p := range strings.Split(f[len(f)-1], ".") {
		n, ok := cmdPyInt(p)
		if !ok {
			break
		}
		have = append(have, n)
	}
	for i := 0; i < len(have) && i < len(v); i++ {
		if have[i] != v[i] {
			return have[i] > v[i]
		}
	}
	return len(have) > len(v)
}

func gitWorkFunctions() []modules.Function {
	cwd := req("cwd")
	std := []string{"user", "password", "ignore_retcode", "output_encoding"}
	withStd := func(first []modules.Param, extra ...string) modules.Spec {
		return modules.Spec{Params: gitParams(first, append(extra, std...)...)}
	}
	doc := func(s, ex string) string { return s + "\n\nCLI Example:\n\n    salt myminion " + ex }
	return []modules.Function{
		{Name: "git.add", Spec: withStd([]modules.Param{cwd, req("filename")}, "opts", "git_opts"),
			Doc: doc("Interface to git-add(1)", "git.add /path/to/repo foo/bar.py"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "add", "--verbose")
				if err != nil {
					return nil, err
				}
				o, err := gitFormatOpts(c.Args.Get("opts"))
				if err != nil {
					return nil, fmt.Errorf("%w: %v", modules.ErrInvocation, err)
				}
				for _, x := range o {
					if x != "-v" && x != "--verbose" {
						argv = append(argv, x)
					}
				}
				argv = append(argv, "--", pyfmt.Str(c.Args.Get("filename")))
				return gitStdout(ctx, c, argv, gitCwdOpts(c))
			}},
		{Name: "git.rm", Spec: withStd([]modules.Param{cwd, req("filename")}, "opts", "git_opts"),
			Doc: doc("Interface to git-rm(1)", "git.rm /path/to/repo foo/bar.py"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitWithOpts(c, "rm")
				if err != nil {
					return nil, err
				}
				return gitStdout(ctx, c, append(argv, "--", pyfmt.Str(c.Args.Get("filename"))), gitCwdOpts(c))
			}},
		{Name: "git.commit", Spec: withStd([]modules.Param{cwd, req("message")}, "opts", "git_opts", "user", "password", "filename"),
			Doc: doc("Interface to git-commit(1)", "git.commit /path/to/repo 'The commit message'"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitWithOpts(c, "commit", "-m", pyfmt.Str(c.Args.Get("message")))
				if err != nil {
					return nil, err
				}
				if f := c.Args.Get("filename"); payload.Truthy(f) {
					argv = append(argv, "--", pyfmt.Str(f))
				}
				return gitStdout(ctx, c, argv, gitCwdOpts(c))
			}},
		{Name: "git.push", Spec: modules.Spec{Params: gitParams([]modules.Param{cwd, opt("remote", nil), opt("ref", nil)}, "opts", "git_opts", "user", "password", "identity", "ignore_retcode", "saltenv", "output_encoding"), Kwargs: true},
			Doc: doc("Interface to git-push(1)", "git.push /path/to/repo origin master"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				if _, err := gitKwargs(c); err != nil {
					return nil, err
				}
				argv, err := gitWithOpts(c, "push")
				if err != nil {
					return nil, err
				}
				// Salt appends both, even when they are None.
				argv = append(argv, pyfmt.Str(c.Args.Get("remote")), pyfmt.Str(c.Args.Get("ref")))
				o := gitCwdOpts(c)
				o.identity, o.saltenv = c.Args.Get("identity"), c.Args.Str("saltenv")
				return gitStdout(ctx, c, argv, o)
			}},
		{Name: "git.stash", Spec: withStd([]modules.Param{cwd, opt("action", "save")}, "opts", "git_opts"),
			Doc: doc("Interface to git-stash(1), returns the stdout from the git command", "git.stash /path/to/repo save opts='work in progress'"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitWithOpts(c, "stash", pyfmt.Str(c.Args.Get("action")))
				if err != nil {
					return nil, err
				}
				return gitStdout(ctx, c, argv, gitCwdOpts(c))
			}},
		{Name: "git.archive", Spec: modules.Spec{Params: gitParams([]modules.Param{cwd, req("output"), opt("rev", "HEAD"), opt("prefix", nil)}, "git_opts", "user", "password", "ignore_retcode", "output_encoding"), Kwargs: true},
			Doc: doc("Interface to git-archive(1), exports a tarball/zip file of the repository", "git.archive /path/to/repo /path/to/archive.tar"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				dir := gitExpandPath(c, c.Args.Get("cwd"))
				out := gitExpandPath(c, c.Args.Get("output"))
				kw, err := gitKwargsAny(c, "format")
				if err != nil {
					return nil, err
				}
				argv, err := gitCmd(c, "archive")
				if err != nil {
					return nil, err
				}
				if p := c.Args.Get("prefix"); p != "" {
					prefix := pyfmt.Str(p)
					if !payload.Truthy(p) {
						prefix = filepath.Base(dir) + "/"
						if strings.HasSuffix(dir, "/") {
							prefix = "/"
						}
					}
					argv = append(argv, "--prefix", prefix)
				}
				if f := kw["format"]; payload.Truthy(f) {
					argv = append(argv, "--format", pyfmt.Str(f))
				}
				argv = append(argv, "--output", out, pyfmt.Str(c.Args.Get("rev")))
				o := gitRunOpts{cwd: dir, ignoreRetcode: c.Args.Bool("ignore_retcode")}
				if _, err := gitExec(ctx, c, argv, o); err != nil {
					return nil, err
				}
				return true, nil
			}},
		{Name: "git.worktree_add", Spec: modules.Spec{Params: gitParams([]modules.Param{cwd, req("worktree_path"), opt("ref", nil), opt("reset_branch", nil), opt("force", nil), opt("detach", false)}, "opts", "git_opts", "user", "password", "ignore_retcode", "output_encoding"), Kwargs: true},
			Doc: doc("Interface to git-worktree(1), adds a worktree", "git.worktree_add /path/to/repo/main ../hotfix ref=origin/master"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				kw, err := gitKwargsAny(c, "branch")
				if err != nil {
					return nil, err
				}
				dir := gitExpandPath(c, c.Args.Get("cwd"))
				branch := kw["branch"]
				detach := c.Args.Bool("detach")
				if payload.Truthy(branch) && detach {
					return nil, fmt.Errorf("%w: Only one of 'branch' and 'detach' is allowed", modules.ErrInvocation)
				}
				argv, err := gitCmd(c, "worktree", "add")
				if err != nil {
					return nil, err
				}
				wt := pyfmt.Str(c.Args.Get("worktree_path"))
				if detach {
					if c.Args.Bool("force") {
						c.Log().Warn("'force' argument to git.worktree_add is ignored when detach=True")
					}
					argv = append(argv, "--detach")
				} else {
					b := pyfmt.Str(branch)
					if !payload.Truthy(branch) {
						b = wt[strings.LastIndex(wt, "/")+1:]
					}
					flag := "-b"
					if c.Args.Bool("reset_branch") {
						flag = "-B"
					}
					argv = append(argv, flag, b)
					if c.Args.Bool("force") {
						argv = append(argv, "--force")
					}
				}
				o, err := gitFormatOpts(c.Args.Get("opts"))
				if err != nil {
					return nil, fmt.Errorf("%w: %v", modules.ErrInvocation, err)
				}
				argv = append(append(argv, o...), wt)
				if r := c.Args.Get("ref"); payload.Truthy(r) {
					argv = append(argv, pyfmt.Str(r))
				}
				return gitStdout(ctx, c, argv, gitRunOpts{cwd: dir, redirectStderr: true})
			}},
		{Name: "git.worktree_prune", Spec: withStd([]modules.Param{cwd, opt("dry_run", false), opt("verbose", true), opt("expire", nil)}, "opts", "git_opts"),
			Doc: doc("Interface to git-worktree(1), prunes stale worktree administrative data from the gitdir", "git.worktree_prune /path/to/repo"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				argv, err := gitCmd(c, "worktree", "prune")
				if err != nil {
					return nil, err
				}
				if c.Args.Bool("dry_run") {
					argv = append(argv, "--dry-run")
				}
				if c.Args.Bool("verbose") {
					argv = append(argv, "--verbose")
				}
				if e := c.Args.Get("expire"); payload.Truthy(e) {
					argv = append(argv, "--expire", pyfmt.Str(e))
				}
				o, err := gitFormatOpts(c.Args.Get("opts"))
				if err != nil {
					return nil, fmt.Errorf("%w: %v", modules.ErrInvocation, err)
				}
				ro := gitCwdOpts(c)
				ro.ignoreRetcode = c.Args.Bool("ignore_retcode")
				res, err := gitExec(ctx, c, append(argv, o...), ro)
				if err != nil {
					return nil, err
				}
				// git 2.35.0 and later print the pruned entries on stderr.
				if gitVersionAbove(ctx, c, []int64{2, 35, 0}) {
					return res.Str("stderr"), nil
				}
				return res.Str("stdout"), nil
			}},
		{Name: "git.worktree_rm", Spec: modules.Spec{Params: []modules.Param{cwd, opt("user", nil), opt("output_encoding", nil)}},
			Doc: doc("Recursively removes the worktree located at cwd, returning True if successful", "git.worktree_rm /path/to/worktree"),
			Fn: func(ctx context.Context, c *modules.Call) (any, error) {
				dir := gitExpandPath(c, c.Args.Get("cwd"))
				if _, err := os.Lstat(dir); err != nil {
					return nil, fmt.Errorf("%w: %s does not exist", modules.ErrExecution, dir)
				}
				is, err := callFunction(ctx, c, "git.is_worktree", []any{dir}, payload.NewMap("output_encoding", c.Args.Get("output_encoding")))
				if err != nil {
					return nil, err
				}
				if !payload.Truthy(is) {
					return nil, fmt.Errorf("%w: %s is not a git worktree", modules.ErrExecution, dir)
				}
				if err := os.RemoveAll(dir); err != nil {
					return nil, fmt.Errorf("%w: Unable to remove %s: %v", modules.ErrExecution, dir, err)
				}
				return true, nil
			}},
		{Name: "git.list_worktrees", Spec: modules.Spec{Params: []modules.Param{cwd, opt("stale", false), opt("user", nil), opt("password", nil), opt("output_encoding", nil)}, Kwargs: true},
			Doc: doc("Returns information on worktrees", "git.list_worktrees /path/to/repo"),
			Fn:  gitListWorktrees},
	}
}

// gitListWorktrees is list_worktrees over "git worktree list --porcelain"
// (git 2.7.0 and later).
func gitListWorktrees(ctx context.Context, c *modules.Call) (any, error) {
	dir := gitExpandPath(c, c.Args.Get("cwd"))
	kw, err := gitKwargsAny(c, "all")
	if err != nil {
		return nil, err
	}
	all := payload.Truthy(kw["all"])
	stale := c.Args.Bool("stale")
	if all && stale {
		return nil, fmt.Errorf("%w: 'all' and 'stale' cannot both be set to True", modules.ErrExecution)
	}
	res, err := gitExec(ctx, c, []string{"git", "worktree", "list", "--porcelain"}, gitRunOpts{cwd: dir})
	if err != nil {
		return nil, err
	}
	ret := &payload.Map{}
	tracked := []string{"worktree", "HEAD", "branch"}
	out := strings.TrimFunc(res.Str("stdout"), cmdPyIsSpace)
	if out == "" {
		return ret, nil
	}
	for _, block := range strings.Split(out, "\n\n") {
		data := map[string]string{}
		for _, line := range strings.Split(block, "\n") {
			t := strings.TrimFunc(line, cmdPyIsSpace)
			f := strings.FieldsFunc(t, cmdPyIsSpace)
			var typ, val string
			if len(f) < 2 {
				if line != "detached" {
					c.Log().Warn("git.worktree: Untracked line item", "line", line)
					continue
				}
				typ, val = "branch", "detached"
			} else {
				typ = f[0]
				val = strings.TrimLeftFunc(t[len(typ):], cmdPyIsSpace)
			}
			if !containsStr(tracked, typ) {
				c.Log().Warn("git.worktree: Untracked line item", "line", line)
				continue
			}
			if data[typ] != "" {
				c.Log().Error("git.worktree: Unexpected duplicate entry, skipping", "type", typ, "line", line)
				continue
			}
			data[typ] = val
		}
		var missing []string
		for _, k := range tracked {
			if data[k] == "" {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			c.Log().Error("git.worktree: Incomplete worktree data", "missing", strings.Join(missing, ", "))
			continue
		}
		st, err := os.Stat(data["worktree"])
		isStale := err != nil || !st.IsDir()
		if isStale && !all && !stale || !isStale && stale {
			continue
		}
		wt := &payload.Map{}
		if old, ok := ret.Get(data["worktree"]); ok {
			c.Log().Error("git.worktree: Duplicate worktree path", "path", data["worktree"])
			wt = old.(*payload.Map)
		}
		wt.Set("stale", isStale)
		wt.Set("HEAD", data["HEAD"])
		detached := data["branch"] == "detached"
		wt.Set("detached", detached)
		if detached {
			wt.Set("branch", nil)
			tres, err := gitExec(ctx, c, []string{"git", "tag", "--points-at", data["HEAD"]}, gitRunOpts{cwd: dir})
			if err != nil {
				return nil, err
			}
			if tags := gitSplitLines(tres.Str("stdout")); len(tags) > 0 {
				wt.Set("tags", tags)
			}
		} else {
			wt.Set("branch", strings.Replace(data["branch"], "refs/heads/", "", 1))
		}
		ret.Set(data["worktree"], wt)
	}
	return ret, nil
}

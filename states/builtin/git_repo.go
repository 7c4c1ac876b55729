package builtin

// This file is the repository states of Salt's git state module
// (salt/states/git.py) besides git.latest: git.present (init a bare or
// non-bare repository), git.cloned (clone once, then keep the branch)
// and git.detached (a commit checked out with a detached HEAD), with
// Salt 3006's git module calls, comments, changes and test=True results.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func gitRepoStates() []states.Function {
	return []states.Function{
		{Name: "git.present", Fn: gitPresentState, Spec: modules.Spec{Params: []modules.Param{
			sbReq("name"), sbOpt("force", false), sbOpt("bare", true), sbOpt("template", nil), sbOpt("separate_git_dir", nil),
			sbOpt("shared", nil), sbOpt("user", nil), sbOpt("password", nil), sbOpt("output_encoding", nil)}}},
		{Name: "git.cloned", Fn: gitClonedState, Spec: modules.Spec{Params: []modules.Param{
			sbReq("name"), sbReq("target"), sbOpt("branch", nil), sbOpt("user", nil), sbOpt("password", nil), sbOpt("identity", nil),
			sbOpt("https_user", nil), sbOpt("https_pass", nil), sbOpt("output_encoding", nil)}}},
		{Name: "git.detached", Fn: gitDetachedState, Spec: modules.Spec{Kwargs: true, Params: []modules.Param{
			sbReq("name"), sbReq("rev"), sbReq("target"), sbOpt("remote", "origin"), sbOpt("user", nil), sbOpt("password", nil),
			sbOpt("force_clone", false), sbOpt("force_checkout", false), sbOpt("fetch_remote", true), sbOpt("hard_reset", false),
			sbOpt("submodules", false), sbOpt("identity", nil), sbOpt("https_user", nil), sbOpt("https_pass", nil), sbOpt("output_encoding", nil)}}},
	}
}

// gitNewRun starts a git state run with the common user, password and
// output_encoding arguments.
func gitNewRun(ctx context.Context, c *states.Call, result states.Result) *gitL {
	a := c.Args
	strOrNil := func(k string) any {
		if v := a.Get(k); v != nil {
			return pyfmt.Str(v)
		}
		return nil
	}
	g := &gitL{ctx: ctx, c: c, ret: states.Ret{Name: sbName(c), Result: result, Changes: &payload.Map{}}}
	g.common = payload.NewMap("user", strOrNil("user"), "password", a.Get("password"), "output_encoding", a.Get("output_encoding"))
	return g
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func isRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// gitPresentState is git.present.
func gitPresentState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	g := gitNewRun(ctx, c, states.True)
	name := g.ret.Name
	bare := payload.Truthy(a.Get("bare"))
	bareWord := ""
	if bare {
		bareWord = "bare "
	}
	if isDir(name) {
		if bare && isRegular(filepath.Join(name, "HEAD")) {
			return g.ret, nil
		}
		if !bare {
			if isDir(filepath.Join(name, ".git")) {
				return g.ret, nil
			}
			if v, err := g.git("git.is_worktree", []any{name}); err == nil && payload.Truthy(v) {
				return g.ret, nil
			}
		}
		entries, _ := os.ReadDir(name)
		switch {
		case payload.Truthy(a.Get("force")):
			if c.Test {
				g.ret.Changes.Set("new", name)
				g.ret.Changes.Set("forced init", true)
				return g.neutral(fmt.Sprintf("Target directory %[1]s exists. Since force=True, the contents of %[1]s would be deleted, and a %[2]srepository would be initialized in its place.", name, bareWord))
			}
			c.Env.Log.Debug("removing contents to initialize a repository in its place (force=True set in git.present state)", "target", name)
			if err := os.RemoveAll(name); err != nil {
				return g.fail(fmt.Sprintf("Unable to remove %s: %v", name, err), nil)
			}
			g.ret.Changes.Set("forced init", true)
		case len(entries) > 0:
			return g.fail(fmt.Sprintf("Target '%s' exists, is non-empty, and is not a git repository. Set the 'force' option to True to remove this directory's contents and proceed with initializing a repository", name), nil)
		}
	}
	if c.Test {
		g.ret.Changes.Set("new", name)
		return g.neutral(fmt.Sprintf("New %srepository would be created", bareWord))
	}
	tmpl, sep := a.Get("template"), a.Get("separate_git_dir")
	if _, err := g.git("git.init", nil, "cwd", name, "bare", bare, "template", tmpl, "separate_git_dir", sep, "shared", a.Get("shared")); err != nil {
		return states.Ret{}, err
	}
	actions := []string{fmt.Sprintf("Initialized %srepository in %s", bareWord, name)}
	if payload.Truthy(tmpl) {
		actions = append(actions, "Template directory set to "+pyfmt.Str(tmpl))
	}
	if payload.Truthy(sep) {
		actions = append(actions, "Gitdir set to "+pyfmt.Str(sep))
	}
	g.ret.Changes.Set("new", name)
	g.ret.Comment = gitFormatComments(actions)
	return g.ret, nil
}

// alreadyCloned is _already_cloned.
func (g *gitL) alreadyCloned(target string, branch any) (states.Ret, error) {
	g.ret.Result = states.True
	g.ret.Comment = "Repository already exists at " + target
	if payload.Truthy(branch) {
		g.ret.Comment += fmt.Sprintf(" and is checked out to branch '%s'", pyfmt.Str(branch))
	}
	if len(g.comments) > 0 {
		w := ""
		if g.c.Test {
			w = "that would be "
		}
		g.ret.Comment += "\n\nChanges " + w + "made: " + gitFormatComments(g.comments)
	}
	return g.ret, nil
}

// gitClonedState is git.cloned.
func gitClonedState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	g := gitNewRun(ctx, c, states.False)
	name := g.ret.Name
	if a.Get("target") == nil {
		g.ret.Comment = "'target' argument is required"
		return g.ret, nil
	}
	target := pyfmt.Str(a.Get("target"))
	if !filepath.IsAbs(target) {
		g.ret.Comment = "'target' path must be absolute"
		return g.ret, nil
	}
	var branch any
	if b := a.Get("branch"); b != nil {
		branch = pyfmt.Str(b)
		if branch == "" {
			g.ret.Comment = "Invalid 'branch' argument"
			return g.ret, nil
		}
	}
	withBranch := ""
	if branch != nil {
		withBranch = fmt.Sprintf(" with branch '%s'", branch)
	}
	if _, err := os.Lstat(target); err != nil {
		if c.Test {
			g.ret.Changes.Set("new", name+" => "+target)
			return g.neutral(fmt.Sprintf("%s would be cloned to %s%s", name, target, withBranch))
		}
		var opts any
		if branch != nil {
			opts = []any{"--branch", branch}
		}
		if _, err := g.git("git.clone", []any{target, name}, "opts", opts, "identity", a.Get("identity"),
			"https_user", a.Get("https_user"), "https_pass", a.Get("https_pass")); err != nil {
			return g.fail("Clone failed: "+gitStripExc(err), g.comments)
		}
		g.comments = append(g.comments, fmt.Sprintf("%s cloned to %s%s", name, target, withBranch))
		g.ret.Changes.Set("new", name+" => "+target)
		g.ret.Comment = gitFormatComments(g.comments)
		g.ret.Result = states.True
		return g.ret, nil
	}
	if _, err := g.git("git.status", []any{target}); err != nil {
		g.ret.Comment = sbErrText(err)
		return g.ret, nil
	}
	if branch == nil {
		return g.alreadyCloned(target, nil)
	}
	current, err := g.gitStr("git.current_branch", []any{target})
	if err != nil {
		return states.Ret{}, err
	}
	if current == branch {
		return g.alreadyCloned(target, branch)
	}
	branchChanges := func() { g.ret.Changes.Set("branch", payload.NewMap("old", current, "new", branch)) }
	if c.Test {
		branchChanges()
		return g.neutral(fmt.Sprintf("Branch would be changed to '%s'", branch))
	}
	checkoutRev, checkoutOpts := any(branch), any(nil)
	if _, err := g.git("git.rev_parse", []any{target}, "rev", branch, "ignore_retcode", true); err != nil {
		checkoutRev = "origin/" + pyfmt.Str(branch)
		checkoutOpts = []any{"-b", branch}
	}
	if _, err := g.git("git.checkout", []any{target}, "rev", checkoutRev, "opts", checkoutOpts); err != nil {
		return g.fail(fmt.Sprintf("Failed to change branch to '%s': %s", branch, sbErrText(err)), g.comments)
	}
	g.comments = append(g.comments, fmt.Sprintf("Branch changed to '%s'", branch))
	branchChanges()
	g.ret.Comment = gitFormatComments(g.comments)
	g.ret.Result = states.True
	return g.ret, nil
}

// gitDetachedState is git.detached.
func gitDetachedState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	g := gitNewRun(ctx, c, states.True)
	name := g.ret.Name
	if kw := a.CleanKwargs(); kw.Len() > 0 {
		var bad []string
		for _, it := range kw.Items() {
			bad = append(bad, payload.KeyString(it.Key)+"="+pyfmt.Str(it.Value))
		}
		return g.fail("The following keyword arguments are not valid: "+strings.Join(bad, ", "), nil)
	}
	if !payload.Truthy(a.Get("rev")) {
		return g.fail(fmt.Sprintf("'%s' is not a valid value for the 'rev' argument", pyfmt.Str(a.Get("rev"))), nil)
	}
	if !payload.Truthy(a.Get("target")) {
		// Salt formats this message with rev.
		return g.fail(fmt.Sprintf("'%s' is not a valid value for the 'target' argument", pyfmt.Str(a.Get("rev"))), nil)
	}
	rev := pyfmt.Str(a.Get("rev"))
	target := pyfmt.Str(a.Get("target"))
	if !filepath.IsAbs(target) {
		return g.fail(fmt.Sprintf("Target '%s' is not an absolute path", target), nil)
	}
	remote := "origin"
	if r := a.Get("remote"); r != nil {
		remote = pyfmt.Str(r)
	}
	saltenv := fileNewRun(ctx, c).saltenv()
	identity, msg := gitIdentities(ctx, c, a.Get("identity"), "Identity")
	if msg != "" {
		return g.fail(msg, nil)
	}
	var httpsUser, httpsPass any
	if v := a.Get("https_user"); v != nil {
		httpsUser = pyfmt.Str(v)
	}
	if v := a.Get("https_pass"); v != nil {
		httpsPass = pyfmt.Str(v)
	}
	if isRegular(target) {
		return g.fail(fmt.Sprintf("Target '%s' exists and is a regular file, cannot proceed", target), nil)
	}
	if _, err := gitAddBasicAuth(name, httpsUser, httpsPass); err != nil {
		return g.fail(err.Error(), nil)
	}
	revType := "ref"
	if len(rev) <= 40 && gitAllHex(rev) {
		rev = strings.ToLower(rev)
		revType = "hash"
	}
	hashLocal := false
	var localCommit any
	isRepo := isDir(filepath.Join(target, ".git"))
	if !isRepo {
		if v, err := g.git("git.is_worktree", []any{target}); err == nil && payload.Truthy(v) {
			isRepo = true
		}
	}
	if isRepo {
		localCommit, _ = g.localRevBranch(target)
		if revType == "hash" {
			_, err := g.git("git.describe", []any{target, rev}, "ignore_retcode", true)
			hashLocal = err == nil
		} else {
			v, err := g.git("git.remotes", []any{target}, "redact_auth", false)
			if err != nil {
				return states.Ret{}, err
			}
			remotes, _ := v.(*payload.Map)
			var current any
			ok := false
			if remotes != nil {
				if rv, has := remotes.Get(remote); has {
					if m, _ := rv.(*payload.Map); m != nil {
						current, _ = m.Get("fetch")
						ok = strings.Contains(payload.Text(current), name)
					}
				}
			}
			if !ok {
				if c.Test {
					return g.neutral(fmt.Sprintf("Remote %s would be set to %s", remote, name))
				}
				if _, err := g.git("git.remote_set", []any{target}, "url", name, "remote", remote, "https_user", httpsUser, "https_pass", httpsPass); err != nil {
					return states.Ret{}, err
				}
				g.comments = append(g.comments, fmt.Sprintf("Remote %s updated from '%s' to '%s'", remote, pyfmt.Str(current), name))
			}
		}
	} else {
		if isDir(target) {
			entries, _ := os.ReadDir(target)
			if payload.Truthy(a.Get("force_clone")) {
				if c.Test {
					return g.neutral(fmt.Sprintf("Target directory %[1]s exists. Since force_clone=True, the contents of %[1]s would be deleted, and %[2]s would be cloned into this directory.", target, name))
				}
				var errs []string
				for _, e := range entries {
					p := filepath.Join(target, e.Name())
					if err := os.RemoveAll(p); err != nil && !os.IsNotExist(err) {
						errs = append(errs, fmt.Sprintf("  %s\n    %v", p, err))
					}
				}
				if len(errs) > 0 {
					return g.fail("Unable to remove\n"+strings.Join(errs, "\n"), g.comments)
				}
				g.ret.Changes.Set("forced clone", true)
			} else if len(entries) > 0 {
				return g.fail(fmt.Sprintf("Target '%s' exists, is non-empty and is not a git repository. Set the 'force_clone' option to True to remove this directory's contents and proceed with cloning the remote repository", target), nil)
			}
		}
		if c.Test {
			return g.neutral(fmt.Sprintf("Repository %s would be cloned to %s", name, target))
		}
		opts := []any{"--no-checkout"}
		if remote != "origin" {
			opts = append(opts, "--origin", remote)
		}
		if _, err := g.git("git.clone", []any{target, name}, "opts", opts, "identity", identity, "https_user", httpsUser,
			"https_pass", httpsPass, "saltenv", saltenv); err != nil {
			return g.fail(gitStripExc(err), g.comments)
		}
		g.comments = append(g.comments, fmt.Sprintf("%s cloned to %s", name, target))
	}
	if !hashLocal && a.Get("fetch_remote") != false {
		if c.Test {
			return g.neutral(fmt.Sprintf("Repository remote %s would be fetched", remote))
		}
		refspecs := []any{"refs/heads/*:refs/remotes/" + remote + "/*", "+refs/tags/*:refs/tags/*"}
		v, err := g.git("git.fetch", []any{target}, "remote", remote, "force", true, "refspecs", refspecs, "identity", identity, "saltenv", saltenv)
		if err != nil {
			return g.fail("Fetch failed:\n\n"+sbErrText(err), g.comments)
		}
		if payload.Truthy(v) {
			g.comments = append(g.comments, fmt.Sprintf("Remote %s was fetched, resulting in updated refs", remote))
		}
	}
	var checkout any
	if revType == "hash" {
		v, err := g.git("git.describe", []any{target, rev})
		if err != nil {
			return states.Ret{}, err
		}
		if !payload.Truthy(v) {
			return g.fail(fmt.Sprintf("Revision '%s' does not exist", rev), nil)
		}
		checkout = rev
	} else {
		v, err := g.git("git.remote_refs", []any{target}, "identity", identity, "https_user", httpsUser, "https_pass", httpsPass, "ignore_retcode", false)
		if err != nil {
			return g.fail(fmt.Sprintf("Failed to list refs for %s: %s", remote, gitStripExc(err)), nil)
		}
		refs, _ := v.(*payload.Map)
		if refs == nil {
			refs = &payload.Map{}
		}
		if x, ok := refs.Get("refs/remotes/" + remote + "/" + rev); ok {
			checkout = x
		} else if x, ok := refs.Get("refs/tags/" + rev); ok {
			checkout = x
		} else {
			return g.fail(fmt.Sprintf("Revision '%s' does not exist", rev), nil)
		}
	}
	if payload.Truthy(a.Get("hard_reset")) {
		if c.Test {
			return g.neutral(fmt.Sprintf("Hard reset to HEAD would be performed on %s", target))
		}
		if _, err := g.git("git.reset", []any{target}, "opts", []any{"--hard", "HEAD"}); err != nil {
			return states.Ret{}, err
		}
		g.comments = append(g.comments, "Repository was reset to HEAD before checking out revision")
	}
	var newRev any
	if !(payload.Text(checkout) == payload.Text(localCommit) && localCommit != nil) {
		if c.Test {
			g.ret.Changes.Set("HEAD", payload.NewMap("old", localCommit, "new", checkout))
			return g.neutral(fmt.Sprintf("Commit ID %s would be checked out at %s", pyfmt.Str(checkout), target))
		}
		if _, err := g.git("git.checkout", []any{target, checkout}, "force", a.Get("force_checkout")); err != nil {
			return states.Ret{}, err
		}
		g.comments = append(g.comments, fmt.Sprintf("Commit ID %s was checked out at %s", pyfmt.Str(checkout), target))
		if v, err := g.gitStr("git.revision", nil, "cwd", target, "ignore_retcode", true); err == nil {
			newRev = v
		}
	}
	if payload.Truthy(a.Get("submodules")) {
		if _, err := g.git("git.submodule", []any{target, "update"}, "opts", []any{"--init", "--recursive"}, "identity", identity); err != nil {
			return states.Ret{}, err
		}
		g.comments = append(g.comments, "Submodules were updated")
	}
	if newRev != nil {
		g.ret.Changes.Set("HEAD", payload.NewMap("old", localCommit, "new", newRev))
	} else {
		g.comments = append(g.comments, "Already checked out at correct revision")
	}
	g.ret.Comment = gitFormatComments(g.comments)
	return g.ret, nil
}

// gitAddBasicAuth is add_http_basic_auth(https_only=True) with Salt's
// ValueError text.
func gitAddBasicAuth(u string, user, pass any) (string, error) {
	if user == nil && pass == nil {
		return u, nil
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || strings.ToLower(scheme) != "https" {
		return "", fmt.Errorf("Basic Auth only supported for HTTPS")
	}
	auth := pyfmt.Str(user)
	if pass != nil {
		auth += ":" + pyfmt.Str(pass)
	}
	return scheme + "://" + auth + "@" + rest, nil
}

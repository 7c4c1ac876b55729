package builtin

// This file is git.latest of Salt's git state module (salt/states/git.py):
// the same sequence of git module calls, change keys ("new", "revision",
// "forced update", "forced clone", "new_tags", "deleted_tags") and
// comments as Salt 3006.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/modules"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

func gitLatestStates() []states.Function {
	return []states.Function{
		{Name: "git.latest", Fn: gitLatestState, Spec: modules.Spec{Kwargs: true, Params: []modules.Param{
			sbReq("name"), sbReq("target"), sbOpt("rev", "HEAD"), sbOpt("branch", nil), sbOpt("user", nil), sbOpt("password", nil),
			sbOpt("update_head", true), sbOpt("force_checkout", false), sbOpt("force_clone", false), sbOpt("force_fetch", false),
			sbOpt("force_reset", false), sbOpt("submodules", false), sbOpt("bare", false), sbOpt("mirror", false), sbOpt("remote", "origin"),
			sbOpt("fetch_tags", true), sbOpt("sync_tags", true), sbOpt("depth", nil), sbOpt("identity", nil), sbOpt("https_user", nil),
			sbOpt("https_pass", nil), sbOpt("refspec_branch", "*"), sbOpt("refspec_tag", "*"), sbOpt("output_encoding", nil)}}},
	}
}

// gitIdentities checks the identity argument of git.latest and
// git.detached/cloned: a string or a list of paths, each ~-expanded, a
// salt:// one cached (on the state's saltenv) to check the copy, every one
// absolute. It returns the expanded list (nil without identity) or the
// failure message, which begins with word ("identity" or "Identity", as
// each of Salt's states spells it).
func gitIdentities(ctx context.Context, c *states.Call, idv any, word string) (identity any, msg string) {
	if idv == nil {
		return nil, ""
	}
	var ids []any
	switch x := idv.(type) {
	case string:
		ids = []any{x}
	case []any:
		ids = x
	default:
		return nil, word + " must be either a list or a string"
	}
	var out []any
	for _, x := range ids {
		p := fileExpandUser(pyfmt.Str(x))
		out = append(out, p)
		check := p
		if strings.Contains(p, "salt://") {
			v, err := sbExec(ctx, c, "cp.cache_file", []any{p, fileNewRun(ctx, c).saltenv()}, nil)
			if err != nil {
				return nil, fmt.Sprintf("%s '%s' does not exist.", word, p)
			}
			check = payload.Text(v)
		}
		if !filepath.IsAbs(check) {
			return nil, fmt.Sprintf("%s '%s' is not an absolute path", word, check)
		}
	}
	return out, ""
}

// gitL is one git.latest run.
type gitL struct {
	ctx      context.Context
	c        *states.Call
	ret      states.Ret
	comments []string
	common   *payload.Map
}

func gitFormatComments(comments []string) string {
	s := strings.Join(comments, ". ")
	if len(comments) > 1 {
		s += "."
	}
	return s
}

func gitShort(s any) any {
	if s == nil {
		return nil
	}
	str := payload.Text(s)
	if len(str) > 7 {
		return str[:7]
	}
	return str
}

func (g *gitL) fail(msg string, comments []string) (states.Ret, error) {
	g.ret.Result = states.False
	if len(comments) > 0 {
		msg += "\n\nChanges already made: " + gitFormatComments(comments)
	}
	g.ret.Comment = msg
	return g.ret, nil
}

func (g *gitL) uptodate(target, comments string, localChanges bool) (states.Ret, error) {
	g.ret.Comment = fmt.Sprintf("Repository %s is up-to-date", target)
	if localChanges {
		g.ret.Comment += ", but with uncommitted changes. Set 'force_reset' to True to purge uncommitted changes."
	}
	if comments != "" {
		w := ""
		if g.c.Test {
			w = "that would be "
		}
		// Salt passes the already formatted text to _format_comments
		// again, which joins its characters.
		chars := strings.Split(comments, "")
		g.ret.Comment += fmt.Sprintf("\n\nChanges %smade: %s", w, gitFormatComments(chars))
	}
	return g.ret, nil
}

func (g *gitL) neutral(comment string) (states.Ret, error) {
	g.ret.Result = states.None
	g.ret.Comment = comment
	return g.ret, nil
}

// git calls an execution function with the common user/password/encoding.
func (g *gitL) git(fun string, args []any, kw ...any) (any, error) {
	m := g.common.Clone()
	for i := 0; i+1 < len(kw); i += 2 {
		m.Set(kw[i].(string), kw[i+1])
	}
	return sbExec(g.ctx, g.c, fun, args, m)
}

func (g *gitL) gitStr(fun string, args []any, kw ...any) (string, error) {
	v, err := g.git(fun, args, kw...)
	if err != nil {
		return "", err
	}
	return payload.Text(v), nil
}

func (g *gitL) strList(fun string, args []any) ([]string, error) {
	v, err := g.git(fun, args)
	if err != nil {
		return nil, err
	}
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, payload.Text(x))
	}
	return out, nil
}

func gitRevsEqual(a, b any, revType string) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	if revType == "sha1" {
		return strings.HasPrefix(payload.Text(a), payload.Text(b))
	}
	return payload.Text(a) == payload.Text(b)
}

func (g *gitL) localRevBranch(target string) (any, any) {
	var rev, br any
	if v, err := g.gitStr("git.revision", []any{target}, "ignore_retcode", true); err == nil {
		rev = v
	}
	if v, err := g.gitStr("git.current_branch", []any{target}, "ignore_retcode", true); err == nil {
		br = v
	}
	return rev, br
}

func (g *gitL) notFastForward(rev string, pre, post any, branch, localBranch, defaultBranch any, localChanges bool) (states.Ret, error) {
	branchMsg := ""
	if branch == nil {
		if rev != "HEAD" {
			if !pyfmt.Equal(localBranch, rev) {
				branchMsg = fmt.Sprintf(" The desired rev (%s) differs from the name of the local branch (%s), if the desired rev is a branch name then a forced update could possibly be avoided by setting the 'branch' argument to '%s' instead.", rev, pyfmt.Str(localBranch), rev)
			}
		} else if defaultBranch != nil && !pyfmt.Equal(localBranch, defaultBranch) {
			d := pyfmt.Str(defaultBranch)
			branchMsg = fmt.Sprintf(" The default remote branch (%s) differs from the local branch (%s). This could be caused by changing the default remote branch, or if the local branch was manually changed. Rather than forcing an update, it may be advisable to set the 'branch' argument to '%s' instead. To ensure that this state follows the '%s' branch instead of the remote HEAD, set the 'rev' argument to '%s'.", d, pyfmt.Str(localBranch), d, d, d)
		}
	}
	ps, qs := pyfmt.Str(gitShort(pre)), pyfmt.Str(gitShort(post))
	what := "to " + qs
	if localChanges && ps != qs {
		what = fmt.Sprintf("from %s to %s", ps, qs)
	}
	after := ""
	if branch != nil && !pyfmt.Equal(branch, localBranch) {
		after = fmt.Sprintf(" (after checking out local branch '%s')", pyfmt.Str(branch))
	}
	why := "this is not a fast-forward merge"
	or, discard := "", ""
	if localChanges {
		why, or, discard = "there are uncommitted changes", " (or 'remote-changes')", " and discard these changes"
	}
	return g.fail(fmt.Sprintf("Repository would be updated %s%s, but %s. Set 'force_reset' to True%s to force this update%s.%s", what, after, why, or, discard, branchMsg), g.comments)
}

func gitLatestState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	name := sbName(c)
	g := &gitL{ctx: ctx, c: c, ret: states.Ret{Name: name, Result: states.True, Changes: &payload.Map{}}}
	if kw := a.CleanKwargs(); kw.Len() > 0 {
		var bad []string
		for _, it := range kw.Items() {
			bad = append(bad, payload.KeyString(it.Key)+"="+pyfmt.Str(it.Value))
		}
		return g.fail("The following keyword arguments are not valid: "+strings.Join(bad, ", "), nil)
	}
	if !payload.Truthy(a.Get("remote")) {
		return g.fail("'remote' argument is required", nil)
	}
	if !payload.Truthy(a.Get("target")) {
		return g.fail("'target' argument is required", nil)
	}
	if !payload.Truthy(a.Get("rev")) {
		return g.fail(fmt.Sprintf("'%s' is not a valid value for the 'rev' argument", pyfmt.Str(a.Get("rev"))), nil)
	}
	forceReset := a.Get("force_reset")
	switch fr := forceReset.(type) {
	case bool:
	case string:
		if fr != "remote-changes" {
			return g.fail("'force_reset' must be one of True, False, or 'remote-changes'", nil)
		}
	default:
		n, ok := fr.(int64)
		if !ok || (n != 0 && n != 1) {
			return g.fail("'force_reset' must be one of True, False, or 'remote-changes'", nil)
		}
		forceReset = n == 1
	}
	frTrue := forceReset == true
	frFalse := forceReset == false
	rev := pyfmt.Str(a.Get("rev"))
	target := pyfmt.Str(a.Get("target"))
	if !filepath.IsAbs(target) {
		return g.fail(fmt.Sprintf("target '%s' is not an absolute path", target), nil)
	}
	strOrNil := func(k string) any {
		if v := a.Get(k); v != nil {
			return pyfmt.Str(v)
		}
		return nil
	}
	branch, user, password := strOrNil("branch"), strOrNil("user"), strOrNil("password")
	remote := pyfmt.Str(a.Get("remote"))
	httpsUser, httpsPass := strOrNil("https_user"), strOrNil("https_pass")
	g.common = payload.NewMap("user", user, "password", password, "output_encoding", a.Get("output_encoding"))
	identity, msg := gitIdentities(ctx, c, a.Get("identity"), "identity")
	if msg != "" {
		return g.fail(msg, nil)
	}
	useLFS := false
	if v, err := sbExec(ctx, c, "git.config_get_regexp", []any{`filter\.lfs\.`}, payload.NewMap("global", true, "ignore_retcode", true)); err == nil {
		useLFS = payload.Truthy(v)
	}
	var lfsKw []any
	if useLFS {
		lfsKw = []any{"identity", identity}
	}
	if fileIsFile(target) {
		return g.fail(fmt.Sprintf("Target '%s' exists and is a regular file, cannot proceed", target), nil)
	}
	if httpsUser != nil || httpsPass != nil {
		if !strings.HasPrefix(strings.ToLower(name), "https://") {
			return g.fail("Basic Auth only supported for HTTPS", nil)
		}
	}
	desiredFetchURL := name
	if httpsUser != nil || httpsPass != nil {
		auth := pyfmt.Str(httpsUser)
		if httpsPass != nil {
			auth += ":" + pyfmt.Str(httpsPass)
		}
		desiredFetchURL = "https://" + auth + "@" + name[len("https://"):]
	}
	redactedFetchURL := archiveRedactBasic(desiredFetchURL)
	bare, mirror := a.Bool("bare"), a.Bool("mirror")
	if mirror {
		bare = true
	}
	if rev != "HEAD" && bare {
		return g.fail("'rev' is not compatible with the 'mirror' and 'bare' arguments", nil)
	}
	var refspecs []any
	if a.Bool("fetch_tags") {
		rb, rt := pyfmt.Str(a.Get("refspec_branch")), pyfmt.Str(a.Get("refspec_tag"))
		refspecs = []any{fmt.Sprintf("refs/heads/%s:refs/remotes/%s/%s", rb, remote, rb), fmt.Sprintf("+refs/tags/%s:refs/tags/%s", rt, rt)}
	}
	saltenv := fileNewRun(ctx, c).saltenv()
	refsV, err := g.git("git.remote_refs", []any{name}, "heads", false, "tags", false, "identity", identity, "https_user", httpsUser,
		"https_pass", httpsPass, "ignore_retcode", false, "saltenv", saltenv)
	if err != nil {
		return g.fail("Failed to check remote refs: "+gitStripExc(err), nil)
	}
	allRemote, _ := refsV.(*payload.Map)
	if allRemote == nil {
		allRemote = &payload.Map{}
	}
	var headRev, defaultBranch any
	if h, ok := allRemote.Get("HEAD"); ok {
		headRev = h
		for _, it := range allRemote.Items() {
			k := payload.KeyString(it.Key)
			if strings.HasPrefix(k, "refs/heads/") && pyfmt.Equal(it.Value, h) {
				defaultBranch = strings.TrimPrefix(k, "refs/heads/")
				break
			}
		}
	}
	var desiredUpstream any = false
	var remoteRev any
	remoteRevType := ""
	var remoteLoc any
	if !bare {
		if rev == "HEAD" {
			if headRev != nil {
				remoteRev, desiredUpstream, remoteRevType = headRev, nil, "sha1"
			}
		} else if v, ok := allRemote.Get("refs/heads/" + rev); ok {
			remoteRev, desiredUpstream, remoteRevType = v, remote+"/"+rev, "branch"
		} else if v, ok := allRemote.Get("refs/tags/" + rev + "^{}"); ok {
			remoteRev, remoteRevType = v, "tag"
		} else if v, ok := allRemote.Get("refs/tags/" + rev); ok {
			remoteRev, remoteRevType = v, "tag"
		} else if len(rev) <= 40 && gitAllHex(rev) {
			rev = strings.ToLower(rev)
			remoteRev, remoteRevType = rev, "sha1"
		}
		switch {
		case remoteRevType == "sha1":
			if rev == "HEAD" {
				remoteLoc = "remote HEAD (" + pyfmt.Str(gitShort(remoteRev)) + ")"
			} else {
				remoteLoc = pyfmt.Str(gitShort(remoteRev))
			}
		case remoteRev != nil:
			what := rev
			if remoteRevType == "branch" {
				what = pyfmt.Str(desiredUpstream)
			}
			remoteLoc = fmt.Sprintf("%s (%s)", what, pyfmt.Str(gitShort(remoteRev)))
		}
	}
	depth := a.Get("depth")
	if depth != nil && remoteRevType != "branch" && remoteRevType != "tag" {
		return g.fail("When 'depth' is used, 'rev' must be set to the name of a branch or tag on the remote repository", nil)
	}
	if remoteRev == nil && !bare && rev != "HEAD" {
		return g.fail(fmt.Sprintf("No revision matching '%s' exists in the remote repository", rev), nil)
	}
	check := ".git"
	if bare {
		check = "refs"
	}
	isRepo := fileIsDir(pyJoinPath(target, check))
	if !isRepo {
		if v, err := g.git("git.is_worktree", []any{target}); err == nil {
			isRepo = payload.Truthy(v)
		}
	}
	remoteLocStr := pyfmt.Str(remoteLoc)
	capitalize := func(s string) string {
		if s == "" {
			return s
		}
		return strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
	}
	updateHead := a.Bool("update_head")
	if isRepo {
		res, err := g.existing(target, name, rev, remote, branch, remoteRev, remoteRevType, remoteLocStr, desiredUpstream, defaultBranch,
			desiredFetchURL, redactedFetchURL, httpsUser, httpsPass, identity, refspecs, forceReset, frTrue, frFalse, bare, updateHead, saltenv, lfsKw, capitalize)
		if err != nil {
			msg := sbErrText(err)
			if errors.Is(err, modules.ErrExecution) {
				msg = gitStripExc(err)
			}
			return g.fail(msg, g.comments)
		}
		return res, nil
	}
	if fileIsDir(target) {
		entries, _ := os.ReadDir(target)
		if a.Bool("force_clone") {
			if c.Test {
				g.ret.Changes.Set("forced clone", true)
				g.ret.Changes.Set("new", name+" => "+target)
				return g.neutral(fmt.Sprintf("Target directory %s exists. Since force_clone=True, the contents of %s would be deleted, and %s would be cloned into this directory.", target, target, name))
			}
			var errs []string
			for _, e := range entries {
				p := pyJoinPath(target, e.Name())
				if err := os.RemoveAll(p); err != nil {
					errs = append(errs, fmt.Sprintf("  %s\n    %s", p, filePyOSError(err)))
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
		g.ret.Changes.Set("new", name+" => "+target)
		return g.neutral(fmt.Sprintf("Repository %s would be cloned to %s", name, target))
	}
	ret, err := g.clone(target, name, rev, remote, branch, remoteRev, remoteRevType, remoteLocStr, desiredUpstream, allRemote,
		httpsUser, httpsPass, identity, bare, mirror, depth, saltenv)
	if err != nil {
		msg := sbErrText(err)
		if errors.Is(err, modules.ErrExecution) {
			msg = gitStripExc(err)
		}
		return g.fail(msg, g.comments)
	}
	return ret, nil
}

func gitAllHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// archiveRedactBasic is redact_http_basic_auth.
func archiveRedactBasic(s string) string { return archiveRedact(s) }

// branchOpts is _get_branch_opts for git >= 1.8.0.
func gitBranchOpts(branch any, allLocal []string, desiredUpstream any) []any {
	if branch != nil && !containsString(allLocal, pyfmt.Str(branch)) {
		return nil
	}
	return []any{"--set-upstream-to", desiredUpstream}
}

func (g *gitL) upstreamOf(target string, br any) any {
	if br == nil {
		return nil
	}
	v, err := g.gitStr("git.rev_parse", []any{target, pyfmt.Str(br) + "@{upstream}"}, "opts", []any{"--abbrev-ref"}, "ignore_retcode", true)
	if err != nil {
		return false
	}
	return v
}

// trackingAction decides the upstream change: (action, branch opts).
func trackingAction(upstream, desiredUpstream any, branch any, allLocal []string) (string, []any) {
	switch {
	case !payload.Truthy(upstream) && payload.Truthy(desiredUpstream):
		return "Tracking branch was set to " + pyfmt.Str(desiredUpstream), gitBranchOpts(branch, allLocal, desiredUpstream)
	case payload.Truthy(upstream) && desiredUpstream == false:
		return "Tracking branch was unset", []any{"--unset-upstream"}
	case payload.Truthy(desiredUpstream) && !pyfmt.Equal(upstream, desiredUpstream):
		return "Tracking branch was updated to " + pyfmt.Str(desiredUpstream), gitBranchOpts(branch, allLocal, desiredUpstream)
	}
	return "", nil
}

func (g *gitL) existing(target, name, rev, remote string, branch, remoteRev any, remoteRevType, remoteLoc string, desiredUpstream, defaultBranch any,
	desiredFetchURL, redactedFetchURL string, httpsUser, httpsPass, identity any, refspecs []any, forceReset any, frTrue, frFalse, bare, updateHead bool,
	saltenv string, lfsKw []any, capitalize func(string) string) (states.Ret, error) {
	test := g.c.Test
	a := g.c.Args
	allLocalBranches, err := g.strList("git.list_branches", []any{target})
	if err != nil {
		return states.Ret{}, err
	}
	tagList, err := g.strList("git.list_tags", []any{target})
	if err != nil {
		return states.Ret{}, err
	}
	allLocalTags := map[string]bool{}
	for _, t := range tagList {
		allLocalTags[t] = true
	}
	localRev, localBranch := g.localRevBranch(target)
	if !bare && remoteRev == nil && localRev != nil {
		return g.fail("Remote repository is empty, cannot update from a non-empty to an empty repository", nil)
	}
	baseRev, baseBranch := localRev, localBranch
	needBranchChange := branch != nil && !pyfmt.Equal(branch, localBranch)
	if needBranchChange {
		if !containsString(allLocalBranches, pyfmt.Str(branch)) {
			baseRev = remoteRev
		} else {
			baseBranch = branch
			v, err := g.gitStr("git.rev_parse", []any{target, pyfmt.Str(branch) + "^{commit}"}, "ignore_retcode", true)
			if err != nil {
				return g.fail(fmt.Sprintf("Unable to get position of local branch '%s': %s", pyfmt.Str(branch), gitStripExc(err)), g.comments)
			}
			baseRev = v
		}
	}
	remotesV, err := g.git("git.remotes", []any{target}, "redact_auth", false)
	if err != nil {
		return states.Ret{}, err
	}
	remotes, _ := remotesV.(*payload.Map)
	if remotes == nil {
		remotes = &payload.Map{}
	}
	revsMatch := gitRevsEqual(localRev, remoteRev, remoteRevType)
	localChanges := false
	if !bare {
		if d, err := g.git("git.diff", []any{target, "HEAD"}); err == nil {
			localChanges = payload.Truthy(d)
		}
	}
	if localChanges && revsMatch {
		if frTrue {
			msg := fmt.Sprintf("%s is up-to-date, but with uncommitted changes. Since 'force_reset' is set to True, these local changes would be reset. To only reset when there are changes in the remote repository, set 'force_reset' to 'remote-changes'.", target)
			if test {
				g.ret.Changes.Set("forced update", true)
				if len(g.comments) > 0 {
					msg += gitFormatComments(g.comments)
				}
				return g.neutral(msg)
			}
		} else {
			return g.uptodate(target, gitFormatComments(g.comments), localChanges)
		}
	}
	hasRemoteRev := false
	if remoteRevType == "sha1" && baseRev != nil && strings.HasPrefix(payload.Text(baseRev), payload.Text(remoteRev)) {
		hasRemoteRev = true
	} else if remoteRev != nil {
		if _, err := g.gitStr("git.rev_parse", []any{target, payload.Text(remoteRev) + "^{commit}"}, "ignore_retcode", true); err == nil {
			switch remoteRevType {
			case "branch":
				if remotes.Has(remote) {
					if lc, err := g.gitStr("git.rev_parse", []any{target, desiredUpstream}, "ignore_retcode", true); err == nil && lc == payload.Text(remoteRev) {
						hasRemoteRev = true
					}
				}
			case "tag":
				if allLocalTags[rev] {
					var localTag any
					if v, err := g.gitStr("git.rev_parse", []any{target, rev + "^{commit}"}, "ignore_retcode", true); err == nil {
						localTag = v
					}
					if pyfmt.Equal(localTag, remoteRev) {
						hasRemoteRev = true
					} else if !payload.Truthy(forceReset) {
						return g.fail(fmt.Sprintf("'%s' is a tag, but the remote SHA1 for this tag (%s) doesn't match the local SHA1 (%s). Set 'force_reset' to True to force this update.", rev, pyfmt.Str(gitShort(remoteRev)), pyfmt.Str(gitShort(localTag))), nil)
					}
				}
			case "sha1":
				hasRemoteRev = true
			}
		}
	}
	// fastForward: nil, true or false (Python's None/True/False).
	var fastForward any
	if localChanges && forceReset != "remote-changes" {
		fastForward = false
	}
	mergeBase := func() (any, error) {
		if baseRev == nil {
			return true, nil
		}
		return g.git("git.merge_base", []any{target}, "refs", []any{baseRev, remoteRev}, "is_ancestor", true, "ignore_retcode", true)
	}
	if hasRemoteRev {
		if !revsMatch && !updateHead && (branch == nil || pyfmt.Equal(branch, localBranch)) {
			loc := remoteLoc
			if rev == "HEAD" {
				loc = capitalize(remoteLoc)
			}
			g.ret.Comment = fmt.Sprintf("%s is already present and local HEAD (%s) does not match, but update_head=False. HEAD has not been updated locally.", loc, pyfmt.Str(gitShort(localRev)))
			return g.ret, nil
		}
		if fastForward != false {
			v, err := mergeBase()
			if err != nil {
				return states.Ret{}, err
			}
			fastForward = v
		}
	}
	mergeAction := "updated"
	if fastForward == false {
		if frFalse {
			return g.notFastForward(rev, baseRev, remoteRev, branch, localBranch, defaultBranch, localChanges)
		}
		mergeAction = "hard-reset"
	} else if fastForward == true {
		mergeAction = "fast-forwarded"
	}
	var upstream any
	if baseBranch != nil {
		upstream = g.upstreamOf(target, baseBranch)
	}
	var fetchURL any
	if r, ok := remotes.Get(remote); ok {
		if m, ok := r.(*payload.Map); ok {
			fetchURL, _ = m.Get("fetch")
		}
	}
	if remoteRev != nil && !pyfmt.Equal(desiredFetchURL, fetchURL) {
		if test {
			actions := []string{fmt.Sprintf("Remote '%s' would be changed from %s to %s", remote, archiveRedactBasic(pyfmt.Str(fetchURL)), redactedFetchURL)}
			if !hasRemoteRev {
				actions = append(actions, "Remote would be fetched")
			}
			if !revsMatch && updateHead {
				g.ret.Changes.Set("revision", payload.NewMap("old", localRev, "new", remoteRev))
				if fastForward == false {
					g.ret.Changes.Set("forced update", true)
				}
				actions = append(actions, fmt.Sprintf("Repository would be %s to %s", mergeAction, pyfmt.Str(gitShort(remoteRev))))
			}
			if g.ret.Changes.Len() > 0 {
				return g.neutral(gitFormatComments(actions))
			}
			if !revsMatch && !updateHead {
				g.ret.Comment = gitFormatComments(actions)
				return g.ret, nil
			}
			return g.uptodate(target, gitFormatComments(actions), false)
		}
		if _, err := g.git("git.remote_set", []any{target}, "url", name, "remote", remote, "https_user", httpsUser, "https_pass", httpsPass); err != nil {
			return states.Ret{}, err
		}
		if fetchURL == nil {
			g.comments = append(g.comments, fmt.Sprintf("Remote '%s' set to %s", remote, redactedFetchURL))
			g.ret.Changes.Set("new", name+" => "+remote)
		} else {
			g.comments = append(g.comments, fmt.Sprintf("Remote '%s' changed from %s to %s", remote, archiveRedactBasic(pyfmt.Str(fetchURL)), redactedFetchURL))
		}
	}
	if remoteRev != nil {
		if test {
			var actions []string
			if !hasRemoteRev {
				actions = append(actions, fmt.Sprintf("Remote '%s' would be fetched", remote))
			}
			if !revsMatch && (updateHead || (branch != nil && !pyfmt.Equal(branch, localBranch))) {
				g.ret.Changes.Set("revision", payload.NewMap("old", localRev, "new", remoteRev))
			}
			if needBranchChange {
				if !containsString(allLocalBranches, pyfmt.Str(branch)) {
					actions = append(actions, fmt.Sprintf("New branch '%s' would be checked out, with %s as a starting point", pyfmt.Str(branch), remoteLoc))
					if payload.Truthy(desiredUpstream) {
						actions = append(actions, "Tracking branch would be set to "+pyfmt.Str(desiredUpstream))
					}
				} else {
					actions = append(actions, fmt.Sprintf("Branch '%s' would be checked out and %s to %s", pyfmt.Str(branch), mergeAction, pyfmt.Str(gitShort(remoteRev))))
				}
			} else if !revsMatch {
				if updateHead {
					if fastForward == true {
						actions = append(actions, fmt.Sprintf("Repository would be fast-forwarded from %s to %s", pyfmt.Str(gitShort(localRev)), pyfmt.Str(gitShort(remoteRev))))
					} else {
						how := "updated"
						if payload.Truthy(forceReset) && hasRemoteRev {
							how = "hard-reset"
						}
						actions = append(actions, fmt.Sprintf("Repository would be %s from %s to %s", how, pyfmt.Str(gitShort(localRev)), pyfmt.Str(gitShort(remoteRev))))
					}
				} else {
					actions = append(actions, fmt.Sprintf("Local HEAD (%s) does not match %s but update_head=False, HEAD would not be updated locally", pyfmt.Str(gitShort(localRev)), remoteLoc))
				}
			}
			switch {
			case !payload.Truthy(upstream) && payload.Truthy(desiredUpstream):
				actions = append(actions, "Tracking branch would be set to "+pyfmt.Str(desiredUpstream))
			case payload.Truthy(upstream) && desiredUpstream == false:
				actions = append(actions, "Tracking branch would be unset")
			case payload.Truthy(desiredUpstream) && !pyfmt.Equal(upstream, desiredUpstream):
				actions = append(actions, "Tracking branch would be updated to "+pyfmt.Str(desiredUpstream))
			}
			if g.ret.Changes.Len() > 0 {
				return g.neutral(gitFormatComments(actions))
			}
			formatted := gitFormatComments(actions)
			if !revsMatch && !updateHead && formatted != "" {
				g.ret.Comment = formatted
				return g.ret, nil
			}
			return g.uptodate(target, formatted, false)
		}
		upstreamAction, branchOpts := trackingAction(upstream, desiredUpstream, branch, allLocalBranches)
		if branchOpts != nil && localBranch == nil {
			return g.fail("Cannot set/unset upstream tracking branch, local HEAD refers to nonexistent branch. This may have been caused by cloning a remote repository for which the default branch was renamed or deleted. If you are unable to fix the remote repository, you can work around this by setting the 'branch' argument (which will ensure that the named branch is created if it does not already exist).", g.comments)
		}
		lsV, _ := g.git("git.ls_remote", nil, "cwd", target, "remote", remote, "opts", "--tags", "identity", identity, "saltenv", saltenv, "ignore_retcode", true)
		remoteTags := map[string]bool{}
		if m, ok := lsV.(*payload.Map); ok {
			for _, it := range m.Items() {
				k := payload.KeyString(it.Key)
				if !strings.Contains(k, "^{}") {
					remoteTags[strings.ReplaceAll(k, "refs/tags/", "")] = true
				}
			}
		}
		if !gitSameSet(allLocalTags, remoteTags) {
			hasRemoteRev = false
			var newTags, deleted []string
			for t := range remoteTags {
				if !allLocalTags[t] {
					newTags = append(newTags, t)
				}
			}
			for t := range allLocalTags {
				if !remoteTags[t] {
					deleted = append(deleted, t)
				}
			}
			sort.Strings(newTags)
			sort.Strings(deleted)
			if len(newTags) > 0 {
				g.ret.Changes.Set("new_tags", strAny(newTags))
			}
			if a.Bool("sync_tags") && len(deleted) > 0 {
				var done []any
				for _, t := range deleted {
					if _, err := g.git("git.tag", []any{target, t}, "opts", "-d"); err != nil {
						g.ret.Warnings = append(g.ret.Warnings, fmt.Sprintf("Failed to remove local tag '%s':\n\n%s\n\n", t, sbErrText(err)))
						continue
					}
					done = append(done, t)
				}
				if len(done) > 0 {
					g.ret.Changes.Set("deleted_tags", done)
					var names []string
					for _, d := range done {
						names = append(names, pyfmt.Str(d))
					}
					g.comments = append(g.comments, fmt.Sprintf("The following tags were removed from the local checkout: %s", strings.Join(names, ", ")))
				}
			}
		}
		if !hasRemoteRev {
			fc, err := g.git("git.fetch", []any{target}, "remote", remote, "force", a.Bool("force_fetch"), "refspecs", refspecs, "identity", identity, "saltenv", saltenv)
			if err != nil {
				return g.fail("Fetch failed. Set 'force_fetch' to True to force the fetch if the failure was due to not being able to fast-forward. Output of the fetch command follows:\n\n"+gitStripExc(err), g.comments)
			}
			if payload.Truthy(fc) {
				g.comments = append(g.comments, name+" was fetched, resulting in updated refs")
			}
			if _, err := g.gitStr("git.rev_parse", []any{target, payload.Text(remoteRev) + "^{commit}"}, "ignore_retcode", true); err != nil {
				return g.fail(fmt.Sprintf("Fetch did not successfully retrieve rev '%s' from %s: %s", rev, name, sbErrText(err)), nil)
			}
			if !revsMatch && !updateHead && (branch == nil || pyfmt.Equal(branch, localBranch)) {
				loc := remoteLoc
				if rev == "HEAD" {
					loc = capitalize(remoteLoc)
				}
				g.ret.Comment = loc + fmt.Sprintf(" is already present and local HEAD (%s) does not match, but update_head=False. HEAD has not been updated locally.", pyfmt.Str(gitShort(localRev)))
				return g.ret, nil
			}
			if baseRev == nil {
				fastForward = true
			} else {
				v, err := g.git("git.merge_base", []any{target}, "refs", []any{baseRev, remoteRev}, "is_ancestor", true)
				if err != nil {
					return states.Ret{}, err
				}
				fastForward = v
			}
			if (fastForward == false && frFalse) || (fastForward == true && localChanges && frFalse) {
				return g.notFastForward(rev, baseRev, remoteRev, branch, localBranch, defaultBranch, localChanges)
			}
		}
		if needBranchChange {
			if localChanges && !a.Bool("force_checkout") {
				return g.fail(fmt.Sprintf("Local branch '%s' has uncommitted changes. Set 'force_checkout' to True to discard them and proceed.", pyfmt.Str(localBranch)), nil)
			}
			var checkoutRev any
			var opts []any
			if !containsString(allLocalBranches, pyfmt.Str(branch)) {
				if rev == "HEAD" {
					checkoutRev = remoteRev
				} else if payload.Truthy(desiredUpstream) {
					checkoutRev = desiredUpstream
				} else {
					checkoutRev = rev
				}
				opts = []any{"-b", branch}
			} else {
				checkoutRev, opts = branch, []any{}
			}
			if _, err := g.git("git.checkout", []any{target, checkoutRev}, "force", a.Bool("force_checkout"), "opts", opts); err != nil {
				return states.Ret{}, err
			}
			if len(opts) > 0 {
				g.comments = append(g.comments, fmt.Sprintf("New branch '%s' was checked out, with %s as a starting point", pyfmt.Str(branch), remoteLoc))
			} else {
				g.comments = append(g.comments, fmt.Sprintf("'%s' was checked out", pyfmt.Str(checkoutRev)))
			}
		}
		if fastForward == false {
			if _, err := g.git("git.reset", []any{target}, append([]any{"opts", []any{"--hard", remoteRev}}, lfsKw...)...); err != nil {
				return states.Ret{}, err
			}
			g.ret.Changes.Set("forced update", true)
			if localChanges {
				g.comments = append(g.comments, "Uncommitted changes were discarded")
			}
			g.comments = append(g.comments, "Repository was hard-reset to "+remoteLoc)
		} else if fastForward == true && localChanges && !frFalse {
			if _, err := g.git("git.discard_local_changes", []any{target}); err != nil {
				return states.Ret{}, err
			}
			g.comments = append(g.comments, "Uncommitted changes were discarded")
		}
		if branchOpts != nil {
			if _, err := g.git("git.branch", []any{target}, "opts", branchOpts); err != nil {
				return states.Ret{}, err
			}
			g.comments = append(g.comments, upstreamAction)
		}
		if fastForward == true && !gitRevsEqual(baseRev, remoteRev, remoteRevType) {
			if payload.Truthy(desiredUpstream) || rev == "HEAD" {
				sym, _ := g.gitStr("git.symbolic_ref", []any{target, "HEAD"}, "opts", []any{"--quiet"}, "ignore_retcode", true)
				if sym != "" {
					if _, err := g.git("git.merge", []any{target}, append([]any{"rev", remoteRev, "opts", []any{"--ff-only"}}, lfsKw...)...); err != nil {
						return states.Ret{}, err
					}
					g.comments = append(g.comments, "Repository was fast-forwarded to "+remoteLoc)
				} else {
					return g.fail("Unable to fast-forward, HEAD is detached", g.comments)
				}
			} else {
				r := any(rev)
				if rev == "HEAD" {
					r = remoteRev
				}
				if _, err := g.git("git.reset", []any{target}, append([]any{"opts", []any{"--hard", r}}, lfsKw...)...); err != nil {
					return states.Ret{}, err
				}
				g.comments = append(g.comments, fmt.Sprintf("Repository was reset to %s (fast-forward)", rev))
			}
		}
		if a.Bool("submodules") {
			if _, err := g.git("git.submodule", []any{target, "update"}, "opts", []any{"--init", "--recursive"}, "identity", identity, "saltenv", saltenv); err != nil {
				return g.fail("Failed to update submodules: "+gitStripExc(err), g.comments)
			}
		}
	} else if bare {
		if test {
			msg := fmt.Sprintf("Bare repository at %s would be fetched", target)
			if g.ret.Changes.Len() > 0 {
				return g.neutral(msg)
			}
			return g.uptodate(target, msg, false)
		}
		fc, err := g.git("git.fetch", []any{target}, "remote", remote, "force", a.Bool("force_fetch"), "refspecs", refspecs, "identity", identity, "saltenv", saltenv)
		if err != nil {
			return g.fail("Fetch failed. Set 'force_fetch' to True to force the fetch if the failure was due to not being able to fast-forward. Output of the fetch command follows:\n\n"+gitStripExc(err), g.comments)
		}
		suffix := ""
		if payload.Truthy(fc) {
			suffix = ", resulting in updated refs"
		}
		g.comments = append(g.comments, fmt.Sprintf("Bare repository at %s was fetched%s", target, suffix))
	}
	var newRev any
	if v, err := g.gitStr("git.revision", []any{target}, "ignore_retcode", true); err == nil {
		newRev = v
	}
	if !bare && !gitRevsEqual(newRev, remoteRev, remoteRevType) {
		return g.fail("Failed to update repository", g.comments)
	}
	if !pyfmt.Equal(localRev, newRev) {
		g.ret.Comment = gitFormatComments(g.comments)
		g.ret.Changes.Set("revision", payload.NewMap("old", localRev, "new", newRev))
		return g.ret, nil
	}
	return g.uptodate(target, gitFormatComments(g.comments), false)
}

func gitSameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func (g *gitL) clone(target, name, rev, remote string, branch, remoteRev any, remoteRevType, remoteLoc string, desiredUpstream any, allRemote *payload.Map,
	httpsUser, httpsPass, identity any, bare, mirror bool, depth any, saltenv string) (states.Ret, error) {
	var opts []any
	if mirror {
		opts = append(opts, "--mirror")
	} else if bare {
		opts = append(opts, "--bare")
	}
	if remote != "origin" {
		opts = append(opts, "--origin", remote)
	}
	if depth != nil {
		opts = append(opts, "--depth", pyfmt.Str(depth), "--branch", rev)
	}
	if _, err := g.git("git.clone", []any{target, name}, "opts", opts, "identity", identity, "https_user", httpsUser, "https_pass", httpsPass, "saltenv", saltenv); err != nil {
		return g.fail("Clone failed: "+gitStripExc(err), g.comments)
	}
	g.ret.Changes.Set("new", name+" => "+target)
	as := ""
	if mirror {
		as = " as mirror"
	} else if bare {
		as = " as bare repository"
	}
	g.comments = append(g.comments, fmt.Sprintf("%s cloned to %s%s", name, target, as))
	if !bare {
		if !payload.Truthy(remoteRev) {
			if rev != "HEAD" {
				return g.fail(fmt.Sprintf("Repository was cloned but is empty, so %s/%s cannot be checked out", remote, rev), g.comments)
			}
		} else {
			if remoteRevType == "tag" {
				tags, err := g.strList("git.list_tags", []any{target})
				if err != nil {
					return states.Ret{}, err
				}
				if !containsString(tags, rev) {
					return g.fail(fmt.Sprintf("Revision '%s' does not exist in clone", rev), g.comments)
				}
			}
			if branch != nil {
				brs, err := g.strList("git.list_branches", []any{target})
				if err != nil {
					return states.Ret{}, err
				}
				if !containsString(brs, pyfmt.Str(branch)) {
					var checkoutRev any = rev
					if rev == "HEAD" {
						checkoutRev = remoteRev
					} else if payload.Truthy(desiredUpstream) {
						checkoutRev = desiredUpstream
					}
					if _, err := g.git("git.checkout", []any{target, checkoutRev}, "opts", []any{"-b", branch}); err != nil {
						return states.Ret{}, err
					}
					g.comments = append(g.comments, fmt.Sprintf("Branch '%s' checked out, with %s as a starting point", pyfmt.Str(branch), remoteLoc))
				}
			}
			localRev, localBranch := g.localRevBranch(target)
			if localBranch == nil && remoteRev != nil && !allRemote.Has("HEAD") {
				return g.fail("Remote HEAD refers to a ref that does not exist. This can happen when the default branch on the remote repository is renamed or deleted. If you are unable to fix the remote repository, you can work around this by setting the 'branch' argument (which will ensure that the named branch is created if it does not already exist).", g.comments)
			}
			if !gitRevsEqual(localRev, remoteRev, remoteRevType) {
				if _, err := g.git("git.reset", []any{target}, "opts", []any{"--hard", remoteRev}); err != nil {
					return states.Ret{}, err
				}
				g.comments = append(g.comments, "Repository was reset to "+remoteLoc)
			}
			upstream := g.upstreamOf(target, localBranch)
			brs, _ := g.strList("git.list_branches", []any{target})
			action, bopts := trackingAction(upstream, desiredUpstream, branch, brs)
			if bopts != nil {
				if _, err := g.git("git.branch", []any{target}, "opts", bopts); err != nil {
					return states.Ret{}, err
				}
				g.comments = append(g.comments, action)
			}
		}
	}
	if g.c.Args.Bool("submodules") && payload.Truthy(remoteRev) {
		if _, err := g.git("git.submodule", []any{target, "update"}, "opts", []any{"--init", "--recursive"}, "identity", identity); err != nil {
			return g.fail("Failed to update submodules: "+gitStripExc(err), g.comments)
		}
	}
	var newRev any
	if v, err := g.gitStr("git.revision", []any{target}, "ignore_retcode", true); err == nil {
		newRev = v
	}
	g.ret.Comment = gitFormatComments(g.comments)
	if newRev != nil {
		g.ret.Changes.Set("revision", payload.NewMap("old", nil, "new", newRev))
	}
	return g.ret, nil
}

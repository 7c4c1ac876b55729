package pillar

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/gsalt/gsalt/wire/payload"
)

var (
	// ErrGitPillarNoRemotes is Salt's git_pillar.update error when the
	// master configures no git ext_pillar remote.
	ErrGitPillarNoRemotes = errors.New("No git_pillar remotes are configured")
	// ErrGitPillarNotFound is Salt's git_pillar.update error when no
	// remote matches the branch or repo asked for.
	ErrGitPillarNotFound = errors.New("Specified git branch/repo not found in ext_pillar config")
)

// gitUpdateOptions are the master options GitPillarUpdate reads.
var gitUpdateOptions = [...]string{"ext_pillar", "cachedir", "hash_type", "git_pillar_base", "git_pillar_branch",
	"git_pillar_env", "git_pillar_root", "git_pillar_fallback", "git_pillar_ssl_verify", "git_pillar_refspecs"}

// GitPillarUpdate is the git_pillar.update runner's work
// (salt/runners/git_pillar.py over salt.utils.gitfs.GitPillar): every
// remote of every git entry of the master's ext_pillar option, or those whose branch is
// branch and whose URL or name is repo (nil: any), is initialised and
// fetched into its cache folder (cachedir/git_pillar/...), as the git
// ext_pillar keeps it. The result maps each remote's id, in configuration
// order, to true when the fetch changed a ref (a new or moved branch or
// tag, a stale branch pruned), nil when nothing changed and false when it
// failed (logged). It fails with ErrGitPillarNotFound or
// ErrGitPillarNoRemotes when nothing matched, and with the configuration
// error of the git ext_pillar on an invalid remote.
func GitPillarUpdate(ctx context.Context, master Getter, branch, repo *string, log *slog.Logger) (*payload.Map, error) {
	if log == nil {
		log = slog.Default()
	}
	opts := payload.NewMap()
	for _, k := range gitUpdateOptions {
		if v, ok := master.Get(k); ok {
			opts.Set(k, v)
		}
	}
	ret := payload.NewMap()
	eps, _ := opts.Get("ext_pillar")
	list, _ := eps.([]any)
	c := &ExtCall{Log: log, r: &run{opts: opts, log: log}}
	cacheRoot := filepath.Join(gitOptStr(opts, "cachedir", "/var/cache/salt/master"), "git_pillar")
	for _, ep := range list {
		m, ok := ep.(*payload.Map)
		if !ok || m.Len() == 0 || payload.KeyString(m.Items()[0].Key) != "git" {
			continue
		}
		repos, _ := m.Items()[0].Value.([]any)
		remotes, err := gitRemotes(c, repos, cacheRoot, "", "")
		if err != nil {
			return nil, err
		}
		for _, rp := range remotes {
			if branch != nil && *branch != rp.branch {
				continue
			}
			if repo != nil && *repo != rp.url && !(rp.hasName && *repo == rp.name) {
				continue
			}
			changed, err := rp.update(ctx, c)
			switch {
			case err != nil:
				log.Error(fmt.Sprintf("Exception '%v' caught while fetching git_pillar remote '%s'", err, rp.id))
				ret.Set(rp.id, false)
			case changed:
				ret.Set(rp.id, true)
			default:
				ret.Set(rp.id, nil)
			}
		}
	}
	if ret.Len() == 0 {
		if branch != nil || repo != nil {
			return nil, ErrGitPillarNotFound
		}
		return nil, ErrGitPillarNoRemotes
	}
	return ret, nil
}

// update is GitProvider.fetch: init_remote, a fetch of origin and
// clean_stale_refs; changed reports whether any remote branch or tag of
// the cache moved, appeared or went away.
func (rp *gitRemote) update(ctx context.Context, c *ExtCall) (changed bool, err error) {
	unlock, err := rp.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	ok, err := rp.prepare(ctx, c)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, fmt.Errorf("cache path %s is not a git repository", rp.cachedir)
	}
	refs := func() (string, error) {
		return gitRun(ctx, rp.cachedir, "", "for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes/origin", "refs/tags")
	}
	before, err := refs()
	if err != nil {
		return false, err
	}
	if _, err := gitRun(ctx, rp.cachedir, "git fetch -v -- origin", "fetch", "-q", "--", "origin"); err != nil {
		return false, err
	}
	if _, err := gitRun(ctx, rp.cachedir, "", "remote", "prune", "origin"); err != nil {
		return false, err
	}
	// the ext_pillar's own fetch interval starts again from here
	rp.markFetched()
	after, err := refs()
	if err != nil {
		return false, err
	}
	return before != after, nil
}

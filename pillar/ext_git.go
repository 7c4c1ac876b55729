package pillar

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gsalt/gsalt/fileserver"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// errGitPillarConfig is Salt's FileserverConfigError from failhard: a
// git_pillar configuration Salt refuses (the reason is logged).
var errGitPillarConfig = errors.New("Failed to load git_pillar")

// gitCmdTimeout bounds one git command of the git ext_pillar.
const gitCmdTimeout = 5 * time.Minute

// Per-remote parameters of salt/pillar/git_pillar.py, in Salt's order
// (PER_REMOTE_OVERRIDES, then PER_REMOTE_ONLY).
var (
	gitOverrides   = []string{"base", "env", "root", "ssl_verify", "refspecs", "fallback"}
	gitRemoteOnly  = []string{"name", "mountpoint", "all_saltenvs"}
	gitAuthParams  = []string{"user", "password", "pubkey", "privkey", "passphrase", "insecure_auth"}
	gitDefaultRefs = []any{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"}
)

// extGit is salt/pillar/git_pillar.py: each remote ("BRANCH URL", or a
// {"BRANCH URL": [per-remote parameters]} mapping) is cloned under
// cachedir/git_pillar with the git binary (Salt's GitPython provider:
// fetched when first used, then every git_pillar_update_interval
// seconds), the branch or tag for its environment checked out, and its
// root compiled as a pillar_roots tree of that environment with its own
// top.sls; the pillars of the remotes are merged in order. __env__
// branches follow pillarenv/saltenv (git_pillar_base for base),
// all_saltenvs and fallback; pillarenv selects the remotes of its
// environment; mountpoint remotes are reachable from other remotes of the
// same environment through git_pillar_includes. Configuration errors are
// Salt's "Failed to load git_pillar" (with the reason logged).
func extGit() ExtModule {
	return ExtModule{Name: "git", Variadic: true, Available: gitAvailable, Fn: gitPillar}
}

// gitAvailable is the module's __virtual__: a git provider (here the git
// binary) must be there.
func gitAvailable() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

// gitRemote is one configured remote (Salt's GitProvider).
type gitRemote struct {
	id, url, branch               string
	base, env, root, fallback     string
	mountpoint, name, allSaltenvs string
	hasAllSaltenvs, hasName       bool
	sslVerify                     bool
	refspecs                      []string
	cachedir, linkdir, workdir    string
}

// gitOptStr reads a git_pillar_* option as enforce_types does (str()).
func gitOptStr(opts *payload.Map, key, def string) string {
	v, ok := opts.Get(key)
	if !ok {
		return def
	}
	return pyfmt.Str(v)
}

func gitPillar(ctx context.Context, c *ExtCall) (any, error) {
	if kw, _ := c.Args["**kwargs"].(*payload.Map); kw != nil && kw.Len() > 0 {
		return nil, fmt.Errorf("ext_pillar() got an unexpected keyword argument '%s'", payload.KeyString(kw.Items()[0].Key))
	}
	repos, _ := c.Args["*args"].([]any)
	opts := c.Opts()
	pillarenv := gitOptStr(opts, "pillarenv", "")
	saltenv := gitOptStr(opts, "saltenv", "")
	if v, _ := opts.Get("pillarenv"); v == nil {
		pillarenv = ""
	}
	if v, _ := opts.Get("saltenv"); v == nil {
		saltenv = ""
	}
	// cachedir from the template options, else the compiler's configured
	// cachedir (Config.Opts may be nil), else the master's default.
	cacheDir := "/var/cache/salt/master"
	if c.r.c != nil && c.r.c.cfg.CacheDir != "" {
		cacheDir = c.r.c.cfg.CacheDir
	}
	cacheRoot := filepath.Join(gitOptStr(opts, "cachedir", cacheDir), "git_pillar")
	remotes, err := gitRemotes(c, repos, cacheRoot, pillarenv, saltenv)
	if err != nil {
		return nil, err
	}
	role, _ := opts.Get("__role")
	alwaysFetch := role == "minion"
	interval := gitUpdateInterval(opts)
	type dirEnv struct{ dir, env string }
	var dirs []dirEnv
	linked := map[string]bool{}
	for _, rp := range remotes {
		dir, err := rp.checkout(ctx, c, alwaysFetch, interval, pillarenv, saltenv)
		if err != nil {
			return nil, err
		}
		if dir == "" {
			continue
		}
		var env string
		switch {
		case rp.branch == "__env__" && rp.hasAllSaltenvs:
			env = firstNonEmpty(pillarenv, saltenv, "base")
		case rp.env != "":
			env = rp.env
		case rp.branch == rp.base:
			env = "base"
		default:
			env = rp.target(pillarenv, saltenv)
			if env == rp.base {
				env = "base"
			}
		}
		if rp.mountpoint != "" {
			if rp.link(c, dir) {
				dirs = append(dirs, dirEnv{rp.linkdir, env})
				linked[rp.linkdir] = true
			}
			continue
		}
		dirs = append(dirs, dirEnv{dir, env})
	}
	includes := true
	if v, ok := opts.Get("git_pillar_includes"); ok {
		includes = payload.Truthy(v)
	}
	ret := payload.NewMap()
	strategy := gitOptStr(opts, "pillar_source_merging_strategy", StrategySmart)
	mergeLists := false
	if v, ok := opts.Get("pillar_merge_lists"); ok {
		mergeLists = payload.Truthy(v)
	}
	for _, de := range dirs {
		env := de.env
		if env == "__env__" {
			env = firstNonEmpty(pillarenv, saltenv, gitOptStr(opts, "git_pillar_base", "master"))
		}
		if pillarenv != "" && env != pillarenv {
			c.Log.Debug(fmt.Sprintf("env '%s' for pillar dir '%s' does not match pillarenv '%s', skipping", env, de.dir, pillarenv))
			continue
		}
		if linked[de.dir] {
			continue
		}
		roots := []string{de.dir}
		if includes {
			for _, o := range dirs {
				if o.env == env && o.dir != de.dir {
					roots = append(roots, o.dir)
				}
			}
		}
		sub, err := c.r.compileGitRoots(ctx, env, roots)
		if err != nil {
			return nil, err
		}
		merged, err := mergeAny(ret, sub, strategy, "yaml", mergeLists, c.Log, nil)
		if err != nil {
			return nil, err
		}
		if m, ok := merged.(*payload.Map); ok {
			ret = m
		}
	}
	return ret, nil
}

// compileGitRoots is Pillar(opts with pillar_roots {env: roots},
// grains, minion_id, env).compile_pillar(ext=False).
func (r *run) compileGitRoots(ctx context.Context, env string, roots []string) (*payload.Map, error) {
	cfg := r.c.cfg
	cfg.Roots = map[string][]string{env: roots}
	cfg.EnvOrder = []string{env}
	cfg.ExtPillar = nil
	cfg.ExtPillarFirst = false
	cfg.Cache = false
	cfg.Pillarenv = r.pillarenv
	cfg.PillarenvFromSaltenv = r.c.cfg.PillarenvFromSaltenv
	sub := &Compiler{cfg: cfg, rend: r.c.rend, matcher: r.c.matcher, caller: r.c.caller, log: r.log, now: r.c.now, ext: r.c.ext}
	req := Request{ID: r.id, Grains: r.grains, Saltenv: env, Pillarenv: r.pillarenv, NoCache: true}
	return sub.compile(ctx, req)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// gitUpdateInterval is git_pillar_update_interval (60 s by default).
func gitUpdateInterval(opts *payload.Map) time.Duration {
	v, ok := opts.Get("git_pillar_update_interval")
	if !ok {
		return time.Minute
	}
	n, err := strconv.Atoi(strings.TrimSpace(pyfmt.Str(v)))
	if err != nil {
		return time.Minute
	}
	return time.Duration(n) * time.Second
}

// gitRemotes is GitBase.init_remotes for git_pillar: the remotes parsed
// and validated, their cache folders named like Salt's.
func gitRemotes(c *ExtCall, repos []any, cacheRoot, pillarenv, saltenv string) ([]*gitRemote, error) {
	opts := c.Opts()
	fail := func(msg string) ([]*gitRemote, error) {
		c.Log.Error(msg)
		return nil, errGitPillarConfig
	}
	defaultRefs := gitDefaultRefs
	if v, ok := opts.Get("git_pillar_refspecs"); ok {
		if l, ok := v.([]any); ok {
			defaultRefs = l
		}
	}
	var out []*gitRemote
	seen := map[string][]string{}
	var order []string
	for _, remote := range repos {
		rp := &gitRemote{
			base:      gitOptStr(opts, "git_pillar_base", "master"),
			env:       gitOptStr(opts, "git_pillar_env", ""),
			root:      gitOptStr(opts, "git_pillar_root", ""),
			fallback:  gitOptStr(opts, "git_pillar_fallback", ""),
			refspecs:  gitStringList(defaultRefs),
			sslVerify: true,
		}
		if v, ok := opts.Get("git_pillar_ssl_verify"); ok {
			rp.sslVerify = payload.Truthy(v)
		}
		var conf *payload.Map
		switch x := remote.(type) {
		case string:
			rp.id = x
		case *payload.Map:
			if x.Len() == 0 {
				return nil, errors.New("StopIteration")
			}
			rp.id = payload.KeyString(x.Items()[0].Key)
			conf = gitRepack(x.Items()[0].Value)
			if conf == nil {
				rp.splitURL(gitOptStr(opts, "git_pillar_branch", "master"))
				return fail(fmt.Sprintf("Invalid per-remote configuration for git_pillar remote '%s'. If no per-remote parameters are being specified, there may be a trailing colon after the URL, which should be removed. Check the master configuration file.", rp.id))
			}
		default:
			return nil, fmt.Errorf("'%s' object has no attribute 'split'", pyfmt.TypeName(remote))
		}
		rp.splitURL(gitOptStr(opts, "git_pillar_branch", "master"))
		if conf != nil {
			if rp.branch != "__env__" && conf.Has("base") {
				return fail(fmt.Sprintf("Invalid per-remote configuration for git_pillar remote '%s'. base can only be specified if __env__ is specified as the branch name.", rp.id))
			}
			valid := append(append([]string{}, gitOverrides...), gitRemoteOnly...)
			bad := false
			for _, it := range conf.Items() {
				k := payload.KeyString(it.Key)
				if contains(valid, k) {
					continue
				}
				bad = true
				if contains(gitAuthParams, k) {
					c.Log.Error(fmt.Sprintf("git_pillar authentication parameter '%s' (from remote '%s') is only supported by the following provider(s): pygit2. Current git_pillar_provider is 'gitpython'.", k, rp.id))
				} else {
					c.Log.Error(fmt.Sprintf("Invalid git_pillar configuration parameter '%s' in remote '%s'. Valid parameters are: %s.", k, rp.id, strings.Join(valid, ", ")))
				}
			}
			if bad {
				return nil, errGitPillarConfig
			}
			for _, it := range conf.Items() {
				v := it.Value
				s := pyfmt.Str(v)
				switch payload.KeyString(it.Key) {
				case "base":
					rp.base = s
				case "env":
					rp.env = s
				case "root":
					rp.root = s
				case "fallback":
					rp.fallback = s
				case "refspecs":
					rp.refspecs = gitStringList(v)
				case "ssl_verify":
					rp.sslVerify = payload.Truthy(v)
				case "name":
					rp.name, rp.hasName = s, true
				case "mountpoint":
					rp.mountpoint = s
				case "all_saltenvs":
					rp.allSaltenvs, rp.hasAllSaltenvs = s, true
				}
			}
		}
		if i := strings.Index(rp.mountpoint, "://"); i >= 0 {
			rp.mountpoint = rp.mountpoint[i+3:]
		}
		rp.mountpoint = strings.Trim(rp.mountpoint, "/")
		basehash := rp.name
		if !rp.hasName {
			basehash = strings.ReplaceAll(base64.StdEncoding.EncodeToString(gitHash(gitOptStr(opts, "hash_type", "sha256"), rp.id)), "/", "_")
		}
		basename := "_"
		if strings.HasPrefix(rp.id, "__env__") {
			basename = rp.target(pillarenv, saltenv)
		}
		rp.cachedir = filepath.Join(cacheRoot, basehash, basename)
		rp.workdir = filepath.Join(cacheRoot, "work", basehash, basename)
		rp.linkdir = filepath.Join(cacheRoot, "links", basehash, basename)
		if _, dup := seen[rp.cachedir]; !dup {
			order = append(order, rp.cachedir)
		}
		seen[rp.cachedir] = append(seen[rp.cachedir], rp.id)
		out = append(out, rp)
	}
	for _, d := range order {
		if ids := seen[d]; len(ids) > 1 {
			return fail(fmt.Sprintf("The following git_pillar remotes have conflicting cachedirs: %s. Resolve this using a per-remote parameter called 'name'.", strings.Join(ids, ", ")))
		}
	}
	return out, nil
}

// gitHash is hashlib's hash_type digest of s (sha256 for a name Salt's
// hashlib would not know either).
func gitHash(name, s string) []byte {
	h, err := fileserver.NewHash(name)
	if err != nil {
		h = sha256.New()
	}
	h.Write([]byte(s))
	return h.Sum(nil)
}

// gitStringList is enforce_types for a "stringlist" parameter.
func gitStringList(v any) []string {
	switch x := v.(type) {
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = pyfmt.Str(e)
		}
		return out
	}
	var out []string
	for _, p := range strings.Split(pyfmt.Str(v), ",") {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

// gitRepack is salt.utils.data.repack_dictlist(strict=True, recurse=True)
// of a per-remote configuration: nil where Salt gets {} (not a list, an
// item that is not a one-key mapping or a scalar, an empty list).
func gitRepack(v any) *payload.Map {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := payload.NewMap()
	for _, e := range l {
		switch x := e.(type) {
		case string, int64, float64:
			out.Set(pyfmt.Str(x), nil)
		case *payload.Map:
			if x.Len() != 1 {
				return nil
			}
			it := x.Items()[0]
			out.Set(pyfmt.Str(it.Key), it.Value)
		default:
			return nil
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return out
}

// splitURL is get_url: "BRANCH URL", else the git_pillar_branch.
func (rp *gitRemote) splitURL(defBranch string) {
	if f := strings.Fields(rp.id); len(f) >= 2 {
		rp.branch = f[0]
		rp.url = strings.TrimLeft(rp.id[len(f[0]):], " \t\r\n\v\f")
		return
	}
	rp.branch, rp.url = defBranch, rp.id
}

// target is get_checkout_target.
func (rp *gitRemote) target(pillarenv, saltenv string) string {
	if rp.branch != "__env__" {
		return rp.branch
	}
	if rp.hasAllSaltenvs {
		return rp.allSaltenvs
	}
	t := firstNonEmpty(pillarenv, saltenv, "base")
	if t == "base" {
		return rp.base
	}
	return t
}

// git runs git in dir and returns its stdout, or an error in GitPython's
// GitCommandError form (cmdline is what Salt's provider runs).
func gitRun(ctx context.Context, dir, cmdline string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") {
			lines = append(lines, l)
		}
	}
	if cmdline == "" {
		cmdline = "git " + strings.Join(args, " ")
	}
	return "", fmt.Errorf("Cmd('git') failed due to: exit code(%d)\n  cmdline: %s\n  stderr: '%s'", code, cmdline, strings.Join(lines, "\n"))
}

// lock takes the remote's checkout lock (a flock on a file of its work
// folder, so gsalt processes sharing the cachedir wait for each other).
func (rp *gitRemote) lock() (func(), error) {
	if err := os.MkdirAll(rp.workdir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(rp.workdir, "gsalt_checkout.lk"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// checkout is init_remote, fetch and GitPython.checkout: the checked-out
// root of the remote, or "" when its ref or root does not exist (logged,
// as Salt does). A failing fetch is an error, as in Salt.
func (rp *gitRemote) checkout(ctx context.Context, c *ExtCall, alwaysFetch bool, interval time.Duration, pillarenv, saltenv string) (string, error) {
	unlock, err := rp.lock()
	if err != nil {
		return "", fmt.Errorf("git_pillar remote '%s': %w", rp.id, err)
	}
	defer unlock()
	if ok, err := rp.prepare(ctx, c); err != nil || !ok {
		return "", err
	}
	stamp := rp.fetchedStamp()
	fetch := func() error {
		if _, err := gitRun(ctx, rp.cachedir, "git fetch -v -- origin", "fetch", "-q", "--", "origin"); err != nil {
			return err
		}
		rp.markFetched()
		return nil
	}
	fetched := false
	if st, err := os.Stat(stamp); alwaysFetch || (err == nil && time.Since(st.ModTime()) >= interval) {
		if err := fetch(); err != nil {
			return "", err
		}
		fetched = true
	}
	tgt := rp.target(pillarenv, saltenv)
	for attempt := 0; attempt < 2; attempt++ {
		head, _ := gitRun(ctx, rp.cachedir, "", "rev-parse", "-q", "--verify", "HEAD^{commit}")
		refs := []string{"origin/" + tgt, "tags/" + tgt}
		if rp.fallback != "" {
			refs = append(refs, "origin/"+rp.fallback, "tags/"+rp.fallback)
		}
		for _, ref := range refs {
			sha, err := gitRun(ctx, rp.cachedir, "", "rev-parse", "-q", "--verify", ref+"^{commit}")
			if err != nil {
				continue
			}
			if strings.TrimSpace(sha) != strings.TrimSpace(head) {
				if _, err := gitRun(ctx, rp.cachedir, "", "-c", "advice.detachedHead=false", "checkout", "-q", "-f", ref); err != nil {
					continue
				}
			}
			return rp.checkRoot(c), nil
		}
		if fetched {
			break
		}
		if err := fetch(); err != nil {
			return "", err
		}
		fetched = true
	}
	c.Log.Error(fmt.Sprintf("Failed to checkout %s from git_pillar remote '%s': remote ref does not exist", tgt, rp.id))
	return "", nil
}

// prepare is init_remote and enforce_git_config: the cache folder is a
// git repository whose origin has the remote's URL, refspecs and
// http.sslVerify. false (nil error) is a cache folder that is not a git
// repository (logged, as Salt does). Callers hold rp.lock.
func (rp *gitRemote) prepare(ctx context.Context, c *ExtCall) (bool, error) {
	if err := os.MkdirAll(rp.cachedir, 0o755); err != nil {
		return false, err
	}
	applied := filepath.Join(rp.workdir, "gsalt_config")
	ents, _ := os.ReadDir(rp.cachedir)
	if len(ents) == 0 {
		_ = os.Remove(applied)
		if _, err := gitRun(ctx, rp.cachedir, "", "init", "-q"); err != nil {
			return false, fmt.Errorf("Exception caught while initializing git_pillar remote '%s': %w", rp.id, err)
		}
	} else if _, err := os.Stat(filepath.Join(rp.cachedir, ".git")); err != nil {
		c.Log.Error(fmt.Sprintf("Cache path %s (corresponding remote: %s) exists but is not a valid git repository. You will need to manually delete this directory on the master to continue to use this git_pillar remote.", rp.cachedir, rp.url))
		return false, nil
	}
	// enforce_git_config: the remote's URL, refspecs and http.sslVerify
	// (remembered in the work folder, so a compile with nothing to change
	// runs no git)
	want := fmt.Sprintf("%s\n%t\n%s", rp.url, rp.sslVerify, strings.Join(rp.refspecs, "\n"))
	if b, err := os.ReadFile(applied); err != nil || string(b) != want {
		if _, err := gitRun(ctx, rp.cachedir, "", "config", "remote.origin.url", rp.url); err != nil {
			return false, err
		}
		if _, err := gitRun(ctx, rp.cachedir, "", "config", "http.sslVerify", strconv.FormatBool(rp.sslVerify)); err != nil {
			return false, err
		}
		_, _ = gitRun(ctx, rp.cachedir, "", "config", "--unset-all", "remote.origin.fetch")
		for _, spec := range rp.refspecs {
			if _, err := gitRun(ctx, rp.cachedir, "", "config", "--add", "remote.origin.fetch", spec); err != nil {
				return false, err
			}
		}
		_ = os.WriteFile(applied, []byte(want), 0o644)
	}
	return true, nil
}

// fetchedStamp is the file whose modification time is the remote's last
// fetch.
func (rp *gitRemote) fetchedStamp() string { return filepath.Join(rp.workdir, "gsalt_fetched") }

// markFetched records a fetch now (git_pillar_update_interval counts from
// it).
func (rp *gitRemote) markFetched() {
	stamp := rp.fetchedStamp()
	_ = os.WriteFile(stamp, nil, 0o644)
	now := time.Now()
	_ = os.Chtimes(stamp, now, now)
}

// checkRoot is check_root: the root folder in the checkout, or "".
func (rp *gitRemote) checkRoot(c *ExtCall) string {
	dir := strings.TrimRight(filepath.Join(rp.cachedir, rp.root), "/")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	c.Log.Error(fmt.Sprintf("Root path '%s' not present in git_pillar remote '%s', skipping.", rp.root, rp.id))
	return ""
}

// link is link_mountpoint: linkdir/MOUNTPOINT, a symbolic link to the
// remote's root.
func (rp *gitRemote) link(c *ExtCall, dest string) bool {
	l := filepath.Join(rp.linkdir, rp.mountpoint)
	if cur, err := os.Readlink(l); err == nil && cur == dest {
		return true
	}
	_ = os.RemoveAll(rp.linkdir)
	if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
		c.Log.Error(fmt.Sprintf("Failed to os.makedirs() linkdir parent %s: %v", filepath.Dir(l), err))
		return false
	}
	if err := os.Symlink(dest, l); err != nil {
		c.Log.Error(fmt.Sprintf("Failed to create symlink to %s at path %s: %v", dest, l, err))
		return false
	}
	return true
}

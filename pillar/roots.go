package pillar

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Limits of the pillar_roots file access.
const (
	// maxSLSFile bounds one pillar or top file read (bytes).
	maxSLSFile = 16 << 20
	// maxWalkEntries bounds the entries visited listing one environment.
	maxWalkEntries = 200000
	// maxWalkDepth bounds the directory depth walked.
	maxWalkDepth = 64
)

// roots is pillar_roots after Salt's __env__ mapping for one request.
type roots struct {
	dirs  map[string][]string
	order []string // environments as _get_envs lists them: base first
}

// newRoots applies Pillar.__gen_opts' __env__ handling: env (pillarenv or
// saltenv or "base") takes the __env__ directories when it is not
// configured itself; __env__ is dropped either way.
func newRoots(cfg *Config, env string) *roots {
	r := &roots{dirs: map[string][]string{}}
	for k, v := range cfg.Roots {
		r.dirs[k] = append([]string(nil), v...)
	}
	order := envOrder(cfg)
	if envDirs, ok := r.dirs["__env__"]; ok {
		delete(r.dirs, "__env__")
		if _, exists := r.dirs[env]; !exists {
			mapped := make([]string, len(envDirs))
			for i, d := range envDirs {
				mapped[i] = strings.ReplaceAll(d, "__env__", env)
			}
			r.dirs[env] = mapped
			order = append(order, env)
		}
	}
	r.order = []string{"base"}
	for _, e := range order {
		if _, ok := r.dirs[e]; ok && e != "base" && e != "__env__" && !contains(r.order, e) {
			r.order = append(r.order, e)
		}
	}
	return r
}

// envOrder lists the configured environments: EnvOrder first, then the
// rest sorted.
func envOrder(cfg *Config) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range cfg.EnvOrder {
		if _, ok := cfg.Roots[e]; ok && !seen[e] {
			out = append(out, e)
			seen[e] = true
		}
	}
	var rest []string
	for e := range cfg.Roots {
		if !seen[e] {
			rest = append(rest, e)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// cleanRel validates a salt:// relative path: no absolute paths, no ".."
// components, no NUL.
func cleanRel(p string) (string, bool) {
	p = strings.TrimPrefix(p, "/")
	if p == "" || strings.ContainsRune(p, 0) {
		return "", false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", false
		}
	}
	return path.Clean(p), true
}

// find returns the first regular file rel in env's directories ("" when
// none has it), like the roots fileserver's find_file.
func (r *roots) find(env, rel string) string {
	rel, ok := cleanRel(rel)
	if !ok {
		return ""
	}
	for _, d := range r.dirs[env] {
		full := filepath.Join(d, filepath.FromSlash(rel))
		if fi, err := os.Stat(full); err == nil && fi.Mode().IsRegular() {
			return full
		}
	}
	return ""
}

// getState is FSClient.get_state: "a.b" is a/b.sls or a/b/init.sls. It
// returns the salt:// source and the local path.
func (r *roots) getState(sls, env string) (source, file string) {
	p := strings.ReplaceAll(sls, ".", "/")
	for _, cand := range []string{p + ".sls", p + "/init.sls"} {
		if f := r.find(env, cand); f != "" {
			return "salt://" + cand, f
		}
	}
	return "", ""
}

// listStates is FSClient.list_states: the sorted SLS names of env.
func (r *roots) listStates(env string) []string {
	set := map[string]bool{}
	budget := maxWalkEntries
	for _, d := range r.dirs[env] {
		walkFiles(d, "", 0, &budget, map[string]bool{}, func(rel string) {
			if !strings.HasSuffix(rel, ".sls") {
				return
			}
			if strings.HasSuffix(rel, "/init.sls") {
				set[strings.ReplaceAll(rel, "/", ".")[:len(rel)-9]] = true
			} else {
				set[strings.ReplaceAll(rel, "/", ".")[:len(rel)-4]] = true
			}
		})
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// walkFiles calls fn with the slash-separated path (relative to the root)
// of every regular file below dir, following symbolic links like Salt's
// roots backend (fileserver_followsymlinks) and skipping link cycles.
func walkFiles(dir, rel string, depth int, budget *int, seen map[string]bool, fn func(rel string)) {
	if depth > maxWalkDepth {
		return
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || seen[real] {
		return
	}
	seen[real] = true
	defer delete(seen, real)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if *budget <= 0 {
			return
		}
		*budget--
		full := filepath.Join(dir, e.Name())
		sub := e.Name()
		if rel != "" {
			sub = rel + "/" + e.Name()
		}
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			fi, err := os.Stat(full)
			if err != nil {
				continue
			}
			mode = fi.Mode().Type()
		}
		switch {
		case mode.IsDir():
			walkFiles(full, sub, depth+1, budget, seen, fn)
		case mode.IsRegular():
			fn(sub)
		}
	}
}

// readFile reads a pillar file, bounded by maxSLSFile.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSLSFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSLSFile {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, name, maxSLSFile)
	}
	return b, nil
}

// fileSource is render.FileSource over pillar_roots: templates import
// salt:// files from the pillar environments, as Salt's pillar file
// client does.
type fileSource struct{ r *roots }

// CacheFile returns the local path of src ("salt://path[?saltenv=env]")
// in saltenv, or "" when no pillar root has it.
func (f fileSource) CacheFile(_ context.Context, src, saltenv string) (string, error) {
	rel, env, err := parseSaltURL(src)
	if err != nil {
		return "", err
	}
	if env == "" {
		env = saltenv
	}
	if env == "" {
		env = "base"
	}
	return f.r.find(env, rel), nil
}

// parseSaltURL splits salt://path?saltenv=env.
func parseSaltURL(src string) (rel, env string, err error) {
	rest, ok := strings.CutPrefix(src, "salt://")
	if !ok {
		return "", "", fmt.Errorf("%w: %q is not a salt:// URL", errBadURL, src)
	}
	if p, q, found := strings.Cut(rest, "?"); found {
		rest = p
		vals, perr := url.ParseQuery(q)
		if perr == nil {
			env = vals.Get("saltenv")
		}
	}
	return rest, env, nil
}

var errBadURL = errors.New("pillar: bad file URL")

package fileserver

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// listSet holds one saltenv's file lists (roots._file_lists): sorted
// relative paths of files, directories and empty directories, and the
// symbolic links with their destinations as read.
type listSet struct {
	Files     []string
	Dirs      []string
	EmptyDirs []string
	Links     map[string]string
}

// envLists is a cached listSet with what it was computed from.
type envLists struct {
	lists listSet
	deps  []dep
}

// dep is a path whose status a list depends on.
type dep struct {
	path string
	sig  fileSig
}

// walker builds one saltenv's lists.
type walker struct {
	r        *Roots
	ctx      context.Context
	files    map[string]bool
	dirs     map[string]bool
	empty    map[string]bool
	links    map[string]string
	deps     []dep
	realRoot string // realpath of the root being walked
	entries  int    // entries listed
	visited  int    // directories walked
	cut      bool
}

// lists returns saltenv's lists (nil when the saltenv is not served),
// from the cache when nothing they depend on changed.
func (r *Roots) lists(ctx context.Context, saltenv string) (*listSet, error) {
	roots := r.rootsOf(saltenv)
	if roots == nil {
		return nil, nil
	}
	r.mu.Lock()
	c := r.listCache[saltenv]
	r.mu.Unlock()
	if c != nil && fresh(c.deps) {
		return &c.lists, nil
	}
	w := &walker{r: r, ctx: ctx, files: map[string]bool{}, dirs: map[string]bool{}, empty: map[string]bool{}, links: map[string]string{}}
	for _, root := range roots {
		w.walkRoot(root)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if w.cut {
		r.log.Warn("fileserver: file list truncated", "saltenv", saltenv, "max_entries", MaxWalkEntries, "max_depth", MaxWalkDepth)
	}
	c = &envLists{lists: listSet{Files: sortedKeys(w.files), Dirs: sortedKeys(w.dirs), EmptyDirs: sortedKeys(w.empty), Links: w.links}, deps: w.deps}
	r.mu.Lock()
	if _, ok := r.listCache[saltenv]; !ok && len(r.listCache) >= maxCachedEnvs {
		for k := range r.listCache {
			delete(r.listCache, k)
			break
		}
	}
	r.listCache[saltenv] = c
	r.mu.Unlock()
	return &c.lists, nil
}

// fresh reports whether every dependency still has its recorded status.
func fresh(deps []dep) bool {
	for _, d := range deps {
		if statSig(d.path) != d.sig {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// walkRoot is os.walk(root, followlinks=fileserver_followsymlinks) feeding
// roots._file_lists' _add_to.
func (w *walker) walkRoot(root string) {
	w.realRoot = realpath(root)
	w.walk(root, root, "", 0, []string{w.realRoot})
}

// entry is one directory entry as os.walk classifies it.
type entry struct {
	name   string
	isLink bool
}

// walk lists dir (rel below root) and descends into its directories.
// ancestors holds the real paths of the directories being walked (dir's
// last), so a followed link back to one of them is not descended into
// again.
func (w *walker) walk(root, dir, rel string, depth int, ancestors []string) {
	w.deps = append(w.deps, dep{dir, statSig(dir)})
	if w.visited++; w.visited > MaxWalkEntries {
		w.cut = true
		return
	}
	if w.ctx.Err() != nil {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var dirs, files []entry
	for _, e := range ents {
		isLink := e.Type()&os.ModeSymlink != 0
		isDir := e.IsDir()
		if isLink {
			abs := pyJoin(dir, e.Name())
			sig := statSig(abs)
			w.deps = append(w.deps, dep{abs, sig})
			isDir = sig.exists && sig.mode.IsDir()
		}
		if isDir {
			dirs = append(dirs, entry{e.Name(), isLink})
		} else {
			files = append(files, entry{e.Name(), isLink})
		}
	}
	w.add(w.dirs, root, dir, rel, dirs)
	w.add(w.files, root, dir, rel, files)
	if depth >= MaxWalkDepth {
		if len(dirs) > 0 {
			w.cut = true
		}
		return
	}
	for _, d := range dirs {
		if w.cut {
			return
		}
		if d.isLink && !w.r.follow {
			continue
		}
		abs := pyJoin(dir, d.name)
		real := pyJoin(ancestors[len(ancestors)-1], d.name)
		if d.isLink {
			real = realpath(abs)
			if slices.Contains(ancestors, real) {
				continue
			}
		}
		next := append(ancestors[:len(ancestors):len(ancestors)], real)
		w.walk(root, abs, joinRel(rel, d.name), depth+1, next)
	}
}

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// add is _add_to: it records items of dir into tgt, with the empty
// directories and symbolic links among them.
func (w *walker) add(tgt map[string]bool, root, dir, rel string, items []entry) {
	for _, it := range items {
		if it.isLink && w.r.ignoreLink {
			continue
		}
		relPath := joinRel(rel, it.name)
		if w.r.ignored(relPath) {
			continue
		}
		if w.entries >= MaxWalkEntries {
			w.cut = true
			return
		}
		if !tgt[relPath] {
			w.entries++
		}
		tgt[relPath] = true
		abs := pyJoin(dir, it.name)
		if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
			if f, err := os.Open(abs); err == nil {
				names, err := f.Readdirnames(1)
				f.Close()
				if len(names) == 0 && errors.Is(err, io.EOF) {
					w.empty[relPath] = true
				}
			}
		}
		if !it.isLink {
			continue
		}
		dest, err := os.Readlink(abs)
		if err != nil {
			continue
		}
		// Salt joins a destination starting with ".." to the link itself
		// rather than to its directory; the lists keep that.
		var joined string
		if strings.HasPrefix(dest, "..") {
			joined = pyJoin(abs, dest)
		} else {
			joined = pyJoin(filepath.Dir(abs), dest)
		}
		relDest := pyRelpath(realpath(pyNormpath(joined)), w.realRoot)
		if !strings.HasPrefix(relDest, "..") || !w.r.follow {
			w.links[relPath] = dest
		}
	}
}

// prefixFilter returns a copy of the members of list starting with
// prefix.
func prefixFilter(list []string, prefix string) []string {
	if prefix == "" {
		return slices.Clone(list)
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// FileList returns the files of saltenv starting with prefix (after
// trimming "/" from both of its ends), sorted, like Fileserver.file_list.
func (r *Roots) FileList(ctx context.Context, saltenv, prefix string) ([]string, error) {
	l, err := r.lists(ctx, saltenv)
	if err != nil || l == nil {
		return []string{}, err
	}
	return prefixFilter(l.Files, strings.Trim(prefix, "/")), nil
}

// DirList returns the directories of saltenv (Fileserver.dir_list).
func (r *Roots) DirList(ctx context.Context, saltenv, prefix string) ([]string, error) {
	l, err := r.lists(ctx, saltenv)
	if err != nil || l == nil {
		return []string{}, err
	}
	return prefixFilter(l.Dirs, strings.Trim(prefix, "/")), nil
}

// EmptyDirs returns the empty directories of saltenv
// (Fileserver.file_list_emptydirs).
func (r *Roots) EmptyDirs(ctx context.Context, saltenv, prefix string) ([]string, error) {
	l, err := r.lists(ctx, saltenv)
	if err != nil || l == nil {
		return []string{}, err
	}
	return prefixFilter(l.EmptyDirs, strings.Trim(prefix, "/")), nil
}

// Symlinks returns saltenv's symbolic links (relative path → destination
// as read) whose path starts with prefix, keys sorted
// (Fileserver.symlink_list).
func (r *Roots) Symlinks(ctx context.Context, saltenv, prefix string) (*payload.Map, error) {
	l, err := r.lists(ctx, saltenv)
	out := payload.NewMap()
	if err != nil || l == nil {
		return out, err
	}
	prefix = strings.Trim(prefix, "/")
	keys := make([]string, 0, len(l.Links))
	for k := range l.Links {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Set(k, l.Links[k])
	}
	return out, nil
}

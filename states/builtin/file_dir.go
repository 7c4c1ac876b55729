package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/states"
	"github.com/gsalt/gsalt/wire/payload"
)

// fileWalkEntry is one os.walk step: a directory, its subdirectories and
// its files (names sorted; Python lists them in directory order).
type fileWalkEntry struct {
	root        string
	dirs, files []string
}

// fileWalk is states.file._depth_limited_walk over os.walk (top-down, not
// following symlinks; a symlink to a directory is listed as a directory).
// maxDepth < 0 means no limit.
func fileWalk(top string, maxDepth int) []fileWalkEntry {
	var out []fileWalkEntry
	topSeps := strings.Count(top, "/")
	var walk func(root string)
	walk = func(root string) {
		entries, err := os.ReadDir(root)
		if err != nil {
			return
		}
		e := fileWalkEntry{root: root}
		for _, d := range entries {
			full := filePyJoin(root, d.Name())
			if d.IsDir() || (d.Type()&os.ModeSymlink != 0 && fileIsDir(full)) {
				e.dirs = append(e.dirs, d.Name())
			} else {
				e.files = append(e.files, d.Name())
			}
		}
		if maxDepth >= 0 && strings.Count(root, "/")-topSeps >= maxDepth {
			e.dirs = nil
		}
		out = append(out, e)
		for _, d := range e.dirs {
			full := filePyJoin(root, d)
			if fileIsLink(full) {
				continue
			}
			walk(full)
		}
	}
	walk(top)
	return out
}

// fileIncludeExclude is salt.utils.stringutils.check_include_exclude:
// patterns are globs, or regular expressions after "E@"; either may be a
// list.
func fileIncludeExclude(path string, include, exclude any) bool {
	check := func(pat string) bool {
		if strings.HasPrefix(pat, "E@") {
			re, err := filePyRegexp(pat[2:], 0)
			return err == nil && re.MatchString(path)
		}
		return py.Fnmatch(path, pat)
	}
	var inc, exc bool
	if payload.Truthy(include) {
		for _, p := range fileStrList(include) {
			if inc = check(p); inc {
				break
			}
		}
	}
	if payload.Truthy(exclude) {
		for _, p := range fileStrList(exclude) {
			if exc = !check(p); !exc {
				break
			}
		}
	}
	switch {
	case payload.Truthy(include) && !payload.Truthy(exclude):
		return inc
	case payload.Truthy(exclude) && !payload.Truthy(include):
		return exc
	case payload.Truthy(include) && payload.Truthy(exclude):
		return inc && exc
	}
	return true
}

// fileRel is os.path.relpath for two absolute, clean-ish paths.
func fileRel(p, base string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}

// fileRecurseTypes are the valid "recurse" entries of file.directory.
var fileRecurseTypes = []string{"user", "group", "mode", "ignore_files", "ignore_dirs", "silent"}

// fileRecurseSet is states.file._get_recurse_set.
func fileRecurseSet(v any) (map[string]bool, error) {
	if !payload.Truthy(v) {
		return map[string]bool{}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`"recurse" must be formed as a list of strings`)
	}
	set := map[string]bool{}
	valid := map[string]bool{}
	for _, t := range fileRecurseTypes {
		valid[t] = true
	}
	for _, e := range list {
		s, isStr := e.(string)
		if !isStr || !valid[s] {
			quoted := make([]string, len(fileRecurseTypes))
			for i, t := range fileRecurseTypes {
				quoted[i] = `"` + t + `"`
			}
			return nil, fmt.Errorf(`Types for "recurse" limited to %s.`, strings.Join(quoted, ", "))
		}
		set[s] = true
	}
	if set["ignore_files"] && set["ignore_dirs"] {
		return nil, fmt.Errorf(`Must not specify "recurse" options "ignore_files" and "ignore_dirs" at the same time.`)
	}
	return set, nil
}

// checkDirMeta is states.file._check_dir_meta.
func (r *fileRun) checkDirMeta(name string, userArg, groupArg any, mode string, follow bool) *payload.Map {
	changes := &payload.Map{}
	st, err := fileStatPath(name, follow)
	if err != nil {
		changes.Set("directory", "new")
		return changes
	}
	if userArg != nil && !fileSameOwner(userArg, st.user, st.uid) {
		changes.Set("user", userArg)
	}
	if groupArg != nil && !fileSameOwner(groupArg, st.group, st.gid) {
		changes.Set("group", groupArg)
	}
	if mode != "" && mode != st.mode && (follow || st.typ != "link") {
		changes.Set("mode", mode)
	}
	return changes
}

// fileKeepFromRequire approximates states.file._gen_keep_files: without
// the whole low state, required "file" entries naming absolute paths are
// kept (with their contents when they are directories).
func fileKeepFromRequire(require any) map[string]bool {
	keep := map[string]bool{}
	list, ok := require.([]any)
	if !ok {
		return keep
	}
	for _, comp := range list {
		m, ok := comp.(*payload.Map)
		if !ok {
			continue
		}
		v, ok := m.Get("file")
		if !ok {
			continue
		}
		p := pyfmt.Str(v)
		if !filepath.IsAbs(p) {
			continue
		}
		keep[p] = true
		if fileIsDir(p) {
			for _, e := range fileWalk(p, -1) {
				keep[e.root] = true
				for _, n := range append(append([]string{}, e.dirs...), e.files...) {
					keep[filePyJoin(e.root, n)] = true
				}
			}
		}
	}
	return keep
}

// checkDirectory is states.file._check_directory: the predicted result,
// comment and per-path changes.
func (r *fileRun) checkDirectory(name string, userArg, groupArg any, recurse any, dirMode, fileMode string, clean bool, require, excludePat any, maxDepth int, follow bool) (states.Result, string, *payload.Map) {
	changes := &payload.Map{}
	var walk []fileWalkEntry
	if payload.Truthy(recurse) || clean {
		walk = fileWalk(name, maxDepth)
	}
	if payload.Truthy(recurse) {
		set, err := fileRecurseSet(recurse)
		if err != nil {
			return states.False, err.Error(), changes
		}
		if !set["user"] {
			userArg = nil
		}
		if !set["group"] {
			groupArg = nil
		}
		if !set["mode"] {
			dirMode, fileMode = "", ""
		}
		for _, e := range walk {
			if !set["ignore_files"] {
				for _, f := range e.files {
					p := filePyJoin(e.root, f)
					st, err := fileStatPath(p, follow)
					if err != nil {
						continue
					}
					fc := &payload.Map{}
					if userArg != nil && !fileSameOwnerStrict(userArg, st.user, st.uid) {
						fc.Set("user", userArg)
					}
					if groupArg != nil && !fileSameOwnerStrict(groupArg, st.group, st.gid) {
						fc.Set("group", groupArg)
					}
					if fileMode != "" && fileMode != st.mode && (follow || st.typ != "link") {
						fc.Set("mode", fileMode)
					}
					if fc.Len() > 0 {
						changes.Set(p, fc)
					}
				}
			}
			if !set["ignore_dirs"] {
				for _, d := range e.dirs {
					p := filePyJoin(e.root, d)
					if fc := r.checkDirMeta(p, userArg, groupArg, dirMode, follow); fc.Len() > 0 {
						changes.Set(p, fc)
					}
				}
			}
		}
	}
	if fc := r.checkDirMeta(name, userArg, groupArg, dirMode, follow); fc.Len() > 0 {
		changes.Set(name, fc)
	}
	if clean {
		keep := fileKeepFromRequire(require)
		for _, e := range walk {
			for _, n := range append(append([]string{}, e.files...), e.dirs...) {
				p := filePyJoin(e.root, n)
				if keep[p] || !fileIncludeExclude(fileRel(p, name), nil, excludePat) {
					continue
				}
				changes.Set(p, payload.NewMap("removed", "Removed due to clean"))
			}
		}
	}
	if !fileIsDir(name) {
		changes.Set(name, payload.NewMap("directory", "new"))
	}
	if changes.Len() > 0 {
		var b strings.Builder
		b.WriteString("The following files will be changed:\n")
		for _, it := range changes.Items() {
			fc := it.Value.(*payload.Map)
			for _, kv := range fc.Items() {
				fmt.Fprintf(&b, "%s: %s - %s\n", payload.KeyString(it.Key), payload.KeyString(kv.Key), pyfmt.Str(kv.Value))
			}
		}
		return states.None, b.String(), changes
	}
	return states.True, fmt.Sprintf("The directory %s is in the correct state", name), changes
}

// cleanDir is states.file._clean_dir: everything under root that is not
// kept (nor a parent of a kept path) and not excluded is removed (listed
// only in test mode). The removed paths are returned sorted.
func (r *fileRun) cleanDir(root string, keep map[string]bool, excludePat any) []any {
	realKeep := map[string]bool{root: true}
	for k := range keep {
		if !filepath.IsAbs(k) {
			continue
		}
		p := filepath.Clean(k)
		realKeep[p] = true
		for p != "/" {
			p = filepath.Dir(p)
			realKeep[p] = true
		}
	}
	var removed []string
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		var subdirs []string
		var files []string
		for _, d := range entries {
			full := filePyJoin(dir, d.Name())
			if d.IsDir() || (d.Type()&os.ModeSymlink != 0 && fileIsDir(full)) {
				subdirs = append(subdirs, full)
			} else {
				files = append(files, full)
			}
		}
		for _, p := range append(append([]string{}, subdirs...), files...) {
			if realKeep[p] || !fileIncludeExclude(fileRel(p, root), nil, excludePat) {
				continue
			}
			removed = append(removed, p)
			if !r.test {
				if err := os.Remove(p); err != nil {
					_ = fileRemovePath(p)
				}
			}
		}
		for _, d := range subdirs {
			if !fileIsLink(d) {
				walk(d)
			}
		}
	}
	walk(root)
	sort.Strings(removed)
	out := make([]any, len(removed))
	for i, p := range removed {
		out[i] = p
	}
	return out
}

// fileDirectoryArgs are file.directory's arguments.
type fileDirectoryArgs struct {
	name                 string
	user, group, recurse any
	maxDepth             int
	dirMode, fileMode    any
	makedirs, clean      bool
	require, excludePat  any
	follow, force        bool
	backupname           any
	allowSymlink         bool
	childrenOnly         bool
	maxDepthGiven        bool
	kwargs               *payload.Map
}

func fileDirectoryState(ctx context.Context, c *states.Call) (states.Ret, error) {
	a := c.Args
	d := fileDirectoryArgs{name: a.Str("name"), user: a.Get("user"), group: a.Get("group"),
		recurse: a.Get("recurse"), dirMode: a.Get("dir_mode"), fileMode: a.Get("file_mode"),
		makedirs: a.Bool("makedirs"), clean: a.Bool("clean"), require: a.Get("require"),
		excludePat: a.Get("exclude_pat"), follow: a.Bool("follow_symlinks"), force: a.Bool("force"),
		backupname: a.Get("backupname"), allowSymlink: a.Bool("allow_symlink"),
		childrenOnly: a.Bool("children_only"), kwargs: a.CleanKwargs(), maxDepth: -1}
	if v := a.Get("max_depth"); v != nil {
		n, err := a.Int("max_depth")
		if err != nil {
			return states.Ret{}, err
		}
		d.maxDepth, d.maxDepthGiven = int(n), true
	}
	ret, err := fileNewRun(ctx, c).directory(d)
	if err != nil {
		return states.Ret{}, err
	}
	return *ret, nil
}

// directory is states.file.directory.
func (r *fileRun) directory(a fileDirectoryArgs) (*states.Ret, error) {
	name := fileExpandUser(a.name)
	ret := fileNewRet(name)
	if name == "" {
		fileError(ret, "Must provide name to file.directory")
		return ret, nil
	}
	if strings.HasSuffix(name, "/") && name != "/" {
		name = name[:len(name)-1]
	}
	if a.maxDepthGiven && a.clean {
		fileError(ret, "Cannot specify both max_depth and clean")
		return ret, nil
	}
	userArg := fileTestOwner(a.kwargs, a.user)
	groupArg := a.group
	if a.kwargs != nil && a.kwargs.Has("mode") && !payload.Truthy(a.dirMode) {
		a.dirMode, _ = a.kwargs.Get("mode")
	}
	if !payload.Truthy(a.fileMode) {
		a.fileMode = a.dirMode
	}
	dirMode, _ := fileNormalizeMode(a.dirMode)
	fileMode, _ := fileNormalizeMode(a.fileMode)
	if msg := r.checkUser(userArg, groupArg); msg != "" {
		fileError(ret, msg)
		return ret, nil
	}
	if !filepath.IsAbs(name) {
		fileError(ret, fmt.Sprintf("Specified file %s is not an absolute path", name))
		return ret, nil
	}
	if fileIsFile(name) || (!a.allowSymlink && fileIsLink(name)) || (a.force && fileIsLink(name)) {
		switch {
		case a.backupname != nil:
			bk := pyfmt.Str(a.backupname)
			if fileLexists(bk) {
				if !a.force {
					fileError(ret, fmt.Sprintf("File exists where the backup target %s should go", bk))
					return ret, nil
				}
				_ = fileRemovePath(bk)
			}
			if err := os.Rename(name, bk); err != nil {
				return nil, fmt.Errorf("%s", filePyOSError(err))
			}
		case a.force:
			switch {
			case fileIsFile(name):
				if r.test {
					ret.Changes.Set("forced", "File would be forcibly replaced")
				} else {
					_ = os.Remove(name)
					ret.Changes.Set("forced", "File was forcibly replaced")
				}
			case fileIsLink(name):
				if r.test {
					ret.Changes.Set("forced", "Symlink would be forcibly replaced")
				} else {
					_ = fileRemovePath(name)
					ret.Changes.Set("forced", "Symlink was forcibly replaced")
				}
			default:
				if r.test {
					ret.Changes.Set("forced", "Directory would be forcibly replaced")
				} else {
					_ = fileRemovePath(name)
					ret.Changes.Set("forced", "Directory was forcibly replaced")
				}
			}
		default:
			if fileIsFile(name) {
				fileError(ret, fmt.Sprintf("Specified location %s exists and is a file", name))
				return ret, nil
			}
			if fileIsLink(name) {
				fileError(ret, fmt.Sprintf("Specified location %s exists and is a symlink", name))
				return ret, nil
			}
		}
	}
	recurse := a.recurse
	if recurse == nil {
		recurse = []any{}
	}
	tresult, tcomment, tchanges := r.checkDirectory(name, userArg, groupArg, recurse, dirMode, fileMode, a.clean, a.require, a.excludePat, a.maxDepth, a.follow)
	for _, it := range tchanges.Items() {
		ret.Changes.SetKey(it.Key, it.Value)
	}
	if r.test || ret.Changes.Len() == 0 {
		ret.Result, ret.Comment = tresult, tcomment
		return ret, nil
	}
	if !fileIsDir(name) {
		if !fileIsDir(filePyDirname(name)) {
			if !a.makedirs {
				fileError(ret, fmt.Sprintf("No directory to create %s in", name))
				return ret, nil
			}
			if err := r.makedirs(name, userArg, groupArg, dirMode); err != nil {
				return nil, err
			}
		}
		if err := r.mkdir(name, userArg, groupArg, dirMode); err != nil && !os.IsExist(err) {
			return nil, fmt.Errorf("%s", filePyOSError(err))
		}
		if !fileIsDir(name) {
			fileError(ret, fmt.Sprintf("Failed to create directory %s", name))
			return ret, nil
		}
		ret.Changes.Set(name, payload.NewMap("directory", "new"))
		return ret, nil
	}
	if !a.childrenOnly {
		if _, err := r.checkPerms(ret, name, userArg, groupArg, dirMode, a.follow); err != nil {
			return nil, err
		}
	}
	var errs []string
	var walk []fileWalkEntry
	if payload.Truthy(a.recurse) || a.clean {
		walk = fileWalk(name, a.maxDepth)
	}
	var set map[string]bool
	if payload.Truthy(a.recurse) {
		s, err := fileRecurseSet(a.recurse)
		if err != nil {
			ret.Result = states.False
			ret.Comment = err.Error()
		} else {
			set = s
		}
	}
	if len(set) > 0 {
		if set["user"] {
			if payload.Truthy(userArg) || fileIsInt(userArg) {
				if _, ok := fileUserToUID(userArg); !ok {
					ret.Result = states.False
					ret.Comment = fmt.Sprintf("Failed to enforce ownership for user %s (user does not exist)", pyfmt.Str(userArg))
				}
			} else {
				ret.Result = states.False
				ret.Comment = "user not specified, but configured as a target for recursive ownership management"
			}
		} else {
			userArg = nil
		}
		if set["group"] {
			if payload.Truthy(groupArg) || fileIsInt(groupArg) {
				if _, ok := fileGroupToGID(groupArg); !ok {
					ret.Result = states.False
					ret.Comment = fmt.Sprintf("Failed to enforce group ownership for group %s", pyfmt.Str(groupArg))
				}
			} else {
				ret.Result = states.False
				ret.Comment = "group not specified, but configured as a target for recursive ownership management"
			}
		} else {
			groupArg = nil
		}
		if !set["mode"] {
			fileMode, dirMode = "", ""
		}
		if set["silent"] {
			ret.Changes = payload.NewMap("recursion", "Changes silenced")
		}
		for _, e := range walk {
			if !set["ignore_files"] {
				for _, f := range e.files {
					if _, err := r.checkPerms(ret, filePyJoin(e.root, f), userArg, groupArg, fileMode, a.follow); err != nil && !strings.HasPrefix(err.Error(), "Path not found") {
						errs = append(errs, err.Error())
					}
				}
			}
			if !set["ignore_dirs"] {
				for _, d := range e.dirs {
					if _, err := r.checkPerms(ret, filePyJoin(e.root, d), userArg, groupArg, dirMode, a.follow); err != nil && !strings.HasPrefix(err.Error(), "Path not found") {
						errs = append(errs, err.Error())
					}
				}
			}
		}
	}
	if a.clean {
		removed := r.cleanDir(name, fileKeepFromRequire(a.require), a.excludePat)
		if len(removed) > 0 {
			ret.Changes.Set("removed", removed)
			ret.Comment = fmt.Sprintf("Files cleaned from directory %s", name)
		}
	}
	if ret.Comment == "" {
		if a.childrenOnly {
			ret.Comment = fmt.Sprintf("Directory %s/* updated", name)
		} else if ret.Changes.Len() > 0 {
			ret.Comment = fmt.Sprintf("Directory %s updated", name)
		}
	}
	if r.test {
		ret.Comment = fmt.Sprintf("Directory %s not updated", name)
	} else if ret.Changes.Len() == 0 && ret.Result == states.True {
		orig := ret.Comment
		ret.Comment = fmt.Sprintf("Directory %s is in the correct state", name)
		if orig != "" {
			ret.Comment += "\n" + orig
		}
	}
	if len(errs) > 0 {
		ret.Result = states.False
		ret.Comment += "\n\nThe following errors were encountered:\n"
		for _, e := range errs {
			ret.Comment += "\n- " + e
		}
	}
	return ret, nil
}

func fileIsInt(v any) bool {
	_, ok := v.(int64)
	return ok
}

// fileRecurseState is file.recurse.
func fileRecurseState(ctx context.Context, c *states.Call) (states.Ret, error) {
	r := fileNewRun(ctx, c)
	a := c.Args
	name := fileExpandUser(a.Str("name"))
	kwargs := a.CleanKwargs()
	managedParams := map[string]bool{}
	for _, p := range fileManagedSpec().Params {
		managedParams[p.Name] = true
	}
	userArg := fileTestOwner(kwargs, a.Get("user"))
	groupArg := a.Get("group")
	ret := fileNewRet(name)
	comments := &payload.Map{}
	addComment := func(path string, cs ...string) {
		v, _ := comments.Get(path)
		list, _ := v.([]string)
		comments.Set(path, append(list, cs...))
	}
	if kwargs.Has("mode") {
		ret.Result = states.False
		ret.Comment = "'mode' is not allowed in 'file.recurse'. Please use 'file_mode' and 'dir_mode'."
		return *ret, nil
	}
	dirMode, _ := fileNormalizeMode(a.Get("dir_mode"))
	keepMode := false
	fileModeArg := a.Get("file_mode")
	if s, ok := fileModeArg.(string); ok && strings.ToLower(s) == "keep" {
		keepMode, fileModeArg = true, nil
	}
	fileMode, _ := fileNormalizeMode(fileModeArg)
	if msg := r.checkUser(userArg, groupArg); msg != "" {
		return fileError(ret, msg)
	}
	if !filepath.IsAbs(name) {
		return fileError(ret, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	var list []any
	for _, s := range fileStrList(a.Get("source")) {
		s = strings.TrimRight(s, "/")
		if !strings.HasPrefix(s, "salt://") {
			return fileError(ret, fmt.Sprintf("Invalid source '%s' (must be a salt:// URI)", s))
		}
		list = append(list, s)
	}
	source, _, err := r.sourceList(list, "")
	if err != nil {
		ret.Result = states.False
		ret.Comment = "Recurse failed: " + err.Error()
		return *ret, nil
	}
	srcpath, senv := fileSplitSaltURL(source)
	if senv == "" {
		senv = r.saltenv()
	}
	mdirs, err := r.masterDirs(senv, "")
	if err != nil {
		return states.Ret{}, err
	}
	foundDir := false
	for _, d := range mdirs {
		if d == srcpath || strings.HasPrefix(d, srcpath+"/") {
			foundDir = true
			break
		}
	}
	if !foundDir {
		ret.Result = states.False
		ret.Comment = fmt.Sprintf("The directory '%s' does not exist on the salt fileserver in saltenv '%s'", srcpath, senv)
		return *ret, nil
	}
	if !fileIsDir(name) {
		if fileExists(name) {
			return fileError(ret, fmt.Sprintf("The path %s exists and is not a directory", name))
		}
		if !r.test {
			if err := r.mkdirPerms(name, userArg, groupArg, dirMode); err != nil {
				return states.Ret{}, fmt.Errorf("%s", filePyOSError(err))
			}
		}
	}
	clean := a.Bool("clean")
	replace := a.Bool("replace")
	mergeRet := func(path string, sub *states.Ret) {
		if sub.Result == states.False || ret.Result == states.True {
			ret.Result = sub.Result
		}
		if sub.Result != states.True && sub.Comment != "" {
			addComment(path, sub.Comment)
		}
		if sub.Changes != nil && sub.Changes.Len() > 0 {
			ret.Changes.Set(path, sub.Changes)
		}
	}

	// _gen_recurse_managed_files
	maxdepth := -1
	if v := a.Get("maxdepth"); v != nil {
		n, err := a.Int("maxdepth")
		if err != nil {
			return states.Ret{}, err
		}
		maxdepth = int(n)
	}
	validRel := func(rel string) bool {
		if strings.Contains("/"+rel+"/", "/../") {
			return false
		}
		if maxdepth >= 0 && strings.Count(strings.Trim(rel, "/"), "/") > maxdepth {
			return false
		}
		return true
	}
	prefix := srcpath
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	incPat, excPat := a.Get("include_pat"), a.Get("exclude_pat")
	files, err := r.masterFiles(senv, prefix)
	if err != nil {
		return states.Ret{}, err
	}
	keep := map[string]bool{}
	mngDirs := map[string]bool{}
	type pair struct{ dest, src string }
	var mngFiles []pair
	for _, fn := range files {
		if strings.TrimSpace(fn) == "" {
			continue
		}
		rel := fileRel("/"+fn, "/"+strings.TrimSuffix(prefix, "/"))
		if !validRel(rel) || !fileIncludeExclude(rel, incPat, excPat) {
			continue
		}
		dest := filePyJoin(name, filepath.Clean(rel))
		keep[dest] = true
		mngDirs[filePyDirname(dest)] = true
		src := "salt://" + fn
		if senv != "" {
			src += "?saltenv=" + senv
		}
		mngFiles = append(mngFiles, pair{dest, src})
	}
	if a.Bool("include_empty") {
		dirs, err := r.masterDirs(senv, prefix)
		if err != nil {
			return states.Ret{}, err
		}
		for _, d := range dirs {
			if !strings.HasPrefix(d, prefix) {
				continue
			}
			rel := fileRel("/"+d, "/"+strings.TrimSuffix(prefix, "/"))
			if !validRel(rel) || !fileIncludeExclude(rel, incPat, excPat) {
				continue
			}
			mdest := filePyJoin(name, filepath.Clean(rel))
			mngDirs[mdest] = true
			keep[mdest] = true
		}
	}
	dirList := make([]string, 0, len(mngDirs))
	for d := range mngDirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	sort.Slice(mngFiles, func(i, j int) bool { return mngFiles[i].dest < mngFiles[j].dest })

	for _, d := range dirList {
		if filePyBasename(d) == ".." {
			continue
		}
		if clean && fileExists(d) && !fileIsDir(d) {
			sub := fileNewRet(name)
			if r.test {
				sub.Comment = fmt.Sprintf("Replacing %s with a directory", d)
				sub.Result = states.None
				mergeRet(d, sub)
				continue
			}
			_ = fileRemovePath(d)
			sub.Changes = payload.NewMap("diff", "Replaced file with a directory")
			mergeRet(d, sub)
		}
		sub, err := r.directory(fileDirectoryArgs{name: d, user: userArg, group: groupArg,
			recurse: []any{}, dirMode: fileModeValue(dirMode), makedirs: true, allowSymlink: true,
			maxDepth: -1, kwargs: &payload.Map{}})
		if err != nil {
			return states.Ret{}, err
		}
		mergeRet(d, sub)
	}
	for _, f := range mngFiles {
		if clean && fileExists(f.dest) && fileIsDir(f.dest) && replace {
			sub := fileNewRet(name)
			if r.test {
				sub.Comment = fmt.Sprintf("Replacing directory %s with a file", f.dest)
				sub.Result = states.None
				mergeRet(f.dest, sub)
				continue
			}
			_ = fileRemovePath(f.dest)
			sub.Changes = payload.NewMap("diff", "Replaced directory with a new file")
			mergeRet(f.dest, sub)
		}
		m := fileManagedDefaults(f.dest)
		m.source = f.src
		m.keepSource = a.Bool("keep_source")
		m.user, m.group = userArg, groupArg
		if keepMode {
			m.mode = "keep"
		} else {
			m.mode = fileModeValue(fileMode)
		}
		m.template = a.Str("template")
		m.makedirs = true
		m.replace = replace
		m.context, m.defaults = a.Get("context"), a.Get("defaults")
		m.backup = fileBackupArg(a.Get("backup"))
		if v, ok := kwargs.Get("show_changes"); ok {
			m.showChanges = payload.Truthy(v)
		}
		if v, ok := kwargs.Get("follow_symlinks"); ok {
			m.follow = payload.Truthy(v)
		}
		if v, ok := kwargs.Get("skip_verify"); ok {
			m.skipVerify = payload.Truthy(v)
		}
		// recurse passes its other keyword arguments on to managed (not
		// mode and makedirs); those managed does not take reach templates.
		m.kwargs = &payload.Map{}
		for _, it := range kwargs.Items() {
			if k, ok := it.Key.(string); ok && (k == "mode" || k == "makedirs" || managedParams[k]) {
				continue
			}
			m.kwargs.SetKey(it.Key, it.Value)
		}
		sub, err := r.managed(m)
		if err != nil {
			return states.Ret{}, err
		}
		mergeRet(f.dest, sub)
	}
	if clean {
		for k := range fileKeepFromRequire(a.Get("require")) {
			keep[k] = true
		}
		removed := r.cleanDir(name, keep, excPat)
		if len(removed) > 0 {
			if r.test {
				if ret.Result == states.True {
					ret.Result = states.None
				}
				for _, p := range removed {
					addComment("removed", p.(string))
				}
			} else {
				ret.Changes.Set("removed", removed)
			}
		}
	}
	var parts []string
	for _, it := range comments.Items() {
		parts = append(parts, fmt.Sprintf("\n#### %s ####\n%s", payload.KeyString(it.Key), strings.Join(it.Value.([]string), "\n")))
	}
	ret.Comment = strings.TrimSpace(strings.Join(parts, "\n"))
	if ret.Comment == "" {
		ret.Comment = fmt.Sprintf("Recursively updated %s", name)
	}
	if ret.Changes.Len() == 0 && ret.Result == states.True {
		ret.Comment = fmt.Sprintf("The directory %s is in the correct state", name)
	}
	return *ret, nil
}

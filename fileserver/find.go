package fileserver

import (
	"fmt"
	"os"
	"strings"
	"unicode"
)

// File is a file the server found: Salt's "fnd" structure.
type File struct {
	// Path is the file's path as joined from its root (root/rel).
	Path string
	// Rel is the normalised relative path that was asked for.
	Rel string
	// Info is os.stat of Path (links followed).
	Info os.FileInfo
}

// envDirs returns the roots of saltenv with Salt's __env__ fallback, and
// whether the saltenv is served. literal reports the fallback case, where
// the directories are the __env__ ones before substitution.
func (r *Roots) envDirs(saltenv string) (dirs []string, fallback, ok bool) {
	if d, ok := r.roots[saltenv]; ok {
		return d, false, true
	}
	d, ok := r.roots["__env__"]
	if !ok || !safeEnvName(saltenv) {
		return nil, false, false
	}
	return d, true, true
}

// safeEnvName reports whether saltenv may be substituted for __env__ in a
// directory without leaving it.
func safeEnvName(saltenv string) bool {
	return saltenv != "" && saltenv != "." && saltenv != ".." && !strings.ContainsAny(saltenv, "/\x00")
}

// rootsOf returns the directories to search for saltenv, __env__
// substituted.
func (r *Roots) rootsOf(saltenv string) []string {
	dirs, fallback, ok := r.envDirs(saltenv)
	if !ok {
		return nil
	}
	if !fallback {
		return dirs
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = strings.ReplaceAll(d, "__env__", saltenv)
	}
	return out
}

// urlScheme is urllib.parse.urlparse(p).scheme.
func urlScheme(p string) string {
	i := strings.IndexByte(p, ':')
	if i <= 0 {
		return ""
	}
	c := p[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return ""
	}
	for _, ch := range p[:i] {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '+' || ch == '-' || ch == '.') {
			return ""
		}
	}
	return strings.ToLower(p[:i])
}

// unescapePath is salt.utils.url.is_escaped + unescape: it returns the
// path without its "|" escape and whether it was escaped.
func unescapePath(p string) (string, bool) {
	switch urlScheme(p) {
	case "":
		if strings.HasPrefix(p, "|") {
			return strings.TrimLeft(p, "|"), true
		}
		return p, false
	case "salt":
		if !strings.HasPrefix(p, "salt://") {
			return p, false
		}
		res := p[len("salt://"):]
		var senv string
		if i := strings.Index(res, "?env="); i >= 0 {
			res, senv = res[:i], res[i+len("?env="):]
		} else if i := strings.Index(res, "?saltenv="); i >= 0 {
			res, senv = res[:i], res[i+len("?saltenv="):]
		}
		if !strings.HasPrefix(res, "|") {
			return p, false
		}
		out := "salt://" + strings.TrimLeft(res, "|")
		if senv != "" {
			out += "?saltenv=" + senv
		}
		return out, true
	}
	return p, false
}

// splitQuery is find_file's handling of "path?key=value&...": only the
// text between the first and the second "?" is read, components without
// "=" are skipped and later keys win.
func splitQuery(p string) (string, map[string]string) {
	head, rest, ok := strings.Cut(p, "?")
	if !ok {
		return p, nil
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	kw := map[string]string{}
	for _, comp := range strings.Split(rest, "&") {
		if k, v, ok := strings.Cut(comp, "="); ok {
			kw[k] = v
		}
	}
	return head, kw
}

// pyIndex parses an index like Python's int() and applies it to a list of
// n items (negative indexes count from the end).
func pyIndex(s string, n int) (int, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, false
	}
	v := 0
	for _, c := range s {
		if c == '_' {
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
		if v > 1<<30 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	if v < 0 {
		v += n
	}
	if v < 0 || v >= n {
		return 0, false
	}
	return v, true
}

// Find locates path in saltenv like Salt's Fileserver.find_file with the
// roots backend: a "?saltenv=...&index=N" query in path is honoured unless
// the path is escaped with a leading "|"; absolute paths, paths containing
// "../", ignored files and files whose real path leaves their root are not
// found.
func (r *Roots) Find(p, saltenv string) (File, bool) {
	f, ok, _ := r.find(p, saltenv)
	return f, ok
}

// find is Find; it fails (as Python does) on a NUL byte in a path that is
// resolved against a root.
func (r *Roots) find(p, saltenv string) (File, bool, error) {
	var kw map[string]string
	if up, escaped := unescapePath(p); escaped {
		p = up
	} else {
		p, kw = splitQuery(p)
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, "../") {
		return File{}, false, nil
	}
	if e, ok := kw["saltenv"]; ok {
		saltenv = e
	}
	rel := pyNormpath(p)
	if strings.HasPrefix(rel, "/") {
		return File{}, false, nil
	}
	if idx, ok := kw["index"]; ok {
		// Salt takes the index-th directory of the saltenv (or of
		// __env__, without substituting it) and does not check that the
		// file stays inside it; gsalt does.
		dirs, _, ok := r.envDirs(saltenv)
		if !ok {
			return File{}, false, nil
		}
		i, ok := pyIndex(idx, len(dirs))
		if !ok || strings.ContainsRune(rel, 0) {
			return File{}, false, nil
		}
		f, ok := r.tryRoot(dirs[i], rel)
		return f, ok, nil
	}
	for _, root := range r.rootsOf(saltenv) {
		if strings.ContainsRune(rel, 0) {
			return File{}, false, fmt.Errorf("%w: embedded null byte in path", ErrBadLoad)
		}
		if f, ok := r.tryRoot(root, rel); ok {
			return f, true, nil
		}
	}
	return File{}, false, nil
}

func (r *Roots) tryRoot(root, rel string) (File, bool) {
	full := pyJoin(root, rel)
	if !under(root, full) {
		return File{}, false
	}
	fi, ok := isFile(full)
	if !ok || r.ignored(full) {
		return File{}, false
	}
	return File{Path: full, Rel: rel, Info: fi}, true
}

// inRoots reports whether the real path of p lies in one of saltenv's
// roots (roots.serve_file's check).
func (r *Roots) inRoots(p, saltenv string) bool {
	for _, root := range r.rootsOf(saltenv) {
		if under(root, p) {
			return true
		}
	}
	return false
}

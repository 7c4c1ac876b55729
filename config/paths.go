package config

import (
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
)

// Python path helpers. Salt builds its paths with os.path (no cleaning) and
// salt.utils.path.join (cleaning); reproducing them exactly keeps the option
// values byte-identical to Salt's.

// pyOsJoin is Python's posixpath.join: an absolute element restarts the path,
// nothing is cleaned.
func pyOsJoin(parts ...string) string {
	if len(parts) == 0 {
		return ""
	}
	p := parts[0]
	for _, b := range parts[1:] {
		switch {
		case strings.HasPrefix(b, "/"):
			p = b
		case p == "" || strings.HasSuffix(p, "/"):
			p += b
		default:
			p += "/" + b
		}
	}
	return p
}

// pyNormpath is posixpath.normpath (py.Normpath).
func pyNormpath(p string) string { return py.Normpath(p) }

// pyAbspath is Python's os.path.abspath.
func pyAbspath(p string) string {
	if !strings.HasPrefix(p, "/") {
		if wd, err := os.Getwd(); err == nil {
			p = pyOsJoin(wd, p)
		}
	}
	return pyNormpath(p)
}

// pyJoin is salt.utils.path.join: every part is normalised, the leading
// slashes of all but the first are dropped, and the result is normalised.
func pyJoin(parts ...string) string {
	if len(parts) == 0 {
		return ""
	}
	root := pyNormpath(parts[0])
	if len(parts) == 1 {
		return root
	}
	all := []string{root}
	for _, p := range parts[1:] {
		all = append(all, strings.TrimLeft(pyNormpath(p), "/"))
	}
	return pyNormpath(pyOsJoin(all...))
}

// pySplit is Python's os.path.split.
func pySplit(p string) (head, tail string) {
	i := strings.LastIndexByte(p, '/') + 1
	head, tail = p[:i], p[i:]
	if head != "" && strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	return head, tail
}

// urlScheme returns the scheme urllib.parse.urlparse finds in s ("" for a
// plain path), e.g. "udp" for udp://host:514.
func urlScheme(s string) string {
	s = strings.TrimSpace(s)
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return ""
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return ""
	}
	for _, c := range s[:i] {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
		if !ok {
			return ""
		}
	}
	return strings.ToLower(s[:i])
}

// prependRootDir re-roots the path options in keys under opts["root_dir"]
// the way Salt's prepend_root_dir does on Linux, where the built-in root is
// "/": a relative path is joined to root_dir, an absolute path is placed
// under root_dir unless it already starts with root_dir + "/". Options that
// are missing or not strings are left alone.
func prependRootDir(opts map[string]any, keys []string) {
	rootStr, _ := opts["root_dir"].(string)
	root := pyAbspath(rootStr)
	const defRoot = "" // "/" with the trailing separator removed
	for _, k := range keys {
		p, ok := opts[k].(string)
		if !ok {
			continue
		}
		var fromDef, fromRoot string
		if p == defRoot || strings.HasPrefix(p, defRoot+"/") {
			fromDef = p[len(defRoot):]
		}
		if root != "" && (p == root || strings.HasPrefix(p, root+"/")) {
			fromRoot = p[len(root):]
		}
		switch {
		case fromDef != "" && fromRoot == "":
			p = fromDef
		case fromRoot != "" && fromDef == "":
			p = fromRoot
		case fromDef != "" && fromRoot != "":
			// Both matched; the built-in root "" is a prefix of any root, so
			// the more specific configured root wins.
			p = fromRoot
		case strings.HasPrefix(p, "/"):
			continue
		}
		opts[k] = pyJoin(root, p)
	}
}

package fileserver

import (
	"os"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
)

// These helpers follow Python's posixpath, whose exact spelling of paths
// Salt returns (a root configured as "/srv/salt/" gives "/srv/salt/x").

// pyJoin is os.path.join for two POSIX paths.
func pyJoin(a, b string) string {
	switch {
	case strings.HasPrefix(b, "/"):
		return b
	case a == "" || strings.HasSuffix(a, "/"):
		return a + b
	}
	return a + "/" + b
}

// pyNormpath is posixpath.normpath (py.Normpath).
func pyNormpath(p string) string { return py.Normpath(p) }

// pySplit is os.path.split.
func pySplit(p string) (head, tail string) {
	i := strings.LastIndexByte(p, '/') + 1
	head, tail = p[:i], p[i:]
	if head != "" && strings.Trim(head, "/") != "" {
		head = strings.TrimRight(head, "/")
	}
	return head, tail
}

// pyAbspath is os.path.abspath.
func pyAbspath(p string) string {
	if !strings.HasPrefix(p, "/") {
		if wd, err := os.Getwd(); err == nil {
			p = pyJoin(wd, p)
		}
	}
	return pyNormpath(p)
}

// maxLinkHops bounds the symbolic links one realpath call expands.
const maxLinkHops = 255

// realpath is os.path.realpath (non-strict): symbolic links are resolved
// as far as they exist, missing components are kept, and a loop leaves the
// rest of the path unresolved.
func realpath(p string) string {
	hops := 0
	res, _ := joinRealpath("", p, map[string]*string{}, &hops)
	return pyAbspath(res)
}

func joinRealpath(cur, rest string, seen map[string]*string, hops *int) (string, bool) {
	if strings.HasPrefix(rest, "/") {
		rest = rest[1:]
		cur = "/"
	}
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(rest, "/")
		if name == "" || name == "." {
			continue
		}
		if name == ".." {
			if cur == "" {
				cur = ".."
				continue
			}
			var base string
			cur, base = pySplit(cur)
			if base == ".." {
				cur = pyJoin(pyJoin(cur, ".."), "..")
			}
			continue
		}
		next := pyJoin(cur, name)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if v, ok := seen[next]; ok {
			if v != nil {
				cur = *v
				continue
			}
			return pyJoin(next, rest), false
		}
		*hops++
		target, err := os.Readlink(next)
		if err != nil || *hops > maxLinkHops {
			return pyJoin(next, rest), false
		}
		seen[next] = nil
		var ok bool
		cur, ok = joinRealpath(cur, target, seen, hops)
		if !ok {
			return pyJoin(cur, rest), false
		}
		resolved := cur
		seen[next] = &resolved
	}
	return cur, true
}

// pyRelpath is os.path.relpath(p, start) for absolute inputs.
func pyRelpath(p, start string) string {
	split := func(s string) []string {
		var out []string
		for _, c := range strings.Split(pyAbspath(s), "/") {
			if c != "" {
				out = append(out, c)
			}
		}
		return out
	}
	pl, sl := split(p), split(start)
	i := 0
	for i < len(pl) && i < len(sl) && pl[i] == sl[i] {
		i++
	}
	parts := make([]string, 0, len(sl)-i+len(pl)-i)
	for range len(sl) - i {
		parts = append(parts, "..")
	}
	parts = append(parts, pl[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// under reports whether the real path of p lies inside the real path of
// root (Salt's clean_path with subdir=True, with a proper path-prefix
// test instead of a string prefix).
func under(root, p string) bool {
	rr := realpath(root)
	rp := realpath(pyNormpath(p))
	if rp == rr {
		return true
	}
	return strings.HasPrefix(rp, strings.TrimSuffix(rr, "/")+"/")
}

// isFile is os.path.isfile: a regular file, links followed.
func isFile(p string) (os.FileInfo, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	return fi, true
}

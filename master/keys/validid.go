package keys

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// ValidID reports whether id is a minion id Salt's master accepts
// (salt.utils.verify.valid_id): it must not contain "/", "\" or NUL, and
// pki_dir/<id>, with symbolic links resolved, must lie directly inside the
// resolved pki_dir (so "", "." and ".." are refused, and so is an id whose
// file in pki_dir is a link pointing elsewhere). Ids that are not valid
// UTF-8 are refused too: a Python master only ever sees text ids. So are
// ids holding control characters (newlines, escapes, DEL, C1 controls):
// they would end up in file names, logs and terminals like path
// characters would.
func ValidID(pkiDir, id string) bool {
	if strings.ContainsAny(id, "/\\\x00") || !validUTF8(id) || hasControl(id) {
		return false
	}
	root := pyRealpath(pkiDir)
	if !filepath.IsAbs(root) {
		return false
	}
	p := pyRealpath(filepath.Join(pkiDir, id))
	return filepath.Dir(p) == root
}

// IDLinks returns what ValidID's answer for an id with acceptable
// characters depends on: the resolved pki_dir, and the names of the
// entries in it that are symbolic links (pki_dir/<id> of any other id
// resolves to a path directly inside the resolved pki_dir). A cache of
// ValidID answers stays right while both are unchanged.
func IDLinks(pkiDir string) (root string, links []string, err error) {
	root = pyRealpath(pkiDir)
	ents, err := os.ReadDir(root)
	if err != nil {
		return root, nil, err
	}
	for _, e := range ents {
		if e.Type()&os.ModeSymlink != 0 {
			links = append(links, e.Name())
		}
	}
	return root, links, nil
}

// hasControl reports whether s holds a Unicode control character.
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// safeName is the cheap id check for ids given by an operator (ReadPub,
// Print): a single path element.
func safeName(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00")
}

// pyRealpath resolves symbolic links like Python's non-strict
// os.path.realpath: the path is made absolute, links are followed
// component by component, components that do not exist are kept as they
// are, and a link loop stops resolution.
func pyRealpath(p string) string {
	if !filepath.IsAbs(p) {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
	}
	rest := strings.Split(filepath.Clean(p), string(filepath.Separator))
	resolved := string(filepath.Separator)
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		target, err := os.Readlink(next)
		if err != nil || links > 40 {
			// Unreadable link or a loop: keep the rest unresolved.
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		rest = append(strings.Split(target, string(filepath.Separator)), rest...)
	}
	return resolved
}

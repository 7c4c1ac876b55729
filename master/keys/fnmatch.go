package keys

import (
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
)

// compileGlob compiles a key glob once for matching many key ids. Globs
// follow Python's fnmatch.fnmatch on POSIX (target.Fnmatch), which salt-key
// uses for key globs; a pattern that cannot be compiled matches nothing.
func compileGlob(pat string) func(name string) bool {
	re, err := py.CompileFnmatch(pat)
	if err != nil {
		return func(string) bool { return false }
	}
	return re.MatchString
}

// validUTF8 reports whether s is valid UTF-8 (a Python str).
func validUTF8(s string) bool { return utf8.ValidString(s) }

package keys

import (
	"errors"
	"regexp"
	"strings"
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

// ExprMatch reports whether line matches expr the way Salt's
// salt.utils.stringutils.expr_match does for autosign_file and
// autoreject_file entries: first as an fnmatch glob, then as the Python
// regular expression `\A<expr>\Z` applied with re.match (anchored at the
// start only, so an alternation like "a|b" accepts anything starting
// with "a").
//
// The expression runs on Go's RE2 engine after `\Z` is rewritten to `\z`.
// Limits: constructs RE2 lacks (look-around, backreferences, possessive
// quantifiers, conditional groups) fail to compile and count as no match,
// as an invalid expression does in Salt; `\d`, `\w`, `\s` and `\b` are
// ASCII-only in Go but Unicode-aware in Python; `$` without (?m) matches
// only at the very end in Go, while Python also accepts it before a final
// newline.
func ExprMatch(line, expr string) bool {
	if py.Fnmatch(line, expr) {
		return true
	}
	ok, _ := pyAnchoredMatch(expr, line)
	return ok
}

// pyAnchoredMatch runs re.match(r"\A" + expr + r"\Z", line) on RE2.
func pyAnchoredMatch(expr, line string) (bool, error) {
	goexpr, err := translatePyRegex(expr)
	if err != nil {
		return false, err
	}
	re, err := regexp.Compile(`\A` + goexpr + `\z`)
	if err != nil {
		return false, err
	}
	loc := re.FindStringIndex(line)
	return loc != nil && loc[0] == 0, nil
}

// errPyGlobalFlags is Python 3.11's "global flags not at the start of the
// expression": Salt puts \A in front of the expression, so an inline
// "(?i)" group anywhere in it makes re.match fail.
var errPyGlobalFlags = errors.New("keys: global flags not at the start of the expression")

// translatePyRegex rewrites the Python-only escape \Z (end of text) to
// RE2's \z, leaving every other escape alone, and refuses global inline
// flag groups like "(?i)" as Python does after the \A prefix.
func translatePyRegex(expr string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\\' && i+1 < len(expr):
			if expr[i+1] == 'Z' && !inClass {
				b.WriteString(`\z`)
			} else {
				b.WriteByte(c)
				b.WriteByte(expr[i+1])
			}
			i++
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			// A "]" right after "[" or "[^" is a member.
			if i+1 < len(expr) && expr[i+1] == '^' {
				b.WriteByte(c)
				i++
				c = expr[i]
			}
			if i+1 < len(expr) && expr[i+1] == ']' {
				b.WriteByte(c)
				i++
				c = expr[i]
			}
		case c == '(' && strings.HasPrefix(expr[i:], "(?"):
			j := i + 2
			for j < len(expr) && strings.IndexByte("aiLmsux-", expr[j]) >= 0 {
				j++
			}
			if j > i+2 && j < len(expr) && expr[j] == ')' {
				return "", errPyGlobalFlags
			}
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// validUTF8 reports whether s is valid UTF-8 (a Python str).
func validUTF8(s string) bool { return utf8.ValidString(s) }

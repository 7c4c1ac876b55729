package event

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gsalt/gsalt/internal/py"
)

// Matcher selects events by tag. Implementations must be safe for
// concurrent use.
type Matcher interface {
	// Match reports whether an event with this tag is wanted.
	Match(tag string) bool
}

// MatchFunc adapts a function to Matcher.
type MatchFunc func(tag string) bool

// Match calls f(tag).
func (f MatchFunc) Match(tag string) bool { return f(tag) }

// All matches every tag.
func All() Matcher { return MatchFunc(func(string) bool { return true }) }

// Prefix matches tags starting with p (Salt's default "startswith" match;
// an empty p matches everything).
func Prefix(p string) Matcher {
	return MatchFunc(func(tag string) bool { return strings.HasPrefix(tag, p) })
}

// Suffix matches tags ending with s (Salt's "endswith").
func Suffix(s string) Matcher {
	return MatchFunc(func(tag string) bool { return strings.HasSuffix(tag, s) })
}

// Contains matches tags containing s (Salt's "find").
func Contains(s string) Matcher {
	return MatchFunc(func(tag string) bool { return strings.Contains(tag, s) })
}

// Regex matches like Salt's "regex" match type: the expression is prefixed
// with "^" and searched in the tag, so it is anchored at the start only
// (and "a|b" means "^a" or "b" anywhere, as in Salt). The syntax is Go's
// RE2, which lacks Python's look-arounds and back-references.
func Regex(expr string) (Matcher, error) {
	re, err := regexp.Compile("^" + expr)
	if err != nil {
		return nil, fmt.Errorf("event: regex %q: %w", expr, err)
	}
	return MatchFunc(re.MatchString), nil
}

// Glob matches like Python's fnmatch.fnmatch on POSIX (Salt's "fnmatch"
// match type): "*" matches any run of characters including "/", "?" one
// character, "[seq]" and "[!seq]" character sets with ranges; there is no
// escape character and an unclosed "[" is literal.
func Glob(pattern string) (Matcher, error) {
	re, err := py.CompileFnmatch(pattern)
	if err != nil {
		return nil, fmt.Errorf("event: glob %q: %w", pattern, err)
	}
	return MatchFunc(re.MatchString), nil
}

// NewMatcher builds the matcher for one of Salt's event_match_type names:
// "startswith" (also ""), "endswith", "find", "regex" or "fnmatch".
func NewMatcher(matchType, tag string) (Matcher, error) {
	switch matchType {
	case "", "startswith":
		return Prefix(tag), nil
	case "endswith":
		return Suffix(tag), nil
	case "find":
		return Contains(tag), nil
	case "regex":
		return Regex(tag)
	case "fnmatch":
		return Glob(tag)
	}
	return nil, fmt.Errorf("event: unknown match type %q", matchType)
}

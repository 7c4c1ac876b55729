package event

import (
	"fmt"
	"regexp"
	"strings"
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
	re, err := regexp.Compile(translateGlob(pattern))
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

// quoteRune renders one character for a Go regexp, inside or outside a
// character class.
func quoteRune(r rune) string { return fmt.Sprintf(`\x{%x}`, r) }

// translateGlob converts an fnmatch pattern into an anchored Go regexp
// following the rules of CPython 3.11's fnmatch.translate.
func translateGlob(pat string) string {
	p := []rune(pat)
	var b strings.Builder
	b.WriteString(`(?s)^`)
	n := len(p)
	lastStar := false
	for i := 0; i < n; {
		c := p[i]
		i++
		switch c {
		case '*':
			if !lastStar {
				b.WriteString(`.*`)
			}
			lastStar = true
			continue
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i
			if j < n && p[j] == '!' {
				j++
			}
			if j < n && p[j] == ']' {
				j++
			}
			for j < n && p[j] != ']' {
				j++
			}
			if j >= n {
				b.WriteString(quoteRune('['))
			} else {
				b.WriteString(globClass(p[i:j]))
				i = j + 1
			}
		default:
			b.WriteString(quoteRune(c))
		}
		lastStar = false
	}
	b.WriteString(`$`)
	return b.String()
}

// globClass converts the inside of a "[...]" set into a Go regexp, with
// CPython's handling of "!" negation, ranges, a trailing "-" and empty
// (reversed) ranges.
func globClass(stuff []rune) string {
	type span struct{ lo, hi rune }
	var chunks [][]rune
	if !containsRune(stuff, '-') {
		chunks = [][]rune{stuff}
	} else {
		// Split at the hyphens that form ranges, as CPython does: the
		// first search starts after the first member (after "!x" when
		// negated) and each next one skips the character after a range.
		i := 0
		k := 1
		if stuff[0] == '!' {
			k = 2
		}
		for {
			k = indexRuneFrom(stuff, '-', k)
			if k < 0 {
				break
			}
			chunks = append(chunks, stuff[i:k])
			i = k + 1
			k += 3
		}
		if i < len(stuff) {
			chunks = append(chunks, stuff[i:])
		} else {
			last := len(chunks) - 1
			chunks[last] = append(append([]rune(nil), chunks[last]...), '-')
		}
		// Remove empty (reversed) ranges.
		for k := len(chunks) - 1; k > 0; k-- {
			prev, cur := chunks[k-1], chunks[k]
			if prev[len(prev)-1] > cur[0] {
				merged := append(append([]rune(nil), prev[:len(prev)-1]...), cur[1:]...)
				chunks[k-1] = merged
				chunks = append(chunks[:k], chunks[k+1:]...)
			}
		}
	}
	if len(chunks) == 1 && len(chunks[0]) == 0 {
		return `[^\x00-\x{10FFFF}]` // empty set: never matches
	}
	if len(chunks) == 1 && len(chunks[0]) == 1 && chunks[0][0] == '!' {
		return `.` // negated empty set: any character
	}
	negate := false
	if chunks[0][0] == '!' {
		negate = true
		chunks[0] = chunks[0][1:]
	}
	var spans []span
	for ci, ch := range chunks {
		for pi, r := range ch {
			if ci > 0 && pi == 0 {
				continue // end of the range started by the previous chunk
			}
			if ci < len(chunks)-1 && pi == len(ch)-1 {
				spans = append(spans, span{r, chunks[ci+1][0]})
				continue
			}
			spans = append(spans, span{r, r})
		}
	}
	var b strings.Builder
	b.WriteByte('[')
	if negate {
		b.WriteByte('^')
	}
	if len(spans) == 0 {
		// Only reachable for a negated set whose members all vanished.
		b.WriteString(`\x00-\x{10FFFF}`)
	}
	for _, s := range spans {
		b.WriteString(quoteRune(s.lo))
		if s.hi != s.lo {
			b.WriteByte('-')
			b.WriteString(quoteRune(s.hi))
		}
	}
	b.WriteByte(']')
	return b.String()
}

func containsRune(rs []rune, r rune) bool { return indexRuneFrom(rs, r, 0) >= 0 }

func indexRuneFrom(rs []rune, r rune, from int) int {
	for i := from; i < len(rs); i++ {
		if rs[i] == r {
			return i
		}
	}
	return -1
}

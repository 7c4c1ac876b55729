package py

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrBadPattern: an fnmatch pattern cannot be compiled (Python's fnmatch
// would raise re.error, as for the empty range in "[b-a-c]").
var ErrBadPattern = errors.New("invalid glob pattern")

// Fnmatch reports whether name matches the shell pattern exactly like
// Python's fnmatch.fnmatchcase (and fnmatch.fnmatch on POSIX): '*' matches
// any run of characters including '/', '?' one character, '[seq]' and
// '[!seq]' a character set; there is no escaping and an unmatched '[' is a
// literal. Matching is case-sensitive and covers the whole name.
//
// This function compiles the pattern on every call; use CompileFnmatch (or
// target.Matcher, which caches) to reuse compiled patterns. A pattern
// Python cannot compile matches nothing.
func Fnmatch(name, pattern string) bool {
	re, err := CompileFnmatch(pattern)
	if err != nil {
		return false
	}
	return re.MatchString(name)
}

// FnmatchTranslate returns the RE2 expression that Fnmatch uses for
// pattern, the equivalent of Python's fnmatch.translate (anchored at both
// ends). Errors wrap ErrBadPattern.
func FnmatchTranslate(pattern string) (string, error) {
	return translateFnmatch(pattern)
}

// CompileFnmatch compiles pattern once for callers that match it against
// many names: the returned expression's MatchString gives Fnmatch's answer.
// Errors wrap ErrBadPattern.
func CompileFnmatch(pattern string) (*regexp.Regexp, error) {
	src, err := translateFnmatch(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%w: fnmatch %q: %v", ErrBadPattern, pattern, err)
	}
	return re, nil
}

// translateFnmatch follows fnmatch.translate step by step, including how a
// bracket expression is cut into range chunks and how empty ranges are
// dropped, then writes every set member as an explicit code point so that no
// RE2-specific class syntax ([:alpha:], \pN) can sneak in.
func translateFnmatch(pat string) (string, error) {
	p := []rune(pat)
	n := len(p)
	var b strings.Builder
	b.Grow(len(pat) + 16)
	b.WriteString(`^(?s:`)
	lastStar := false
	i := 0
	for i < n {
		c := p[i]
		i++
		if c == '*' {
			if !lastStar {
				b.WriteString(`.*`)
			}
			lastStar = true
			continue
		}
		lastStar = false
		switch c {
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
				b.WriteString(`\[`)
				continue
			}
			stuff := fnmatchSetText(p, i, j)
			i = j + 1
			switch {
			case len(stuff) == 0:
				b.WriteString(`[^\x00-\x{10FFFF}]`) // never matches
			case len(stuff) == 1 && stuff[0] == '!':
				b.WriteString(`.`)
			default:
				if stuff[0] == '!' {
					stuff = append([]rune{'^'}, stuff[1:]...)
				} else if stuff[0] == '^' || stuff[0] == '[' {
					stuff = append([]rune{'\\'}, stuff...)
				}
				cls, ok := pyClassToRE2(stuff)
				if !ok {
					return "", fmt.Errorf("%w: fnmatch %q: bad character range", ErrBadPattern, pat)
				}
				b.WriteString(cls)
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)\z`)
	return b.String(), nil
}

// fnmatchSetText builds the Python regex set body that fnmatch.translate
// produces for p[i:j] (before the leading '!'/'^' fix-up).
func fnmatchSetText(p []rune, i, j int) []rune {
	esc := func(chunk []rune, escHyphen bool) []rune {
		out := make([]rune, 0, len(chunk)+2)
		for _, r := range chunk {
			switch {
			case r == '\\':
				out = append(out, '\\', '\\')
			case r == '-' && escHyphen:
				out = append(out, '\\', '-')
			case r == '&' || r == '~' || r == '|':
				out = append(out, '\\', r)
			default:
				out = append(out, r)
			}
		}
		return out
	}
	hasHyphen := false
	for _, r := range p[i:j] {
		if r == '-' {
			hasHyphen = true
			break
		}
	}
	if !hasHyphen {
		return esc(p[i:j], false)
	}
	var chunks [][]rune
	k := i + 1
	if p[i] == '!' {
		k = i + 2
	}
	for {
		k = findRune(p, '-', k, j)
		if k < 0 {
			break
		}
		chunks = append(chunks, append([]rune(nil), p[i:k]...))
		i = k + 1
		k += 3
	}
	if chunk := p[i:j]; len(chunk) > 0 {
		chunks = append(chunks, append([]rune(nil), chunk...))
	} else if len(chunks) > 0 {
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], '-')
	}
	// drop empty ranges (lo > hi), as Python does
	for k := len(chunks) - 1; k > 0; k-- {
		prev, cur := chunks[k-1], chunks[k]
		if len(prev) == 0 || len(cur) == 0 {
			continue
		}
		if prev[len(prev)-1] > cur[0] {
			merged := append(append([]rune(nil), prev[:len(prev)-1]...), cur[1:]...)
			chunks[k-1] = merged
			chunks = append(chunks[:k], chunks[k+1:]...)
		}
	}
	var out []rune
	for idx, ch := range chunks {
		if idx > 0 {
			out = append(out, '-')
		}
		out = append(out, esc(ch, true)...)
	}
	return out
}

func findRune(p []rune, r rune, from, to int) int {
	for k := from; k < to && k < len(p); k++ {
		if k >= 0 && p[k] == r {
			return k
		}
	}
	return -1
}

// pyClassToRE2 converts the body of a Python regex set as produced by
// fnmatch.translate (only \x escapes of literal characters, unescaped '-'
// between range ends, a leading '^' for negation) into an RE2 class.
func pyClassToRE2(body []rune) (string, bool) {
	pos := 0
	neg := false
	if len(body) > 0 && body[0] == '^' {
		neg = true
		pos = 1
	}
	next := func() rune {
		r := body[pos]
		pos++
		if r == '\\' && pos < len(body) {
			r = body[pos]
			pos++
		}
		return r
	}
	var b strings.Builder
	b.WriteByte('[')
	if neg {
		b.WriteByte('^')
	}
	for pos < len(body) {
		lo := next()
		if pos < len(body) && body[pos] == '-' {
			pos++
			if pos >= len(body) {
				writeClassRune(&b, lo)
				writeClassRune(&b, '-')
				break
			}
			hi := next()
			if hi < lo {
				return "", false
			}
			writeClassRune(&b, lo)
			b.WriteByte('-')
			writeClassRune(&b, hi)
			continue
		}
		writeClassRune(&b, lo)
	}
	b.WriteByte(']')
	return b.String(), true
}

func writeClassRune(b *strings.Builder, r rune) {
	fmt.Fprintf(b, `\x{%x}`, r)
}

package keys

import (
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"
)

// globToken is one element of a compiled Python fnmatch pattern.
type globToken struct {
	kind   byte // 'l' literal, '?' any, '*' star, '[' set
	r      rune
	set    []runeRange
	negate bool
}

type runeRange struct{ lo, hi rune }

// compileGlob parses pat with the rules of Python 3.11's fnmatch.translate:
// "*" matches any run (including "/" and newlines), "?" any one character,
// "[...]" a set ("!" negates, a leading "]" is a member, "a-z" ranges,
// reversed ranges are dropped, backslash is an ordinary character) and an
// unterminated "[" is a literal. There is no quoting.
func compileGlob(pat string) []globToken {
	p := []rune(pat)
	var toks []globToken
	n := len(p)
	for i := 0; i < n; {
		c := p[i]
		i++
		switch c {
		case '*':
			if len(toks) == 0 || toks[len(toks)-1].kind != '*' {
				toks = append(toks, globToken{kind: '*'})
			}
		case '?':
			toks = append(toks, globToken{kind: '?'})
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
				toks = append(toks, globToken{kind: 'l', r: '['})
				continue
			}
			toks = append(toks, parseGlobSet(p, i, j))
			i = j + 1
		default:
			toks = append(toks, globToken{kind: 'l', r: c})
		}
	}
	return toks
}

// parseGlobSet turns p[i:j] (the text between "[" and "]") into a set:
// it builds the regular expression class body exactly like
// fnmatch.translate and then reads that body the way Python's re does.
func parseGlobSet(p []rune, i, j int) globToken {
	esc := func(ch []rune, hyphen bool) []rune {
		var out []rune
		for _, r := range ch {
			if r == '\\' || (hyphen && r == '-') {
				out = append(out, '\\')
			}
			out = append(out, r)
		}
		return out
	}
	stuff := p[i:j]
	hasHyphen := false
	for _, r := range stuff {
		if r == '-' {
			hasHyphen = true
			break
		}
	}
	var body []rune
	if !hasHyphen {
		body = esc(stuff, false)
	} else {
		var chunks [][]rune
		k := i + 1
		if p[i] == '!' {
			k = i + 2
		}
		for {
			f := -1
			for x := k; x < j; x++ {
				if p[x] == '-' {
					f = x
					break
				}
			}
			if f < 0 {
				break
			}
			chunks = append(chunks, append([]rune(nil), p[i:f]...))
			i = f + 1
			k = f + 3
		}
		if chunk := p[i:j]; len(chunk) > 0 {
			chunks = append(chunks, append([]rune(nil), chunk...))
		} else {
			chunks[len(chunks)-1] = append(chunks[len(chunks)-1], '-')
		}
		// Remove empty (reversed) ranges, as Python does.
		for k := len(chunks) - 1; k > 0; k-- {
			prev, cur := chunks[k-1], chunks[k]
			if prev[len(prev)-1] > cur[0] {
				chunks[k-1] = append(append([]rune(nil), prev[:len(prev)-1]...), cur[1:]...)
				chunks = append(chunks[:k], chunks[k+1:]...)
			}
		}
		for ci, ch := range chunks {
			if ci > 0 {
				body = append(body, '-')
			}
			body = append(body, esc(ch, true)...)
		}
	}
	// Python escapes the set operators &, ~ and |; escaped or not they
	// are literal members, so nothing to do here.
	tok := globToken{kind: '['}
	if len(body) == 0 {
		return tok // empty set: never matches
	}
	if len(body) == 1 && body[0] == '!' {
		tok.negate = true // negated empty set: any character
		return tok
	}
	if body[0] == '!' {
		tok.negate = true
		body = body[1:]
	}
	// Read the class body like sre_parse: "\\x" is the literal x, "a-b" a
	// range unless the "-" is last.
	item := func(x int) (rune, int) {
		if body[x] == '\\' && x+1 < len(body) {
			return body[x+1], x + 2
		}
		return body[x], x + 1
	}
	for x := 0; x < len(body); {
		lo, nx := item(x)
		if nx < len(body)-1 && body[nx] == '-' {
			hi, nx2 := item(nx + 1)
			tok.set = append(tok.set, runeRange{lo, hi})
			x = nx2
			continue
		}
		tok.set = append(tok.set, runeRange{lo, lo})
		x = nx
	}
	return tok
}

func (t *globToken) matchRune(r rune) bool {
	switch t.kind {
	case 'l':
		return r == t.r
	case '?':
		return true
	case '[':
		in := false
		for _, rg := range t.set {
			if r >= rg.lo && r <= rg.hi {
				in = true
				break
			}
		}
		return in != t.negate
	}
	return false
}

// Fnmatch reports whether name matches the shell pattern pat exactly like
// Python's fnmatch.fnmatch on POSIX (no case folding), which salt-key uses
// for key globs and Salt for glob targets: "*" also matches "/" and
// newlines, "[!x]" negates, there is no escaping. Names and patterns are
// compared by Unicode code point; invalid UTF-8 bytes count as U+FFFD.
func Fnmatch(name, pat string) bool {
	return matchTokens([]rune(name), compileGlob(pat))
}

// matchTokens is the classic glob matcher with single-star backtracking,
// which gives the same answers as Python's regular expression (each fixed
// piece between stars is found at its leftmost position).
func matchTokens(s []rune, toks []globToken) bool {
	si, ti := 0, 0
	starTi, starSi := -1, 0
	for si < len(s) {
		if ti < len(toks) && toks[ti].kind != '*' && toks[ti].matchRune(s[si]) {
			si++
			ti++
			continue
		}
		if ti < len(toks) && toks[ti].kind == '*' {
			starTi, starSi = ti, si
			ti++
			continue
		}
		if starTi >= 0 {
			starSi++
			si = starSi
			ti = starTi + 1
			continue
		}
		return false
	}
	for ti < len(toks) && toks[ti].kind == '*' {
		ti++
	}
	return ti == len(toks)
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
	if Fnmatch(line, expr) {
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

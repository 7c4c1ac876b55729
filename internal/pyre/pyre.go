// Package pyre gives Python's re module semantics (re.match, re.search,
// re.sub, groups) to Go code, for Salt's regex_match, regex_search,
// regex_replace filters and match test. Go's regexp (RE2) cannot do
// Python's lookarounds and backreferences, so patterns run on
// github.com/dlclark/regexp2 (a backtracking engine with .NET syntax)
// after Python's own syntax ((?P<name>...), (?P=name), \Z, the a/u/L
// flags) is translated. Matching is bounded by a timeout.
package pyre

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// Flags are Python's re flags.
type Flags int

// Python's re flags.
const (
	IgnoreCase Flags = 1 << iota // re.I
	Multiline                    // re.M
	DotAll                       // re.S
	Verbose                      // re.X
)

// MatchTimeout bounds one match (catastrophic backtracking).
const MatchTimeout = 5 * time.Second

// ErrPattern is returned (wrapped) for a pattern Python's re rejects or
// gsalt cannot translate; ErrTimeout when a match runs too long.
var (
	ErrPattern = errors.New("invalid regular expression")
	ErrTimeout = errors.New("regular expression match timed out")
)

// Regexp is a compiled Python regular expression.
type Regexp struct {
	re      *regexp2.Regexp
	pattern string
	groups  int
	// names maps Python group names to their numbers
	names map[string]int
}

// Compile compiles a Python pattern with flags.
func Compile(pattern string, flags Flags) (*Regexp, error) {
	src, names, err := translate(pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPattern, strconv.Quote(pattern), err)
	}
	var opts regexp2.RegexOptions
	if flags&IgnoreCase != 0 {
		opts |= regexp2.IgnoreCase
	}
	if flags&Multiline != 0 {
		opts |= regexp2.Multiline
	}
	if flags&DotAll != 0 {
		opts |= regexp2.Singleline
	}
	if flags&Verbose != 0 {
		opts |= regexp2.IgnorePatternWhitespace
	}
	re, err := regexp2.Compile(src, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrPattern, strconv.Quote(pattern), err)
	}
	re.MatchTimeout = MatchTimeout
	n := 0
	for _, g := range re.GetGroupNumbers() {
		n = max(n, g)
	}
	return &Regexp{re: re, pattern: pattern, groups: n, names: names}, nil
}

// groupNumber is the number of the group called name, or -1.
func (r *Regexp) groupNumber(name string) int {
	if n, ok := r.names[name]; ok {
		return n
	}
	return -1
}

// translate rewrites Python-only syntax into regexp2's (.NET) syntax.
// Every capturing group gets its Python number explicitly ((?<3>...)):
// .NET numbers named groups after the unnamed ones, Python by position.
// It returns the group names with their numbers.
func translate(p string) (string, map[string]int, error) {
	var b strings.Builder
	inClass := false
	group := 0
	names := map[string]int{}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return "", nil, errors.New("bad escape (end of pattern)")
			}
			n := p[i+1]
			if !inClass && n == 'Z' {
				b.WriteString(`\z`)
				i++
				continue
			}
			b.WriteByte(c)
			b.WriteByte(n)
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// a ] right after [ or [^ is a literal
			if strings.HasPrefix(p[i+1:], "^]") {
				b.WriteString("^]")
				i += 2
			} else if strings.HasPrefix(p[i+1:], "]") {
				b.WriteString(`\]`)
				i++
			}
		case c == '(' && strings.HasPrefix(p[i:], "(?P<"):
			end := strings.IndexByte(p[i:], '>')
			if end < 0 {
				return "", nil, errors.New("missing >, unterminated name")
			}
			name := p[i+4 : i+end]
			if _, dup := names[name]; dup {
				return "", nil, fmt.Errorf("redefinition of group name %s as group %d", strconv.Quote(name), group+1)
			}
			group++
			names[name] = group
			fmt.Fprintf(&b, "(?<%d>", group)
			i += end
		case c == '(' && strings.HasPrefix(p[i:], "(?P="):
			end := strings.IndexByte(p[i:], ')')
			if end < 0 {
				return "", nil, errors.New("missing ), unterminated name")
			}
			n, ok := names[p[i+4:i+end]]
			if !ok {
				return "", nil, fmt.Errorf("unknown group name '%s'", p[i+4:i+end])
			}
			fmt.Fprintf(&b, `\k<%d>`, n)
			i += end
		case c == '(' && (i+1 >= len(p) || p[i+1] != '?'):
			group++
			fmt.Fprintf(&b, "(?<%d>", group)
		case c == '(' && strings.HasPrefix(p[i:], "(?") && i+2 < len(p) && strings.IndexByte("aiLmsux-", p[i+2]) >= 0:
			// inline flags: drop Python's a, u and L (regexp2 is Unicode)
			j := i + 2
			for j < len(p) && strings.IndexByte("aiLmsux-", p[j]) >= 0 {
				j++
			}
			flags := strings.Map(func(r rune) rune {
				if r == 'a' || r == 'u' || r == 'L' {
					return -1
				}
				return r
			}, p[i+2:j])
			if j < len(p) && p[j] == ')' && i != 0 {
				// Python 3.11 refuses a global flag group anywhere else.
				return "", nil, errors.New("global flags not at the start of the expression")
			}
			if j < len(p) && (p[j] == ')' || p[j] == ':') {
				if flags == "" || flags == "-" {
					if p[j] == ')' {
						i = j
						continue
					}
					b.WriteString("(?:")
					i = j
					continue
				}
				b.WriteString("(?" + flags)
				i = j - 1
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if inClass {
		return "", nil, errors.New("unterminated character set")
	}
	return b.String(), names, nil
}

// Match is a successful match: its groups (nil for a group that did not
// take part) and span.
type Match struct {
	m      *regexp2.Match
	groups int
}

// Groups is Python's m.groups(): every group's text, nil when unmatched.
func (m *Match) Groups() []any {
	out := make([]any, m.groups)
	for i := 1; i <= m.groups; i++ {
		g := m.m.GroupByNumber(i)
		if g == nil || len(g.Captures) == 0 {
			out[i-1] = nil
			continue
		}
		out[i-1] = g.String()
	}
	return out
}

// Group returns group n's text and whether it matched.
func (m *Match) Group(n int) (string, bool) {
	g := m.m.GroupByNumber(n)
	if g == nil || len(g.Captures) == 0 {
		return "", false
	}
	return g.String(), true
}

func wrapRunErr(err error) error {
	if err == nil {
		return nil
	}
	if strings.Contains(err.Error(), "timeout") {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// Search is re.search: the first match anywhere, nil when none.
func (re *Regexp) Search(s string) (*Match, error) {
	m, err := re.re.FindStringMatch(s)
	if err != nil || m == nil {
		return nil, wrapRunErr(err)
	}
	return &Match{m: m, groups: re.groups}, nil
}

// MatchStart is re.match: a match starting at the beginning of s.
func (re *Regexp) MatchStart(s string) (*Match, error) {
	m, err := re.re.FindStringMatch(s)
	if err != nil || m == nil || m.Index != 0 {
		return nil, wrapRunErr(err)
	}
	return &Match{m: m, groups: re.groups}, nil
}

// Sub is re.sub(repl, s, count): every non-overlapping match (count 0
// means all) replaced by the expansion of the Python template repl.
func (re *Regexp) Sub(repl, s string, count int) (string, error) {
	tmpl, err := parseTemplate(repl, re)
	if err != nil {
		return "", err
	}
	runes := []rune(s)
	var b strings.Builder
	last := 0
	n := 0
	m, err := re.re.FindStringMatch(s)
	for m != nil && err == nil && (count <= 0 || n < count) {
		b.WriteString(string(runes[last:m.Index]))
		for _, part := range tmpl {
			if part.group < 0 {
				b.WriteString(part.lit)
				continue
			}
			if g := m.GroupByNumber(part.group); g != nil && len(g.Captures) > 0 {
				b.WriteString(g.String())
			}
		}
		last = m.Index + m.Length
		n++
		m, err = re.re.FindNextMatch(m)
	}
	if err != nil {
		return "", wrapRunErr(err)
	}
	b.WriteString(string(runes[last:]))
	return b.String(), nil
}

type tmplPart struct {
	lit   string
	group int // -1 for a literal
}

// parseTemplate parses a Python replacement template: \1..\99, \g<n>,
// \g<name>, the usual escapes, other escapes of ASCII letters rejected.
func parseTemplate(t string, re *Regexp) ([]tmplPart, error) {
	var parts []tmplPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, tmplPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	group := func(n int) error {
		if n > re.groups {
			return fmt.Errorf("%w: invalid group reference %d", ErrPattern, n)
		}
		flush()
		parts = append(parts, tmplPart{group: n})
		return nil
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '\\' || i+1 >= len(t) {
			lit.WriteByte(c)
			continue
		}
		n := t[i+1]
		switch {
		case n >= '0' && n <= '9':
			j := i + 1
			for j < len(t) && j < i+3 && t[j] >= '0' && t[j] <= '9' {
				j++
			}
			if n == '0' || (j < len(t) && t[j] >= '0' && t[j] <= '7' && j-i-1 == 2 && t[i+1] <= '7' && t[i+2] <= '7') {
				// octal escape
				k := i + 1
				for k < len(t) && k < i+4 && t[k] >= '0' && t[k] <= '7' {
					k++
				}
				v, _ := strconv.ParseUint(t[i+1:k], 8, 32)
				lit.WriteRune(rune(v))
				i = k - 1
				continue
			}
			g, _ := strconv.Atoi(t[i+1 : j])
			if err := group(g); err != nil {
				return nil, err
			}
			i = j - 1
		case n == 'g':
			if i+2 >= len(t) || t[i+2] != '<' {
				return nil, fmt.Errorf("%w: missing <", ErrPattern)
			}
			end := strings.IndexByte(t[i+3:], '>')
			if end < 0 {
				return nil, fmt.Errorf("%w: missing >, unterminated name", ErrPattern)
			}
			name := t[i+3 : i+3+end]
			g, err := strconv.Atoi(name)
			if err != nil {
				g = re.groupNumber(name)
				if g < 0 {
					return nil, fmt.Errorf("%w: unknown group name '%s'", ErrPattern, name)
				}
			}
			if err := group(g); err != nil {
				return nil, err
			}
			i += 3 + end
		default:
			esc := map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'f': "\f", 'v': "\v", 'a': "\a", 'b': "\b", '\\': "\\"}
			if s, ok := esc[n]; ok {
				lit.WriteString(s)
			} else if n < utf8.RuneSelf && (n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z') {
				return nil, fmt.Errorf("%w: bad escape \\%c", ErrPattern, n)
			} else {
				lit.WriteByte('\\')
				lit.WriteByte(n)
			}
			i++
		}
	}
	flush()
	return parts, nil
}

// Escape is Python 3.7+'s re.escape.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Split is re.split(pattern, s): the text between matches and, after
// each, the text of every group (nil for one that did not take part).
func (re *Regexp) Split(s string) ([]any, error) {
	runes := []rune(s)
	var out []any
	last := 0
	m, err := re.re.FindStringMatch(s)
	for m != nil && err == nil {
		out = append(out, string(runes[last:m.Index]))
		mm := &Match{m: m, groups: re.groups}
		out = append(out, mm.Groups()...)
		last = m.Index + m.Length
		m, err = re.re.FindNextMatch(m)
	}
	if err != nil {
		return nil, wrapRunErr(err)
	}
	return append(out, string(runes[last:])), nil
}

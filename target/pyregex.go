package target

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
)

// TranslatePCRE converts a Python 3.11 `re` pattern (str) to an RE2
// expression with the semantics of re.match (anchored at the start only).
// Errors wrap ErrUnsupportedRegex or ErrInvalidRegex.
//
// Python `re` versus RE2, and how the translation handles it:
//
//   - Anchoring: re.match anchors at the start only; the translation is
//     wrapped in ^(?:...) and nothing is added at the end.
//   - Look-ahead/look-behind ((?=, (?!, (?<=, (?<!), backreferences (\1,
//     (?P=name)), conditionals ((?(1)..)), atomic groups ((?>..)),
//     possessive quantifiers (a*+), \N{name} and scoped verbose groups are
//     rejected with ErrUnsupportedRegex. So are repeat counts above 1000 and
//     expressions RE2 finds too large or too deep.
//   - \d, \w, \s, \D, \W, \S use Python's Unicode definitions (\p{Nd},
//     [\p{L}\p{N}_], Unicode whitespace incl. \x1c-\x1f), or ASCII ones
//     under (?a). A \W inside a negated set is rejected as unsupported.
//   - $ without MULTILINE also matches before one trailing newline, as in
//     Python (translated to (?:\n?\z), which consumes that newline; only a
//     pattern that goes on matching "\n" after "$" behaves differently).
//   - \Z becomes \z; \b and \B keep RE2's ASCII word definition (Python's
//     is Unicode): a documented, untranslatable difference.
//   - {,n} means {0,n}; a '{' that does not start a valid repeat is literal.
//   - Escapes are validated like Python: an unknown ASCII-letter escape, a
//     global flag group that is not at the start, (?L), and unbalanced
//     parentheses are ErrInvalidRegex. (?x) at the start is honoured.
//   - Inside sets, '[' is literal (RE2's [:alpha:] syntax is not used), and
//     \b means backspace.
func TranslatePCRE(pattern string) (string, error) {
	src, _, err := translatePCRE(pattern)
	return src, err
}

// translatePCRE also reports whether the translation is exact only for
// ASCII subjects (\b or \B outside ASCII mode).
func translatePCRE(pattern string) (string, bool, error) {
	t := &pyReTranslator{src: []rune(pattern), atStart: true, names: map[string]bool{}}
	if err := t.run(); err != nil {
		return "", false, err
	}
	return `^(?:` + t.out.String() + `)`, t.unicodeBoundary, nil
}

// compiled is a compiled pattern. asciiOnly marks a Python regex whose RE2
// translation is exact only on ASCII subjects (it uses \b or \B, whose
// word characters are ASCII in RE2 but Unicode in Python).
type compiled struct {
	re        *regexp.Regexp
	asciiOnly bool
	pattern   string
}

func (c *compiled) match(s string) (bool, error) {
	if c.asciiOnly {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return false, fmt.Errorf("%w: %q: \\b/\\B on a non-ASCII subject", ErrUnsupportedRegex, c.pattern)
			}
		}
	}
	return c.re.MatchString(s), nil
}

func compilePCRE(pattern string) (*compiled, error) {
	src, asciiOnly, err := translatePCRE(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(src)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			switch se.Code {
			case syntax.ErrInvalidRepeatSize, syntax.ErrNestingDepth, syntax.ErrLarge:
				return nil, fmt.Errorf("%w: %q: %v", ErrUnsupportedRegex, pattern, err)
			}
		}
		return nil, fmt.Errorf("%w: %q: %v", ErrInvalidRegex, pattern, err)
	}
	return &compiled{re: re, asciiOnly: asciiOnly, pattern: pattern}, nil
}

const (
	pyWSClass      = `\x{9}-\x{d}\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`
	pyNotWSClass   = `\x{0}-\x{8}\x{e}-\x{1b}\x{21}-\x{84}\x{86}-\x{9f}\x{a1}-\x{167f}\x{1681}-\x{1fff}\x{200b}-\x{2027}\x{202a}-\x{202e}\x{2030}-\x{205e}\x{2060}-\x{2fff}\x{3001}-\x{10ffff}`
	asciiWSClass   = `\x{9}-\x{d}\x{20}`
	asciiNotWS     = `\x{0}-\x{8}\x{e}-\x{1f}\x{21}-\x{10ffff}`
	asciiWordClass = `0-9A-Za-z_`
	asciiNotWord   = `\x{0}-\x{2f}\x{3a}-\x{40}\x{5b}-\x{5e}\x{60}\x{7b}-\x{10ffff}`
	asciiNotDigit  = `\x{0}-\x{2f}\x{3a}-\x{10ffff}`
	uniWordClass   = `\p{L}\p{N}_`
)

type reFlags struct {
	multiline bool
	ascii     bool
	verbose   bool
}

type pyReTranslator struct {
	src   []rune
	pos   int
	out   strings.Builder
	flags reFlags
	stack []reFlags
	// atStart: nothing but global flags/comments seen at top level, first branch.
	atStart bool
	// lastQuant: the previous token was a quantifier, directly adjacent
	// (for lazy '?' and possessive '+').
	lastQuant bool
	// repeated: the last item is a repeat, even across (?#...) comments
	// (another quantifier is then "multiple repeat").
	repeated bool
	// canRepeat: the previous token is something a quantifier may follow
	// (not the start of a branch or group, not an anchor).
	canRepeat bool
	// names: group names seen (Python rejects duplicates).
	names map[string]bool
	// typeFlag: the global 'a' or 'u' flag seen so far.
	typeFlag rune
	// unicodeBoundary: \b or \B was used outside ASCII mode.
	unicodeBoundary bool
}

func reUnsupported(what string) error {
	return fmt.Errorf("%w: %s", ErrUnsupportedRegex, what)
}

func reInvalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRegex, fmt.Sprintf(format, args...))
}

func (t *pyReTranslator) peek(off int) (rune, bool) {
	if t.pos+off < len(t.src) {
		return t.src[t.pos+off], true
	}
	return 0, false
}

func (t *pyReTranslator) run() error {
	for t.pos < len(t.src) {
		c := t.src[t.pos]
		if t.flags.verbose {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
				t.pos++
				t.lastQuant = false
				continue
			}
			if c == '#' {
				for t.pos < len(t.src) && t.src[t.pos] != '\n' {
					t.pos++
				}
				t.lastQuant = false
				continue
			}
		}
		t.pos++
		quant := false
		switch c {
		case '\\':
			anchor, err := t.escape()
			if err != nil {
				return err
			}
			t.item()
			if anchor {
				t.canRepeat = false
			}
		case '[':
			if err := t.class(); err != nil {
				return err
			}
			t.item()
		case '(':
			if err := t.group(); err != nil {
				return err
			}
		case ')':
			if len(t.stack) == 0 {
				return reInvalid("unbalanced parenthesis")
			}
			t.flags = t.stack[len(t.stack)-1]
			t.stack = t.stack[:len(t.stack)-1]
			t.out.WriteByte(')')
			t.item()
		case '|':
			t.out.WriteByte('|')
			if len(t.stack) == 0 {
				t.atStart = false
			}
			t.canRepeat = false
			t.repeated = false
		case '$':
			if t.flags.multiline {
				t.out.WriteByte('$')
			} else {
				t.out.WriteString(`(?:\n?\z)`)
			}
			t.item()
			t.canRepeat = false
		case '^':
			t.out.WriteRune(c)
			t.item()
			t.canRepeat = false
		case '.':
			t.out.WriteRune(c)
			t.item()
		case '*', '+', '?':
			if c == '+' && t.lastQuant {
				return reUnsupported("possessive quantifier")
			}
			if c == '?' && t.lastQuant {
				t.out.WriteByte('?') // lazy modifier
				t.lastQuant = false
				continue
			}
			if t.repeated {
				return reInvalid("multiple repeat")
			}
			if !t.canRepeat {
				return reInvalid("nothing to repeat")
			}
			t.out.WriteRune(c)
			quant = true
			t.repeated = true
		case '{':
			if q, ok := t.repeat(); ok {
				if q == "" {
					return reInvalid("min repeat greater than max repeat")
				}
				if t.lastQuant || t.repeated {
					return reInvalid("multiple repeat")
				}
				if !t.canRepeat {
					return reInvalid("nothing to repeat")
				}
				t.out.WriteString(q)
				quant = true
				t.repeated = true
			} else {
				t.out.WriteString(`\{`)
				t.item()
			}
		default:
			t.out.WriteString(regexp.QuoteMeta(string(c)))
			t.item()
		}
		t.lastQuant = quant
	}
	if len(t.stack) != 0 {
		return reInvalid("missing ), unterminated subpattern")
	}
	return nil
}

// push opens a group: flags are saved and nothing can be repeated yet.
func (t *pyReTranslator) push() {
	t.stack = append(t.stack, t.flags)
	t.canRepeat = false
	t.repeated = false
}

// item records that a repeatable item was emitted.
func (t *pyReTranslator) item() {
	if len(t.stack) == 0 {
		t.atStart = false
	}
	t.lastQuant = false
	t.canRepeat = true
	t.repeated = false
}

// repeat parses {m,n} after the '{' (already consumed). It returns the RE2
// form ("" when min > max), or false when Python would treat '{' as a
// literal.
func (t *pyReTranslator) repeat() (string, bool) {
	start := t.pos
	lo, hi := "", ""
	for t.pos < len(t.src) && t.src[t.pos] >= '0' && t.src[t.pos] <= '9' {
		lo += string(t.src[t.pos])
		t.pos++
	}
	comma := false
	if t.pos < len(t.src) && t.src[t.pos] == ',' {
		comma = true
		t.pos++
		for t.pos < len(t.src) && t.src[t.pos] >= '0' && t.src[t.pos] <= '9' {
			hi += string(t.src[t.pos])
			t.pos++
		}
	}
	if t.pos >= len(t.src) || t.src[t.pos] != '}' || (lo == "" && !comma) {
		t.pos = start
		return "", false
	}
	t.pos++
	if lo == "" {
		lo = "0"
	}
	if !comma {
		return "{" + lo + "}", true
	}
	if hi != "" {
		l, errL := strconv.ParseUint(lo, 10, 64)
		h, errH := strconv.ParseUint(hi, 10, 64)
		if errL == nil && errH == nil && h < l {
			return "", true
		}
	}
	return "{" + lo + "," + hi + "}", true
}

func (t *pyReTranslator) group() error {
	c, ok := t.peek(0)
	if !ok || c != '?' {
		t.push()
		t.out.WriteByte('(')
		return nil
	}
	t.pos++ // '?'
	c, ok = t.peek(0)
	if !ok {
		return reInvalid("unexpected end of pattern")
	}
	switch {
	case c == ':':
		t.pos++
		t.push()
		t.out.WriteString("(?:")
		return nil
	case c == 'P':
		t.pos++
		n, _ := t.peek(0)
		switch n {
		case '<':
			t.pos++
			end := t.pos
			for end < len(t.src) && t.src[end] != '>' {
				end++
			}
			if end >= len(t.src) {
				return reInvalid("missing >, unterminated name")
			}
			name := string(t.src[t.pos:end])
			if !isPyIdentifier(name) {
				return reInvalid("bad character in group name %q", name)
			}
			if t.names[name] {
				return reInvalid("redefinition of group name %q", name)
			}
			t.names[name] = true
			for _, r := range name {
				if !(r == '_' || (r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)))) {
					return reUnsupported("non-ASCII group name")
				}
			}
			t.pos = end + 1
			t.push()
			t.out.WriteString("(?P<" + name + ">")
			return nil
		case '=':
			return reUnsupported("named backreference (?P=...)")
		}
		return reInvalid("unknown extension ?P")
	case c == '=' || c == '!':
		return reUnsupported("look-ahead assertion")
	case c == '<':
		n, _ := t.peek(1)
		if n == '=' || n == '!' {
			return reUnsupported("look-behind assertion")
		}
		return reInvalid("unknown extension ?<")
	case c == '#':
		for t.pos < len(t.src) && t.src[t.pos] != ')' {
			t.pos++
		}
		if t.pos >= len(t.src) {
			return reInvalid("missing ), unterminated comment")
		}
		t.pos++
		return nil
	case c == '>':
		return reUnsupported("atomic group")
	case c == '(':
		return reUnsupported("conditional group")
	case strings.ContainsRune("aiLmsux-", c):
		return t.flagGroup()
	}
	return reInvalid("unknown extension ?%c", c)
}

// flagGroup parses (?flags) or (?flags-flags:...) after "(?".
func (t *pyReTranslator) flagGroup() error {
	var add, del []rune
	c := t.src[t.pos]
	typeFlag := rune(0)
	if c != '-' {
		for {
			if !strings.ContainsRune("aiLmsux", c) {
				return reInvalid("unknown flag")
			}
			if c == 'L' {
				return reInvalid("bad inline flags: cannot use 'L' flag with a str pattern")
			}
			if c == 'a' || c == 'u' {
				if typeFlag != 0 && typeFlag != c {
					return reInvalid("bad inline flags: flags 'a', 'u' and 'L' are incompatible")
				}
				typeFlag = c
			}
			add = append(add, c)
			t.pos++
			n, ok := t.peek(0)
			if !ok {
				return reInvalid("missing -, : or )")
			}
			c = n
			if c == ')' || c == '-' || c == ':' {
				break
			}
		}
	}
	if c == ')' {
		t.pos++
		if !t.atStart || len(t.stack) > 0 {
			return reInvalid("global flags not at the start of the expression")
		}
		if typeFlag != 0 {
			if t.typeFlag != 0 && t.typeFlag != typeFlag {
				return reInvalid("ASCII and UNICODE flags are incompatible")
			}
			t.typeFlag = typeFlag
		}
		var keep []rune
		for _, f := range add {
			switch f {
			case 'i', 'm', 's':
				keep = append(keep, f)
				if f == 'm' {
					t.flags.multiline = true
				}
			case 'a':
				t.flags.ascii = true
			case 'x':
				t.flags.verbose = true
			}
		}
		if len(keep) > 0 {
			t.out.WriteString("(?" + string(keep) + ")")
		}
		return nil
	}
	if c == '-' {
		t.pos++
		n, ok := t.peek(0)
		if !ok {
			return reInvalid("missing flag")
		}
		c = n
		for {
			if !strings.ContainsRune("aiLmsux", c) {
				return reInvalid("unknown flag")
			}
			if c == 'a' || c == 'u' || c == 'L' {
				return reInvalid("bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
			}
			del = append(del, c)
			t.pos++
			n, ok := t.peek(0)
			if !ok {
				return reInvalid("missing :")
			}
			c = n
			if c == ':' {
				break
			}
		}
	}
	// c == ':'
	t.pos++
	for _, a := range add {
		if strings.ContainsRune(string(del), a) {
			return reInvalid("bad inline flags: flag turned on and off")
		}
	}
	t.push()
	var on, off []rune
	for _, f := range add {
		switch f {
		case 'i', 's':
			on = append(on, f)
		case 'm':
			on = append(on, f)
			t.flags.multiline = true
		case 'a':
			t.flags.ascii = true
		case 'u':
			t.flags.ascii = false
		case 'x':
			return reUnsupported("scoped verbose flag")
		}
	}
	for _, f := range del {
		switch f {
		case 'i', 's':
			off = append(off, f)
		case 'm':
			off = append(off, f)
			t.flags.multiline = false
		case 'x':
			if t.flags.verbose {
				return reUnsupported("scoped verbose flag")
			}
		}
	}
	t.out.WriteString("(?")
	t.out.WriteString(string(on))
	if len(off) > 0 {
		t.out.WriteString("-" + string(off))
	}
	t.out.WriteString(":")
	return nil
}

func isPyIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r))) {
			continue
		}
		return false
	}
	return true
}

// hexDigits reads exactly n hex digits.
func (t *pyReTranslator) hexDigits(n int) (rune, error) {
	if t.pos+n > len(t.src) {
		return 0, reInvalid("incomplete escape")
	}
	s := string(t.src[t.pos : t.pos+n])
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil || strings.ContainsAny(s, "+-") {
		return 0, reInvalid("incomplete escape")
	}
	t.pos += n
	if v > unicode.MaxRune {
		return 0, reInvalid("bad escape")
	}
	return rune(v), nil
}

func isOct(r rune) bool { return r >= '0' && r <= '7' }

// category returns the RE2 form of a Python category escape (d, D, w, W,
// s, S), for use outside (inClass false) or inside a set. negInClass
// reports a category that cannot be placed in a set.
func (t *pyReTranslator) category(c rune, inClass bool) (string, bool) {
	a := t.flags.ascii
	var body string
	neg := false
	switch c {
	case 'd':
		if a {
			body = `0-9`
		} else {
			body = `\p{Nd}`
		}
	case 'D':
		if a {
			body = asciiNotDigit
		} else {
			body = `\P{Nd}`
		}
	case 'w':
		if a {
			body = asciiWordClass
		} else {
			body = uniWordClass
		}
	case 'W':
		if a {
			body = asciiNotWord
		} else {
			body, neg = uniWordClass, true
		}
	case 's':
		if a {
			body = asciiWSClass
		} else {
			body = pyWSClass
		}
	case 'S':
		if a {
			body = asciiNotWS
		} else {
			body = pyNotWSClass
		}
	}
	if inClass {
		if neg {
			return "", false
		}
		return body, true
	}
	if neg {
		return "[^" + body + "]", true
	}
	return "[" + body + "]", true
}

// escape handles a backslash escape outside a set (backslash consumed);
// anchor reports a zero-width assertion (\A, \Z, \b, \B).
func (t *pyReTranslator) escape() (anchor bool, err error) {
	if t.pos >= len(t.src) {
		return false, reInvalid("bad escape (end of pattern)")
	}
	c := t.src[t.pos]
	t.pos++
	switch c {
	case 'A', 'Z', 'b', 'B':
		anchor = true
	}
	return anchor, t.escapeChar(c)
}

func (t *pyReTranslator) escapeChar(c rune) error {
	switch c {
	case 'A':
		t.out.WriteString(`\A`)
	case 'Z':
		t.out.WriteString(`\z`)
	case 'b', 'B':
		t.out.WriteString(`\` + string(c))
		if !t.flags.ascii {
			t.unicodeBoundary = true
		}
	case 'd', 'D', 'w', 'W', 's', 'S':
		s, _ := t.category(c, false)
		t.out.WriteString(s)
	case 'a', 'f', 'n', 'r', 't', 'v':
		writeClassLiteral(&t.out, map[rune]rune{'a': 7, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11}[c])
	case 'x', 'u', 'U':
		n := map[rune]int{'x': 2, 'u': 4, 'U': 8}[c]
		r, err := t.hexDigits(n)
		if err != nil {
			return err
		}
		writeClassLiteral(&t.out, r)
	case 'N':
		return reUnsupported(`\N{...} named character`)
	case '0':
		v := 0
		for k := 0; k < 2 && t.pos < len(t.src) && isOct(t.src[t.pos]); k++ {
			v = v*8 + int(t.src[t.pos]-'0')
			t.pos++
		}
		writeClassLiteral(&t.out, rune(v))
	default:
		switch {
		case c >= '1' && c <= '9':
			n1, ok1 := t.peek(0)
			n2, ok2 := t.peek(1)
			if ok1 && ok2 && isOct(c) && isOct(n1) && isOct(n2) {
				v := int(c-'0')*64 + int(n1-'0')*8 + int(n2-'0')
				if v > 0o377 {
					return reInvalid("octal escape value outside of range 0-0o377")
				}
				t.pos += 2
				writeClassLiteral(&t.out, rune(v))
				return nil
			}
			return reUnsupported("backreference")
		case c < 0x80 && unicode.IsLetter(c):
			return reInvalid("bad escape \\%c", c)
		default:
			t.out.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return nil
}

// class translates a set after its '[' (consumed).
func (t *pyReTranslator) class() error {
	var items strings.Builder
	var negCats []string
	neg := false
	if c, ok := t.peek(0); ok && c == '^' {
		neg = true
		t.pos++
	}
	first := true
	// readItem returns a literal rune, or a category body (isCat).
	readItem := func() (r rune, cat string, isCat bool, err error) {
		if t.pos >= len(t.src) {
			return 0, "", false, reInvalid("unterminated character set")
		}
		c := t.src[t.pos]
		t.pos++
		if c != '\\' {
			return c, "", false, nil
		}
		if t.pos >= len(t.src) {
			return 0, "", false, reInvalid("bad escape (end of pattern)")
		}
		e := t.src[t.pos]
		t.pos++
		switch e {
		case 'd', 'D', 'w', 'W', 's', 'S':
			body, ok := t.category(e, true)
			if !ok {
				return 0, "", true, nil // negated category, handled by caller
			}
			return 0, body, true, nil
		case 'a', 'b', 'f', 'n', 'r', 't', 'v':
			return map[rune]rune{'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11}[e], "", false, nil
		case 'x', 'u', 'U':
			n := map[rune]int{'x': 2, 'u': 4, 'U': 8}[e]
			r, err := t.hexDigits(n)
			return r, "", false, err
		case 'N':
			return 0, "", false, reUnsupported(`\N{...} named character`)
		}
		if isOct(e) {
			v := int(e - '0')
			for k := 0; k < 2 && t.pos < len(t.src) && isOct(t.src[t.pos]); k++ {
				v = v*8 + int(t.src[t.pos]-'0')
				t.pos++
			}
			if v > 0o377 {
				return 0, "", false, reInvalid("octal escape value outside of range 0-0o377")
			}
			return rune(v), "", false, nil
		}
		if e == '8' || e == '9' || (e < 0x80 && unicode.IsLetter(e)) {
			return 0, "", false, reInvalid("bad escape \\%c", e)
		}
		return e, "", false, nil
	}
	for {
		if t.pos >= len(t.src) {
			return reInvalid("unterminated character set")
		}
		if t.src[t.pos] == ']' && !first {
			t.pos++
			break
		}
		first = false
		lo, cat, isCat, err := readItem()
		if err != nil {
			return err
		}
		if isCat {
			if cat == "" {
				negCats = append(negCats, uniWordClass)
			} else {
				items.WriteString(cat)
			}
			if c, ok := t.peek(0); ok && c == '-' {
				if n, ok := t.peek(1); ok && n != ']' {
					return reInvalid("bad character range")
				}
			}
			continue
		}
		if c, ok := t.peek(0); ok && c == '-' {
			t.pos++
			if n, ok := t.peek(0); ok && n == ']' {
				writeClassLiteral(&items, lo)
				writeClassLiteral(&items, '-')
				t.pos++
				break
			}
			hi, _, hiCat, err := readItem()
			if err != nil {
				return err
			}
			if hiCat || hi < lo {
				return reInvalid("bad character range")
			}
			writeClassLiteral(&items, lo)
			items.WriteByte('-')
			writeClassLiteral(&items, hi)
			continue
		}
		writeClassLiteral(&items, lo)
	}
	body := items.String()
	if len(negCats) > 0 {
		if neg {
			if body == "" {
				// [^\W] (possibly [^\W\W]) is just \w
				t.out.WriteString("[" + negCats[0] + "]")
				return nil
			}
			return reUnsupported(`\W inside a negated set`)
		}
		t.out.WriteString("(?:")
		if body != "" {
			t.out.WriteString("[" + body + "]|")
		}
		t.out.WriteString("[^" + negCats[0] + "])")
		return nil
	}
	if neg {
		t.out.WriteString("[^" + body + "]")
	} else {
		t.out.WriteString("[" + body + "]")
	}
	return nil
}

func writeClassLiteral(b *strings.Builder, r rune) {
	fmt.Fprintf(b, `\x{%x}`, r)
}

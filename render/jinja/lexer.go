package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
)

// tokKind is the kind of a lexer token.
type tokKind int

const (
	tEOF tokKind = iota
	tData
	tVarBegin
	tVarEnd
	tBlockBegin
	tBlockEnd
	tName
	tString
	tInt
	tFloat
	tOp
)

var tokNames = map[tokKind]string{
	tEOF: "end of template", tData: "template data", tVarBegin: "begin of print statement",
	tVarEnd: "end of print statement", tBlockBegin: "begin of statement block",
	tBlockEnd: "end of statement block", tName: "name", tString: "string", tInt: "integer",
	tFloat: "float", tOp: "operator",
}

// token is one lexer token with the line it starts on.
type token struct {
	kind tokKind
	val  string // raw text (names, operators), decoded text (strings, data)
	num  any    // int64, *big.Int or float64 for tInt/tFloat
	line int
}

func (t token) describe() string {
	switch t.kind {
	case tName, tOp:
		return t.val
	case tBlockEnd, tVarEnd, tEOF, tBlockBegin, tVarBegin:
		return tokNames[t.kind]
	}
	return tokNames[t.kind]
}

// lexer turns template source into tokens the way Jinja2's lexer does.
type lexer struct {
	src     string
	pos     int
	line    int
	name    string
	opts    *Options
	toks    []token
	lineBeg bool // the previous match ended with a newline (lstrip_blocks)
}

// spaceLen is the length in bytes of the white space character at s[i]
// (Python's re \s on str, which Jinja's lexer uses between tokens: ASCII
// white space, the separators \x1c-\x1f and Unicode spaces such as a
// no-break space), or 0.
func spaceLen(s string, i int) int {
	if s[i] < utf8.RuneSelf {
		if py.IsSpace(rune(s[i])) {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if py.IsSpace(r) {
		return n
	}
	return 0
}

// skipSpace is the offset after the white space starting at s[i].
func skipSpace(s string, i int) int {
	for i < len(s) {
		n := spaceLen(s, i)
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

func (lx *lexer) errf(line int, format string, args ...any) error {
	return &Error{Kind: "TemplateSyntaxError", Msg: fmt.Sprintf(format, args...), Name: lx.name, Line: line}
}

// tagStart finds the next tag start at or after pos: its offset, which
// kind ("var", "block", "comment"), or -1.
func (lx *lexer) tagStart(pos int) (int, string) {
	o := lx.opts
	best, kind := -1, ""
	for _, c := range []struct{ s, k string }{{o.BlockStart, "block"}, {o.VariableStart, "var"}, {o.CommentStart, "comment"}} {
		if i := strings.Index(lx.src[pos:], c.s); i >= 0 {
			// the longest delimiter wins on equal positions (Jinja sorts by length)
			if best < 0 || pos+i < best || (pos+i == best && len(c.s) > len(kindDelim(o, kind))) {
				best, kind = pos+i, c.k
			}
		}
	}
	return best, kind
}

func kindDelim(o *Options, k string) string {
	switch k {
	case "block":
		return o.BlockStart
	case "var":
		return o.VariableStart
	case "comment":
		return o.CommentStart
	}
	return ""
}

func (lx *lexer) emitData(text string, line int) {
	if text != "" {
		lx.toks = append(lx.toks, token{kind: tData, val: text, line: line})
	}
}

// stripBefore applies "-" and lstrip_blocks to the text before a tag.
func (lx *lexer) stripBefore(text, sign, kind string) string {
	if sign == "-" {
		return strings.TrimRightFunc(text, py.IsSpace)
	}
	if sign != "+" && lx.opts.LstripBlocks && kind != "var" {
		l := strings.LastIndexByte(text, '\n') + 1
		if l > 0 || lx.lineBeg {
			if strings.TrimLeft(text[l:], " \t") == "" {
				return text[:l]
			}
		}
	}
	return text
}

// endTag matches a block/comment end at pos: the length consumed (with
// "-" stripping and trim_blocks), or 0.
func (lx *lexer) endTag(pos int, end string, trim bool) int {
	s := lx.src[pos:]
	if strings.HasPrefix(s, "+"+end) {
		return 1 + len(end)
	}
	if strings.HasPrefix(s, "-"+end) {
		n := 1 + len(end)
		n = skipSpace(lx.src, pos+n) - pos
		return n
	}
	if strings.HasPrefix(s, end) {
		n := len(end)
		if trim && lx.opts.TrimBlocks && pos+n < len(lx.src) && lx.src[pos+n] == '\n' {
			n++
		}
		return n
	}
	return 0
}

func (lx *lexer) advance(n int) {
	lx.line += strings.Count(lx.src[lx.pos:lx.pos+n], "\n")
	lx.pos += n
	lx.lineBeg = n > 0 && lx.src[lx.pos-1] == '\n'
}

// tokenize lexes the whole source.
func (lx *lexer) tokenize() ([]token, error) {
	o := lx.opts
	lx.line = 1
	lx.lineBeg = true
	src := lx.src
	for lx.pos < len(src) {
		start, kind := lx.tagStart(lx.pos)
		if start < 0 {
			lx.emitData(src[lx.pos:], lx.line)
			lx.advance(len(src) - lx.pos)
			break
		}
		text := src[lx.pos:start]
		delim := kindDelim(o, kind)
		after := start + len(delim)
		sign := ""
		if after < len(src) && (src[after] == '-' || src[after] == '+') {
			sign = string(src[after])
			after++
		}
		// raw block?
		if kind == "block" {
			if n, ok := lx.rawBegin(after); ok {
				dataLine := lx.line
				lx.emitData(lx.stripBefore(text, sign, kind), dataLine)
				lx.advance(n + after - lx.pos)
				if err := lx.raw(); err != nil {
					return nil, err
				}
				continue
			}
		}
		dataLine := lx.line
		text = lx.stripBefore(text, sign, kind)
		lx.emitData(text, dataLine)
		lx.advance(after - lx.pos)
		switch kind {
		case "comment":
			endLine := lx.line
			i := lx.pos
			for {
				j := strings.Index(src[i:], o.CommentEnd)
				if j < 0 {
					return nil, lx.errf(endLine, "Missing end of comment tag")
				}
				p := i + j
				if p > lx.pos && (src[p-1] == '-' || src[p-1] == '+') {
					p--
				}
				if n := lx.endTag(p, o.CommentEnd, true); n > 0 {
					lx.advance(p + n - lx.pos)
					break
				}
				i = i + j + 1
			}
		case "var":
			lx.toks = append(lx.toks, token{kind: tVarBegin, line: lx.line})
			if err := lx.inside(o.VariableEnd, tVarEnd, false); err != nil {
				return nil, err
			}
		case "block":
			lx.toks = append(lx.toks, token{kind: tBlockBegin, line: lx.line})
			if err := lx.inside(o.BlockEnd, tBlockEnd, true); err != nil {
				return nil, err
			}
		}
	}
	eofLine := 1
	if len(lx.toks) > 0 {
		eofLine = lx.toks[len(lx.toks)-1].line
	}
	lx.toks = append(lx.toks, token{kind: tEOF, line: eofLine})
	return lx.toks, nil
}

// rawBegin matches `\s*raw\s*(-)?%}` at pos.
func (lx *lexer) rawBegin(pos int) (int, bool) {
	p := pos
	p = skipSpace(lx.src, p)
	if !strings.HasPrefix(lx.src[p:], "raw") {
		return 0, false
	}
	p += 3
	p = skipSpace(lx.src, p)
	if strings.HasPrefix(lx.src[p:], "-"+lx.opts.BlockEnd) {
		p += 1 + len(lx.opts.BlockEnd)
		p = skipSpace(lx.src, p)
		return p - pos, true
	}
	if strings.HasPrefix(lx.src[p:], lx.opts.BlockEnd) {
		return p + len(lx.opts.BlockEnd) - pos, true
	}
	return 0, false
}

// raw lexes the body of a raw block up to its endraw tag.
func (lx *lexer) raw() error {
	o := lx.opts
	startLine := lx.line
	i := lx.pos
	for {
		j := strings.Index(lx.src[i:], o.BlockStart)
		if j < 0 {
			return lx.errf(startLine, "Missing end of raw directive")
		}
		p := i + j + len(o.BlockStart)
		sign := ""
		if p < len(lx.src) && (lx.src[p] == '-' || lx.src[p] == '+') {
			sign = string(lx.src[p])
			p++
		}
		q := p
		q = skipSpace(lx.src, q)
		if strings.HasPrefix(lx.src[q:], "endraw") {
			q += 6
			q = skipSpace(lx.src, q)
			if n := lx.endTag(q, o.BlockEnd, true); n > 0 {
				text := lx.stripBefore(lx.src[lx.pos:i+j], sign, "block")
				lx.emitData(text, lx.line)
				lx.advance(q + n - lx.pos)
				return nil
			}
		}
		i = i + j + 1
	}
}

var operators = []string{"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"}

// inside lexes the expression tokens of a tag up to its end delimiter.
func (lx *lexer) inside(end string, endKind tokKind, block bool) error {
	src := lx.src
	var stack []byte
	startLine := lx.line
	for {
		if n := skipSpace(src, lx.pos) - lx.pos; n > 0 {
			lx.advance(n)
		}
		if lx.pos >= len(src) {
			what := "variable"
			if block {
				what = "block"
			}
			_ = what
			return lx.errf(startLine, "unexpected end of template, expected '%s'.", map[bool]string{true: "end of statement block", false: "end of print statement"}[block])
		}
		if len(stack) == 0 {
			if n := lx.endTag(lx.pos, end, block); n > 0 {
				if !block && src[lx.pos] == '+' {
					n = 0
				} else {
					line := lx.line
					lx.advance(n)
					lx.toks = append(lx.toks, token{kind: endKind, line: line})
					return nil
				}
			}
		}
		c := src[lx.pos]
		line := lx.line
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := lx.pos
			for j < len(src) {
				r, sz := utf8.DecodeRuneInString(src[j:])
				if r == '_' || unicode.IsLetter(r) || (j > lx.pos && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Nd, r))) {
					j += sz
					continue
				}
				break
			}
			if j == lx.pos {
				return lx.errf(line, "unexpected char %s at %d", pyCharRepr(src[lx.pos:]), lx.pos)
			}
			lx.toks = append(lx.toks, token{kind: tName, val: src[lx.pos:j], line: line})
			lx.advance(j - lx.pos)
		case c >= '0' && c <= '9':
			tok, n, err := lx.number(lx.pos)
			if err != nil {
				return err
			}
			tok.line = line
			lx.toks = append(lx.toks, tok)
			lx.advance(n)
		case c == '\'' || c == '"':
			s, n, err := lx.str(lx.pos)
			if err != nil {
				return err
			}
			lx.toks = append(lx.toks, token{kind: tString, val: s, line: line})
			lx.advance(n)
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(src[lx.pos:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return lx.errf(line, "unexpected char %s at %d", pyCharRepr(src[lx.pos:]), lx.pos)
			}
			switch op {
			case "{":
				stack = append(stack, '}')
			case "(":
				stack = append(stack, ')')
			case "[":
				stack = append(stack, ']')
			case "}", ")", "]":
				if len(stack) == 0 {
					return lx.errf(line, "unexpected '%s'", op)
				}
				exp := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if exp != op[0] {
					return lx.errf(line, "unexpected '%s', expected '%c'", op, exp)
				}
			}
			lx.toks = append(lx.toks, token{kind: tOp, val: op, line: line})
			lx.advance(len(op))
		}
	}
}

func pyCharRepr(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	return pyStrRepr(string(r))
}

// number lexes an integer or float literal (with _ separators, 0b/0o/0x).
func (lx *lexer) number(pos int) (token, int, error) {
	src := lx.src
	s := src[pos:]
	digits := func(i int, ok func(byte) bool) int {
		// (d+_)*d+
		j := i
		for j < len(s) {
			if ok(s[j]) {
				j++
				continue
			}
			if s[j] == '_' && j > i && j+1 < len(s) && ok(s[j+1]) {
				j++
				continue
			}
			break
		}
		return j
	}
	dec := func(b byte) bool { return b >= '0' && b <= '9' }
	if len(s) > 1 && s[0] == '0' && strings.ContainsRune("bBoOxX", rune(s[1])) {
		var ok func(byte) bool
		base := 0
		switch s[1] | 0x20 {
		case 'b':
			ok, base = func(b byte) bool { return b == '0' || b == '1' }, 2
		case 'o':
			ok, base = func(b byte) bool { return b >= '0' && b <= '7' }, 8
		default:
			ok, base = func(b byte) bool { return dec(b) || (b|0x20) >= 'a' && (b|0x20) <= 'f' }, 16
		}
		i := 2
		if i < len(s) && s[i] == '_' {
			i++
		}
		j := digits(i, ok)
		if j > i {
			v, _ := parseBigInt(strings.ReplaceAll(s[i:j], "_", ""), base)
			return token{kind: tInt, val: s[:j], num: v}, j, nil
		}
	}
	j := digits(0, dec)
	isFloat := false
	prevDot := pos > 0 && src[pos-1] == '.'
	if !prevDot {
		k := j
		if k+1 < len(s) && s[k] == '.' && dec(s[k+1]) {
			k = digits(k+1, dec)
			isFloat = true
		}
		if k < len(s) && (s[k] == 'e' || s[k] == 'E') {
			m := k + 1
			if m < len(s) && (s[m] == '+' || s[m] == '-') {
				m++
			}
			if m < len(s) && dec(s[m]) {
				k = digits(m, dec)
				isFloat = true
			}
		}
		if isFloat {
			f, err := strconv.ParseFloat(strings.ReplaceAll(s[:k], "_", ""), 64)
			if err != nil && !strings.Contains(err.Error(), "range") {
				return token{}, 0, lx.errf(lx.line, "invalid float %q", s[:k])
			}
			return token{kind: tFloat, val: s[:k], num: f}, k, nil
		}
	}
	v, _ := parseBigInt(strings.ReplaceAll(s[:j], "_", ""), 10)
	return token{kind: tInt, val: s[:j], num: v}, j, nil
}

// str lexes a quoted string literal and decodes its escapes like Python's
// unicode-escape codec (what Jinja2 does).
func (lx *lexer) str(pos int) (string, int, error) {
	s := lx.src[pos:]
	q := s[0]
	i := 1
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case q:
			return unescape(s[1:i]), i + 1, nil
		}
		i++
	}
	// Jinja reports an unterminated string as an unexpected char
	return "", 0, lx.errf(lx.line, "unexpected char %s at %d", pyStrRepr(string(q)), pos)
}

func unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\n':
		case '\\':
			b.WriteByte('\\')
		case '\'':
			b.WriteByte('\'')
		case '"':
			b.WriteByte('"')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case 'N':
			if i+1 < len(s) && s[i+1] == '{' {
				if end := strings.IndexByte(s[i+2:], '}'); end >= 0 {
					if r, ok := lookupRuneName(s[i+2 : i+2+end]); ok {
						b.WriteRune(r)
						i += 2 + end
						continue
					}
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n < len(s)+0 && i+n <= len(s)-1+1 && i+1+n <= len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 32)
			b.WriteRune(rune(v))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

package builtin

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Python re flag values.
const (
	filePyReI = 2
	filePyReL = 4
	filePyReM = 8
	filePyReS = 16
	filePyReU = 32
	filePyReX = 64
	filePyReA = 256
)

// errFileRegex marks a Python regular expression gsalt cannot run: RE2 has
// no lookaround, backreferences or possessive quantifiers.
var errFileRegex = errors.New("regular expression not supported")

// filePyFlags is salt.modules.file._get_flags: an int, a flag name or a
// list of names.
func filePyFlags(v any) (int, error) {
	if n, ok := payload.AsInt(v); ok {
		return int(n), nil
	}
	names := map[string]int{"A": filePyReA, "ASCII": filePyReA, "I": filePyReI, "IGNORECASE": filePyReI,
		"L": filePyReL, "LOCALE": filePyReL, "M": filePyReM, "MULTILINE": filePyReM,
		"S": filePyReS, "DOTALL": filePyReS, "U": filePyReU, "UNICODE": filePyReU,
		"X": filePyReX, "VERBOSE": filePyReX, "T": 1, "TEMPLATE": 1, "DEBUG": 128}
	var list []any
	switch x := v.(type) {
	case string:
		list = []any{x}
	case []any:
		list = x
	default:
		return 0, fmt.Errorf(`Invalid re flags: "%s", must be given either as a single flag string, a list of strings, as an integer, or as an re flag`, pyfmt.Str(v))
	}
	flags := 0
	for _, f := range list {
		n, ok := names[strings.ToUpper(pyfmt.Str(f))]
		if !ok {
			return 0, fmt.Errorf("Invalid re flag given: %s", pyfmt.Str(f))
		}
		flags |= n
	}
	return flags, nil
}

// filePyRegexp compiles a Python regular expression with Python flags for
// Go's RE2: \Z becomes \z, verbose patterns are stripped, (?#...) comments
// dropped, inline (?aLux) flags removed; lookarounds and backreferences
// are refused with errFileRegex.
func filePyRegexp(pat string, flags int) (*regexp.Regexp, error) {
	// Leading inline global flags, e.g. (?x) or (?im).
	for {
		m := regexp.MustCompile(`^\(\?([aiLmsux]+)\)`).FindStringSubmatch(pat)
		if m == nil {
			break
		}
		for _, c := range m[1] {
			switch c {
			case 'i':
				flags |= filePyReI
			case 'm':
				flags |= filePyReM
			case 's':
				flags |= filePyReS
			case 'x':
				flags |= filePyReX
			}
		}
		pat = pat[len(m[0]):]
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		if flags&filePyReX != 0 && !inClass {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
				continue
			}
			if c == '#' {
				for i < len(pat) && pat[i] != '\n' {
					i++
				}
				continue
			}
		}
		switch {
		case c == '\\' && i+1 < len(pat):
			n := pat[i+1]
			switch {
			case n == 'Z' && !inClass:
				b.WriteString(`\z`)
			case n >= '1' && n <= '7' && !inClass && i+3 < len(pat) && fileIsOctal(pat[i+2]) && fileIsOctal(pat[i+3]):
				v, _ := strconv.ParseUint(pat[i+1:i+4], 8, 16)
				fmt.Fprintf(&b, `\x{%x}`, v&0xff)
				i += 3
				continue
			case n >= '1' && n <= '9' && !inClass:
				return nil, fmt.Errorf("%w: backreference in %q", errFileRegex, pat)
			case n == '0' && !inClass:
				// Octal escape \0, \0nn.
				j := i + 2
				for j < len(pat) && j < i+4 && pat[j] >= '0' && pat[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint("0"+pat[i+2:j], 8, 8)
				fmt.Fprintf(&b, `\x{%x}`, v)
				i = j - 1
				continue
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
			i++
		case inClass:
			if c == ']' {
				inClass = false
			} else if c == '[' && i+1 < len(pat) && pat[i+1] != ':' {
				b.WriteString(`\[`)
				continue
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			if i+1 < len(pat) && pat[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(pat) && pat[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case c == '(' && strings.HasPrefix(pat[i:], "(?#"):
			j := strings.IndexByte(pat[i:], ')')
			if j < 0 {
				return nil, fmt.Errorf("missing ), unterminated comment at position %d", i)
			}
			i += j
		case c == '(' && (strings.HasPrefix(pat[i:], "(?=") || strings.HasPrefix(pat[i:], "(?!") ||
			strings.HasPrefix(pat[i:], "(?<=") || strings.HasPrefix(pat[i:], "(?<!") ||
			strings.HasPrefix(pat[i:], "(?>") || strings.HasPrefix(pat[i:], "(?P=") || strings.HasPrefix(pat[i:], "(?(")):
			return nil, fmt.Errorf("%w: lookaround or backreference in %q", errFileRegex, pat)
		default:
			b.WriteByte(c)
		}
	}
	prefix := ""
	if flags&filePyReI != 0 {
		prefix += "i"
	}
	if flags&filePyReM != 0 {
		prefix += "m"
	}
	if flags&filePyReS != 0 {
		prefix += "s"
	}
	expr := b.String()
	if prefix != "" {
		expr = "(?" + prefix + ")" + expr
	}
	return regexp.Compile(expr)
}

// filePyExpand expands a Python re.sub template (\1, \g<1>, \g<name>,
// \n and friends) for one match of re in src.
func filePyExpand(re *regexp.Regexp, tmpl string, src string, m []int) (string, error) {
	var b strings.Builder
	group := func(idx int) (string, error) {
		if idx < 0 || 2*idx+1 >= len(m) {
			return "", fmt.Errorf("invalid group reference %d", idx)
		}
		if m[2*idx] < 0 {
			return "", nil
		}
		return src[m[2*idx]:m[2*idx+1]], nil
	}
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c != '\\' || i+1 >= len(tmpl) {
			b.WriteByte(c)
			continue
		}
		n := tmpl[i+1]
		switch {
		case n == 'g':
			if i+2 >= len(tmpl) || tmpl[i+2] != '<' {
				return "", errors.New("missing <")
			}
			end := strings.IndexByte(tmpl[i+3:], '>')
			if end < 0 {
				return "", errors.New("missing >, unterminated name")
			}
			ref := tmpl[i+3 : i+3+end]
			idx, err := strconv.Atoi(ref)
			if err != nil {
				idx = re.SubexpIndex(ref)
				if idx < 0 {
					return "", fmt.Errorf("unknown group name '%s'", ref)
				}
			}
			s, err := group(idx)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			i += 3 + end
		case n >= '0' && n <= '9':
			isOct := func(k int) bool { return k < len(tmpl) && tmpl[k] >= '0' && tmpl[k] <= '7' }
			if n == '0' || (isOct(i+1) && isOct(i+2) && isOct(i+3)) {
				k := i + 1
				for k < i+4 && isOct(k) {
					k++
				}
				v, _ := strconv.ParseUint(tmpl[i+1:k], 8, 16)
				b.WriteByte(byte(v))
				i = k - 1
				continue
			}
			j := i + 2
			if j < len(tmpl) && tmpl[j] >= '0' && tmpl[j] <= '9' {
				j++
			}
			idx, _ := strconv.Atoi(tmpl[i+1 : j])
			s, err := group(idx)
			if err != nil {
				return "", err
			}
			b.WriteString(s)
			i = j - 1
		default:
			esc := map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'f': "\f", 'v': "\v", 'a': "\a", 'b': "\b", '\\': "\\"}
			if s, ok := esc[n]; ok {
				b.WriteString(s)
			} else if (n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z') {
				return "", fmt.Errorf(`bad escape \%c`, n)
			} else {
				b.WriteByte('\\')
				b.WriteByte(n)
			}
			i++
		}
	}
	return b.String(), nil
}

// filePySubn is re.subn(pattern, repl, s, count): count 0 replaces all.
func filePySubn(re *regexp.Regexp, repl, s string, count int) (string, int, error) {
	n := -1
	if count > 0 {
		n = count
	}
	matches := re.FindAllStringSubmatchIndex(s, n)
	if len(matches) == 0 {
		return s, 0, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(s[last:m[0]])
		out, err := filePyExpand(re, repl, s, m)
		if err != nil {
			return "", 0, err
		}
		b.WriteString(out)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), len(matches), nil
}

// filePyEscape is re.escape (Python 3.7+).
func filePyEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func fileIsOctal(c byte) bool { return c >= '0' && c <= '7' }

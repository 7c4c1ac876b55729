package py

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Exception is a Python exception raised by the code py mirrors: Type is
// the class name (ValueError, KeyError, ...), Msg the text gsalt reports.
type Exception struct {
	Type, Msg string
}

func (e *Exception) Error() string { return e.Msg }

func pyErr(typ, format string, args ...any) error {
	return &Exception{Type: typ, Msg: fmt.Sprintf(format, args...)}
}

// TypeName is Python's type(v).__name__ for the data model: NoneType,
// bool, int (every Go integer type and *big.Int), float, str, bytes,
// datetime, list and dict; other Go values are named by their Go type.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, *big.Int:
		return "int"
	case float32, float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case time.Time:
		return "datetime"
	}
	if _, ok := List(v); ok {
		return "list"
	}
	if rangeDict(v, func(_, _ any) bool { return false }) {
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// Formatter is Python's str.format with positional fields, [index] and
// [key] lookups, the !s, !r and !a conversions and format specs for str,
// int and float, on values the caller's Str and Repr render (they are
// required: str() and repr() of the caller's value model). Normalize, when
// set, maps an argument onto the data model before it is looked into or
// formatted (ints as int64 or *big.Int, floats as float64, dicts as
// *payload.Map or another Ranger, lists as []any).
type Formatter struct {
	Str, Repr func(any) string
	Normalize func(any) any
}

// Format is template.format(*args). Errors are *Exception values named as
// Python names them (ValueError, IndexError, KeyError, TypeError), or
// NotImplementedError for what gsalt does not implement (attribute
// lookups, the "z" option, the alternate float form).
func (f Formatter) Format(template string, args ...any) (string, error) {
	st := &formatState{Formatter: f, args: args}
	return st.format(template, 0)
}

type formatState struct {
	Formatter
	args []any
	auto int
	mode int // 0 unset, 1 automatic numbering, 2 manual
}

func (f Formatter) normalize(v any) any {
	if f.Normalize != nil {
		return f.Normalize(v)
	}
	return v
}

func (f *formatState) format(s string, depth int) (string, error) {
	if depth > 1 {
		return "", pyErr("ValueError", "Max string recursion exceeded")
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		ch := s[i]
		switch ch {
		case '{':
			if i+1 < len(s) && s[i+1] == '{' {
				b.WriteByte('{')
				i += 2
				continue
			}
			j, level := i+1, 1
			inBracket := false
			for ; j < len(s); j++ {
				switch s[j] {
				case '[':
					inBracket = true
				case ']':
					inBracket = false
				case '{':
					if !inBracket {
						level++
					}
				case '}':
					if !inBracket {
						level--
					}
				}
				if level == 0 {
					break
				}
			}
			if j >= len(s) {
				return "", pyErr("ValueError", "expected '}' before end of string")
			}
			out, err := f.field(s[i+1:j], depth)
			if err != nil {
				return "", err
			}
			b.WriteString(out)
			i = j + 1
		case '}':
			if i+1 < len(s) && s[i+1] == '}' {
				b.WriteByte('}')
				i += 2
				continue
			}
			return "", pyErr("ValueError", "Single '}' encountered in format string")
		default:
			b.WriteByte(ch)
			i++
		}
	}
	return b.String(), nil
}

func (f *formatState) field(field string, depth int) (string, error) {
	// Split name, conversion and spec (brackets protect ':' and '!').
	end := len(field)
	inBracket := false
	for k := 0; k < len(field); k++ {
		if field[k] == '[' {
			inBracket = true
		} else if field[k] == ']' {
			inBracket = false
		} else if !inBracket && (field[k] == '!' || field[k] == ':') {
			end = k
			break
		}
	}
	name, rest := field[:end], field[end:]
	conv := byte(0)
	if strings.HasPrefix(rest, "!") {
		if len(rest) < 2 {
			return "", pyErr("ValueError", "end of string while looking for conversion specifier")
		}
		conv = rest[1]
		rest = rest[2:]
		if rest != "" && rest[0] != ':' {
			return "", pyErr("ValueError", "expected ':' after conversion specifier")
		}
	}
	spec := strings.TrimPrefix(rest, ":")
	v, err := f.lookup(name)
	if err != nil {
		return "", err
	}
	switch conv {
	case 0:
	case 's':
		v = f.Str(v)
	case 'r':
		v = f.Repr(v)
	case 'a':
		v = pyASCII(f.Repr(v))
	default:
		return "", pyErr("ValueError", "Unknown conversion specifier %c", conv)
	}
	if strings.ContainsAny(spec, "{}") {
		spec, err = f.format(spec, depth+1)
		if err != nil {
			return "", err
		}
	}
	return f.FormatSpec(v, spec)
}

func (f *formatState) lookup(name string) (any, error) {
	first := name
	if k := strings.IndexAny(name, ".["); k >= 0 {
		first, name = name[:k], name[k:]
	} else {
		name = ""
	}
	var idx int
	switch {
	case first == "":
		if f.mode == 2 {
			return nil, pyErr("ValueError", "cannot switch from manual field specification to automatic field numbering")
		}
		f.mode = 1
		idx = f.auto
		f.auto++
	case isASCIIDigits(first):
		if f.mode == 1 {
			return nil, pyErr("ValueError", "cannot switch from automatic field numbering to manual field specification")
		}
		f.mode = 2
		n, err := strconv.Atoi(first)
		if err != nil {
			return nil, pyErr("ValueError", "Too many decimal digits in format string")
		}
		idx = n
	default:
		return nil, pyErr("KeyError", "KeyError: %q", first)
	}
	if idx >= len(f.args) {
		return nil, pyErr("IndexError", "Replacement index %d out of range for positional args tuple", idx)
	}
	v := f.args[idx]
	for name != "" {
		if name[0] == '.' {
			return nil, pyErr("NotImplementedError", "attribute lookup %q is not supported", name)
		}
		closing := strings.IndexByte(name, ']')
		if closing < 0 {
			return nil, pyErr("ValueError", "Missing ']' in format string")
		}
		key := name[1:closing]
		name = name[closing+1:]
		if key == "" {
			return nil, pyErr("ValueError", "Empty attribute in format string")
		}
		if name != "" && name[0] != '.' && name[0] != '[' {
			return nil, pyErr("ValueError", "Only '.' or '[' may follow ']' in format field specifier")
		}
		var err error
		v, err = f.getItem(v, key)
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}

func isASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// getItem is v[key] with str.format's key rule (digits are an int).
func (f Formatter) getItem(v any, key string) (any, error) {
	n, isInt := 0, isASCIIDigits(key)
	if isInt {
		var err error
		if n, err = strconv.Atoi(key); err != nil {
			return nil, pyErr("ValueError", "index too large")
		}
	}
	v = f.normalize(v)
	if _, isList := List(v); !isList {
		var want any = key
		if isInt {
			want = int64(n)
		}
		var found any
		ok := false
		if rangeDict(v, func(k, val any) bool {
			if Equal(f.normalize(k), want) {
				found, ok = val, true
				return false
			}
			return true
		}) {
			if ok {
				return found, nil
			}
			if isInt {
				return nil, pyErr("KeyError", "KeyError: %s", key)
			}
			return nil, pyErr("KeyError", "KeyError: %q", key)
		}
	}
	if l, isList := List(v); isList {
		if !isInt {
			return nil, pyErr("TypeError", "list indices must be integers or slices, not str")
		}
		if n >= len(l) {
			return nil, pyErr("IndexError", "list index out of range")
		}
		return l[n], nil
	}
	switch x := v.(type) {
	case string:
		if !isInt {
			return nil, pyErr("TypeError", "string indices must be integers, not 'str'")
		}
		rs := []rune(x)
		if n >= len(rs) {
			return nil, pyErr("IndexError", "string index out of range")
		}
		return string(rs[n]), nil
	}
	return nil, pyErr("TypeError", "'%s' object is not subscriptable", TypeName(v))
}

// pyASCII turns a repr into ascii() output.
func pyASCII(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r <= 0xffff:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			fmt.Fprintf(&b, "\\U%08x", r)
		}
	}
	return b.String()
}

// fmtSpec is a parsed Python format specification.
type fmtSpec struct {
	fill     rune
	align    byte
	sign     byte
	alt      bool
	zero     bool
	width    int
	group    byte
	prec     int // -1 when absent
	typ      byte
	hasFill  bool
	hasAlign bool
}

func parseSpec(spec string) (fmtSpec, error) {
	sp := fmtSpec{fill: ' ', prec: -1}
	rs := []rune(spec)
	i := 0
	isAlign := func(r rune) bool { return r == '<' || r == '>' || r == '=' || r == '^' }
	if len(rs) >= 2 && isAlign(rs[1]) {
		sp.fill, sp.align, sp.hasFill, sp.hasAlign = rs[0], byte(rs[1]), true, true
		i = 2
	} else if len(rs) >= 1 && isAlign(rs[0]) {
		sp.align, sp.hasAlign = byte(rs[0]), true
		i = 1
	}
	if i < len(rs) && (rs[i] == '+' || rs[i] == '-' || rs[i] == ' ') {
		sp.sign = byte(rs[i])
		i++
	}
	if i < len(rs) && rs[i] == 'z' {
		return sp, pyErr("NotImplementedError", "'z' format option is not supported")
	}
	if i < len(rs) && rs[i] == '#' {
		sp.alt = true
		i++
	}
	if i < len(rs) && rs[i] == '0' {
		sp.zero = true
		i++
	}
	start := i
	for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
		i++
	}
	if i > start {
		n, err := strconv.Atoi(string(rs[start:i]))
		if err != nil {
			return sp, pyErr("ValueError", "Too many decimal digits in format string")
		}
		sp.width = n
	}
	if i < len(rs) && (rs[i] == ',' || rs[i] == '_') {
		sp.group = byte(rs[i])
		i++
	}
	if i < len(rs) && rs[i] == '.' {
		i++
		start = i
		for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
			i++
		}
		if i == start {
			return sp, pyErr("ValueError", "Format specifier missing precision")
		}
		n, err := strconv.Atoi(string(rs[start:i]))
		if err != nil {
			return sp, pyErr("ValueError", "Too many decimal digits in format string")
		}
		sp.prec = n
	}
	if len(rs)-i > 1 {
		return sp, pyErr("ValueError", "Invalid format specifier")
	}
	if i < len(rs) {
		if rs[i] > 0x7f {
			return sp, pyErr("ValueError", "Invalid format specifier")
		}
		sp.typ = byte(rs[i])
	}
	if sp.zero && !sp.hasFill {
		sp.fill, sp.hasFill = '0', true
		if !sp.hasAlign {
			sp.align = '='
		}
	}
	return sp, nil
}

// pad applies fill and alignment (defaultAlign when none was given).
func (sp fmtSpec) pad(body, sign string, defaultAlign byte) string {
	align := sp.align
	if align == 0 {
		align = defaultAlign
	}
	n := utf8.RuneCountInString(sign) + utf8.RuneCountInString(body)
	if n >= sp.width {
		return sign + body
	}
	fill := strings.Repeat(string(sp.fill), sp.width-n)
	switch align {
	case '<':
		return sign + body + fill
	case '>':
		return fill + sign + body
	case '=':
		return sign + fill + body
	}
	left := (sp.width - n) / 2
	return strings.Repeat(string(sp.fill), left) + sign + body + strings.Repeat(string(sp.fill), sp.width-n-left)
}

// FormatSpec is format(v, spec) for str, int (bool included) and float
// values; others take only the empty spec (their str()).
func (f Formatter) FormatSpec(v any, spec string) (string, error) {
	v = f.normalize(v)
	if spec == "" {
		return f.Str(v), nil
	}
	sp, err := parseSpec(spec)
	if err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		if sp.typ != 0 && sp.typ != 's' {
			return "", pyErr("ValueError", "Unknown format code '%c' for object of type 'str'", sp.typ)
		}
		if sp.sign != 0 {
			return "", pyErr("ValueError", "Sign not allowed in string format specifier")
		}
		if sp.alt {
			return "", pyErr("ValueError", "Alternate form (#) not allowed in string format specifier")
		}
		if sp.group != 0 {
			return "", pyErr("ValueError", "Cannot specify ',' with 's'.")
		}
		if sp.align == '=' {
			if sp.hasAlign {
				return "", pyErr("ValueError", "'=' alignment not allowed in string format specifier")
			}
			sp.align = 0
		}
		if sp.prec >= 0 {
			if rs := []rune(x); len(rs) > sp.prec {
				x = string(rs[:sp.prec])
			}
		}
		return sp.pad(x, "", '<'), nil
	case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, *big.Int:
		bi, _, _ := exactNumber(x)
		switch sp.typ {
		case 0, 'd', 'n', 'x', 'X', 'o', 'b':
		case 'e', 'E', 'f', 'F', 'g', 'G', '%':
			fl, _ := new(big.Float).SetInt(bi).Float64()
			return f.formatFloatSpec(fl, sp)
		default:
			return "", pyErr("ValueError", "Unknown format code '%c' for object of type 'int'", sp.typ)
		}
		if sp.prec >= 0 {
			return "", pyErr("ValueError", "Precision not allowed in integer format specifier")
		}
		base, prefix := 10, ""
		switch sp.typ {
		case 'x', 'X':
			base, prefix = 16, "0x"
		case 'o':
			base, prefix = 8, "0o"
		case 'b':
			base, prefix = 2, "0b"
		}
		digits := new(big.Int).Abs(bi).Text(base)
		if sp.typ == 'X' {
			digits, prefix = strings.ToUpper(digits), "0X"
		}
		if sp.group != 0 {
			every := 3
			if base != 10 {
				every = 4
			}
			digits = groupDigits(digits, string(sp.group), every)
		}
		sign := signOf(bi.Sign() < 0, sp.sign)
		if sp.alt {
			sign += prefix
		}
		return sp.pad(digits, sign, '>'), nil
	case float64:
		return f.formatFloatSpec(x, sp)
	case float32:
		return f.formatFloatSpec(float64(x), sp)
	}
	return "", pyErr("TypeError", "unsupported format string passed to %s.__format__", TypeName(v))
}

func signOf(neg bool, flag byte) string {
	switch {
	case neg:
		return "-"
	case flag == '+':
		return "+"
	case flag == ' ':
		return " "
	}
	return ""
}

func groupDigits(d, sep string, every int) string {
	var parts []string
	for len(d) > every {
		parts = append([]string{d[len(d)-every:]}, parts...)
		d = d[:len(d)-every]
	}
	parts = append([]string{d}, parts...)
	return strings.Join(parts, sep)
}

func (f Formatter) formatFloatSpec(x float64, sp fmtSpec) (string, error) {
	neg := math.Signbit(x) && !math.IsNaN(x)
	a := math.Abs(x)
	var body string
	switch {
	case math.IsInf(a, 0):
		body = "inf"
	case math.IsNaN(a):
		body = "nan"
	}
	upper := sp.typ == 'E' || sp.typ == 'F' || sp.typ == 'G'
	if body == "" {
		prec := sp.prec
		switch sp.typ {
		case 'f', 'F':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(a, 'f', prec, 64)
		case '%':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(a*100, 'f', prec, 64)
		case 'e', 'E':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(a, 'e', prec, 64)
		case 'g', 'G':
			if prec < 0 {
				prec = 6
			}
			if prec == 0 {
				prec = 1
			}
			body = strconv.FormatFloat(a, 'g', prec, 64)
		case 0:
			if prec < 0 {
				body = f.Repr(a)
			} else {
				if prec == 0 {
					prec = 1
				}
				body = strconv.FormatFloat(a, 'g', prec, 64)
				if !strings.ContainsAny(body, ".e") {
					body += ".0"
				}
			}
		default:
			return "", pyErr("ValueError", "Unknown format code '%c' for object of type 'float'", sp.typ)
		}
		if sp.alt && !strings.Contains(body, ".") {
			return "", pyErr("NotImplementedError", "alternate float form is not supported")
		}
		if sp.group != 0 {
			intPart, frac := body, ""
			if k := strings.IndexAny(body, ".e"); k >= 0 {
				intPart, frac = body[:k], body[k:]
			}
			body = groupDigits(intPart, string(sp.group), 3) + frac
		}
	}
	if upper {
		body = strings.ToUpper(body)
	}
	if sp.typ == '%' {
		body += "%"
	}
	return sp.pad(body, signOf(neg, sp.sign), '>'), nil
}

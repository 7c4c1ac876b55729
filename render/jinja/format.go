package jinja

import (
	"errors"
	"fmt"
	"github.com/gsalt/gsalt/internal/py"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// PercentFormat is Python's format % args: args is a tuple for several
// values, a dict for %(name)s, anything else a single value.
func PercentFormat(format string, args any) (string, error) {
	return percentFormat(format, args, false)
}

// percentFormat is format % args, or Markup(format) % args when esc is
// set: markupsafe wraps every argument so that %s and %r give it escaped
// and the numeric conversions see int() or float() of it.
func percentFormat(format string, args any, esc bool) (string, error) {
	var list []any
	var mapping *payload.Map
	switch x := args.(type) {
	case Tuple:
		list = x
	case *payload.Map:
		mapping = x
		list = []any{x}
	default:
		list = []any{x}
	}
	var b strings.Builder
	next := 0
	usedMap := false
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(format) {
			return "", valueErr("incomplete format")
		}
		var v any
		haveV := false
		if format[i] == '(' {
			depth, j := 1, i+1
			for j < len(format) && depth > 0 {
				if format[j] == '(' {
					depth++
				} else if format[j] == ')' {
					depth--
				}
				j++
			}
			if depth > 0 {
				return "", valueErr("incomplete format key")
			}
			key := format[i+1 : j-1]
			if mapping == nil {
				return "", typeErr("format requires a mapping")
			}
			var ok bool
			if v, ok = mapping.Get(key); !ok {
				return "", &Error{Kind: "KeyError", Msg: pyStrRepr(key)}
			}
			haveV, usedMap = true, true
			i = j
		}
		flags := ""
		for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
			flags += string(format[i])
			i++
		}
		nextArg := func() (any, error) {
			if next >= len(list) {
				return nil, typeErr("not enough arguments for format string")
			}
			next++
			return list[next-1], nil
		}
		width, prec := -1, -1
		if i < len(format) && format[i] == '*' {
			w, err := nextArg()
			if err != nil {
				return "", err
			}
			n, ok := asInt(w)
			if !ok {
				return "", typeErr("* wants int")
			}
			width = int(n)
			if width < 0 {
				// a negative * width left-justifies
				flags += "-"
				width = -width
			}
			i++
		} else {
			j := i
			for i < len(format) && format[i] >= '0' && format[i] <= '9' {
				i++
			}
			if i > j {
				width, _ = strconv.Atoi(format[j:i])
			}
		}
		if i < len(format) && format[i] == '.' {
			i++
			j := i
			for i < len(format) && format[i] >= '0' && format[i] <= '9' {
				i++
			}
			prec, _ = strconv.Atoi("0" + format[j:i])
		}
		for i < len(format) && (format[i] == 'l' || format[i] == 'h' || format[i] == 'L') {
			i++
		}
		if i >= len(format) {
			return "", valueErr("incomplete format")
		}
		conv := format[i]
		if conv == '%' {
			if format[i-1] != '%' {
				// only a bare %% is a literal percent sign
				return "", valueErr("unsupported format character '%%' (0x25) at index %d", i)
			}
			b.WriteByte('%')
			continue
		}
		if !haveV {
			var err error
			if v, err = nextArg(); err != nil {
				return "", err
			}
		}
		var s string
		var err error
		if esc {
			s, err = formatOneEscaped(conv, flags, prec, v, i)
		} else {
			s, err = formatOne(conv, flags, prec, v, i)
		}
		if err != nil {
			return "", err
		}
		if width >= 0 && utf8.RuneCountInString(s) < width {
			pad := width - utf8.RuneCountInString(s)
			switch {
			case strings.Contains(flags, "-"):
				s += strings.Repeat(" ", pad)
			case strings.Contains(flags, "0") && strings.IndexByte("diouxXeEfFgG", conv) >= 0:
				sign := ""
				if s != "" && (s[0] == '-' || s[0] == '+' || s[0] == ' ') {
					sign, s = s[:1], s[1:]
				}
				if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") || strings.HasPrefix(s, "0o") {
					sign, s = sign+s[:2], s[2:]
				}
				s = sign + strings.Repeat("0", pad) + s
			default:
				s = strings.Repeat(" ", pad) + s
			}
		}
		b.WriteString(s)
	}
	// Python skips the check for any argument with __getitem__ (a
	// list, range or bytes counts as a mapping there)
	mapLike := false
	switch args.(type) {
	case *List, []any, *rangeVal, []byte, *Undefined:
		// Jinja2's Undefined defines __getitem__ too
		mapLike = true
	}
	if next < len(list) && !usedMap && mapping == nil && !mapLike {
		return "", typeErr("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

func formatOne(conv byte, flags string, prec int, v any, pos int) (string, error) {
	if err := strictCheck(v); err != nil {
		return "", err
	}
	sign := func(neg bool, s string) string {
		switch {
		case neg:
			return "-" + s
		case strings.Contains(flags, "+"):
			return "+" + s
		case strings.Contains(flags, " "):
			return " " + s
		}
		return s
	}
	switch conv {
	case 's', 'r', 'a':
		var s string
		if conv == 's' {
			var err error
			if s, err = Str(v); err != nil {
				return "", err
			}
		} else {
			s = Repr(v)
		}
		if prec >= 0 && utf8.RuneCountInString(s) > prec {
			s = string([]rune(s)[:prec])
		}
		return s, nil
	case 'd', 'i', 'u', 'x', 'X', 'o':
		k, i, b, f := numOf(v)
		var n *big.Int
		switch k {
		case nkInt:
			n = big.NewInt(i)
		case nkBig:
			n = b
		case nkFloat:
			if conv != 'd' && conv != 'i' && conv != 'u' {
				return "", typeErr("%%%c format: an integer is required, not float", conv)
			}
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return "", &Error{Kind: "OverflowError", Msg: "cannot convert float infinity to integer"}
			}
			n, _ = new(big.Float).SetFloat64(math.Trunc(f)).Int(nil)
		default:
			if conv == 'd' || conv == 'i' || conv == 'u' {
				return "", typeErr("%%%c format: a real number is required, not %s", conv, TypeName(v))
			}
			return "", typeErr("%%%c format: an integer is required, not %s", conv, TypeName(v))
		}
		neg := n.Sign() < 0
		abs := new(big.Int).Abs(n)
		var s string
		switch conv {
		case 'x':
			s = abs.Text(16)
		case 'X':
			s = strings.ToUpper(abs.Text(16))
		case 'o':
			s = abs.Text(8)
		default:
			s = abs.Text(10)
		}
		if prec > len(s) {
			s = strings.Repeat("0", prec-len(s)) + s
		}
		if strings.Contains(flags, "#") {
			switch conv {
			case 'x':
				s = "0x" + s
			case 'X':
				s = "0X" + s
			case 'o':
				s = "0o" + s
			}
		}
		return sign(neg, s), nil
	case 'e', 'E', 'f', 'F', 'g', 'G':
		k, i, b, f := numOf(v)
		if k == nkNone {
			return "", typeErr("must be real number, not %s", TypeName(v))
		}
		x := toFloat(k, i, b, f)
		if prec < 0 {
			prec = 6
		}
		return sign(math.Signbit(x) && !math.IsNaN(x), formatFloat(math.Abs(x), conv, prec, strings.Contains(flags, "#"))), nil
	case 'c':
		switch x := v.(type) {
		case string:
			if utf8.RuneCountInString(x) != 1 {
				return "", typeErr("%%c requires int or char")
			}
			return x, nil
		}
		if n, ok := asInt(v); ok {
			if n < 0 || n >= 0x110000 {
				return "", &Error{Kind: "OverflowError", Msg: "%c arg not in range(0x110000)"}
			}
			return string(rune(n)), nil
		}
		if _, big := v.(*big.Int); big {
			return "", &Error{Kind: "OverflowError", Msg: "%c arg not in range(0x110000)"}
		}
		return "", typeErr("%%c requires int or char")
	}
	return "", valueErr("unsupported format character '%c' (0x%x) at index %d", conv, conv, pos)
}

// formatOneEscaped is formatOne of markupsafe's _MarkupEscapeHelper
// around v.
func formatOneEscaped(conv byte, flags string, prec int, v any, pos int) (string, error) {
	if err := strictCheck(v); err != nil {
		return "", err
	}
	switch conv {
	case 's':
		m, err := Escape(v)
		if err != nil {
			return "", err
		}
		s := string(m)
		if prec >= 0 && utf8.RuneCountInString(s) > prec {
			s = string([]rune(s)[:prec])
		}
		return s, nil
	case 'r', 'a':
		s := htmlEscape(Repr(v))
		if prec >= 0 && utf8.RuneCountInString(s) > prec {
			s = string([]rune(s)[:prec])
		}
		return s, nil
	case 'd', 'i', 'u':
		if k, _, _, _ := numOf(v); k == nkNone {
			n, ok := toPyInt(demote(v), 10)
			if !ok {
				return "", valueErr("invalid literal for int() with base 10: %s", Repr(demote(v)))
			}
			v = n
		}
	case 'e', 'E', 'f', 'F', 'g', 'G':
		if k, _, _, _ := numOf(v); k == nkNone {
			f, ok := toPyFloat(demote(v))
			if !ok {
				return "", valueErr("could not convert string to float: %s", Repr(demote(v)))
			}
			v = f
		}
	case 'x', 'X', 'o':
		return "", typeErr("%%%c format: an integer is required, not _MarkupEscapeHelper", conv)
	case 'c':
		return "", typeErr("%%c requires int or char")
	}
	return formatOne(conv, flags, prec, v, pos)
}

// formatFloat formats a non-negative float like Python's %e/%f/%g.
func formatFloat(x float64, conv byte, prec int, alt bool) string {
	if math.IsInf(x, 0) {
		if conv >= 'a' {
			return "inf"
		}
		return "INF"
	}
	if math.IsNaN(x) {
		if conv >= 'a' {
			return "nan"
		}
		return "NAN"
	}
	switch conv {
	case 'f', 'F':
		return strconv.FormatFloat(x, 'f', prec, 64)
	case 'e', 'E':
		s := strconv.FormatFloat(x, byte(conv), prec, 64)
		return fixExp(s)
	}
	// g
	if prec == 0 {
		prec = 1
	}
	exp := 0
	if x != 0 {
		e := strconv.FormatFloat(x, 'e', prec-1, 64)
		exp, _ = strconv.Atoi(e[strings.IndexAny(e, "e")+1:])
	}
	var s string
	if exp < -4 || exp >= prec {
		s = strconv.FormatFloat(x, 'e', prec-1, 64)
		if !alt {
			mant, ex, _ := strings.Cut(s, "e")
			if strings.Contains(mant, ".") {
				mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
			}
			s = mant + "e" + ex
		}
		s = fixExp(s)
		if conv == 'G' {
			s = strings.ToUpper(s)
		}
		return s
	}
	s = strconv.FormatFloat(x, 'f', max(prec-1-exp, 0), 64)
	if !alt && strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// fixExp makes Go's exponent at least two digits, as C's printf does.
func fixExp(s string) string {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return s
	}
	mant, exp := s[:i+1], s[i+1:]
	sign := "+"
	if exp[0] == '+' || exp[0] == '-' {
		sign, exp = exp[:1], exp[1:]
	}
	if len(exp) < 2 {
		exp = "0" + exp
	}
	return mant + sign + exp
}

// StrFormat is Python's str.format(*args, **kwargs).
func StrFormat(format string, args []any, kwargs *payload.Map) (string, error) {
	return strFormat(format, args, kwargs, false)
}

// strFormat is str.format, or Markup.format when esc is set: every
// replacement field is HTML-escaped unless its value is Markup.
func strFormat(format string, args []any, kwargs *payload.Map, esc bool) (string, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '}' {
			if i+1 < len(format) && format[i+1] == '}' {
				b.WriteByte('}')
				i++
				continue
			}
			return "", valueErr("Single '}' encountered in format string")
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		if i+1 == len(format) {
			return "", valueErr("Single '{' encountered in format string")
		}
		// find matching }
		depth, j := 1, i+1
		for j < len(format) && depth > 0 {
			if format[j] == '{' {
				depth++
			} else if format[j] == '}' {
				depth--
			}
			j++
		}
		if depth > 0 {
			return "", valueErr("expected '}' before end of string")
		}
		field := format[i+1 : j-1]
		i = j - 1
		spec := ""
		conv := byte(0)
		// split field_name!conv:spec (brackets may contain : or !)
		k := 0
		for k < len(field) {
			if field[k] == '[' {
				for k < len(field) && field[k] != ']' {
					k++
				}
			}
			if k < len(field) && (field[k] == '!' || field[k] == ':') {
				break
			}
			k++
		}
		name := field[:k]
		rest := field[k:]
		if strings.HasPrefix(rest, "!") {
			if len(rest) < 2 {
				return "", valueErr("end of string while looking for conversion specifier")
			}
			conv = rest[1]
			rest = rest[2:]
		}
		if strings.HasPrefix(rest, ":") {
			spec = rest[1:]
		}
		if strings.Contains(spec, "{") {
			expanded, err := strFormat(spec, args, kwargs, esc)
			if err != nil {
				return "", err
			}
			spec = expanded
		}
		// first part of the name
		first := name
		end := strings.IndexAny(name, ".[")
		if end >= 0 {
			first = name[:end]
		}
		var v any
		if first == "" {
			if auto < 0 {
				return "", valueErr("cannot switch from manual field specification to automatic field numbering")
			}
			if auto >= len(args) {
				return "", &Error{Kind: "IndexError", Msg: fmt.Sprintf("Replacement index %d out of range for positional args tuple", auto)}
			}
			v = args[auto]
			auto++
		} else if n, err := strconv.Atoi(first); err == nil {
			if auto > 0 {
				return "", valueErr("cannot switch from automatic field numbering to manual field specification")
			}
			auto = -1
			if n >= len(args) {
				return "", &Error{Kind: "IndexError", Msg: fmt.Sprintf("Replacement index %d out of range for positional args tuple", n)}
			}
			v = args[n]
		} else {
			var ok bool
			if kwargs != nil {
				v, ok = kwargs.Get(first)
			}
			if !ok {
				return "", &Error{Kind: "KeyError", Msg: pyStrRepr(first)}
			}
		}
		if end >= 0 {
			var err error
			if v, err = formatLookup(v, name[end:]); err != nil {
				return "", err
			}
		}
		switch conv {
		case 'r', 'a':
			v = Repr(v)
		case 's':
			s, err := Str(v)
			if err != nil {
				return "", err
			}
			v = s
		}
		if m, ok := v.(Markup); ok && esc {
			// Markup.__html_format__
			if spec != "" {
				return "", valueErr("Unsupported format specification for Markup.")
			}
			b.WriteString(string(m))
			continue
		}
		s, err := FormatSpec(demote(v), spec)
		if err != nil {
			return "", err
		}
		if esc {
			s = htmlEscape(s)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func formatLookup(v any, path string) (any, error) {
	for path != "" {
		if path[0] == '.' {
			j := strings.IndexAny(path[1:], ".[")
			if j < 0 {
				j = len(path) - 1
			}
			attr := path[1 : j+1]
			path = path[j+1:]
			if m, ok := v.(*payload.Map); ok {
				_ = m
				return nil, &Error{Kind: "AttributeError", Msg: fmt.Sprintf("'dict' object has no attribute %s", pyStrRepr(attr))}
			}
			if x, ok := numAttr(v, attr); ok {
				v = x
				continue
			}
			if m := methodFor(v, attr); m != nil {
				v = m
				continue
			}
			a, ok := v.(Attrs)
			if !ok {
				// Salt's SandboxedFormatter looks attributes up like
				// templates do: a missing one is an undefined value
				v = &Undefined{Name: attr, Obj: v, HasObj: true, Strict: true}
				continue
			}
			if v, ok = a.GetAttr(attr); !ok {
				return nil, &Error{Kind: "AttributeError", Msg: fmt.Sprintf("'%s' object has no attribute %s", TypeName(v), pyStrRepr(attr))}
			}
			continue
		}
		j := strings.IndexByte(path, ']')
		if j < 0 {
			return nil, valueErr("Missing ']' in format string")
		}
		key := path[1:j]
		path = path[j+1:]
		var k any = key
		if n, err := strconv.Atoi(key); err == nil {
			k = int64(n)
		}
		switch x := v.(type) {
		case *payload.Map:
			r, ok := mapGet(x, k)
			if !ok {
				return nil, &Error{Kind: "KeyError", Msg: Repr(k)}
			}
			v = r
		case *List, Tuple:
			n, ok := k.(int64)
			items, _ := Iterate(x)
			if !ok {
				return nil, typeErr("list indices must be integers or slices, not str")
			}
			idx, ok := pyIndex(int(n), len(items))
			if !ok {
				return nil, &Error{Kind: "IndexError", Msg: "list index out of range"}
			}
			v = items[idx]
		default:
			return nil, typeErr("'%s' object is not subscriptable", TypeName(v))
		}
	}
	return v, nil
}

// FormatSpec is Python's format(v, spec) for the format mini-language.
func FormatSpec(v any, spec string) (string, error) {
	if u, ok := v.(*Undefined); ok && spec != "" {
		return "", typeErr("unsupported format string passed to %s.__format__", TypeName(u))
	}
	if err := strictCheck(v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case bool:
		if spec != "" {
			// bool formats as its int with a non-empty spec
			v = int64(0)
			if x {
				v = int64(1)
			}
		}
	case string:
		if spec == "" {
			return x, nil
		}
		out, err := py.Formatter{}.FormatSpec(x, spec)
		var pe *py.Exception
		if errors.As(err, &pe) {
			return "", &Error{Kind: pe.Type, Msg: pe.Msg}
		}
		return out, err
	case int64, *big.Int, float64:
	default:
		if spec != "" {
			return "", typeErr("unsupported format string passed to %s.__format__", TypeName(v))
		}
	}
	fill, align := " ", byte(0)
	rs := []rune(spec)
	i := 0
	if len(rs) >= 2 && strings.ContainsRune("<>=^", rs[1]) {
		fill, align = string(rs[0]), byte(rs[1])
		i = 2
	} else if len(rs) >= 1 && strings.ContainsRune("<>=^", rs[0]) {
		align = byte(rs[0])
		i = 1
	}
	sp := string(rs[i:])
	j := 0
	signFlag := byte('-')
	if j < len(sp) && strings.IndexByte("+- ", sp[j]) >= 0 {
		signFlag = sp[j]
		j++
	}
	alt := false
	if j < len(sp) && sp[j] == '#' {
		alt = true
		j++
	}
	if j < len(sp) && sp[j] == '0' {
		if align == 0 {
			fill, align = "0", '='
		}
		j++
	}
	width := -1
	k := j
	for j < len(sp) && sp[j] >= '0' && sp[j] <= '9' {
		j++
	}
	if j > k {
		width, _ = strconv.Atoi(sp[k:j])
	}
	grouping := ""
	if j < len(sp) && (sp[j] == ',' || sp[j] == '_') {
		grouping = sp[j : j+1]
		j++
	}
	prec := -1
	if j < len(sp) && sp[j] == '.' {
		j++
		k = j
		for j < len(sp) && sp[j] >= '0' && sp[j] <= '9' {
			j++
		}
		prec, _ = strconv.Atoi(sp[k:j])
	}
	typ := byte(0)
	if j < len(sp) {
		typ = sp[j]
		j++
	}
	if j < len(sp) {
		return "", valueErr("Invalid format specifier")
	}
	var body, sign string
	kind, iv, bv, fv := numOf(v)
	if _, isBool := v.(bool); isBool && typ == 0 {
		kind = nkNone
	}
	switch {
	case kind == nkNone:
		s, err := Str(v)
		if err != nil {
			return "", err
		}
		if typ != 0 && typ != 's' {
			return "", valueErr("Unknown format code '%c' for object of type '%s'", typ, TypeName(v))
		}
		if prec >= 0 && utf8.RuneCountInString(s) < prec+1 {
		} else if prec >= 0 {
			s = string([]rune(s)[:prec])
		}
		body = s
		if align == 0 {
			align = '<'
		}
	case (kind == nkInt || kind == nkBig) && (typ == 0 || strings.IndexByte("dbxXoncs", typ) >= 0):
		n := toBig(kind, iv, bv)
		if typ == 's' {
			return "", valueErr("Unknown format code 's' for object of type 'int'")
		}
		if typ == 'c' {
			if !n.IsInt64() || n.Int64() < 0 || n.Int64() >= 0x110000 {
				return "", &Error{Kind: "OverflowError", Msg: "%c arg not in range(0x110000)"}
			}
			body = string(rune(n.Int64()))
			break
		}
		if n.Sign() < 0 {
			sign = "-"
		}
		abs := new(big.Int).Abs(n)
		base, prefix := 10, ""
		switch typ {
		case 'b':
			base, prefix = 2, "0b"
		case 'x', 'X':
			base, prefix = 16, "0x"
		case 'o':
			base, prefix = 8, "0o"
		}
		body = abs.Text(base)
		if grouping != "" {
			body = group(body, grouping, map[bool]int{true: 3, false: 4}[base == 10])
		}
		if typ == 'X' {
			body = strings.ToUpper(body)
			prefix = "0X"
		}
		if alt {
			sign += prefix
		}
	default:
		if kind == nkNone || (typ != 0 && strings.IndexByte("eEfFgG%n", typ) < 0) {
			return "", valueErr("Unknown format code '%c' for object of type '%s'", typ, TypeName(v))
		}
		x := toFloat(kind, iv, bv, fv)
		if math.Signbit(x) && !math.IsNaN(x) {
			sign = "-"
			x = -x
		}
		switch typ {
		case 0:
			if prec < 0 {
				if kind == nkFloat {
					body = pyfmt.FloatRepr(x)
				} else {
					body = formatInt(toBig(kind, iv, bv))
				}
			} else {
				body = formatFloat(x, 'g', prec, alt)
				if !strings.ContainsAny(body, ".e") && !math.IsInf(x, 0) && !math.IsNaN(x) && false {
					body += ".0"
				}
			}
		case '%':
			if prec < 0 {
				prec = 6
			}
			body = formatFloat(x*100, 'f', prec, alt) + "%"
		case 'n':
			if prec < 0 {
				prec = 6
			}
			body = formatFloat(x, 'g', prec, alt)
		default:
			if prec < 0 {
				prec = 6
			}
			body = formatFloat(x, typ, prec, alt)
		}
		if grouping != "" {
			intPart, frac, hasFrac := strings.Cut(body, ".")
			body = group(intPart, grouping, 3)
			if hasFrac {
				body += "." + frac
			}
		}
	}
	if kind != nkNone && sign == "" {
		switch signFlag {
		case '+':
			sign = "+"
		case ' ':
			sign = " "
		}
	} else if kind != nkNone && sign != "" && sign[0] != '-' {
		switch signFlag {
		case '+':
			sign = "+" + sign
		case ' ':
			sign = " " + sign
		}
	}
	if align == 0 {
		align = '>'
	}
	n := utf8.RuneCountInString(sign + body)
	if width <= n {
		return sign + body, nil
	}
	pad := width - n
	switch align {
	case '<':
		return sign + body + strings.Repeat(fill, pad), nil
	case '^':
		return strings.Repeat(fill, pad/2) + sign + body + strings.Repeat(fill, pad-pad/2), nil
	case '=':
		return sign + strings.Repeat(fill, pad) + body, nil
	}
	return strings.Repeat(fill, pad) + sign + body, nil
}

func group(digits, sep string, n int) string {
	if len(digits) <= n {
		return digits
	}
	var parts []string
	for len(digits) > n {
		parts = append([]string{digits[len(digits)-n:]}, parts...)
		digits = digits[:len(digits)-n]
	}
	return strings.Join(append([]string{digits}, parts...), sep)
}

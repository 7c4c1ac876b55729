package pytoml

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// The reader follows python3-toml 0.10.2's decoder step by step, and that
// decoder leans on Python's own semantics: negative indexes, IndexError
// and TypeError escaping from deep inside, `in` on strings meaning a
// substring. This file holds those Python operations over the decoder's
// values; a raised Python exception travels as a panic of type raised and
// is turned back into an error by Loads (and only there).

// raised carries a Python exception up to Loads.
type raised struct{ exc *py.Exception }

func throw(typ, format string, args ...any) {
	panic(raised{&py.Exception{Type: typ, Msg: fmt.Sprintf(format, args...)}})
}

// valueError is a Python ValueError: the decoder catches these and
// re-raises them as TomlDecodeError with a position.
func valueError(format string, args ...any) { throw("ValueError", format, args...) }

// pylist is a Python list: a reference the decoder appends to in place.
type pylist struct{ items []any }

// end stands for an omitted slice bound.
const end = math.MaxInt

// Date is a TOML local date, Python's datetime.date.
type Date struct{ Year, Month, Day int }

// String is str(date): YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// TimeOfDay is a TOML local time, Python's datetime.time (toml 0.10.2 reads
// the fraction's digits as microseconds, so ".123" is 123 µs).
type TimeOfDay struct{ Hour, Minute, Second, Microsecond int }

// String is str(time): HH:MM:SS[.ffffff].
func (t TimeOfDay) String() string {
	s := fmt.Sprintf("%02d:%02d:%02d", t.Hour, t.Minute, t.Second)
	if t.Microsecond != 0 {
		s += fmt.Sprintf(".%06d", t.Microsecond)
	}
	return s
}

// runes is a Python str as code points.
type runes = []rune

// idx is s[i] for a Python str (negative i counts from the end).
func idx(s runes, i int) rune {
	if i < 0 {
		i += len(s)
	}
	if i < 0 || i >= len(s) {
		throw("IndexError", "string index out of range")
	}
	return s[i]
}

// sidx is idx on a Go string.
func sidx(s string, i int) rune { return idx([]rune(s), i) }

// slice is s[a:b] for a Python str.
func slice(s string, a, b int) string {
	r := []rune(s)
	n := len(r)
	clamp := func(i int) int {
		if i < 0 {
			i += n
			if i < 0 {
				i = 0
			}
		}
		if i > n {
			i = n
		}
		return i
	}
	a, b = clamp(a), clamp(b)
	if a >= b {
		return ""
	}
	return string(r[a:b])
}

// ulen is len(s) of a Python str.
func ulen(s string) int { return len([]rune(s)) }

// strip is str.strip().
func strip(s string) string { return strings.TrimFunc(s, py.IsSpace) }

// split is str.split(sep, maxsplit) (maxsplit < 0: every separator).
func split(s, sep string, maxsplit int) []string {
	if maxsplit < 0 {
		return strings.Split(s, sep)
	}
	return strings.SplitN(s, sep, maxsplit+1)
}

// last is l[-1] of a Python list of strings.
func last(l []string) string {
	if len(l) == 0 {
		throw("IndexError", "list index out of range")
	}
	return l[len(l)-1]
}

// isAlnum is str.isalnum for one character.
func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// typeName is type(v).__name__ as Python's messages write it.
func typeName(v any) string {
	switch v.(type) {
	case *pylist:
		return "list"
	case *payload.Map:
		return "dict"
	case Date:
		return "datetime.date"
	case TimeOfDay:
		return "datetime.time"
	case time.Time:
		return "datetime.datetime"
	}
	return py.TypeName(v)
}

// getItem is v[key] for a str key; a missing dict key reports ok false
// (Python's KeyError), every other failure is the TypeError Python raises.
func getItem(v any, key string) (any, bool) {
	switch t := v.(type) {
	case *payload.Map:
		return t.Get(key)
	case *pylist:
		throw("TypeError", "list indices must be integers or slices, not str")
	case string:
		throw("TypeError", "string indices must be integers, not 'str'")
	}
	throw("TypeError", "'%s' object is not subscriptable", typeName(v))
	return nil, false
}

// isTypeError runs fn and reports whether it raised a TypeError (the
// decoder's `except TypeError`); other exceptions go on up.
func isTypeError(fn func()) (te bool) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(raised); ok && e.exc.Type == "TypeError" {
				te = true
				return
			}
			panic(r)
		}
	}()
	fn()
	return false
}

// lastItem is v[-1]; missing is true for a dict (Python's KeyError).
func lastItem(v any) (item any, missing bool) {
	switch t := v.(type) {
	case *pylist:
		if len(t.items) == 0 {
			throw("IndexError", "list index out of range")
		}
		return t.items[len(t.items)-1], false
	case *payload.Map:
		return nil, true
	case string:
		return string(sidx(t, -1)), false
	}
	throw("TypeError", "'%s' object is not subscriptable", typeName(v))
	return nil, false
}

// setItem is v[key] = val.
func setItem(v any, key string, val any) {
	switch t := v.(type) {
	case *payload.Map:
		t.Set(key, val)
		return
	case *pylist:
		throw("TypeError", "list indices must be integers or slices, not str")
	}
	throw("TypeError", "'%s' object does not support item assignment", typeName(v))
}

// contains is `key in v`.
func contains(v any, key string) bool {
	switch t := v.(type) {
	case *payload.Map:
		return t.Has(key)
	case *pylist:
		for _, e := range t.items {
			if s, ok := e.(string); ok && s == key {
				return true
			}
		}
		return false
	case string:
		return strings.Contains(t, key)
	}
	throw("TypeError", "argument of type '%s' is not iterable", typeName(v))
	return false
}

// appendItem is v.append(x).
func appendItem(v any, x any) *pylist {
	if l, ok := v.(*pylist); ok {
		l.items = append(l.items, x)
		return l
	}
	throw("AttributeError", "'%s' object has no attribute 'append'", typeName(v))
	return nil
}

// digitValue is the value of a Unicode decimal digit (category Nd), -1
// for other characters. Nd digits come in runs of ten from zero.
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return -1
	}
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10
}

// intLiteral is the error of Python's int() on s.
func intLiteral(s string, base int) {
	valueError("invalid literal for int() with base %d: %s", base, pyfmt.Repr(s))
}

// pyInt is Python's int(s, base) for base 10 or 0 (prefixes 0x/0o/0b,
// no leading zeros on a decimal), as *big.Int.
func pyInt(s string, base int) *big.Int {
	t := strip(s)
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	b := 10
	if base == 0 && len(t) >= 2 && t[0] == '0' {
		switch t[1] {
		case 'x', 'X':
			b = 16
		case 'o', 'O':
			b = 8
		case 'b', 'B':
			b = 2
		}
		if b != 10 {
			t = strings.TrimPrefix(t[2:], "_")
		}
	}
	var digits []byte
	prevUnderscore := true
	for _, r := range t {
		if r == '_' {
			if prevUnderscore {
				intLiteral(s, base)
			}
			prevUnderscore = true
			continue
		}
		prevUnderscore = false
		d := -1
		switch {
		case b == 16 && r < 0x80 && strings.ContainsRune("abcdefABCDEF", r):
			d = int(unicode.ToLower(r)-'a') + 10
		default:
			d = digitValue(r)
		}
		if d < 0 || d >= b {
			intLiteral(s, base)
		}
		digits = append(digits, "0123456789abcdef"[d])
	}
	if len(digits) == 0 || prevUnderscore {
		intLiteral(s, base)
	}
	if base == 0 && b == 10 && len(digits) > 1 && digits[0] == '0' && strings.Trim(string(digits), "0") != "" {
		intLiteral(s, base)
	}
	if b == 10 && len(digits) > 4300 {
		valueError("Exceeds the limit (4300 digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", len(digits))
	}
	n, _ := new(big.Int).SetString(string(digits), b)
	if neg {
		n.Neg(n)
	}
	return n
}

// pyFloat is Python's float(s); ok false where float() raises ValueError.
func pyFloat(s string) (float64, bool) {
	t := strip(s)
	var b strings.Builder
	rs := []rune(t)
	i := 0
	if i < len(rs) && (rs[i] == '+' || rs[i] == '-') {
		b.WriteRune(rs[i])
		i++
	}
	switch strings.ToLower(string(rs[i:])) {
	case "inf", "infinity":
		return math.Inf(map[bool]int{true: -1, false: 1}[b.String() == "-"]), true
	case "nan":
		return math.NaN(), true
	}
	// digits with single underscores between digits
	digitsRun := func() bool {
		n := 0
		for i < len(rs) {
			if d := digitValue(rs[i]); d >= 0 {
				b.WriteByte(byte('0' + d))
				n++
				i++
				continue
			}
			if rs[i] == '_' && n > 0 && i+1 < len(rs) && digitValue(rs[i+1]) >= 0 {
				i++
				continue
			}
			break
		}
		return n > 0
	}
	intPart := digitsRun()
	fracPart := false
	if i < len(rs) && rs[i] == '.' {
		b.WriteByte('.')
		i++
		fracPart = digitsRun()
	}
	if !intPart && !fracPart {
		return 0, false
	}
	if i < len(rs) && (rs[i] == 'e' || rs[i] == 'E') {
		b.WriteByte('e')
		i++
		if i < len(rs) && (rs[i] == '+' || rs[i] == '-') {
			b.WriteRune(rs[i])
			i++
		}
		if !digitsRun() {
			return 0, false
		}
	}
	if i != len(rs) {
		return 0, false
	}
	f, err := strconv.ParseFloat(b.String(), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// floatOrRaise is float(s), raising Python's ValueError.
func floatOrRaise(s string) float64 {
	f, ok := pyFloat(s)
	if !ok {
		valueError("could not convert string to float: %s", pyfmt.Repr(s))
	}
	return f
}

// intValue is a *big.Int as gsalt's data model holds it (int64 when it fits).
func intValue(n *big.Int) any {
	if n.IsInt64() {
		return n.Int64()
	}
	return n
}

// tryInt is int(s) reporting ValueError as ok false.
func tryInt(s string) (n int64, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if e, isRaised := r.(raised); isRaised && e.exc.Type == "ValueError" {
				ok = false
				return
			}
			panic(r)
		}
	}()
	v := pyInt(s, 10)
	if !v.IsInt64() {
		return 0, false // far out of every datetime field's range
	}
	return v.Int64(), true
}

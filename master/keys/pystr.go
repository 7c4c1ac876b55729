package keys

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gsalt/gsalt/wire/payload"
)

// pyStr renders a decoded grain value like Python's str(), which Salt's
// autosign_grains check compares with the lines of a grain file. Covered:
// None, bools, integers, floats (repr rules), str, bytes, lists, tuples as
// lists, *payload.Map and Go maps (Go maps in sorted key order, since their
// order is lost), and time.Time (datetime). Other values use fmt's %v.
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case time.Time:
		if x.Nanosecond()/1000 == 0 {
			return x.Format("2006-01-02 15:04:05")
		}
		return x.Format("2006-01-02 15:04:05.000000")
	}
	return pyRepr(v)
}

// pyRepr renders v like Python's repr().
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return pyReprStr(x)
	case []byte:
		return pyReprBytes(x)
	case int:
		return strconv.Itoa(x)
	case int8, int16, int32, int64:
		return strconv.FormatInt(reflect.ValueOf(x).Int(), 10)
	case uint, uint8, uint16, uint32, uint64:
		return strconv.FormatUint(reflect.ValueOf(x).Uint(), 10)
	case float32:
		return pyFloatRepr(float64(x))
	case float64:
		return pyFloatRepr(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyReprStr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *payload.Map:
		if x == nil {
			return "None"
		}
		var parts []string
		for _, it := range x.Items() {
			parts = append(parts, pyRepr(it.Key)+": "+pyRepr(it.Value))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[string]any:
		ks := make([]string, 0, len(x))
		for k := range x {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		parts := make([]string, len(ks))
		for i, k := range ks {
			parts[i] = pyReprStr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case time.Time:
		s := fmt.Sprintf("datetime.datetime(%d, %d, %d, %d, %d", x.Year(), int(x.Month()), x.Day(), x.Hour(), x.Minute())
		us := x.Nanosecond() / 1000
		switch {
		case us != 0:
			s += fmt.Sprintf(", %d, %d", x.Second(), us)
		case x.Second() != 0:
			s += fmt.Sprintf(", %d", x.Second())
		}
		return s + ")"
	}
	return fmt.Sprintf("%v", v)
}

// pyFloatRepr is Python's repr(float): the shortest round-tripping digits,
// positional when the decimal exponent is in [-4, 16), else scientific with
// a two-digit exponent at least.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	sign := ""
	if neg {
		sign = "-"
	}
	if exp >= -4 && exp < 16 {
		var s string
		if exp >= 0 {
			if len(digits) <= exp+1 {
				s = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
			} else {
				s = digits[:exp+1] + "." + digits[exp+1:]
			}
		} else {
			s = "0." + strings.Repeat("0", -exp-1) + digits
		}
		return sign + s
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es = "-"
		exp = -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
}

// pyReprStr is Python's repr(str).
func pyReprStr(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case !unicode.IsPrint(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(&b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pyReprBytes is Python's repr(bytes).
func pyReprBytes(p []byte) string {
	quote := byte('\'')
	if strings.ContainsRune(string(p), '\'') && !strings.ContainsRune(string(p), '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteString("b")
	b.WriteByte(quote)
	for _, c := range p {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == quote:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// Package pyfmt renders decoded values the way Python's str() and repr()
// do, for the places where Salt turns a value into text (grain and pillar
// matching, autosign grains, messages, option strings), and holds the other
// small pieces of Python behaviour several packages need: json.dumps
// (JSON), == (Equal), type(v).__name__ (TypeName) and numbers as floats
// (Float).
//
// The data model is the one every gsalt decoder produces: nil (None), bool,
// string, []byte, all Go integer and float types, *big.Int, time.Time (a
// naive datetime), lists ([]any, []string and other slices or arrays) and
// dicts: any ordered mapping with a Range(func(k, v any) bool) method (such
// as *payload.Map, in its own order; a nil pointer is an empty dict),
// map[string]any (sorted keys) and other Go maps (keys sorted by their
// repr, since Go maps have no order). Other values use their String method
// or fmt's default format.
//
// Rendering is bounded: past MaxDepth levels of nesting, or once the output
// is longer than MaxLen bytes, the rest is written as "..." (Python prints
// "[...]" for self-references; gsalt also stops on huge or very deep
// values).
package pyfmt

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/gsalt/gsalt/internal/py"
)

const (
	// MaxDepth is the nesting depth past which Str and Repr write "...".
	MaxDepth = 512
	// MaxLen is the output length (bytes) past which Str and Repr stop
	// rendering further members.
	MaxLen = 1 << 20
)

// Ranger is an ordered mapping (a Python dict), such as *payload.Map: Range
// visits every entry in order until fn returns false.
type Ranger = py.Ranger

// Str renders v like Python's str(): a string as is, everything else as
// Repr, except a datetime, which is written "YYYY-MM-DD HH:MM:SS[.ffffff]".
func Str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case time.Time:
		return datetimeStr(x)
	}
	return Repr(v)
}

// Repr renders v like Python's repr(): strings and bytes quoted and
// escaped, None/True/False, integers in decimal, floats as FloatRepr,
// datetimes as datetime.datetime(...), lists and dicts with the repr of
// their members.
func Repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

func writeRepr(b *strings.Builder, v any, depth int) {
	if depth > MaxDepth || b.Len() > MaxLen {
		b.WriteString("...")
		return
	}
	switch t := v.(type) {
	case nil:
		b.WriteString("None")
		return
	case string:
		writeStrRepr(b, t)
		return
	case []byte:
		writeBytesRepr(b, t)
		return
	case bool:
		if t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
		return
	case time.Time:
		b.WriteString(datetimeRepr(t))
		return
	case *big.Int:
		if t != nil {
			b.WriteString(t.String())
			return
		}
	}
	if writeNumber(b, v) {
		return
	}
	if writeDict(b, v, depth) {
		return
	}
	if l, ok := List(v); ok {
		b.WriteByte('[')
		for i, e := range l {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, depth+1)
		}
		b.WriteByte(']')
		return
	}
	if s, ok := v.(fmt.Stringer); ok {
		b.WriteString(s.String())
		return
	}
	fmt.Fprint(b, v)
}

// writeNumber writes Go's integer and float types; false for other values.
func writeNumber(b *strings.Builder, v any) bool {
	switch t := v.(type) {
	case int, int8, int16, int32, int64:
		b.WriteString(strconv.FormatInt(reflect.ValueOf(t).Int(), 10))
	case uint, uint8, uint16, uint32, uint64:
		b.WriteString(strconv.FormatUint(reflect.ValueOf(t).Uint(), 10))
	case float32:
		b.WriteString(FloatRepr(float64(t)))
	case float64:
		b.WriteString(FloatRepr(t))
	default:
		return false
	}
	return true
}

// writeDict writes the dict types of the data model; false for other values.
func writeDict(b *strings.Builder, v any, depth int) bool {
	entry := func(first bool, k, val any) {
		if !first {
			b.WriteString(", ")
		}
		writeRepr(b, k, depth+1)
		b.WriteString(": ")
		writeRepr(b, val, depth+1)
	}
	switch t := v.(type) {
	case Ranger:
		b.WriteByte('{')
		if !isNilPointer(t) {
			first := true
			t.Range(func(k, val any) bool {
				entry(first, k, val)
				first = false
				return true
			})
		}
		b.WriteByte('}')
		return true
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			entry(i == 0, k, t[k])
		}
		b.WriteByte('}')
		return true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map {
		return false
	}
	b.WriteByte('{')
	first := true
	RangeMap(rv, func(k, val any) bool {
		entry(first, k, val)
		first = false
		return true
	})
	b.WriteByte('}')
	return true
}

// RangeMap visits the entries of the Go map m (a reflect.Map value) in the
// order Repr of their keys sorts (stable), until fn returns false: the fixed
// order gsalt gives to Go maps, whose own order is random.
func RangeMap(m reflect.Value, fn func(k, v any) bool) {
	type kv struct {
		repr string
		k, v any
	}
	pairs := make([]kv, 0, m.Len())
	for it := m.MapRange(); it.Next(); {
		k := it.Key().Interface()
		pairs = append(pairs, kv{Repr(k), k, it.Value().Interface()})
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].repr < pairs[j].repr })
	for _, p := range pairs {
		if !fn(p.k, p.v) {
			return
		}
	}
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// List reports whether v is a Python list in the data model ([]any,
// []string, any other slice or array but bytes) and returns its elements
// (py.List).
func List(v any) ([]any, bool) { return py.List(v) }

// datetimeStr renders str(datetime) for a naive datetime.
func datetimeStr(t time.Time) string {
	s := t.Format("2006-01-02 15:04:05")
	if us := t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// datetimeRepr renders repr(datetime) for a naive datetime.
func datetimeRepr(t time.Time) string {
	s := fmt.Sprintf("datetime.datetime(%d, %d, %d, %d, %d", t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute())
	us := t.Nanosecond() / 1000
	switch {
	case us != 0:
		s += fmt.Sprintf(", %d, %d", t.Second(), us)
	case t.Second() != 0:
		s += fmt.Sprintf(", %d", t.Second())
	}
	return s + ")"
}

// FloatRepr renders a float64 like Python's repr(): the shortest digits
// that round-trip, positional when the decimal exponent is in [-4, 16),
// else scientific with an exponent of at least two digits; "nan", "inf",
// "-inf" and "-0.0" as Python writes them.
func FloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	epos := strings.IndexByte(s, 'e')
	mant, expStr := s[:epos], s[epos+1:]
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	decpt := exp + 1
	var out string
	switch {
	case exp < -4 || exp >= 16:
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		e := strconv.Itoa(exp)
		if len(e) < 2 {
			e = "0" + e
		}
		out += "e" + es + e
	case decpt <= 0:
		out = "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		out = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	default:
		out = digits[:decpt] + "." + digits[decpt:]
	}
	return sign + out
}

// writeStrRepr writes repr(str): single quotes unless the text holds a
// single quote and no double quote, backslash escapes for the quote, the
// backslash, \t \n \r, \xNN for other control characters and \x, \u or \U
// escapes for characters Python does not consider printable.
func writeStrRepr(b *strings.Builder, s string) {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
}

// writeBytesRepr writes repr(bytes): b'...' with the quoting rule of str
// and \xNN for every byte outside printable ASCII.
func writeBytesRepr(b *strings.Builder, s []byte) {
	quote := byte('\'')
	if strings.IndexByte(string(s), '\'') >= 0 && strings.IndexByte(string(s), '"') < 0 {
		quote = '"'
	}
	b.WriteString("b")
	b.WriteByte(quote)
	for _, c := range s {
		switch {
		case c == quote || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
}

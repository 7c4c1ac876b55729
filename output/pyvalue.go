package output

import (
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file renders decoded payload values the way Python prints the
// objects Salt's msgpack decoder builds from them: repr(), str(), float
// repr, sorting of dict keys and str.splitlines.

// normalize maps Go values callers may build by hand onto the payload tree
// (int → int64, map[string]any → *payload.Map, ...).
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case uint:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint8:
		return uint64(x)
	case float32:
		return float64(x)
	case map[string]any, []string, map[string]string:
		return payload.FromGo(x)
	case payload.Ext:
		// Salt's decoder hands ext types other than datetime over as
		// their raw bytes.
		return x.Data
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Interface {
		// a named []any (a template's tuple a function returned, as
		// test.arg's args): Salt's outputters print tuples as lists
		l, _ := py.List(v)
		return l
	}
	return v
}

// PyFloatRepr renders a float as Python's repr(float) does (pyfmt.FloatRepr).
func PyFloatRepr(f float64) string { return pyfmt.FloatRepr(f) }

// PyStrRepr renders a string like Python's repr(str) (pyfmt.Repr). The one
// difference kept from pyfmt: a Go string that is not valid UTF-8 (the
// payload decoder never makes one, it turns such str into bytes) has its
// stray bytes written as \xNN here, where pyfmt writes U+FFFD. The valid
// runs between them are still escaped by pyfmt, with the quote of the whole
// string forced by appending the other quote character.
func PyStrRepr(s string) string {
	if utf8.ValidString(s) {
		return pyfmt.Repr(s)
	}
	quote := pyfmt.Repr(strings.ToValidUTF8(s, ""))[0]
	other := "\""
	if quote == '"' {
		other = "'"
	}
	var b strings.Builder
	b.WriteByte(quote)
	for s != "" {
		n := 0
		for n < len(s) {
			r, size := utf8.DecodeRuneInString(s[n:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			n += size
		}
		if n > 0 {
			seg := pyfmt.Repr(s[:n] + other)
			b.WriteString(seg[1 : len(seg)-2])
		}
		if n < len(s) {
			fmt.Fprintf(&b, "\\x%02x", s[n])
			n++
		}
		s = s[n:]
	}
	b.WriteByte(quote)
	return b.String()
}

// PyBytesRepr renders bytes like Python's repr(bytes): b'...' (pyfmt.Repr).
func PyBytesRepr(p []byte) string { return pyfmt.Repr(p) }

// PyRepr renders a payload value like Python's repr() of the object Salt
// decodes it to.
func PyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, normalize(v), 0)
	return b.String()
}

const maxReprDepth = 10000

func writeRepr(b *strings.Builder, v any, depth int) {
	if depth > maxReprDepth {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case nil, bool, int64, uint64, *big.Int, float64, []byte, time.Time:
		b.WriteString(pyfmt.Repr(x))
	case string:
		b.WriteString(PyStrRepr(x))
	case payload.Ext:
		fmt.Fprintf(b, "ExtType(code=%d, data=%s)", x.Type, PyBytesRepr(x.Data))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, normalize(e), depth+1)
		}
		b.WriteByte(']')
	case *payload.Map:
		b.WriteByte('{')
		if x != nil {
			for i, it := range x.Items() {
				if i > 0 {
					b.WriteString(", ")
				}
				writeRepr(b, normalize(it.Key), depth+1)
				b.WriteString(": ")
				writeRepr(b, normalize(it.Value), depth+1)
			}
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%v", x)
	}
}

// PyStr renders a value like Python's str(): strings verbatim, everything
// else as repr (datetimes in isoformat(' ')).
func PyStr(v any) string {
	switch x := normalize(v).(type) {
	case string:
		return x
	case time.Time:
		return pyfmt.Str(x)
	default:
		return PyRepr(x)
	}
}

// pyClass is the comparison family of a value under Python's "<".
type pyClass int

const (
	classNum pyClass = iota
	classStr
	classBytes
	classNone
	classTime
	classList
	classOther
)

func classOf(v any) pyClass {
	switch v.(type) {
	case bool, int64, uint64, float64, *big.Int:
		return classNum
	case string:
		return classStr
	case []byte:
		return classBytes
	case nil:
		return classNone
	case time.Time:
		return classTime
	case []any:
		return classList
	}
	return classOther
}

// numLess compares two Python numbers.
func numLess(a, b any) bool {
	ai, aInt := asBig(a)
	bi, bInt := asBig(b)
	if aInt && bInt {
		return ai.Cmp(bi) < 0
	}
	return asFloat(a) < asFloat(b)
}

func asBig(v any) (*big.Int, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewInt(1), true
		}
		return big.NewInt(0), true
	case int64:
		return big.NewInt(x), true
	case uint64:
		return new(big.Int).SetUint64(x), true
	case *big.Int:
		return x, true
	}
	return nil, false
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case float64:
		return x
	}
	return 0
}

// pyLess is Python's a < b for two values of the same class; ok is false
// when Python would raise TypeError.
func pyLess(a, b any) (less, ok bool) {
	ca, cb := classOf(a), classOf(b)
	if ca != cb {
		return false, false
	}
	switch ca {
	case classNum:
		return numLess(a, b), true
	case classStr:
		return a.(string) < b.(string), true
	case classBytes:
		return string(a.([]byte)) < string(b.([]byte)), true
	case classTime:
		return a.(time.Time).Before(b.(time.Time)), true
	case classList:
		la, lb := a.([]any), b.([]any)
		for i := 0; i < len(la) && i < len(lb); i++ {
			if pyEqual(la[i], lb[i]) {
				continue
			}
			return pyLess(normalize(la[i]), normalize(lb[i]))
		}
		return len(la) < len(lb), true
	}
	return false, false
}

// pyEqual is Python's == (py.Equal) on values mapped onto the payload tree.
func pyEqual(a, b any) bool { return py.Equal(normalize(a), normalize(b)) }

// sortedItems returns a map's entries sorted by key as Python's sorted()
// would, or ok=false when Python's comparison raises TypeError (mixed key
// types, or two keys of a type without ordering).
func sortedItems(m *payload.Map) ([]payload.Item, bool) {
	if m == nil {
		return nil, true
	}
	items := append([]payload.Item(nil), m.Items()...)
	if len(items) < 2 {
		return items, true
	}
	c := classOf(normalize(items[0].Key))
	for _, it := range items[1:] {
		if classOf(normalize(it.Key)) != c {
			return nil, false
		}
	}
	if c == classNone || c == classOther {
		return nil, false
	}
	failed := false
	sort.SliceStable(items, func(i, j int) bool {
		l, ok := pyLess(normalize(items[i].Key), normalize(items[j].Key))
		if !ok {
			failed = true
		}
		return l
	})
	if failed {
		return nil, false
	}
	return items, true
}

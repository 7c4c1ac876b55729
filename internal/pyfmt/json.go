package pyfmt

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/wire/payload"
)

// JSONString quotes s as Python's json encoder writes a str: `"`, `\` and
// the control characters escaped (\n \r \t \b \f, else \u00XX), everything
// else as is, or, with ascii (ensure_ascii=True), every character past
// U+007E as \uXXXX (a UTF-16 surrogate pair above U+FFFF). A byte of s
// that is not part of valid UTF-8 is copied as is without ascii and
// written \ufffd with it.
func JSONString(s string, ascii bool) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 && !ascii {
			b.WriteByte(s[i])
			i++
			continue
		}
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(&b, `\u%04x`, r)
			case ascii && r > 0x7e:
				if r > 0xffff {
					r -= 0x10000
					fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800|(r>>10), 0xdc00|(r&0x3ff))
				} else {
					fmt.Fprintf(&b, `\u%04x`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// NoIndent is JSONOptions.Indent for indent=None.
const NoIndent = -1

// JSONOptions are the arguments of Python's json.dumps (with Salt's
// default ensure_ascii=False).
type JSONOptions struct {
	// Indent is indent=: the spaces per nesting level, each member on a
	// line of its own ("," and ": " separators); NoIndent (any negative
	// value) is indent=None, one line with ", " and ": ".
	Indent int
	// EnsureASCII is ensure_ascii=True (see JSONString).
	EnsureASCII bool
	// SortKeys, when set, is sort_keys=True: it orders each dict's items,
	// and its error is returned as is.
	SortKeys ItemSorter
	// Default is default=: it is called with a value JSON cannot hold and
	// what it returns is written instead (without calling it again). Its
	// error is returned as is. Without it such a value is a *JSONTypeError.
	Default func(v any) (any, error)
	// Normalize, when set, maps every value and key onto the data model
	// before it is written.
	Normalize func(v any) any
	// ReplaceInvalidUTF8 writes each byte of a string that is not part of
	// valid UTF-8 as U+FFFD (Python's strings never hold such bytes; by
	// default they are copied as JSONString does).
	ReplaceInvalidUTF8 bool
	// Compact is separators=(',', ':') with indent=None.
	Compact bool
	// MaxDepth bounds the nesting of lists and dicts; past it JSON returns
	// ErrJSONDepth. Zero is MaxDepth.
	MaxDepth int
}

// ErrJSONDepth is returned by JSON for data nested deeper than allowed.
var ErrJSONDepth = errors.New("pyfmt: value nested too deeply for JSON")

// JSONTypeError is Python's TypeError for a value (or, with Key, a dict
// key) json.dumps cannot write; its text is Python's.
type JSONTypeError struct {
	// Value is the offending value or key (after Normalize).
	Value any
	// Key is set when Value is a dict key.
	Key bool
}

// Error returns Python's message.
func (e *JSONTypeError) Error() string {
	if e.Key {
		return "keys must be str, int, float, bool or None, not " + TypeName(e.Value)
	}
	return "Object of type " + TypeName(e.Value) + " is not JSON serializable"
}

// JSON renders v like Python's json.dumps(v, **o) on the object it stands
// for. The data model is nil, bool, int64, uint64, *big.Int, float64
// (floats as repr, NaN/Infinity/-Infinity), string, []any and
// *payload.Map; every other value goes through o.Default.
func JSON(v any, o JSONOptions) (string, error) {
	if o.MaxDepth == 0 {
		o.MaxDepth = MaxDepth
	}
	enc := &jsonEncoder{o: o}
	if err := enc.value(v, 0, false); err != nil {
		return "", err
	}
	return enc.b.String(), nil
}

type jsonEncoder struct {
	b strings.Builder
	o JSONOptions
}

func (enc *jsonEncoder) value(v any, level int, defaulted bool) error {
	if level > enc.o.MaxDepth {
		return ErrJSONDepth
	}
	if enc.o.Normalize != nil {
		v = enc.o.Normalize(v)
	}
	b := &enc.b
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		b.WriteString(jsonFloat(x))
	case string:
		enc.str(x)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				enc.sep()
			}
			enc.newline(level + 1)
			if err := enc.value(e, level+1, false); err != nil {
				return err
			}
		}
		enc.newline(level)
		b.WriteByte(']')
	case *payload.Map:
		return enc.dict(x, level)
	default:
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Interface {
			// a named []any is a tuple: json writes it as an array
			l := make([]any, rv.Len())
			for i := range l {
				l[i] = rv.Index(i).Interface()
			}
			return enc.value(l, level, defaulted)
		}
		if enc.o.Default == nil || defaulted {
			return &JSONTypeError{Value: x}
		}
		d, err := enc.o.Default(x)
		if err != nil {
			return err
		}
		return enc.value(d, level, true)
	}
	return nil
}

func (enc *jsonEncoder) dict(m *payload.Map, level int) error {
	if m.Len() == 0 {
		enc.b.WriteString("{}")
		return nil
	}
	items := m.Items()
	if enc.o.SortKeys != nil {
		var err error
		if items, err = enc.o.SortKeys(m); err != nil {
			return err
		}
	}
	enc.b.WriteByte('{')
	for i, it := range items {
		if i > 0 {
			enc.sep()
		}
		enc.newline(level + 1)
		if err := enc.key(it.Key); err != nil {
			return err
		}
		if enc.o.Compact {
			enc.b.WriteByte(':')
		} else {
			enc.b.WriteString(": ")
		}
		if err := enc.value(it.Value, level+1, false); err != nil {
			return err
		}
	}
	enc.newline(level)
	enc.b.WriteByte('}')
	return nil
}

// key writes a dict key as json converts it to a string.
func (enc *jsonEncoder) key(k any) error {
	if enc.o.Normalize != nil {
		k = enc.o.Normalize(k)
	}
	switch x := k.(type) {
	case string:
		enc.str(x)
	case nil:
		enc.b.WriteString(`"null"`)
	case bool:
		if x {
			enc.b.WriteString(`"true"`)
		} else {
			enc.b.WriteString(`"false"`)
		}
	case int64:
		enc.b.WriteString(`"` + strconv.FormatInt(x, 10) + `"`)
	case uint64:
		enc.b.WriteString(`"` + strconv.FormatUint(x, 10) + `"`)
	case *big.Int:
		enc.b.WriteString(`"` + x.String() + `"`)
	case float64:
		enc.b.WriteString(`"` + jsonFloat(x) + `"`)
	default:
		return &JSONTypeError{Value: k, Key: true}
	}
	return nil
}

func (enc *jsonEncoder) str(s string) {
	if enc.o.ReplaceInvalidUTF8 && !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	enc.b.WriteString(JSONString(s, enc.o.EnsureASCII))
}

func (enc *jsonEncoder) sep() {
	if enc.o.Indent < 0 && !enc.o.Compact {
		enc.b.WriteString(", ")
	} else {
		enc.b.WriteByte(',')
	}
}

func (enc *jsonEncoder) newline(level int) {
	if enc.o.Indent >= 0 {
		enc.b.WriteByte('\n')
		enc.b.WriteString(strings.Repeat(" ", enc.o.Indent*level))
	}
}

// jsonFloat is a float as json writes it.
func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return FloatRepr(f)
}

package output

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// ErrJSONKey is returned by PyJSON for a dict key Python's json module
// refuses (bytes, lists, ...) or keys it cannot sort (sort_keys=True on mixed
// types): Python raises TypeError there.
var ErrJSONKey = errors.New("output: key not serializable as JSON")

// JSONOptions are the arguments of Python's json.dumps Salt passes.
type JSONOptions struct {
	// Indent is nil for indent=None (one line, ", " and ": " separators).
	Indent *int
	// SortKeys is sort_keys=True.
	SortKeys bool
	// ReprDefault is default=repr: values JSON cannot hold (bytes that are
	// not UTF-8, datetimes, ext types) become their repr string. Without it
	// such values are an error, as in Python.
	ReprDefault bool
	// EnsureASCII escapes non-ASCII characters as \uXXXX.
	EnsureASCII bool
}

// PyJSON renders v like Python's json.dumps with the given options
// (salt.utils.json.dumps defaults to ensure_ascii=False).
func PyJSON(v any, o JSONOptions) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, normalize(v), o, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// jsonFloat is Python's json float rendering.
func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return PyFloatRepr(f)
}

// jsonString quotes s like Python's json encoder (pyfmt.JSONString,
// ensure_ascii=False unless ascii is set). Kept from before pyfmt: a Go
// string that is not valid UTF-8 (the payload decoder never makes one) has
// each stray byte written as U+FFFD, where pyfmt copies it as is.
func jsonString(s string, ascii bool) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	return pyfmt.JSONString(s, ascii)
}

func jsonKey(k any) (string, error) {
	switch x := k.(type) {
	case string:
		return x, nil
	case nil:
		return "null", nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case *big.Int:
		return x.String(), nil
	case float64:
		return jsonFloat(x), nil
	}
	return "", fmt.Errorf("%w: keys must be str, int, float, bool or None, not %s", ErrJSONKey, pyTypeName(k))
}

func writeJSON(b *strings.Builder, v any, o JSONOptions, level int) error {
	if level > maxReprDepth {
		return fmt.Errorf("%w: nesting too deep", ErrJSONKey)
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64, uint64, *big.Int:
		b.WriteString(PyRepr(x))
	case float64:
		b.WriteString(jsonFloat(x))
	case string:
		b.WriteString(jsonString(x, o.EnsureASCII))
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(itemSep(o))
			}
			newline(b, o, level+1)
			if err := writeJSON(b, normalize(e), o, level+1); err != nil {
				return err
			}
		}
		newline(b, o, level)
		b.WriteByte(']')
	case *payload.Map:
		if x == nil || x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		items := x.Items()
		if o.SortKeys {
			var ok bool
			if items, ok = sortedItems(x); !ok {
				return fmt.Errorf("%w: keys cannot be sorted", ErrJSONKey)
			}
		}
		b.WriteByte('{')
		for i, it := range items {
			if i > 0 {
				b.WriteString(itemSep(o))
			}
			newline(b, o, level+1)
			k, err := jsonKey(normalize(it.Key))
			if err != nil {
				return err
			}
			b.WriteString(jsonString(k, o.EnsureASCII))
			b.WriteString(": ")
			if err := writeJSON(b, normalize(it.Value), o, level+1); err != nil {
				return err
			}
		}
		newline(b, o, level)
		b.WriteByte('}')
	default:
		return jsonDefault(b, x, o)
	}
	return nil
}

func jsonDefault(b *strings.Builder, v any, o JSONOptions) error {
	if !o.ReprDefault {
		return fmt.Errorf("%w: Object of type %s is not JSON serializable", ErrJSONKey, pyTypeName(v))
	}
	b.WriteString(jsonString(PyRepr(v), o.EnsureASCII))
	return nil
}

func itemSep(o JSONOptions) string {
	if o.Indent == nil {
		return ", "
	}
	return ","
}

func newline(b *strings.Builder, o JSONOptions, level int) {
	if o.Indent == nil {
		return
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat(" ", *o.Indent*level))
}

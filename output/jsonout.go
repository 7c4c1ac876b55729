package output

import (
	"errors"
	"fmt"

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
// (salt.utils.json.dumps defaults to ensure_ascii=False). A Go string that
// is not valid UTF-8 (the payload decoder never makes one) has each stray
// byte written as U+FFFD.
func PyJSON(v any, o JSONOptions) (string, error) {
	po := pyfmt.JSONOptions{
		Indent:             pyfmt.NoIndent,
		EnsureASCII:        o.EnsureASCII,
		Normalize:          normalize,
		ReplaceInvalidUTF8: true,
		MaxDepth:           maxReprDepth,
		Default: func(v any) (any, error) {
			if !o.ReprDefault {
				return nil, fmt.Errorf("%w: Object of type %s is not JSON serializable", ErrJSONKey, pyTypeName(v))
			}
			return PyRepr(v), nil
		},
	}
	if o.Indent != nil {
		po.Indent = *o.Indent
	}
	if o.SortKeys {
		po.SortKeys = sortKeys
	}
	s, err := pyfmt.JSON(v, po)
	var te *pyfmt.JSONTypeError
	switch {
	case errors.Is(err, pyfmt.ErrJSONDepth):
		return "", fmt.Errorf("%w: nesting too deep", ErrJSONKey)
	case errors.As(err, &te) && te.Key:
		return "", fmt.Errorf("%w: keys must be str, int, float, bool or None, not %s", ErrJSONKey, pyTypeName(te.Value))
	}
	return s, err
}

// sortKeys is sorted(d.items()) for the json and yaml writers.
func sortKeys(m *payload.Map) ([]payload.Item, error) {
	items, ok := sortedItems(m)
	if !ok {
		return nil, fmt.Errorf("%w: keys cannot be sorted", ErrJSONKey)
	}
	return items, nil
}

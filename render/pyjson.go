package render

import (
	"errors"
	"fmt"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// JSONOptions are the json.dumps arguments Salt's json/tojson filters use.
type JSONOptions struct {
	// SortKeys sorts object keys (sort_keys).
	SortKeys bool
	// Indent is the indent width; negative means None (one line with
	// ", " and ": " separators).
	Indent int
	// ASCII escapes non-ASCII characters (ensure_ascii).
	ASCII bool
}

// PyJSON serialises payload data exactly like Python's json.dumps with
// opts (float repr, NaN/Infinity, separators, key conversion).
func PyJSON(v any, opts JSONOptions) (string, error) {
	o := pyfmt.JSONOptions{Indent: opts.Indent, EnsureASCII: opts.ASCII, MaxDepth: maxConvertDepth}
	if opts.SortKeys {
		o.SortKeys = sortItems
	}
	s, err := pyfmt.JSON(v, o)
	if errors.Is(err, pyfmt.ErrJSONDepth) {
		return "", fmt.Errorf("%w: data nested too deeply for JSON", ErrTemplate)
	}
	return s, err
}

// MustJSON is PyJSON on one line, or a description of the error; for
// messages and tests.
func MustJSON(v any) string {
	s, err := PyJSON(v, JSONOptions{Indent: -1})
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return s
}

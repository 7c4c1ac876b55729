package pyfmt

import (
	"reflect"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/wire/payload"
)

// ItemSorter returns a dict's items in the order Python's sorted(d.items())
// gives them, or the TypeError Python raises when the keys do not sort.
// Sorting needs Python's "<", which callers implement for their own value
// models, so the JSON and YAML writers take one of these as an option.
type ItemSorter func(m *payload.Map) ([]payload.Item, error)

// TypeName is Python's type(v).__name__ for the data model: NoneType,
// bool, int (every Go integer type and *big.Int), float, str, bytes,
// datetime, list, dict and ExtType (msgpack's, for payload.Ext); other Go
// values are named by their Go type.
func TypeName(v any) string {
	if _, ok := v.(payload.Ext); ok {
		return "ExtType"
	}
	return py.TypeName(v)
}

// Float returns a Python number (bool, any Go integer or float type) as a
// float64; ok is false for other values, *big.Int included (it need not
// fit).
func Float(v any) (f float64, ok bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	}
	return 0, false
}

// Equal is Python's == (py.Equal, where it is written and tested); kept
// here for the callers that still reach it through pyfmt.
func Equal(a, b any) bool { return py.Equal(a, b) }

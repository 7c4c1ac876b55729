package pyfmt

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"time"

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
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, *big.Int:
		return "int"
	case float32, float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case time.Time:
		return "datetime"
	case payload.Ext:
		return "ExtType"
	}
	if isDict(v) {
		return "dict"
	}
	if _, ok := List(v); ok {
		return "list"
	}
	return fmt.Sprintf("%T", v)
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

// Equal is Python's == on the data model: numbers by exact value across
// bool, int and float (True == 1 == 1.0, a NaN equals nothing), str, bytes
// and None by value (a str never equals bytes), datetimes by instant, lists
// element by element, dicts by their keys (matched with Equal) and values.
// Other values are equal when reflect.DeepEqual says so. Past MaxDepth
// levels of nesting values are taken as unequal.
func Equal(a, b any) bool { return equal(a, b, 0) }

func equal(a, b any, depth int) bool {
	if depth > MaxDepth {
		return false
	}
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return x == y
		}
	}
	ia, fa, ka := exactNumber(a)
	ib, fb, kb := exactNumber(b)
	if ka != notNumber || kb != notNumber {
		switch {
		case ka == notNumber || kb == notNumber:
			return false
		case ka == isFloat && kb == isFloat:
			return fa == fb
		case ka == isInt && kb == isInt:
			return ia.Cmp(ib) == 0
		case ka == isFloat:
			return floatEqualsInt(fa, ib)
		default:
			return floatEqualsInt(fb, ia)
		}
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	}
	if la, ok := List(a); ok {
		lb, ok := List(b)
		if !ok || len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !equal(la[i], lb[i], depth+1) {
				return false
			}
		}
		return true
	}
	if da, ok := dictItems(a); ok {
		db, ok := dictItems(b)
		if !ok || len(da) != len(db) {
			return false
		}
		for _, ea := range da {
			found := false
			for _, eb := range db {
				if equal(ea.Key, eb.Key, depth+1) {
					found = equal(ea.Value, eb.Value, depth+1)
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

const (
	notNumber = iota
	isInt
	isFloat
)

// exactNumber returns an integer (bools included) as a *big.Int or a float.
func exactNumber(v any) (*big.Int, float64, int) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewInt(1), 0, isInt
		}
		return new(big.Int), 0, isInt
	case *big.Int:
		if x == nil {
			return nil, 0, notNumber
		}
		return x, 0, isInt
	case float64:
		return nil, x, isFloat
	case float32:
		return nil, float64(x), isFloat
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return big.NewInt(rv.Int()), 0, isInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return new(big.Int).SetUint64(rv.Uint()), 0, isInt
	}
	return nil, 0, notNumber
}

func floatEqualsInt(f float64, i *big.Int) bool {
	if math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) {
		return false
	}
	fi, _ := big.NewFloat(f).Int(nil)
	return fi.Cmp(i) == 0
}

// isDict reports whether v is a dict of the data model.
func isDict(v any) bool {
	if _, ok := v.(Ranger); ok {
		return true
	}
	return reflect.ValueOf(v).Kind() == reflect.Map
}

// dictItems returns the entries of a dict of the data model (an ordered
// mapping in its order, map[string]any by sorted key, another Go map in
// RangeMap order); ok is false for other values.
func dictItems(v any) ([]payload.Item, bool) {
	var items []payload.Item
	add := func(k, val any) bool {
		items = append(items, payload.Item{Key: k, Value: val})
		return true
	}
	switch t := v.(type) {
	case Ranger:
		if !isNilPointer(t) {
			t.Range(add)
		}
		return items, true
	case map[string]any:
		RangeMap(reflect.ValueOf(t), add)
		return items, true
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Map {
		RangeMap(rv, add)
		return items, true
	}
	return nil, false
}

package py

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"time"
)

// MaxDepth is the nesting depth past which Equal takes values as unequal.
const MaxDepth = 512

// Ranger is an ordered mapping (a Python dict), such as *payload.Map: Range
// visits every entry in order until fn returns false.
type Ranger interface {
	Range(fn func(k, v any) bool)
}

// List reports whether v is a Python list in the data model ([]any,
// []string, any other slice or array but bytes) and returns its elements.
func List(v any) ([]any, bool) {
	switch t := v.(type) {
	case []any:
		return t, true
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return nil, false // bytes
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).Interface()
		}
		return out, true
	}
	return nil, false
}

// rangeDict visits a dict's entries (an ordered mapping in its order, a Go
// map by its keys' fmt.Sprint, since Go maps have no order); ok is false
// when v is not a dict.
func rangeDict(v any, fn func(k, v any) bool) bool {
	if r, ok := v.(Ranger); ok {
		if !isNil(r) {
			r.Range(fn)
		}
		return true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map {
		return false
	}
	keys := rv.MapKeys()
	sort.SliceStable(keys, func(i, j int) bool {
		return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface())
	})
	for _, k := range keys {
		if !fn(k.Interface(), rv.MapIndex(k).Interface()) {
			break
		}
	}
	return true
}

func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

type item struct{ k, v any }

func dictItems(v any) ([]item, bool) {
	var items []item
	ok := rangeDict(v, func(k, val any) bool {
		items = append(items, item{k, val})
		return true
	})
	return items, ok
}

// Equal is Python's == on the data model: numbers by exact value across
// bool, int and float (True == 1 == 1.0, a NaN equals nothing, 2**64 is
// not 2.0**64+1), str, bytes and None by value (a str never equals bytes),
// datetimes by value (a naive datetime never equals a number or a str),
// lists element by element, dicts by their keys (matched with Equal) and
// values whatever their order. Other values are equal when
// reflect.DeepEqual says so. Past MaxDepth levels of nesting values are
// taken as unequal.
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
				if equal(ea.k, eb.k, depth+1) {
					found = equal(ea.v, eb.v, depth+1)
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

// Iter lists what Python's "for x in v" visits: a list's items, a str's
// characters (code points), a dict's keys in its order, a bytes value's
// ints (0-255); ok is false for what Python cannot iterate (None, numbers,
// datetimes), where Python raises TypeError.
func Iter(v any) (items []any, ok bool) {
	switch x := v.(type) {
	case string:
		out := make([]any, 0, len(x))
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, true
	case []byte:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = int64(c)
		}
		return out, true
	}
	if l, ok := List(v); ok {
		return l, true
	}
	var keys []any
	if rangeDict(v, func(k, _ any) bool {
		keys = append(keys, k)
		return true
	}) {
		if keys == nil {
			keys = []any{}
		}
		return keys, true
	}
	return nil, false
}

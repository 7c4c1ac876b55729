package driver

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gsalt/gsalt/wire/payload"
)

// ToPayload converts a driver result (the types of this package, maps and
// slices of them, or plain Go values) to gsalt payload values, the shapes
// Salt's net.* functions return: structs become *payload.Map with NAPALM's
// keys (the json tags) in declaration order, fields tagged omitzero being
// left out when zero; maps become *payload.Map sorted naturally by key
// (string keys "Ethernet2" < "Ethernet10", int keys numerically, int keys
// kept as int64); slices become []any (never nil); integers become int64,
// floats float64.
func ToPayload(v any) any {
	return toPayload(reflect.ValueOf(v))
}

func toPayload(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return toPayload(v.Elem())
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int64(v.Uint()) //nolint:gosec // device counters fit in int64
	case reflect.Float32, reflect.Float64:
		return v.Float()
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return string(v.Bytes())
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = toPayload(v.Index(i))
		}
		return out
	case reflect.Map:
		return mapToPayload(v)
	case reflect.Struct:
		return structToPayload(v)
	}
	return fmt.Sprint(v.Interface())
}

func structToPayload(v reflect.Value) *payload.Map {
	if e, ok := v.Interface().(Environment); ok && e.CPUByName != nil {
		byName := e.CPUByName
		e.CPU, e.CPUByName = nil, nil
		m := structToPayload(reflect.ValueOf(e))
		m.Set("cpu", ToPayload(byName))
		return m
	}
	m := payload.NewMap()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			// An embedded struct's fields are the outer struct's, as in
			// encoding/json; a nil embedded pointer adds none.
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			if fv.Kind() == reflect.Struct {
				inner := structToPayload(fv)
				for _, k := range inner.Keys() {
					val, _ := inner.Get(k)
					m.Set(k, val)
				}
				continue
			}
		}
		if (strings.Contains(opts, "omitzero") || strings.Contains(opts, "omitempty")) && fv.IsZero() {
			continue
		}
		m.Set(name, toPayload(fv))
	}
	return m
}

func mapToPayload(v reflect.Value) *payload.Map {
	keys := v.MapKeys()
	switch v.Type().Key().Kind() {
	case reflect.String:
		slices.SortFunc(keys, func(a, b reflect.Value) int {
			x, y := a.String(), b.String()
			switch {
			case naturalLess(x, y):
				return -1
			case naturalLess(y, x):
				return 1
			}
			return strings.Compare(x, y)
		})
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.Int(), b.Int()) })
	default:
		slices.SortFunc(keys, func(a, b reflect.Value) int {
			return strings.Compare(fmt.Sprint(a.Interface()), fmt.Sprint(b.Interface()))
		})
	}
	m := payload.NewMap()
	for _, k := range keys {
		m.SetKey(toPayload(k), toPayload(v.MapIndex(k)))
	}
	return m
}

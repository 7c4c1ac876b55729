package beacons

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// ListToDict is salt.utils.beacons.list_to_dict: the maps of a list
// configuration merged in order (later keys win). A map configuration (the
// old dict form) is returned as a copy; anything else gives an empty map.
// Items that are not maps are skipped.
func ListToDict(config any) *payload.Map {
	out := &payload.Map{}
	switch c := config.(type) {
	case []any:
		for _, it := range c {
			if m, ok := it.(*payload.Map); ok {
				for _, kv := range m.Items() {
					out.SetKey(kv.Key, kv.Value)
				}
			}
		}
	case *payload.Map:
		return c.Clone()
	}
	return out
}

// Normalize converts configuration values to the payload data model: Go
// maps (map[string]any, map[any]any) become *payload.Map (sorted keys),
// slices []any, ints int64. Values already in the model are deep-copied.
func Normalize(v any) any {
	switch x := v.(type) {
	case *payload.Map:
		out := &payload.Map{}
		for _, it := range x.Items() {
			out.SetKey(it.Key, Normalize(it.Value))
		}
		return out
	case map[string]any:
		m := payload.FromGo(x).(*payload.Map)
		return Normalize(m)
	case map[any]any:
		conv := make(map[string]any, len(x))
		for k, val := range x {
			conv[payload.KeyString(k)] = val
		}
		return Normalize(conv)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = Normalize(x[i])
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i := range x {
			out[i] = x[i]
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = Normalize(x[i])
		}
		return out
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		return append([]byte(nil), x...)
	}
	return v
}

// configGet is current_beacon_config.get(key, False) on the dict view.
func configGet(cur *payload.Map, key string) any {
	if cur == nil {
		return false
	}
	v, ok := cur.Get(key)
	if !ok {
		return false
	}
	return v
}

// trimConfig is Beacon._trim_config: it removes key from a beacon
// configuration (the first list item holding it, or the dict key).
func trimConfig(cfg any, key string) any {
	switch c := cfg.(type) {
	case []any:
		if i := itemIndex(c, key); i >= 0 {
			out := make([]any, 0, len(c)-1)
			out = append(out, c[:i]...)
			return append(out, c[i+1:]...)
		}
	case *payload.Map:
		c = c.Clone()
		c.Delete(key)
		return c
	}
	return cfg
}

// itemIndex is Beacon._get_index: the first list item containing label
// (a map key, or a substring of a string item, as Python's "in"), or -1.
func itemIndex(list []any, label string) int {
	for i, it := range list {
		switch x := it.(type) {
		case *payload.Map:
			if x.Has(label) {
				return i
			}
		case string:
			if strings.Contains(x, label) {
				return i
			}
		case []any:
			for _, e := range x {
				if s, ok := e.(string); ok && s == label {
					return i
				}
			}
		}
	}
	return -1
}

// number reads a numeric configuration value the way Python compares one
// (ints, floats, bools); strings holding a number are accepted too.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return pyfmt.Float(v)
}

// Number reads a numeric configuration value (int, float, bool, or a
// string holding a number), for beacon modules.
func Number(v any) (float64, bool) { return number(v) }

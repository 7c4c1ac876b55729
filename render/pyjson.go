package render

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
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
	var b strings.Builder
	if err := writePyJSON(&b, v, opts, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writePyJSON(b *strings.Builder, v any, o JSONOptions, level int) error {
	if level > maxConvertDepth {
		return fmt.Errorf("%w: data nested too deeply for JSON", ErrTemplate)
	}
	itemSep, nl := ", ", ""
	if o.Indent >= 0 {
		itemSep = ","
		nl = "\n"
	}
	indent := func(l int) {
		if o.Indent >= 0 {
			b.WriteString(nl)
			b.WriteString(strings.Repeat(" ", o.Indent*l))
		}
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
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case *big.Int:
		b.WriteString(x.String())
	case float64:
		b.WriteString(jsonFloat(x))
	case string:
		b.WriteString(pyfmt.JSONString(x, o.ASCII))
	case time.Time:
		return fmt.Errorf("Object of type datetime is not JSON serializable")
	case []byte:
		return fmt.Errorf("Object of type bytes is not JSON serializable")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(itemSep)
			}
			indent(level + 1)
			if err := writePyJSON(b, e, o, level+1); err != nil {
				return err
			}
		}
		indent(level)
		b.WriteByte(']')
	case *payload.Map:
		if x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		type kv struct {
			orig any
			k    string
			v    any
		}
		items := make([]kv, 0, x.Len())
		for _, it := range x.Items() {
			k, err := jsonKey(it.Key)
			if err != nil {
				return err
			}
			items = append(items, kv{it.Key, k, it.Value})
		}
		if o.SortKeys {
			// Python sorts the original keys (80 before 443), then converts
			var cmpErr error
			sort.SliceStable(items, func(i, j int) bool {
				c, err := pyCompare(items[i].orig, items[j].orig)
				if err != nil && cmpErr == nil {
					cmpErr = err
				}
				return c < 0
			})
			if cmpErr != nil {
				return cmpErr
			}
		}
		b.WriteByte('{')
		for i, it := range items {
			if i > 0 {
				b.WriteString(itemSep)
			}
			indent(level + 1)
			b.WriteString(pyfmt.JSONString(it.k, o.ASCII))
			b.WriteString(": ")
			if err := writePyJSON(b, it.v, o, level+1); err != nil {
				return err
			}
		}
		indent(level)
		b.WriteByte('}')
	default:
		return fmt.Errorf("Object of type %s is not JSON serializable", pyTypeName(v))
	}
	return nil
}

func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return pyfmt.FloatRepr(f)
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
	case float64:
		return jsonFloat(x), nil
	}
	return "", fmt.Errorf("keys must be str, int, float, bool or None, not %s", pyTypeName(k))
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

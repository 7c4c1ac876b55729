// Package golden reads the beacon goldens (JSON written by
// beacons/testdata/gen_goldens.py from real Salt) into the payload data
// model, keeping key order and the int/float distinction, and renders
// values the way Python's json.dumps does so that results compare as text.
package golden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// Load reads a JSON file as payload values.
func Load(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// Decode parses JSON into *payload.Map (ordered), []any, int64 (numbers
// without a fraction or exponent), float64, string, bool and nil.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("golden: trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := &payload.Map{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				m.Set(k, v)
			}
			_, err := dec.Token()
			return m, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		return nil, fmt.Errorf("golden: unexpected %v", t)
	case json.Number:
		s := t.String()
		if !strings.ContainsAny(s, ".eE") {
			return strconv.ParseInt(s, 10, 64)
		}
		return strconv.ParseFloat(s, 64)
	default:
		return t, nil
	}
}

// PyJSON renders v as Python's json.dumps(v) does (", " and ": "
// separators, ensure_ascii, floats as repr). Go maps are sorted by key.
func PyJSON(v any) string {
	var b strings.Builder
	write(&b, v)
	return b.String()
}

func write(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		b.WriteString(pyfmt.JSONString(x, true))
	case []byte:
		b.WriteString(pyfmt.JSONString(string(x), true))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		switch s := pyfmt.FloatRepr(x); s {
		case "nan":
			b.WriteString("NaN")
		case "inf":
			b.WriteString("Infinity")
		case "-inf":
			b.WriteString("-Infinity")
		default:
			b.WriteString(s)
		}
	case *payload.Map:
		b.WriteByte('{')
		for i, it := range x.Items() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyfmt.JSONString(payload.KeyString(it.Key), true))
			b.WriteString(": ")
			write(b, it.Value)
		}
		b.WriteByte('}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := &payload.Map{}
		for _, k := range keys {
			m.Set(k, x[k])
		}
		write(b, m)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			write(b, e)
		}
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "%q", fmt.Sprint(x))
	}
}

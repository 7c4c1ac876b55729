// Package vectors reads the golden vectors recorded from a real Salt 3006
// (testdata/vectors) for gsalt's tests: JSON Lines files whose values use
// the "$bytes"/"$map"/"$datetime"/... convention described in
// testdata/vectors/README.md, converted here into wire/payload values with
// map order preserved.
package vectors

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gsalt/gsalt/wire/payload"
)

// Dir returns the absolute path of testdata/vectors in this repository.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "vectors")
}

// Path joins elements below Dir.
func Path(elem ...string) string { return filepath.Join(append([]string{Dir()}, elem...)...) }

// Record is one JSON Lines record: the raw JSON of each member, plus the
// member order.
type Record struct {
	Fields map[string]json.RawMessage
	Line   int
}

// Str returns a string member ("" when absent or not a string).
func (r Record) Str(name string) string {
	var s string
	if raw, ok := r.Fields[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// Has reports whether the member exists.
func (r Record) Has(name string) bool { _, ok := r.Fields[name]; return ok }

// Value converts a member into a payload value (see Convert).
func (r Record) Value(name string) (any, error) {
	raw, ok := r.Fields[name]
	if !ok {
		return nil, fmt.Errorf("line %d: no member %q", r.Line, name)
	}
	return Convert(raw)
}

// Hex decodes a hex string member.
func (r Record) Hex(name string) []byte {
	b, _ := hex.DecodeString(r.Str(name))
	return b
}

// Unmarshal decodes a member into a Go value with encoding/json.
func (r Record) Unmarshal(name string, v any) error {
	raw, ok := r.Fields[name]
	if !ok {
		return fmt.Errorf("line %d: no member %q", r.Line, name)
	}
	return json.Unmarshal(raw, v)
}

// ReadJSONL reads every record of a JSON Lines file.
func ReadJSONL(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &fields); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, Record{Fields: fields, Line: line})
	}
	return out, sc.Err()
}

// Repr marks a "$repr" value that has no payload equivalent.
type Repr string

// Convert turns JSON in the vectors' convention into payload values:
// objects become *payload.Map in member order, integers int64 (or uint64,
// or *big.Int beyond 64 bits), "$bytes" []byte, "$map" a Map with typed
// keys, "$datetime"/"$date" time.Time, "$constant" ext 79, "$ext" an Ext,
// "$tuple"/"$set" a list, "$float" inf/nan.
func Convert(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := convertNext(dec)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func convertNext(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			var out []any
			for dec.More() {
				v, err := convertNext(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if out == nil {
				out = []any{}
			}
			return out, nil
		case '{':
			m := &payload.Map{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := convertNext(dec)
				if err != nil {
					return nil, err
				}
				m.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return special(m)
		}
	case json.Number:
		return number(t)
	case string, bool, nil:
		return t, nil
	}
	return nil, fmt.Errorf("vectors: unexpected token %v", tok)
}

func number(n json.Number) (any, error) {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("vectors: bad int %q", s)
		}
		switch {
		case b.IsInt64():
			return b.Int64(), nil
		case b.IsUint64():
			return b.Uint64(), nil
		}
		return b, nil
	}
	return n.Float64()
}

func special(m *payload.Map) (any, error) {
	if m.Len() != 1 {
		return m, nil
	}
	it := m.Items()[0]
	key, _ := it.Key.(string)
	if !strings.HasPrefix(key, "$") {
		return m, nil
	}
	switch key {
	case "$bytes":
		return base64.StdEncoding.DecodeString(payload.Text(it.Value))
	case "$float":
		switch payload.Text(it.Value) {
		case "inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		case "nan":
			return math.NaN(), nil
		}
	case "$map":
		out := &payload.Map{}
		pairs, _ := it.Value.([]any)
		for _, p := range pairs {
			kv, _ := p.([]any)
			if len(kv) != 2 {
				return nil, errors.New("vectors: bad $map pair")
			}
			out.SetKey(kv[0], kv[1])
		}
		return out, nil
	case "$tuple", "$set":
		return it.Value, nil
	case "$datetime":
		return parseISO(payload.Text(it.Value))
	case "$date":
		return time.ParseInLocation("2006-01-02", payload.Text(it.Value), time.UTC)
	case "$constant":
		c, _ := it.Value.(*payload.Map)
		name, _ := c.Get("name")
		val, _ := c.Get("value")
		data, err := payload.MarshalBin([]any{name, val})
		if err != nil {
			return nil, err
		}
		return payload.Ext{Type: payload.ExtConstant, Data: data}, nil
	case "$ext":
		c, _ := it.Value.(*payload.Map)
		code, _ := c.Int("code")
		return payload.Ext{Type: int8(code), Data: c.Bytes("data")}, nil
	case "$repr":
		return Repr(payload.Text(it.Value)), nil
	}
	return m, nil
}

// parseISO parses Python's isoformat() output, keeping the wall clock and
// dropping any zone (as strftime does when Salt packs a datetime).
func parseISO(s string) (time.Time, error) {
	if i := strings.LastIndexAny(s, "+-"); i > 10 {
		s = s[:i]
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("vectors: bad datetime %q", s)
}

// Equal compares two payload values deeply and in order; NaN equals NaN.
// It returns a description of the first difference, or "".
func Equal(a, b any) string { return diff("$", a, b) }

func diff(path string, a, b any) string {
	switch x := a.(type) {
	case *payload.Map:
		y, ok := b.(*payload.Map)
		if !ok {
			return fmt.Sprintf("%s: map vs %s", path, payload.TypeName(b))
		}
		if x.Len() != y.Len() {
			return fmt.Sprintf("%s: map len %d vs %d (%v vs %v)", path, x.Len(), y.Len(), x.Keys(), y.Keys())
		}
		for i, it := range x.Items() {
			jt := y.Items()[i]
			if d := diff(path+".key", it.Key, jt.Key); d != "" {
				return d
			}
			if d := diff(path+"."+payload.KeyString(it.Key), it.Value, jt.Value); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok {
			return fmt.Sprintf("%s: list vs %s", path, payload.TypeName(b))
		}
		if len(x) != len(y) {
			return fmt.Sprintf("%s: list len %d vs %d", path, len(x), len(y))
		}
		for i := range x {
			if d := diff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != "" {
				return d
			}
		}
		return ""
	case []byte:
		y, ok := b.([]byte)
		if !ok || !bytes.Equal(x, y) {
			return fmt.Sprintf("%s: bytes %x vs %#v", path, x, b)
		}
		return ""
	case float64:
		y, ok := b.(float64)
		if !ok || !(x == y || (math.IsNaN(x) && math.IsNaN(y))) {
			return fmt.Sprintf("%s: float %v vs %#v", path, x, b)
		}
		return ""
	case time.Time:
		y, ok := b.(time.Time)
		if !ok || !x.Equal(y) {
			return fmt.Sprintf("%s: time %v vs %#v", path, x, b)
		}
		return ""
	case payload.Ext:
		y, ok := b.(payload.Ext)
		if !ok || x.Type != y.Type || !bytes.Equal(x.Data, y.Data) {
			return fmt.Sprintf("%s: ext %v vs %#v", path, x, b)
		}
		return ""
	case *big.Int:
		y, ok := b.(*big.Int)
		if !ok || x.Cmp(y) != 0 {
			return fmt.Sprintf("%s: bigint %v vs %#v", path, x, b)
		}
		return ""
	}
	if a != b {
		return fmt.Sprintf("%s: %#v vs %#v", path, a, b)
	}
	return ""
}

// ReadAll is io.ReadAll on a file below Dir.
func ReadAll(elem ...string) ([]byte, error) {
	f, err := os.Open(Path(elem...))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

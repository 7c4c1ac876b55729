package payload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// Mode selects how strings and bytes are encoded.
type Mode int

const (
	// Wire mirrors salt.payload.dumps (use_bin_type=False): text and bytes
	// both go into the raw/str family as fixstr, str16 or str32; never str8
	// and never bin. This is what Salt sends over ZeroMQ.
	Wire Mode = iota
	// Bin mirrors msgpack with use_bin_type=True, which Salt uses for the
	// event bus, the job cache and message signing: valid UTF-8 strings are
	// str (str8 allowed), []byte and invalid UTF-8 are bin.
	Bin
)

// ExtDatetime is the msgpack ext code Salt uses for datetime values.
const ExtDatetime = 78

// ExtConstant is the msgpack ext code Salt uses for its _Constant values.
const ExtConstant = 79

// datetimeLayout is Python's "%Y%m%dT%H:%M:%S.%f".
const datetimeLayout = "20060102T15:04:05.000000"

// Ext is an extension value other than a datetime.
type Ext struct {
	Type int8
	Data []byte
}

// Marshaler lets a Go type choose its own payload representation.
type Marshaler interface {
	// SaltPayload returns a value built from the types this package encodes.
	SaltPayload() (any, error)
}

// ErrUnsupportedType is returned for Go values that have no msgpack form in
// Salt (functions, channels, complex numbers, ...).
var ErrUnsupportedType = errors.New("payload: unsupported type")

// Marshal encodes v in Wire mode (salt.payload.dumps).
func Marshal(v any) ([]byte, error) { return MarshalMode(v, Wire) }

// MarshalBin encodes v in Bin mode (event bus, cache files, signatures).
func MarshalBin(v any) ([]byte, error) { return MarshalMode(v, Bin) }

// MarshalMode encodes v with the given mode.
func MarshalMode(v any, mode Mode) ([]byte, error) {
	p := encoders.Get().(*pooledEncoder)
	defer p.put()
	p.enc.mode = mode
	if err := p.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(p.buf.Bytes()), nil
}

// AppendEncode appends the encoding of v in mode to dst and returns the
// extended slice (a new array when dst's capacity is short), with a
// pooled encoder: for a caller that builds a frame around the value.
func AppendEncode(dst []byte, v any, mode Mode) ([]byte, error) {
	p := encoders.Get().(*pooledEncoder)
	defer p.put()
	p.buf = *bytes.NewBuffer(dst)
	defer func() { p.buf = bytes.Buffer{} }() // dst is the caller's
	p.enc.mode = mode
	if err := p.enc.Encode(v); err != nil {
		return nil, err
	}
	return p.buf.Bytes(), nil
}

// AppendEncodeMapWith appends, like AppendEncode, the encoding of m with
// one more entry, key and val, after its own: the bytes of m.Clone() with
// key Set, for a key m does not have (it is the caller's to check), without
// the copy (a minion adds the nonce to every request load this way).
func AppendEncodeMapWith(dst []byte, m *Map, key string, val any, mode Mode) ([]byte, error) {
	p := encoders.Get().(*pooledEncoder)
	defer p.put()
	p.buf = *bytes.NewBuffer(dst)
	defer func() { p.buf = bytes.Buffer{} }() // dst is the caller's
	p.enc.mode = mode
	if err := p.enc.encodeMapWith(m, key, val); err != nil {
		return nil, err
	}
	return p.buf.Bytes(), nil
}

// AppendRawHeader appends the header of a raw string of n bytes in Wire
// mode (fixstr, str16 or str32; never str8 or bin, as salt.payload.dumps).
func AppendRawHeader(dst []byte, n int) ([]byte, error) {
	switch {
	case n < 32:
		return append(dst, 0xa0|byte(n)), nil
	case n <= math.MaxUint16:
		return append(dst, 0xda, byte(n>>8), byte(n)), nil
	case uint64(n) <= math.MaxUint32:
		return append(dst, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n)), nil
	}
	return nil, fmt.Errorf("%w: string of %d bytes", ErrUnsupportedType, n)
}

// pooledEncoder is an Encoder writing to its own buffer, reused by
// MarshalMode: a fresh encoder and a buffer grown from nothing for every
// value were a large share of the allocations of a master taking returns.
type pooledEncoder struct {
	buf bytes.Buffer
	enc *Encoder
}

// maxPooledBuffer is the largest buffer kept in the pool.
const maxPooledBuffer = 64 << 10

var encoders = sync.Pool{New: func() any {
	p := &pooledEncoder{}
	p.enc = NewEncoder(&p.buf, Wire)
	return p
}}

func (p *pooledEncoder) put() {
	if p.buf.Cap() > maxPooledBuffer {
		return
	}
	p.buf.Reset()
	encoders.Put(p)
}

// encodeMapWith encodes m followed by the entry key, val as one map (see
// AppendEncodeMapWith).
func (enc *Encoder) encodeMapWith(m *Map, key string, val any) error {
	var items []Item
	if m != nil {
		items = m.items
	}
	if err := enc.e.EncodeMapLen(len(items) + 1); err != nil {
		return err
	}
	for _, it := range items {
		if err := enc.encode(it.Key, 1); err != nil {
			return err
		}
		if err := enc.encode(it.Value, 1); err != nil {
			return err
		}
	}
	if err := enc.encode(key, 1); err != nil {
		return err
	}
	return enc.encode(val, 1)
}

// Encoder writes payload values to a stream.
type Encoder struct {
	e    *msgpack.Encoder
	w    io.Writer
	mode Mode
	hdr  [5]byte
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer, mode Mode) *Encoder {
	e := msgpack.NewEncoder(w)
	e.UseCompactInts(true)
	return &Encoder{e: e, w: e.Writer(), mode: mode}
}

// Encode writes one value.
func (enc *Encoder) Encode(v any) error { return enc.encode(v, 0) }

const maxEncodeDepth = 512

func (enc *Encoder) encode(v any, depth int) error {
	if depth > maxEncodeDepth {
		return fmt.Errorf("%w: nesting deeper than %d", ErrUnsupportedType, maxEncodeDepth)
	}
	e := enc.e
	switch x := v.(type) {
	case nil:
		return e.EncodeNil()
	case bool:
		return e.EncodeBool(x)
	case string:
		return enc.encodeString(x, false)
	case []byte:
		return enc.encodeBytes(x)
	case int:
		return e.EncodeInt(int64(x))
	case int8:
		return e.EncodeInt(int64(x))
	case int16:
		return e.EncodeInt(int64(x))
	case int32:
		return e.EncodeInt(int64(x))
	case int64:
		return e.EncodeInt(x)
	case uint:
		return e.EncodeUint(uint64(x))
	case uint8:
		return e.EncodeUint(uint64(x))
	case uint16:
		return e.EncodeUint(uint64(x))
	case uint32:
		return e.EncodeUint(uint64(x))
	case uint64:
		return e.EncodeUint(x)
	case float32:
		return enc.encodeFloat(float64(x))
	case float64:
		return enc.encodeFloat(x)
	case *big.Int:
		return enc.encodeBig(x)
	case time.Time:
		s := x.UTC().Format(datetimeLayout)
		if err := e.EncodeExtHeader(ExtDatetime, len(s)); err != nil {
			return err
		}
		_, err := io.WriteString(enc.w, s)
		return err
	case Ext:
		if err := e.EncodeExtHeader(x.Type, len(x.Data)); err != nil {
			return err
		}
		_, err := enc.w.Write(x.Data)
		return err
	case *Map:
		if x == nil {
			return e.EncodeNil()
		}
		if err := e.EncodeMapLen(len(x.items)); err != nil {
			return err
		}
		for _, it := range x.items {
			if err := enc.encode(it.Key, depth+1); err != nil {
				return err
			}
			if err := enc.encode(it.Value, depth+1); err != nil {
				return err
			}
		}
		return nil
	case Map:
		return enc.encode(&x, depth)
	case []any:
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, it := range x {
			if err := enc.encode(it, depth+1); err != nil {
				return err
			}
		}
		return nil
	case []string:
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, s := range x {
			if err := enc.encodeString(s, false); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if err := e.EncodeMapLen(len(keys)); err != nil {
			return err
		}
		for _, k := range keys {
			if err := enc.encodeString(k, false); err != nil {
				return err
			}
			if err := enc.encode(x[k], depth+1); err != nil {
				return err
			}
		}
		return nil
	case Marshaler:
		pv, err := x.SaltPayload()
		if err != nil {
			return err
		}
		return enc.encode(pv, depth+1)
	}
	return enc.encodeReflect(reflect.ValueOf(v), depth)
}

// pythonNaN is the bit pattern CPython uses for float('nan').
const pythonNaN = 0x7ff8000000000000

// encodeFloat writes a float64, with NaN in CPython's canonical form.
func (enc *Encoder) encodeFloat(f float64) error {
	if math.IsNaN(f) {
		f = math.Float64frombits(pythonNaN)
	}
	return enc.e.EncodeFloat64(f)
}

// encodeBig writes integers that fit 64 bits as ints and larger ones as
// their decimal string, as salt.payload does.
func (enc *Encoder) encodeBig(x *big.Int) error {
	if x.IsInt64() {
		return enc.e.EncodeInt(x.Int64())
	}
	if x.IsUint64() {
		return enc.e.EncodeUint(x.Uint64())
	}
	return enc.encodeString(x.String(), false)
}

func (enc *Encoder) encodeBytes(b []byte) error {
	if enc.mode == Bin {
		return enc.e.EncodeBytes(b)
	}
	if err := enc.rawHeader(len(b)); err != nil {
		return err
	}
	_, err := enc.w.Write(b)
	return err
}

func (enc *Encoder) encodeString(s string, _ bool) error {
	if enc.mode == Bin {
		if !utf8.ValidString(s) {
			return enc.e.EncodeBytes([]byte(s))
		}
		return enc.e.EncodeString(s)
	}
	if err := enc.rawHeader(len(s)); err != nil {
		return err
	}
	_, err := io.WriteString(enc.w, s)
	return err
}

// rawHeader writes an old-spec raw header: fixstr, str16 or str32.
func (enc *Encoder) rawHeader(n int) error {
	h, err := AppendRawHeader(enc.hdr[:0], n)
	if err != nil {
		return err
	}
	_, err = enc.w.Write(h)
	return err
}

// encodeReflect handles typed slices, maps with string keys and structs.
// Struct fields are encoded as an ordered map in declaration order, named
// by the `salt:"name"` tag (or the field name); `salt:"-"` skips a field and
// `salt:"name,omitempty"` drops zero values.
func (enc *Encoder) encodeReflect(rv reflect.Value, depth int) error {
	e := enc.e
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return e.EncodeNil()
		}
		return enc.encode(rv.Elem().Interface(), depth+1)
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return e.EncodeArrayLen(0)
		}
		if err := e.EncodeArrayLen(rv.Len()); err != nil {
			return err
		}
		for i := 0; i < rv.Len(); i++ {
			if err := enc.encode(rv.Index(i).Interface(), depth+1); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("%w: map with %s keys", ErrUnsupportedType, rv.Type().Key())
		}
		keys := rv.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		if err := e.EncodeMapLen(len(keys)); err != nil {
			return err
		}
		for _, k := range keys {
			if err := enc.encodeString(k.String(), false); err != nil {
				return err
			}
			if err := enc.encode(rv.MapIndex(k).Interface(), depth+1); err != nil {
				return err
			}
		}
		return nil
	case reflect.Struct:
		m, err := structToMap(rv)
		if err != nil {
			return err
		}
		return enc.encode(m, depth)
	case reflect.String:
		return enc.encodeString(rv.String(), false)
	case reflect.Bool:
		return e.EncodeBool(rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return e.EncodeInt(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return e.EncodeUint(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return enc.encodeFloat(rv.Float())
	}
	return fmt.Errorf("%w: %s", ErrUnsupportedType, rv.Type())
}

func structToMap(rv reflect.Value) (*Map, error) {
	t := rv.Type()
	m := &Map{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		omitEmpty := false
		if tag, ok := f.Tag.Lookup("salt"); ok {
			parts := strings.Split(tag, ",")
			if parts[0] == "-" {
				continue
			}
			if parts[0] != "" {
				name = parts[0]
			}
			for _, p := range parts[1:] {
				if p == "omitempty" {
					omitEmpty = true
				}
			}
		}
		fv := rv.Field(i)
		if omitEmpty && fv.IsZero() {
			continue
		}
		m.items = append(m.items, Item{Key: name, Value: fv.Interface()})
	}
	return m, nil
}

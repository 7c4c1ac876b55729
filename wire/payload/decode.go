package payload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// Sentinel errors returned by the decoder. Every decoding failure wraps
// ErrMalformed, so callers that only need "bad load" can test for it.
var (
	ErrMalformed    = errors.New("payload: malformed msgpack")
	ErrTrailingData = fmt.Errorf("%w: trailing data after value", ErrMalformed)
	ErrTooDeep      = fmt.Errorf("%w: nesting too deep", ErrMalformed)
	ErrTooLarge     = fmt.Errorf("%w: payload too large", ErrMalformed)
	ErrBadDatetime  = fmt.Errorf("%w: bad ext 78 datetime", ErrMalformed)
	ErrBadKey       = fmt.Errorf("%w: unhashable map key", ErrMalformed)
	ErrNotMap       = errors.New("payload: value is not a map")
)

// Limits bounds what the decoder accepts from the network.
type Limits struct {
	// MaxSize is the largest encoded input accepted (0: no limit beyond
	// the input itself).
	MaxSize int
	// MaxDepth is the deepest nesting of arrays and maps accepted.
	MaxDepth int
}

// DefaultLimits are generous enough for any real Salt payload (pillar and
// file chunks included) while refusing pathological input.
var DefaultLimits = Limits{MaxSize: 100 << 20, MaxDepth: 256}

// Unmarshal decodes exactly one value from data with DefaultLimits, the way
// salt.payload.loads does: every raw or bin string that is valid UTF-8
// becomes a string, the rest stays []byte.
func Unmarshal(data []byte) (any, error) { return UnmarshalLimits(data, DefaultLimits) }

// UnmarshalMap decodes data and requires a map at the top.
func UnmarshalMap(data []byte) (*Map, error) {
	v, err := Unmarshal(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*Map)
	if !ok {
		return nil, fmt.Errorf("%w (got %s)", ErrNotMap, TypeName(v))
	}
	return m, nil
}

// UnmarshalLimits is Unmarshal with explicit limits.
func UnmarshalLimits(data []byte, lim Limits) (any, error) {
	return unmarshal(data, lim, nil)
}

// UnmarshalOwned is UnmarshalLimits for a caller that hands data over:
// data is never written again, so a large string or bin value (at least
// ownedAlias bytes and half of data, a file chunk) shares data's memory
// instead of being copied out of it. Smaller values are copied as usual,
// so a small string never keeps a large input alive.
func UnmarshalOwned(data []byte, lim Limits) (any, error) {
	return unmarshal(data, lim, data)
}

// unmarshal decodes one value filling all of data; owned, when set, is
// data handed over for large values to share.
func unmarshal(data []byte, lim Limits, owned []byte) (any, error) {
	if lim.MaxSize > 0 && len(data) > lim.MaxSize {
		return nil, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(data), lim.MaxSize)
	}
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = DefaultLimits.MaxDepth
	}
	r := bytes.NewReader(data)
	d := &decoder{r: r, d: msgpack.NewDecoder(r), lim: lim, owned: owned}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, ErrTrailingData
	}
	return v, nil
}

// ownedAlias is the smallest value UnmarshalOwned leaves in its input.
const ownedAlias = 64 << 10

// UnmarshalPrefix decodes the first value of data with DefaultLimits and
// returns it with the number of bytes it took; what follows is ignored
// (a file rewritten in place may keep a stale tail after its value).
func UnmarshalPrefix(data []byte) (any, int, error) {
	r := bytes.NewReader(data)
	d := &decoder{r: r, d: msgpack.NewDecoder(r), lim: DefaultLimits}
	if d.lim.MaxSize > 0 && len(data) > d.lim.MaxSize {
		return nil, 0, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(data), d.lim.MaxSize)
	}
	v, err := d.value(0)
	if err != nil {
		return nil, 0, err
	}
	return v, len(data) - r.Len(), nil
}

type decoder struct {
	r   *bytes.Reader
	d   *msgpack.Decoder
	lim Limits
	// owned is the whole input when the caller handed it over
	// (UnmarshalOwned): large raw values are slices of it.
	owned []byte
}

func (d *decoder) fail(err error) error {
	if errors.Is(err, ErrMalformed) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

// need checks that n more bytes (or elements, each at least one byte) can
// still be present, so a forged length never causes a large allocation.
func (d *decoder) need(n int) error {
	if n < 0 || n > d.r.Len() {
		return fmt.Errorf("%w: length %d exceeds remaining %d bytes", ErrMalformed, n, d.r.Len())
	}
	return nil
}

func (d *decoder) value(depth int) (any, error) {
	if depth > d.lim.MaxDepth {
		return nil, ErrTooDeep
	}
	c, err := d.d.PeekCode()
	if err != nil {
		return nil, d.fail(err)
	}
	switch {
	case c <= 0x7f || c >= 0xe0:
		n, err := d.d.DecodeInt64()
		if err != nil {
			return nil, d.fail(err)
		}
		return n, nil
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		return d.mapValue(depth)
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		n, err := d.d.DecodeArrayLen()
		if err != nil {
			return nil, d.fail(err)
		}
		if err := d.need(n); err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := 0; i < n; i++ {
			if out[i], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case c >= 0xa0 && c <= 0xbf, c == 0xd9, c == 0xda, c == 0xdb, c == 0xc4, c == 0xc5, c == 0xc6:
		return d.raw()
	case c == 0xc0:
		if err := d.d.DecodeNil(); err != nil {
			return nil, d.fail(err)
		}
		return nil, nil
	case c == 0xc2 || c == 0xc3:
		b, err := d.d.DecodeBool()
		if err != nil {
			return nil, d.fail(err)
		}
		return b, nil
	case c == 0xca || c == 0xcb:
		f, err := d.d.DecodeFloat64()
		if err != nil {
			return nil, d.fail(err)
		}
		return f, nil
	case c >= 0xcc && c <= 0xcf:
		u, err := d.d.DecodeUint64()
		if err != nil {
			return nil, d.fail(err)
		}
		if u <= math.MaxInt64 {
			return int64(u), nil
		}
		return u, nil
	case c >= 0xd0 && c <= 0xd3:
		n, err := d.d.DecodeInt64()
		if err != nil {
			return nil, d.fail(err)
		}
		return n, nil
	case c >= 0xd4 && c <= 0xd8, c >= 0xc7 && c <= 0xc9:
		return d.ext()
	}
	return nil, fmt.Errorf("%w: reserved code 0x%02x", ErrMalformed, c)
}

func (d *decoder) raw() (any, error) {
	n, err := d.d.DecodeBytesLen()
	if err != nil {
		return nil, d.fail(err)
	}
	if err := d.need(n); err != nil {
		return nil, err
	}
	if n == 0 {
		return "", nil
	}
	var b []byte
	if d.owned != nil && n >= ownedAlias && 2*n >= len(d.owned) {
		// need(n) checked that n bytes remain after the header.
		at := len(d.owned) - d.r.Len()
		b = d.owned[at : at+n : at+n]
		if _, err := d.r.Seek(int64(n), io.SeekCurrent); err != nil {
			return nil, d.fail(err)
		}
	} else {
		b = make([]byte, n)
		if err := d.d.ReadFull(b); err != nil {
			return nil, d.fail(err)
		}
	}
	if utf8.Valid(b) {
		// b is ours alone and never written again: the string shares
		// its memory instead of copying it (a text file chunk is MiBs).
		return unsafe.String(&b[0], n), nil
	}
	return b, nil
}

func (d *decoder) ext() (any, error) {
	typ, n, err := d.d.DecodeExtHeader()
	if err != nil {
		return nil, d.fail(err)
	}
	if err := d.need(n); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if err := d.d.ReadFull(b); err != nil {
		return nil, d.fail(err)
	}
	if typ == ExtDatetime {
		t, err := ParseDatetime(string(b))
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	return Ext{Type: typ, Data: b}, nil
}

// ParseDatetime parses the text of an ext 78 value ("%Y%m%dT%H:%M:%S.%f",
// naive, taken as UTC).
func ParseDatetime(s string) (time.Time, error) {
	dot := strings.IndexByte(s, '.')
	if dot < 0 || len(s)-dot-1 < 1 || len(s)-dot-1 > 6 {
		return time.Time{}, fmt.Errorf("%w: %q", ErrBadDatetime, s)
	}
	t, err := time.ParseInLocation("20060102T15:04:05.999999", s, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q", ErrBadDatetime, s)
	}
	return t, nil
}

func (d *decoder) mapValue(depth int) (any, error) {
	n, err := d.d.DecodeMapLen()
	if err != nil {
		return nil, d.fail(err)
	}
	if err := d.need(2 * n); err != nil {
		return nil, err
	}
	m := &Map{items: make([]Item, 0, n)}
	for i := 0; i < n; i++ {
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		switch k.(type) {
		case []any, *Map:
			return nil, ErrBadKey
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m.SetKey(k, v)
	}
	return m, nil
}

// TypeName names the payload type of a decoded value for error messages.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "bool"
	case int64, uint64, int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case []any:
		return "list"
	case *Map:
		return "dict"
	case time.Time:
		return "datetime"
	case Ext:
		return "ext"
	}
	return fmt.Sprintf("%T", v)
}

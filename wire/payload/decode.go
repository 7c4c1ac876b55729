package payload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
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
	d := getDecoder(data, lim, owned)
	defer d.put()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.r.Len() != 0 {
		return nil, ErrTrailingData
	}
	return v, nil
}

// decoders keeps decoder states (reader, msgpack decoder and its scratch
// buffer) between calls: three allocations per message, several
// messages per request, were a share of a master's allocations per return.
var decoders = sync.Pool{New: func() any {
	d := &decoder{r: bytes.NewReader(nil)}
	d.d = msgpack.NewDecoder(d.r)
	return d
}}

// getDecoder returns a pooled decoder reading data.
func getDecoder(data []byte, lim Limits, owned []byte) *decoder {
	d := decoders.Get().(*decoder)
	d.r.Reset(data)
	d.d.Reset(d.r)
	d.data, d.lim, d.owned = data, lim, owned
	return d
}

// put returns d to the pool; nothing it decoded refers to its state (the
// strings share data or d.slab, which are let go here).
func (d *decoder) put() {
	d.r.Reset(nil)
	d.data, d.owned, d.slab = nil, nil, nil
	decoders.Put(d)
}

// ownedAlias is the smallest value UnmarshalOwned leaves in its input.
const ownedAlias = 64 << 10

// Short strings: up to maxSlabString bytes they are copied into the
// decoder's slab (slabSize bytes at most, or what is left of the input),
// so a small string kept for long (a minion id in a cache) keeps at most
// slabSize bytes alive.
const (
	maxSlabString = 32
	slabSize      = 256
)

// maxInternLen is the longest entry of interned.
const maxInternLen = 16

// interned are the strings of nearly every Salt message (the keys of
// requests, returns, publishes and events, and a few values), boxed once:
// a decoded one costs no allocation. Equal strings are
// indistinguishable, so sharing them changes nothing for the reader.
var interned = func() map[string]any {
	words := []string{
		"cmd", "id", "enc", "aes", "clear", "load", "version", "nonce", "tok", "sig",
		"_return", "_minion_event", "_pillar", "_auth", "_mine", "_mine_get", "_serve_file", "_file_hash",
		"return", "retcode", "success", "jid", "fun", "fun_args", "out", "nested", "user", "root",
		"tgt", "tgt_type", "glob", "list", "compound", "arg", "ret", "kwargs", "__kwarg__", "master_id",
		"metadata", "delimiter", "timeout", "to", "test.ping", "minions", "missing", "_stamp",
		"data", "tag", "events", "pretag", "grains", "saltenv", "pillarenv", "pillar_override", "ver",
		"pub", "publish", "serial", "key", "jids", "pid", "path", "loc", "gzip", "local", "txt",
		"highstate", "result", "comment", "changes", "name", "base",
	}
	m := make(map[string]any, len(words))
	for _, w := range words {
		m[w] = w // TestInterned checks that each fits maxInternLen
	}
	return m
}()

// UnmarshalPrefix decodes the first value of data with DefaultLimits and
// returns it with the number of bytes it took; what follows is ignored
// (a file rewritten in place may keep a stale tail after its value).
func UnmarshalPrefix(data []byte) (any, int, error) {
	if DefaultLimits.MaxSize > 0 && len(data) > DefaultLimits.MaxSize {
		return nil, 0, fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, len(data), DefaultLimits.MaxSize)
	}
	d := getDecoder(data, DefaultLimits, nil)
	defer d.put()
	v, err := d.value(0)
	if err != nil {
		return nil, 0, err
	}
	return v, len(data) - d.r.Len(), nil
}

type decoder struct {
	r   *bytes.Reader
	d   *msgpack.Decoder
	lim Limits
	// data is the whole input; the msgpack decoder reads r without
	// buffering, so the next unread byte is data[len(data)-r.Len()].
	data []byte
	// owned is the whole input when the caller handed it over
	// (UnmarshalOwned): large raw values are slices of it.
	owned []byte
	// slab holds the bytes of the short strings decoded so far (each a
	// slice of it), so they cost one allocation together instead of one
	// each.
	slab []byte
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
	// need(n) checked that n bytes remain after the header.
	at := len(d.data) - d.r.Len()
	src := d.data[at : at+n : at+n]
	if n <= maxInternLen {
		if v, ok := interned[string(src)]; ok {
			// A key or value of nearly every message ("cmd", "id",
			// "return", "test.ping", ...): shared, boxed once.
			if _, err := d.r.Seek(int64(n), io.SeekCurrent); err != nil {
				return nil, d.fail(err)
			}
			return v, nil
		}
	}
	switch {
	case d.owned != nil && n >= ownedAlias && 2*n >= len(d.owned):
		b = src
		if _, err := d.r.Seek(int64(n), io.SeekCurrent); err != nil {
			return nil, d.fail(err)
		}
	case n <= maxSlabString:
		if cap(d.slab)-len(d.slab) < n {
			d.slab = make([]byte, 0, max(n, min(slabSize, d.r.Len())))
		}
		at := len(d.slab)
		d.slab = append(d.slab, src...)
		b = d.slab[at : at+n : at+n]
		if _, err := d.r.Seek(int64(n), io.SeekCurrent); err != nil {
			return nil, d.fail(err)
		}
	default:
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

// Package payload encodes and decodes Salt's msgpack payloads exactly as
// salt.payload does on the ZeroMQ wire (old-spec raw strings only) and as
// Salt writes its event bus and cache files (str/bin split).
//
// Decoded values form a small, typed tree:
//
//	nil, bool, int64, uint64 (only above MaxInt64), float64,
//	string (a raw/bin string that is valid UTF-8),
//	[]byte (a raw/bin string that is not valid UTF-8),
//	[]any, *Map (ordered), time.Time (ext 78), Ext (any other ext type).
//
// That mirrors what Salt's loads() returns after decode_embedded_strs: text is
// whatever decodes as UTF-8, everything else stays bytes.
package payload

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

// Item is one key/value pair of an ordered Map.
type Item struct {
	Key   any
	Value any
}

// Map is an insertion-ordered msgpack map. The zero value is an empty map
// ready to use. Reads never modify a Map, so any number of goroutines may
// read one concurrently; writes need exclusive access. Keys are usually strings, but Python may send ints, nil,
// bools, floats or bytes as keys and they are kept as decoded.
type Map struct {
	items []Item
	// index is built for large maps: string and []byte keys by their
	// text, other keys in other by keyID.
	index map[string]int
	other map[string]int
	// shared is non-zero once Clone handed index and other to a copy:
	// neither map may then be written, the next write copies them first
	// (clones of a large map, e.g. the options of thousands of proxy
	// devices, share one index). Set atomically, as Clone is a read.
	shared uint32
}

const indexThreshold = 16

// NewMap builds a map from alternating keys and values:
// NewMap("cmd", "_auth", "id", "m1"). It panics on an odd number of
// arguments, which is a programming error, never a network one.
func NewMap(kv ...any) *Map {
	if len(kv)%2 != 0 {
		panic("payload.NewMap: odd number of arguments")
	}
	m := &Map{items: make([]Item, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		m.SetKey(kv[i], kv[i+1])
	}
	return m
}

// keyID gives a comparable identity for a key, distinguishing types the way
// Python dict keys are distinguished (1 and 1.0 and True collide in Python;
// gsalt keeps them apart except int/uint which are the same number).
func keyID(k any) string {
	switch v := k.(type) {
	case string:
		return "s" + v
	case []byte:
		return "s" + string(v)
	case int64:
		return "i" + strconv.FormatInt(v, 10)
	case uint64:
		return "i" + strconv.FormatUint(v, 10)
	case int:
		return "i" + strconv.Itoa(v)
	case bool:
		if v {
			return "bT"
		}
		return "bF"
	case nil:
		return "n"
	case float64:
		return "f" + strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return fmt.Sprintf("x%T:%v", k, k)
	}
}

func (m *Map) find(k any) int {
	if m == nil {
		return -1
	}
	if ks, ok := textKey(k); ok {
		return m.findText(ks)
	}
	id := keyID(k)
	if m.index != nil {
		if i, ok := m.other[id]; ok {
			return i
		}
		return -1
	}
	for i := range m.items {
		if _, text := textKey(m.items[i].Key); !text && keyID(m.items[i].Key) == id {
			return i
		}
	}
	return -1
}

// findText is find for a str or bytes key given as its text (without
// boxing it: the lookups of Get, Has and Set allocate nothing).
func (m *Map) findText(ks string) int {
	if m == nil {
		return -1
	}
	if m.index != nil {
		if i, ok := m.index[ks]; ok {
			return i
		}
		return -1
	}
	for i := range m.items {
		switch x := m.items[i].Key.(type) {
		case string:
			if x == ks {
				return i
			}
		case []byte:
			if string(x) == ks {
				return i
			}
		}
	}
	return -1
}

// textKey returns a string or []byte key as a string (Python's str and
// bytes keys compare equal here, as keyID has them).
func textKey(k any) (string, bool) {
	switch v := k.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}

// addIndex records item i in the index.
func (m *Map) addIndex(key any, i int) {
	if atomic.LoadUint32(&m.shared) != 0 {
		m.ownIndex()
	}
	if ks, ok := textKey(key); ok {
		m.index[ks] = i
		return
	}
	if m.other == nil {
		m.other = map[string]int{}
	}
	m.other[keyID(key)] = i
}

// ownIndex gives m its own copies of a shared index.
func (m *Map) ownIndex() {
	idx := make(map[string]int, len(m.index)+1)
	for k, v := range m.index {
		idx[k] = v
	}
	var other map[string]int
	if m.other != nil {
		other = make(map[string]int, len(m.other)+1)
		for k, v := range m.other {
			other[k] = v
		}
	}
	m.index, m.other = idx, other
	atomic.StoreUint32(&m.shared, 0)
}

func (m *Map) buildIndex() {
	m.index = make(map[string]int, len(m.items))
	m.other = nil
	atomic.StoreUint32(&m.shared, 0)
	for i, it := range m.items {
		m.addIndex(it.Key, i)
	}
}

// Len returns the number of entries.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.items)
}

// Items returns the entries in order. The slice must not be modified.
func (m *Map) Items() []Item {
	if m == nil {
		return nil
	}
	return m.items
}

// Keys returns the keys rendered as strings, in order.
func (m *Map) Keys() []string {
	out := make([]string, 0, m.Len())
	for _, it := range m.Items() {
		out = append(out, KeyString(it.Key))
	}
	return out
}

// KeyString renders a key as text the way Python's str() would for the
// common cases (strings as is, numbers in decimal, None/True/False).
func KeyString(k any) string {
	switch v := k.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// Range calls fn for each entry in order until fn returns false.
func (m *Map) Range(fn func(k, v any) bool) {
	for _, it := range m.Items() {
		if !fn(it.Key, it.Value) {
			return
		}
	}
}

// Has reports whether the string key is present.
func (m *Map) Has(key string) bool { return m.findText(key) >= 0 }

// Get returns the value stored under a string key.
func (m *Map) Get(key string) (any, bool) {
	i := m.findText(key)
	if i < 0 {
		return nil, false
	}
	return m.items[i].Value, true
}

// GetKey returns the value stored under any key.
func (m *Map) GetKey(key any) (any, bool) {
	i := m.find(key)
	if i < 0 {
		return nil, false
	}
	return m.items[i].Value, true
}

// Set stores v under a string key, replacing the value in place when the key
// exists (keeping its position) and appending otherwise. It returns m.
func (m *Map) Set(key string, v any) *Map {
	// Kept small enough to inline: a constant key (nearly every caller's)
	// is then boxed statically instead of allocated for each new key.
	return m.setText(key, key, v)
}

// setText is Set with the key also given boxed (boxed holds key).
func (m *Map) setText(key string, boxed, v any) *Map {
	return m.setAt(m.findText(key), boxed, v)
}

// SetKey is Set for any key type.
func (m *Map) SetKey(key, v any) *Map {
	return m.setAt(m.find(key), key, v)
}

// setAt replaces the value of item i, or appends key and v when i < 0.
func (m *Map) setAt(i int, key, v any) *Map {
	if i >= 0 {
		m.items[i].Value = v
		return m
	}
	m.items = append(m.items, Item{Key: key, Value: v})
	switch {
	case m.index != nil:
		m.addIndex(key, len(m.items)-1)
	case len(m.items) > indexThreshold:
		m.buildIndex()
	}
	return m
}

// Delete removes a string key and returns its value.
func (m *Map) Delete(key string) (any, bool) { return m.DeleteKey(key) }

// DeleteKey removes a key of any type and returns its value.
func (m *Map) DeleteKey(key any) (any, bool) {
	i := m.find(key)
	if i < 0 {
		return nil, false
	}
	v := m.items[i].Value
	m.items = append(m.items[:i], m.items[i+1:]...)
	m.index, m.other = nil, nil
	atomic.StoreUint32(&m.shared, 0)
	if len(m.items) > indexThreshold {
		m.buildIndex()
	}
	return v, true
}

// Str returns the value under key as text: strings as they are, []byte
// converted, nil or a missing key as "". Other types are formatted.
func (m *Map) Str(key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	return Text(v)
}

// Text renders a decoded value as a Go string: strings and bytes verbatim,
// nil as "", numbers and bools like Python's str().
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	default:
		return KeyString(x)
	}
}

// Bytes returns the value under key as bytes (strings converted), or nil.
func (m *Map) Bytes(key string) []byte {
	v, _ := m.Get(key)
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return nil
}

// Int returns an integer value (int64, uint64 within range or an integral
// float64) and whether the key held one.
func (m *Map) Int(key string) (int64, bool) {
	v, _ := m.Get(key)
	return AsInt(v)
}

// AsInt converts a decoded number to int64.
func AsInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return int64(x), true
		}
	}
	return 0, false
}

// Bool returns the Python truthiness of the value under key.
func (m *Map) Bool(key string) bool {
	v, _ := m.Get(key)
	return Truthy(v)
}

// Truthy reports Python truthiness of a decoded value.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case int:
		return x != 0
	case uint64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []byte:
		return len(x) != 0
	case []any:
		return len(x) != 0
	case *Map:
		return x.Len() != 0
	}
	return true
}

// Map returns the nested map under key, or nil.
func (m *Map) Map(key string) *Map {
	v, _ := m.Get(key)
	mm, _ := v.(*Map)
	return mm
}

// List returns the array under key, or nil.
func (m *Map) List(key string) []any {
	v, _ := m.Get(key)
	l, _ := v.([]any)
	return l
}

// Grow makes room for n more keys without reallocating (like
// slices.Grow), for a map about to get a known number of them.
func (m *Map) Grow(n int) {
	m.items = slices.Grow(m.items, n)
}

// Clone returns a shallow copy of the map (values are shared). It has
// room for one more key: a copy is usually made to add one (an event's
// _stamp, a request's nonce).
func (m *Map) Clone() *Map {
	if m == nil {
		return nil
	}
	c := &Map{items: make([]Item, len(m.items), len(m.items)+1)}
	copy(c.items, m.items)
	if m.index != nil {
		// Same keys at the same positions: share the index until either
		// map adds a key (Delete builds a new one).
		atomic.StoreUint32(&m.shared, 1)
		c.index, c.other, c.shared = m.index, m.other, 1
	} else if len(c.items) > indexThreshold {
		c.buildIndex()
	}
	return c
}

// DeepClone copies maps and lists recursively; scalars are shared.
func DeepClone(v any) any {
	switch x := v.(type) {
	case *Map:
		if x == nil {
			return x
		}
		c := &Map{items: make([]Item, len(x.items))}
		for i, it := range x.items {
			c.items[i] = Item{Key: it.Key, Value: DeepClone(it.Value)}
		}
		if len(c.items) > indexThreshold {
			c.buildIndex()
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i := range x {
			c[i] = DeepClone(x[i])
		}
		return c
	case []byte:
		return append([]byte(nil), x...)
	}
	return v
}

// FromGo converts plain Go maps (map[string]any, sorted by key) and slices
// into the payload tree, so values built with Go literals can be compared
// and encoded uniformly. Unknown types are returned unchanged.
func FromGo(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := &Map{items: make([]Item, 0, len(keys))}
		for _, k := range keys {
			m.items = append(m.items, Item{Key: k, Value: FromGo(x[k])})
		}
		if len(m.items) > indexThreshold {
			m.buildIndex() // once here, shared by its clones
		}
		return m
	case []any:
		c := make([]any, len(x))
		for i := range x {
			c[i] = FromGo(x[i])
		}
		return c
	case []string:
		c := make([]any, len(x))
		for i := range x {
			c[i] = x[i]
		}
		return c
	case int:
		return int64(x)
	}
	return v
}

// MarshalJSON renders the map as a JSON object in insertion order. Non-string
// keys are rendered with KeyString; []byte values as strings (lossy for
// binary data; use a dedicated view for golden files).
func (m *Map) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, it := range m.Items() {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(KeyString(it.Key))
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		val, err := json.Marshal(jsonView(it.Value))
		if err != nil {
			return nil, fmt.Errorf("payload: key %q: %w", KeyString(it.Key), err)
		}
		b.Write(val)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func jsonView(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = jsonView(x[i])
		}
		return out
	case []byte:
		return string(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	case Ext:
		return string(x.Data)
	}
	return v
}

package target

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
)

// Mapper is the minimal read-only view of an ordered mapping (a Python dict)
// that the matchers need. wire/payload.Map implements it.
//
// Get looks a key up by its string form only (a Python str key). Range visits
// every entry in order, with keys of any decoded type (string, int64, uint64,
// float64, bool, nil, []byte), and stops when fn returns false. A nil
// pointer that implements Mapper is treated as an empty dict.
type Mapper interface {
	Get(key string) (any, bool)
	Range(fn func(k, v any) bool)
}

// dictView is the internal uniform view over every supported dict type.
type dictView interface {
	get(key string) (any, bool)
	rangeKV(fn func(k, v any) bool)
}

type mapperView struct{ m Mapper }

func (d mapperView) get(key string) (any, bool) {
	if d.m == nil {
		return nil, false
	}
	return d.m.Get(key)
}

func (d mapperView) rangeKV(fn func(k, v any) bool) {
	if d.m == nil {
		return
	}
	d.m.Range(fn)
}

type strMapView map[string]any

func (d strMapView) get(key string) (any, bool) { v, ok := d[key]; return v, ok }
func (d strMapView) rangeKV(fn func(k, v any) bool) {
	for _, k := range slices.Sorted(maps.Keys(d)) {
		if !fn(k, d[k]) {
			return
		}
	}
}

type anyMapView map[any]any

func (d anyMapView) get(key string) (any, bool) { v, ok := d[key]; return v, ok }
func (d anyMapView) rangeKV(fn func(k, v any) bool) {
	pyfmt.RangeMap(reflect.ValueOf(map[any]any(d)), fn)
}

type reflectMapView struct{ v reflect.Value }

func (d reflectMapView) get(key string) (any, bool) {
	kt := d.v.Type().Key()
	kv := reflect.ValueOf(key)
	switch {
	case kt.Kind() == reflect.String:
		kv = kv.Convert(kt)
	case kt.Kind() == reflect.Interface && kv.Type().Implements(kt):
		kv = kv.Convert(kt)
	default:
		return nil, false
	}
	r := d.v.MapIndex(kv)
	if !r.IsValid() {
		return nil, false
	}
	return r.Interface(), true
}

func (d reflectMapView) rangeKV(fn func(k, v any) bool) { pyfmt.RangeMap(d.v, fn) }

// asDict reports whether v is a Python dict in our data model.
func asDict(v any) (dictView, bool) {
	switch t := v.(type) {
	case nil:
		return nil, false
	case dictView:
		return t, true
	case Mapper:
		if isNilPointer(t) {
			return mapperView{}, true
		}
		return mapperView{t}, true
	case map[string]any:
		return strMapView(t), true
	case map[any]any:
		return anyMapView(t), true
	case string, []byte, bool, int64, float64, []any, []string:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map {
		return reflectMapView{rv}, true
	}
	return nil, false
}

func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// dictEmpty reports whether a dict has no entries (Python `d == {}`).
func dictEmpty(d dictView) bool {
	empty := true
	d.rangeKV(func(_, _ any) bool { empty = false; return false })
	return empty
}

// dictHasStr reports whether a dict has the Python str key s.
func dictHasStr(d dictView, s string) bool {
	_, ok := d.get(s)
	return ok
}

// dictLookup finds a key by Python equality (1 == 1.0 == True, "a" == "a").
// A key of key's own Go type wins over an equal key of another type, which
// only matters for dicts Python could not hold (both 1 and True as keys).
func dictLookup(d dictView, key any) (any, bool) {
	if s, ok := key.(string); ok {
		return d.get(s)
	}
	var out any
	found := false
	kt := reflect.TypeOf(key)
	d.rangeKV(func(k, v any) bool {
		if !py.Equal(k, key) {
			return true
		}
		if reflect.TypeOf(k) == kt {
			out, found = v, true
			return false // an exact match ends the search
		}
		if !found {
			out, found = v, true
		}
		return true
	})
	return out, found
}

// asList reports whether v is a Python list/tuple in our data model and
// returns its elements.
func asList(v any) ([]any, bool) { return pyfmt.List(v) }

// pyNumber converts numeric scalars (and bool) to a comparable form.
// kind: 0 not a number, 1 integer (in i or u), 2 float.
func pyNumber(v any) (kind int, i int64, u uint64, neg bool, f float64) {
	switch t := v.(type) {
	case bool:
		if t {
			return 1, 1, 1, false, 1
		}
		return 1, 0, 0, false, 0
	case int:
		return intKind(int64(t))
	case int8:
		return intKind(int64(t))
	case int16:
		return intKind(int64(t))
	case int32:
		return intKind(int64(t))
	case int64:
		return intKind(t)
	case uint:
		return 1, 0, uint64(t), false, float64(t)
	case uint8:
		return 1, 0, uint64(t), false, float64(t)
	case uint16:
		return 1, 0, uint64(t), false, float64(t)
	case uint32:
		return 1, 0, uint64(t), false, float64(t)
	case uint64:
		return 1, 0, t, false, float64(t)
	case float32:
		return 2, 0, 0, false, float64(t)
	case float64:
		return 2, 0, 0, false, t
	}
	return 0, 0, 0, false, 0
}

func intKind(i int64) (int, int64, uint64, bool, float64) {
	if i < 0 {
		return 1, i, 0, true, float64(i)
	}
	return 1, i, uint64(i), false, float64(i)
}

// PyStr renders a value the way Python's str() does (pyfmt.Str); the
// matchers compare scalars through it.
func PyStr(v any) string { return pyfmt.Str(v) }

// pyLower is Python's str.lower(): per-rune lowercase plus the two
// special cases Python applies (U+0130 becomes "i̇", and a capital sigma
// at the end of a word becomes the final form ς).
func pyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range rs {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3a3:
			if finalSigma(rs, i) {
				b.WriteRune(0x3c2)
			} else {
				b.WriteRune(0x3c3)
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func isCased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func isCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0xb7, 0x2018, 0x2019, 0x2024, 0x2027, 0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a, 0x55f, 0x5f4:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && isCaseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !isCased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && isCaseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !isCased(rs[j])
}

// pyIsSpace is Python's str.isspace() for one code point (the separator set
// of str.split() with no arguments).
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pySplit is Python's str.split() with no arguments.
func pySplit(s string) []string {
	return strings.FieldsFunc(s, pyIsSpace)
}

// nd is the Unicode decimal-digit value of r, or -1.
func ndValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if !unicode.Is(unicode.Nd, r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}

// pyInt parses a string like Python's int(s): surrounding whitespace,
// an optional sign, Unicode decimal digits with single underscores between
// them. ok is false when Python would raise ValueError; big is true when the
// value does not fit an int64 (Python would accept it).
func pyInt(s string) (v int64, ok, big bool) {
	s = strings.TrimFunc(s, pyIsSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false, false
	}
	var acc uint64
	prevDigit := false
	for _, r := range s {
		if r == '_' {
			if !prevDigit {
				return 0, false, false
			}
			prevDigit = false
			continue
		}
		d := ndValue(r)
		if d < 0 {
			return 0, false, false
		}
		prevDigit = true
		if !big {
			if acc > (math.MaxUint64-uint64(d))/10 {
				big = true
			} else {
				acc = acc*10 + uint64(d)
			}
		}
	}
	if !prevDigit {
		return 0, false, false
	}
	if big {
		return 0, true, true
	}
	if neg {
		if acc > 1<<63 {
			return 0, true, true
		}
		return -int64(acc), true, false
	}
	if acc > math.MaxInt64 {
		return 0, true, true
	}
	return int64(acc), true, false
}

// sortedIgnoreCase is salt.utils.data.sorted_ignorecase: a stable sort by
// the lowercased string.
func sortedIgnoreCase(in []string) []string {
	type kv struct{ low, s string }
	tmp := make([]kv, len(in))
	for i, s := range in {
		tmp[i] = kv{pyLower(s), s}
	}
	sort.SliceStable(tmp, func(i, j int) bool { return tmp[i].low < tmp[j].low })
	out := make([]string, len(in))
	for i := range tmp {
		out[i] = tmp[i].s
	}
	return out
}

package event

import (
	"fmt"
	"math/bits"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/wire/payload"
)

// TrimmedValue replaces values removed by trimming, as in Salt.
const TrimmedValue = "VALUE_TRIMMED"

// pyBytesOverhead is what CPython's sys.getsizeof adds to the length of a
// bytes object; Salt measures packed events with it.
const pyBytesOverhead = 33

// needsTrim reports whether a packed event of n bytes is over the limit the
// way salt.utils.dicttrim.trim_dict decides it (getsizeof > max).
func needsTrim(n, maxSize int) bool { return n+pyBytesOverhead > maxSize }

// Trim shrinks data the way Salt's salt.utils.dicttrim.trim_dict does for
// events (is_msgpacked=True, use_bin_type=True) when its msgpack encoding
// is over maxSize bytes. It returns data itself when it already fits (or
// maxSize <= 0), otherwise a trimmed copy; data is never modified.
//
// The algorithm: passes at 50%, 40%, 30%, 20% and 10% of maxSize replace
// every non-map value whose estimated Python size exceeds that share with
// "VALUE_TRIMMED", recursing into nested maps (but not into lists, which,
// as in Salt, are sized shallowly: 56 + 8 bytes per element). It stops as
// soon as the encoding fits; after the 10% pass it returns whatever is left,
// even if still too large. Sizes mirror CPython 3.11's sys.getsizeof for the
// decoded values; Salt keeps UTF-8-valid bin values as bytes while gsalt
// decodes them as text, so their estimate differs by 16 bytes.
func Trim(data *payload.Map, maxSize int) (*payload.Map, error) {
	if maxSize <= 0 {
		return data, nil
	}
	packed, err := payload.MarshalBin(data)
	if err != nil {
		return nil, fmt.Errorf("event: encode: %w", err)
	}
	if !needsTrim(len(packed), maxSize) {
		return data, nil
	}
	out, _, err := trimPacked(packed, maxSize)
	return out, err
}

// trimPacked decodes an oversized packed map (a fresh copy, like Salt's
// loads) and trims it; it returns the trimmed map and its encoding.
func trimPacked(packed []byte, maxSize int) (*payload.Map, []byte, error) {
	data, err := payload.UnmarshalMap(packed)
	if err != nil {
		return nil, nil, fmt.Errorf("event: decode for trimming: %w", err)
	}
	percent := 50.0
	const step = 10.0
	for {
		maxVal := float64(maxSize) * (percent / 100)
		trimMap(data, maxVal)
		percent -= step
		maxVal = float64(maxSize) * (percent / 100)
		out, err := payload.MarshalBin(data)
		if err != nil {
			return nil, nil, fmt.Errorf("event: encode trimmed: %w", err)
		}
		if len(out)+pyBytesOverhead < maxSize || maxVal == 0 {
			return data, out, nil
		}
	}
}

// trimMap replaces, in place, values of m larger than maxVal, recursing
// into nested maps.
func trimMap(m *payload.Map, maxVal float64) {
	for _, it := range m.Items() {
		if sub, ok := it.Value.(*payload.Map); ok && sub != nil {
			trimMap(sub, maxVal)
			continue
		}
		if float64(pySizeof(it.Value)) > maxVal {
			m.SetKey(it.Key, TrimmedValue)
		}
	}
}

// pySizeof estimates CPython 3.11's sys.getsizeof for the Python object a
// decoded payload value would be.
func pySizeof(v any) int {
	switch x := v.(type) {
	case nil:
		return 16
	case bool:
		return 28
	case int64:
		if x < 0 {
			return pyIntSize(uint64(-(x + 1)) + 1)
		}
		return pyIntSize(uint64(x))
	case uint64:
		return pyIntSize(x)
	case float64:
		return 24
	case string:
		return pyStrSize(x)
	case []byte:
		return pyBytesOverhead + len(x)
	case []any:
		return 56 + 8*len(x)
	case *payload.Map:
		// Only reached for a nil map (None); real maps are recursed.
		return 16
	case time.Time:
		return 48
	case payload.Ext:
		if x.Type == payload.ExtConstant {
			return 48
		}
		return pyBytesOverhead + len(x.Data)
	}
	return 16
}

// pyIntSize is the size of a Python int of this magnitude (30-bit digits).
func pyIntSize(mag uint64) int {
	digits := (bits.Len64(mag) + 29) / 30
	if digits < 1 {
		digits = 1
	}
	return 24 + 4*digits
}

// pyStrSize is the size of a compact Python str holding s.
func pyStrSize(s string) int {
	if !utf8.ValidString(s) {
		return pyBytesOverhead + len(s)
	}
	n := 0
	var maxRune rune
	for _, r := range s {
		n++
		if r > maxRune {
			maxRune = r
		}
	}
	switch {
	case maxRune < 0x80:
		return 49 + n
	case maxRune < 0x100:
		return 73 + n
	case maxRune < 0x10000:
		return 74 + 2*n
	}
	return 76 + 4*n
}

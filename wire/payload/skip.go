package payload

import "encoding/binary"

// Header reads the msgpack header at the start of b without decoding
// the value: size is the encoded size of the item without the values
// nested in it (its header, and for str, bin and ext its body), count how
// many values are nested in it (array elements, map keys and values).
// complete is false when b is too short to hold the header's length
// field; ok is false for an empty b or a reserved code (0xc1).
func Header(b []byte) (size, count int64, complete, ok bool) {
	if len(b) == 0 {
		return 0, 0, false, false
	}
	c := b[0]
	lenField := func(w int) (int64, bool) {
		if len(b) < 1+w {
			return 0, false
		}
		switch w {
		case 1:
			return int64(b[1]), true
		case 2:
			return int64(binary.BigEndian.Uint16(b[1:])), true
		}
		return int64(binary.BigEndian.Uint32(b[1:])), true
	}
	switch {
	case c <= 0x7f || c >= 0xe0:
		return 1, 0, true, true
	case c <= 0x8f:
		return 1, 2 * int64(c&0x0f), true, true
	case c <= 0x9f:
		return 1, int64(c & 0x0f), true, true
	case c <= 0xbf:
		return 1 + int64(c&0x1f), 0, true, true
	}
	var n int64
	switch c {
	case 0xc0, 0xc2, 0xc3:
		return 1, 0, true, true
	case 0xc4, 0xd9:
		n, complete = lenField(1)
		return 2 + n, 0, complete, true
	case 0xc5, 0xda:
		n, complete = lenField(2)
		return 3 + n, 0, complete, true
	case 0xc6, 0xdb:
		n, complete = lenField(4)
		return 5 + n, 0, complete, true
	case 0xc7: // ext 8, 16, 32: length, type, data
		n, complete = lenField(1)
		return 3 + n, 0, complete, true
	case 0xc8:
		n, complete = lenField(2)
		return 4 + n, 0, complete, true
	case 0xc9:
		n, complete = lenField(4)
		return 6 + n, 0, complete, true
	case 0xca:
		return 5, 0, true, true
	case 0xcb:
		return 9, 0, true, true
	case 0xcc, 0xd0:
		return 2, 0, true, true
	case 0xcd, 0xd1:
		return 3, 0, true, true
	case 0xce, 0xd2:
		return 5, 0, true, true
	case 0xcf, 0xd3:
		return 9, 0, true, true
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1..16: type, data
		return 2 + 1<<(c-0xd4), 0, true, true
	case 0xdc:
		n, complete = lenField(2)
		return 3, n, complete, true
	case 0xdd:
		n, complete = lenField(4)
		return 5, n, complete, true
	case 0xde:
		n, complete = lenField(2)
		return 3, 2 * n, complete, true
	case 0xdf:
		n, complete = lenField(4)
		return 5, 2 * n, complete, true
	}
	return 0, 0, false, false // 0xc1
}

// Skip returns the length in bytes of the msgpack value at the start of
// data without decoding it (nothing is allocated; nested values are
// counted, not recursed into). ok is false when data does not start with
// a complete value.
func Skip(data []byte) (n int, ok bool) {
	for pending := int64(1); pending > 0; pending-- {
		size, count, complete, ok := Header(data[n:])
		if !ok || !complete || size > int64(len(data)-n) {
			return 0, false
		}
		n += int(size)
		// Every nested value takes at least one byte.
		if pending += count; pending-1 > int64(len(data)-n) {
			return 0, false
		}
	}
	return n, true
}

// TextAt returns the bytes of the str or bin value at the start of data
// and the length of that value; ok is false when data does not start with
// a complete str or bin.
func TextAt(data []byte) (text []byte, n int, ok bool) {
	if len(data) == 0 {
		return nil, 0, false
	}
	switch c := data[0]; {
	case c >= 0xa0 && c <= 0xbf, c == 0xc4, c == 0xc5, c == 0xc6, c == 0xd9, c == 0xda, c == 0xdb:
	default:
		return nil, 0, false
	}
	size, _, complete, _ := Header(data)
	if !complete || size > int64(len(data)) {
		return nil, 0, false
	}
	hdr := 1
	switch data[0] {
	case 0xc4, 0xd9:
		hdr = 2
	case 0xc5, 0xda:
		hdr = 3
	case 0xc6, 0xdb:
		hdr = 5
	}
	return data[hdr:size], int(size), true
}

// MapAt calls fn for each entry of the map at the start of data with the
// raw encoding of its key and value (sub-slices of data, nothing
// decoded), stopping when fn returns false. ok is false when data does
// not start with a complete map.
func MapAt(data []byte, fn func(key, value []byte) bool) (ok bool) {
	if len(data) == 0 || data[0]&0xf0 != 0x80 && data[0] != 0xde && data[0] != 0xdf {
		return false
	}
	size, count, complete, _ := Header(data)
	if !complete {
		return false
	}
	rest := data[size:]
	for i := int64(0); i < count/2; i++ {
		kn, ok := Skip(rest)
		if !ok {
			return false
		}
		vn, ok := Skip(rest[kn:])
		if !ok {
			return false
		}
		if !fn(rest[:kn], rest[kn:kn+vn]) {
			return true
		}
		rest = rest[kn+vn:]
	}
	return true
}

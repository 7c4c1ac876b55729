package payload

import "encoding/binary"

// header reads the msgpack header at the start of data: its length in
// bytes, the length of the body that follows it (str, bin, ext), how many
// values it contains (array elements, or map keys and values), and
// whether it is a str or bin. ok is false on a reserved code or a short
// header.
func header(data []byte) (hdr, body, elems int, text, ok bool) {
	if len(data) == 0 {
		return 0, 0, 0, false, false
	}
	c := data[0]
	be := func(n int) (int, bool) { // big-endian length of n bytes after c
		if len(data) < 1+n {
			return 0, false
		}
		switch n {
		case 1:
			return int(data[1]), true
		case 2:
			return int(binary.BigEndian.Uint16(data[1:])), true
		}
		v := binary.BigEndian.Uint32(data[1:])
		return int(v), int64(v) <= int64(len(data))
	}
	var n int
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		return 1, 0, 0, false, true
	case c >= 0x80 && c <= 0x8f:
		return 1, 0, 2 * int(c&0x0f), false, true
	case c >= 0x90 && c <= 0x9f:
		return 1, 0, int(c & 0x0f), false, true
	case c >= 0xa0 && c <= 0xbf:
		return 1, int(c & 0x1f), 0, true, true
	case c == 0xc4, c == 0xd9:
		n, ok = be(1)
		return 2, n, 0, true, ok
	case c == 0xc5, c == 0xda:
		n, ok = be(2)
		return 3, n, 0, true, ok
	case c == 0xc6, c == 0xdb:
		n, ok = be(4)
		return 5, n, 0, true, ok
	case c == 0xc7: // ext 8, 16, 32: length, type, data
		n, ok = be(1)
		return 3, n, 0, false, ok
	case c == 0xc8:
		n, ok = be(2)
		return 4, n, 0, false, ok
	case c == 0xc9:
		n, ok = be(4)
		return 6, n, 0, false, ok
	case c == 0xca:
		return 5, 0, 0, false, true
	case c == 0xcb:
		return 9, 0, 0, false, true
	case c >= 0xcc && c <= 0xcf:
		return 1 + 1<<(c-0xcc), 0, 0, false, true
	case c >= 0xd0 && c <= 0xd3:
		return 1 + 1<<(c-0xd0), 0, 0, false, true
	case c >= 0xd4 && c <= 0xd8: // fixext 1..16: type, data
		return 2, 1 << (c - 0xd4), 0, false, true
	case c == 0xdc:
		n, ok = be(2)
		return 3, 0, n, false, ok
	case c == 0xdd:
		n, ok = be(4)
		return 5, 0, n, false, ok
	case c == 0xde:
		n, ok = be(2)
		return 3, 0, 2 * n, false, ok
	case c == 0xdf:
		n, ok = be(4)
		return 5, 0, 2 * n, false, ok
	}
	return 0, 0, 0, false, false
}

// Skip returns the length in bytes of the msgpack value at the start of
// data without decoding it (nothing is allocated; nested values are
// counted, not recursed into). ok is false when data does not start with
// a complete value.
func Skip(data []byte) (n int, ok bool) {
	for pending := 1; pending > 0; pending-- {
		hdr, body, elems, _, ok := header(data[n:])
		if !ok || hdr+body > len(data)-n || elems > len(data)-n {
			return 0, false
		}
		n += hdr + body
		pending += elems
	}
	return n, true
}

// TextAt returns the bytes of the str or bin value at the start of data and
// the length of that value; ok is false when data does not start with a
// complete str or bin.
func TextAt(data []byte) (text []byte, n int, ok bool) {
	hdr, body, _, isText, ok := header(data)
	if !ok || !isText || hdr+body > len(data) {
		return nil, 0, false
	}
	return data[hdr : hdr+body], hdr + body, true
}

// MapAt calls fn for each entry of the map at the start of data with the
// raw encoding of its key and value (sub-slices of data, nothing
// decoded), stopping when fn returns false. ok is false when data does
// not start with a complete map.
func MapAt(data []byte, fn func(key, value []byte) bool) (ok bool) {
	hdr, _, elems, _, ok := header(data)
	if !ok || data[0]&0xf0 != 0x80 && data[0] != 0xde && data[0] != 0xdf {
		return false
	}
	rest := data[hdr:]
	for i := 0; i < elems/2; i++ {
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

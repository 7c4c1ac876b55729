package py

import "unicode/utf8"

// IsLineBoundary reports whether r is one of the line boundaries of
// Python's str.splitlines: \n, \r, \v, \f, \x1c, \x1d, \x1e, \x85, U+2028
// and U+2029 (\r\n counts as one boundary).
func IsLineBoundary(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// SplitLines is Python's str.splitlines(keepends): "" gives no lines (nil),
// a final line boundary adds no empty line, and with keepends each line
// keeps its boundary. A byte of s that is not valid UTF-8 is an ordinary
// character.
func SplitLines(s string, keepends bool) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		if !IsLineBoundary(r) {
			i += size
			continue
		}
		brk := size
		if r == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			brk = 2
		}
		end := i
		if keepends {
			end = i + brk
		}
		out = append(out, s[start:end])
		i += brk
		start = i
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// SplitLinesBytes is Python's bytes.splitlines(keepends), which breaks only
// on \n, \r and \r\n.
func SplitLinesBytes(p []byte, keepends bool) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(p); {
		c := p[i]
		if c != '\n' && c != '\r' {
			i++
			continue
		}
		brk := 1
		if c == '\r' && i+1 < len(p) && p[i+1] == '\n' {
			brk = 2
		}
		end := i
		if keepends {
			end = i + brk
		}
		out = append(out, p[start:end])
		i += brk
		start = i
	}
	if start < len(p) {
		out = append(out, p[start:])
	}
	return out
}

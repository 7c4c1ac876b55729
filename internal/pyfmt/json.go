package pyfmt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// JSONString quotes s as Python's json encoder writes a str: `"`, `\` and
// the control characters escaped (\n \r \t \b \f, else \u00XX), everything
// else as is, or, with ascii (ensure_ascii=True), every character past
// U+007E as \uXXXX (a UTF-16 surrogate pair above U+FFFF). A byte of s
// that is not part of valid UTF-8 is copied as is without ascii and
// written \ufffd with it.
func JSONString(s string, ascii bool) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 && !ascii {
			b.WriteByte(s[i])
			i++
			continue
		}
		i += size
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(&b, `\u%04x`, r)
			case ascii && r > 0x7e:
				if r > 0xffff {
					r -= 0x10000
					fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800|(r>>10), 0xdc00|(r&0x3ff))
				} else {
					fmt.Fprintf(&b, `\u%04x`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

package py

import (
	"strings"
	"unicode"
)

// Title is Python's str.title(): the first letter of every run of letters
// in title case, the others in lower case.
func Title(s string) string {
	var b strings.Builder
	prevLetter := false
	for _, c := range s {
		if unicode.IsLetter(c) {
			if prevLetter {
				b.WriteRune(unicode.ToLower(c))
			} else {
				b.WriteRune(unicode.ToTitle(c))
			}
			prevLetter = true
		} else {
			b.WriteRune(c)
			prevLetter = false
		}
	}
	return b.String()
}

package jinja

import (
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/runenames"
)

// runeByName maps upper-case Unicode character names to characters, for
// Python's "\N{name}" escapes. It is built on first use and never
// changed afterwards.
var runeByName = sync.OnceValue(func() map[string]rune {
	m := make(map[string]rune, 40000)
	for _, tab := range []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C} {
		for _, rg := range tab.R16 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				m[runenames.Name(r)] = r
			}
		}
		for _, rg := range tab.R32 {
			for r := rune(rg.Lo); r <= rune(rg.Hi); r += rune(rg.Stride) {
				m[runenames.Name(r)] = r
			}
		}
	}
	return m
})

// lookupRuneName is Python's unicodedata.lookup for "\N{name}" (names
// are case-insensitive; CJK ideographs by their code point name).
func lookupRuneName(name string) (rune, bool) {
	name = strings.ToUpper(strings.TrimSpace(name))
	if hex, ok := strings.CutPrefix(name, "CJK UNIFIED IDEOGRAPH-"); ok {
		var r rune
		for _, c := range hex {
			switch {
			case c >= '0' && c <= '9':
				r = r*16 + c - '0'
			case c >= 'A' && c <= 'F':
				r = r*16 + c - 'A' + 10
			default:
				return 0, false
			}
		}
		return r, unicode.Is(unicode.Han, r)
	}
	r, ok := runeByName()[name]
	return r, ok && !strings.HasPrefix(name, "<")
}

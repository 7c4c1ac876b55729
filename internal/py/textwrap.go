package py

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace is Python's str.isspace for one character: Unicode white space
// and the separators \x1c-\x1f.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Fill is textwrap.fill(text, width, initial_indent=initialIndent,
// subsequent_indent=subsequentIndent) with TextWrapper's other defaults:
// tabs expanded to 8 columns, every whitespace character a space, words
// broken on hyphens and, when longer than a line, cut.
func Fill(text string, width int, initialIndent, subsequentIndent string) string {
	// expandtabs(8), then every ASCII whitespace character becomes a space.
	var exp []rune
	col := 0
	for _, r := range text {
		switch r {
		case '\t':
			n := 8 - col%8
			for i := 0; i < n; i++ {
				exp = append(exp, ' ')
			}
			col += n
			continue
		case '\n', '\r':
			col = 0
		default:
			col++
		}
		if strings.ContainsRune("\t\n\v\f\r ", r) {
			r = ' '
		}
		exp = append(exp, r)
	}
	chunks := wrapChunks(exp)
	// _wrap_chunks with chunks as a stack.
	var lines []string

	isBlank := func(ch []rune) bool {
		for _, r := range ch {
			if !IsSpace(r) {
				return false
			}
		}
		return true
	}
	for len(chunks) > 0 {
		var cur [][]rune
		curLen := 0
		indent := subsequentIndent
		if len(lines) == 0 {
			indent = initialIndent
		}
		w := width - utf8.RuneCountInString(indent)
		if isBlank(chunks[0]) && len(lines) > 0 {
			chunks = chunks[1:]
		}
		for len(chunks) > 0 {
			l := len(chunks[0])
			if curLen+l > w {
				break
			}
			cur = append(cur, chunks[0])
			curLen += l
			chunks = chunks[1:]
		}
		if len(chunks) > 0 && len(chunks[0]) > w {
			space := w - curLen
			if w < 1 {
				space = 1
			}
			chunk := chunks[0]
			end := space
			if len(chunk) > space {
				hyphen := -1
				for i := space - 1; i >= 0; i-- {
					if chunk[i] == '-' {
						hyphen = i
						break
					}
				}
				if hyphen > 0 {
					for _, r := range chunk[:hyphen] {
						if r != '-' {
							end = hyphen + 1
							break
						}
					}
				}
			}
			cur = append(cur, chunk[:end])
			chunks[0] = chunk[end:]
		}
		if len(cur) > 0 && isBlank(cur[len(cur)-1]) {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			var b strings.Builder
			b.WriteString(indent)
			for _, ch := range cur {
				b.WriteString(string(ch))
			}
			lines = append(lines, b.String())
		}
	}
	return strings.Join(lines, "\n")
}

// Character classes of textwrap's wordsep_re (Python's Unicode \w, \d).
func reWord(r rune) bool   { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }
func reLetter(r rune) bool { return reWord(r) && !unicode.IsDigit(r) }
func reWordPunct(r rune) bool {
	return reWord(r) || strings.ContainsRune("!\"'&.,?", r)
}
func reSpace(r rune) bool { return strings.ContainsRune("\t\n\v\f\r ", r) }

// wrapChunks splits text like textwrap's wordsep_re (break_on_hyphens).
func wrapChunks(t []rune) [][]rune {
	at := func(i int) rune {
		if i < 0 || i >= len(t) {
			return -1
		}
		return t[i]
	}
	// dashesThenWord: t[i:] is two or more '-' followed by a \w character.
	dashesThenWord := func(i int) (int, bool) {
		j := i
		for j < len(t) && t[j] == '-' {
			j++
		}
		return j, j-i >= 2 && j < len(t) && reWord(t[j])
	}
	var chunks [][]rune
	i := 0
	for i < len(t) {
		if reSpace(t[i]) {
			j := i
			for j < len(t) && reSpace(t[j]) {
				j++
			}
			chunks = append(chunks, t[i:j])
			i = j
			continue
		}
		if i > 0 && reWordPunct(t[i-1]) {
			if j, ok := dashesThenWord(i); ok {
				chunks = append(chunks, t[i:j])
				i = j
				continue
			}
		}
		end := -1
		for e := i + 1; e <= len(t); e++ {
			if t[e-1] != -1 && reSpace(t[e-1]) {
				break
			}
			if at(e) == '-' {
				lb := (reLetter(at(e-2)) && reLetter(at(e-1))) ||
					(reLetter(at(e-3)) && at(e-2) == '-' && reLetter(at(e-1)))
				la := reLetter(at(e+1)) && (reLetter(at(e+2)) || (at(e+2) == '-' && reLetter(at(e+3))))
				if lb && la {
					end = e + 1
					break
				}
			}
			if e == len(t) || reSpace(t[e]) {
				end = e
				break
			}
			if reWordPunct(t[e-1]) {
				if _, ok := dashesThenWord(e); ok {
					end = e
					break
				}
			}
		}
		chunks = append(chunks, t[i:end])
		i = end
	}
	return chunks
}

package py

import (
	"strings"
	"unicode/utf8"
)

// PPrintStr is pprint.PrettyPrinter._pprint_str: it writes s, whose repr
// does not fit its line, as adjacent string literals, one per line of s
// and, within a line, as many words (re's \S*\s*) as fit width; at level 1
// (the top of the object) the literals are parenthesized. repr is the
// caller's repr() of a str.
func PPrintStr(b *strings.Builder, s string, width, indent, allowance, level int, repr func(string) string) {
	if s == "" {
		b.WriteString(repr(s))
		return
	}
	runes := utf8.RuneCountInString
	var chunks []string
	lines := SplitLines(s, true)
	if level == 1 {
		indent++
		allowance++
	}
	maxWidth := width - indent
	maxWidth1 := maxWidth
	var rep string
	for i, line := range lines {
		rep = repr(line)
		if i == len(lines)-1 {
			maxWidth1 -= allowance
		}
		if runes(rep) <= maxWidth1 {
			chunks = append(chunks, rep)
			continue
		}
		parts := wordParts(line)
		maxWidth2 := maxWidth
		current := ""
		for j, part := range parts {
			candidate := current + part
			if j == len(parts)-1 && i == len(lines)-1 {
				maxWidth2 -= allowance
			}
			if runes(repr(candidate)) > maxWidth2 {
				if current != "" {
					chunks = append(chunks, repr(current))
				}
				current = part
			} else {
				current = candidate
			}
		}
		if current != "" {
			chunks = append(chunks, repr(current))
		}
	}
	if len(chunks) == 1 {
		b.WriteString(rep)
		return
	}
	if level == 1 {
		b.WriteByte('(')
	}
	for i, c := range chunks {
		if i > 0 {
			b.WriteString("\n" + strings.Repeat(" ", indent))
		}
		b.WriteString(c)
	}
	if level == 1 {
		b.WriteByte(')')
	}
}

// wordParts is re.findall(r'\S*\s*', line) without the final empty match.
func wordParts(line string) []string {
	var parts []string
	i := 0
	for i < len(line) {
		j := i
		for j < len(line) {
			r, size := utf8.DecodeRuneInString(line[j:])
			if IsSpace(r) {
				break
			}
			j += size
		}
		for j < len(line) {
			r, size := utf8.DecodeRuneInString(line[j:])
			if !IsSpace(r) {
				break
			}
			j += size
		}
		parts = append(parts, line[i:j])
		i = j
	}
	return parts
}

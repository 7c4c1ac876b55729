package py

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// The errors ShlexSplit returns, with CPython's ValueError texts.
var (
	ErrNoClosingQuotation = errors.New("No closing quotation")
	ErrNoEscapedCharacter = errors.New("No escaped character")
)

// ShlexSplit is shlex.split(s) (POSIX mode, no comments): words split at
// space, tab, CR and LF; single quotes keep everything; double quotes
// keep everything but a backslash before '"' or '\'; a backslash outside
// quotes keeps the next character. An empty pair of quotes is a word
// (the empty string). An unterminated quote is ErrNoClosingQuotation, a trailing
// backslash ErrNoEscapedCharacter.
func ShlexSplit(s string) ([]string, error) {
	const (
		space = iota // between words
		word
		single
		double
		escWord   // after a backslash in a word
		escDouble // after a backslash in double quotes
	)
	var (
		out   []string
		tok   strings.Builder
		inTok bool
		st    = space
	)
	for _, r := range s {
		switch st {
		case space, word:
			switch r {
			case ' ', '\t', '\r', '\n':
				if inTok {
					out = append(out, tok.String())
					tok.Reset()
					inTok = false
				}
				st = space
				continue
			case '\\':
				st = escWord
			case '\'':
				st = single
			case '"':
				st = double
			default:
				tok.WriteRune(r)
				st = word
			}
			inTok = true
		case single:
			if r == '\'' {
				st = word
			} else {
				tok.WriteRune(r)
			}
		case double:
			switch r {
			case '"':
				st = word
			case '\\':
				st = escDouble
			default:
				tok.WriteRune(r)
			}
		case escWord:
			tok.WriteRune(r)
			st = word
		case escDouble:
			if r != '"' && r != '\\' {
				tok.WriteByte('\\')
			}
			tok.WriteRune(r)
			st = double
		}
	}
	switch st {
	case single, double:
		return nil, ErrNoClosingQuotation
	case escWord, escDouble:
		return nil, ErrNoEscapedCharacter
	}
	if inTok {
		out = append(out, tok.String())
	}
	return out, nil
}

// ShlexQuote is shlex.quote(s): s itself when it is non-empty and only
// ASCII letters, digits and _@%+=:,./- ; else s in single quotes, each
// single quote inside written '"'"'.
func ShlexQuote(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if r >= utf8.RuneSelf || !shlexSafe(byte(r)) {
			return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
		}
	}
	return s
}

func shlexSafe(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("_@%+=:,./-", c) >= 0
}

package jinja

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyre"
	"github.com/gsalt/gsalt/wire/payload"
)

// textwrap's chunk patterns (Python 3.11's textwrap.TextWrapper).
var (
	wordsepRe = mustPyre(`(
          [\t\n\x0b\x0c\r\ ]+
        |
          (?<=[\w!"'&.,?]) -{2,} (?=\w)
        |
          [^\t\n\x0b\x0c\r\ ]+? (?:
              -(?: (?<=[^\d\W]{2}-) | (?<=[^\d\W]-[^\d\W]-))
              (?= [^\d\W] -? [^\d\W])
            |
              (?=[\t\n\x0b\x0c\r\ ]|\Z)
            |
              (?<=[\w!"'&.,?]) (?=-{2,}\w)
            )
        )`, pyre.Verbose)
	wordsepSimpleRe = mustPyre(`([\t\n\x0b\x0c\r ]+)`, 0)
)

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// textwrapWrap is textwrap.wrap(text, width, expand_tabs=False,
// replace_whitespace=False, break_long_words, break_on_hyphens), as
// Jinja2's wordwrap calls it.
func textwrapWrap(text string, width int, breakLong, breakHyphens bool) ([]string, error) {
	re := wordsepSimpleRe
	if breakHyphens {
		re = wordsepRe
	}
	parts, err := re.Split(text)
	if err != nil {
		return nil, err
	}
	var chunks []string
	for _, p := range parts {
		if s, ok := p.(string); ok && s != "" {
			chunks = append(chunks, s)
		}
	}
	if width <= 0 {
		return nil, valueErr("invalid width %d (must be > 0)", width)
	}
	// reversed stack
	for i, j := 0, len(chunks)-1; i < j; i, j = i+1, j-1 {
		chunks[i], chunks[j] = chunks[j], chunks[i]
	}
	isWS := func(s string) bool { return strings.TrimSpace(s) == "" }
	var lines []string
	for len(chunks) > 0 {
		var cur []string
		curLen := 0
		if isWS(chunks[len(chunks)-1]) && len(lines) > 0 {
			chunks = chunks[:len(chunks)-1]
		}
		for len(chunks) > 0 {
			l := runeLen(chunks[len(chunks)-1])
			if curLen+l > width {
				break
			}
			cur = append(cur, chunks[len(chunks)-1])
			chunks = chunks[:len(chunks)-1]
			curLen += l
		}
		if len(chunks) > 0 && runeLen(chunks[len(chunks)-1]) > width {
			// _handle_long_word
			spaceLeft := max(width-curLen, 1)
			if breakLong {
				chunk := []rune(chunks[len(chunks)-1])
				end := spaceLeft
				if breakHyphens && len(chunk) > spaceLeft {
					hyphen := strings.LastIndex(string(chunk[:spaceLeft]), "-")
					if hyphen > 0 {
						hyphen = runeLen(string(chunk[:spaceLeft])[:hyphen])
						if strings.Trim(string(chunk[:hyphen]), "-") != "" {
							end = hyphen + 1
						}
					}
				}
				cur = append(cur, string(chunk[:end]))
				chunks[len(chunks)-1] = string(chunk[end:])
			} else if len(cur) == 0 {
				cur = append(cur, chunks[len(chunks)-1])
				chunks = chunks[:len(chunks)-1]
			}
		}
		if len(cur) > 0 && isWS(cur[len(cur)-1]) {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			lines = append(lines, strings.Join(cur, ""))
		}
	}
	return lines, nil
}

func filterWordwrap(r *Runtime, v any, args []any, kw *payload.Map) (any, error) {
	a, err := Bind("do_wordwrap", args, kw, []string{"width", "break_long_words", "wrapstring", "break_on_hyphens"}, int64(79), true, nil, true)
	if err != nil {
		return nil, err
	}
	// Jinja2 calls value.splitlines() directly: only strings wrap.
	if u, ok := v.(*Undefined); ok {
		return nil, u.err()
	}
	s, ok := demote(v).(string)
	if !ok {
		return nil, &Error{Kind: "AttributeError", Msg: fmt.Sprintf("'%s' object has no attribute 'splitlines'", TypeName(v))}
	}
	width, _ := asInt(a[0])
	wrap := "\n"
	if a[2] != nil {
		if wrap, err = Str(a[2]); err != nil {
			return nil, err
		}
	}
	var paras []string
	for _, line := range py.SplitLines(s, false) {
		lines, err := textwrapWrap(line, int(width), truthy(a[1]), truthy(a[3]))
		if err != nil {
			return nil, err
		}
		paras = append(paras, strings.Join(lines, wrap))
	}
	return strings.Join(paras, wrap), nil
}

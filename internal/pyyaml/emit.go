package pyyaml

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// emitter follows the state machine PyYAML's Emitter and libyaml's emitter
// share, written recursively; libyaml selects libyaml's rules where the two
// differ.
type emitter struct {
	b          strings.Builder
	libyaml    bool
	unicode    bool
	flow       bool
	flowLeaves bool
	bestIndent int
	bestWidth  int

	indent  int // -1: none yet
	indents []int

	flowLevel                int
	mappingCtx, simpleKeyCtx bool

	column     int
	whitespace bool
	indention  bool
}

func newEmitter(o Options) *emitter {
	e := &emitter{libyaml: o.Flavor == LibYAML, unicode: o.AllowUnicode, flow: o.Flow, flowLeaves: o.FlowLeaves,
		bestIndent: 2, bestWidth: 80, indent: -1, whitespace: true, indention: true}
	if o.Indent > 1 && o.Indent < 10 {
		e.bestIndent = o.Indent
	}
	if o.Width > 2*e.bestIndent {
		e.bestWidth = o.Width
	}
	return e
}

func (e *emitter) write(s string) {
	e.b.WriteString(s)
	e.column += utf8.RuneCountInString(s)
}

func (e *emitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	if e.indent < 0 {
		if flow {
			e.indent = e.bestIndent
		} else {
			e.indent = 0
		}
	} else if !indentless {
		e.indent += e.bestIndent
	}
}

func (e *emitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *emitter) writeIndicator(ind string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.write(" ")
	}
	e.write(ind)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// writeBreak writes a line break character ("\n" or one of the Unicode
// breaks a scalar holds).
func (e *emitter) writeBreak(r rune) {
	e.b.WriteRune(r)
	e.column = 0
	e.whitespace = true
	e.indention = true
}

func (e *emitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeBreak('\n')
	}
	if e.column < indent {
		e.write(strings.Repeat(" ", indent-e.column))
	}
	e.whitespace = true
	e.indention = true
}

func (e *emitter) node(n *node, mapping, simpleKey bool) {
	e.mappingCtx, e.simpleKeyCtx = mapping, simpleKey
	switch n.kind {
	case scalarNode:
		e.scalar(n)
	case sequenceNode:
		if e.flowLevel > 0 || e.flow || len(n.items) == 0 || (e.flowLeaves && n.plainLeaves()) {
			e.flowSequence(n)
		} else {
			e.blockSequence(n)
		}
	case mappingNode:
		if e.flowLevel > 0 || e.flow || len(n.pairs) == 0 || (e.flowLeaves && n.plainLeaves()) {
			e.flowMapping(n)
		} else {
			e.blockMapping(n)
		}
	}
}

func (e *emitter) flowSequence(n *node) {
	e.writeIndicator("[", true, true, false)
	e.increaseIndent(true, false)
	e.flowLevel++
	for i, it := range n.items {
		if i > 0 {
			e.writeIndicator(",", false, false, false)
		}
		if e.column > e.bestWidth {
			e.writeIndent()
		}
		e.node(it, false, false)
	}
	e.flowLevel--
	e.popIndent()
	e.writeIndicator("]", false, false, false)
}

func (e *emitter) flowMapping(n *node) {
	e.writeIndicator("{", true, true, false)
	e.increaseIndent(true, false)
	e.flowLevel++
	for i, p := range n.pairs {
		if i > 0 {
			e.writeIndicator(",", false, false, false)
		}
		if e.column > e.bestWidth {
			e.writeIndent()
		}
		if e.checkSimpleKey(p[0]) {
			e.node(p[0], true, true)
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, false)
			e.node(p[0], true, false)
			if e.column > e.bestWidth {
				e.writeIndent()
			}
			e.writeIndicator(":", true, false, false)
		}
		e.node(p[1], true, false)
	}
	e.flowLevel--
	e.popIndent()
	e.writeIndicator("}", false, false, false)
}

func (e *emitter) blockSequence(n *node) {
	e.increaseIndent(false, e.mappingCtx && !e.indention)
	for _, it := range n.items {
		e.writeIndent()
		e.writeIndicator("-", true, false, true)
		e.node(it, false, false)
	}
	e.popIndent()
}

func (e *emitter) blockMapping(n *node) {
	e.increaseIndent(false, false)
	for _, p := range n.pairs {
		e.writeIndent()
		if e.checkSimpleKey(p[0]) {
			e.node(p[0], true, true)
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, true)
			e.node(p[0], true, false)
			e.writeIndent()
			e.writeIndicator(":", true, false, true)
		}
		e.node(p[1], true, false)
	}
	e.popIndent()
}

// tagText is the tag as libyaml writes it, or "" when it stays implicit.
func tagText(n *node) string {
	if n.kind != scalarNode || n.plainImplicit || n.quotedImplicit {
		return ""
	}
	if s, ok := strings.CutPrefix(n.tag, "tag:yaml.org,2002:"); ok {
		return "!!" + s
	}
	return "!<" + n.tag + ">"
}

// checkSimpleKey reports whether a mapping key may be written without "?":
// an empty collection or a one-line scalar shorter than 128 characters
// (PyYAML; an empty scalar is not simple), or at most 128 bytes with its
// tag (libyaml).
func (e *emitter) checkSimpleKey(n *node) bool {
	switch n.kind {
	case sequenceNode:
		return len(n.items) == 0
	case mappingNode:
		return len(n.pairs) == 0
	}
	a := e.analyze(n.value)
	if e.libyaml {
		return !a.multiline && len(tagText(n))+len(n.value) <= 128
	}
	return utf8.RuneCountInString(n.value) < 128 && !a.empty && !a.multiline
}

// analysis is the result of the emitter's analyze_scalar: which styles
// can hold the text.
type analysis struct {
	empty, multiline                    bool
	flowPlain, blockPlain, singleQuoted bool
	block                               bool
}

// isBreak reports the line break characters ("\r" only counts for
// libyaml).
func (e *emitter) isBreak(r rune) bool {
	return r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029 || (r == '\r' && e.libyaml)
}

func isBlank(r rune) bool {
	return r == 0 || r == ' ' || r == '\t' || r == '\r' || r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029
}

// libyamlPrintable is libyaml's IS_PRINTABLE.
func libyamlPrintable(r rune) bool {
	return r == 0x0a || (r >= 0x20 && r <= 0x7e) || (r >= 0xa0 && r <= 0xd7ff) ||
		(r >= 0xe000 && r <= 0xfffd && r != 0xfeff)
}

// special reports a character that only a double-quoted scalar can hold.
func (e *emitter) special(r rune) bool {
	if e.libyaml {
		return !libyamlPrintable(r) || (!e.unicode && r > 0x7f)
	}
	if r == '\n' || (r >= 0x20 && r <= 0x7e) {
		return false
	}
	if (r == 0x85 || (r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r < 0x10ffff)) && r != 0xfeff {
		return !e.unicode
	}
	return true
}

// analyze is the emitter's analyze_scalar.
func (e *emitter) analyze(s string) analysis {
	if s == "" {
		return analysis{empty: true, blockPlain: true, singleQuoted: true}
	}
	rs := []rune(s)
	var blockInd, flowInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	preceded := true
	followed := len(rs) == 1 || isBlank(rs[1])
	prevSpace, prevBreak := false, false
	for i, r := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", r) {
				flowInd, blockInd = true, true
			}
			if r == '?' || r == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if r == '-' && followed {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", r) {
				flowInd = true
			}
			if r == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if r == '#' && preceded {
				flowInd, blockInd = true, true
			}
		}
		if e.special(r) {
			special = true
		}
		isBreak := e.isBreak(r)
		if isBreak {
			lineBreaks = true
		}
		switch {
		case r == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i == len(rs)-1 {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isBreak:
			if i == 0 {
				leadingBreak = true
			}
			if i == len(rs)-1 {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		preceded = isBlank(r)
		followed = i+2 >= len(rs) || isBlank(rs[i+2])
	}
	a := analysis{multiline: lineBreaks, flowPlain: true, blockPlain: true, singleQuoted: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.flowPlain, a.blockPlain = false, false
	}
	if trailingSpace {
		a.block = false
	}
	if breakSpace {
		a.flowPlain, a.blockPlain, a.singleQuoted = false, false, false
	}
	if spaceBreak || special {
		a.flowPlain, a.blockPlain, a.singleQuoted, a.block = false, false, false, false
	}
	if lineBreaks {
		a.flowPlain, a.blockPlain = false, false
	}
	if flowInd {
		a.flowPlain = false
	}
	if blockInd {
		a.blockPlain = false
	}
	return a
}

// chooseStyle is the emitter's choice of scalar style: plain ('p') when
// the text allows it and reads back as its own type, else single quotes,
// else double quotes; literal ('|') when asked for and possible.
func (e *emitter) chooseStyle(n *node, a analysis) byte {
	style := n.style
	if style == 0 {
		style = 'p'
		if (e.flowLevel > 0 && !a.flowPlain) || (e.flowLevel == 0 && !a.blockPlain) ||
			(a.empty && (e.flowLevel > 0 || e.simpleKeyCtx)) ||
			(!n.plainImplicit && (!e.libyaml || tagText(n) == "")) {
			style = '\''
		}
	}
	if style == '\'' && !a.singleQuoted {
		style = '"'
	}
	if style == '|' && (!a.block || e.flowLevel > 0 || e.simpleKeyCtx) {
		style = '"'
	}
	return style
}

func (e *emitter) scalar(n *node) {
	style := e.chooseStyle(n, e.analyze(n.value))
	if e.libyaml {
		t := tagText(n)
		if t == "" && !n.quotedImplicit && style != 'p' {
			// libyaml writes the non-specific tag for a quoted scalar
			// whose tag only resolves when plain.
			t = "!"
		}
		if t != "" {
			if !e.whitespace {
				e.write(" ")
			}
			e.write(t)
			e.whitespace, e.indention = false, false
		}
	}
	e.increaseIndent(true, false)
	split := !e.simpleKeyCtx
	switch style {
	case '"':
		e.writeDoubleQuoted(n.value, split)
	case '\'':
		e.writeSingleQuoted(n.value, split)
	case '|':
		e.writeLiteral(n.value)
	default:
		e.writePlain(n.value, split)
	}
	e.popIndent()
}

func (e *emitter) writePlain(s string, split bool) {
	if s == "" && !e.libyaml {
		return
	}
	if !e.whitespace && (s != "" || e.flowLevel > 0) {
		e.write(" ")
	}
	e.writeFolded([]rune(s), split, false)
	e.whitespace = false
	e.indention = false
}

func (e *emitter) writeSingleQuoted(s string, split bool) {
	e.writeIndicator("'", true, false, false)
	if e.writeFolded([]rune(s), split, true) {
		e.writeIndent()
	}
	e.writeIndicator("'", false, false, false)
}

// writeFolded writes the text of a plain or single-quoted scalar: with
// split, a single space past the width becomes a line break (in quotes not
// the first or last character); a "\n" starting a run of line breaks is
// doubled, and the line after a run is indented. It reports whether the
// text ended in line breaks.
func (e *emitter) writeFolded(rs []rune, split, quoted bool) (breaks bool) {
	spaces := false
	for i, r := range rs {
		if r == ' ' && breaks && !e.libyaml {
			// PyYAML ends a run of breaks at a space as well (libyaml
			// only at the next other character, or at the end).
			e.writeIndent()
			breaks = false
		}
		switch {
		case r == ' ':
			if split && !spaces && e.column > e.bestWidth && !(quoted && (i == 0 || i == len(rs)-1)) &&
				!(i+1 < len(rs) && rs[i+1] == ' ') {
				e.writeIndent()
			} else {
				e.write(" ")
			}
			spaces = true
		case e.isBreak(r):
			if !breaks && r == '\n' {
				e.writeBreak('\n')
			}
			e.writeBreak(r)
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			if quoted && r == '\'' {
				e.write("''")
			} else {
				e.write(string(r))
			}
			e.indention = false
			spaces, breaks = false, false
		}
	}
	return breaks
}

// escape is the emitters' table of short escapes (ESCAPE_REPLACEMENTS),
// else \xXX, \uXXXX or \UXXXXXXXX.
func escape(r rune) string {
	switch r {
	case 0:
		return `\0`
	case 0x07:
		return `\a`
	case 0x08:
		return `\b`
	case 0x09:
		return `\t`
	case 0x0a:
		return `\n`
	case 0x0b:
		return `\v`
	case 0x0c:
		return `\f`
	case 0x0d:
		return `\r`
	case 0x1b:
		return `\e`
	case '"':
		return `\"`
	case '\\':
		return `\\`
	case 0x85:
		return `\N`
	case 0xa0:
		return `\_`
	case 0x2028:
		return `\L`
	case 0x2029:
		return `\P`
	}
	switch {
	case r <= 0xff:
		return fmt.Sprintf(`\x%02X`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04X`, r)
	}
	return fmt.Sprintf(`\U%08X`, r)
}

func (e *emitter) writeDoubleQuoted(s string, split bool) {
	if e.libyaml {
		e.writeDoubleQuotedLibYAML(s, split)
	} else {
		e.writeDoubleQuotedPyYAML(s, split)
	}
}

// writeDoubleQuotedPyYAML is PyYAML's write_double_quoted: it may fold
// after any escape as well as at a space.
func (e *emitter) writeDoubleQuotedPyYAML(s string, split bool) {
	e.writeIndicator(`"`, true, false, false)
	rs := []rune(s)
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		printable := ch >= 0x20 && ch <= 0x7e || (e.unicode && ((ch >= 0xa0 && ch <= 0xd7ff) || (ch >= 0xe000 && ch <= 0xfffd)))
		if ch == -1 || ch == '"' || ch == '\\' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 || ch == 0xfeff || !printable {
			if start < end {
				e.write(string(rs[start:end]))
				start = end
			}
			if ch != -1 {
				e.write(escape(ch))
				start = end + 1
			}
		}
		if end > 0 && end < len(rs)-1 && (ch == ' ' || start >= end) && e.column+(end-start) > e.bestWidth && split {
			data := `\`
			if start < end {
				data = string(rs[start:end]) + `\`
				start = end
			}
			e.write(data)
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if rs[start] == ' ' {
				e.write(`\`)
			}
		}
	}
	e.writeIndicator(`"`, false, false, false)
}

// writeDoubleQuotedLibYAML is libyaml's yaml_emitter_write_double_quoted:
// it folds only at a single space.
func (e *emitter) writeDoubleQuotedLibYAML(s string, split bool) {
	e.writeIndicator(`"`, true, false, false)
	rs := []rune(s)
	spaces := false
	for i, r := range rs {
		if !libyamlPrintable(r) || (!e.unicode && r > 0x7f) || r == 0xfeff || e.isBreak(r) || r == '"' || r == '\\' {
			e.write(escape(r))
			spaces = false
			continue
		}
		if r == ' ' {
			if split && !spaces && e.column > e.bestWidth && i != 0 && i != len(rs)-1 {
				e.writeIndent()
				if i+1 < len(rs) && rs[i+1] == ' ' {
					e.write(`\`)
				}
			} else {
				e.write(" ")
			}
			spaces = true
			continue
		}
		e.write(string(r))
		spaces = false
	}
	e.writeIndicator(`"`, false, false, false)
}

// writeLiteral is libyaml's yaml_emitter_write_literal (PyYAML writes the
// same text for what the representer puts in literal style: base64 lines).
func (e *emitter) writeLiteral(s string) {
	e.writeIndicator("|", true, false, false)
	rs := []rune(s)
	if len(rs) > 0 { // block scalar hints
		if rs[0] == ' ' || e.isBreak(rs[0]) {
			e.write(strconv.Itoa(e.bestIndent))
		}
		last := rs[len(rs)-1]
		switch {
		case !e.isBreak(last):
			e.write("-")
		case len(rs) == 1 || e.isBreak(rs[len(rs)-2]):
			e.write("+")
		}
	}
	e.writeBreak('\n')
	breaks := true
	for _, r := range rs {
		if e.isBreak(r) {
			e.writeBreak(r)
			breaks = true
			continue
		}
		if breaks {
			e.writeIndent()
		}
		e.write(string(r))
		e.indention = false
		breaks = false
	}
}

package render

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// YAMLDump serialises payload data the way Salt's yaml filter does
// (salt.utils.yaml.safe_dump: PyYAML's SafeDumper, allow_unicode, width
// 80, indent 2, dict keys sorted as PyYAML sorts plain dicts), in flow
// style when flow is true and in block style otherwise. The text ends with
// a newline; the filter strips it.
func YAMLDump(v any, flow bool) (string, error) {
	style := flowNever
	if flow {
		style = flowAlways
	}
	e := &yamlEmitter{whitespace: true, indention: true, indent: -1, flowStyle: style, unicode: true}
	if err := e.node(v, true, false, false, false, 0); err != nil {
		return "", err
	}
	e.b.WriteString("\n")
	return e.b.String(), nil
}

// trimYAMLDoc is Salt's post-processing of safe_dump output: strip, and
// drop a trailing document end marker.
func trimYAMLDoc(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSuffix(s, "\n...")
}

const (
	flowNever = iota
	flowAlways
)

const yamlBestWidth = 80

// yamlEmitter is a port of the parts of PyYAML's Emitter that safe_dump
// output depends on (scalar analysis and style choice, flow and block
// collections, line folding at the best width).
type yamlEmitter struct {
	b          strings.Builder
	column     int
	whitespace bool
	indention  bool
	indent     int // -1 is None
	indents    []int
	flowLevel  int
	flowStyle  int
	unicode    bool
	width      int

	rootCtx, seqCtx, mapCtx, simpleKeyCtx bool
}

func (e *yamlEmitter) bestWidth() int {
	if e.width > 0 {
		return e.width
	}
	return yamlBestWidth
}

func (e *yamlEmitter) write(s string) {
	e.column += utf8.RuneCountInString(s)
	e.b.WriteString(s)
}

func (e *yamlEmitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	if e.indent < 0 {
		if flow {
			e.indent = 2
		} else {
			e.indent = 0
		}
	} else if !indentless {
		e.indent += 2
	}
}

func (e *yamlEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yamlEmitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	data := ind
	if !e.whitespace && needWhitespace {
		data = " " + ind
	}
	e.whitespace = whitespace
	e.indention = e.indention && indention
	e.write(data)
}

func (e *yamlEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeLineBreak("\n")
	}
	if e.column < indent {
		e.whitespace = true
		e.write(strings.Repeat(" ", indent-e.column))
	}
}

func (e *yamlEmitter) writeLineBreak(br string) {
	e.whitespace = true
	e.indention = true
	e.b.WriteString(br)
	e.column = 0
}

// yamlPair is one mapping entry to emit.
type yamlPair struct{ k, v any }

func (e *yamlEmitter) node(v any, root, seq, mapping, simpleKey bool, depth int) error {
	if depth > maxConvertDepth {
		return fmt.Errorf("%w: data nested too deeply for YAML", ErrTemplate)
	}
	e.rootCtx, e.seqCtx, e.mapCtx, e.simpleKeyCtx = root, seq, mapping, simpleKey
	switch x := v.(type) {
	case []any:
		if e.flowLevel > 0 || e.flowStyle == flowAlways || len(x) == 0 {
			return e.flowSequence(x, depth)
		}
		return e.blockSequence(x, depth)
	case *payload.Map:
		pairs, err := sortedPairs(x)
		if err != nil {
			return err
		}
		if e.flowLevel > 0 || e.flowStyle == flowAlways || len(pairs) == 0 {
			return e.flowMapping(pairs, depth)
		}
		return e.blockMapping(pairs, depth)
	}
	text, implicit, err := yamlScalar(v)
	if err != nil {
		return err
	}
	e.increaseIndent(true, false)
	e.scalar(text, implicit)
	e.popIndent()
	return nil
}

// sortedPairs orders a dict's items like PyYAML's represent_mapping
// (sorted(mapping.items())).
func sortedPairs(m *payload.Map) ([]yamlPair, error) {
	pairs := make([]yamlPair, 0, m.Len())
	for _, it := range m.Items() {
		pairs = append(pairs, yamlPair{it.Key, it.Value})
	}
	var cmpErr error
	sort.SliceStable(pairs, func(i, j int) bool {
		c, err := pyCompare(pairs[i].k, pairs[j].k)
		if err != nil && cmpErr == nil {
			cmpErr = err
		}
		return c < 0
	})
	if cmpErr != nil {
		// PyYAML falls back to the dict's own order when keys do not sort
		pairs = pairs[:0]
		for _, it := range m.Items() {
			pairs = append(pairs, yamlPair{it.Key, it.Value})
		}
	}
	return pairs, nil
}

func (e *yamlEmitter) flowSequence(l []any, depth int) error {
	e.writeIndicator("[", true, true, false)
	e.flowLevel++
	e.increaseIndent(true, false)
	for i, item := range l {
		if i > 0 {
			e.writeIndicator(",", false, false, false)
		}
		if e.column > e.bestWidth() {
			e.writeIndent()
		}
		if err := e.node(item, false, true, false, false, depth+1); err != nil {
			return err
		}
	}
	e.popIndent()
	e.flowLevel--
	e.writeIndicator("]", false, false, false)
	return nil
}

func (e *yamlEmitter) flowMapping(pairs []yamlPair, depth int) error {
	e.writeIndicator("{", true, true, false)
	e.flowLevel++
	e.increaseIndent(true, false)
	for i, p := range pairs {
		if i > 0 {
			e.writeIndicator(",", false, false, false)
		}
		if e.column > e.bestWidth() {
			e.writeIndent()
		}
		if e.simpleKey(p.k) {
			if err := e.node(p.k, false, false, true, true, depth+1); err != nil {
				return err
			}
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, false)
			if err := e.node(p.k, false, false, true, false, depth+1); err != nil {
				return err
			}
			if e.column > e.bestWidth() {
				e.writeIndent()
			}
			e.writeIndicator(":", true, false, false)
		}
		if err := e.node(p.v, false, false, true, false, depth+1); err != nil {
			return err
		}
	}
	e.popIndent()
	e.flowLevel--
	e.writeIndicator("}", false, false, false)
	return nil
}

func (e *yamlEmitter) blockSequence(l []any, depth int) error {
	indentless := e.mapCtx && !e.indention
	e.increaseIndent(false, indentless)
	for _, item := range l {
		e.writeIndent()
		e.writeIndicator("-", true, false, true)
		if err := e.node(item, false, true, false, false, depth+1); err != nil {
			return err
		}
	}
	e.popIndent()
	return nil
}

func (e *yamlEmitter) blockMapping(pairs []yamlPair, depth int) error {
	e.increaseIndent(false, false)
	for _, p := range pairs {
		e.writeIndent()
		if e.simpleKey(p.k) {
			if err := e.node(p.k, false, false, true, true, depth+1); err != nil {
				return err
			}
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, true)
			if err := e.node(p.k, false, false, true, false, depth+1); err != nil {
				return err
			}
			e.writeIndent()
			e.writeIndicator(":", true, false, true)
		}
		if err := e.node(p.v, false, false, true, false, depth+1); err != nil {
			return err
		}
	}
	e.popIndent()
	return nil
}

// simpleKey is PyYAML's check_simple_key for a key about to be emitted.
func (e *yamlEmitter) simpleKey(k any) bool {
	switch x := k.(type) {
	case []any:
		return len(x) == 0
	case *payload.Map:
		return x.Len() == 0
	}
	text, _, err := yamlScalar(k)
	if err != nil {
		return false
	}
	a := analyzeScalar(text, e.unicode)
	return utf8.RuneCountInString(text) < 128 && !a.empty && !a.multiline
}

// yamlScalar returns the text of a scalar and whether its plain form
// resolves back to its own type (PyYAML's implicit[0]).
func yamlScalar(v any) (string, bool, error) {
	switch x := v.(type) {
	case string:
		return x, plainResolvesToStr(x), nil
	case []byte:
		return string(x), plainResolvesToStr(string(x)), nil
	case nil, bool, int64, float64, *big.Int, uint64:
		return yamlScalarText(x), true, nil
	case time.Time:
		return pyfmt.Str(x), true, nil
	}
	return "", false, fmt.Errorf("cannot represent an object: %s", pyfmt.Repr(v))
}

var reTimestamp = regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)

// plainResolvesToStr reports whether PyYAML's resolver reads s, written
// plain, back as a string.
func plainResolvesToStr(s string) bool {
	if reTimestamp.MatchString(s) || s == "=" || s == "<<" {
		return false
	}
	v, err := config.ResolveScalar(s)
	if err != nil {
		return false
	}
	_, isStr := v.(string)
	return isStr
}

type scalarAnalysis struct {
	empty, multiline                                               bool
	allowFlowPlain, allowBlockPlain, allowSingleQuoted, allowBlock bool
}

func isBreak(r rune) bool { return r == '\n' || r == '\x85' || r == '\u2028' || r == '\u2029' }

func isWS(r rune) bool {
	return r == 0 || r == ' ' || r == '\t' || r == '\r' || isBreak(r)
}

// analyzeScalar is PyYAML's Emitter.analyze_scalar.
func analyzeScalar(s string, allowUnicode bool) scalarAnalysis {
	if s == "" {
		return scalarAnalysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	rs := []rune(s)
	var blockInd, flowInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	preceded := true
	followed := len(rs) == 1 || isWS(rs[1])
	prevSpace, prevBreak := false, false
	for i, ch := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				flowInd, blockInd = true, true
			}
			if ch == '?' || ch == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if ch == '-' && followed {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", ch) {
				flowInd = true
			}
			if ch == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if ch == '#' && preceded {
				flowInd, blockInd = true, true
			}
		}
		if isBreak(ch) {
			lineBreaks = true
		}
		if !(ch == '\n' || (ch >= 0x20 && ch <= 0x7e)) {
			if (ch == 0x85 || (ch >= 0xa0 && ch <= 0xd7ff) || (ch >= 0xe000 && ch <= 0xfffd) || (ch >= 0x10000 && ch < 0x10ffff)) && ch != 0xfeff {
				if !allowUnicode {
					special = true
				}
			} else {
				special = true
			}
		}
		switch {
		case ch == ' ':
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
		case isBreak(ch):
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
		preceded = isWS(ch)
		followed = i+2 >= len(rs) || isWS(rs[i+2])
	}
	a := scalarAnalysis{multiline: lineBreaks, allowFlowPlain: true, allowBlockPlain: true, allowSingleQuoted: true, allowBlock: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if trailingSpace {
		a.allowBlock = false
	}
	if breakSpace {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted = false, false, false
	}
	if spaceBreak || special {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted, a.allowBlock = false, false, false, false
	}
	if lineBreaks {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if flowInd {
		a.allowFlowPlain = false
	}
	if blockInd {
		a.allowBlockPlain = false
	}
	return a
}

func (e *yamlEmitter) scalar(text string, implicit bool) {
	a := analyzeScalar(text, e.unicode)
	split := !e.simpleKeyCtx
	if implicit && !(e.simpleKeyCtx && (a.empty || a.multiline)) &&
		((e.flowLevel > 0 && a.allowFlowPlain) || (e.flowLevel == 0 && a.allowBlockPlain)) {
		e.writePlain(text, split)
		return
	}
	if a.allowSingleQuoted && !(e.simpleKeyCtx && a.multiline) {
		e.writeSingleQuoted(text, split)
		return
	}
	e.writeDoubleQuoted(text, split)
}

func (e *yamlEmitter) writePlain(text string, split bool) {
	if text == "" {
		return
	}
	if !e.whitespace {
		e.write(" ")
	}
	e.whitespace, e.indention = false, false
	rs := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > e.bestWidth() && split {
					e.writeIndent()
					e.whitespace, e.indention = false, false
				} else {
					e.write(string(rs[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isBreak(ch) {
				if rs[start] == '\n' {
					e.writeLineBreak("\n")
				}
				for _, br := range rs[start:end] {
					e.writeLineBreak(string(br))
				}
				e.writeIndent()
				e.whitespace, e.indention = false, false
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isBreak(ch) {
				e.write(string(rs[start:end]))
				start = end
			}
		}
		if ch != -1 {
			spaces = ch == ' '
			breaks = isBreak(ch)
		}
	}
}

func (e *yamlEmitter) writeSingleQuoted(text string, split bool) {
	e.writeIndicator("'", true, false, false)
	rs := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		switch {
		case spaces:
			if ch == -1 || ch != ' ' {
				if start+1 == end && e.column > e.bestWidth() && split && start != 0 && end != len(rs) {
					e.writeIndent()
				} else {
					e.write(string(rs[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !isBreak(ch) {
				if rs[start] == '\n' {
					e.writeLineBreak("\n")
				}
				for _, br := range rs[start:end] {
					e.writeLineBreak(string(br))
				}
				e.writeIndent()
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || isBreak(ch) || ch == '\'' {
				if start < end {
					e.write(string(rs[start:end]))
					start = end
				}
			}
		}
		if ch == '\'' {
			e.write("''")
			start = end + 1
		}
		if ch != -1 {
			spaces = ch == ' '
			breaks = isBreak(ch)
		}
	}
	e.writeIndicator("'", false, false, false)
}

// yamlEscape is PyYAML's ESCAPE_REPLACEMENTS.
func yamlEscape(r rune) (string, bool) {
	switch r {
	case 0:
		return "0", true
	case 0x07:
		return "a", true
	case 0x08:
		return "b", true
	case 0x09:
		return "t", true
	case 0x0a:
		return "n", true
	case 0x0b:
		return "v", true
	case 0x0c:
		return "f", true
	case 0x0d:
		return "r", true
	case 0x1b:
		return "e", true
	case '"':
		return "\"", true
	case '\\':
		return "\\", true
	case 0x85:
		return "N", true
	case 0xa0:
		return "_", true
	case 0x2028:
		return "L", true
	case 0x2029:
		return "P", true
	}
	return "", false
}

func (e *yamlEmitter) writeDoubleQuoted(text string, split bool) {
	e.writeIndicator("\"", true, false, false)
	rs := []rune(text)
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
				var data string
				if r, ok := yamlEscape(ch); ok {
					data = "\\" + r
				} else if ch <= 0xff {
					data = fmt.Sprintf("\\x%02X", ch)
				} else if ch <= 0xffff {
					data = fmt.Sprintf("\\u%04X", ch)
				} else {
					data = fmt.Sprintf("\\U%08X", ch)
				}
				e.write(data)
				start = end + 1
			}
		}
		if end > 0 && end < len(rs)-1 && (ch == ' ' || start >= end) && e.column+(end-start) > e.bestWidth() && split {
			data := string(rs[start:end]) + "\\"
			if start < end {
				start = end
			}
			e.write(data)
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if rs[start] == ' ' {
				e.write("\\")
			}
		}
	}
	e.writeIndicator("\"", false, false, false)
}

// yamlDoubleQuoted is Salt's yaml_dquote: PyYAML's double-quoted form with
// an unbounded width and allow_unicode off.
func yamlDoubleQuoted(s string) string {
	e := &yamlEmitter{whitespace: true, indention: true, indent: -1, width: 1 << 62}
	e.writeDoubleQuoted(s, true)
	return e.b.String()
}

// yamlSingleQuoted is Salt's yaml_squote.
func yamlSingleQuoted(s string) string {
	e := &yamlEmitter{whitespace: true, indention: true, indent: -1, width: 1 << 62}
	e.writeSingleQuoted(s, true)
	return e.b.String()
}

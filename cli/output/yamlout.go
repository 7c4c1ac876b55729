package output

import (
	"encoding/base64"
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
	"github.com/gsalt/gsalt/wire/payload"
)

// This file reproduces what Salt's yaml outputter prints:
// yaml.dump(data, Dumper=SafeOrderedDumper, default_flow_style=False,
// allow_unicode=True), where SafeOrderedDumper is PyYAML's CSafeDumper: the
// SafeRepresenter (sorted dict keys, YAML 1.1 implicit resolvers) feeding
// libyaml's emitter (width 80, indent 2).

// ErrYAMLDepth is returned for values nested deeper than the renderer
// allows.
var ErrYAMLDepth = errors.New("output: value nested too deeply for YAML")

// YAMLOptions are the safe_dump arguments Salt uses.
type YAMLOptions struct {
	// Indent is the block indent (PyYAML keeps 2 unless 1 < Indent < 10).
	Indent int
	// Flow is default_flow_style=True: every collection in flow style.
	Flow bool
}

const (
	tagNull      = "tag:yaml.org,2002:null"
	tagBool      = "tag:yaml.org,2002:bool"
	tagInt       = "tag:yaml.org,2002:int"
	tagFloat     = "tag:yaml.org,2002:float"
	tagStr       = "tag:yaml.org,2002:str"
	tagBinary    = "tag:yaml.org,2002:binary"
	tagTimestamp = "tag:yaml.org,2002:timestamp"
)

type ynodeKind int

const (
	yScalar ynodeKind = iota
	ySeq
	yMap
)

// ynode is a representation node (PyYAML's ScalarNode/SequenceNode/
// MappingNode) with the serializer's implicit flags.
type ynode struct {
	kind  ynodeKind
	tag   string
	value string
	style byte // 0 (any) or '|'
	// plainImplicit/quotedImplicit are the serializer's implicit tuple.
	plainImplicit, quotedImplicit bool
	items                         []*ynode    // sequence
	pairs                         [][2]*ynode // mapping
}

// YAML 1.1 implicit resolvers of PyYAML (yaml/resolver.py), used to decide
// whether a string may be written plain.
var yamlResolvers = []*regexp.Regexp{
	regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`),
	regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`),
	regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`),
	regexp.MustCompile(`^(?:<<)$`),
	regexp.MustCompile(`^(?:~|null|Null|NULL|)$`),
	regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`),
	regexp.MustCompile(`^(?:=)$`),
}

// resolvesToTag reports the tag a plain scalar with this text resolves to;
// "" means str. Python's "$" also matches before a final newline.
func resolvesToTag(value string) string {
	tags := []string{tagBool, tagFloat, tagInt, "tag:yaml.org,2002:merge", tagNull, tagTimestamp, "tag:yaml.org,2002:value"}
	v := strings.TrimSuffix(value, "\n")
	for i, re := range yamlResolvers {
		if re.MatchString(v) {
			// The resolvers are picked by first character; the regexes
			// above already imply it, except the null one for "".
			return tags[i]
		}
	}
	return ""
}

func scalarNode(tag, value string, style byte) *ynode {
	res := resolvesToTag(value)
	if res == "" {
		res = tagStr
	}
	return &ynode{kind: yScalar, tag: tag, value: value, style: style,
		plainImplicit: tag == res, quotedImplicit: tag == tagStr}
}

// yamlFloat is SafeRepresenter.represent_float.
func yamlFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	v := strings.ToLower(PyFloatRepr(f))
	if !strings.Contains(v, ".") && strings.Contains(v, "e") {
		v = strings.Replace(v, "e", ".0e", 1)
	}
	return v
}

// base64Lines is Python's base64.encodebytes: 76-character lines, each
// ending in a newline.
func base64Lines(p []byte) string {
	enc := base64.StdEncoding.EncodeToString(p)
	var b strings.Builder
	for len(enc) > 76 {
		b.WriteString(enc[:76])
		b.WriteByte('\n')
		enc = enc[76:]
	}
	if enc != "" {
		b.WriteString(enc)
		b.WriteByte('\n')
	}
	return b.String()
}

// represent builds the node tree as SafeOrderedDumper's representer does.
func represent(v any, depth int) (*ynode, error) {
	if depth > maxReprDepth {
		return nil, ErrYAMLDepth
	}
	switch x := normalize(v).(type) {
	case nil:
		return scalarNode(tagNull, "null", 0), nil
	case bool:
		if x {
			return scalarNode(tagBool, "true", 0), nil
		}
		return scalarNode(tagBool, "false", 0), nil
	case int64, uint64, *big.Int:
		return scalarNode(tagInt, PyRepr(x), 0), nil
	case float64:
		return scalarNode(tagFloat, yamlFloat(x), 0), nil
	case string:
		return scalarNode(tagStr, x, 0), nil
	case []byte:
		return scalarNode(tagBinary, base64Lines(x), '|'), nil
	case time.Time:
		return scalarNode(tagTimestamp, pyfmt.Str(x), 0), nil
	case []any:
		n := &ynode{kind: ySeq}
		for _, e := range x {
			c, err := represent(e, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, c)
		}
		return n, nil
	case *payload.Map:
		n := &ynode{kind: yMap}
		if x == nil {
			return n, nil
		}
		items, ok := sortedItems(x)
		if !ok {
			items = x.Items()
		}
		for _, it := range items {
			k, err := represent(it.Key, depth+1)
			if err != nil {
				return nil, err
			}
			val, err := represent(it.Value, depth+1)
			if err != nil {
				return nil, err
			}
			n.pairs = append(n.pairs, [2]*ynode{k, val})
		}
		return n, nil
	default:
		// Salt's SafeOrderedDumper represents unknown types as NULL.
		return scalarNode(tagNull, "NULL", 0), nil
	}
}

// YAML renders v like Salt's yaml outputter (before Salt strips the
// trailing newline).
func YAML(v any, o YAMLOptions) (string, error) {
	root, err := represent(v, 0)
	if err != nil {
		return "", err
	}
	e := &yemitter{bestIndent: 2, bestWidth: 80, indent: -1, whitespace: true, indention: true, flowStyle: o.Flow}
	if o.Indent > 1 && o.Indent < 10 {
		e.bestIndent = o.Indent
	}
	e.node(root, true, false, false, false)
	e.writeIndent()
	return e.b.String(), nil
}

// yemitter follows libyaml's emitter state machine, written recursively.
type yemitter struct {
	b          strings.Builder
	bestIndent int
	bestWidth  int
	flowStyle  bool

	indent  int // -1: none yet
	indents []int

	flowLevel                                   int
	rootCtx, sequenceCtx, mappingCtx, simpleKey bool

	column     int
	whitespace bool
	indention  bool
}

func (e *yemitter) increaseIndent(flow, indentless bool) {
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

func (e *yemitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yemitter) write(s string) {
	e.b.WriteString(s)
	e.column += utf8.RuneCountInString(s)
}

func (e *yemitter) writeIndicator(ind string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.write(" ")
	}
	e.write(ind)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

func (e *yemitter) lineBreak() {
	e.b.WriteByte('\n')
	e.column = 0
}

func (e *yemitter) writeIndent() {
	indent := e.indent
	if indent < 0 {
		indent = 0
	}
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.lineBreak()
	}
	for e.column < indent {
		e.write(" ")
	}
	e.whitespace = true
	e.indention = true
}

func (e *yemitter) node(n *ynode, root, sequence, mapping, simpleKey bool) {
	e.rootCtx, e.sequenceCtx, e.mappingCtx, e.simpleKey = root, sequence, mapping, simpleKey
	switch n.kind {
	case yScalar:
		e.scalar(n)
	case ySeq:
		if e.flowLevel > 0 || e.flowStyle || len(n.items) == 0 {
			e.flowSequence(n)
		} else {
			e.blockSequence(n)
		}
	case yMap:
		if e.flowLevel > 0 || e.flowStyle || len(n.pairs) == 0 {
			e.flowMapping(n)
		} else {
			e.blockMapping(n)
		}
	}
}

func (e *yemitter) flowSequence(n *ynode) {
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
		e.node(it, false, true, false, false)
	}
	e.flowLevel--
	e.popIndent()
	e.writeIndicator("]", false, false, false)
}

func (e *yemitter) flowMapping(n *ynode) {
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
			e.node(p[0], false, false, true, true)
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, false)
			e.node(p[0], false, false, true, false)
			if e.column > e.bestWidth {
				e.writeIndent()
			}
			e.writeIndicator(":", true, false, false)
		}
		e.node(p[1], false, false, true, false)
	}
	e.flowLevel--
	e.popIndent()
	e.writeIndicator("}", false, false, false)
}

func (e *yemitter) blockSequence(n *ynode) {
	e.increaseIndent(false, e.mappingCtx && !e.indention)
	for _, it := range n.items {
		e.writeIndent()
		e.writeIndicator("-", true, false, true)
		e.node(it, false, true, false, false)
	}
	e.popIndent()
}

func (e *yemitter) blockMapping(n *ynode) {
	e.increaseIndent(false, false)
	for _, p := range n.pairs {
		e.writeIndent()
		if e.checkSimpleKey(p[0]) {
			e.node(p[0], false, false, true, true)
			e.writeIndicator(":", false, false, false)
		} else {
			e.writeIndicator("?", true, false, true)
			e.node(p[0], false, false, true, false)
			e.writeIndent()
			e.writeIndicator(":", true, false, true)
		}
		e.node(p[1], false, false, true, false)
	}
	e.popIndent()
}

// tagText is the tag as the emitter writes it, or "" when it stays
// implicit (libyaml only analyses tags it must write).
func tagText(n *ynode) string {
	if n.kind != yScalar || n.plainImplicit || n.quotedImplicit {
		return ""
	}
	if s, ok := strings.CutPrefix(n.tag, "tag:yaml.org,2002:"); ok {
		return "!!" + s
	}
	return "!<" + n.tag + ">"
}

func (e *yemitter) checkSimpleKey(n *ynode) bool {
	length := 0
	switch n.kind {
	case yScalar:
		a := analyzeScalar(n.value)
		if a.multiline {
			return false
		}
		length = len(tagText(n)) + len(n.value)
	case ySeq:
		if len(n.items) != 0 {
			return false
		}
	case yMap:
		if len(n.pairs) != 0 {
			return false
		}
	}
	return length <= 128
}

// scalarAnalysis is libyaml's yaml_emitter_analyze_scalar result.
type scalarAnalysis struct {
	empty, multiline                    bool
	flowPlain, blockPlain, singleQuoted bool
	block                               bool
}

// yamlPrintable is libyaml's IS_PRINTABLE.
func yamlPrintable(r rune) bool {
	return r == 0x0a || (r >= 0x20 && r <= 0x7e) || (r >= 0xa0 && r <= 0xd7ff) ||
		(r >= 0xe000 && r <= 0xfffd && r != 0xfeff)
}

func yamlBreak(r rune) bool {
	return r == '\r' || r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029
}

func yamlBlankz(r rune) bool {
	return r == ' ' || r == '\t' || yamlBreak(r) || r == 0
}

func analyzeScalar(s string) scalarAnalysis {
	if s == "" {
		return scalarAnalysis{empty: true, blockPlain: true, singleQuoted: true}
	}
	rs := []rune(s)
	var blockInd, flowInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	precededByWS := true
	followedByWS := len(rs) == 1 || yamlBlankz(rs[1])
	prevSpace, prevBreak := false, false
	for i, r := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", r) {
				flowInd, blockInd = true, true
			}
			if r == '?' || r == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if r == '-' && followedByWS {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", r) {
				flowInd = true
			}
			if r == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if r == '#' && precededByWS {
				flowInd, blockInd = true, true
			}
		}
		if !yamlPrintable(r) {
			special = true
		}
		if yamlBreak(r) {
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
		case yamlBreak(r):
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
		precededByWS = yamlBlankz(r)
		followedByWS = i+2 >= len(rs) || yamlBlankz(rs[i+2])
	}
	a := scalarAnalysis{multiline: lineBreaks, flowPlain: true, blockPlain: true, singleQuoted: true, block: true}
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

// chooseStyle is libyaml's yaml_emitter_select_scalar_style.
func (e *yemitter) chooseStyle(n *ynode, a scalarAnalysis) byte {
	noTag := tagText(n) == ""
	style := n.style
	if style == 0 {
		style = 'p'
	}
	if style == 'p' {
		if (e.flowLevel > 0 && !a.flowPlain) || (e.flowLevel == 0 && !a.blockPlain) {
			style = '\''
		}
		if a.empty && (e.flowLevel > 0 || e.simpleKey) {
			style = '\''
		}
		if noTag && !n.plainImplicit {
			style = '\''
		}
	}
	if style == '\'' && !a.singleQuoted {
		style = '"'
	}
	if style == '|' && (!a.block || e.flowLevel > 0 || e.simpleKey) {
		style = '"'
	}
	return style
}

func (e *yemitter) scalar(n *ynode) {
	a := analyzeScalar(n.value)
	style := e.chooseStyle(n, a)
	t := tagText(n)
	if t == "" && !n.quotedImplicit && style != 'p' {
		// libyaml writes the non-specific tag for a quoted scalar whose
		// tag only resolves when plain.
		t = "!"
	}
	if t != "" {
		if !e.whitespace {
			e.write(" ")
		}
		e.write(t)
		e.whitespace, e.indention = false, false
	}
	e.increaseIndent(true, false)
	allowBreaks := !e.simpleKey
	switch style {
	case '"':
		e.writeDoubleQuoted(n.value, allowBreaks)
	case '\'':
		e.writeSingleQuoted(n.value, allowBreaks)
	case '|':
		e.writeLiteral(n.value)
	default:
		e.writePlain(n.value, allowBreaks)
	}
	e.popIndent()
}

func (e *yemitter) writeBreakChar(r rune) {
	if r == '\n' {
		e.lineBreak()
		return
	}
	e.b.WriteRune(r)
	e.column = 0
}

func (e *yemitter) writePlain(s string, allowBreaks bool) {
	if !e.whitespace && (s != "" || e.flowLevel > 0) {
		e.write(" ")
	}
	rs := []rune(s)
	spaces, breaks := false, false
	for i, r := range rs {
		switch {
		case r == ' ':
			if allowBreaks && !spaces && e.column > e.bestWidth && !(i+1 < len(rs) && rs[i+1] == ' ') {
				e.writeIndent()
			} else {
				e.write(" ")
			}
			spaces = true
		case yamlBreak(r):
			if !breaks && r == '\n' {
				e.lineBreak()
			}
			e.writeBreakChar(r)
			e.indention = true
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			e.write(string(r))
			e.indention = false
			spaces, breaks = false, false
		}
	}
	e.whitespace = false
	e.indention = false
}

func (e *yemitter) writeSingleQuoted(s string, allowBreaks bool) {
	e.writeIndicator("'", true, false, false)
	rs := []rune(s)
	spaces, breaks := false, false
	for i, r := range rs {
		switch {
		case r == ' ':
			if allowBreaks && !spaces && e.column > e.bestWidth && i != 0 && i != len(rs)-1 && !(i+1 < len(rs) && rs[i+1] == ' ') {
				e.writeIndent()
			} else {
				e.write(" ")
			}
			spaces = true
		case yamlBreak(r):
			if !breaks && r == '\n' {
				e.lineBreak()
			}
			e.writeBreakChar(r)
			e.indention = true
			breaks = true
		default:
			if breaks {
				e.writeIndent()
			}
			if r == '\'' {
				e.write("''")
			} else {
				e.write(string(r))
			}
			e.indention = false
			spaces, breaks = false, false
		}
	}
	if breaks {
		e.writeIndent()
	}
	e.writeIndicator("'", false, false, false)
}

func (e *yemitter) writeDoubleQuoted(s string, allowBreaks bool) {
	e.writeIndicator("\"", true, false, false)
	rs := []rune(s)
	spaces := false
	for i, r := range rs {
		if !yamlPrintable(r) || r == 0xfeff || yamlBreak(r) || r == '"' || r == '\\' {
			var esc string
			switch r {
			case 0:
				esc = "0"
			case 7:
				esc = "a"
			case 8:
				esc = "b"
			case 9:
				esc = "t"
			case 0x0a:
				esc = "n"
			case 0x0b:
				esc = "v"
			case 0x0c:
				esc = "f"
			case 0x0d:
				esc = "r"
			case 0x1b:
				esc = "e"
			case '"':
				esc = "\""
			case '\\':
				esc = "\\"
			case 0x85:
				esc = "N"
			case 0xa0:
				esc = "_"
			case 0x2028:
				esc = "L"
			case 0x2029:
				esc = "P"
			default:
				switch {
				case r <= 0xff:
					esc = "x" + hexUpper(int64(r), 2)
				case r <= 0xffff:
					esc = "u" + hexUpper(int64(r), 4)
				default:
					esc = "U" + hexUpper(int64(r), 8)
				}
			}
			e.write("\\" + esc)
			spaces = false
			continue
		}
		if r == ' ' {
			if allowBreaks && !spaces && e.column > e.bestWidth && i != 0 && i != len(rs)-1 {
				e.writeIndent()
				if i+1 < len(rs) && rs[i+1] == ' ' {
					e.write("\\")
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
	e.writeIndicator("\"", false, false, false)
}

func hexUpper(v int64, width int) string {
	s := strings.ToUpper(strconv.FormatInt(v, 16))
	for len(s) < width {
		s = "0" + s
	}
	return s
}

func (e *yemitter) writeLiteral(s string) {
	e.writeIndicator("|", true, false, false)
	rs := []rune(s)
	// Block scalar hints.
	if len(rs) > 0 {
		if rs[0] == ' ' || yamlBreak(rs[0]) {
			e.write(strconv.Itoa(e.bestIndent))
		}
		last := rs[len(rs)-1]
		switch {
		case !yamlBreak(last):
			e.write("-")
		case len(rs) == 1 || yamlBreak(rs[len(rs)-2]):
			e.write("+")
		}
	}
	e.lineBreak()
	e.indention, e.whitespace = true, true
	breaks := true
	for _, r := range rs {
		if yamlBreak(r) {
			e.writeBreakChar(r)
			e.indention = true
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

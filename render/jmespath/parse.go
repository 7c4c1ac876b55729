// Package jmespath is JMESPath as Salt's json_query filter runs it: Python's
// jmespath 1.0 (jmespath.search) over the Python objects a Jinja template
// holds. It evaluates on gsalt's Jinja value model (render/jinja), so dicts
// keep their insertion order through `*`, keys(), values(), merge() and
// multiselect hashes, ints stay ints and floats floats, tuples, undefined
// values and iterators stay the objects Python's jmespath meets (and does
// not look into), and errors carry Python's exception classes and texts.
//
// The grammar is JMESPath's (https://jmespath.org/specification.html), parsed
// top-down by binding power with the same quirks as the Python parser
// (`f(a b)` is a call with two arguments, `{a: a b: b}` a hash of two keys).
package jmespath

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/gsalt/gsalt/render/jinja"
)

// ErrDepth is returned for an expression nested beyond the parser's or
// evaluator's bound (Python's RecursionError).
var ErrDepth = errors.New("jmespath: maximum recursion depth exceeded")

const maxDepth = 400

type token struct {
	typ   string
	value any
	start int
}

// lexer splits an expression into tokens as Python's jmespath.lexer does
// (positions in code points).
type lexer struct {
	expr  string
	chars []rune
	pos   int
	cur   rune // -1 at the end
}

const eofRune = -1

var simpleTokens = map[rune]string{
	'.': "dot", '*': "star", ']': "rbracket", ',': "comma", ':': "colon", '@': "current",
	'(': "lparen", ')': "rparen", '{': "lbrace", '}': "rbrace",
}

func isIdentStart(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isIdent(c rune) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

func (l *lexer) next() rune {
	if l.pos >= len(l.chars)-1 {
		l.pos = len(l.chars) - 1
		l.cur = eofRune
	} else {
		l.pos++
		l.cur = l.chars[l.pos]
	}
	return l.cur
}

func (l *lexer) lexErr(pos int, value, msg string) error {
	return &Error{Kind: "LexerError", Msg: fmt.Sprintf("Bad jmespath expression: %s:\n%s\n%s^", msg, l.expr, strings.Repeat(" ", pos))}
}

func tokenize(expr string) ([]token, error) {
	if expr == "" {
		return nil, &Error{Kind: "EmptyExpressionError", Msg: "Invalid JMESPath expression: cannot be empty."}
	}
	l := &lexer{expr: expr, chars: []rune(expr)}
	l.cur = l.chars[0]
	var toks []token
	for l.cur != eofRune {
		c := l.cur
		if t, ok := simpleTokens[c]; ok {
			toks = append(toks, token{t, string(c), l.pos})
			l.next()
			continue
		}
		switch {
		case isIdentStart(c):
			start := l.pos
			var b strings.Builder
			b.WriteRune(c)
			for isIdent(l.next()) {
				b.WriteRune(l.cur)
			}
			toks = append(toks, token{"unquoted_identifier", b.String(), start})
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			l.next()
		case c == '[':
			start := l.pos
			switch l.next() {
			case ']':
				l.next()
				toks = append(toks, token{"flatten", "[]", start})
			case '?':
				l.next()
				toks = append(toks, token{"filter", "[?", start})
			default:
				toks = append(toks, token{"lbracket", "[", start})
			}
		case c == '\'':
			start := l.pos
			s, err := l.until('\'')
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{"literal", strings.ReplaceAll(s, `\'`, "'"), start})
		case c == '|':
			toks = append(toks, l.orElse('|', "or", "pipe"))
		case c == '&':
			toks = append(toks, l.orElse('&', "and", "expref"))
		case c == '`':
			t, err := l.literal()
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
		case isDigit(c) || c == '-':
			start := l.pos
			var b strings.Builder
			b.WriteRune(c)
			for isDigit(l.next()) {
				b.WriteRune(l.cur)
			}
			s := b.String()
			if s == "-" {
				return nil, l.lexErr(start, s, "Unknown token '-'")
			}
			n, _ := new(big.Int).SetString(s, 10)
			var v any = n
			if n.IsInt64() {
				v = n.Int64()
			}
			toks = append(toks, token{"number", v, start})
		case c == '"':
			start := l.pos
			s, err := l.until('"')
			if err != nil {
				return nil, err
			}
			v, err := jsonString(`"` + s + `"`)
			if err != nil {
				return nil, l.lexErr(start, s, err.Error())
			}
			toks = append(toks, token{"quoted_identifier", v, start})
		case c == '<':
			toks = append(toks, l.orElse('=', "lte", "lt"))
		case c == '>':
			toks = append(toks, l.orElse('=', "gte", "gt"))
		case c == '!':
			toks = append(toks, l.orElse('=', "ne", "not"))
		case c == '=':
			if l.next() == '=' {
				toks = append(toks, token{"eq", "==", l.pos - 1})
				l.next()
				continue
			}
			pos := l.pos - 1
			if l.cur == eofRune {
				pos = l.pos
			}
			return nil, l.lexErr(pos, "=", "Unknown token '='")
		default:
			return nil, l.lexErr(l.pos, string(c), "Unknown token "+string(c))
		}
	}
	return append(toks, token{"eof", "", len(l.chars)}), nil
}

// until reads up to the delimiter; a backslash keeps itself and the
// character after it.
func (l *lexer) until(delim rune) (string, error) {
	start := l.pos
	var b strings.Builder
	l.next()
	for l.cur != delim {
		if l.cur == '\\' {
			b.WriteByte('\\')
			l.next()
		}
		if l.cur == eofRune {
			return "", l.lexErr(start, string(l.chars[start:]), "Unclosed "+string(delim)+" delimiter")
		}
		b.WriteRune(l.cur)
		l.next()
	}
	l.next()
	return b.String(), nil
}

func (l *lexer) literal() (token, error) {
	start := l.pos
	s, err := l.until('`')
	if err != nil {
		return token{}, err
	}
	s = strings.ReplaceAll(s, "\\`", "`")
	v, err := jsonLiteral(s)
	if err != nil {
		// JEP-12's deprecated form: the text as a JSON string
		sv, err2 := jsonString(`"` + strings.TrimLeft(s, " \t\n\r\f\v") + `"`)
		if err2 != nil {
			return token{}, l.lexErr(start, string(l.chars[start:]), "Bad token "+s)
		}
		v = sv
	}
	return token{"literal", v, start}, nil
}

func (l *lexer) orElse(expected rune, match, elseType string) token {
	start := l.pos
	cur := l.cur
	if l.next() == expected {
		l.next()
		return token{match, string(cur) + string(expected), start}
	}
	return token{elseType, string(cur), start}
}

var bindingPower = map[string]int{
	"eof": 0, "unquoted_identifier": 0, "quoted_identifier": 0, "literal": 0, "rbracket": 0,
	"rparen": 0, "comma": 0, "rbrace": 0, "number": 0, "current": 0, "expref": 0, "colon": 0,
	"pipe": 1, "or": 2, "and": 3, "eq": 5, "gt": 5, "lt": 5, "gte": 5, "lte": 5, "ne": 5,
	"flatten": 9, "star": 20, "filter": 21, "dot": 40, "not": 45, "lbrace": 50, "lbracket": 55, "lparen": 60,
}

const projectionStop = 10

// node is an AST node as Python's jmespath.ast builds them.
type node struct {
	typ      string
	value    any
	children []*node
}

// Expression is a compiled JMESPath expression.
type Expression struct {
	text string
	root *node
}

type parser struct {
	expr  string
	toks  []token
	i     int
	depth int
}

// Compile parses an expression as jmespath.compile does; its errors are
// *Error with Python's class (LexerError, ParseError,
// IncompleteExpressionError, EmptyExpressionError) and text.
func Compile(expr string) (*Expression, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{expr: expr, toks: toks}
	root, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if t := p.tok(0); t.typ != "eof" {
		return nil, p.parseErr(t, "Unexpected token: "+tokStr(t.value))
	}
	return &Expression{text: expr, root: root}, nil
}

func (p *parser) tok(n int) token {
	i := p.i + n
	if i < 0 {
		i += len(p.toks) // Python's negative index
	}
	if i < 0 || i >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[i]
}

func (p *parser) cur() string { return p.tok(0).typ }

func tokStr(v any) string {
	s, err := jinja.Str(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return s
}

func (p *parser) parseErr(t token, msg string) error {
	return &Error{Kind: "ParseError", Msg: fmt.Sprintf("%s: Parse error at column %d, token \"%s\" (%s), for expression:\n\"%s\"\n%s^",
		msg, t.start, tokStr(t.value), strings.ToUpper(t.typ), p.expr, strings.Repeat(" ", t.start+1))}
}

func (p *parser) incomplete() error {
	n := len([]rune(p.expr))
	return &Error{Kind: "IncompleteExpressionError", Msg: fmt.Sprintf("Invalid jmespath expression: Incomplete expression:\n\"%s\"\n%s^", p.expr, strings.Repeat(" ", n+1))}
}

func (p *parser) errMaybeEOF(expected string, t token) error {
	if t.typ == "eof" {
		return p.incomplete()
	}
	return p.parseErr(t, fmt.Sprintf("Expecting: %s, got: %s", expected, t.typ))
}

func (p *parser) match(typ string) error {
	if p.cur() == typ {
		p.i++
		return nil
	}
	return p.errMaybeEOF(typ, p.tok(0))
}

func nd(typ string, value any, children ...*node) *node {
	return &node{typ: typ, value: value, children: children}
}

func identity() *node { return nd("identity", nil) }

func (p *parser) expression(bp int) (*node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, &Error{Kind: "RecursionError", Msg: "maximum recursion depth exceeded", Err: ErrDepth}
	}
	left := p.tok(0)
	p.i++
	l, err := p.nud(left)
	if err != nil {
		return nil, err
	}
	for bp < bindingPower[p.cur()] {
		t := p.tok(0)
		switch t.typ {
		case "star", "not", "lbrace":
			return nil, p.parseErr(t, "invalid token")
		}
		p.i++
		if l, err = p.led(t.typ, l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (p *parser) nud(t token) (*node, error) {
	switch t.typ {
	case "literal":
		return nd("literal", t.value), nil
	case "unquoted_identifier":
		return nd("field", t.value), nil
	case "quoted_identifier":
		if p.cur() == "lparen" {
			n := p.tok(0)
			n.start = 0
			return nil, p.parseErr(n, "Quoted identifier not allowed for function names.")
		}
		return nd("field", t.value), nil
	case "star":
		var right *node
		if p.cur() == "rbracket" {
			right = identity()
		} else {
			var err error
			if right, err = p.projectionRHS(bindingPower["star"]); err != nil {
				return nil, err
			}
		}
		return nd("value_projection", nil, identity(), right), nil
	case "filter":
		return p.ledFilter(identity())
	case "lbrace":
		return p.multiSelectHash()
	case "lparen":
		e, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		return e, p.match("rparen")
	case "flatten":
		right, err := p.projectionRHS(bindingPower["flatten"])
		if err != nil {
			return nil, err
		}
		return nd("projection", nil, nd("flatten", nil, identity()), right), nil
	case "not":
		e, err := p.expression(bindingPower["not"])
		if err != nil {
			return nil, err
		}
		return nd("not_expression", nil, e), nil
	case "lbracket":
		switch {
		case p.cur() == "number" || p.cur() == "colon":
			right, err := p.indexExpression()
			if err != nil {
				return nil, err
			}
			return p.projectIfSlice(identity(), right)
		case p.cur() == "star" && p.tok(1).typ == "rbracket":
			p.i += 2
			right, err := p.projectionRHS(bindingPower["star"])
			if err != nil {
				return nil, err
			}
			return nd("projection", nil, identity(), right), nil
		}
		return p.multiSelectList()
	case "current":
		return nd("current", nil), nil
	case "expref":
		e, err := p.expression(bindingPower["expref"])
		if err != nil {
			return nil, err
		}
		return nd("expref", nil, e), nil
	case "eof":
		return nil, p.incomplete()
	}
	return nil, p.parseErr(t, "invalid token")
}

func (p *parser) led(typ string, left *node) (*node, error) {
	switch typ {
	case "dot":
		if p.cur() != "star" {
			right, err := p.dotRHS(bindingPower["dot"])
			if err != nil {
				return nil, err
			}
			if left.typ == "subexpression" {
				left.children = append(left.children, right)
				return left, nil
			}
			return nd("subexpression", nil, left, right), nil
		}
		p.i++
		right, err := p.projectionRHS(bindingPower["dot"])
		if err != nil {
			return nil, err
		}
		return nd("value_projection", nil, left, right), nil
	case "pipe", "or", "and":
		right, err := p.expression(bindingPower[typ])
		if err != nil {
			return nil, err
		}
		name := map[string]string{"pipe": "pipe", "or": "or_expression", "and": "and_expression"}[typ]
		return nd(name, nil, left, right), nil
	case "lparen":
		if left.typ != "field" {
			prev := p.tok(-2)
			return nil, p.parseErr(prev, fmt.Sprintf("Invalid function name '%s'", tokStr(prev.value)))
		}
		var args []*node
		for p.cur() != "rparen" {
			e, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if p.cur() == "comma" {
				if err := p.match("comma"); err != nil {
					return nil, err
				}
			}
			args = append(args, e)
		}
		if err := p.match("rparen"); err != nil {
			return nil, err
		}
		return nd("function_expression", left.value, args...), nil
	case "filter":
		return p.ledFilter(left)
	case "eq", "ne", "gt", "gte", "lt", "lte":
		right, err := p.expression(bindingPower[typ])
		if err != nil {
			return nil, err
		}
		return nd("comparator", typ, left, right), nil
	case "flatten":
		right, err := p.projectionRHS(bindingPower["flatten"])
		if err != nil {
			return nil, err
		}
		return nd("projection", nil, nd("flatten", nil, left), right), nil
	case "lbracket":
		if t := p.tok(0); t.typ == "number" || t.typ == "colon" {
			right, err := p.indexExpression()
			if err != nil {
				return nil, err
			}
			if left.typ == "index_expression" {
				left.children = append(left.children, right)
				return left, nil
			}
			return p.projectIfSlice(left, right)
		}
		if err := p.match("star"); err != nil {
			return nil, err
		}
		if err := p.match("rbracket"); err != nil {
			return nil, err
		}
		right, err := p.projectionRHS(bindingPower["star"])
		if err != nil {
			return nil, err
		}
		return nd("projection", nil, left, right), nil
	}
	return nil, p.parseErr(p.tok(-1), "invalid token")
}

func (p *parser) ledFilter(left *node) (*node, error) {
	cond, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if err := p.match("rbracket"); err != nil {
		return nil, err
	}
	var right *node
	if p.cur() == "flatten" {
		right = identity()
	} else if right, err = p.projectionRHS(bindingPower["filter"]); err != nil {
		return nil, err
	}
	return nd("filter_projection", nil, left, right, cond), nil
}

func (p *parser) indexExpression() (*node, error) {
	if p.tok(0).typ == "colon" || p.tok(1).typ == "colon" {
		return p.sliceExpression()
	}
	n := nd("index", p.tok(0).value)
	p.i++
	return n, p.match("rbracket")
}

func (p *parser) sliceExpression() (*node, error) {
	parts := [3]any{}
	idx := 0
	for p.cur() != "rbracket" && idx < 3 {
		switch p.cur() {
		case "colon":
			idx++
			if idx == 3 {
				return nil, p.parseErr(p.tok(0), "syntax error")
			}
			p.i++
		case "number":
			parts[idx] = p.tok(0).value
			p.i++
		default:
			return nil, p.parseErr(p.tok(0), "syntax error")
		}
	}
	if err := p.match("rbracket"); err != nil {
		return nil, err
	}
	return nd("slice", parts[:]), nil
}

func (p *parser) projectIfSlice(left, right *node) (*node, error) {
	ie := nd("index_expression", nil, left, right)
	if right.typ != "slice" {
		return ie, nil
	}
	rhs, err := p.projectionRHS(bindingPower["star"])
	if err != nil {
		return nil, err
	}
	return nd("projection", nil, ie, rhs), nil
}

func (p *parser) multiSelectList() (*node, error) {
	var exprs []*node
	for {
		e, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		exprs = append(exprs, e)
		if p.cur() == "rbracket" {
			break
		}
		if err := p.match("comma"); err != nil {
			return nil, err
		}
	}
	if err := p.match("rbracket"); err != nil {
		return nil, err
	}
	return nd("multi_select_list", nil, exprs...), nil
}

func (p *parser) multiSelectHash() (*node, error) {
	var pairs []*node
	for {
		key := p.tok(0)
		if key.typ != "quoted_identifier" && key.typ != "unquoted_identifier" {
			return nil, p.errMaybeEOF("['quoted_identifier', 'unquoted_identifier']", key)
		}
		p.i++
		if err := p.match("colon"); err != nil {
			return nil, err
		}
		v, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, nd("key_val_pair", key.value, v))
		if p.cur() == "comma" {
			p.i++
		} else if p.cur() == "rbrace" {
			p.i++
			break
		}
	}
	return nd("multi_select_dict", nil, pairs...), nil
}

func (p *parser) projectionRHS(bp int) (*node, error) {
	switch c := p.cur(); {
	case bindingPower[c] < projectionStop:
		return identity(), nil
	case c == "lbracket" || c == "filter":
		return p.expression(bp)
	case c == "dot":
		p.i++
		return p.dotRHS(bp)
	}
	return nil, p.parseErr(p.tok(0), "syntax error")
}

func (p *parser) dotRHS(bp int) (*node, error) {
	switch p.cur() {
	case "quoted_identifier", "unquoted_identifier", "star":
		return p.expression(bp)
	case "lbracket":
		p.i++
		return p.multiSelectList()
	case "lbrace":
		p.i++
		return p.multiSelectHash()
	}
	t := p.tok(0)
	return nil, p.parseErr(t, "Expecting: ['quoted_identifier', 'unquoted_identifier', 'lbracket', 'lbrace'], got: "+t.typ)
}

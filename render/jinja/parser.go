package jinja

import (
	"fmt"
	"strings"
	"unicode"
)

// Parser parses a token stream into a template tree. Extension tags get
// it to parse their arguments and bodies.
type Parser struct {
	toks     []token
	i        int
	name     string
	env      *Environment
	endStack [][]string
	tagStack []string
	depth    int
	// loops counts the for bodies around the statement being parsed
	// inside the current macro (Jinja2 compiles a macro to a Python
	// function, so a loop outside it does not count)
	loops int
}

// maxParseDepth bounds expression nesting (the parser's recursion).
const maxParseDepth = 400

func (p *Parser) enter() error {
	p.depth++
	if p.depth > maxParseDepth {
		return p.fail(p.cur().line, "expression nested too deeply")
	}
	return nil
}

func (p *Parser) cur() token  { return p.toks[p.i] }
func (p *Parser) peek() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *Parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *Parser) fail(line int, format string, args ...any) error {
	return &Error{Kind: "TemplateSyntaxError", Msg: fmt.Sprintf(format, args...), Name: p.name, Line: line}
}

func (p *Parser) isOp(op string) bool { t := p.cur(); return t.kind == tOp && t.val == op }
func (p *Parser) isName(n string) bool {
	t := p.cur()
	return t.kind == tName && t.val == n
}
func (p *Parser) skipOp(op string) bool {
	if p.isOp(op) {
		p.next()
		return true
	}
	return false
}

// SkipName consumes the name n if it is the current token.
func (p *Parser) SkipName(n string) bool {
	if p.isName(n) {
		p.next()
		return true
	}
	return false
}

func describeExpect(kind tokKind, val string) string {
	if kind == tName || kind == tOp {
		return val
	}
	return tokNames[kind]
}

func (p *Parser) expect(kind tokKind, val string) (token, error) {
	t := p.cur()
	if t.kind != kind || (val != "" && t.val != val) {
		exp := describeExpect(kind, val)
		if t.kind == tEOF {
			return t, p.fail(t.line, "unexpected end of template, expected %s.", pyStrRepr(exp))
		}
		return t, p.fail(t.line, "expected token %s, got %s", pyStrRepr(exp), pyStrRepr(t.describe()))
	}
	return p.next(), nil
}

// ExpectName consumes a name token and returns it.
func (p *Parser) ExpectName() (string, error) {
	t, err := p.expect(tName, "")
	return t.val, err
}

// ExpectBlockEnd consumes the end of the current statement.
func (p *Parser) ExpectBlockEnd() error {
	_, err := p.expect(tBlockEnd, "")
	return err
}

// AtBlockEnd reports whether the current token ends the statement.
func (p *Parser) AtBlockEnd() bool { return p.cur().kind == tBlockEnd }

// Line is the current token's line.
func (p *Parser) Line() int { return p.cur().line }

func (p *Parser) parseTemplate() ([]Node, error) {
	return p.subparse(nil)
}

// subparse parses nodes until one of the end tags (a block starting with
// one of those names); the end tag's name is left current.
func (p *Parser) subparse(endTags []string) ([]Node, error) {
	var body []Node
	if endTags != nil {
		p.endStack = append(p.endStack, endTags)
		defer func() { p.endStack = p.endStack[:len(p.endStack)-1] }()
	}
	for {
		t := p.cur()
		switch t.kind {
		case tData:
			body = append(body, &dataNode{pos{t.line}, t.val})
			p.next()
		case tVarBegin:
			p.next()
			x, err := p.parseTuple(false, true, nil, false)
			if err != nil {
				return nil, err
			}
			if _, err := p.expect(tVarEnd, ""); err != nil {
				return nil, err
			}
			body = append(body, &printNode{pos: pos{t.line}, X: x})
		case tBlockBegin:
			p.next()
			if endTags != nil && p.cur().kind == tName {
				for _, e := range endTags {
					if p.cur().val == e {
						return body, nil
					}
				}
			}
			n, err := p.parseStatement()
			if err != nil {
				return nil, err
			}
			if n != nil {
				body = append(body, n)
			}
		case tEOF:
			if endTags != nil {
				return nil, p.eofError(nil, "", t.line)
			}
			return body, nil
		default:
			return nil, p.fail(t.line, "internal parser error")
		}
	}
}

func (p *Parser) eofError(extra []string, unknown string, line int) error {
	stack := p.endStack
	if extra != nil {
		stack = append(stack[:len(stack):len(stack)], extra)
	}
	expected := map[string]bool{}
	for _, s := range stack {
		for _, e := range s {
			expected[e] = true
		}
	}
	var msg []string
	if unknown == "" {
		msg = append(msg, "Unexpected end of template.")
	} else {
		msg = append(msg, fmt.Sprintf("Encountered unknown tag %s.", pyStrRepr(unknown)))
	}
	if len(stack) > 0 {
		var q []string
		for _, e := range stack[len(stack)-1] {
			q = append(q, pyStrRepr(e))
		}
		looking := strings.Join(q, " or ")
		if unknown != "" && expected[unknown] {
			msg = append(msg, "You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for "+looking+".")
		} else {
			msg = append(msg, "Jinja was looking for the following tags: "+looking+".")
		}
	}
	if len(p.tagStack) > 0 {
		msg = append(msg, fmt.Sprintf("The innermost block that needs to be closed is %s.", pyStrRepr(p.tagStack[len(p.tagStack)-1])))
	}
	return p.fail(line, "%s", strings.Join(msg, " "))
}

// ParseBody parses statements up to one of the end tags; with drop the
// end tag name is consumed too. It returns the body and the end tag seen.
func (p *Parser) ParseBody(endTags []string, drop bool) ([]Node, string, error) {
	body, err := p.subparse(endTags)
	if err != nil {
		return nil, "", err
	}
	end := p.cur().val
	if drop {
		p.next()
	}
	return body, end, nil
}

var builtinStatements = map[string]bool{"for": true, "if": true, "block": true, "extends": true, "print": true, "macro": true, "include": true, "from": true, "import": true, "set": true, "with": true, "autoescape": true}

func (p *Parser) parseStatement() (Node, error) {
	t := p.cur()
	if t.kind != tName {
		return nil, p.fail(t.line, "tag name expected")
	}
	pushed := false
	if builtinStatements[t.val] || p.env.tags[t.val] != nil || t.val == "call" || t.val == "filter" || t.val == "do" {
		p.tagStack = append(p.tagStack, t.val)
		pushed = true
	}
	defer func() {
		if pushed {
			p.tagStack = p.tagStack[:len(p.tagStack)-1]
		}
	}()
	var n Node
	var err error
	switch t.val {
	case "if":
		n, err = p.parseIf()
	case "for":
		n, err = p.parseFor()
	case "set":
		n, err = p.parseSet()
	case "macro":
		n, err = p.parseMacro()
	case "call":
		n, err = p.parseCallBlock()
	case "filter":
		n, err = p.parseFilterBlock()
	case "with":
		n, err = p.parseWith()
	case "do":
		p.next()
		var x Expr
		x, err = p.parseTuple(false, true, nil, false)
		n = &doNode{pos{t.line}, x}
	case "break", "continue":
		p.next()
		if p.loops == 0 {
			// Jinja2 emits the Python statement; Python refuses to
			// compile it outside a loop
			msg := "'break' outside loop"
			if t.val == "continue" {
				msg = "'continue' not properly in loop"
			}
			return nil, &Error{Kind: "SyntaxError", Msg: msg, Line: t.line}
		}
		n = &loopCtlNode{pos{t.line}, t.val == "break"}
	case "include":
		n, err = p.parseInclude()
	case "import":
		n, err = p.parseImport()
	case "from":
		n, err = p.parseFrom()
	case "extends":
		p.next()
		var x Expr
		x, err = p.parseExpression(true)
		n = &extendsNode{pos: pos{t.line}, Template: x}
	case "block":
		n, err = p.parseBlock()
	case "print":
		p.next()
		var items []Expr
		for p.cur().kind != tBlockEnd {
			if len(items) > 0 {
				if _, err := p.expect(tOp, ","); err != nil {
					return nil, err
				}
			}
			x, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			items = append(items, x)
		}
		out := &outputNode{pos: pos{t.line}}
		for _, x := range items {
			out.Items = append(out.Items, &printNode{pos: pos{t.line}, X: x})
		}
		n = out
	case "autoescape":
		p.next()
		ae, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if err := p.ExpectBlockEnd(); err != nil {
			return nil, err
		}
		body, _, err := p.ParseBody([]string{"endautoescape"}, true)
		if err != nil {
			return nil, err
		}
		return &scopeNode{pos{t.line}, ae, body}, p.ExpectBlockEnd()
	default:
		if fn := p.env.tags[t.val]; fn != nil {
			p.next()
			var node Node
			node, err = fn(p, t.line)
			if err != nil {
				return nil, err
			}
			return node, p.ExpectBlockEnd()
		}
		p.tagStack = p.tagStack[:len(p.tagStack)-boolInt(pushed)]
		pushed = false
		return nil, p.eofError(nil, t.val, t.line)
	}
	if err != nil {
		return nil, err
	}
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	return n, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *Parser) parseIf() (Node, error) {
	line := p.next().line
	test, err := p.parseTuple(false, false, nil, false)
	if err != nil {
		return nil, err
	}
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	node := &ifNode{pos: pos{line}, Test: test}
	cur := node
	for {
		body, end, err := p.ParseBody([]string{"elif", "else", "endif"}, true)
		if err != nil {
			return nil, err
		}
		cur.Body = body
		switch end {
		case "elif":
			l := p.cur().line
			test, err := p.parseTuple(false, false, nil, false)
			if err != nil {
				return nil, err
			}
			if err := p.ExpectBlockEnd(); err != nil {
				return nil, err
			}
			node.Elifs = append(node.Elifs, ifNode{pos: pos{l}, Test: test})
			cur = &node.Elifs[len(node.Elifs)-1]
			continue
		case "else":
			if err := p.ExpectBlockEnd(); err != nil {
				return nil, err
			}
			body, _, err := p.ParseBody([]string{"endif"}, true)
			if err != nil {
				return nil, err
			}
			node.Else = body
		}
		return node, nil
	}
}

func (p *Parser) parseFor() (Node, error) {
	line := p.next().line
	target, err := p.parseAssignTarget([]string{"in"}, false, false)
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tName, "in"); err != nil {
		return nil, err
	}
	iter, err := p.parseTuple(false, false, []string{"recursive"}, false)
	if err != nil {
		return nil, err
	}
	n := &forNode{pos: pos{line}, Target: target, Iter: iter}
	if p.SkipName("if") {
		if n.Test, err = p.parseExpression(true); err != nil {
			return nil, err
		}
	}
	n.Recursive = p.SkipName("recursive")
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	p.loops++
	body, end, err := p.ParseBody([]string{"endfor", "else"}, true)
	p.loops--
	if err != nil {
		return nil, err
	}
	n.Body = body
	if end == "else" {
		if err := p.ExpectBlockEnd(); err != nil {
			return nil, err
		}
		if n.Else, _, err = p.ParseBody([]string{"endfor"}, true); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (p *Parser) parseSet() (Node, error) {
	line := p.next().line
	target, err := p.parseAssignTarget(nil, true, true)
	if err != nil {
		return nil, err
	}
	if p.skipOp("=") {
		x, err := p.parseTuple(false, true, nil, false)
		if err != nil {
			return nil, err
		}
		return &setNode{pos{line}, target, x}, nil
	}
	f, err := p.parseFilterChain(nil)
	if err != nil {
		return nil, err
	}
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	body, _, err := p.ParseBody([]string{"endset"}, true)
	if err != nil {
		return nil, err
	}
	// the caller expects the block end next: fake by stepping back is not
	// possible, so the end tag's block end is left for parseStatement.
	return &setBlockNode{pos{line}, target, f, body}, nil
}

// parseFilterChain parses "|f(a)|g" chains (or "f|g" when the leading pipe
// is absent, as in filter blocks) on top of x.
func (p *Parser) parseFilterChain(x Expr) (*filterExpr, error) {
	var last *filterExpr
	first := true
	for p.isOp("|") || (first && x == nil && p.cur().kind == tName && !p.AtBlockEnd() && last == nil && false) {
		p.next()
		f, err := p.parseFilterName(x)
		if err != nil {
			return nil, err
		}
		x, last = f, f
		first = false
	}
	return last, nil
}

func (p *Parser) parseFilterName(x Expr) (*filterExpr, error) {
	t, err := p.expect(tName, "")
	if err != nil {
		return nil, err
	}
	name := t.val
	for p.isOp(".") {
		p.next()
		n, err := p.expect(tName, "")
		if err != nil {
			return nil, err
		}
		name += "." + n.val
	}
	f := &filterExpr{pos: pos{t.line}, X: x, Name: name}
	if p.isOp("(") {
		a, err := p.parseCallArgs()
		if err != nil {
			return nil, err
		}
		f.callArgs = a
	}
	return f, nil
}

func (p *Parser) parseMacroSignature() ([]string, []Expr, error) {
	var args []string
	var defs []Expr
	if _, err := p.expect(tOp, "("); err != nil {
		return nil, nil, err
	}
	for !p.isOp(")") {
		if len(args) > 0 {
			if _, err := p.expect(tOp, ","); err != nil {
				return nil, nil, err
			}
			if p.isOp(")") {
				break
			}
		}
		t, err := p.expect(tName, "")
		if err != nil {
			return nil, nil, err
		}
		for _, a := range args {
			if a == t.val {
				// Python's compiler refuses the generated function
				return nil, nil, &Error{Kind: "SyntaxError", Msg: fmt.Sprintf("duplicate argument %s in function definition", pyStrRepr(a)), Name: p.name, Line: t.line}
			}
		}
		args = append(args, t.val)
		if p.skipOp("=") {
			d, err := p.parseExpression(true)
			if err != nil {
				return nil, nil, err
			}
			defs = append(defs, d)
		} else if len(defs) > 0 {
			return nil, nil, p.fail(t.line, "non-default argument follows default argument")
		}
	}
	p.next()
	return args, defs, nil
}

func (p *Parser) parseMacro() (Node, error) {
	line := p.next().line
	name, err := p.ExpectName()
	if err != nil {
		return nil, err
	}
	args, defs, err := p.parseMacroSignature()
	if err != nil {
		return nil, err
	}
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	loops := p.loops
	p.loops = 0
	body, _, err := p.ParseBody([]string{"endmacro"}, true)
	p.loops = loops
	if err != nil {
		return nil, err
	}
	return &macroNode{pos{line}, name, args, defs, body}, nil
}

func (p *Parser) parseCallBlock() (Node, error) {
	line := p.next().line
	n := &callBlockNode{pos: pos{line}}
	if p.isOp("(") {
		var err error
		if n.Args, n.Defaults, err = p.parseMacroSignature(); err != nil {
			return nil, err
		}
	}
	x, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	c, ok := x.(*callExpr)
	if !ok {
		return nil, p.fail(line, "expected call")
	}
	n.Call = c
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	loops := p.loops
	p.loops = 0
	n.Body, _, err = p.ParseBody([]string{"endcall"}, true)
	p.loops = loops
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (p *Parser) parseFilterBlock() (Node, error) {
	line := p.next().line
	f, err := p.parseFilterName(nil)
	if err != nil {
		return nil, err
	}
	if g, err := p.parseFilterChain(f); err != nil {
		return nil, err
	} else if g != nil {
		f = g
	}
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	body, _, err := p.ParseBody([]string{"endfilter"}, true)
	if err != nil {
		return nil, err
	}
	return &filterBlockNode{pos{line}, f, body}, nil
}

func (p *Parser) parseWith() (Node, error) {
	line := p.next().line
	n := &withNode{pos: pos{line}}
	for !p.AtBlockEnd() {
		if len(n.Targets) > 0 {
			if _, err := p.expect(tOp, ","); err != nil {
				return nil, err
			}
		}
		t, err := p.parseAssignTarget(nil, false, false)
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tOp, "="); err != nil {
			return nil, err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		n.Targets = append(n.Targets, t)
		n.Values = append(n.Values, v)
	}
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	body, _, err := p.ParseBody([]string{"endwith"}, true)
	if err != nil {
		return nil, err
	}
	n.Body = body
	return n, nil
}

func (p *Parser) parseContext(def bool) bool {
	if (p.isName("with") || p.isName("without")) && p.peek().kind == tName && p.peek().val == "context" {
		with := p.next().val == "with"
		p.next()
		return with
	}
	return def
}

func (p *Parser) parseInclude() (Node, error) {
	line := p.next().line
	x, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	n := &includeNode{pos: pos{line}, Template: x}
	if p.isName("ignore") && p.peek().kind == tName && p.peek().val == "missing" {
		p.next()
		p.next()
		n.IgnoreMissing = true
	}
	n.WithContext = p.parseContext(true)
	return n, nil
}

func (p *Parser) parseImport() (Node, error) {
	line := p.next().line
	x, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tName, "as"); err != nil {
		return nil, err
	}
	name, err := p.ExpectName()
	if err != nil {
		return nil, err
	}
	return &importNode{pos{line}, x, name, p.parseContext(false)}, nil
}

func (p *Parser) parseFrom() (Node, error) {
	line := p.next().line
	x, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tName, "import"); err != nil {
		return nil, err
	}
	n := &fromImportNode{pos: pos{line}, Template: x}
	for {
		if len(n.Names) > 0 {
			if !p.skipOp(",") {
				break
			}
		}
		if p.cur().kind != tName {
			break
		}
		if (p.isName("with") || p.isName("without")) && p.peek().kind == tName && p.peek().val == "context" {
			break
		}
		t := p.next()
		if strings.HasPrefix(t.val, "_") {
			return nil, &Error{Kind: "TemplateAssertionError", Msg: "names starting with an underline can not be imported", Name: p.name, Line: t.line}
		}
		alias := t.val
		if p.SkipName("as") {
			if alias, err = p.ExpectName(); err != nil {
				return nil, err
			}
		}
		n.Names = append(n.Names, t.val)
		n.Aliases = append(n.Aliases, alias)
	}
	if len(n.Names) == 0 && !p.isName("with") && !p.isName("without") {
		if _, err := p.expect(tName, ""); err != nil {
			return nil, err
		}
	}
	n.WithContext = p.parseContext(false)
	return n, nil
}

func (p *Parser) parseBlock() (Node, error) {
	line := p.next().line
	name, err := p.ExpectName()
	if err != nil {
		return nil, err
	}
	n := &blockNode{pos: pos{line}, Name: name}
	n.Scoped = p.SkipName("scoped")
	n.Required = p.SkipName("required")
	if err := p.ExpectBlockEnd(); err != nil {
		return nil, err
	}
	if n.Body, _, err = p.ParseBody([]string{"endblock"}, true); err != nil {
		return nil, err
	}
	if n.Required {
		if err := p.checkRequiredBody(n.Body); err != nil {
			return nil, err
		}
	}
	if p.cur().kind == tName {
		if p.cur().val != name {
			return nil, p.fail(p.cur().line, "expected token 'end of statement block', got %s", pyStrRepr(p.cur().val))
		}
		p.next()
	}
	return n, nil
}

// parseAssignTarget parses a name, a namespace attribute (ns.x) or a
// tuple of names.
func (p *Parser) parseAssignTarget(extraEnd []string, withTuple, withNamespace bool) (Expr, error) {
	t := p.cur()
	if withNamespace && t.kind == tName && p.peek().kind == tOp && p.peek().val == "." {
		p.next()
		p.next()
		attr, err := p.ExpectName()
		if err != nil {
			return nil, err
		}
		return &nsRefExpr{pos{t.line}, t.val, attr}, nil
	}
	var x Expr
	var err error
	if withTuple || extraEnd != nil {
		x, err = p.parseTuple(true, false, extraEnd, false)
	} else {
		var n token
		n, err = p.expect(tName, "")
		x = &nameExpr{pos{n.line}, n.val}
	}
	if err != nil {
		return nil, err
	}
	if !canAssign(x) {
		return nil, p.fail(t.line, "can't assign to %s", pyStrRepr(strings.ToLower(nodeTypeName(x))))
	}
	return x, nil
}

func canAssign(x Expr) bool {
	switch v := x.(type) {
	case *nameExpr:
		switch v.Name {
		case "true", "false", "none", "True", "False", "None":
			return false
		}
		return true
	case *tupleExpr:
		for _, i := range v.Items {
			if !canAssign(i) {
				return false
			}
		}
		return true
	}
	return false
}

func nodeTypeName(x Expr) string {
	switch x.(type) {
	case *constExpr:
		return "Const"
	case *callExpr:
		return "Call"
	case *getattrExpr:
		return "Getattr"
	case *getitemExpr:
		return "Getitem"
	case *listExpr:
		return "List"
	}
	return strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", x), "*jinja."), "Expr")
}

// ParseExpression parses one expression (with conditional expressions).
func (p *Parser) ParseExpression() (Expr, error) { return p.parseExpression(true) }

func (p *Parser) parseExpression(withCond bool) (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	var x Expr
	var err error
	if withCond {
		x, err = p.parseCondExpr()
	} else {
		x, err = p.parseOr()
	}
	if err != nil {
		return nil, err
	}
	return foldRewrite(x), nil
}

func (p *Parser) parseCondExpr() (Expr, error) {
	line := p.cur().line
	x, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.SkipName("if") {
		test, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var els Expr
		if p.SkipName("else") {
			if els, err = p.parseCondExpr(); err != nil {
				return nil, err
			}
		}
		x = &condExpr{pos{line}, test, x, els}
	}
	return x, nil
}

func (p *Parser) parseOr() (Expr, error) {
	line := p.cur().line
	x, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.SkipName("or") {
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{line}, "or", x, r}
	}
	return x, nil
}

func (p *Parser) parseAnd() (Expr, error) {
	line := p.cur().line
	x, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.SkipName("and") {
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{line}, "and", x, r}
	}
	return x, nil
}

func (p *Parser) parseNot() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if p.isName("not") {
		line := p.next().line
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{pos{line}, "not", x}, nil
	}
	return p.parseCompare()
}

func (p *Parser) parseCompare() (Expr, error) {
	line := p.cur().line
	x, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	var ops []string
	var rest []Expr
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == "<=" || t.val == ">" || t.val == ">="):
			op = t.val
			p.next()
		case t.kind == tName && t.val == "in":
			op = "in"
			p.next()
		case t.kind == tName && t.val == "not" && p.peek().kind == tName && p.peek().val == "in":
			op = "notin"
			p.next()
			p.next()
		}
		if op == "" {
			break
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		rest = append(rest, r)
	}
	if len(ops) == 0 {
		return x, nil
	}
	return &compareExpr{pos{line}, x, ops, rest}, nil
}

func (p *Parser) parseBinLevel(ops []string, next func() (Expr, error)) (Expr, error) {
	line := p.cur().line
	x, err := next()
	if err != nil {
		return nil, err
	}
	for {
		t := p.cur()
		matched := ""
		if t.kind == tOp {
			for _, o := range ops {
				if t.val == o {
					matched = o
				}
			}
		}
		if matched == "" {
			return x, nil
		}
		p.next()
		r, err := next()
		if err != nil {
			return nil, err
		}
		x = &binExpr{pos{line}, matched, x, r}
	}
}

func (p *Parser) parseMath1() (Expr, error) {
	return p.parseBinLevel([]string{"+", "-"}, p.parseConcat)
}

func (p *Parser) parseConcat() (Expr, error) {
	line := p.cur().line
	x, err := p.parseMath2()
	if err != nil {
		return nil, err
	}
	if !p.isOp("~") {
		return x, nil
	}
	items := []Expr{x}
	for p.skipOp("~") {
		r, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		items = append(items, r)
	}
	return &concatExpr{pos{line}, items}, nil
}

func (p *Parser) parseMath2() (Expr, error) {
	return p.parseBinLevel([]string{"*", "/", "//", "%"}, p.parsePow)
}

func (p *Parser) parsePow() (Expr, error) {
	return p.parseBinLevel([]string{"**"}, func() (Expr, error) { return p.parseUnary(true) })
}

func (p *Parser) parseUnary(withFilter bool) (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	t := p.cur()
	var x Expr
	var err error
	if t.kind == tOp && (t.val == "-" || t.val == "+") {
		p.next()
		inner, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		x = &unaryExpr{pos{t.line}, t.val, inner}
	} else {
		if x, err = p.parsePrimary(); err != nil {
			return nil, err
		}
	}
	if x, err = p.parsePostfix(x); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(x)
	}
	return x, nil
}

func (p *Parser) parsePrimary() (Expr, error) {
	t := p.cur()
	switch t.kind {
	case tName:
		p.next()
		switch t.val {
		case "true", "True":
			return &constExpr{pos{t.line}, true}, nil
		case "false", "False":
			return &constExpr{pos{t.line}, false}, nil
		case "none", "None":
			return &constExpr{pos{t.line}, nil}, nil
		}
		return &nameExpr{pos{t.line}, t.val}, nil
	case tString:
		p.next()
		s := t.val
		for p.cur().kind == tString {
			s += p.next().val
		}
		return &constExpr{pos{t.line}, s}, nil
	case tInt, tFloat:
		p.next()
		return &constExpr{pos{t.line}, t.num}, nil
	case tOp:
		switch t.val {
		case "(":
			p.next()
			x, err := p.parseTuple(false, true, nil, true)
			if err != nil {
				return nil, err
			}
			if _, err := p.expect(tOp, ")"); err != nil {
				return nil, err
			}
			return x, nil
		case "[":
			return p.parseList()
		case "{":
			return p.parseDict()
		}
	}
	if t.kind == tEOF || t.kind == tBlockEnd || t.kind == tVarEnd {
		if t.kind == tEOF {
			return nil, p.fail(t.line, "unexpected end of template")
		}
	}
	return nil, p.fail(t.line, "unexpected %s", pyStrRepr(t.describe()))
}

// parseTuple parses a comma-separated expression list: a tuple when
// there is a comma (or explicit parentheses around nothing), else the one
// expression.
func (p *Parser) parseTuple(simplified, withCond bool, extraEnd []string, explicitParens bool) (Expr, error) {
	line := p.cur().line
	parse := func() (Expr, error) {
		if simplified {
			return p.parsePrimary()
		}
		return p.parseExpression(withCond)
	}
	var items []Expr
	isTuple := false
	for {
		if len(items) > 0 {
			if !p.skipOp(",") {
				break
			}
		}
		if p.isTupleEnd(extraEnd) {
			break
		}
		x, err := parse()
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if p.isOp(",") {
			isTuple = true
		} else {
			break
		}
	}
	if !isTuple {
		if len(items) > 0 {
			return items[0], nil
		}
		if !explicitParens {
			return nil, p.fail(p.cur().line, "Expected an expression, got %s", pyStrRepr(p.cur().describe()))
		}
	}
	return &tupleExpr{pos{line}, items}, nil
}

func (p *Parser) isTupleEnd(extra []string) bool {
	t := p.cur()
	if t.kind == tVarEnd || t.kind == tBlockEnd || (t.kind == tOp && t.val == ")") {
		return true
	}
	for _, e := range extra {
		if t.kind == tName && t.val == e {
			return true
		}
	}
	return false
}

func (p *Parser) parseList() (Expr, error) {
	line := p.next().line
	var items []Expr
	for !p.isOp("]") {
		if len(items) > 0 {
			if _, err := p.expect(tOp, ","); err != nil {
				return nil, err
			}
			if p.isOp("]") {
				break
			}
		}
		x, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		items = append(items, x)
	}
	p.next()
	return &listExpr{pos{line}, items}, nil
}

func (p *Parser) parseDict() (Expr, error) {
	line := p.next().line
	d := &dictExpr{pos: pos{line}}
	for !p.isOp("}") {
		if len(d.Keys) > 0 {
			if _, err := p.expect(tOp, ","); err != nil {
				return nil, err
			}
			if p.isOp("}") {
				break
			}
		}
		k, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tOp, ":"); err != nil {
			return nil, err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		d.Keys = append(d.Keys, k)
		d.Vals = append(d.Vals, v)
	}
	p.next()
	return d, nil
}

func (p *Parser) parsePostfix(x Expr) (Expr, error) {
	for {
		var err error
		switch {
		case p.isOp(".") || p.isOp("["):
			x, err = p.parseSubscript(x)
		case p.isOp("("):
			x, err = p.parseCall(x)
		default:
			return x, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *Parser) parseFilterExpr(x Expr) (Expr, error) {
	for {
		var err error
		switch {
		case p.isOp("|"):
			p.next()
			x, err = p.parseFilterName(x)
		case p.isName("is"):
			x, err = p.parseTest(x)
		case p.isOp("("):
			x, err = p.parseCall(x)
		default:
			return x, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *Parser) parseSubscript(x Expr) (Expr, error) {
	t := p.next()
	if t.val == "." {
		a := p.next()
		switch a.kind {
		case tName:
			return &getattrExpr{pos{t.line}, x, a.val}, nil
		case tInt:
			return &getitemExpr{pos{t.line}, x, &constExpr{pos{a.line}, a.num}}, nil
		}
		return nil, p.fail(a.line, "expected name or number")
	}
	var args []Expr
	for !p.isOp("]") {
		if len(args) > 0 {
			// no trailing comma: Jinja2 then fails on the "]"
			if _, err := p.expect(tOp, ","); err != nil {
				return nil, err
			}
		}
		a, err := p.parseSubscribed()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	if _, err := p.expect(tOp, "]"); err != nil {
		return nil, err
	}
	if len(args) == 1 {
		return &getitemExpr{pos{t.line}, x, args[0]}, nil
	}
	return &getitemExpr{pos{t.line}, x, &tupleExpr{pos{t.line}, args}}, nil
}

func (p *Parser) parseSubscribed() (Expr, error) {
	line := p.cur().line
	var parts [3]Expr
	if p.isOp(":") {
		p.next()
	} else {
		x, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if !p.isOp(":") {
			return x, nil
		}
		p.next()
		parts[0] = x
	}
	if !p.isOp("]") && !p.isOp(",") && !p.isOp(":") {
		x, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		parts[1] = x
	}
	if p.skipOp(":") {
		if !p.isOp("]") && !p.isOp(",") {
			x, err := p.parseExpression(true)
			if err != nil {
				return nil, err
			}
			parts[2] = x
		}
	}
	return &sliceExpr{pos{line}, parts[0], parts[1], parts[2]}, nil
}

func (p *Parser) parseCallArgs() (callArgs, error) {
	var a callArgs
	t, err := p.expect(tOp, "(")
	if err != nil {
		return a, err
	}
	first := true
	for !p.isOp(")") {
		if !first {
			if _, err := p.expect(tOp, ","); err != nil {
				return a, err
			}
			if p.isOp(")") {
				break
			}
		}
		first = false
		switch {
		case p.isOp("*"):
			p.next()
			if a.DynArgs != nil || a.DynKwarg != nil {
				return a, p.fail(t.line, "invalid syntax for function call expression")
			}
			if a.DynArgs, err = p.parseExpression(true); err != nil {
				return a, err
			}
		case p.isOp("**"):
			p.next()
			if a.DynKwarg != nil {
				return a, p.fail(t.line, "invalid syntax for function call expression")
			}
			if a.DynKwarg, err = p.parseExpression(true); err != nil {
				return a, err
			}
		case p.cur().kind == tName && p.peek().kind == tOp && p.peek().val == "=":
			if a.DynKwarg != nil {
				return a, p.fail(t.line, "invalid syntax for function call expression")
			}
			nt := p.next()
			name := nt.val
			p.next()
			v, err := p.parseExpression(true)
			if err != nil {
				return a, err
			}
			for _, n := range a.KwNames {
				if n == name {
					// Jinja2 parses it; Python refuses to compile the
					// generated call (a SyntaxError, not Jinja's own)
					return a, &Error{Kind: "SyntaxError", Msg: "keyword argument repeated: " + name, Line: nt.line}
				}
			}
			a.KwNames = append(a.KwNames, name)
			a.KwVals = append(a.KwVals, v)
		default:
			if a.DynArgs != nil || a.DynKwarg != nil || len(a.KwNames) > 0 {
				return a, p.fail(t.line, "invalid syntax for function call expression")
			}
			v, err := p.parseExpression(true)
			if err != nil {
				return a, err
			}
			a.Args = append(a.Args, v)
		}
	}
	p.next()
	return a, nil
}

func (p *Parser) parseCall(x Expr) (Expr, error) {
	line := p.cur().line
	a, err := p.parseCallArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{pos{line}, x, a}, nil
}

func (p *Parser) parseTest(x Expr) (Expr, error) {
	line := p.next().line
	negated := p.SkipName("not")
	t, err := p.expect(tName, "")
	if err != nil {
		return nil, err
	}
	name := t.val
	for p.isOp(".") {
		p.next()
		n, err := p.ExpectName()
		if err != nil {
			return nil, err
		}
		name += "." + n
	}
	te := &testExpr{pos: pos{line}, X: x, Name: name}
	c := p.cur()
	switch {
	case c.kind == tOp && c.val == "(":
		if te.callArgs, err = p.parseCallArgs(); err != nil {
			return nil, err
		}
	case c.kind == tString || c.kind == tInt || c.kind == tFloat || (c.kind == tOp && (c.val == "[" || c.val == "{")) ||
		(c.kind == tName && c.val != "else" && c.val != "or" && c.val != "and"):
		if c.kind == tName && c.val == "is" {
			return nil, p.fail(c.line, "You cannot chain multiple tests with is")
		}
		arg, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if arg, err = p.parsePostfix(arg); err != nil {
			return nil, err
		}
		te.Args = []Expr{arg}
	}
	var out Expr = te
	if negated {
		out = &unaryExpr{pos{line}, "not", te}
	}
	return out, nil
}

// Errorf returns a syntax error at the current token.
func (p *Parser) Errorf(format string, args ...any) error {
	return p.fail(p.cur().line, format, args...)
}

// ExpectKeyword consumes the name token kw ("as", "import", ...) with
// Jinja2's error when it is missing.
func (p *Parser) ExpectKeyword(kw string) error {
	_, err := p.expect(tName, kw)
	return err
}

// checkRequiredBody is Jinja2's rule that a required block holds only
// whitespace (comments are gone by now): other output is a syntax error;
// a statement makes Jinja2's own check fail on it (an AttributeError, as
// it looks for the statement's output nodes).
func (p *Parser) checkRequiredBody(body []Node) error {
	for _, n := range body {
		switch x := n.(type) {
		case *dataNode:
			if strings.TrimFunc(x.Text, pyIsSpace) == "" {
				continue
			}
		case *printNode:
		default:
			return &Error{Kind: "AttributeError", Msg: fmt.Sprintf("'%s' object has no attribute 'nodes'", stmtTypeName(n)), Name: p.name, Line: n.nodeLine()}
		}
		return p.fail(n.nodeLine(), "Required blocks can only contain comments or whitespace")
	}
	return nil
}

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(c rune) bool {
	return unicode.IsSpace(c) || (c >= 0x1c && c <= 0x1f)
}

// stmtTypeName is the jinja2.nodes class of a statement.
func stmtTypeName(n Node) string {
	switch n.(type) {
	case *ifNode:
		return "If"
	case *forNode:
		return "For"
	case *setNode:
		return "Assign"
	case *setBlockNode:
		return "AssignBlock"
	case *macroNode:
		return "Macro"
	case *callBlockNode:
		return "CallBlock"
	case *filterBlockNode:
		return "FilterBlock"
	case *withNode:
		return "With"
	case *blockNode:
		return "Block"
	case *includeNode:
		return "Include"
	case *importNode:
		return "Import"
	case *fromImportNode:
		return "FromImport"
	case *doNode:
		return "ExprStmt"
	case *scopeNode:
		return "Scope"
	}
	return "Node"
}

package target

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// TargetInfo is one parsed compound word (salt.utils.minions.parse_target).
type TargetInfo struct {
	// Engine is one of G P I J L N S E R, or "" for a plain glob word.
	Engine string
	// Delimiter is the optional one-character delimiter of G@, P@, I@, J@
	// ("G;@a;b"), or "".
	Delimiter string
	// Pattern is what follows the '@' (the whole word when Engine is "").
	Pattern string
}

const compoundEngines = "GPIJLNSER"

// ParseTarget splits a compound word like Salt's TARGET_REX:
// (engine)(delimiter, only after G/P/I/J)?@ followed by a non-empty
// pattern; anything else is a glob word.
func ParseTarget(word string) TargetInfo {
	if len(word) >= 2 && strings.IndexByte(compoundEngines, word[0]) >= 0 {
		e := word[:1]
		if strings.IndexByte("GPIJ", word[0]) >= 0 {
			r, size := utf8.DecodeRuneInString(word[1:])
			if r != '\n' && len(word) > 1+size && word[1+size] == '@' {
				if p, ok := lineRest(word[2+size:]); ok {
					return TargetInfo{Engine: e, Delimiter: word[1 : 1+size], Pattern: p}
				}
			}
		}
		if word[1] == '@' {
			if p, ok := lineRest(word[2:]); ok {
				return TargetInfo{Engine: e, Pattern: p}
			}
		}
	}
	if p, ok := lineRest(word); ok {
		return TargetInfo{Pattern: p}
	}
	return TargetInfo{Pattern: word}
}

// lineRest applies Python's `(.+)$` (no DOTALL): at least one character,
// no newline, except that $ also matches before one final newline.
func lineRest(s string) (string, bool) {
	if strings.HasSuffix(s, "\n") {
		if t := s[:len(s)-1]; t != "" && !strings.Contains(t, "\n") {
			return t, true
		}
	}
	if s != "" && !strings.Contains(s, "\n") {
		return s, true
	}
	return "", false
}

func isOper(w string) bool {
	switch w {
	case "and", "or", "not", "(", ")":
		return true
	}
	return false
}

type ngState struct {
	groups map[string]any
	skip   map[string]bool
	total  int
	err    error
}

func (st *ngState) fail(err error) {
	if st.err == nil {
		st.err = err
	}
}

// NodegroupComp expands a nodegroup like salt.utils.minions.nodegroup_comp:
// nested N@ references are expanded in place and parenthesised; a group
// whose definition has no operators, wildcards or engine prefixes becomes a
// single "L@a,b,c" word (or "E@..." when a member contains regex
// characters); a top-level group without nested groups is returned as its
// words. Unknown groups, recursion and bad definitions expand to nothing
// (Salt logs them); the first such problem is returned as the error next to
// the (partial) expansion.
func NodegroupComp(name string, nodegroups map[string]any) ([]string, error) {
	st := &ngState{groups: nodegroups, skip: map[string]bool{}}
	out := st.comp(name, true)
	if st.total > maxCompoundWords {
		return nil, fmt.Errorf("%w: nodegroup %q expands to more than %d words", ErrTooComplex, name, maxCompoundWords)
	}
	return out, st.err
}

func (st *ngState) comp(name string, first bool) []string {
	if st.total > maxCompoundWords {
		return nil
	}
	if st.skip[name] {
		st.fail(fmt.Errorf("%w: %q", ErrNodegroupRecursion, name))
		return nil
	}
	def, ok := st.groups[name]
	if !ok {
		st.fail(fmt.Errorf("%w: %q", ErrUnknownNodegroup, name))
		return nil
	}
	var words []string
	if s, ok := def.(string); ok {
		words = pySplit(s)
	} else if l, ok := asList(def); ok {
		words = make([]string, len(l))
		for i, w := range l {
			words[i] = pyfmt.Str(w)
		}
	} else {
		st.fail(fmt.Errorf("%w: %q is %T", ErrInvalidNodegroup, name, def))
		return nil
	}
	st.skip[name] = true
	defer delete(st.skip, name)
	var ret []string
	expanded := false
	for _, w := range words {
		switch {
		case isOper(w):
			ret = append(ret, w)
		case len(w) >= 3 && strings.HasPrefix(w, "N@"):
			expanded = true
			ret = append(ret, st.comp(w[2:], false)...)
		default:
			ret = append(ret, w)
		}
		st.total++
		if st.total > maxCompoundWords {
			return nil
		}
	}
	if len(ret) > 0 {
		ret = append(append([]string{"("}, ret...), ")")
	}
	st.total += len(ret)
	if expanded || !first {
		if !first {
			if j := nodegroupAsList(words); j != nil {
				return j
			}
		}
		return ret
	}
	if j := nodegroupAsList(words); j != nil {
		return j
	}
	return words
}

// nodegroupAsList is Salt's _nodegroup_regex.
func nodegroupAsList(words []string) []string {
	for _, w := range words {
		if isOper(w) {
			return nil
		}
	}
	for _, w := range words {
		if strings.Contains(w, "*") || (len(w) >= 2 && w[0] >= 'A' && w[0] <= 'Z' && w[1] == '@') {
			return nil
		}
	}
	for _, w := range words {
		if strings.ContainsAny(w, "([{\\?}])") {
			return []string{"E@" + strings.Join(words, ",")}
		}
	}
	return []string{"L@" + strings.Join(words, ",")}
}

// ResolvePublishTarget does what LocalClient._prep_pub does before a
// publish: a nodegroup target becomes a compound one and every N@group word
// of a compound target is replaced by the group's expansion, so minions
// never need the nodegroups. Unknown groups are an error (Salt raises
// SaltInvocationError). Other target types are returned unchanged.
func ResolvePublishTarget(tgt any, tgtType string, nodegroups map[string]any) (any, string, error) {
	if tgtType == TypeNodegroup {
		name, ok := tgt.(string)
		if !ok {
			return nil, "", fmt.Errorf("%w: nodegroup target is %T, not a string", ErrInvalidTarget, tgt)
		}
		if _, ok := nodegroups[name]; !ok {
			return nil, "", fmt.Errorf("%w: %q", ErrUnknownNodegroup, name)
		}
		w, _ := NodegroupComp(name, nodegroups)
		tgt, tgtType = w, TypeCompound
	}
	if tgtType != TypeCompound {
		return tgt, tgtType, nil
	}
	words, err := toWords(tgt)
	if err != nil {
		return nil, "", unsoft(err)
	}
	out := make([]string, 0, len(words))
	for _, w := range words {
		if strings.HasPrefix(w, "N@") && len(w) > 2 {
			name := w[2:]
			if _, ok := nodegroups[name]; !ok {
				return nil, "", fmt.Errorf("%w: %q", ErrUnknownNodegroup, name)
			}
			exp, _ := NodegroupComp(name, nodegroups)
			out = append(out, exp...)
			if len(out) > maxCompoundWords {
				return nil, "", fmt.Errorf("%w: compound target", ErrTooComplex)
			}
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " "), TypeCompound, nil
}

// toWords splits a compound target: a string on Python whitespace, a
// sequence element by element (each must be a string).
func toWords(tgt any) ([]string, error) {
	switch t := tgt.(type) {
	case string:
		return pySplit(t), nil
	case []string:
		return append([]string(nil), t...), nil
	}
	l, ok := asList(tgt)
	if !ok {
		return nil, soft(fmt.Errorf("%w: compound target is %T, neither string nor list", ErrInvalidTarget, tgt))
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%w: compound word %d is %T, not a string", ErrInvalidTarget, i, e)
		}
		out[i] = s
	}
	return out, nil
}

// Boolean tokens of the minion-side compound expression.
type btok uint8

const (
	bTrue btok = iota
	bFalse
	bAnd
	bOr
	bNot
	bLParen
	bRParen
)

func operTok(w string) btok {
	switch w {
	case "and":
		return bAnd
	case "or":
		return bOr
	case "not":
		return bNot
	case "(":
		return bLParen
	}
	return bRParen
}

func (m *Matcher) compoundMatch(tgt any, mn Minion, exactPillar bool) (bool, error) {
	words, err := toWords(tgt)
	if err != nil {
		return false, err
	}
	return m.compoundWords(words, mn, exactPillar)
}

// compoundWords is compound_match.match: every word becomes True/False or an
// operator, a "not" that does not follow and/or/( gets an "and" before it,
// and the token string is evaluated as a Python boolean expression.
func (m *Matcher) compoundWords(words []string, mn Minion, exactPillar bool) (bool, error) {
	if len(words) > maxCompoundWords {
		return false, fmt.Errorf("%w: %d words", ErrTooComplex, len(words))
	}
	var results []btok
	var ngErr error
	fail := func(err error) (bool, error) {
		if ngErr != nil {
			return false, fmt.Errorf("%w (%w)", err, ngErr)
		}
		return false, err
	}
	processed := 0
	for len(words) > 0 {
		processed++
		if processed > maxCompoundWords {
			return false, fmt.Errorf("%w: more than %d words", ErrTooComplex, maxCompoundWords)
		}
		word := words[0]
		words = words[1:]
		if isOper(word) {
			if len(results) > 0 {
				last := results[len(results)-1]
				if last == bLParen && (word == "and" || word == "or") {
					return fail(fmt.Errorf("%w: %q right after \"(\"", ErrInvalidCompound, word))
				}
				if word == "not" && last != bAnd && last != bOr && last != bLParen {
					results = append(results, bAnd)
				}
			} else if word != "(" && word != "not" {
				return fail(fmt.Errorf("%w: starts with %q", ErrInvalidCompound, word))
			}
			results = append(results, operTok(word))
			continue
		}
		ti := ParseTarget(word)
		var r bool
		var err error
		switch ti.Engine {
		case "N":
			dec, nerr := NodegroupComp(ti.Pattern, mn.Nodegroups)
			if nerr != nil && ngErr == nil {
				ngErr = nerr
				m.logger().Debug("target: nodegroup expansion failed", "nodegroup", ti.Pattern, "err", nerr)
			}
			if len(dec) > 0 {
				if len(dec)+len(words) > maxCompoundWords {
					return false, fmt.Errorf("%w: nodegroup expansion", ErrTooComplex)
				}
				words = append(append([]string(nil), dec...), words...)
			}
			continue
		case "":
			r, err = m.globMatch(word, mn.ID)
		case "G", "P", "I", "J":
			delim := ti.Delimiter
			if delim == "" {
				delim = DefaultDelimiter
			}
			data, mode := mn.Grains, modeGlob
			switch ti.Engine {
			case "P":
				mode = modeRegex
			case "I":
				data = mn.Pillar
				if exactPillar {
					mode = modeExact
				}
			case "J":
				data, mode = mn.Pillar, modeRegex
				if exactPillar {
					mode = modeExact
				}
			}
			r, err = m.subdictTarget(ti.Pattern, data, delim, mode)
		case "L":
			r = listMatch(ti.Pattern, mn.ID)
		case "S":
			r, err = ipcidrMatch(ti.Pattern, mn.Grains)
		case "E":
			r, err = m.pcreMatch(ti.Pattern, mn.ID)
		default:
			return fail(fmt.Errorf("%w: %q in %q", ErrUnknownEngine, ti.Engine, word))
		}
		if err != nil {
			if !isSoft(err) {
				return fail(err)
			}
			m.logger().Debug("target: compound word does not match", "word", word, "err", err)
			r = false
		}
		if r {
			results = append(results, bTrue)
		} else {
			results = append(results, bFalse)
		}
	}
	v, err := evalBool(results)
	if err != nil {
		return fail(err)
	}
	if !v && ngErr != nil {
		return false, soft(ngErr)
	}
	return v, nil
}

// evalBool evaluates the token list as Python would eval() it: the
// expression is parsed first (a syntax error is ErrInvalidCompound), then
// evaluated with short-circuit and/or. Because "X (" is a call in Python,
// "True ( False )" parses; calling a bool is a TypeError, raised only if the
// call is actually evaluated ("True or True ( False )" is True).
func evalBool(toks []btok) (bool, error) {
	if len(toks) == 0 {
		return false, fmt.Errorf("%w: empty expression", ErrInvalidCompound)
	}
	p := boolParser{toks: toks}
	root, err := p.or()
	if err != nil {
		return false, err
	}
	if p.pos != len(p.toks) {
		return false, fmt.Errorf("%w: unexpected token at %d", ErrInvalidCompound, p.pos)
	}
	return p.eval(root)
}

type bnodeKind uint8

const (
	nLit   bnodeKind = iota // True/False
	nTuple                  // () — falsy
	nNot
	nAnd
	nOr
	nCall
)

type bnode struct {
	kind bnodeKind
	val  bool
	kids []int // indexes into boolParser.nodes
}

type boolParser struct {
	toks   []btok
	pos    int
	parens int
	nodes  []bnode
}

func (p *boolParser) add(n bnode) int {
	p.nodes = append(p.nodes, n)
	return len(p.nodes) - 1
}

func (p *boolParser) peek() (btok, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return 0, false
}

func (p *boolParser) or() (int, error) {
	return p.chain(bOr, nOr, p.and)
}

func (p *boolParser) and() (int, error) {
	return p.chain(bAnd, nAnd, p.not)
}

func (p *boolParser) chain(op btok, kind bnodeKind, next func() (int, error)) (int, error) {
	first, err := next()
	if err != nil {
		return 0, err
	}
	kids := []int{first}
	for {
		t, ok := p.peek()
		if !ok || t != op {
			break
		}
		p.pos++
		k, err := next()
		if err != nil {
			return 0, err
		}
		kids = append(kids, k)
	}
	if len(kids) == 1 {
		return first, nil
	}
	return p.add(bnode{kind: kind, kids: kids}), nil
}

func (p *boolParser) not() (int, error) {
	n := 0
	for {
		t, ok := p.peek()
		if !ok || t != bNot {
			break
		}
		p.pos++
		n++
	}
	v, err := p.primary()
	if err != nil {
		return 0, err
	}
	for ; n > 0; n-- {
		v = p.add(bnode{kind: nNot, kids: []int{v}})
	}
	return v, nil
}

// primary is an atom followed by any number of call trailers "( args )".
func (p *boolParser) primary() (int, error) {
	v, err := p.atom()
	if err != nil {
		return 0, err
	}
	for {
		t, ok := p.peek()
		if !ok || t != bLParen {
			return v, nil
		}
		p.pos++
		if err := p.open(); err != nil {
			return 0, err
		}
		kids := []int{v}
		if t, ok := p.peek(); !ok || t != bRParen {
			arg, err := p.or()
			if err != nil {
				return 0, err
			}
			kids = append(kids, arg)
		}
		if err := p.close(); err != nil {
			return 0, err
		}
		v = p.add(bnode{kind: nCall, kids: kids})
	}
}

func (p *boolParser) open() error {
	p.parens++
	if p.parens > maxParenDepth {
		return fmt.Errorf("%w: too many nested parentheses", ErrInvalidCompound)
	}
	return nil
}

func (p *boolParser) close() error {
	if t, ok := p.peek(); !ok || t != bRParen {
		return fmt.Errorf("%w: missing \")\"", ErrInvalidCompound)
	}
	p.pos++
	p.parens--
	return nil
}

func (p *boolParser) atom() (int, error) {
	t, ok := p.peek()
	if !ok {
		return 0, fmt.Errorf("%w: unexpected end", ErrInvalidCompound)
	}
	switch t {
	case bTrue, bFalse:
		p.pos++
		return p.add(bnode{kind: nLit, val: t == bTrue}), nil
	case bLParen:
		p.pos++
		if err := p.open(); err != nil {
			return 0, err
		}
		if n, ok := p.peek(); ok && n == bRParen {
			p.pos++
			p.parens--
			return p.add(bnode{kind: nTuple}), nil // "()" is an empty tuple: falsy
		}
		v, err := p.or()
		if err != nil {
			return 0, err
		}
		if err := p.close(); err != nil {
			return 0, err
		}
		return v, nil
	}
	return 0, fmt.Errorf("%w: unexpected token at %d", ErrInvalidCompound, p.pos)
}

// eval computes the truth value of node i (iteratively deep "not" chains
// and nested groups are bounded by the parser limits).
func (p *boolParser) eval(i int) (bool, error) {
	n := p.nodes[i]
	switch n.kind {
	case nLit:
		return n.val, nil
	case nTuple:
		return false, nil
	case nNot:
		v, err := p.eval(n.kids[0])
		return !v, err
	case nAnd:
		for _, k := range n.kids {
			v, err := p.eval(k)
			if err != nil || !v {
				return false, err
			}
		}
		return true, nil
	case nOr:
		for _, k := range n.kids {
			v, err := p.eval(k)
			if err != nil || v {
				return v, err
			}
		}
		return false, nil
	}
	// nCall: the callee (and argument) are evaluated, then the call fails.
	for _, k := range n.kids {
		if _, err := p.eval(k); err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("%w: object is not callable", ErrInvalidCompound)
}

package target

import (
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// CacheFunc returns a minion's cached grains and pillar (the master's
// minion data cache, cachedir/minions/<id>/data.p); ok is false when there
// is no cache entry for the minion.
type CacheFunc func(id string) (grains, pillar any, ok bool)

// CheckMinions computes the minions the master expects to answer, like
// CkMinions.check_minions. accepted is the universe (the accepted key
// names; names starting with "." are ignored as in Salt's directory scan).
// cache is the minion data cache; nil means minion_data_cache is off, in
// which case grain/pillar/ipcidr targets give every accepted minion when
// greedy (none otherwise) and compound/nodegroup targets give every
// accepted minion.
//
// With a cache, a minion without a cache entry is included when greedy.
// Results are in Salt's key-directory order (case-insensitive sort) except
// for list targets, which keep the order of the list; missing lists the
// names of a list target (or of L@ words not under "not") without accepted
// keys. A non-nil error comes with the result Salt would have produced
// (usually empty) and explains it.
func (m *Matcher) CheckMinions(tgt any, tgtType, delimiter string, accepted []string,
	cache func(id string) (grains, pillar any, ok bool), nodegroups map[string]any, greedy bool,
) (minions, missing []string, err error) {
	ck := &checker{m: m, cache: cache, nodegroups: nodegroups, greedy: greedy}
	ck.setUniverse(accepted)
	if tgt == nil {
		tgt = ""
	}
	if delimiter == "" {
		delimiter = DefaultDelimiter
	}
	var set map[string]bool
	switch tgtType {
	case "", TypeGlob:
		set, err = ck.glob(tgt)
	case TypePCRE:
		set, err = ck.pcre(tgt)
	case TypeList:
		minions, missing = ck.list(tgt, false)
		return minions, missing, nil
	case TypeGrain:
		set, err = ck.cacheMatch(tgt, delimiter, false, modeGlob)
	case TypeGrainPCRE:
		set, err = ck.cacheMatch(tgt, delimiter, false, modeRegex)
	case TypePillar:
		set, err = ck.cacheMatch(tgt, delimiter, true, modeGlob)
	case TypePillarPCRE:
		set, err = ck.cacheMatch(tgt, delimiter, true, modeRegex)
	case TypePillarExact:
		set, err = ck.cacheMatch(tgt, delimiter, true, modeExact)
	case TypeIPCIDR:
		set, err = ck.ipcidr(tgt)
	case TypeCompound:
		set, missing, err = ck.compound(tgt, false)
	case TypeCompoundPillarExact:
		set, missing, err = ck.compound(tgt, true)
	case TypeNodegroup:
		name, ok := tgt.(string)
		if !ok {
			return []string{}, []string{}, fmt.Errorf("%w: nodegroup target is %T, not a string", ErrInvalidTarget, tgt)
		}
		words, nerr := NodegroupComp(name, nodegroups)
		set, missing, err = ck.compoundWords(words, false)
		if nerr != nil && len(set) == 0 && (err == nil || isSoft(err)) {
			err = soft(nerr)
		}
	case TypeRange, TypeData:
		err = fmt.Errorf("%w: %s", ErrUnsupportedTargetType, tgtType)
	default:
		err = fmt.Errorf("%w: %q", ErrUnknownTargetType, tgtType)
	}
	if err != nil && !isSoft(err) {
		return []string{}, []string{}, err
	}
	if missing == nil {
		missing = []string{}
	}
	return ck.ordered(set), missing, unsoft(err)
}

type checker struct {
	m          *Matcher
	cache      CacheFunc
	nodegroups map[string]any
	greedy     bool
	universe   []string
	inUniverse map[string]bool
}

func (ck *checker) setUniverse(accepted []string) {
	ck.inUniverse = make(map[string]bool, len(accepted))
	var u []string
	for _, id := range accepted {
		if id == "" || strings.HasPrefix(id, ".") || ck.inUniverse[id] {
			continue
		}
		ck.inUniverse[id] = true
		u = append(u, id)
	}
	ck.universe = sortedIgnoreCase(u)
}

func (ck *checker) all() map[string]bool {
	out := make(map[string]bool, len(ck.universe))
	for _, id := range ck.universe {
		out[id] = true
	}
	return out
}

// ordered lists the members of set in universe order.
func (ck *checker) ordered(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for _, id := range ck.universe {
		if set[id] {
			out = append(out, id)
		}
	}
	return out
}

func (ck *checker) glob(tgt any) (map[string]bool, error) {
	s, ok := tgt.(string)
	if !ok {
		return nil, fmt.Errorf("%w: glob target is %T, not a string", ErrInvalidTarget, tgt)
	}
	c, err := ck.m.compile(kindGlob, s)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, id := range ck.universe {
		if c.re.MatchString(id) {
			out[id] = true
		}
	}
	return out, nil
}

func (ck *checker) pcre(tgt any) (map[string]bool, error) {
	s, ok := tgt.(string)
	if !ok {
		return nil, fmt.Errorf("%w: pcre target is %T, not a string", ErrInvalidTarget, tgt)
	}
	c, err := ck.m.compile(kindRegex, s)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, id := range ck.universe {
		r, err := c.match(id)
		if err != nil {
			return nil, err
		}
		if r {
			out[id] = true
		}
	}
	return out, nil
}

// list is _check_list_minions: names in list order, duplicates kept.
func (ck *checker) list(tgt any, ignoreMissing bool) (minions, missing []string) {
	var names []string
	if s, ok := tgt.(string); ok {
		for _, n := range strings.Split(s, ",") {
			if n != "" {
				names = append(names, n)
			}
		}
	} else if l, ok := asList(tgt); ok {
		for _, e := range l {
			names = append(names, pyfmt.Str(e))
		}
	}
	minions, missing = []string{}, []string{}
	for _, n := range names {
		if ck.inUniverse[n] {
			minions = append(minions, n)
		} else if !ignoreMissing {
			missing = append(missing, n)
		}
	}
	return minions, missing
}

// cacheMatch is _check_cache_minions.
func (ck *checker) cacheMatch(tgt any, delim string, pillar bool, mode matchMode) (map[string]bool, error) {
	out := map[string]bool{}
	if ck.cache == nil {
		if ck.greedy {
			return ck.all(), nil
		}
		return out, nil
	}
	expr, isStr := tgt.(string)
	for _, id := range ck.universe {
		grains, pil, ok := ck.cache(id)
		if !ok {
			if ck.greedy {
				out[id] = true
			}
			continue
		}
		if !isStr {
			return nil, fmt.Errorf("%w: target is %T, not a string", ErrInvalidTarget, tgt)
		}
		data := grains
		if pillar {
			data = pil
		}
		r, err := ck.m.subdictMatch(data, expr, delim, mode, 0, new(int))
		if err != nil {
			return nil, err
		}
		if r {
			out[id] = true
		}
	}
	return out, nil
}

// ipcidr is _check_ipcidr_minions.
func (ck *checker) ipcidr(tgt any) (map[string]bool, error) {
	if ck.cache == nil {
		if ck.greedy {
			return ck.all(), nil
		}
		return map[string]bool{}, nil
	}
	s, ok := tgt.(string)
	if !ok {
		return map[string]bool{}, soft(fmt.Errorf("%w: ipcidr target is %T, not a string", ErrInvalidTarget, tgt))
	}
	t, ok := parseIPTarget(s)
	if !ok {
		return map[string]bool{}, soft(fmt.Errorf("%w: invalid IP/CIDR %q", ErrInvalidTarget, s))
	}
	out := map[string]bool{}
	for _, id := range ck.universe {
		grains, _, ok := ck.cache(id)
		if !ok {
			if ck.greedy {
				out[id] = true
			}
			continue
		}
		r, err := t.matchGrains(grains)
		if err != nil {
			return nil, err
		}
		if r {
			out[id] = true
		}
	}
	return out, nil
}

func (ck *checker) compound(tgt any, exactPillar bool) (map[string]bool, []string, error) {
	words, err := toWords(tgt)
	if err != nil {
		return map[string]bool{}, nil, err
	}
	return ck.compoundWords(words, exactPillar)
}

// Set-expression tokens of the master-side compound evaluation.
type stokKind uint8

const (
	sSet stokKind = iota
	sAnd
	sOr
	sMinus
	sLParen
	sRParen
)

type stok struct {
	kind stokKind
	set  map[string]bool
}

// compoundWords is _check_compound_minions: each engine yields a set of
// minions, "not" becomes "(ALL - ...)", and the expression is evaluated
// with Python's set operators (| lowest, then &, then -).
func (ck *checker) compoundWords(words []string, exactPillar bool) (map[string]bool, []string, error) {
	if ck.cache == nil {
		return ck.all(), nil, nil
	}
	if len(words) > maxCompoundWords {
		return map[string]bool{}, nil, fmt.Errorf("%w: %d words", ErrTooComplex, len(words))
	}
	var results []stok
	var unmatched []byte // '(' or '-'
	var missing []string
	var ngErr error
	fail := func(format string, args ...any) (map[string]bool, []string, error) {
		err := fmt.Errorf("%w: "+format, append([]any{ErrInvalidCompound}, args...)...)
		if ngErr != nil {
			err = fmt.Errorf("%w (%w)", err, ngErr)
		}
		return map[string]bool{}, nil, soft(err)
	}
	closeNot := func() {
		if len(unmatched) > 0 && unmatched[len(unmatched)-1] == '-' {
			results = append(results, stok{kind: sRParen})
			unmatched = unmatched[:len(unmatched)-1]
		}
	}
	openNot := func() {
		results = append(results, stok{kind: sLParen}, stok{kind: sSet, set: ck.all()}, stok{kind: sMinus})
		unmatched = append(unmatched, '-')
	}
	processed := 0
	for len(words) > 0 {
		processed++
		if processed > maxCompoundWords {
			return map[string]bool{}, nil, fmt.Errorf("%w: more than %d words", ErrTooComplex, maxCompoundWords)
		}
		word := words[0]
		words = words[1:]
		if isOper(word) {
			if len(results) == 0 {
				switch word {
				case "not":
					openNot()
				case "(":
					results = append(results, stok{kind: sLParen})
					unmatched = append(unmatched, '(')
				default:
					return fail("starts with %q", word)
				}
				continue
			}
			last := results[len(results)-1].kind
			if last == sLParen && (word == "and" || word == "or") {
				return fail("%q right after \"(\"", word)
			}
			switch word {
			case "not":
				if last != sAnd && last != sOr && last != sLParen {
					results = append(results, stok{kind: sAnd})
				}
				openNot()
			case "and":
				results = append(results, stok{kind: sAnd})
			case "or":
				results = append(results, stok{kind: sOr})
			case "(":
				results = append(results, stok{kind: sLParen})
				unmatched = append(unmatched, '(')
			case ")":
				if len(unmatched) == 0 || unmatched[len(unmatched)-1] != '(' {
					return fail("unexpected right parenthesis")
				}
				results = append(results, stok{kind: sRParen})
				unmatched = unmatched[:len(unmatched)-1]
				closeNot()
			}
			continue
		}
		ti := ParseTarget(word)
		var set map[string]bool
		var err error
		switch ti.Engine {
		case "N":
			dec, nerr := NodegroupComp(ti.Pattern, ck.nodegroups)
			if nerr != nil && ngErr == nil {
				ngErr = nerr
			}
			if len(dec) > 0 {
				if len(dec)+len(words) > maxCompoundWords {
					return map[string]bool{}, nil, fmt.Errorf("%w: nodegroup expansion", ErrTooComplex)
				}
				words = append(append([]string(nil), dec...), words...)
			}
			continue
		case "":
			set, err = ck.glob(word)
		case "G", "P", "I", "J":
			delim := ti.Delimiter
			if delim == "" {
				delim = DefaultDelimiter
			}
			pillar, mode := false, modeGlob
			switch ti.Engine {
			case "P":
				mode = modeRegex
			case "I":
				pillar = true
				if exactPillar {
					mode = modeExact
				}
			case "J":
				pillar, mode = true, modeRegex
				if exactPillar {
					mode = modeExact
				}
			}
			set, err = ck.cacheMatch(ti.Pattern, delim, pillar, mode)
		case "L":
			ignore := len(results) > 0 && results[len(results)-1].kind == sMinus
			mins, miss := ck.list(ti.Pattern, ignore)
			set = make(map[string]bool, len(mins))
			for _, id := range mins {
				set[id] = true
			}
			missing = append(missing, miss...)
		case "S":
			set, err = ck.ipcidr(ti.Pattern)
		case "E":
			set, err = ck.pcre(ti.Pattern)
		case "R":
			// Salt calls _all_minions with one argument too many here, so any
			// R@ word makes check_minions fail and return nothing.
			return map[string]bool{}, nil, fmt.Errorf("%w: R@ (range) in compound target", ErrUnsupportedTargetType)
		}
		if err != nil {
			if !isSoft(err) {
				return map[string]bool{}, nil, err
			}
			set = map[string]bool{}
		}
		results = append(results, stok{kind: sSet, set: set})
		closeNot()
	}
	for range unmatched {
		results = append(results, stok{kind: sRParen})
	}
	p := setParser{toks: results}
	v, err := p.parse()
	if err != nil {
		if ngErr != nil {
			err = fmt.Errorf("%w (%w)", err, ngErr)
		}
		return map[string]bool{}, nil, soft(err)
	}
	if ngErr != nil && len(v) == 0 {
		return v, missing, soft(ngErr)
	}
	return v, missing, nil
}

// setParser evaluates the set expression; "()" is an empty tuple, which
// only survives as the whole expression (any operator on it is a TypeError).
type setParser struct {
	toks   []stok
	pos    int
	parens int
}

type setVal struct {
	set   map[string]bool
	tuple bool
}

func (p *setParser) parse() (map[string]bool, error) {
	if len(p.toks) == 0 {
		return nil, fmt.Errorf("%w: empty expression", ErrInvalidCompound)
	}
	v, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("%w: unexpected token at %d", ErrInvalidCompound, p.pos)
	}
	if v.tuple {
		return map[string]bool{}, nil
	}
	return v.set, nil
}

func (p *setParser) peek() (stokKind, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].kind, true
	}
	return 0, false
}

func errTypeOp() error {
	return fmt.Errorf("%w: unsupported operand type", ErrInvalidCompound)
}

func (p *setParser) binary(next func() (setVal, error), op stokKind, apply func(a, b map[string]bool) map[string]bool) (setVal, error) {
	v, err := next()
	if err != nil {
		return setVal{}, err
	}
	var typeErr bool
	for {
		k, ok := p.peek()
		if !ok || k != op {
			break
		}
		p.pos++
		r, err := next()
		if err != nil {
			return setVal{}, err
		}
		if v.tuple || r.tuple {
			typeErr = true
			continue
		}
		v = setVal{set: apply(v.set, r.set)}
	}
	if typeErr {
		return setVal{}, errTypeOp()
	}
	return v, nil
}

func (p *setParser) or() (setVal, error) {
	return p.binary(p.and, sOr, func(a, b map[string]bool) map[string]bool {
		out := make(map[string]bool, len(a)+len(b))
		for k := range a {
			out[k] = true
		}
		for k := range b {
			out[k] = true
		}
		return out
	})
}

func (p *setParser) and() (setVal, error) {
	return p.binary(p.minus, sAnd, func(a, b map[string]bool) map[string]bool {
		out := map[string]bool{}
		for k := range a {
			if b[k] {
				out[k] = true
			}
		}
		return out
	})
}

func (p *setParser) minus() (setVal, error) {
	return p.binary(p.unary, sMinus, func(a, b map[string]bool) map[string]bool {
		out := map[string]bool{}
		for k := range a {
			if !b[k] {
				out[k] = true
			}
		}
		return out
	})
}

func (p *setParser) unary() (setVal, error) {
	if k, ok := p.peek(); ok && k == sMinus {
		p.pos++
		if _, err := p.unary(); err != nil {
			return setVal{}, err
		}
		return setVal{}, errTypeOp() // -set is a TypeError
	}
	return p.atom()
}

func (p *setParser) atom() (setVal, error) {
	k, ok := p.peek()
	if !ok {
		return setVal{}, fmt.Errorf("%w: unexpected end", ErrInvalidCompound)
	}
	switch k {
	case sSet:
		p.pos++
		return setVal{set: p.toks[p.pos-1].set}, nil
	case sLParen:
		p.pos++
		p.parens++
		if p.parens > maxParenDepth {
			return setVal{}, fmt.Errorf("%w: too many nested parentheses", ErrInvalidCompound)
		}
		if n, ok := p.peek(); ok && n == sRParen {
			p.pos++
			p.parens--
			return setVal{tuple: true}, nil
		}
		v, err := p.or()
		if err != nil {
			return setVal{}, err
		}
		if n, ok := p.peek(); !ok || n != sRParen {
			return setVal{}, fmt.Errorf("%w: missing \")\"", ErrInvalidCompound)
		}
		p.pos++
		p.parens--
		return v, nil
	}
	return setVal{}, fmt.Errorf("%w: unexpected token at %d", ErrInvalidCompound, p.pos)
}

// Package target implements Salt 3006 target matching: the minion-side
// question "does this minion match tgt/tgt_type?" (salt/matchers/*.py) and
// the master-side question "which accepted minions are expected to answer?"
// (salt.utils.minions.CkMinions.check_minions).
//
// Grains and pillar are generic trees: map[string]any, map[any]any, any
// Mapper (an ordered dict such as wire/payload.Map), []any / []string /
// other slices, and scalars (string, []byte, bool, ints, uints, floats,
// nil). Scalars are compared through Python's str() of the value,
// lowercased: True is "true", None is "none", 1.0 is "1.0", 1e16 is
// "1e+16", []byte is "b'...'".
//
// Glob patterns follow Python's fnmatch (not path.Match). PCRE targets are
// Python regular expressions run with re.match semantics; they are
// translated to RE2 by TranslatePCRE, and constructs RE2 cannot run are
// reported with ErrUnsupportedRegex.
//
// Error convention: a non-nil error always comes with a false match (or an
// empty minion list on the master side), and names why: either a condition
// Salt itself logs and treats as "no match" (unknown nodegroup, invalid IP
// target, bad compound syntax), or one where gsalt cannot reproduce Salt
// (ErrUnsupportedRegex).
package target

import (
	"container/list"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/gsalt/gsalt/internal/py"
	"github.com/gsalt/gsalt/internal/pyfmt"
)

// Sentinel errors. Callers branch on them with errors.Is.
var (
	// ErrUnknownTargetType: the tgt_type has no matcher (Salt drops the job).
	ErrUnknownTargetType = errors.New("target: unknown target type")
	// ErrUnsupportedTargetType: a Salt target type whose backend gsalt does
	// not have (range needs seco.range; data needs the minion datastore).
	ErrUnsupportedTargetType = errors.New("target: target type not supported")
	// ErrInvalidTarget: tgt has the wrong type or shape for its tgt_type
	// (not a string, no delimiter in a grain target, unparsable IP/CIDR).
	ErrInvalidTarget = errors.New("target: invalid target")
	// ErrInvalidCompound: the compound expression does not evaluate (Salt's
	// eval() raises, or an operator is misplaced).
	ErrInvalidCompound = errors.New("target: invalid compound expression")
	// ErrUnknownEngine: a compound word names an engine that is not
	// available (R@ without seco.range).
	ErrUnknownEngine = errors.New("target: unknown compound engine")
	// ErrUnsupportedRegex: a Python regular expression uses syntax that RE2
	// cannot run (look-around, backreferences, ...). The result is unknown.
	ErrUnsupportedRegex = errors.New("target: regular expression not supported by RE2")
	// ErrInvalidRegex: the pattern is not a valid Python regular expression.
	ErrInvalidRegex = errors.New("target: invalid regular expression")
	// ErrInvalidPattern: an fnmatch pattern cannot be compiled (Python's
	// fnmatch would raise re.error).
	ErrInvalidPattern = py.ErrBadPattern
	// ErrUnknownNodegroup: N@name or a nodegroup target names no group.
	ErrUnknownNodegroup = errors.New("target: unknown nodegroup")
	// ErrNodegroupRecursion: a nodegroup includes itself, directly or not.
	ErrNodegroupRecursion = errors.New("target: recursive nodegroup")
	// ErrInvalidNodegroup: a nodegroup definition is neither a string nor a list.
	ErrInvalidNodegroup = errors.New("target: invalid nodegroup definition")
	// ErrTooComplex: the expression exceeds gsalt's size limits.
	ErrTooComplex = errors.New("target: expression too large")
	// ErrInvalidAddress: a minion's ipv4/ipv6 grain holds something that is
	// not an IP address (Python raises ValueError).
	ErrInvalidAddress = errors.New("target: invalid address in grains")
)

// Target types (the tgt_type strings of a publish load).
const (
	TypeGlob                = "glob"
	TypePCRE                = "pcre"
	TypeList                = "list"
	TypeGrain               = "grain"
	TypeGrainPCRE           = "grain_pcre"
	TypePillar              = "pillar"
	TypePillarPCRE          = "pillar_pcre"
	TypePillarExact         = "pillar_exact"
	TypeIPCIDR              = "ipcidr"
	TypeCompound            = "compound"
	TypeCompoundPillarExact = "compound_pillar_exact"
	TypeNodegroup           = "nodegroup"
	TypeRange               = "range"
	TypeData                = "data"
)

// DefaultDelimiter is Salt's DEFAULT_TARGET_DELIM.
const DefaultDelimiter = ":"

// Limits.
const (
	// DefaultCacheSize is the number of compiled patterns a Matcher keeps.
	DefaultCacheSize = 1024
	// maxCachedPattern: longer patterns are compiled but not cached.
	maxCachedPattern = 4096
	// maxDepth bounds recursion over grain/pillar trees.
	maxDepth = 512
	// maxReprLen bounds the Python str() rendering of one value (bytes).
	maxReprLen = pyfmt.MaxLen
	// maxSubdictSteps bounds the comparisons of one subdict match
	// ("*:*:*:..." patterns over wide trees are exponential in Salt too).
	maxSubdictSteps = 1 << 20
	// maxCompoundWords bounds the words a compound expression (after
	// nodegroup expansion) may have.
	maxCompoundWords = 20000
	// maxParenDepth is CPython's parser limit on nested parentheses.
	maxParenDepth = 200
)

// Options configures a Matcher.
type Options struct {
	// CacheSize is the number of compiled patterns kept (LRU);
	// 0 means DefaultCacheSize, a negative value disables the cache.
	CacheSize int
	// Logger receives debug/warning records; nil means slog.Default().
	Logger *slog.Logger
}

// Matcher evaluates targets. It holds a bounded LRU cache of compiled glob
// and regex patterns and is safe for concurrent use. The zero value is
// ready to use with default options.
type Matcher struct {
	log  *slog.Logger
	size int

	mu    sync.Mutex
	ll    *list.List
	items map[cacheKey]*list.Element

	lists listSets
}

type cacheKey struct {
	kind uint8
	pat  string
}

const (
	kindGlob uint8 = iota
	kindRegex
)

type cacheEntry struct {
	key cacheKey
	c   *compiled
	err error
}

// New returns a Matcher configured by opts.
func New(opts Options) *Matcher {
	size := opts.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	return &Matcher{log: opts.Logger, size: size}
}

func (m *Matcher) logger() *slog.Logger {
	if m.log != nil {
		return m.log
	}
	return slog.Default()
}

func (m *Matcher) compile(kind uint8, pat string) (*compiled, error) {
	size := m.size
	if size == 0 {
		size = DefaultCacheSize
	}
	cacheable := size > 0 && len(pat) <= maxCachedPattern
	key := cacheKey{kind, pat}
	if cacheable {
		m.mu.Lock()
		if el, ok := m.items[key]; ok {
			m.ll.MoveToFront(el)
			e := el.Value.(*cacheEntry)
			m.mu.Unlock()
			return e.c, e.err
		}
		m.mu.Unlock()
	}
	var c *compiled
	var err error
	if kind == kindGlob {
		c, err = compileFnmatch(pat)
	} else {
		c, err = compilePCRE(pat)
	}
	if !cacheable {
		return c, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = make(map[cacheKey]*list.Element)
		m.ll = list.New()
	}
	if el, ok := m.items[key]; ok {
		m.ll.MoveToFront(el)
		return c, err
	}
	m.items[key] = m.ll.PushFront(&cacheEntry{key: key, c: c, err: err})
	for m.ll.Len() > size {
		old := m.ll.Back()
		m.ll.Remove(old)
		delete(m.items, old.Value.(*cacheEntry).key)
	}
	return c, err
}

// cacheLen reports the number of cached patterns (for tests).
func (m *Matcher) cacheLen() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ll == nil {
		return 0
	}
	return m.ll.Len()
}

// Fnmatch is the package-level Fnmatch using the Matcher's pattern cache.
func (m *Matcher) Fnmatch(name, pattern string) bool {
	c, err := m.compile(kindGlob, pattern)
	if err != nil {
		return false
	}
	return c.re.MatchString(name)
}

// PCREMatch is Python's bool(re.match(pattern, s)): the pattern is anchored
// at the start of s only. Errors wrap ErrUnsupportedRegex or ErrInvalidRegex.
func (m *Matcher) PCREMatch(pattern, s string) (bool, error) {
	c, err := m.compile(kindRegex, pattern)
	if err != nil {
		return false, err
	}
	return c.match(s)
}

// Minion is what the minion-side matchers look at.
type Minion struct {
	// ID is the minion id (opts["id"]).
	ID string
	// Grains is the grains tree (opts["grains"]).
	Grains any
	// Pillar is the compiled pillar tree (opts["pillar"]).
	Pillar any
	// Nodegroups is the nodegroups configuration used to expand N@ words
	// and the nodegroup target type. Note that a real Salt minion never
	// passes nodegroups when it checks a published "nodegroup" target, so
	// such a publish matches nothing there; pass nil to reproduce that.
	Nodegroups map[string]any
}

// softError marks a condition Salt logs and treats as a false match
// without aborting an enclosing compound expression.
type softError struct{ err error }

func (e softError) Error() string { return e.err.Error() }
func (e softError) Unwrap() error { return e.err }

func soft(err error) error { return softError{err} }

func isSoft(err error) bool {
	var s softError
	return errors.As(err, &s)
}

func unsoft(err error) error {
	var s softError
	if errors.As(err, &s) {
		return s.err
	}
	return err
}

// Match reports whether the minion mn matches tgt for tgtType, like the
// minion's _target_load: "" means glob (a load without tgt_type). delimiter
// is honoured for grain, grain_pcre and pillar ("" means ":");
// pillar_pcre and pillar_exact always use ":", as in Salt.
//
// Supported types: glob, pcre, list (comma string or []string/[]any),
// grain, grain_pcre, pillar, pillar_pcre, pillar_exact, ipcidr, compound,
// compound_pillar_exact (compound with I@/J@ matched exactly; real Salt
// minions have no such matcher), nodegroup (expanded from mn.Nodegroups).
// range and data return ErrUnsupportedTargetType; anything else
// ErrUnknownTargetType.
func (m *Matcher) Match(tgt any, tgtType string, delimiter string, mn Minion) (bool, error) {
	ok, err := m.match(tgt, tgtType, delimiter, mn)
	if err != nil {
		return false, unsoft(err)
	}
	return ok, nil
}

func (m *Matcher) match(tgt any, tgtType, delimiter string, mn Minion) (bool, error) {
	if delimiter == "" {
		delimiter = DefaultDelimiter
	}
	switch tgtType {
	case "", TypeGlob:
		return m.globMatch(tgt, mn.ID)
	case TypePCRE:
		return m.pcreMatch(tgt, mn.ID)
	case TypeList:
		if l, ok := tgt.([]any); ok && len(l) >= listSetMin {
			return m.lists.lookup(l).has(mn.ID), nil
		}
		return listMatch(tgt, mn.ID), nil
	case TypeGrain:
		return m.subdictTarget(tgt, mn.Grains, delimiter, modeGlob)
	case TypeGrainPCRE:
		return m.subdictTarget(tgt, mn.Grains, delimiter, modeRegex)
	case TypePillar:
		return m.subdictTarget(tgt, mn.Pillar, delimiter, modeGlob)
	case TypePillarPCRE:
		return m.subdictTarget(tgt, mn.Pillar, DefaultDelimiter, modeRegex)
	case TypePillarExact:
		return m.subdictTarget(tgt, mn.Pillar, DefaultDelimiter, modeExact)
	case TypeIPCIDR:
		return ipcidrMatch(tgt, mn.Grains)
	case TypeCompound:
		return m.compoundMatch(tgt, mn, false)
	case TypeCompoundPillarExact:
		return m.compoundMatch(tgt, mn, true)
	case TypeNodegroup:
		return m.nodegroupMatch(tgt, mn)
	case TypeRange, TypeData:
		return false, fmt.Errorf("%w: %s", ErrUnsupportedTargetType, tgtType)
	}
	return false, fmt.Errorf("%w: %q", ErrUnknownTargetType, tgtType)
}

func (m *Matcher) globMatch(tgt any, id string) (bool, error) {
	s, ok := tgt.(string)
	if !ok {
		return false, soft(fmt.Errorf("%w: glob target is %T, not a string", ErrInvalidTarget, tgt))
	}
	c, err := m.compile(kindGlob, s)
	if err != nil {
		return false, err
	}
	return c.re.MatchString(id), nil
}

func (m *Matcher) pcreMatch(tgt any, id string) (bool, error) {
	s, ok := tgt.(string)
	if !ok {
		return false, fmt.Errorf("%w: pcre target is %T, not a string", ErrInvalidTarget, tgt)
	}
	return m.PCREMatch(s, id)
}

// listMatch is list_match.match: a comma string is searched for ",id,",
// "id," at the start, ",id" at the end or equality; a sequence (or dict)
// for membership.
func listMatch(tgt any, id string) bool {
	if s, ok := tgt.(string); ok {
		return strings.Contains(s, ","+id+",") || strings.HasPrefix(s, id+",") || strings.HasSuffix(s, ","+id) || s == id
	}
	if l, ok := asList(tgt); ok {
		for _, e := range l {
			if py.Equal(e, id) {
				return true
			}
		}
		return false
	}
	if d, ok := asDict(tgt); ok {
		return dictHasStr(d, id)
	}
	return false
}

func (m *Matcher) subdictTarget(tgt any, data any, delimiter string, mode matchMode) (bool, error) {
	s, ok := tgt.(string)
	if !ok {
		return false, soft(fmt.Errorf("%w: target is %T, not a string", ErrInvalidTarget, tgt))
	}
	if !strings.Contains(s, delimiter) {
		return false, soft(fmt.Errorf("%w: %q lacks the delimiter %q", ErrInvalidTarget, s, delimiter))
	}
	return m.subdictMatch(data, s, delimiter, mode, 0, new(int))
}

func (m *Matcher) nodegroupMatch(tgt any, mn Minion) (bool, error) {
	if len(mn.Nodegroups) == 0 {
		return false, soft(fmt.Errorf("%w: no nodegroups configured", ErrUnknownNodegroup))
	}
	name, ok := tgt.(string)
	if !ok {
		return false, fmt.Errorf("%w: nodegroup target is %T, not a string", ErrInvalidTarget, tgt)
	}
	if _, ok := mn.Nodegroups[name]; !ok {
		return false, soft(fmt.Errorf("%w: %q", ErrUnknownNodegroup, name))
	}
	words, err := NodegroupComp(name, mn.Nodegroups)
	ok, cerr := m.compoundWords(words, mn, false)
	if cerr != nil {
		return false, cerr
	}
	if !ok && err != nil {
		return false, soft(err)
	}
	return ok, nil
}

func compileFnmatch(pattern string) (*compiled, error) {
	re, err := py.CompileFnmatch(pattern)
	if err != nil {
		return nil, err
	}
	return &compiled{re: re, pattern: pattern}, nil
}

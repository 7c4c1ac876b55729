package target

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gsalt/gsalt/internal/pyfmt"
)

// MatchMode selects how SubdictMatch compares a value with the pattern.
type MatchMode uint8

type matchMode = MatchMode

// Match modes of SubdictMatch.
const (
	// ModeGlob compares with fnmatch (grain, pillar).
	ModeGlob MatchMode = iota
	// ModeRegex compares with re.match (grain_pcre, pillar_pcre).
	ModeRegex
	// ModeExact compares for string equality (pillar_exact).
	ModeExact
)

const (
	modeGlob  = ModeGlob
	modeRegex = ModeRegex
	modeExact = ModeExact
)

// SubdictMatch is salt.utils.data.subdict_match: expr is split on
// delimiter into a key path and a pattern, deeper key paths first (so the
// delimiter may also occur inside the value), "*" as the first key searches
// the whole tree, lists are searched member by member and scalars are
// compared through their lowercased Python str(). An empty delimiter means
// ":".
func (m *Matcher) SubdictMatch(data any, expr, delimiter string, mode MatchMode) (bool, error) {
	ok, err := m.subdictMatch(data, expr, delimiter, mode, 0, new(int))
	if err != nil {
		return false, unsoft(err)
	}
	return ok, nil
}

// Traverse is salt.utils.data.traverse_dict_and_list: it walks data along
// key split by delimiter, indexing lists by number (or looking into the
// dicts they contain) and retrying a missing dict key with its YAML-loaded
// form (so "80" finds an integer key 80). ok is false where Salt returns
// the default.
func Traverse(data any, key, delimiter string) (value any, ok bool) {
	if delimiter == "" {
		delimiter = DefaultDelimiter
	}
	return traverse(data, key, delimiter)
}

// errSubdictBudget reports an exhausted depth or step budget.
func errSubdictBudget(expr string) error {
	return fmt.Errorf("%w: subdict match of %q", ErrTooComplex, expr)
}

func (m *Matcher) subdictMatch(data any, expr, delim string, mode matchMode, depth int, steps *int) (bool, error) {
	*steps++
	if depth > maxDepth || *steps > maxSubdictSteps {
		return false, errSubdictBudget(expr)
	}
	if delim == "" {
		delim = DefaultDelimiter
	}
	splits := strings.Split(expr, delim)
	if len(splits) == 1 {
		return false, nil
	}
	for idx := len(splits) - 1; idx >= 1; idx-- {
		key := strings.Join(splits[:idx], delim)
		var matchstr string
		var found any
		if key == "*" {
			matchstr, found = expr, data
		} else {
			matchstr = strings.Join(splits[idx:], delim)
			v, ok := traverse(data, key, delim)
			if !ok {
				continue
			}
			found = v
		}
		if d, ok := asDict(found); ok {
			if dictEmpty(d) {
				continue
			}
			r, err := m.dictMatch(d, matchstr, mode, depth+1, steps)
			if err != nil || r {
				return r, err
			}
			continue
		}
		if l, ok := asList(found); ok {
			for _, member := range l {
				if md, ok := asDict(member); ok {
					r, err := m.dictMatch(md, matchstr, mode, depth+1, steps)
					if err != nil || r {
						return r, err
					}
				}
				r, err := m.scalarMatch(member, matchstr, mode)
				if err != nil || r {
					return r, err
				}
			}
			continue
		}
		r, err := m.scalarMatch(found, matchstr, mode)
		if err != nil || r {
			return r, err
		}
	}
	return false, nil
}

// dictMatch is subdict_match's inner _dict_match. Note that its recursive
// subdict_match call uses the default ":" delimiter, as in Salt.
func (m *Matcher) dictMatch(target dictView, pattern string, mode matchMode, depth int, steps *int) (bool, error) {
	*steps++
	if depth > maxDepth || *steps > maxSubdictSteps {
		return false, errSubdictBudget(pattern)
	}
	wildcard := strings.HasPrefix(pattern, "*:")
	if wildcard {
		pattern = pattern[2:]
	}
	if pattern == "*" || dictHasStr(target, pattern) {
		return true, nil
	}
	if r, err := m.subdictMatch(target, pattern, DefaultDelimiter, mode, depth+1, steps); err != nil || r {
		return r, err
	}
	if !wildcard {
		return false, nil
	}
	var res bool
	var rerr error
	target.rangeKV(func(_, v any) bool {
		if vd, ok := asDict(v); ok {
			res, rerr = m.dictMatch(vd, pattern, mode, depth+1, steps)
		} else if vl, ok := asList(v); ok {
			for _, item := range vl {
				*steps++
				if *steps > maxSubdictSteps {
					res, rerr = false, errSubdictBudget(pattern)
					break
				}
				res, rerr = m.scalarMatch(item, pattern, mode)
				if res || rerr != nil {
					break
				}
			}
		} else {
			res, rerr = m.scalarMatch(v, pattern, mode)
		}
		return !res && rerr == nil
	})
	return res, rerr
}

// scalarMatch is subdict_match's inner _match.
func (m *Matcher) scalarMatch(target any, pattern string, mode matchMode) (bool, error) {
	t := pyLower(pyfmt.Str(target))
	p := pyLower(pattern)
	switch mode {
	case modeExact:
		return t == p, nil
	case modeRegex:
		c, err := m.compile(kindRegex, p)
		if err != nil {
			if errors.Is(err, ErrUnsupportedRegex) {
				return false, err
			}
			// Salt logs "Invalid regex" and treats it as no match.
			m.logger().Debug("target: invalid regex in subdict match", "pattern", p, "err", err)
			return false, nil
		}
		return c.match(t)
	}
	c, err := m.compile(kindGlob, p)
	if err != nil {
		return false, nil
	}
	return c.re.MatchString(t), nil
}

func traverse(data any, key, delim string) (any, bool) {
	ptr := data
	for _, each := range strings.Split(key, delim) {
		if l, ok := asList(ptr); ok {
			idx, isInt, big := pyInt(each)
			found := false
			if !isInt {
				for _, e := range l {
					if d, ok := asDict(e); ok {
						if v, ok := d.get(each); ok {
							ptr, found = v, true
							break
						}
					}
				}
				if !found {
					return nil, false
				}
				continue
			}
			if big {
				return nil, false
			}
			for _, e := range l {
				if d, ok := asDict(e); ok {
					if v, ok := dictLookup(d, idx); ok {
						ptr, found = v, true
						break
					}
				}
			}
			if found {
				continue
			}
			i := idx
			if i < 0 {
				i += int64(len(l))
			}
			if i < 0 || i >= int64(len(l)) {
				return nil, false
			}
			ptr = l[i]
			continue
		}
		d, ok := asDict(ptr)
		if !ok {
			return nil, false
		}
		if v, ok := d.get(each); ok {
			ptr = v
			continue
		}
		loaded, changed := yamlifyKey(each)
		if !changed {
			return nil, false
		}
		v, ok := dictLookup(d, loaded)
		if !ok {
			return nil, false
		}
		ptr = v
	}
	return ptr, true
}

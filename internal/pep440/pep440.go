// Package pep440 parses and compares Python package versions as
// packaging.version (PEP 440) does, for pip's modules and states: epoch,
// release, pre-, post- and dev-releases and local labels. Versions that
// are not PEP 440 sort before every valid one, as legacy versions do.
package pep440

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var re = regexp.MustCompile(`^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)` +
	`(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d+)?)?` +
	`(?:-(\d+)|[-_.]?(post|rev|r)[-_.]?(\d+)?)?` +
	`(?:[-_.]?(dev)[-_.]?(\d+)?)?` +
	`(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$`)

// Version is a parsed version.
type Version struct {
	Valid   bool
	raw     string
	epoch   int64
	release []int64
	// pre: kind 0 none; -1 a, -2 b... stored as (phase, n), phase 1=a 2=b 3=rc
	prePhase, preN int64
	hasPre         bool
	post           int64
	hasPost        bool
	dev            int64
	hasDev         bool
	local          string
}

func num(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Parse parses s.
func Parse(s string) Version {
	m := re.FindStringSubmatch(strings.ToLower(s))
	if m == nil {
		return Version{raw: s}
	}
	v := Version{Valid: true, raw: s, epoch: num(m[1])}
	for _, p := range strings.Split(m[2], ".") {
		v.release = append(v.release, num(p))
	}
	for len(v.release) > 1 && v.release[len(v.release)-1] == 0 {
		v.release = v.release[:len(v.release)-1]
	}
	if m[3] != "" {
		v.hasPre = true
		switch m[3] {
		case "a", "alpha":
			v.prePhase = 1
		case "b", "beta":
			v.prePhase = 2
		default:
			v.prePhase = 3
		}
		v.preN = num(m[4])
	}
	if m[5] != "" || m[6] != "" {
		v.hasPost = true
		v.post = num(m[5] + m[7])
	}
	if m[8] != "" {
		v.hasDev = true
		v.dev = num(m[9])
	}
	v.local = m[10]
	return v
}

// Compare returns -1, 0 or 1 as a is less than, equal to or greater than b.
func Compare(a, b string) int {
	return Parse(a).Compare(Parse(b))
}

// Compare orders v against w.
func (v Version) Compare(w Version) int {
	if !v.Valid || !w.Valid {
		switch {
		case !v.Valid && !w.Valid:
			return cmp.Compare(v.raw, w.raw)
		case !v.Valid:
			return -1
		}
		return 1
	}
	if c := cmp.Compare(v.epoch, w.epoch); c != 0 {
		return c
	}
	if c := slices.Compare(v.release, w.release); c != 0 {
		return c
	}
	// Pre-release key: a dev release without pre/post sorts before all
	// pre-releases; no pre sorts after them.
	preKey := func(x Version) [2]int64 {
		switch {
		case !x.hasPre && !x.hasPost && x.hasDev:
			return [2]int64{-1, 0}
		case !x.hasPre:
			return [2]int64{9, 0}
		}
		return [2]int64{x.prePhase, x.preN}
	}
	pa, pb := preKey(v), preKey(w)
	if c := slices.Compare(pa[:], pb[:]); c != 0 {
		return c
	}
	postKey := func(x Version) int64 {
		if !x.hasPost {
			return -1
		}
		return x.post
	}
	if c := cmp.Compare(postKey(v), postKey(w)); c != 0 {
		return c
	}
	devKey := func(x Version) int64 {
		if !x.hasDev {
			return 1 << 62
		}
		return x.dev
	}
	if c := cmp.Compare(devKey(v), devKey(w)); c != 0 {
		return c
	}
	return cmp.Compare(v.local, w.local)
}

// Sort sorts versions ascending.
func Sort(vs []string) {
	slices.SortStableFunc(vs, Compare)
}

// Satisfies reports whether version satisfies "op spec" (==, !=, <, <=,
// >, >=, ~=, ===), with the prefix match of "==1.*".
func Satisfies(version, op, spec string) bool {
	v := Parse(version)
	if op == "===" {
		return version == spec
	}
	if (op == "==" || op == "!=") && strings.HasSuffix(spec, ".*") {
		pre := Parse(strings.TrimSuffix(spec, ".*"))
		match := v.Valid && v.epoch == pre.epoch && len(v.release) >= 0
		if match {
			rel := append([]int64{}, v.release...)
			for len(rel) < len(pre.release) {
				rel = append(rel, 0)
			}
			match = slices.Equal(rel[:len(pre.release)], pre.release)
		}
		return match == (op == "==")
	}
	c := v.Compare(Parse(spec))
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "~=":
		s := Parse(spec)
		if c < 0 || len(s.release) < 1 {
			return false
		}
		n := max(len(s.release)-1, 1)
		rel := append([]int64{}, v.release...)
		for len(rel) < n {
			rel = append(rel, 0)
		}
		sr := append([]int64{}, s.release...)
		for len(sr) < n {
			sr = append(sr, 0)
		}
		return slices.Equal(rel[:n], sr[:n])
	}
	return false
}

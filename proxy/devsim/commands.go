package devsim

import (
	"regexp"
	"strconv"
	"strings"
)

// cmdSpec is one exec command. Words are keywords (matched by unique prefix), "<arg>" (one
// word), "<args>" (one or more words to the end) or "<args?>" (zero or more words).
type cmdSpec struct {
	words []string
	priv  bool // only in privileged exec
	fault bool // subject to the hang/drop faults
	run   func(s *shell, args []string) string
	json  func(s *shell, args []string) string // EOS "| json" form, nil when unconverted
}

type failKind int

const (
	failNone failKind = iota
	failInvalid
	failIncomplete
	failAmbiguous
)

func isPlaceholder(w string) bool { return strings.HasPrefix(w, "<") }

func restIndex(sp *cmdSpec) (int, bool) {
	for i, w := range sp.words {
		if w == "<args>" {
			return i, false
		}
		if w == "<args?>" {
			return i, true
		}
	}
	return -1, false
}

// matchCommand finds the command toks names. On failure bad is the index of the offending word.
func matchCommand(specs []*cmdSpec, toks []tok, priv bool) (*cmdSpec, []string, failKind, int) {
	alive := make([]*cmdSpec, 0, len(specs))
	for _, sp := range specs {
		if priv || !sp.priv {
			alive = append(alive, sp)
		}
	}
	for k, t := range toks {
		lt := strings.ToLower(t.text)
		kw := map[string][]*cmdSpec{}
		var order []string
		var args []*cmdSpec
		for _, sp := range alive {
			if r, _ := restIndex(sp); r >= 0 && r < k {
				args = append(args, sp)
				continue
			}
			if k >= len(sp.words) {
				continue
			}
			w := sp.words[k]
			if isPlaceholder(w) {
				args = append(args, sp)
				continue
			}
			if strings.HasPrefix(w, lt) {
				if _, seen := kw[w]; !seen {
					order = append(order, w)
				}
				kw[w] = append(kw[w], sp)
			}
		}
		switch {
		case kw[lt] != nil:
			alive = kw[lt]
		case len(order) == 1:
			alive = kw[order[0]]
		case len(order) > 1:
			return nil, nil, failAmbiguous, k
		case len(args) > 0:
			alive = args
		default:
			return nil, nil, failInvalid, k
		}
	}
	n := len(toks)
	for _, sp := range alive {
		r, opt := restIndex(sp)
		complete := n == len(sp.words) && r < 0
		if r >= 0 {
			complete = n > r || (n == r && opt)
		}
		if !complete {
			continue
		}
		var args []string
		for i, t := range toks {
			if (r >= 0 && i >= r) || (i < len(sp.words) && isPlaceholder(sp.words[i])) {
				args = append(args, t.text)
			}
		}
		return sp, args, failNone, 0
	}
	return nil, nil, failIncomplete, n
}

// filter is one "| modifier regexp" output filter.
type filter struct {
	kind string
	re   *regexp.Regexp
}

// parseFilters parses the text after the first "|"; json reports a "| json" modifier. A "|"
// not followed by a filter keyword belongs to the previous filter's regular expression.
func parseFilters(p *platform, text string) (chain []filter, ok, json bool) {
	var segs []string
	for seg := range strings.SplitSeq(text, "|") {
		f := strings.Fields(seg)
		if len(segs) > 0 && (len(f) == 0 || !isFilterWord(p, f[0])) {
			segs[len(segs)-1] += "|" + seg
			continue
		}
		segs = append(segs, seg)
	}
	for _, seg := range segs {
		f := strings.Fields(seg)
		if len(f) == 0 {
			return nil, false, false
		}
		kind, ok := expandWord(f[0], p.filters)
		if !ok {
			return nil, false, false
		}
		switch kind {
		case "json":
			json = true
			continue
		case "no-more":
			continue
		case "count":
			if len(f) == 1 {
				chain = append(chain, filter{kind: kind, re: regexp.MustCompile("")})
				continue
			}
		}
		if len(f) < 2 {
			return nil, false, false
		}
		pat := strings.TrimSpace(strings.TrimSpace(seg)[len(f[0]):])
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, false, false
		}
		chain = append(chain, filter{kind: kind, re: re})
	}
	return chain, true, json
}

func isFilterWord(p *platform, w string) bool {
	_, ok := expandWord(w, p.filters)
	return ok
}

func applyFilters(chain []filter, out string) string {
	for _, f := range chain {
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		var b strings.Builder
		switch f.kind {
		case "include":
			for _, l := range lines {
				if f.re.MatchString(l) {
					b.WriteString(l + "\n")
				}
			}
		case "exclude":
			for _, l := range lines {
				if !f.re.MatchString(l) {
					b.WriteString(l + "\n")
				}
			}
		case "begin":
			on := false
			for _, l := range lines {
				on = on || f.re.MatchString(l)
				if on {
					b.WriteString(l + "\n")
				}
			}
		case "section":
			on := false
			for _, l := range lines {
				indented := strings.HasPrefix(l, " ")
				if !indented {
					on = f.re.MatchString(l)
				} else if !on && f.re.MatchString(l) {
					b.WriteString(l + "\n")
					continue
				}
				if on {
					b.WriteString(l + "\n")
				}
			}
		case "count":
			n := 0
			for _, l := range lines {
				if f.re.MatchString(l) {
					n++
				}
			}
			b.WriteString("Number of lines which match regexp = " + strconv.Itoa(n) + "\n")
		}
		out = b.String()
	}
	return out
}

package interop

import (
	"reflect"
	"testing"
	"unicode"
)

// randomMask is where a formula draws random values: the leaves of a
// decoded JSON value that differ between two runs of the same Salt call
// (a pillar.example using `range(1, 100000) | random`). TestFormulas
// masks these leaves, and only these, on both sides before comparing, so
// a formula that draws random values is compared "modulo random".
type randomMask []randomSpot

// randomSpot is one leaf that differs between two runs: its path (map
// keys and list indexes), and for a string the text around the drawn
// part, which stays compared.
type randomSpot struct {
	path           []any
	number         bool
	prefix, suffix string
}

// randomMarker replaces a masked value or the drawn part of a string.
const randomMarker = "<random>"

// findRandom compares two runs of the same call and returns the leaves
// that differ. Runs whose shapes differ (a map where the other has a
// list, lists of different lengths, keys missing) are not maskable: the
// differing subtree is left out, so it shows up as a difference.
func findRandom(a, b any) randomMask {
	var m randomMask
	var walk func(path []any, a, b any)
	walk = func(path []any, a, b any) {
		switch x := a.(type) {
		case map[string]any:
			y, ok := b.(map[string]any)
			if !ok {
				return
			}
			for k, v := range x {
				if w, ok := y[k]; ok {
					walk(append(path[:len(path):len(path)], k), v, w)
				}
			}
		case []any:
			y, ok := b.([]any)
			if !ok || len(x) != len(y) {
				return
			}
			for i := range x {
				walk(append(path[:len(path):len(path)], i), x[i], y[i])
			}
		case string:
			y, ok := b.(string)
			if !ok || x == y {
				return
			}
			p, s := tokenBounds(x, y)
			m = append(m, randomSpot{path: path, prefix: x[:p], suffix: x[len(x)-s:]})
		case float64:
			if y, ok := b.(float64); ok && x != y {
				m = append(m, randomSpot{path: path, number: true})
			}
		}
	}
	walk(nil, a, b)
	return m
}

// tokenBounds is the length of the common prefix and suffix of two
// different strings, cut back to the nearest non-alphanumeric character so
// that the drawn part is a whole word (12345 and 12399 differ in all five
// digits, not in the last two).
func tokenBounds(a, b string) (int, int) {
	word := func(c byte) bool { return c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))) }
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for p > 0 && word(a[p-1]) {
		p--
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for s > 0 && word(a[len(a)-s]) {
		s--
	}
	return p, s
}

// apply returns v with every spot masked where v has it: a number
// becomes randomMarker, a string with the spot's prefix and suffix has
// the part between them replaced. A leaf that does not fit its spot (a
// string with other text around it, a number where the runs had a
// string) is left as it is, so that it still differs.
func (m randomMask) apply(v any) any {
	for _, s := range m {
		v = s.mask(v, s.path)
	}
	return v
}

func (s randomSpot) mask(v any, path []any) any {
	if len(path) == 0 {
		switch x := v.(type) {
		case float64:
			if s.number {
				return randomMarker
			}
		case string:
			if !s.number && len(x) >= len(s.prefix)+len(s.suffix) && x[:len(s.prefix)] == s.prefix && x[len(x)-len(s.suffix):] == s.suffix {
				return s.prefix + randomMarker + s.suffix
			}
		}
		return v
	}
	switch k := path[0].(type) {
	case string:
		if x, ok := v.(map[string]any); ok {
			if e, ok := x[k]; ok {
				out := make(map[string]any, len(x))
				for kk, vv := range x {
					out[kk] = vv
				}
				out[k] = s.mask(e, path[1:])
				return out
			}
		}
	case int:
		if x, ok := v.([]any); ok && k < len(x) {
			out := append([]any(nil), x...)
			out[k] = s.mask(x[k], path[1:])
			return out
		}
	}
	return v
}

// TestRandomMask checks the masking TestFormulas applies to formulas that
// draw random values: only the leaves that differ between two Salt runs
// are masked, strings keep the text around the drawn word, and a gsalt
// value that does not fit (other surrounding text, another type, another
// leaf) still differs.
func TestRandomMask(t *testing.T) {
	// values shaped like prometheus-formula's: a pillar leaf, chunks
	// whose priority and command line carry it, and leaves that are not
	// random
	build := func(prio any, name string, other float64, fixed string) map[string]any {
		return map[string]any{
			"linux": map[string]any{"altpriority": prio},
			"fixed": fixed,
			"chunks": []any{
				map[string]any{"name": name, "priority": prio},
				map[string]any{"name": "other", "priority": other},
			},
		}
	}
	cmd := func(prio string) string {
		return "update-alternatives --install /usr/bin/x link-x /opt/x " + prio + "  # noqa 204"
	}
	run1 := build(4242.0, cmd("4242"), 10, "same")
	mask := findRandom(run1, build(4299.0, cmd("4299"), 10, "same"))
	if len(mask) != 3 {
		t.Fatalf("found %d random leaves, want 3: %+v", len(mask), mask)
	}
	gsalt := build
	good := cmd("77")
	for _, tc := range []struct {
		name  string
		got   map[string]any
		equal bool
	}{
		{"another draw", gsalt(77.0, good, 10, "same"), true},
		{"the same draw", gsalt(4242.0, cmd("4242"), 10, "same"), true},
		{"text around the draw differs", gsalt(77.0, "update-alternatives --install /usr/bin/y link-x /opt/x 77  # noqa 204", 10, "same"), false},
		{"a string where Salt drew a number", gsalt("77", good, 10, "same"), false},
		{"a leaf that is not random", gsalt(77.0, good, 11, "same"), false},
		{"a fixed string", gsalt(77.0, good, 10, "other"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := mask.apply(run1), mask.apply(tc.got)
			if eq := reflect.DeepEqual(want, got); eq != tc.equal {
				t.Fatalf("equal = %v, want %v (first difference %q)", eq, tc.equal, firstDiff("", want, got))
			}
		})
	}
	if len(findRandom(run1, run1)) != 0 {
		t.Fatal("two equal runs have random leaves")
	}
}

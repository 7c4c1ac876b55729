package jinja

import (
	"regexp"
	"testing"
)

// TestGenerators checks Jinja2's generator filters and reverse iterators:
// their repr, one-shot iteration, truthiness, missing len() and lazy
// errors (results checked with Python Jinja2 3.1).
func TestGenerators(t *testing.T) {
	addr := regexp.MustCompile(` at 0x[0-9a-f]+>`)
	env := NewEnvironment(Options{})
	for _, c := range []struct{ src, want string }{
		{"{{ [1, 2, 3]|select('odd') }}", "<generator object select_or_reject at 0x...>"},
		{"{{ [1, 2]|map('string') }}", "<generator object sync_do_map at 0x...>"},
		{"{{ [1, 2]|batch(1) }}", "<generator object do_batch at 0x...>"},
		{"{{ [1, 2]|reverse }}", "<list_reverseiterator object at 0x...>"},
		{"{{ {'a': 1}|reverse }}", "<dict_reversekeyiterator object at 0x...>"},
		{"{{ 'ab'|reverse }}", "ba"},
		{"{% set g = [1, 2, 3]|select('odd') %}{{ g|list }}{{ g|list }}", "[1, 3][]"},
		{"{{ ([]|select) is true or ([]|select and 'yes') }}", "yes"},
		{"{{ [1, 2]|reverse|join(',') }}", "2,1"},
		{"{% for x in [1, 2]|map('string') %}{{ x }};{% endfor %}", "1;2;"},
		{"{{ 1|items }}", "<generator object do_items at 0x...>"},
	} {
		got, err := renderString(env, c.src, nil)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if got = addr.ReplaceAllString(got, " at 0x...>"); got != c.want {
			t.Errorf("%s = %q, want %q", c.src, got, c.want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"{{ [1]|select|length }}", "object of type 'generator' has no len()"},
		{"{{ 1|items|list }}", "Can only get item pairs from a mapping."},
		{"{{ 1|reverse }}", "argument must be iterable"},
	} {
		_, err := renderString(env, c.src, nil)
		if err == nil || !regexp.MustCompile(regexp.QuoteMeta(c.want)).MatchString(err.Error()) {
			t.Errorf("%s: error %v, want %q", c.src, err, c.want)
		}
	}
}

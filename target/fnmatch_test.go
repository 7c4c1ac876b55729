package target

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gsalt/gsalt/internal/py"
)

func TestFnmatch(t *testing.T) {
	tests := []struct {
		name, pat string
		want      bool
	}{
		{"web01", "web*", true},
		{"WEB01", "web*", false}, // case-sensitive
		{"a/b/c", "a*c", true},   // '*' crosses '/'
		{"a/b", "a?b", true},     // so does '?'
		{"abc", "a?c", true},
		{"ac", "a?c", false},
		{"", "*", true},
		{"", "", true},
		{"a", "", false},
		{"a\nb", "a*b", true}, // DOTALL
		{"a\n", "a", false},   // anchored with \Z, not $
		{"a", "[abc]", true},
		{"d", "[abc]", false},
		{"d", "[!abc]", true},
		{"a", "[!abc]", false},
		{"b", "[a-c]", true},
		{"-", "[a-]", true},
		{"-", "[-a]", true},
		{"]", "[]]", true},
		{"]", "[!]]", false},
		{"x", "[!]]", true},
		{"^", "[^]", true}, // '^' is not negation in fnmatch
		{"a", "[^a]", true},
		{"b", "[^a]", false},
		{"[", "[", true}, // unmatched '[' is literal
		{"[ab", "[ab", true},
		{"[!]", "[!]", true},
		{"\\", "\\", true}, // no escaping
		{"*", "\\*", false},
		{"\\x", "\\*", true},
		{"\\", "[\\]", true},
		{"b", "[b-a]", false}, // empty range: never matches
		{"", "[b-a]", false},
		{"c", "[!b-a]", true}, // negated empty range: any one character
		{"&", "[&]", true},
		{"|", "[a|]", true},
		{"~", "[~~]", true},
		{"é", "?", true},
		{"é", "[é]", true},
		{"e", "[é]", false},
		{"web01.example.com", "web0[1-3].*.com", true},
		{"web04.example.com", "web0[1-3].*.com", false},
		{"[:alpha:]", "[[:alpha:]]", false},
		{"a]", "[[:alpha:]]", true}, // set of "[:alph" followed by a literal ']'
		{"x.y", "x.y", true},
		{"xzy", "x.y", false},
		{"a+b", "a+b", true},
		{"aab", "a+b", false},
		{"(a)", "(a)", true},
		{"b", "[z-a-c]", false},
		{"-", "[z-a-c]", true},
		{"c", "[z-a-c]", true},
	}
	m := New(Options{})
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q~%q", tc.name, tc.pat), func(t *testing.T) {
			if got := py.Fnmatch(tc.name, tc.pat); got != tc.want {
				re, _ := py.FnmatchTranslate(tc.pat)
				t.Errorf("py.Fnmatch(%q, %q) = %v, want %v (re %s)", tc.name, tc.pat, got, tc.want, re)
			}
			if got := m.Fnmatch(tc.name, tc.pat); got != tc.want {
				t.Errorf("Matcher.Fnmatch(%q, %q) = %v, want %v", tc.name, tc.pat, got, tc.want)
			}
		})
	}
}

func TestFnmatchRegexpIsAnchored(t *testing.T) {
	re, err := py.FnmatchTranslate("a*b?[!c]")
	if err != nil {
		t.Fatal(err)
	}
	want := `^(?s:a.*b.[^\x{63}])\z`
	if re != want {
		t.Errorf("FnmatchRegexp = %s, want %s", re, want)
	}
}

func TestMatcherCacheIsBounded(t *testing.T) {
	m := New(Options{CacheSize: 3})
	for i := 0; i < 20; i++ {
		if !m.Fnmatch(fmt.Sprintf("host%d", i), fmt.Sprintf("host%d*", i)) {
			t.Fatalf("pattern %d did not match", i)
		}
	}
	if n := m.cacheLen(); n != 3 {
		t.Errorf("cache holds %d patterns, want 3", n)
	}
	// most recent entries are still usable and correct
	if !m.Fnmatch("host19x", "host19*") || m.Fnmatch("host18", "host19*") {
		t.Error("cached pattern gives wrong answers")
	}
	off := New(Options{CacheSize: -1})
	off.Fnmatch("a", "a*")
	if n := off.cacheLen(); n != 0 {
		t.Errorf("disabled cache holds %d patterns", n)
	}
	var zero Matcher // the zero value works and caches
	if !zero.Fnmatch("abc", "a*") || zero.cacheLen() != 1 {
		t.Error("zero Matcher does not work")
	}
	long := make([]byte, maxCachedPattern+1)
	for i := range long {
		long[i] = 'a'
	}
	if !zero.Fnmatch(string(long), string(long)) || zero.cacheLen() != 1 {
		t.Error("an over-long pattern was cached or failed")
	}
}

func TestMatcherConcurrent(t *testing.T) {
	m := New(Options{CacheSize: 8})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				pat := fmt.Sprintf("m%d*", (g+i)%16)
				if !m.Fnmatch(fmt.Sprintf("m%d-x", (g+i)%16), pat) {
					t.Errorf("no match for %s", pat)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

package target

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gsalt/gsalt/internal/py"
)

// globRef is an independent reference for patterns without '[': '*' any
// run, '?' any one character, everything else literal (dynamic programming).
func globRef(name, pat []rune) bool {
	// ok[j] reports whether name[:i] matches pat[:j] for the current i.
	ok := make([]bool, len(pat)+1)
	ok[0] = true
	for j := 1; j <= len(pat) && pat[j-1] == '*'; j++ {
		ok[j] = true
	}
	for i := 1; i <= len(name); i++ {
		prev := ok[0]
		ok[0] = false
		for j := 1; j <= len(pat); j++ {
			cur := ok[j]
			switch pat[j-1] {
			case '*':
				ok[j] = ok[j-1] || cur
			case '?':
				ok[j] = prev
			default:
				ok[j] = prev && pat[j-1] == name[i-1]
			}
			prev = cur
		}
	}
	return ok[len(pat)]
}

func FuzzFnmatch(f *testing.F) {
	for _, s := range [][2]string{
		{"web01", "web*"}, {"a/b", "a?b"}, {"x", "[!x]"}, {"]", "[]]"}, {"[", "["}, {"-", "[a-]"},
		{"b", "[b-a]"}, {"é", "?"}, {"\\", "[\\]"}, {"a", "[z-a-c]"}, {"", "*"}, {"ab", "*?*"},
	} {
		f.Add(s[0], s[1])
	}
	m := New(Options{CacheSize: 16})
	f.Fuzz(func(t *testing.T, name, pat string) {
		if !utf8.ValidString(name) || !utf8.ValidString(pat) || len(pat) > 64 || len(name) > 64 {
			return
		}
		got := py.Fnmatch(name, pat)
		if m.Fnmatch(name, pat) != got {
			t.Fatalf("cached and uncached Fnmatch disagree on %q, %q", name, pat)
		}
		if !strings.ContainsRune(pat, '[') {
			if want := globRef([]rune(name), []rune(pat)); want != got {
				t.Fatalf("py.Fnmatch(%q, %q) = %v, reference %v", name, pat, got, want)
			}
		}
		if !strings.ContainsAny(name, "*?[") && !py.Fnmatch(name, name) {
			t.Fatalf("literal %q does not match itself", name)
		}
		if !py.Fnmatch(name, "*") {
			t.Fatalf("%q does not match *", name)
		}
	})
}

func FuzzCompound(f *testing.F) {
	for _, s := range []string{
		"web* and G@os:Debian", "not ( L@a,b or E@web\\d )", "( )", "not ( )", "N@webs and not N@dbs",
		"G;@nested;a;b;c:d or S@10.0.0.0/8", "and", "( ( web1", "N@loop1", "I@role:web and J@env:p.*",
		"R@x", "web* not db*", "P@os:(?=x)", "S@::1 or S@bad", "X@y )",
	} {
		f.Add(s)
	}
	m := New(Options{CacheSize: 64})
	accepted := []string{"web1", "Web2", "db1", "nocache"}
	f.Fuzz(func(t *testing.T, tgt string) {
		if len(tgt) > 512 {
			return
		}
		for _, exact := range []string{"compound", "compound_pillar_exact"} {
			ok, err := m.Match(tgt, exact, "", testMinion("web1"))
			if err != nil && ok {
				t.Fatalf("Match(%q) = true with error %v", tgt, err)
			}
			mins, _, err := m.CheckMinions(tgt, exact, "", accepted, masterCacheFn, testGroups, true)
			if err != nil && len(mins) != 0 && !isSoft(err) {
				t.Fatalf("CheckMinions(%q) returned %v with error %v", tgt, mins, err)
			}
			for _, id := range mins {
				found := false
				for _, a := range accepted {
					found = found || a == id
				}
				if !found {
					t.Fatalf("CheckMinions(%q) returned unknown minion %q", tgt, id)
				}
			}
		}
		for _, w := range pySplit(tgt) {
			ti := ParseTarget(w)
			if ti.Engine != "" {
				rebuilt := ti.Engine + ti.Delimiter + "@" + ti.Pattern
				if w != rebuilt && w != rebuilt+"\n" {
					t.Fatalf("ParseTarget(%q) = %+v does not rebuild the word", w, ti)
				}
			}
		}
	})
}

func FuzzTranslatePCRE(f *testing.F) {
	for _, s := range []string{"web\\d+$", "(?i)a{,2}", "[\\W.]", "(?P<n>x)|y", "(?x) a b # c", "\\1", "[^\\s]*", "a{2,1}"} {
		f.Add(s, "web01")
	}
	m := New(Options{CacheSize: 16})
	f.Fuzz(func(t *testing.T, pat, s string) {
		if len(pat) > 128 {
			return
		}
		src, terr := TranslatePCRE(pat)
		ok, err := m.PCREMatch(pat, s)
		if terr == nil && err == nil && !strings.HasPrefix(src, "^(?:") {
			t.Fatalf("translation %q not anchored", src)
		}
		if err != nil && ok {
			t.Fatalf("PCREMatch(%q) = true with error %v", pat, err)
		}
	})
}
